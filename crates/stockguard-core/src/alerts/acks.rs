//! Acknowledgements: who took an alert, why, until when; closed by themselves when the alert
//! clears or their time is up, each step audited.
//!
//! One path for every sale: a [`Desk`] names where the acknowledgements live (the database,
//! the settings that act, the sale's name). Our own sale keeps them in its database under the
//! empty name; a sale read over an adapter keeps them in the state database under the
//! adapter sale's name, so two sales in one state database never share one.

use chrono::{NaiveDateTime, Utc};

use super::conditions::Alert;
use super::onsets::Onsets;
use super::state::{Acknowledgement, AlertState};
use super::AlertError;
use crate::action::Action;
use crate::audit::{self, AuditEntry};
use crate::connect::Connections;
use crate::profile::ConnectionSettings;

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
    let mut tx = desk.db.begin().await?;
    let inserted = sqlx::query(
        "INSERT INTO alert_acks (sale, alert_key, kind, product_id, acked_by, reason, until_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(desk.sale)
    .bind(key)
    .bind(alert.kind.as_str())
    .bind(alert.product_id)
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

const SELECT: &str = "SELECT id, alert_key, kind, product_id, acked_by, reason, acked_at, until_at FROM alert_acks";

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

/// Closes the open acknowledgements whose alert no longer fires ("cleared") or whose time is
/// up ("expired"), each with an audit row, and returns the closed ones with why. A close that
/// another watcher made first is not closed (or audited) twice.
pub async fn settle(conns: &Connections, firing: &[Alert]) -> Result<Vec<(Acknowledgement, &'static str)>, AlertError> {
    settle_at(Desk::ours(conns), firing).await
}

/// [`settle`] at any [`Desk`].
pub async fn settle_at(desk: Desk<'_>, firing: &[Alert]) -> Result<Vec<(Acknowledgement, &'static str)>, AlertError> {
    let now = chrono::Utc::now().naive_utc();
    let mut closed = Vec::new();
    for ack in open_at(desk).await? {
        let why = if !firing.iter().any(|a| a.key == ack.alert_key) {
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
