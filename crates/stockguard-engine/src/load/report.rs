//! The load report: what the buyers saw, what the DB holds, and the engine's own gauges.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::drive::Recorded;
use super::verify::Verdict;

#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub requests: u64,
    pub accepted: u64,
    pub sold_out: u64,
    pub limit_reached: u64,
    pub rate_limited: u64,
    pub not_ready: u64,
    /// Refused for a moment while the guided exit from DB mode rebuilt Redis (`503 PAUSED`).
    pub paused: u64,
    /// 5xx other than NOT_READY and PAUSED, and transport errors.
    pub errors: u64,
    /// Answers that were a business answer (202 or 409) rather than an error, in percent.
    pub success_rate_pct: f64,
    pub accepted_per_sec: f64,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    pub latency_p999_ms: f64,
    /// Mean time the engine waited for a DB transaction during the run (from its /metrics).
    pub db_pool_wait_mean_ms: Option<f64>,
    /// Mean reserve-script round trip during the run (from its /metrics).
    pub redis_latency_mean_ms: Option<f64>,
    pub sending_secs: f64,
    pub verdict: Verdict,
}

/// `name_sum` and `name_count` of a Prometheus histogram in a text exposition.
pub fn histogram_totals(text: &str, name: &str) -> Option<(f64, f64)> {
    let value = |suffix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}_{suffix} ")))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    Some((value("sum")?, value("count")?))
}

/// Mean over the run, from scrapes before and after.
pub fn mean_ms(before: Option<&str>, after: Option<&str>, name: &str) -> Option<f64> {
    let (s1, c1) = before.and_then(|t| histogram_totals(t, name)).unwrap_or((0.0, 0.0));
    let (s2, c2) = histogram_totals(after?, name)?;
    (c2 > c1).then(|| (s2 - s1) / (c2 - c1) * 1000.0)
}

pub fn build(rec: &Recorded, verdict: Verdict, db_wait_ms: Option<f64>, redis_ms: Option<f64>) -> LoadReport {
    let mut hist = Histogram::<u64>::new(3).expect("histogram");
    let count = |pred: &dyn Fn(&super::drive::Answer) -> bool| rec.answers.iter().filter(|a| pred(a)).count() as u64;
    for a in &rec.answers {
        let _ = hist.record(a.latency.as_micros().max(1) as u64);
    }
    let requests = rec.answers.len() as u64;
    let accepted = count(&|a| a.status == 202);
    let business = count(&|a| a.status == 202 || a.status == 409);
    let ms = |q: f64| if requests == 0 { 0.0 } else { hist.value_at_quantile(q) as f64 / 1000.0 };
    let secs = rec.sending_time.max(Duration::from_millis(1)).as_secs_f64();
    LoadReport {
        requests,
        accepted,
        sold_out: count(&|a| a.error.as_deref() == Some("SOLD_OUT")),
        limit_reached: count(&|a| a.error.as_deref() == Some("LIMIT_REACHED")),
        rate_limited: count(&|a| a.status == 429),
        not_ready: count(&|a| a.error.as_deref() == Some("NOT_READY")),
        paused: count(&|a| a.error.as_deref() == Some("PAUSED")),
        errors: count(&|a| {
            a.status == 0 || (a.status >= 500 && !matches!(a.error.as_deref(), Some("NOT_READY" | "PAUSED")))
        }),
        success_rate_pct: if requests == 0 { 0.0 } else { business as f64 * 100.0 / requests as f64 },
        accepted_per_sec: accepted as f64 / secs,
        latency_p50_ms: ms(0.5),
        latency_p99_ms: ms(0.99),
        latency_p999_ms: ms(0.999),
        db_pool_wait_mean_ms: db_wait_ms,
        redis_latency_mean_ms: redis_ms,
        sending_secs: secs,
        verdict,
    }
}

impl LoadReport {
    /// True when nothing was lost, duplicated or oversold.
    pub fn holds(&self) -> bool {
        self.verdict.lost == 0 && self.verdict.duplicated == 0 && self.verdict.oversold_units == 0
    }

    pub fn to_text(&self) -> String {
        let opt = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.3} ms"));
        format!(
            "requests {} in {:.1} s: accepted {} ({:.0}/s), sold out {}, limit {}, rate-limited {}, not ready {}, paused {}, errors {}\n\
             latency p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms\n\
             pressure-test figures: oversell {} units, success rate {:.2}%, DB pool wait {}, Redis latency {}\n\
             checks against the DB: lost {}, duplicated {}, failed back {}, false sold-out {}, drained {}\n\
             verdict: {}\n",
            self.requests,
            self.sending_secs,
            self.accepted,
            self.accepted_per_sec,
            self.sold_out,
            self.limit_reached,
            self.rate_limited,
            self.not_ready,
            self.paused,
            self.errors,
            self.latency_p50_ms,
            self.latency_p99_ms,
            self.latency_p999_ms,
            self.verdict.oversold_units,
            self.success_rate_pct,
            opt(self.db_pool_wait_mean_ms),
            opt(self.redis_latency_mean_ms),
            self.verdict.lost,
            self.verdict.duplicated,
            self.verdict.failed_back,
            self.verdict.false_sold_out,
            self.verdict.drained,
            if self.holds() { "HOLDS (0 lost, 0 duplicated, 0 oversold)" } else { "BROKEN" },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_totals_are_read_from_the_exposition() {
        let text = "# HELP x\nstockguard_db_pool_wait_seconds_sum 0.5\nstockguard_db_pool_wait_seconds_count 100\n";
        assert_eq!(histogram_totals(text, "stockguard_db_pool_wait_seconds"), Some((0.5, 100.0)));
        let before = "stockguard_db_pool_wait_seconds_sum 0.1\nstockguard_db_pool_wait_seconds_count 50\n";
        assert_eq!(mean_ms(Some(before), Some(text), "stockguard_db_pool_wait_seconds"), Some(8.0));
    }
}
