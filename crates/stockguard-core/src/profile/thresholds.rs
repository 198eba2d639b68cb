//! When a sale's backlog and breakers alert: profile data (each profile keeps its own), read
//! by the alert conditions. A leaf: it imports nothing of the rooms that use it.

use serde::{Deserialize, Serialize};

/// When the backlog and the breakers alert: kept per profile (a sale of 50 units and one of
/// 5 million do not share a backlog worth waking someone for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct Thresholds {
    /// Reservation messages waiting to be persisted, all products.
    pub backlog_messages: i64,
    /// Live engine instances with an open breaker.
    pub breakers_open: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self { backlog_messages: 10_000, breakers_open: 1 }
    }
}
