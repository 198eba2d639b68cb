//! Forwards a drill run to the window while it goes: one `drill-live` event a second carrying
//! the run's row (status, heartbeat, halt, summary at the end), the timeline events written
//! since the last one, read from the database, and the charts of the whole timeline so far as
//! the core works them out (span, fault windows, series). The runner is never asked anything:
//! a run whose runner died goes on being shown, as dead, until another run is watched.

use std::time::Duration;

use serde::Serialize;
use sqlx::MySqlPool;
use stockguard_core::drills::events::{self, TimedEvent};
use stockguard_core::drills::report::shown::TimelineCharts;
use stockguard_core::drills::{self, RunDetail, RunStatus};
use tauri::async_runtime::JoinHandle;
use tauri::{AppHandle, Emitter as _};

pub const LIVE_EVENT: &str = "drill-live";

/// How often the run is read (the runner writes a tick a second).
const EVERY: Duration = Duration::from_secs(1);

/// What the window receives each second about the run it watches.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct DrillLive {
    pub run: RunDetail,
    /// The events written since the previous `drill-live` of this run (all of them in the
    /// first), in the order they were written.
    pub events: Vec<TimedEvent>,
    /// The first of this run's: the window starts its timeline afresh.
    pub first: bool,
    /// The charts of every event of the run so far.
    pub charts: TimelineCharts,
}

/// Watches `run_id` until it finishes (the last event carries its verdict and summary).
pub fn spawn(app: AppHandle, pool: MySqlPool, run_id: u64) -> JoinHandle<()> {
    tauri::async_runtime::spawn(async move {
        let mut seen = 0;
        let mut first = true;
        let mut timeline = Vec::new();
        let mut tick = tokio::time::interval(EVERY);
        loop {
            tick.tick().await;
            let read = async {
                // The row before the events: the runner writes every event before its verdict,
                // so when this row is finished, this read holds the run's last events.
                let run = drills::show(&pool, run_id, drills::STALE_AFTER).await?;
                let (events, newest) = events::since(&pool, run_id, seen).await?;
                Ok::<_, drills::DrillRunError>((run, events, newest))
            };
            match read.await {
                Ok((run, events, newest)) => {
                    seen = newest;
                    events::merge(&mut timeline, events.clone());
                    let charts = TimelineCharts::of_run(&run, &timeline);
                    let finished = run.record.status != RunStatus::Running;
                    let _ = app.emit(LIVE_EVENT, &DrillLive { run, events, first, charts });
                    first = false;
                    if finished {
                        break;
                    }
                }
                Err(e) => tracing::warn!(run = run_id, error = %e, "cannot read the drill run"),
            }
        }
    })
}
