//! What a run ends with (`drill_runs.summary`): its figures, each invariant and SLO with its
//! verdict, and the orders that need compensation. Reports and comparisons read this and the
//! timeline; nothing here is recomputed from metrics.

use serde::{Deserialize, Serialize};

/// The figures a run is judged and compared by. `None`: the drill had nothing to measure
/// (no engine reached the DB path, no backlog formed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Figures {
    pub sent: u64,
    /// Scheduled requests not sent because the generator fell more than a second behind.
    #[serde(default)]
    pub skipped: u64,
    /// Requests the schedule planned. A run that sent less than 90% of them proves too little
    /// to pass (0 in a record written before it was kept).
    #[serde(default)]
    pub planned: u64,
    pub accepted: u64,
    /// Units of live orders beyond initial stock at the worst tick and at the end: must be 0.
    pub oversold_units: i64,
    /// Accepted orders found neither in `orders` nor failed back after the drain deadline.
    pub lost: u64,
    pub duplicated: u64,
    /// Accepted, then withdrawn (`order_failures`): allowed, and each needs compensation.
    pub failed_back: u64,
    /// Orders in the DB whose buyer heard an error, not "accepted" (the reply was lost with
    /// a cut connection): the outcome was unknown to the buyer; an idempotent retry with the
    /// same key would have returned the order.
    #[serde(default)]
    pub unannounced_orders: u64,
    /// Answers that were errors (not a sale's own "sold out" or "limit"), over all answers.
    pub buyer_error_rate: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// From the first fault to every engine on the DB path.
    pub time_to_db_path_ms: Option<u64>,
    /// From the last fault's end to every engine back on Redis with drift 0.
    pub recovery_s: Option<f64>,
    /// The largest drift of a product seen at any tick, by absolute value.
    pub drift_peak: i64,
    /// The largest backlog seen, and how many times faster than orders arrived it was
    /// caught up after its peak.
    pub backlog_peak: u64,
    pub catch_up_multiple: Option<f64>,
    /// From the guided exit's switch change to every engine having applied it.
    pub switch_propagation_ms: Option<u64>,
    /// Stale writes a paused rewrite holder got through (lock-holder-pause): must be 0.
    pub stale_writes: Option<u64>,
    /// Ticks from the failover to drift REDIS_HIGH confirmed (redis-failover-loss).
    pub drift_confirmed_ticks: Option<u32>,
    /// Looks at accepted orders' status answered "not found" (must be 0: an accepted order
    /// is PROCESSING until persisted).
    #[serde(default)]
    pub status_not_found: Option<u64>,
}

/// One invariant or SLO and how it came out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Check {
    pub name: String,
    /// `invariant` (always checked, failing it fails or aborts the run), `slo` (declared), or
    /// `proof` (the run proved something: its faults took effect, its engines were back;
    /// failing only these makes the run `INCONCLUSIVE`).
    pub kind: String,
    pub passed: bool,
    /// The figure measured, as shown.
    pub figure: String,
    /// The bound it was held to, as shown.
    pub bound: String,
}

/// An order the drill could not serve: beyond stock, accepted and withdrawn, or accepted and
/// lost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AffectedOrder {
    pub order_no: String,
    pub product_id: u64,
    pub user_id: u64,
    pub buy_count: i64,
    /// `OVERSOLD`, `FAILED` or `LOST` (accepted, then neither an order nor a failure).
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Summary {
    pub figures: Figures,
    pub checks: Vec<Check>,
    pub affected_orders: Vec<AffectedOrder>,
    /// The products the runner created for this run.
    pub products: Vec<u64>,
    /// A hash of every request the load sent (who, what, when, where): equal for two runs
    /// of the same file and seed.
    pub schedule_hash: String,
    /// Why the run ended as it did (the abort, the halt, the failed checks).
    pub reason: Option<String>,
    /// The run's parameters beyond the file (`--extra-latency-ms`, `--short`), as given.
    pub variant: Option<String>,
}

impl Summary {
    pub fn failed_checks(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.passed)
    }
}
