//! The switch in MySQL: reading it (engines, the console) and changing it (people, and an
//! engine's breaker).
//!
//! Every change appends to `switch_changes` (its id is the revision, global and monotonic),
//! moves the scope's row in `degrade_switch`, and is audited, all in one transaction. Every
//! change first locks the one `switch_head` row, so changes commit one at a time in revision
//! order: a reader that sees revision R sees every change before it, which is what lets an
//! engine acknowledge "R applied" with one number.
//!
//! Lock order, kept by every transaction that touches the switch: `switch_head`, then
//! `degrade_switch` rows. The DB-path order transaction (`engine::degraded`) takes the scope
//! rows shared, then inventory, then orders; switch changes never lock inventory, so the two
//! cannot deadlock, and a change waits for every DB-path order already past its switch check.

use chrono::NaiveDateTime;
use serde::Serialize;
use sqlx::MySqlPool;

use super::mode::{self, Home, Mode, Scope, SwitchView};
use super::SwitchError;
use crate::action::Action;
use crate::audit::{self, AuditEntry};
use crate::profile::ConnectionSettings;
use crate::step::Step as _;

/// Who changes the switch, as the audit log records it.
#[derive(Debug, Clone)]
pub struct Changer {
    pub actor: String,
    pub role: String,
    pub environment: String,
}

impl Changer {
    /// A person (or script) acting through a profile. Read-only profiles, viewers and
    /// approvers may not flip the switch.
    pub fn person(settings: &ConnectionSettings) -> Result<Self, SwitchError> {
        settings.may(Action::ChangeSwitch)?;
        Ok(Self {
            actor: settings.actor.clone(),
            role: settings.role.to_string(),
            environment: settings.environment.to_string(),
        })
    }

    /// An engine instance whose circuit breaker tripped.
    pub fn breaker(instance_id: &str) -> Self {
        Self { actor: format!("breaker:{instance_id}"), role: "engine".into(), environment: String::new() }
    }
}

/// One row of `degrade_switch`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ScopeState {
    pub scope: Scope,
    pub mode: Mode,
    pub revision: u64,
    pub changed_by: String,
    pub reason: String,
    pub changed_at: NaiveDateTime,
}

/// A change just made.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Change {
    pub revision: u64,
    pub scope: Scope,
    pub mode: Mode,
    pub changed_by: String,
    pub reason: String,
    pub changed_at: NaiveDateTime,
    pub audit_id: u64,
}

type Row = (String, Option<u64>, String, u64, String, String, NaiveDateTime);

fn parse_row(
    (scope, product_id, mode, revision, changed_by, reason, changed_at): Row,
) -> Result<ScopeState, SwitchError> {
    let scope = match (product_id, scope.parse::<Scope>()) {
        (Some(p), Ok(Scope::Product(q))) if p == q => Scope::Product(p),
        (None, Ok(scope @ (Scope::Global | Scope::Rig(_)))) => scope,
        _ => return Err(SwitchError::Corrupt(format!("scope {scope:?} with product id {product_id:?}"))),
    };
    let mode = mode.parse().map_err(|e: super::mode::UnknownMode| SwitchError::Corrupt(e.to_string()))?;
    Ok(ScopeState { scope, mode, revision, changed_by, reason, changed_at })
}

/// Every scope's current state, global first.
pub async fn scopes(pool: &MySqlPool) -> Result<Vec<ScopeState>, SwitchError> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT scope, product_id, CAST(mode AS CHAR), revision, changed_by, reason, changed_at \
         FROM degrade_switch ORDER BY product_id IS NOT NULL, product_id",
    )
    .fetch_all(pool)
    .await
    .step("reading degrade_switch (scopes)")?;
    rows.into_iter().map(parse_row).collect()
}

/// The switch as an engine applies it: one small query (a row per scope that was ever set).
pub async fn read_view(pool: &MySqlPool) -> Result<SwitchView, SwitchError> {
    let mut view = SwitchView::default();
    for s in scopes(pool).await? {
        view.revision = view.revision.max(s.revision);
        match s.scope {
            Scope::Global => {
                view.global = Some(s.mode);
                view.global_revision = s.revision;
            }
            Scope::Rig(run) => {
                view.rigs.insert(run, mode::Row { mode: s.mode, revision: s.revision });
            }
            Scope::Product(p) => {
                view.products.insert(p, s.mode);
            }
        }
    }
    Ok(view)
}

/// Sets `scope` to `mode`, whatever it says now. Returns the change with its revision and
/// audit id.
pub async fn set(
    pool: &MySqlPool,
    changer: &Changer,
    scope: Scope,
    mode: Mode,
    reason: &str,
) -> Result<Change, SwitchError> {
    if reason.trim().is_empty() {
        return Err(SwitchError::NoReason);
    }
    let mut tx = pool.begin().await.step("beginning a transaction (set)")?;
    lock_head(&mut tx).await?;
    let change = write_change(&mut tx, changer, scope, mode, reason).await?;
    tx.commit().await.step("committing (set)")?;
    Ok(change)
}

/// Sets `scope` to `mode` only if its row still carries revision `expected` (a
/// compare-and-set): a change made meanwhile by someone else is left as it is, and
/// reported as [`SwitchError::ChangedMeanwhile`].
pub async fn set_if(
    pool: &MySqlPool,
    changer: &Changer,
    scope: Scope,
    mode: Mode,
    reason: &str,
    expected: u64,
) -> Result<Change, SwitchError> {
    if reason.trim().is_empty() {
        return Err(SwitchError::NoReason);
    }
    let mut tx = pool.begin().await.step("beginning a transaction (set if)")?;
    lock_head(&mut tx).await?;
    // The head lock serialises changes, so the row cannot move between this read and the
    // write below.
    let now: Option<(u64, String, String)> = sqlx::query_as(
        "SELECT revision, CAST(mode AS CHAR), changed_by FROM degrade_switch WHERE scope = ? FOR UPDATE",
    )
    .bind(scope.key())
    .fetch_optional(&mut *tx)
    .await
    .step("locking degrade_switch (set if)")?;
    let (revision, found_mode, changed_by) = now.unwrap_or((0, Mode::Normal.as_str().into(), String::new()));
    if revision != expected {
        tx.rollback().await.step("rolling back (set if)")?;
        let found_mode =
            found_mode.parse().map_err(|e: super::mode::UnknownMode| SwitchError::Corrupt(e.to_string()))?;
        return Err(SwitchError::ChangedMeanwhile { scope, expected, found: revision, mode: found_mode, changed_by });
    }
    let change = write_change(&mut tx, changer, scope, mode, reason).await?;
    tx.commit().await.step("committing (set if)")?;
    Ok(change)
}

/// Takes the `switch_head` row: from here until commit no other change can take a revision.
async fn lock_head(tx: &mut sqlx::MySqlConnection) -> Result<(), SwitchError> {
    let head: Option<u64> = sqlx::query_scalar("SELECT revision FROM switch_head WHERE id = 1 FOR UPDATE")
        .fetch_optional(&mut *tx)
        .await
        .step("locking switch_head (lock head)")?;
    // Without the row, FOR UPDATE would take only gap locks, which do not exclude each other:
    // changes would silently stop being serialised.
    head.map(|_| ()).ok_or_else(|| SwitchError::Corrupt("the switch_head row (id 1) is missing".into()))
}

/// An engine's breaker tripped: put its home in DB mode (the whole sale for a sale's engine,
/// only its rig for a drill's), unless it already is (or is paused). Several engines
/// tripping at once write one change, not one each. `None`: the switch already said so.
pub async fn escalate_breaker(
    pool: &MySqlPool,
    home: Home,
    instance_id: &str,
    why: &str,
) -> Result<Option<Change>, SwitchError> {
    let scope = home.scope();
    let mut tx = pool.begin().await.step("beginning a transaction (escalate breaker)")?;
    // The head lock serialises escalations with each other and with every other change, so
    // two engines tripping at once write one change.
    lock_head(&mut tx).await?;
    let current: Option<String> =
        sqlx::query_scalar("SELECT CAST(mode AS CHAR) FROM degrade_switch WHERE scope = ? FOR UPDATE")
            .bind(scope.key())
            .fetch_optional(&mut *tx)
            .await
            .step("locking degrade_switch (escalate breaker)")?;
    if current.as_deref().is_some_and(|m| m != "NORMAL") {
        tx.rollback().await.step("rolling back (escalate breaker)")?;
        return Ok(None);
    }
    let reason = format!("circuit breaker of {instance_id} tripped: {why}");
    let change = write_change(&mut tx, &Changer::breaker(instance_id), scope, Mode::Degraded, &reason).await?;
    tx.commit().await.step("committing (escalate breaker)")?;
    Ok(Some(change))
}

async fn write_change(
    tx: &mut sqlx::MySqlConnection,
    changer: &Changer,
    scope: Scope,
    mode: Mode,
    reason: &str,
) -> Result<Change, SwitchError> {
    let key = scope.key();
    // The caller holds the head lock (see `lock_head`).
    let revision = sqlx::query("INSERT INTO switch_changes (scope, mode, changed_by, reason) VALUES (?, ?, ?, ?)")
        .bind(&key)
        .bind(mode.as_str())
        .bind(&changer.actor)
        .bind(reason)
        .execute(&mut *tx)
        .await
        .step("inserting into switch_changes (write change)")?
        .last_insert_id();
    sqlx::query("UPDATE switch_head SET revision = ? WHERE id = 1")
        .bind(revision)
        .execute(&mut *tx)
        .await
        .step("updating switch_head (write change)")?;
    let changed_at: NaiveDateTime = sqlx::query_scalar("SELECT changed_at FROM switch_changes WHERE revision = ?")
        .bind(revision)
        .fetch_one(&mut *tx)
        .await
        .step("reading switch_changes (write change)")?;
    // Changes commit in revision order (the head lock), so the new revision is always the
    // higher; the guard stays as a second line. Assignments run left to right, so
    // `revision` is compared before it moves. New values are bound again rather than read
    // with `VALUES(col)` (deprecated by MySQL 8.0.20+; MariaDB has no row alias instead).
    sqlx::query(
        "INSERT INTO degrade_switch (scope, product_id, mode, revision, changed_by, reason, changed_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE \
         mode = IF(? > revision, ?, mode), \
         changed_by = IF(? > revision, ?, changed_by), \
         reason = IF(? > revision, ?, reason), \
         changed_at = IF(? > revision, ?, changed_at), \
         revision = GREATEST(revision, ?)",
    )
    .bind(&key)
    .bind(scope.product_id())
    .bind(mode.as_str())
    .bind(revision)
    .bind(&changer.actor)
    .bind(reason)
    .bind(changed_at)
    .bind(revision)
    .bind(mode.as_str())
    .bind(revision)
    .bind(&changer.actor)
    .bind(revision)
    .bind(reason)
    .bind(revision)
    .bind(changed_at)
    .bind(revision)
    .execute(&mut *tx)
    .await
    .step("inserting into degrade_switch (write change)")?;
    let entry = AuditEntry {
        actor: changer.actor.clone(),
        role: changer.role.clone(),
        environment: changer.environment.clone(),
        action: "degrade.switch".into(),
        target: key,
        reason: reason.into(),
        outcome: mode.as_str().into(),
        details: serde_json::json!({ "revision": revision, "mode": mode.as_str() }),
    };
    let audit_id = audit::record(&mut *tx, &entry).await.step("writing the audit row (write change)")?;
    Ok(Change { revision, scope, mode, changed_by: changer.actor.clone(), reason: reason.into(), changed_at, audit_id })
}
