//! The append-only audit log: every write action, who did it, why, and what came of it.
//!
//! The table refuses UPDATE and DELETE by trigger (see the migration), so this module only
//! appends and reads.

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use crate::profile::ConnectionSettings;

/// One action to record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuditEntry {
    pub actor: String,
    pub role: String,
    pub environment: String,
    pub action: String,
    pub target: String,
    pub reason: String,
    pub outcome: String,
    pub details: serde_json::Value,
}

impl AuditEntry {
    /// An entry for an action taken through the given connection settings.
    pub fn by(
        settings: &ConnectionSettings,
        action: &str,
        target: &str,
        reason: &str,
        outcome: &str,
        details: serde_json::Value,
    ) -> Self {
        Self {
            actor: settings.actor.clone(),
            role: settings.role.to_string(),
            environment: settings.environment.to_string(),
            action: action.into(),
            target: target.into(),
            reason: reason.into(),
            outcome: outcome.into(),
            details,
        }
    }
}

/// A recorded entry.
#[derive(Debug, Clone, Serialize, Deserialize, sqlx::FromRow)]
pub struct AuditRecord {
    pub id: u64,
    pub at: NaiveDateTime,
    pub actor: String,
    pub role: String,
    pub environment: String,
    pub action: String,
    pub target: String,
    pub reason: String,
    pub outcome: String,
    pub details: Option<serde_json::Value>,
}

/// Appends an entry; returns its id.
pub async fn record<'e, E>(executor: E, entry: &AuditEntry) -> Result<u64, sqlx::Error>
where
    E: sqlx::MySqlExecutor<'e>,
{
    let result = sqlx::query(
        "INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome, details) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&entry.actor)
    .bind(&entry.role)
    .bind(&entry.environment)
    .bind(&entry.action)
    .bind(&entry.target)
    .bind(&entry.reason)
    .bind(&entry.outcome)
    .bind(sqlx::types::Json(&entry.details))
    .execute(executor)
    .await?;
    Ok(result.last_insert_id())
}

/// The newest entries first, optionally only one action kind.
pub async fn recent(pool: &MySqlPool, action: Option<&str>, limit: u32) -> Result<Vec<AuditRecord>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, at, actor, role, environment, action, target, reason, outcome, details \
         FROM audit_log WHERE (? IS NULL OR action = ?) ORDER BY id DESC LIMIT ?",
    )
    .bind(action)
    .bind(action)
    .bind(limit)
    .fetch_all(pool)
    .await
}
