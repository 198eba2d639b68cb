//! The report's content as plain tables of text, written once for both documents: the HTML
//! page and the Markdown file only differ in how they print a [`Table`].

use super::story::{FollowUpSource, Moment};
use super::words::Words;
use super::ReportView;
use crate::drills::summary::Figures;
use crate::drills::variant::Variant;

pub(super) struct Row {
    pub cells: Vec<String>,
    /// A failed check, a violation: shown so it stands out.
    pub bad: bool,
}

pub(super) struct Table {
    pub headers: Vec<&'static str>,
    pub rows: Vec<Row>,
}

impl Table {
    fn new(headers: Vec<&'static str>) -> Self {
        Self { headers, rows: Vec::new() }
    }

    fn push(&mut self, cells: Vec<String>, bad: bool) {
        self.rows.push(Row { cells, bad });
    }
}

fn opt<T: ToString>(value: Option<T>, w: &Words) -> String {
    value.map_or_else(|| w.none.to_string(), |v| v.to_string())
}

fn secs(s: f64) -> String {
    format!("{s:.1}")
}

/// Who ran what, when, and how it ended.
pub(super) fn header(view: &ReportView, w: &Words) -> Table {
    let r = &view.run.record;
    let summary = view.run.summary.as_ref();
    // Worded from the run's record in this language; a run recorded without one keeps the
    // runner's sentence (its phrases translated).
    let variant = match Variant::of_parameters(&view.run.parameters) {
        Some(v) => v.describe_in(w.lang),
        None => summary
            .and_then(|s| s.variant.as_deref())
            .or_else(|| view.run.parameters.get("variant").and_then(|v| v.as_str()))
            .map(|text| w.runner_text(text)),
    };
    let mut table = Table::new(vec![w.field, w.value]);
    let rows = [
        (w.run, format!("#{} {}", r.id, r.scenario)),
        (w.status, w.status_word(view.status)),
        (w.started, r.started_at.to_string()),
        (w.finished, opt(r.finished_at, w)),
        (w.started_by, r.started_by.clone()),
        (w.runner, opt(r.runner.as_deref(), w)),
        (w.plan_hash, opt(r.plan_hash.as_deref(), w)),
        (w.seed, opt(r.seed, w)),
        (w.schedule_hash, opt(summary.map(|s| s.schedule_hash.as_str()).filter(|h| !h.is_empty()), w)),
        (w.variant, opt(variant, w)),
        // The runner's reason in this language; a halt's reason as the person typed it.
        (
            w.reason,
            match summary.and_then(|s| s.reason.as_deref()) {
                Some(reason) => w.runner_text(reason),
                None => opt(r.halt_reason.as_deref(), w),
            },
        ),
    ];
    for (label, value) in rows {
        table.push(vec![label.to_string(), value], false);
    }
    table
}

/// Every invariant and SLO with its verdict.
pub(super) fn checks(view: &ReportView, w: &Words) -> Option<Table> {
    let summary = view.run.summary.as_ref()?;
    let mut table = Table::new(vec![w.check, w.kind, w.verdict, w.figure, w.bound]);
    for c in &summary.checks {
        let cells = vec![
            c.name.clone(),
            w.check_kind(&c.kind).to_string(),
            w.verdict(c.passed).into(),
            w.runner_text(&c.figure),
            w.runner_text(&c.bound),
        ];
        table.push(cells, !c.passed);
    }
    Some(table)
}

/// The summary's figures, by their field names.
fn figure_values(f: &Figures, w: &Words) -> Vec<(&'static str, String)> {
    let float = |v: f64| format!("{v:.1}");
    vec![
        ("sent", f.sent.to_string()),
        ("skipped", f.skipped.to_string()),
        ("accepted", f.accepted.to_string()),
        ("oversold_units", f.oversold_units.to_string()),
        ("lost", f.lost.to_string()),
        ("duplicated", f.duplicated.to_string()),
        ("failed_back", f.failed_back.to_string()),
        ("unannounced_orders", f.unannounced_orders.to_string()),
        ("buyer_error_rate", format!("{:.2}%", f.buyer_error_rate * 100.0)),
        ("p50_ms", float(f.p50_ms)),
        ("p99_ms", float(f.p99_ms)),
        ("time_to_db_path_ms", opt(f.time_to_db_path_ms, w)),
        ("recovery_s", opt(f.recovery_s.map(float), w)),
        ("drift_peak", f.drift_peak.to_string()),
        ("backlog_peak", f.backlog_peak.to_string()),
        ("catch_up_multiple", opt(f.catch_up_multiple.map(float), w)),
        ("switch_propagation_ms", opt(f.switch_propagation_ms, w)),
        ("stale_writes", opt(f.stale_writes, w)),
        ("drift_confirmed_ticks", opt(f.drift_confirmed_ticks, w)),
        ("status_not_found", opt(f.status_not_found, w)),
    ]
}

pub(super) fn figures(view: &ReportView, w: &Words) -> Option<Table> {
    let f = &view.run.summary.as_ref()?.figures;
    let mut table = Table::new(vec![w.figure, w.value]);
    for (key, value) in figure_values(f, w) {
        // The figures that must be 0 stand out when they are not.
        let bad = match key {
            "oversold_units" => f.oversold_units != 0,
            "lost" => f.lost != 0,
            "duplicated" => f.duplicated != 0,
            "stale_writes" => f.stale_writes.unwrap_or(0) != 0,
            "status_not_found" => f.status_not_found.unwrap_or(0) != 0,
            _ => false,
        };
        table.push(vec![w.figure_name(key).to_string(), value], bad);
    }
    Some(table)
}

pub(super) fn phases(view: &ReportView, w: &Words) -> Table {
    let mut table = Table::new(vec![
        w.phase,
        w.from_s,
        w.to_s,
        w.sent,
        w.accepted,
        w.refused,
        w.errors,
        w.p99_max,
        w.drift_peak,
        w.backlog_peak,
        w.db_path_max,
    ]);
    for p in &view.phases {
        let cells = vec![
            w.phase_name(&p.phase),
            secs(p.start_s),
            secs(p.end_s),
            p.sent.to_string(),
            p.accepted.to_string(),
            p.refused.to_string(),
            p.errors.to_string(),
            format!("{:.1}", p.p99_max_ms),
            p.drift_peak.to_string(),
            p.backlog_peak.to_string(),
            p.db_path_max.to_string(),
        ];
        table.push(cells, false);
    }
    table
}

/// The faults that set the drill off.
pub(super) fn trigger(view: &ReportView, w: &Words) -> Table {
    let mut table = Table::new(vec![w.fault, w.target, w.action, w.from_s, w.to_s, w.detail]);
    for f in &view.story.trigger {
        let end = if f.open { format!("{} ({})", secs(f.end_s), w.not_restored) } else { secs(f.end_s) };
        let detail = match (f.planned, f.detail.is_empty()) {
            (true, true) => w.from_plan.to_string(),
            (true, false) => format!("{}; {}", f.detail, w.from_plan),
            (false, _) => f.detail.clone(),
        };
        let fault = f.name_in(w.lang).to_string();
        table.push(vec![fault, f.target.clone(), f.action.clone(), secs(f.start_s), end, detail], f.open);
    }
    table
}

/// The chain of impact or the recovery, a moment a row.
pub(super) fn moments(moments: &[Moment], w: &Words) -> Table {
    use super::story::MomentKind::{Abort, FirstViolation, Halt};
    let mut table = Table::new(vec![w.time_s, w.what, w.detail]);
    for m in moments {
        let bad = matches!(m.kind, FirstViolation | Abort | Halt);
        table.push(vec![secs(m.at_s), w.moment(m.kind).to_string(), m.detail.clone()], bad);
    }
    table
}

/// The follow-ups, each with where it comes from.
pub(super) fn follow_ups(view: &ReportView, w: &Words) -> Vec<(&'static str, String)> {
    let source = |s| match s {
        FollowUpSource::Facilitator => w.facilitator,
        FollowUpSource::FailedCheck => w.failed_check,
    };
    view.story.follow_ups.iter().map(|f| (source(f.source), f.text.clone())).collect()
}

/// Who wrote the review notes, and when.
pub(super) fn notes_by(view: &ReportView, w: &Words) -> Option<String> {
    view.review.map(|r| format!("{} {} · {}", w.notes_by, r.by, r.at))
}

pub(super) fn affected(view: &ReportView, w: &Words) -> Table {
    let mut table = Table::new(vec![w.order_no, w.product, w.user, w.count, w.why]);
    for o in view.run.summary.iter().flat_map(|s| &s.affected_orders) {
        let cells = vec![
            o.order_no.clone(),
            o.product_id.to_string(),
            o.user_id.to_string(),
            o.buy_count.to_string(),
            o.why.clone(),
        ];
        table.push(cells, true);
    }
    table
}
