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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AuditRecord {
    pub id: u64,
    pub at: NaiveDateTime,
    /// Who did it, as the server knows it: the account of the connection that wrote the row
    /// (set by a trigger, whatever the client sent).
    pub actor: String,
    /// Who the client said it was (the profile's actor name): a claim, kept beside the fact.
    pub claimed_actor: String,
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

/// Appends many entries with one multi-row INSERT (the triggers run per row, as for
/// [`record`]). Their ids are not returned: InnoDB need not number the rows of one statement
/// consecutively (`innodb_autoinc_lock_mode = 2` interleaves them with other inserts), so a
/// caller that needs them puts a key of its own in the details and reads them back
/// ([`ids_by_detail`]). Returns the first row's id (the lower bound of all of them).
pub async fn record_many<'e, E>(executor: E, entries: &[AuditEntry]) -> Result<u64, sqlx::Error>
where
    E: sqlx::MySqlExecutor<'e>,
{
    if entries.is_empty() {
        return Ok(0);
    }
    let mut insert = sqlx::QueryBuilder::new(
        "INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome, details) ",
    );
    insert.push_values(entries, |mut row, e| {
        row.push_bind(&e.actor)
            .push_bind(&e.role)
            .push_bind(&e.environment)
            .push_bind(&e.action)
            .push_bind(&e.target)
            .push_bind(&e.reason)
            .push_bind(&e.outcome)
            .push_bind(sqlx::types::Json(&e.details));
    });
    Ok(insert.build().execute(executor).await?.last_insert_id())
}

/// The ids, in order, of the rows from id `from` on whose details hold `key = value`: the
/// rows written by one [`record_many`] (which returned `from`) with that key in their
/// details, numbered in the order of its entries.
pub async fn ids_by_detail(pool: &MySqlPool, from: u64, key: &str, value: &str) -> Result<Vec<u64>, sqlx::Error> {
    // A range of the primary key: the scan starts at the statement's first row.
    sqlx::query_scalar(
        "SELECT id FROM audit_log WHERE id >= ? AND JSON_UNQUOTE(JSON_EXTRACT(details, CONCAT('$.', ?))) = ? ORDER BY id",
    )
    .bind(from)
    .bind(key)
    .bind(value)
    .fetch_all(pool)
    .await
}

/// The newest entries first, optionally only one action kind.
pub async fn recent(pool: &MySqlPool, action: Option<&str>, limit: u32) -> Result<Vec<AuditRecord>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, at, actor, claimed_actor, role, environment, action, target, reason, outcome, details \
         FROM audit_log WHERE (? IS NULL OR action = ?) ORDER BY id DESC LIMIT ?",
    )
    .bind(action)
    .bind(action)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// What the audit screen filters on; every field is optional and they combine with AND.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AuditFilter {
    /// Exact action, e.g. `rewrite` or `rewrite.dry_run`.
    pub action: Option<String>,
    /// Exact outcome, e.g. `APPLIED`.
    pub outcome: Option<String>,
    /// Part of the target, actor or reason (e.g. `1016`).
    pub text: Option<String>,
    /// At most this many rows (capped at 1,000).
    pub limit: Option<u32>,
}

/// The newest entries first that match the filter.
pub async fn query(pool: &MySqlPool, filter: &AuditFilter) -> Result<Vec<AuditRecord>, sqlx::Error> {
    let text = filter.text.as_deref().map(str::trim).filter(|t| !t.is_empty());
    // LIKE wildcards typed by the user are matched literally.
    let pattern = text.map(|t| format!("%{}%", t.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")));
    sqlx::query_as(
        "SELECT id, at, actor, claimed_actor, role, environment, action, target, reason, outcome, details FROM audit_log \
         WHERE (? IS NULL OR action = ?) AND (? IS NULL OR outcome = ?) \
           AND (? IS NULL OR target LIKE ? OR actor LIKE ? OR reason LIKE ?) \
         ORDER BY id DESC LIMIT ?",
    )
    .bind(&filter.action)
    .bind(&filter.action)
    .bind(&filter.outcome)
    .bind(&filter.outcome)
    .bind(&pattern)
    .bind(&pattern)
    .bind(&pattern)
    .bind(&pattern)
    .bind(filter.limit.unwrap_or(200).min(1000))
    .fetch_all(pool)
    .await
}
