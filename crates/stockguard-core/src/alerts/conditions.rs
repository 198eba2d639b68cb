//! Which alerts are firing, from a reading: a pure function, so the desktop app, the CLI and
//! the headless watcher agree on it.

use serde::Serialize;

use crate::profile::thresholds::Thresholds;
use crate::recon::drift::ConfirmedDrift;
use crate::recon::{DriftStatus, Reading};

/// What an alert is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AlertKind {
    /// Two readings in a row agree on a drift between Redis and the ledger.
    DriftConfirmed,
    /// More live orders than initial stock: compensation, not a rewrite.
    Oversold,
    LedgerMismatch,
    /// No stock key in Redis: the product cannot sell.
    KeyMissing,
    /// More reservations waiting to be persisted than the profile's threshold.
    Backlog,
    /// At least the profile's number of live engines have their Redis breaker open: they
    /// sell through the DB path until someone runs the guided exit.
    BreakerOpen,
}

impl AlertKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DriftConfirmed => "DRIFT_CONFIRMED",
            Self::Oversold => "OVERSOLD",
            Self::LedgerMismatch => "LEDGER_MISMATCH",
            Self::KeyMissing => "KEY_MISSING",
            Self::Backlog => "BACKLOG",
            Self::BreakerOpen => "BREAKER_OPEN",
        }
    }
}

/// A firing alert. `key` names it across readings (`drift:1016`, `backlog`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Alert {
    pub key: String,
    pub kind: AlertKind,
    pub product_id: Option<u64>,
    /// The drift, the backlog, or the number of open breakers.
    pub value: Option<i64>,
}

/// What the reading alone does not say: the streams' backlog (`None` when it could not be
/// read) and the live engine instances whose breaker is not closed.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    pub backlog: Option<i64>,
    pub breakers_open: Vec<String>,
}

/// The alerts a reading raises: a confirmed drift (from `confirmed`, the drift tracker's
/// verdict), a status of the ledger or of the key (at once: they need no second reading, the
/// reading is exact), a backlog over the threshold, and open breakers at the threshold.
pub fn evaluate(
    readings: &[Reading],
    confirmed: &[ConfirmedDrift],
    signals: &Signals,
    thresholds: &Thresholds,
) -> Vec<Alert> {
    let mut alerts = Vec::new();
    for r in readings {
        let kind = match r.status {
            DriftStatus::Oversold => Some(AlertKind::Oversold),
            DriftStatus::LedgerMismatch => Some(AlertKind::LedgerMismatch),
            DriftStatus::KeyMissing => Some(AlertKind::KeyMissing),
            _ => None,
        };
        if let Some(kind) = kind {
            alerts.push(Alert {
                key: format!("{}:{}", kind.as_str().to_lowercase(), r.product_id),
                kind,
                product_id: Some(r.product_id),
                value: r.drift,
            });
        }
    }
    for c in confirmed.iter().filter(|c| c.drift.is_some_and(|d| d != 0) || c.status == DriftStatus::HistoryLost) {
        alerts.push(Alert {
            key: format!("drift:{}", c.product_id),
            kind: AlertKind::DriftConfirmed,
            product_id: Some(c.product_id),
            value: c.drift,
        });
    }
    if let Some(backlog) = signals.backlog.filter(|b| *b > thresholds.backlog_messages) {
        alerts.push(Alert { key: "backlog".into(), kind: AlertKind::Backlog, product_id: None, value: Some(backlog) });
    }
    let open = signals.breakers_open.len();
    if open > 0 && open >= thresholds.breakers_open {
        alerts.push(Alert {
            key: "breaker".into(),
            kind: AlertKind::BreakerOpen,
            product_id: None,
            value: Some(open as i64),
        });
    }
    alerts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(product_id: u64, status: DriftStatus, drift: Option<i64>) -> Reading {
        Reading { redis_stock: drift.map(|d| 5 + d), drift, status, ..Reading::exact(product_id, 10, 5) }
    }

    #[test]
    fn a_drift_alerts_only_once_two_readings_confirm_it() {
        let readings = [reading(7, DriftStatus::RedisHigh, Some(3))];
        assert!(
            evaluate(&readings, &[], &Signals::default(), &Thresholds::default()).is_empty(),
            "one reading is not enough"
        );
        let confirmed = [ConfirmedDrift { product_id: 7, status: DriftStatus::RedisHigh, drift: Some(3) }];
        let alerts = evaluate(&readings, &confirmed, &Signals::default(), &Thresholds::default());
        assert_eq!(alerts.len(), 1);
        assert_eq!(
            (alerts[0].key.as_str(), alerts[0].kind, alerts[0].value),
            ("drift:7", AlertKind::DriftConfirmed, Some(3))
        );
    }

    #[test]
    fn ledger_and_key_statuses_alert_at_once() {
        let readings = [
            reading(1, DriftStatus::Oversold, Some(0)),
            reading(2, DriftStatus::LedgerMismatch, Some(0)),
            reading(3, DriftStatus::KeyMissing, None),
            reading(4, DriftStatus::Ok, Some(0)),
        ];
        let keys: Vec<String> =
            evaluate(&readings, &[], &Signals::default(), &Thresholds::default()).into_iter().map(|a| a.key).collect();
        assert_eq!(keys, ["oversold:1", "ledger_mismatch:2", "key_missing:3"]);
    }

    #[test]
    fn the_backlog_alerts_past_its_threshold_only() {
        let t = Thresholds { backlog_messages: 100, ..Thresholds::default() };
        let backlog = |n| Signals { backlog: Some(n), ..Signals::default() };
        assert!(evaluate(&[], &[], &backlog(100), &t).is_empty());
        assert_eq!(evaluate(&[], &[], &backlog(101), &t)[0].key, "backlog");
    }

    #[test]
    fn open_breakers_alert_from_the_profiles_count_on() {
        let open =
            |ids: &[&str]| Signals { breakers_open: ids.iter().map(|s| s.to_string()).collect(), ..Signals::default() };
        let two = Thresholds { breakers_open: 2, ..Thresholds::default() };
        assert!(evaluate(&[], &[], &open(&[]), &Thresholds::default()).is_empty(), "no breaker open");
        assert!(evaluate(&[], &[], &open(&["e1"]), &two).is_empty(), "one of the two it takes");
        let alerts = evaluate(&[], &[], &open(&["e1", "e2"]), &two);
        assert_eq!(
            (alerts[0].key.as_str(), alerts[0].kind, alerts[0].value),
            ("breaker", AlertKind::BreakerOpen, Some(2))
        );
    }
}
