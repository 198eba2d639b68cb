//! Which alerts are firing, from a reading: a pure function, so the desktop app, the CLI and
//! the headless watcher agree on it.

use serde::Serialize;

use crate::product_id::ProductId;
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
    /// More live orders than initial stock (or DB stock below zero): compensation, not a
    /// rewrite.
    Oversold,
    /// The DB's own identity is off: initial stock is not DB stock plus live orders.
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
    /// The product's id as the sale keeps it (a number, or over an adapter text).
    pub product_id: Option<ProductId>,
    /// What the alert measures, by kind:
    /// - `DRIFT_CONFIRMED`: the confirmed drift, Redis less what it should hold (on a lost
    ///   history, what the untrusted cut shows);
    /// - `OVERSOLD`: the units beyond stock, by whichever line the status crossed (live
    ///   orders above initial stock, DB stock below zero), the larger of the two;
    /// - `LEDGER_MISMATCH`: the ledger's gap, `initial - DB stock - live orders`
    ///   ([`Reading::ledger_gap`], the figure recon's ledger gaps keep);
    /// - `KEY_MISSING`: none (no key, or over an adapter one that holds no whole number; no figure);
    /// - `BACKLOG`: the reservations waiting to be persisted;
    /// - `BREAKER_OPEN`: the live engines whose breaker is open.
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
        let (kind, value) = match r.status {
            DriftStatus::Oversold => (AlertKind::Oversold, Some(beyond_stock(r))),
            DriftStatus::LedgerMismatch => (AlertKind::LedgerMismatch, Some(r.ledger_gap())),
            // A key that holds what is not a whole number sells no more than a missing one.
            DriftStatus::KeyMissing | DriftStatus::KeyUnreadable => (AlertKind::KeyMissing, None),
            _ => continue,
        };
        alerts.push(Alert {
            key: format!("{}:{}", kind.as_str().to_lowercase(), r.product_id),
            kind,
            product_id: Some(r.product_id.clone()),
            value,
        });
    }
    for c in confirmed.iter().filter(|c| c.drift.is_some_and(|d| d != 0) || c.status == DriftStatus::HistoryLost) {
        alerts.push(Alert {
            key: format!("drift:{}", c.product_id),
            kind: AlertKind::DriftConfirmed,
            product_id: Some(c.product_id.clone()),
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

/// How far an `OVERSOLD` reading is beyond stock: past each of the two lines
/// [`DriftStatus::classify`] draws (live orders above initial stock, DB stock below zero),
/// the larger overshoot.
fn beyond_stock(r: &Reading) -> i64 {
    (r.live_orders_qty - r.initial_stock).max(-r.db_stock)
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
        let confirmed = [ConfirmedDrift { product_id: 7.into(), status: DriftStatus::RedisHigh, drift: Some(3) }];
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

    /// A reading of `initial` units, `db` of them in the DB's stock and `live` in live orders,
    /// Redis matching the DB, classified as a reading is.
    fn ledger(product_id: u64, initial: i64, db: i64, live: i64) -> Reading {
        let status = DriftStatus::classify(initial, db, live, Some(db), db, false);
        Reading {
            db_stock: db,
            live_orders_qty: live,
            redis_stock: Some(db),
            expected_redis: db,
            status,
            ..Reading::exact(product_id, initial, live)
        }
    }

    #[test]
    fn a_ledger_mismatch_is_valued_at_its_gap_not_at_the_drift() {
        // 10 units, 5 in live orders, 1 in the DB's stock: 4 are nowhere, and Redis agrees
        // with the DB (drift 0).
        let r = ledger(2, 10, 1, 5);
        assert_eq!((r.status, r.drift), (DriftStatus::LedgerMismatch, Some(0)));
        let alerts = evaluate(&[r], &[], &Signals::default(), &Thresholds::default());
        assert_eq!((alerts[0].kind, alerts[0].value), (AlertKind::LedgerMismatch, Some(4)));
        let over = evaluate(&[ledger(3, 10, 9, 5)], &[], &Signals::default(), &Thresholds::default());
        assert_eq!(over[0].value, Some(-4), "more units accounted for than there were: a gap below zero");
    }

    #[test]
    fn an_oversold_product_is_valued_at_the_units_beyond_its_stock() {
        let alerts =
            evaluate(&[ledger(1, 10, -3, 13), ledger(2, 10, -2, 8)], &[], &Signals::default(), &Thresholds::default());
        assert!(alerts.iter().all(|a| a.kind == AlertKind::Oversold));
        let values: Vec<_> = alerts.iter().map(|a| a.value).collect();
        assert_eq!(values, [Some(3), Some(2)], "3 live units above initial stock; stock 2 below zero");
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
