//! The review the article asks of every drill, read off the timeline: what set it off (the
//! trigger), how the harm spread (the chain of impact), what brought the sale back (the
//! recovery), and what to do next (the follow-ups: the facilitator's notes, and one per
//! failed check, so a failure is never left without an owner's line).
//!
//! Each moment is the first or the worst of its kind; the timeline itself (and the JSON
//! report) holds the rest.

use serde::Serialize;

pub use super::moment::MomentKind;
use super::series::{ModePoint, Series};
use super::windows::FaultWindow;
use super::words::Words;
use super::ReportData;
use crate::drills::events::Event;

/// One moment of the chain of impact or of the recovery.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moment {
    pub at_s: f64,
    pub kind: MomentKind,
    /// The figures of the moment, as `db_path=3 redis_path=0`.
    pub detail: String,
}

/// Where a follow-up comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowUpSource {
    /// A line of the facilitator's review notes.
    Facilitator,
    /// A check the run failed.
    FailedCheck,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FollowUp {
    pub source: FollowUpSource,
    pub text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Story {
    /// The faults, as their windows.
    pub trigger: Vec<FaultWindow>,
    pub chain: Vec<Moment>,
    pub recovery: Vec<Moment>,
    pub follow_ups: Vec<FollowUp>,
}

impl Story {
    pub(super) fn of(data: &ReportData, windows: &[FaultWindow], series: &Series, words: &Words) -> Self {
        let faults_over_s = windows.iter().map(|w| w.end_s).fold(f64::NEG_INFINITY, f64::max);
        let mut chain = impact(data, series, words);
        let mut recovery = recovery(data, series, windows, faults_over_s, words);
        let by_time = |a: &Moment, b: &Moment| a.at_s.total_cmp(&b.at_s);
        chain.sort_by(by_time);
        recovery.sort_by(by_time);
        Self { trigger: windows.to_vec(), chain, recovery, follow_ups: follow_ups(data, words) }
    }
}

fn at(offset_ms: i64) -> f64 {
    offset_ms as f64 / 1000.0
}

fn moment(at_s: f64, kind: MomentKind, detail: String) -> Moment {
    Moment { at_s, kind, detail }
}

fn paths(p: &ModePoint) -> String {
    format!("db_path={} redis_path={}", p.db_path, p.redis_path)
}

/// The first of the largest: when the harm was first that bad.
fn first_peak<'a, T>(items: impl Iterator<Item = &'a T>, size: impl Fn(&T) -> f64) -> Option<&'a T> {
    items.fold(None, |best: Option<&T>, item| match best {
        Some(b) if size(item) <= size(b) => Some(b),
        _ => Some(item),
    })
}

/// The firsts and the worsts of the harm.
fn impact(data: &ReportData, series: &Series, words: &Words) -> Vec<Moment> {
    let mut chain = Vec::new();
    let on_db = series.mode.iter().find(|p| p.db_path > 0);
    if let Some(p) = on_db {
        chain.push(moment(p.at_s, MomentKind::FirstDbPath, paths(p)));
    }
    if let Some(p) = series.mode.iter().find(|p| p.db_path > 0 && p.redis_path == 0) {
        chain.push(moment(p.at_s, MomentKind::AllOnDbPath, paths(p)));
    }
    if let Some(p) = first_peak(series.load.iter().filter(|p| p.errors > 0), |p| p.error_rate()) {
        let detail = format!("errors={} accepted={} error_rate={:.1}%", p.errors, p.accepted, p.error_rate() * 100.0);
        chain.push(moment(p.at_s, MomentKind::WorstErrorSecond, detail));
    }
    if let Some(t) = first_peak(series.ticks.iter().filter(|t| t.drift_max_abs != 0), |t| t.drift_max_abs.abs() as f64)
    {
        let detail = format!("drift_max_abs={} drift={}", t.drift_max_abs, t.drift);
        chain.push(moment(t.at_s, MomentKind::PeakDrift, detail));
    }
    if let Some(t) = first_peak(series.ticks.iter().filter(|t| t.backlog > 0), |t| t.backlog as f64) {
        let detail = format!("backlog={} inflight={}", t.backlog, t.inflight);
        chain.push(moment(t.at_s, MomentKind::PeakBacklog, detail));
    }
    let mut violated = false;
    for timed in &data.timeline {
        let found = match &timed.event {
            Event::Violation { invariant, figure } if !violated => {
                violated = true;
                Some((MomentKind::FirstViolation, words.runner_text(&format!("{invariant}: {figure}"))))
            }
            Event::Abort { reason } => Some((MomentKind::Abort, words.runner_text(reason))),
            Event::Halt { reason } => Some((MomentKind::Halt, reason.clone())),
            _ => None,
        };
        if let Some((kind, detail)) = found {
            chain.push(moment(at(timed.offset_ms), kind, detail));
        }
    }
    chain
}

/// What was done, and when the sale was whole again.
fn recovery(
    data: &ReportData,
    series: &Series,
    windows: &[FaultWindow],
    faults_over_s: f64,
    words: &Words,
) -> Vec<Moment> {
    // A fault by the name its window gives it in the report's language.
    let fault_name = |fault: &str| {
        windows.iter().find(|w| w.fault == fault).map_or(fault.to_string(), |w| w.name_in(words.lang).to_string())
    };
    let mut steps: Vec<Moment> = data
        .timeline
        .iter()
        .filter_map(|timed| match &timed.event {
            Event::Repair { what, outcome } => {
                let detail = words.runner_text(&format!("{what}: {outcome}"));
                Some(moment(at(timed.offset_ms), MomentKind::Repair, detail))
            }
            Event::FaultRestored { fault } => {
                Some(moment(at(timed.offset_ms), MomentKind::FaultRestored, fault_name(fault)))
            }
            _ => None,
        })
        .collect();
    let since = if faults_over_s.is_finite() { faults_over_s } else { f64::NEG_INFINITY };
    if series.mode.iter().any(|p| p.db_path > 0) {
        let back = series.mode.iter().find(|p| p.at_s >= since && p.db_path == 0 && p.redis_path > 0);
        if let Some(p) = back {
            steps.push(moment(p.at_s, MomentKind::BackOnRedis, paths(p)));
        }
    }
    if series.ticks.iter().any(|t| t.drift_max_abs != 0) {
        let settled = series.ticks.iter().find(|t| t.at_s >= since && t.drift_max_abs == 0 && t.drift == 0);
        if let Some(t) = settled {
            steps.push(moment(t.at_s, MomentKind::DriftSettled, format!("backlog={}", t.backlog)));
        }
    }
    steps
}

/// The facilitator's notes, a line each, then one per failed check.
fn follow_ups(data: &ReportData, words: &Words) -> Vec<FollowUp> {
    let notes = data.review.iter().flat_map(|r| r.notes.lines()).map(str::trim).filter(|l| !l.is_empty());
    let mut follow_ups: Vec<FollowUp> =
        notes.map(|line| FollowUp { source: FollowUpSource::Facilitator, text: line.to_string() }).collect();
    let failed = data.run.summary.iter().flat_map(|s| s.failed_checks());
    follow_ups.extend(failed.map(|c| FollowUp { source: FollowUpSource::FailedCheck, text: words.fix_check(c) }));
    follow_ups
}
