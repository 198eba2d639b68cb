//! The sale's own degrade flag, where its adapter file says the sale reads it (`[switch]`):
//! a Redis key, or a row of one of its tables, with the values that mean on and off.
//!
//! `stockguard degrade on|off` over an adapter writes that flag and reads it back; the sale's
//! own code decides what "degraded" means. The same rule as our own switch decides who may
//! ([`Action::ChangeSwitch`]); a reason is required; on production the scope (`global`: the
//! flag is one for the whole sale) is typed again; every change is audited in the state
//! database, never the sale's. A DB-row flag needs an account that may UPDATE that table:
//! with the SELECT-only account the rest of the console uses, the write fails naming its step.
//!
//! Without a `[switch]` section Stockguard does not know where the sale reads its flag, and
//! says so instead of writing anything.

use serde::Serialize;
use sqlx::MySqlPool;

use super::file::{AdapterFile, StatusValue, SwitchSection};
use super::links::SaleLinks;
use super::missing::Missing;
use super::AdapterError;
use crate::action::Action;
use crate::audit::{self, AuditEntry};
use crate::profile::{ConnectionSettings, EnvironmentKind};
use crate::redis_link::Link;

/// The scope typed again on production: the flag is one for the whole sale.
pub const SCOPE: &str = "global";

/// What the flag reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagMode {
    On,
    Off,
    /// A value that is neither the file's `on` nor its `off`.
    Unknown,
    /// No such key, or no such row.
    Missing,
}

impl std::fmt::Display for FlagMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::On => "ON",
            Self::Off => "OFF",
            Self::Unknown => "UNKNOWN",
            Self::Missing => "MISSING",
        })
    }
}

/// The flag as read back from the sale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlagState {
    /// `redis_key` or `db_row`.
    pub source: &'static str,
    /// Where it is: the key, or `table.flag where key_column = key`.
    pub location: String,
    /// The value stored, as text (`null` when missing).
    pub value: Option<String>,
    pub mode: FlagMode,
}

/// A change made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlagChange {
    pub before: FlagState,
    pub after: FlagState,
    pub audit_id: u64,
}

/// The section, or the refusal of a file without one.
fn section(file: &AdapterFile) -> Result<&SwitchSection, AdapterError> {
    file.switch.as_ref().ok_or_else(|| {
        AdapterError::Refused(
            "the adapter file has no [switch] section, so Stockguard does not know where this sale reads its own \
             degrade flag: add one (a Redis key or a DB row, docs/adapters/README.md) to switch it from here"
                .into(),
        )
    })
}

/// Reads the flag (refused without a `[switch]` section).
pub async fn read<C: Link>(file: &AdapterFile, links: &SaleLinks<'_, C>) -> Result<FlagState, AdapterError> {
    let switch = section(file)?;
    let (on, off) = switch.values();
    let (source, location, value) = match switch {
        SwitchSection::RedisKey { key, .. } => {
            let mut conn = redis_of(links)?.clone();
            let value: Option<String> = redis::cmd("GET")
                .arg(key)
                .query_async(&mut conn)
                .await
                .map_err(|source| AdapterError::Redis { step: "read the switch key", source })?;
            ("redis_key", key.clone(), value)
        }
        SwitchSection::DbRow { table, key_column, key, flag, .. } => {
            let sql = format!(
                "SELECT CAST({f} AS CHAR) FROM {t} WHERE {k} = ? LIMIT 1",
                f = flag.q(),
                t = table.q(),
                k = key_column.q()
            );
            let row: Option<(Option<String>,)> = sqlx::query_as(&sql)
                .bind(key.raw())
                .fetch_optional(db_of(links)?)
                .await
                .map_err(|source| AdapterError::Db { step: "read the switch row", source })?;
            ("db_row", format!("{table}.{flag} where {key_column} = {key}"), row.and_then(|(v,)| v))
        }
    };
    let mode = match value.as_deref() {
        None => FlagMode::Missing,
        Some(v) if v == on.raw() => FlagMode::On,
        Some(v) if v == off.raw() => FlagMode::Off,
        Some(_) => FlagMode::Unknown,
    };
    Ok(FlagState { source, location, value, mode })
}

/// Turns the sale's flag on or off (see the module docs), and reads it back.
#[allow(clippy::too_many_arguments)]
pub async fn set<C: Link>(
    file: &AdapterFile,
    links: &SaleLinks<'_, C>,
    state_db: Option<&MySqlPool>,
    settings: &ConnectionSettings,
    on: bool,
    reason: &str,
    confirm: Option<&str>,
) -> Result<FlagChange, AdapterError> {
    let switch = section(file)?;
    settings.may(Action::ChangeSwitch)?;
    if reason.trim().is_empty() {
        return Err(AdapterError::Refused("a reason is required (--reason): it goes to the audit log".into()));
    }
    if settings.environment == EnvironmentKind::Production && confirm != Some(SCOPE) {
        return Err(AdapterError::Refused(format!(
            "PRODUCTION: confirm the switch by typing its scope (--confirm {SCOPE})"
        )));
    }
    let pool = state_db.ok_or(AdapterError::NoStateDb)?;
    let before = read(file, links).await?;
    let (on_value, off_value) = switch.values();
    let value = if on { on_value } else { off_value };
    write(switch, links, value).await?;
    let after = read(file, links).await?;
    let outcome = if on { "ON" } else { "OFF" };
    let entry = AuditEntry::by(
        settings,
        "adapter_switch",
        &format!("sale:{}:switch", file.sale.name),
        reason,
        outcome,
        serde_json::json!({ "before": before, "after": after }),
    );
    let audit_id = audit::record(pool, &entry)
        .await
        .map_err(|source| AdapterError::StateDb { step: "write the audit row", source })?;
    Ok(FlagChange { before, after, audit_id })
}

async fn write<C: Link>(
    switch: &SwitchSection,
    links: &SaleLinks<'_, C>,
    value: &StatusValue,
) -> Result<(), AdapterError> {
    match switch {
        SwitchSection::RedisKey { key, .. } => {
            let mut conn = redis_of(links)?.clone();
            redis::cmd("SET")
                .arg(key)
                .arg(value.raw())
                .query_async::<()>(&mut conn)
                .await
                .map_err(|source| AdapterError::Redis { step: "write the switch key", source })
        }
        SwitchSection::DbRow { table, key_column, key, flag, .. } => {
            let sql = format!("UPDATE {t} SET {f} = ? WHERE {k} = ?", t = table.q(), f = flag.q(), k = key_column.q());
            let pool = db_of(links)?;
            let done = sqlx::query(&sql).bind(value.raw()).bind(key.raw()).execute(pool).await.map_err(|source| {
                AdapterError::Db { step: "write the switch row (it needs an UPDATE grant)", source }
            })?;
            if done.rows_affected() == 0 {
                // No change reported: the row may already hold the value, or not exist.
                let exists: Option<(i64,)> = sqlx::query_as(&format!(
                    "SELECT 1 FROM {t} WHERE {k} = ? LIMIT 1",
                    t = table.q(),
                    k = key_column.q()
                ))
                .bind(key.raw())
                .fetch_optional(pool)
                .await
                .map_err(|source| AdapterError::Db { step: "find the switch row", source })?;
                if exists.is_none() {
                    return Err(AdapterError::Missing(Missing::Row {
                        table: table.to_string(),
                        key_column: key_column.to_string(),
                        key: key.to_string(),
                    }));
                }
            }
            Ok(())
        }
    }
}

fn redis_of<'a, C: Link>(links: &SaleLinks<'a, C>) -> Result<&'a C, AdapterError> {
    links.redis.ok_or_else(|| AdapterError::Refused("no Redis URL was given for the sale".into()))
}

fn db_of<'a, C>(links: &SaleLinks<'a, C>) -> Result<&'a MySqlPool, AdapterError> {
    links.db.ok_or_else(|| AdapterError::Refused("no database URL was given for the sale".into()))
}
