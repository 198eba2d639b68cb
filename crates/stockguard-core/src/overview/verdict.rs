//! The sale's verdict: the overview's first line, in one sentence and one colour. Made from
//! the alerts the overview already has (the same ones the tray counts), so it never says
//! "exact" while an alert fires.

use serde::Serialize;

use crate::alerts::{AlertKind, AlertState};

/// How safe the sale is, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Units were sold beyond stock, or the ledger itself disagrees with its orders: people
    /// owe buyers something, or nothing can be trusted until the DB is corrected.
    Unsafe,
    /// Redis drifts from the ledger (or a key is missing), the backlog is high, or engines
    /// sell through the DB: nothing oversold, but not as it should be.
    Watch,
    /// No alert fires: every product's Redis stock matches the ledger, nothing is oversold.
    Exact,
}

/// The verdict with its counts (products, except `other`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Verdict {
    pub level: Level,
    /// Products sold beyond their stock.
    pub oversold: usize,
    /// Products whose ledger (DB stock against its orders) does not add up.
    pub ledger_mismatch: usize,
    /// Products whose Redis stock drifts (confirmed) or whose key is missing.
    pub drifting: usize,
    /// Sale-wide alerts: the backlog, open breakers.
    pub other: usize,
    /// Firing alerts nobody acknowledged.
    pub unacknowledged: usize,
}

/// The verdict of the alerts firing now.
pub fn of(alerts: &[AlertState]) -> Verdict {
    let count = |kinds: &[AlertKind]| alerts.iter().filter(|a| kinds.contains(&a.alert.kind)).count();
    let oversold = count(&[AlertKind::Oversold]);
    let ledger_mismatch = count(&[AlertKind::LedgerMismatch]);
    let drifting = count(&[AlertKind::DriftConfirmed, AlertKind::KeyMissing]);
    let other = count(&[AlertKind::Backlog, AlertKind::BreakerOpen]);
    let level = if oversold + ledger_mismatch > 0 {
        Level::Unsafe
    } else if drifting + other > 0 {
        Level::Watch
    } else {
        Level::Exact
    };
    let unacknowledged = alerts.iter().filter(|a| a.acknowledged.is_none()).count();
    Verdict { level, oversold, ledger_mismatch, drifting, other, unacknowledged }
}

impl std::fmt::Display for Verdict {
    /// The CLI's first line (the window says it in its own language).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.level == Level::Exact {
            return f.write_str("EXACT: every product's Redis stock matches the ledger; nothing oversold");
        }
        let mut parts = Vec::new();
        let mut say = |n: usize, what: &str| {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        };
        say(self.oversold, "oversold");
        say(self.ledger_mismatch, "with a ledger mismatch");
        say(self.drifting, "drifting");
        say(self.other, "sale-wide alerts");
        let level = if self.level == Level::Unsafe { "UNSAFE" } else { "WATCH" };
        write!(f, "{level}: {}; {} unacknowledged", parts.join(", "), self.unacknowledged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::Alert;

    fn firing(kind: AlertKind, product: Option<u64>) -> AlertState {
        let key = format!("{}:{}", kind.as_str(), product.unwrap_or(0));
        let alert = Alert { key, kind, product_id: product.map(Into::into), value: Some(1) };
        AlertState { alert, since: chrono::Utc::now(), acknowledged: None }
    }

    #[test]
    fn no_alert_is_exact_a_drift_is_watch_and_an_oversold_product_is_unsafe() {
        assert_eq!(of(&[]).level, Level::Exact);
        assert_eq!(of(&[]).to_string(), "EXACT: every product's Redis stock matches the ledger; nothing oversold");
        let drift = [firing(AlertKind::DriftConfirmed, Some(1)), firing(AlertKind::KeyMissing, Some(2))];
        assert_eq!((of(&drift).level, of(&drift).drifting), (Level::Watch, 2));
        let mut worse = drift.to_vec();
        worse.push(firing(AlertKind::Oversold, Some(3)));
        let v = of(&worse);
        assert_eq!((v.level, v.oversold, v.unacknowledged), (Level::Unsafe, 1, 3));
        assert_eq!(v.to_string(), "UNSAFE: 1 oversold, 2 drifting; 3 unacknowledged");
        assert_eq!(of(&[firing(AlertKind::LedgerMismatch, Some(4))]).level, Level::Unsafe);
        assert_eq!(of(&[firing(AlertKind::Backlog, None)]).level, Level::Watch);
    }
}
