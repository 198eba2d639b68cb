//! The Drills screen: the built-in drills and whether this connection may run them, starting
//! one (as a `stockguard drill run` process, see `drills::launch`) and watching it through
//! the database, the halt, the runs of the sale, a run's report, two runs compared, and a
//! run's whole timeline and its charts for the replay.

use serde::Serialize;
use stockguard_core::drills::compare::{compare, Comparison};
use stockguard_core::drills::events::{self, TimedEvent};
use stockguard_core::drills::launch::{self, LaunchRequest, Refusal, Started};
use stockguard_core::drills::plan;
use stockguard_core::drills::report::shown::TimelineCharts;
use stockguard_core::drills::report::{self, Format};
use stockguard_core::drills::{self, RunDetail, RunRecord};
use stockguard_core::lang::Lang;
use stockguard_core::sale::Capability;
use tauri::{AppHandle, Manager as _, State};

use crate::error::{DesktopError, MessageCode, Said};
use crate::logs::LogFile;
use crate::state::{drill_runner, AppState};

/// A built-in drill as the picker shows it.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct DrillInfo {
    pub name: String,
    pub title_en: String,
    pub title_zh: String,
    pub description: String,
    /// `None` when the drill file has no Chinese description.
    pub description_zh: Option<String>,
    /// Seconds of load at full length (the short form scales it).
    pub duration_s: u64,
    /// The fault steps' names, in timeline order.
    pub faults: Vec<String>,
    /// The same names in Chinese (a name without one repeats the English).
    pub faults_zh: Vec<String>,
}

/// The drills, and why this connection may not start one (none: it may; a staging profile
/// still asks for its confirmation, which the window shows as a checkbox).
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct DrillCatalog {
    pub drills: Vec<DrillInfo>,
    pub refusal: Option<Refusal>,
    pub staging: bool,
}

/// A run and its whole timeline, for the replay, with the timeline's charts.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct DrillTimeline {
    pub run: RunDetail,
    pub timeline: Vec<TimedEvent>,
    pub charts: TimelineCharts,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn drill_catalog(state: State<'_, AppState>) -> Result<DrillCatalog, DesktopError> {
    let live = state.live().await?;
    let conns = live.ours(Capability::Drills)?;
    let settings = &conns.settings;
    let drills = plan::builtin()
        .into_iter()
        .map(|p| DrillInfo {
            faults: p.faults.iter().map(|f| f.name.clone()).collect(),
            faults_zh: p.faults.iter().map(|f| f.name_zh.clone().unwrap_or_else(|| f.name.clone())).collect(),
            description_zh: p.description_zh,
            duration_s: p.load.duration_s,
            name: p.name,
            title_en: p.title_en,
            title_zh: p.title_zh,
            description: p.description,
        })
        .collect();
    let staging = settings.environment == stockguard_core::profile::EnvironmentKind::Staging;
    Ok(DrillCatalog { drills, refusal: launch::refusal(settings, true), staging })
}

/// Starts a built-in drill and watches its run (`drill-live` events); returns once the runner
/// has written the run.
#[tauri::command(rename_all = "snake_case")]
pub async fn drill_start(
    app: AppHandle,
    state: State<'_, AppState>,
    drill: String,
    short: Option<f64>,
    extra_db_latency_ms: u64,
    staging_confirmed: bool,
) -> Result<Started, DesktopError> {
    let live = state.live().await?;
    let conns = live.ours(Capability::Drills)?;
    let request = LaunchRequest { drill, short, extra_db_latency_ms, staging_confirmed };
    request.check(&conns.settings)?;
    let dir = app.try_state::<LogFile>().map_or_else(std::env::temp_dir, |log| log.dir.clone());
    let log = dir.join(format!("drill-runner-{}.log", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3f")));
    let started = launch::start(&conns.mysql, &conns.settings, &drill_runner()?, &request, &log).await?;
    tracing::info!(run = started.run_id, pid = started.pid, drill = %request.drill, log = %log.display(), "drill started");
    state.watch_drill(app, conns.mysql.clone(), started.run_id);
    Ok(started)
}

/// Watches a run (`drill-live` events) instead of the one watched before.
#[tauri::command(rename_all = "snake_case")]
pub async fn drill_watch(app: AppHandle, state: State<'_, AppState>, run_id: u64) -> Result<(), DesktopError> {
    let live = state.live().await?;
    let conns = live.ours(Capability::Drills)?;
    state.watch_drill(app, conns.mysql.clone(), run_id);
    Ok(())
}

/// Asks every running drill of the sale to halt (audited); returns the runs asked. Goes
/// through the database only, so it works whatever state the runners are in.
#[tauri::command(rename_all = "snake_case")]
pub async fn drill_halt(state: State<'_, AppState>, reason: String) -> Result<Vec<u64>, DesktopError> {
    let live = state.live().await?;
    let conns = live.ours(Capability::Drills)?;
    let asked = drills::request_halt(&conns.mysql, &conns.settings, &reason).await?;
    tracing::info!(runs = ?asked, reason = %reason, "drill halt requested");
    Ok(asked)
}

/// The newest runs of the sale, newest first; a running one whose runner stopped is dead.
#[tauri::command(rename_all = "snake_case")]
pub async fn drill_runs(state: State<'_, AppState>, limit: u32) -> Result<Vec<RunRecord>, DesktopError> {
    let live = state.live().await?;
    let conns = live.ours(Capability::Drills)?;
    drills::clear_leftovers(conns).await;
    Ok(drills::list(&conns.mysql, limit, drills::STALE_AFTER).await?)
}

/// A run's report as one self-contained HTML page, in `lang`.
#[tauri::command(rename_all = "snake_case")]
pub async fn drill_report(state: State<'_, AppState>, run_id: u64, lang: Lang) -> Result<String, DesktopError> {
    let live = state.live().await?;
    let conns = live.ours(Capability::Drills)?;
    let data = report::load(&conns.mysql, run_id).await?;
    Ok(report::render(&data, Format::Html, lang))
}

/// Run `b` against run `a` (the baseline); `threshold` is the relative worsening flagged.
#[tauri::command(rename_all = "snake_case")]
pub async fn drill_compare(
    state: State<'_, AppState>,
    a: u64,
    b: u64,
    threshold: f64,
) -> Result<Comparison, DesktopError> {
    if !(threshold.is_finite() && threshold >= 0.0) {
        return Err(DesktopError::Invalid(Said::new(
            MessageCode::BadThreshold,
            &[("value", &threshold)],
            format!("the threshold is a share of 0 or more, not {threshold}"),
        )));
    }
    let live = state.live().await?;
    let conns = live.ours(Capability::Drills)?;
    let (a, b) = tokio::try_join!(
        drills::show(&conns.mysql, a, drills::STALE_AFTER),
        drills::show(&conns.mysql, b, drills::STALE_AFTER)
    )?;
    Ok(compare(&a, &b, threshold))
}

/// A run with its whole timeline, for the replay.
#[tauri::command(rename_all = "snake_case")]
pub async fn drill_timeline(state: State<'_, AppState>, run_id: u64) -> Result<DrillTimeline, DesktopError> {
    let live = state.live().await?;
    let conns = live.ours(Capability::Drills)?;
    let run = drills::show(&conns.mysql, run_id, drills::STALE_AFTER).await?;
    let timeline = events::timeline(&conns.mysql, run_id).await?;
    let charts = TimelineCharts::of_run(&run, &timeline);
    Ok(DrillTimeline { run, timeline, charts })
}
