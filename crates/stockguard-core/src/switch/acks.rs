//! Heartbeats and acknowledgements: which engine instances applied which revision, and how
//! long it took.
//!
//! Every time here is the DB server's clock (`NOW(3)`), the same clock that stamped the
//! change, so propagation times do not depend on the engines' clocks agreeing. An engine
//! writes its heartbeat right after applying a revision, so `applied_at` is an upper bound
//! on when it applied it, late by at most one heartbeat write.

use std::time::Duration;

use crate::step::Step as _;
use chrono::NaiveDateTime;
use serde::Serialize;
use sqlx::MySqlPool;

use super::mode::{Mode, Scope};
use super::SwitchError;
use crate::guarantee::Guarantee;

/// A heartbeat's content.
#[derive(Debug, Clone)]
pub struct Heartbeat {
    pub instance_id: String,
    pub listen_addr: String,
    /// The switch row of the products it sells ([`super::Home::scope`]).
    pub home: Scope,
    pub started_at: NaiveDateTime,
    pub applied_revision: u64,
    pub effective_mode: Mode,
    pub breaker: BreakerReport,
    /// What its ACCEPTED answers survive now (`None`: it does not say).
    pub accepted_guarantee: Option<Guarantee>,
}

/// The breaker as a heartbeat reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakerReport {
    /// `CLOSED` (using Redis), `OPEN` (tripped, Redis still failing), `HALF_OPEN` (tripped,
    /// Redis answering again: waiting for the guided exit).
    pub state: &'static str,
    pub reason: Option<String>,
    pub tripped_at: Option<NaiveDateTime>,
}

/// Writes (or rewrites) the instance's row. `applied_at` moves only when the applied
/// revision does.
pub async fn write_heartbeat(pool: &MySqlPool, hb: &Heartbeat) -> Result<(), SwitchError> {
    // Assignments run left to right: `applied_at` compares against the old revision. The new
    // values are bound again rather than read with `VALUES(col)`, which MySQL 8.0.20+
    // deprecates and whose replacement (a row alias) MariaDB does not accept.
    sqlx::query(
        "INSERT INTO engine_heartbeats (instance_id, listen_addr, started_at, last_seen, applied_revision, applied_at, \
         effective_mode, breaker_state, breaker_reason, breaker_tripped_at, home, accepted_guarantee) \
         VALUES (?, ?, ?, NOW(3), ?, NOW(3), ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE \
         applied_at = IF(applied_revision <> ? OR started_at <> ?, NOW(3), applied_at), \
         listen_addr = ?, started_at = ?, last_seen = NOW(3), applied_revision = ?, effective_mode = ?, \
         breaker_state = ?, breaker_reason = ?, breaker_tripped_at = ?, home = ?, accepted_guarantee = ?",
    )
    .bind(&hb.instance_id)
    .bind(&hb.listen_addr)
    .bind(hb.started_at)
    .bind(hb.applied_revision)
    .bind(hb.effective_mode.as_str())
    .bind(hb.breaker.state)
    .bind(&hb.breaker.reason)
    .bind(hb.breaker.tripped_at)
    .bind(hb.home.key())
    .bind(hb.accepted_guarantee.map(Guarantee::as_str))
    .bind(hb.applied_revision)
    .bind(hb.started_at)
    .bind(&hb.listen_addr)
    .bind(hb.started_at)
    .bind(hb.applied_revision)
    .bind(hb.effective_mode.as_str())
    .bind(hb.breaker.state)
    .bind(&hb.breaker.reason)
    .bind(hb.breaker.tripped_at)
    .bind(hb.home.key())
    .bind(hb.accepted_guarantee.map(Guarantee::as_str))
    .execute(pool)
    .await.step("inserting into engine_heartbeats (write heartbeat)")?;
    Ok(())
}

/// One instance as the console shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InstanceAck {
    pub instance_id: String,
    pub listen_addr: String,
    /// The switch row of the products it sells: `global` (the sale's) or `rig:<run id>`.
    pub home: Scope,
    /// Milliseconds since its last heartbeat.
    pub heartbeat_age_ms: i64,
    /// False when the heartbeat is stale: shown, not counted.
    pub live: bool,
    pub applied_revision: u64,
    pub applied: bool,
    pub effective_mode: Mode,
    pub breaker_state: String,
    pub breaker_reason: Option<String>,
    /// What its ACCEPTED answers survive, as its last heartbeat said (`None`: an engine that
    /// does not say, or a word this console does not know).
    pub accepted_guarantee: Option<Guarantee>,
    /// Change to application, for an instance that applied exactly this revision (an
    /// instance already on a newer one applied this one no later than that, not measured).
    pub propagation_ms: Option<i64>,
}

/// "Applied by k of n live instances in N ms" for one revision.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Acknowledgement {
    pub revision: u64,
    pub changed_at: Option<NaiveDateTime>,
    pub live: usize,
    pub applied: usize,
    /// Every live instance applied it (and there is at least one).
    pub complete: bool,
    /// The slowest measured live instance.
    pub propagation_ms: Option<i64>,
    pub instances: Vec<InstanceAck>,
}

type AckRow = (String, String, String, i64, u64, Option<i64>, String, String, Option<String>, Option<String>);

/// Where every known instance stands on `revision`. Instances silent for longer than
/// `stale_after` are listed as not live.
pub async fn acknowledgement(
    pool: &MySqlPool,
    revision: u64,
    stale_after: Duration,
) -> Result<Acknowledgement, SwitchError> {
    let changed_at: Option<NaiveDateTime> =
        sqlx::query_scalar("SELECT changed_at FROM switch_changes WHERE revision = ?")
            .bind(revision)
            .fetch_optional(pool)
            .await
            .step("reading switch_changes (acknowledgement)")?;
    let rows: Vec<AckRow> = sqlx::query_as(
        "SELECT instance_id, listen_addr, home, CAST(TIMESTAMPDIFF(MICROSECOND, last_seen, NOW(3)) AS SIGNED), \
         applied_revision, \
         CAST(TIMESTAMPDIFF(MICROSECOND, (SELECT changed_at FROM switch_changes WHERE revision = ?), applied_at) AS SIGNED), \
         CAST(effective_mode AS CHAR), CAST(breaker_state AS CHAR), breaker_reason, accepted_guarantee \
         FROM engine_heartbeats ORDER BY instance_id",
    )
    .bind(revision)
    .fetch_all(pool)
    .await.step("reading switch_changes (acknowledgement)")?;
    let stale_us = stale_after.as_micros() as i64;
    let mut instances = Vec::with_capacity(rows.len());
    for (
        instance_id,
        listen_addr,
        home,
        age_us,
        applied_revision,
        since_change_us,
        mode,
        breaker_state,
        breaker_reason,
        guarantee,
    ) in rows
    {
        let effective_mode = mode.parse().map_err(|e: super::mode::UnknownMode| SwitchError::Corrupt(e.to_string()))?;
        let home = home.parse().map_err(|e: super::mode::UnknownScope| SwitchError::Corrupt(e.to_string()))?;
        instances.push(InstanceAck {
            instance_id,
            listen_addr,
            home,
            heartbeat_age_ms: age_us / 1000,
            live: age_us <= stale_us,
            applied_revision,
            applied: applied_revision >= revision,
            effective_mode,
            breaker_state,
            breaker_reason,
            accepted_guarantee: guarantee.and_then(|g| g.parse().ok()),
            propagation_ms: (applied_revision == revision)
                .then_some(since_change_us)
                .flatten()
                .map(|us| us.max(0) / 1000),
        });
    }
    Ok(Acknowledgement::of(revision, changed_at, instances))
}

impl Acknowledgement {
    fn of(revision: u64, changed_at: Option<NaiveDateTime>, instances: Vec<InstanceAck>) -> Self {
        let live = instances.iter().filter(|i| i.live).count();
        let applied = instances.iter().filter(|i| i.live && i.applied).count();
        let propagation_ms = instances.iter().filter(|i| i.live).filter_map(|i| i.propagation_ms).max();
        Self { revision, changed_at, live, applied, complete: live > 0 && applied == live, propagation_ms, instances }
    }

    /// The same acknowledgement counted over the instances `keep` says are concerned (the
    /// engines that sell what a change of one home's row touches): a drill's engines never
    /// hold up the sale's exit, nor the sale's a drill's.
    pub fn among(self, keep: &(dyn Fn(&InstanceAck) -> bool + Sync)) -> Self {
        let instances = self.instances.into_iter().filter(|i| keep(i)).collect();
        Self::of(self.revision, self.changed_at, instances)
    }
}

/// Waits until every live instance applied `revision`, or `timeout`; returns the last
/// acknowledgement either way (the caller reads `complete`). `progress` sees each poll.
pub async fn wait_applied(
    pool: &MySqlPool,
    revision: u64,
    stale_after: Duration,
    timeout: Duration,
    progress: &(dyn Fn(&Acknowledgement) + Sync),
) -> Result<Acknowledgement, SwitchError> {
    wait_applied_among(pool, revision, stale_after, timeout, &|_| true, progress).await
}

/// [`wait_applied`] counted over the instances `concerned` keeps ([`Acknowledgement::among`]).
pub async fn wait_applied_among(
    pool: &MySqlPool,
    revision: u64,
    stale_after: Duration,
    timeout: Duration,
    concerned: &(dyn Fn(&InstanceAck) -> bool + Sync),
    progress: &(dyn Fn(&Acknowledgement) + Sync),
) -> Result<Acknowledgement, SwitchError> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let ack = acknowledgement(pool, revision, stale_after).await?.among(concerned);
        progress(&ack);
        if ack.complete || tokio::time::Instant::now() >= deadline {
            return Ok(ack);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
