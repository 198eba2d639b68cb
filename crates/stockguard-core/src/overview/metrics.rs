//! One engine's `/metrics` as the overview reads it, and the fleet's figures from them.
//!
//! The exposition is parsed with the `prometheus-parse` crate (the text format has escapes,
//! timestamps and histogram families that a hand parser gets wrong at the edges). What the
//! overview takes from it, by metric (see `stockguard-engine`'s `engine/metrics.rs`):
//!
//! - `stockguard_requests_total{outcome}`: a counter per answer code. Summed across engines.
//! - `stockguard_request_duration_seconds`: a histogram of `POST /orders` latency. Histograms
//!   add up bucket by bucket, so the fleet's p99 is the quantile of the summed buckets (never
//!   an average of each engine's p99, which means nothing).
//! - `stockguard_stream_backlog`, `stockguard_inflight_units`: gauges each engine computes at
//!   scrape time over *every* product's stream, so each engine reports the same sale-wide
//!   number: the fleet's is the largest (the freshest), never their sum.
//!
//! Counters count since each engine started. A rate needs two scrapes: per engine, the
//! increase between them (an engine whose counter went down restarted: its whole count is the
//! increase, as Prometheus' `rate` takes it), over the time between them. An engine seen in
//! only one of the two scrapes counts in the totals but not in the rate.

use std::collections::BTreeMap;

use super::OverviewError;

pub(crate) const REQUESTS: &str = "stockguard_requests_total";
pub(crate) const LATENCY: &str = "stockguard_request_duration_seconds";
pub(crate) const BACKLOG: &str = "stockguard_stream_backlog";
pub(crate) const INFLIGHT: &str = "stockguard_inflight_units";
pub(crate) const BREAKER: &str = "stockguard_breaker_open";

/// What the overview takes from one engine's exposition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineMetrics {
    /// `stockguard_requests_total` by its `outcome` label (`accepted`, `SOLD_OUT`, ...).
    pub requests: BTreeMap<String, f64>,
    /// The latency histogram: (upper bound in seconds, cumulative count), ascending, `+Inf`
    /// last.
    pub latency: Vec<(f64, f64)>,
    pub backlog: Option<f64>,
    pub inflight_units: Option<f64>,
    pub breaker_open: Option<bool>,
}

/// Parses a text exposition. The parser skips lines it cannot read, so an answer in which no
/// engine metric was found is refused (an HTML page, another service on that address): it
/// must not count as an engine that sold nothing. Every engine serves its breaker gauge.
/// Metrics the overview does not use are ignored.
pub fn parse(text: &str) -> Result<EngineMetrics, OverviewError> {
    use prometheus_parse::{Scrape, Value};
    let scrape =
        Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).map_err(|e| OverviewError::Exposition(e.to_string()))?;
    let mut out = EngineMetrics::default();
    for sample in scrape.samples {
        match (sample.metric.as_str(), &sample.value) {
            (REQUESTS, Value::Counter(v) | Value::Untyped(v)) => {
                let outcome = sample.labels.get("outcome").unwrap_or("unknown").to_string();
                *out.requests.entry(outcome).or_default() += v;
            }
            (LATENCY, Value::Histogram(buckets)) => {
                out.latency = buckets.iter().map(|b| (b.less_than, b.count)).collect();
                out.latency.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            (BACKLOG, Value::Gauge(v) | Value::Untyped(v)) => out.backlog = Some(*v),
            (INFLIGHT, Value::Gauge(v) | Value::Untyped(v)) => out.inflight_units = Some(*v),
            (BREAKER, Value::Gauge(v) | Value::Untyped(v)) => out.breaker_open = Some(*v != 0.0),
            _ => {}
        }
    }
    if out.breaker_open.is_none() {
        return Err(OverviewError::Exposition(format!(
            "no {BREAKER} in the answer: not a Stockguard engine's metrics"
        )));
    }
    Ok(out)
}

/// A counter's increase between two scrapes of one engine: a counter that went down means the
/// engine restarted in between, and all it counts now is new.
fn increase(before: f64, now: f64) -> f64 {
    if now >= before {
        now - before
    } else {
        now
    }
}

impl EngineMetrics {
    /// What this engine counted since `before` (the same engine's earlier scrape).
    pub fn since(&self, before: &EngineMetrics) -> EngineMetrics {
        let requests = self
            .requests
            .iter()
            .map(|(k, v)| (k.clone(), increase(before.requests.get(k).copied().unwrap_or(0.0), *v)))
            .collect();
        let count = |h: &[(f64, f64)]| h.last().map_or(0.0, |b| b.1);
        let restarted = count(&self.latency) < count(&before.latency);
        let latency = self
            .latency
            .iter()
            .map(|&(le, c)| {
                let was = before.latency.iter().find(|b| b.0 == le).map_or(0.0, |b| b.1);
                (le, if restarted { c } else { increase(was, c) })
            })
            .collect();
        EngineMetrics { requests, latency, ..self.clone() }
    }

    pub fn total_requests(&self) -> f64 {
        // An empty f64 sum is -0.0: printed "-0.0".
        self.requests.values().sum::<f64>() + 0.0
    }
}

/// Engines' metrics added up: counters and histogram buckets summed (buckets by their bound:
/// engines of one build share them), the sale-wide gauges as their largest.
pub fn sum<'a>(engines: impl IntoIterator<Item = &'a EngineMetrics>) -> EngineMetrics {
    let mut out = EngineMetrics::default();
    let mut buckets: Vec<(f64, f64)> = Vec::new();
    for m in engines {
        for (k, v) in &m.requests {
            *out.requests.entry(k.clone()).or_default() += v;
        }
        for &(le, c) in &m.latency {
            match buckets.iter_mut().find(|b| b.0 == le) {
                Some(b) => b.1 += c,
                None => buckets.push((le, c)),
            }
        }
        let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        out.backlog = max(out.backlog, m.backlog);
        out.inflight_units = max(out.inflight_units, m.inflight_units);
        out.breaker_open = match (out.breaker_open, m.breaker_open) {
            (Some(a), Some(b)) => Some(a || b),
            (a, b) => a.or(b),
        };
    }
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    out.latency = buckets;
    out
}

/// The `q` quantile of a cumulative histogram, as Prometheus' `histogram_quantile` computes
/// it: linear within the bucket the rank falls in; in the `+Inf` bucket, the highest finite
/// bound. `None` when the histogram counted nothing.
pub fn quantile(q: f64, buckets: &[(f64, f64)]) -> Option<f64> {
    let total = buckets.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let (mut lower, mut below) = (0.0, 0.0);
    for &(le, count) in buckets {
        if count >= rank {
            if le.is_infinite() {
                return Some(lower);
            }
            let inside = count - below;
            return Some(if inside <= 0.0 { le } else { lower + (le - lower) * (rank - below) / inside });
        }
        if le.is_finite() {
            lower = le;
        }
        below = count;
    }
    Some(lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the engine serves (`prometheus` crate's text encoder), trimmed.
    const ENGINE: &str = r#"# HELP stockguard_breaker_open 1 while this instance's Redis breaker is tripped
# TYPE stockguard_breaker_open gauge
stockguard_breaker_open 0
# HELP stockguard_request_duration_seconds POST /orders latency
# TYPE stockguard_request_duration_seconds histogram
stockguard_request_duration_seconds_bucket{le="0.001"} 50
stockguard_request_duration_seconds_bucket{le="0.002"} 90
stockguard_request_duration_seconds_bucket{le="0.005"} 100
stockguard_request_duration_seconds_bucket{le="+Inf"} 100
stockguard_request_duration_seconds_sum 0.12
stockguard_request_duration_seconds_count 100
# HELP stockguard_requests_total Order requests by outcome
# TYPE stockguard_requests_total counter
stockguard_requests_total{outcome="SOLD_OUT"} 30
stockguard_requests_total{outcome="UNAVAILABLE"} 2
stockguard_requests_total{outcome="accepted"} 68
# HELP stockguard_stream_backlog Reservation messages not yet acknowledged
# TYPE stockguard_stream_backlog gauge
stockguard_stream_backlog 7
"#;

    #[test]
    fn the_engines_exposition_is_read_by_outcome_with_its_histogram_and_gauges() {
        let m = parse(ENGINE).unwrap();
        assert_eq!(m.requests["accepted"], 68.0);
        assert_eq!(m.requests["SOLD_OUT"], 30.0);
        assert_eq!(m.total_requests(), 100.0);
        assert_eq!(m.latency, vec![(0.001, 50.0), (0.002, 90.0), (0.005, 100.0), (f64::INFINITY, 100.0)]);
        assert_eq!((m.backlog, m.inflight_units, m.breaker_open), (Some(7.0), None, Some(false)));
    }

    #[test]
    fn an_answer_without_the_engines_metrics_is_refused_not_read_as_zeros() {
        for text in ["<html><body>Not Found</body></html>", "# TYPE up gauge\nup 1\n", ""] {
            let err = parse(text).unwrap_err();
            assert!(matches!(err, OverviewError::Exposition(_)), "{text}");
            assert!(err.to_string().contains("not a Stockguard engine"), "{err}");
        }
    }

    #[test]
    fn the_p99_interpolates_inside_its_bucket_and_stops_at_the_last_finite_bound() {
        let h = [(0.001, 50.0), (0.002, 90.0), (0.005, 100.0), (f64::INFINITY, 100.0)];
        // rank 99 of 100 falls in (0.002, 0.005], 9 of its 10 observations in.
        assert!((quantile(0.99, &h).unwrap() - 0.0047).abs() < 1e-9);
        assert!((quantile(0.5, &h).unwrap() - 0.001).abs() < 1e-9);
        let slow = [(0.001, 10.0), (f64::INFINITY, 100.0)];
        assert_eq!(quantile(0.99, &slow), Some(0.001), "beyond every bound: the last finite one");
        assert_eq!(quantile(0.99, &[(0.001, 0.0), (f64::INFINITY, 0.0)]), None);
    }

    #[test]
    fn engines_add_up_counters_and_buckets_but_not_the_sale_wide_backlog() {
        let a = parse(ENGINE).unwrap();
        let mut b = a.clone();
        b.backlog = Some(9.0);
        let total = sum([&a, &b]);
        assert_eq!(total.requests["accepted"], 136.0);
        assert_eq!(total.latency[1], (0.002, 180.0));
        assert_eq!(total.backlog, Some(9.0), "the freshest sale-wide backlog, not 16");
    }

    #[test]
    fn an_increase_survives_an_engine_restart_between_two_scrapes() {
        let before = parse(ENGINE).unwrap();
        let mut later = before.clone();
        *later.requests.get_mut("accepted").unwrap() += 12.0;
        later.requests.insert("LIMIT_REACHED".into(), 3.0);
        let d = later.since(&before);
        assert_eq!((d.requests["accepted"], d.requests["SOLD_OUT"], d.requests["LIMIT_REACHED"]), (12.0, 0.0, 3.0));
        let mut restarted = EngineMetrics::default();
        restarted.requests.insert("accepted".into(), 5.0);
        restarted.latency = vec![(0.001, 5.0), (f64::INFINITY, 5.0)];
        let d = restarted.since(&before);
        assert_eq!(d.requests["accepted"], 5.0, "a counter that went down restarted: all of it is new");
        assert_eq!(d.latency, vec![(0.001, 5.0), (f64::INFINITY, 5.0)]);
    }
}
