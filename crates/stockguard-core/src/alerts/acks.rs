//! Acknowledgements: who took an alert, why, until when; closed by themselves when the alert
//! clears or their time is up, each step audited.
//!
//! One path for every sale: a [`Desk`] names where the acknowledgements live (the database,
//! the settings that act, the sale's name). Our own sale keeps them in its database under the
//! empty name; a sale read over an adapter keeps them in the state database under the
//! adapter sale's name, so two sales in one state database never share one.

use chrono::{NaiveDateTime, Utc};

use super::conditions::{Alert, AlertKind};
use super::onsets::Onsets;
use super::state::{Acknowledgement, AlertState};
use super::AlertError;
use crate::action::Action;
use crate::audit::{self, AuditEntry};
use crate::connect::Connections;
use crate::product_id::ProductId;
use crate::profile::ConnectionSettings;
use crate::recon::{DriftStatus, Reading};

/// Where acknowledgements are kept and who acts: our own sale's database, or an adapter
/// sale's state database under its name.
#[derive(Debug, Clone, Copy)]
pub struct Desk<'a> {
    pub db: &'a sqlx::MySqlPool,
    pub settings: &'a ConnectionSettings,
    /// The adapter sale's name; empty for our own sale.
    pub sale: &'a str,
}

impl<'a> Desk<'a> {
    /// Our own sale: its database, under the empty name.
    pub fn ours(conns: &'a Connections) -> Self {
        Self { db: &conns.mysql, settings: &conns.settings, sale: "" }
    }

    /// A sale read over an adapter: the state database, under the adapter sale's name.
    pub fn adapter(state: &'a sqlx::MySqlPool, settings: &'a ConnectionSettings, sale: &'a str) -> Self {
        Self { db: state, settings, sale }
    }
}

/// Acknowledges a firing alert: who (the server says), why (required), until when (`None`:
/// until it clears). Refused when it is not firing or is already acknowledged.
pub async fn acknowledge(
    conns: &Connections,
    firing: &[Alert],
    key: &str,
    reason: &str,
    until: Option<NaiveDateTime>,
) -> Result<Acknowledgement, AlertError> {
    acknowledge_at(Desk::ours(conns), firing, key, reason, until).await
}

/// [`acknowledge`] at any [`Desk`]: the one path.
pub async fn acknowledge_at(
    desk: Desk<'_>,
    firing: &[Alert],
    key: &str,
    reason: &str,
    until: Option<NaiveDateTime>,
) -> Result<Acknowledgement, AlertError> {
    desk.settings.may(Action::AcknowledgeAlert)?;
    if reason.trim().is_empty() {
        return Err(AlertError::NoReason);
    }
    let Some(alert) = firing.iter().find(|a| a.key == key) else {
        return Err(AlertError::NotFiring(key.into()));
    };
    let stored = alert.product_id.as_ref().map(ProductId::stored);
    let mut tx = desk.db.begin().await?;
    let inserted = sqlx::query(
        "INSERT INTO alert_acks (sale, alert_key, kind, product_id, product_is_text, acked_by, reason, until_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(desk.sale)
    .bind(key)
    .bind(alert.kind.as_str())
    .bind(stored.as_ref().map(|(text, _)| text))
    .bind(stored.as_ref().is_some_and(|(_, is_text)| *is_text))
    .bind(&desk.settings.actor)
    .bind(reason.trim())
    .bind(until)
    .execute(&mut *tx)
    .await;
    let id = match inserted {
        Ok(done) => done.last_insert_id(),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            return Err(AlertError::AlreadyAcknowledged(key.into()))
        }
        Err(e) => return Err(e.into()),
    };
    let details = serde_json::json!({ "ack_id": id, "kind": alert.kind, "value": alert.value, "until": until });
    let entry = AuditEntry::by(desk.settings, "alert.ack", &desk.target(key), reason.trim(), "ACKNOWLEDGED", details);
    audit::record(&mut *tx, &entry).await?;
    tx.commit().await?;
    let ack =
        sqlx::query_as::<_, Acknowledgement>(&format!("{SELECT} WHERE id = ?")).bind(id).fetch_one(desk.db).await?;
    Ok(ack)
}

impl Desk<'_> {
    /// What an audit row names: the key, and for an adapter sale the sale too.
    fn target(&self, key: &str) -> String {
        if self.sale.is_empty() {
            key.to_string()
        } else {
            format!("sale:{}:{key}", self.sale)
        }
    }
}

const SELECT: &str =
    "SELECT id, alert_key, kind, product_id, product_is_text, acked_by, reason, acked_at, until_at FROM alert_acks";

/// The open acknowledgements.
pub async fn open(conns: &Connections) -> Result<Vec<Acknowledgement>, AlertError> {
    open_at(Desk::ours(conns)).await
}

/// The open acknowledgements at a [`Desk`].
pub async fn open_at(desk: Desk<'_>) -> Result<Vec<Acknowledgement>, AlertError> {
    Ok(sqlx::query_as(&format!("{SELECT} WHERE sale = ? AND closed_at IS NULL ORDER BY id"))
        .bind(desk.sale)
        .fetch_all(desk.db)
        .await?)
}

/// Closes the open acknowledgements whose alert is gone ("cleared") or whose time is up
/// ("expired"), each with an audit row, and returns the closed ones with why. A close that
/// another watcher made first is not closed (or audited) twice. `readings` is the reading
/// behind `firing` (see [`cleared`]).
pub async fn settle(
    conns: &Connections,
    firing: &[Alert],
    readings: &[Reading],
) -> Result<Vec<(Acknowledgement, &'static str)>, AlertError> {
    settle_at(Desk::ours(conns), firing, readings).await
}

/// Whether an acknowledged alert is gone: it does not fire, and for a confirmed drift, the
/// reading shows the drift gone. A drift is confirmed only by two agreeing readings, so its
/// absence alone proves nothing: not on a loop's first reading, not after an `UNSETTLED`
/// reading (an adapter sale's product with work in flight that cannot be judged), not while
/// the drift changes value. Its acknowledgement closes only once its product reads settled
/// with no drift (or is no longer read at all).
pub fn cleared(ack: &Acknowledgement, firing: &[Alert], readings: &[Reading]) -> bool {
    if firing.iter().any(|a| a.key == ack.alert_key) {
        return false;
    }
    if ack.kind != AlertKind::DriftConfirmed.as_str() {
        return true;
    }
    match ack.product_id.as_ref().and_then(|p| readings.iter().find(|r| r.product_id == *p)) {
        Some(r) => r.settled && r.status != DriftStatus::HistoryLost && r.drift.is_none_or(|d| d == 0),
        None => true,
    }
}

/// [`settle`] at any [`Desk`].
pub async fn settle_at(
    desk: Desk<'_>,
    firing: &[Alert],
    readings: &[Reading],
) -> Result<Vec<(Acknowledgement, &'static str)>, AlertError> {
    let now = chrono::Utc::now().naive_utc();
    let mut closed = Vec::new();
    for ack in open_at(desk).await? {
        let why = if cleared(&ack, firing, readings) {
            "cleared"
        } else if ack.until_at.is_some_and(|until| until <= now) {
            "expired"
        } else {
            continue;
        };
        let mut tx = desk.db.begin().await?;
        let done = sqlx::query(
            "UPDATE alert_acks SET closed_at = CURRENT_TIMESTAMP(3), close_reason = ? WHERE id = ? AND closed_at IS NULL",
        )
        .bind(why)
        .bind(ack.id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            continue;
        }
        let details = serde_json::json!({ "ack_id": ack.id, "acked_by": ack.acked_by, "closed": why });
        let reason = format!("the acknowledgement closed itself: the alert {why}");
        let entry =
            AuditEntry::by(desk.settings, "alert.ack.closed", &desk.target(&ack.alert_key), &reason, "CLOSED", details);
        audit::record(&mut *tx, &entry).await?;
        tx.commit().await?;
        closed.push((ack, why));
    }
    Ok(closed)
}

/// The firing alerts of a one-off reading with their open acknowledgements: each began in
/// that reading, now.
pub async fn states(conns: &Connections, firing: &[Alert]) -> Result<Vec<AlertState>, AlertError> {
    states_at(Desk::ours(conns), firing, &Onsets::once(firing, Utc::now())).await
}

/// The firing alerts at any [`Desk`], each with when it began (from `onsets`, which saw the
/// reading of `firing`) and its open acknowledgement.
pub async fn states_at(desk: Desk<'_>, firing: &[Alert], onsets: &Onsets) -> Result<Vec<AlertState>, AlertError> {
    let open = open_at(desk).await?;
    Ok(onsets
        .unacknowledged(firing)
        .into_iter()
        .map(|mut state| {
            state.acknowledged = open.iter().find(|a| a.alert_key == state.alert.key).cloned();
            state
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(kind: AlertKind, product: u64) -> Acknowledgement {
        Acknowledgement {
            id: 1,
            alert_key: format!("{}:{product}", if kind == AlertKind::DriftConfirmed { "drift" } else { "oversold" }),
            kind: kind.as_str().into(),
            product_id: Some(product.into()),
            acked_by: "oncall".into(),
            reason: "looking".into(),
            acked_at: chrono::Utc::now().naive_utc(),
            until_at: None,
        }
    }

    fn reading(product: u64, status: DriftStatus, drift: Option<i64>, settled: bool) -> Reading {
        Reading { status, drift, settled, ..Reading::exact(product, 10, 0) }
    }

    #[test]
    fn a_drift_acknowledgement_stays_open_while_its_product_is_unsettled() {
        let readings = [reading(7, DriftStatus::Unsettled, None, false)];
        assert!(!cleared(&ack(AlertKind::DriftConfirmed, 7), &[], &readings));
    }

    #[test]
    fn a_drift_acknowledgement_stays_open_on_a_first_reading_that_still_shows_the_drift() {
        // One reading cannot confirm a drift, so the alert does not fire: the drift is not gone.
        let readings = [reading(7, DriftStatus::RedisLow, Some(-3), true)];
        assert!(!cleared(&ack(AlertKind::DriftConfirmed, 7), &[], &readings));
    }

    #[test]
    fn a_drift_acknowledgement_clears_once_its_product_reads_settled_with_no_drift() {
        let readings = [reading(7, DriftStatus::Ok, Some(0), true)];
        assert!(cleared(&ack(AlertKind::DriftConfirmed, 7), &[], &readings));
        assert!(cleared(&ack(AlertKind::DriftConfirmed, 8), &[], &readings), "a product no longer read");
    }

    #[test]
    fn an_alert_that_fires_is_never_cleared_and_one_of_another_kind_clears_when_it_stops() {
        let a = ack(AlertKind::Oversold, 7);
        let firing =
            [Alert { key: a.alert_key.clone(), kind: AlertKind::Oversold, product_id: Some(7.into()), value: Some(1) }];
        assert!(!cleared(&a, &firing, &[]));
        assert!(cleared(&a, &[], &[reading(7, DriftStatus::Unsettled, None, false)]));
    }
}
