//! The timeline as the charts and tables read it: one point per second of load, per sampler
//! tick and per change of the engines' mode, each at its second since the load started; the
//! modes as steps; and the per-phase table (the Markdown report's stand-in for the charts).

use serde::Serialize;

use crate::drills::events::{Event, TimedEvent};

/// One second of load as the buyers saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LoadPoint {
    pub at_s: f64,
    pub sent: u64,
    pub accepted: u64,
    pub refused: u64,
    pub errors: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl LoadPoint {
    /// Errors over every answer of the second (0 when nothing was answered).
    pub fn error_rate(&self) -> f64 {
        let answers = self.accepted + self.refused + self.errors;
        if answers == 0 {
            0.0
        } else {
            self.errors as f64 / answers as f64
        }
    }
}

/// One sampler tick.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TickPoint {
    pub at_s: f64,
    pub drift: i64,
    pub drift_max_abs: i64,
    pub backlog: u64,
    pub inflight: i64,
}

/// How many engines were on each path from this moment on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ModePoint {
    pub at_s: f64,
    pub redis_path: u32,
    pub db_path: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Series {
    pub load: Vec<LoadPoint>,
    pub ticks: Vec<TickPoint>,
    /// From the timeline's mode events; from the ticks' path counts when it has none.
    pub mode: Vec<ModePoint>,
}

fn seconds(offset_ms: i64) -> f64 {
    offset_ms as f64 / 1000.0
}

impl Series {
    pub fn of(timeline: &[TimedEvent]) -> Self {
        let mut series = Self::default();
        let mut tick_modes = Vec::new();
        for timed in timeline {
            let at_s = seconds(timed.offset_ms);
            match &timed.event {
                Event::Load(s) => series.load.push(LoadPoint {
                    at_s,
                    sent: s.sent,
                    accepted: s.accepted,
                    refused: s.refused,
                    errors: s.error_count(),
                    p50_ms: s.p50_ms,
                    p99_ms: s.p99_ms,
                }),
                Event::Tick(t) => {
                    series.ticks.push(TickPoint {
                        at_s,
                        drift: t.drift,
                        drift_max_abs: t.drift_max_abs,
                        backlog: t.backlog,
                        inflight: t.inflight,
                    });
                    tick_modes.push(ModePoint { at_s, redis_path: t.redis_path, db_path: t.db_path });
                }
                Event::Mode { redis_path, db_path, .. } => {
                    series.mode.push(ModePoint { at_s, redis_path: *redis_path, db_path: *db_path })
                }
                _ => {}
            }
        }
        if series.mode.is_empty() {
            series.mode = tick_modes;
        }
        series
    }
}

/// The seconds the timeline covers: from its first event (or the load's start, if earlier)
/// to its last, at least one second.
pub fn span(timeline: &[TimedEvent]) -> (f64, f64) {
    let first = timeline.first().map_or(0.0, |t| seconds(t.offset_ms)).min(0.0);
    let last = timeline.last().map_or(0.0, |t| seconds(t.offset_ms));
    (first, last.max(first + 1.0))
}

/// A count that holds until it changes, as steps running on to `end_s` (how a mode is drawn).
pub fn steps(points: &[ModePoint], end_s: f64, count: fn(&ModePoint) -> u32) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for p in points {
        if let Some(&(_, before)) = out.last() {
            out.push((p.at_s, before));
        }
        out.push((p.at_s, count(p) as f64));
    }
    if let Some(&(at, last)) = out.last() {
        if at < end_s {
            out.push((end_s, last));
        }
    }
    out
}

/// One phase of the run (`rig`, `load`, `drain`, ...) and what happened during it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseRow {
    pub phase: String,
    pub start_s: f64,
    pub end_s: f64,
    pub sent: u64,
    pub accepted: u64,
    pub refused: u64,
    pub errors: u64,
    pub p99_max_ms: f64,
    pub drift_peak: i64,
    pub backlog_peak: u64,
    pub db_path_max: u32,
}

/// A row per phase event, each running to the next phase (the last to `end_s`).
pub fn phases(timeline: &[TimedEvent], series: &Series, end_s: f64) -> Vec<PhaseRow> {
    let starts: Vec<(String, f64)> = timeline
        .iter()
        .filter_map(|t| match &t.event {
            Event::Phase { phase } => Some((phase.clone(), seconds(t.offset_ms))),
            _ => None,
        })
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(i, (phase, start_s))| {
            let last = i + 1 == starts.len();
            let end = starts.get(i + 1).map_or(end_s, |(_, s)| *s);
            // Half-open windows, except the last, which keeps the final event.
            let within = |at: f64| at >= *start_s && (at < end || (last && at <= end));
            let load: Vec<&LoadPoint> = series.load.iter().filter(|p| within(p.at_s)).collect();
            let ticks: Vec<&TickPoint> = series.ticks.iter().filter(|p| within(p.at_s)).collect();
            PhaseRow {
                phase: phase.clone(),
                start_s: *start_s,
                end_s: end,
                sent: load.iter().map(|p| p.sent).sum(),
                accepted: load.iter().map(|p| p.accepted).sum(),
                refused: load.iter().map(|p| p.refused).sum(),
                errors: load.iter().map(|p| p.errors).sum(),
                p99_max_ms: load.iter().map(|p| p.p99_ms).fold(0.0, f64::max),
                drift_peak: ticks.iter().map(|p| p.drift_max_abs.abs()).max().unwrap_or(0),
                backlog_peak: ticks.iter().map(|p| p.backlog).max().unwrap_or(0),
                db_path_max: series.mode.iter().filter(|p| within(p.at_s)).map(|p| p.db_path).max().unwrap_or(0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drills::events::{LoadSecond, TickFigures};

    fn at(offset_ms: i64, event: Event) -> TimedEvent {
        TimedEvent { offset_ms, event }
    }

    #[test]
    fn each_phase_counts_the_load_and_the_peaks_of_its_own_seconds() {
        let load = |accepted| Event::Load(LoadSecond { sent: accepted, accepted, ..Default::default() });
        let tick = |drift_max_abs| Event::Tick(TickFigures { drift_max_abs, ..Default::default() });
        let timeline = [
            at(0, Event::Phase { phase: "load".into() }),
            at(1000, load(10)),
            at(1000, tick(-4)),
            at(2000, load(5)),
            at(3000, Event::Phase { phase: "drain".into() }),
            at(3000, tick(1)),
        ];
        let series = Series::of(&timeline);
        let rows = phases(&timeline, &series, span(&timeline).1);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].accepted, rows[0].drift_peak, rows[0].end_s), (15, 4, 3.0));
        assert_eq!((rows[1].accepted, rows[1].drift_peak), (0, 1), "the last phase keeps its final tick");
    }

    #[test]
    fn the_mode_comes_from_the_ticks_only_when_the_timeline_has_no_mode_event() {
        let tick = Event::Tick(TickFigures { redis_path: 2, db_path: 1, ..Default::default() });
        assert_eq!(Series::of(&[at(0, tick.clone())]).mode[0].db_path, 1);
        let mode = Event::Mode { redis_path: 0, db_path: 3, unknown: 0 };
        let both = Series::of(&[at(0, tick), at(500, mode)]);
        assert_eq!(both.mode, vec![ModePoint { at_s: 0.5, redis_path: 0, db_path: 3 }]);
    }

    #[test]
    fn a_mode_holds_until_it_changes_and_runs_on_to_the_end() {
        let p = |at_s, db_path| ModePoint { at_s, redis_path: 0, db_path };
        let drawn = steps(&[p(1.0, 0), p(3.0, 2)], 10.0, |p| p.db_path);
        assert_eq!(drawn, vec![(1.0, 0.0), (3.0, 0.0), (3.0, 2.0), (10.0, 2.0)]);
    }
}
