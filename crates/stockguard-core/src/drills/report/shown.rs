//! What the window's run panel draws of a timeline, worked out here so the live view, the
//! replay and the report agree: the charts' x span, the fault windows (with the drill file's
//! plan as their fallback, and a fault injected twice as two windows), the series, and the
//! engines' modes as steps.

use serde::Serialize;

use super::series::{self, ModePoint, Series};
use super::windows::{self, FaultWindow};
use crate::drills::events::TimedEvent;
use crate::drills::plan::Plan;
use crate::drills::runs::RunDetail;

/// A timeline as charts read it (the `charts` of a `drill-live` event and of a replay).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimelineCharts {
    /// The x axis: from the earliest event (or the load's start) to the last, in seconds.
    pub span_s: (f64, f64),
    /// In the order the faults began; a timeline without fault events shows the plan's.
    pub fault_windows: Vec<FaultWindow>,
    pub series: Series,
    /// Engines selling from Redis, as a count that holds until it changes, to the span's end.
    pub redis_path: Vec<(f64, f64)>,
    /// Engines selling through the DB, the same way.
    pub db_path: Vec<(f64, f64)>,
}

impl TimelineCharts {
    /// The charts of a run's `timeline` (in offset order), its plan read from the run.
    pub fn of_run(run: &RunDetail, timeline: &[TimedEvent]) -> Self {
        Self::of(timeline, super::plan_of(run).0.as_ref())
    }

    /// The charts of `timeline` (in offset order), with `plan` for the windows' fallback and
    /// names.
    pub fn of(timeline: &[TimedEvent], plan: Option<&Plan>) -> Self {
        let span_s = series::span(timeline);
        let series = Series::of(timeline);
        Self {
            span_s,
            fault_windows: windows::fault_windows(timeline, plan, span_s.1),
            redis_path: series::steps(&series.mode, span_s.1, |p: &ModePoint| p.redis_path),
            db_path: series::steps(&series.mode, span_s.1, |p: &ModePoint| p.db_path),
            series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drills::events::{Event, TickFigures};

    fn at(offset_ms: i64, event: Event) -> TimedEvent {
        TimedEvent { offset_ms, event }
    }

    #[test]
    fn a_fault_injected_twice_is_two_windows_and_the_modes_run_to_the_span_s_end() {
        let injected = || Event::FaultInjected { fault: "cut".into(), target: "redis".into(), action: "down".into() };
        let restored = || Event::FaultRestored { fault: "cut".into() };
        let timeline = [
            at(-2_000, Event::Tick(TickFigures { redis_path: 2, ..Default::default() })),
            at(1_000, injected()),
            at(2_000, restored()),
            at(3_000, injected()),
            at(4_000, restored()),
            at(6_000, Event::Note { text: "end".into() }),
        ];
        let charts = TimelineCharts::of(&timeline, None);
        assert_eq!(charts.span_s, (-2.0, 6.0));
        let windows: Vec<(f64, f64)> = charts.fault_windows.iter().map(|w| (w.start_s, w.end_s)).collect();
        assert_eq!(windows, vec![(1.0, 2.0), (3.0, 4.0)]);
        assert_eq!(charts.redis_path, vec![(-2.0, 2.0), (6.0, 2.0)]);
    }
}
