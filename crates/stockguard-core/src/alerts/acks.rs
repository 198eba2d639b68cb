//! Acknowledgements: who took an alert, why, until when; closed by themselves when the alert
//! clears or their time is up, each step audited.

use chrono::NaiveDateTime;
use serde::Serialize;

use super::conditions::Alert;
use super::AlertError;
use crate::action::Action;
use crate::audit::{self, AuditEntry};
use crate::connect::Connections;

/// An open acknowledgement.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "AlertAcknowledgement"))]
pub struct Acknowledgement {
    pub id: u64,
    pub alert_key: String,
    pub kind: String,
    pub product_id: Option<u64>,
    /// The account that acknowledged (the server's word).
    pub acked_by: String,
    pub reason: String,
    pub acked_at: NaiveDateTime,
    pub until_at: Option<NaiveDateTime>,
}

/// An alert with its open acknowledgement, if any.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AlertState {
    pub alert: Alert,
    pub acknowledged: Option<Acknowledgement>,
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
    conns.settings.may(Action::AcknowledgeAlert)?;
    if reason.trim().is_empty() {
        return Err(AlertError::NoReason);
    }
    let Some(alert) = firing.iter().find(|a| a.key == key) else {
        return Err(AlertError::NotFiring(key.into()));
    };
    let mut tx = conns.mysql.begin().await?;
    let inserted = sqlx::query(
        "INSERT INTO alert_acks (alert_key, kind, product_id, acked_by, reason, until_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(key)
    .bind(alert.kind.as_str())
    .bind(alert.product_id)
    .bind(&conns.settings.actor)
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
    let entry = AuditEntry::by(&conns.settings, "alert.ack", key, reason.trim(), "ACKNOWLEDGED", details);
    audit::record(&mut *tx, &entry).await?;
    tx.commit().await?;
    let ack = sqlx::query_as::<_, Acknowledgement>(&format!("{SELECT} WHERE id = ?"))
        .bind(id)
        .fetch_one(&conns.mysql)
        .await?;
    Ok(ack)
}

const SELECT: &str = "SELECT id, alert_key, kind, product_id, acked_by, reason, acked_at, until_at FROM alert_acks";

/// The open acknowledgements.
pub async fn open(conns: &Connections) -> Result<Vec<Acknowledgement>, AlertError> {
    Ok(sqlx::query_as(&format!("{SELECT} WHERE closed_at IS NULL ORDER BY id")).fetch_all(&conns.mysql).await?)
}

/// Closes the open acknowledgements whose alert no longer fires ("cleared") or whose time is
/// up ("expired"), each with an audit row, and returns the closed ones with why. A close that
/// another watcher made first is not closed (or audited) twice.
pub async fn settle(conns: &Connections, firing: &[Alert]) -> Result<Vec<(Acknowledgement, &'static str)>, AlertError> {
    let now = chrono::Utc::now().naive_utc();
    let mut closed = Vec::new();
    for ack in open(conns).await? {
        let why = if !firing.iter().any(|a| a.key == ack.alert_key) {
            "cleared"
        } else if ack.until_at.is_some_and(|until| until <= now) {
            "expired"
        } else {
            continue;
        };
        let mut tx = conns.mysql.begin().await?;
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
        let entry = AuditEntry::by(&conns.settings, "alert.ack.closed", &ack.alert_key, &reason, "CLOSED", details);
        audit::record(&mut *tx, &entry).await?;
        tx.commit().await?;
        closed.push((ack, why));
    }
    Ok(closed)
}

/// The firing alerts with their open acknowledgements.
pub async fn states(conns: &Connections, firing: &[Alert]) -> Result<Vec<AlertState>, AlertError> {
    let open = open(conns).await?;
    Ok(firing
        .iter()
        .map(|alert| AlertState {
            alert: alert.clone(),
            acknowledged: open.iter().find(|a| a.alert_key == alert.key).cloned(),
        })
        .collect())
}
