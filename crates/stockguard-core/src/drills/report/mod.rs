//! A run's report: the after-action article of one drill, made from what the run left in the
//! database (its row, its summary, its timeline, the facilitator's notes) and nothing else,
//! so a run whose runner died can be written up as well as one that passed.
//!
//! [`load`] gathers the run; [`render`] writes it as a self-contained HTML page (inline CSS,
//! charts as inline SVG drawn by `plotters`, no external asset), as Markdown (the same
//! tables, a per-phase table instead of charts) or as JSON (the same content as data), in
//! Chinese or English. Every format is made from one [`ReportView`], worked out once:
//!
//! - [`windows`]: when each fault was on, from the timeline's inject/restore events, else
//!   from the drill file's `at_s`/`for_s` (every chart shades these).
//! - [`series`]: the timeline as chart series (load per second, sampler ticks, engine
//!   modes) and the per-phase table.
//! - [`shown`]: the span, windows, series and mode steps of a timeline in one value, as the
//!   desktop window's run panel receives them (live and in the replay) and this report uses.
//! - [`story`]: the review: the trigger, the chain of impact, the recovery, the follow-ups;
//!   `moment`: the kinds of its moments (a leaf the words read too).
//! - `tables`: the content as tables of text (header, checks, figures, phases, review,
//!   orders to compensate), written once for both documents.
//! - `charts`: the five charts; `html` and `markdown`: the two documents; `words`: every
//!   label in both languages.
//!
//! Time on every axis and in every table is seconds since the load started (the timeline's
//! `offset_ms / 1000`): events before the load (the rig) are negative.

mod charts;
mod html;
mod markdown;
mod moment;
pub mod series;
pub mod shown;
pub mod story;
mod tables;
pub mod windows;
mod words;

use serde::Serialize;
use sqlx::MySqlPool;

use super::events::{self, TimedEvent};
use super::plan::Plan;
use super::review::{self, Review};
use super::runs::{self, DrillRunError, RunDetail};
use series::{PhaseRow, Series};
use shown::TimelineCharts;
use story::Story;
use windows::FaultWindow;

use crate::lang::Lang;
pub use charts::FAULT_FILL;

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Html,
    Markdown,
    Json,
}

impl Format {
    pub const ALL: [Self; 3] = [Self::Html, Self::Markdown, Self::Json];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::Markdown => "md",
            Self::Json => "json",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot read the drill run: {0}")]
    Run(#[from] DrillRunError),
}

/// Everything the database holds about one run.
#[derive(Debug, Clone, Serialize)]
pub struct ReportData {
    pub run: RunDetail,
    /// The drill file the run was given (`parameters.plan_text`), when it holds one this
    /// version can read.
    pub plan: Option<Plan>,
    /// Why `parameters.plan_text` could not be read, when it is there but unreadable (a file
    /// of a newer version): the report goes on without the plan's titles and windows.
    pub plan_error: Option<String>,
    pub timeline: Vec<TimedEvent>,
    pub review: Option<Review>,
}

/// Gathers a run for its report.
pub async fn load(pool: &MySqlPool, run_id: u64) -> Result<ReportData, ReportError> {
    let run = runs::show(pool, run_id, runs::STALE_AFTER).await?;
    let timeline = events::timeline(pool, run_id).await?;
    let review = review::review_of(pool, run_id).await?;
    let (plan, plan_error) = plan_of(&run);
    Ok(ReportData { run, plan, plan_error, timeline, review })
}

/// The drill file a run was given (`parameters.plan_text`), or why it cannot be read (a file
/// of a newer version); neither when the run holds none.
pub fn plan_of(run: &RunDetail) -> (Option<Plan>, Option<String>) {
    match run.parameters.get("plan_text").and_then(|t| t.as_str()) {
        Some(text) => match Plan::parse(text) {
            Ok(plan) => (Some(plan), None),
            Err(e) => (None, Some(e.to_string())),
        },
        None => (None, None),
    }
}

/// What every format shows, worked out once from the data (and, as it is, the JSON format).
#[derive(Debug, Clone, Serialize)]
pub struct ReportView<'a> {
    pub lang: Lang,
    /// The drill's title in the report's language, else the scenario's name.
    pub title: String,
    /// `PASSED`, `FAILED`, `ABORTED`, `HALTED`, `RUNNING`, or `DEAD` (running, but its runner
    /// stopped beating).
    pub status: &'static str,
    pub run: &'a RunDetail,
    pub plan: Option<&'a Plan>,
    pub plan_error: Option<&'a str>,
    pub review: Option<&'a Review>,
    /// The x axis of the charts: from the earliest event (or 0) to the last.
    pub span_s: (f64, f64),
    pub fault_windows: Vec<FaultWindow>,
    pub series: Series,
    pub phases: Vec<PhaseRow>,
    pub story: Story,
}

impl<'a> ReportView<'a> {
    pub fn of(data: &'a ReportData, lang: Lang) -> Self {
        let plan = data.plan.as_ref();
        let record = &data.run.record;
        let title = plan.map(|p| if lang == Lang::Zh { &p.title_zh } else { &p.title_en }).cloned();
        let status = if record.dead { "DEAD" } else { record.status.as_str() };
        let TimelineCharts { span_s, fault_windows, series, .. } = TimelineCharts::of(&data.timeline, plan);
        let phases = series::phases(&data.timeline, &series, span_s.1);
        let story = Story::of(data, &fault_windows, &series, words::of(lang));
        Self {
            lang,
            title: title.unwrap_or_else(|| record.scenario.clone()),
            status,
            run: &data.run,
            plan,
            plan_error: data.plan_error.as_deref(),
            review: data.review.as_ref(),
            span_s,
            fault_windows,
            series,
            phases,
            story,
        }
    }
}

/// The report of a run, in the format and language asked for.
pub fn render(data: &ReportData, format: Format, lang: Lang) -> String {
    let view = ReportView::of(data, lang);
    match format {
        Format::Html => html::render(&view, words::of(lang)),
        Format::Markdown => markdown::render(&view, words::of(lang)),
        Format::Json => serde_json::to_string_pretty(&view).expect("a report view serializes"),
    }
}
