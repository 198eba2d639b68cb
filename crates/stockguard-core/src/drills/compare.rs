//! Two runs side by side: did the change between them (a fix, a new version, a different
//! `--extra-latency-ms`) make the drill come out worse? Each figure the drills are judged by
//! is shown for both runs with its change, and flagged as a regression when the second run
//! is worse than the first by more than a relative threshold (0.2: 20% worse).
//!
//! Every figure here is better lower. The counts that must be 0 (units oversold, orders lost,
//! orders duplicated) regress on any increase, whatever the threshold; and a figure that was
//! 0 regresses as soon as it is not, since no relative change can be measured from 0.
//! A figure one run did not measure (no engine reached the DB path) is shown, never judged.
//!
//! The comparison also says whether both runs ran the same drill file (its hash) and sent the
//! same requests (the schedule hash): if not, the change may be the drill's, not the code's.

use serde::Serialize;

use super::runs::RunDetail;
use super::summary::Figures;

/// One run as the comparison names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Side {
    pub id: u64,
    pub scenario: String,
    pub status: &'static str,
    pub plan_hash: Option<String>,
    pub schedule_hash: Option<String>,
}

/// One figure of both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Row {
    /// The figure's field name in the summary (`p99_ms`, ...).
    pub figure: &'static str,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// `b - a`, when both were measured.
    pub diff: Option<f64>,
    /// `(b - a) / a`, when both were measured and `a` is not 0.
    pub change: Option<f64>,
    pub must_be_zero: bool,
    pub regressed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Comparison {
    pub a: Side,
    pub b: Side,
    pub threshold: f64,
    /// Both runs recorded a drill-file hash, and the same one.
    pub same_plan: bool,
    /// Both runs recorded a request-schedule hash, and the same one.
    pub same_schedule: bool,
    pub rows: Vec<Row>,
    /// The figures that regressed, in the order of the rows.
    pub regressions: Vec<&'static str>,
}

type Figure = fn(&Figures) -> Option<f64>;

/// The figures compared: (name, must be 0, how to read it).
const FIGURES: [(&str, bool, Figure); 9] = [
    ("oversold_units", true, |f| Some(f.oversold_units as f64)),
    ("lost", true, |f| Some(f.lost as f64)),
    ("duplicated", true, |f| Some(f.duplicated as f64)),
    ("buyer_error_rate", false, |f| Some(f.buyer_error_rate)),
    ("p99_ms", false, |f| Some(f.p99_ms)),
    ("time_to_db_path_ms", false, |f| f.time_to_db_path_ms.map(|v| v as f64)),
    ("recovery_s", false, |f| f.recovery_s),
    ("drift_peak", false, |f| Some(f.drift_peak.abs() as f64)),
    ("switch_propagation_ms", false, |f| f.switch_propagation_ms.map(|v| v as f64)),
];

/// The figures whose absence means "never got there" rather than "nothing to measure".
const NOT_REACHED_IS_WORSE: [&str; 2] = ["time_to_db_path_ms", "recovery_s"];

fn side(run: &RunDetail) -> Side {
    let record = &run.record;
    Side {
        id: record.id,
        scenario: record.scenario.clone(),
        status: if record.dead { "DEAD" } else { record.status.as_str() },
        plan_hash: record.plan_hash.clone(),
        schedule_hash: run.summary.as_ref().map(|s| s.schedule_hash.clone()).filter(|h| !h.is_empty()),
    }
}

fn row(figure: &'static str, must_be_zero: bool, a: Option<f64>, b: Option<f64>, threshold: f64) -> Row {
    let (diff, change, regressed) = match (a, b) {
        (Some(a), Some(b)) => {
            let change = (a != 0.0).then(|| (b - a) / a.abs());
            let regressed = if must_be_zero || a == 0.0 { b > a } else { change.is_some_and(|c| c > threshold) };
            (Some(b - a), change, regressed)
        }
        // Reached in the baseline and never in the run compared (the engines never reached
        // the DB path, the sale never came back): the worst regression of all.
        (Some(_), None) => (None, None, NOT_REACHED_IS_WORSE.contains(&figure)),
        _ => (None, None, false),
    };
    Row { figure, a, b, diff, change, must_be_zero, regressed }
}

/// Compares run `b` with run `a` (the baseline).
pub fn compare(a: &RunDetail, b: &RunDetail, threshold: f64) -> Comparison {
    let figures = |run: &RunDetail, read: Figure| run.summary.as_ref().and_then(|s| read(&s.figures));
    let rows: Vec<Row> = FIGURES
        .iter()
        .map(|&(name, must_be_zero, read)| row(name, must_be_zero, figures(a, read), figures(b, read), threshold))
        .collect();
    let (a, b) = (side(a), side(b));
    let equal = |x: &Option<String>, y: &Option<String>| x.is_some() && x == y;
    Comparison {
        same_plan: equal(&a.plan_hash, &b.plan_hash),
        same_schedule: equal(&a.schedule_hash, &b.schedule_hash),
        regressions: rows.iter().filter(|r| r.regressed).map(|r| r.figure).collect(),
        a,
        b,
        threshold,
        rows,
    }
}

/// A number as a person reads it: counts without decimals, rates with four.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() < 1.0 {
        format!("{v:.4}")
    } else {
        format!("{v:.1}")
    }
}

impl Comparison {
    /// The comparison as a text table for a terminal.
    pub fn table(&self) -> String {
        let yes_no = |same: bool| if same { "yes" } else { "NO" };
        let mut out = format!(
            "a: #{} {} {}\nb: #{} {} {}\nsame drill file: {}; same request schedule: {}; threshold {:.0}%\n\n",
            self.a.id,
            self.a.scenario,
            self.a.status,
            self.b.id,
            self.b.scenario,
            self.b.status,
            yes_no(self.same_plan),
            yes_no(self.same_schedule),
            self.threshold * 100.0
        );
        out.push_str(&format!("{:<24} {:>12} {:>12} {:>10}\n", "figure", "a", "b", "change"));
        for r in &self.rows {
            let missing = if NOT_REACHED_IS_WORSE.contains(&r.figure) { "not reached" } else { "-" };
            let shown = |v: Option<f64>| v.map_or_else(|| missing.to_string(), number);
            let change = match (r.change, r.diff) {
                (Some(c), _) => format!("{:+.1}%", c * 100.0),
                (None, Some(d)) if d != 0.0 => format!("{d:+}"),
                _ => "-".to_string(),
            };
            let flag = if r.regressed { "  REGRESSED" } else { "" };
            out.push_str(&format!("{:<24} {:>12} {:>12} {:>10}{flag}\n", r.figure, shown(r.a), shown(r.b), change));
        }
        out.push_str(&match self.regressions.len() {
            0 => "\nno regression\n".to_string(),
            n => format!("\n{n} regression(s): {}\n", self.regressions.join(", ")),
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_worse_by_more_than_the_threshold_regresses_and_one_within_it_does_not() {
        assert!(row("p99_ms", false, Some(100.0), Some(130.0), 0.2).regressed);
        assert!(!row("p99_ms", false, Some(100.0), Some(115.0), 0.2).regressed);
        assert!(!row("p99_ms", false, Some(100.0), Some(50.0), 0.2).regressed, "better is no regression");
    }

    #[test]
    fn a_recovery_the_baseline_made_and_the_run_never_did_regresses() {
        assert!(row("recovery_s", false, Some(6.0), None, 0.2).regressed);
    }

    #[test]
    fn a_count_that_must_be_zero_regresses_on_any_increase() {
        let oversold = row("oversold_units", true, Some(0.0), Some(1.0), 10.0);
        assert!(oversold.regressed);
        assert_eq!((oversold.diff, oversold.change), (Some(1.0), None));
    }

    #[test]
    fn a_figure_one_run_did_not_measure_is_shown_but_not_judged() {
        let r = row("switch_propagation_ms", false, Some(3.0), None, 0.2);
        assert!(!r.regressed && r.diff.is_none());
        let r = row("recovery_s", false, None, Some(3.0), 0.2);
        assert!(!r.regressed, "reached now and not in the baseline is no regression");
    }
}
