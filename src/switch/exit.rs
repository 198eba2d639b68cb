//! The guided exit from DB mode (contract section 5): back to Redis without losing a sale
//! made through the DB and without accepting an order the DB will refuse.
//!
//! 1. Check: Redis answers, and no live engine's breaker still fails to reach it.
//! 2. Pause the scope (`PAUSED`) and wait until every live instance applied it: from here
//!    nothing sells, so the DB stops moving under the rebuild.
//! 3. Wait until every reservation still in flight in Redis is persisted.
//! 4. Rebuild per-user counts ([`super::buyers`]) and Redis stock (the fenced rewrite, one
//!    per product, each audited) from the DB.
//! 5. `NORMAL`, and wait until every live instance applied it (tripped breakers close).
//! 6. Verify: an exact reading of every product in scope.
//!
//! Any failure after step 2 puts the scope back to `DEGRADED` (sales continue through the DB)
//! and reports what failed. Sales stop only between 2 and 5; the report says for how long.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::acks::{self, Acknowledgement};
use super::mode::{Mode, Scope};
use super::store::{self, Changer};
use super::{buyers, SwitchError};
use crate::audit::{self, AuditEntry};
use crate::connect::Connections;
use crate::profile::EnvironmentKind;
use crate::recon::{read_products, reading::product_ids, Reading};
use crate::rewrite::{self, Outcome, RewriteRequest, RewriteResult};

#[derive(Debug, Clone)]
pub struct ExitOptions {
    pub scope: Scope,
    pub reason: String,
    /// On production: the scope typed again (`global` or `product:<id>`).
    pub confirm: Option<String>,
    /// How long instances may take to apply a change.
    pub ack_timeout: Duration,
    /// How long in-flight reservations may take to be persisted.
    pub drain_timeout: Duration,
    /// A heartbeat older than this is not a live instance.
    pub stale_after: Duration,
}

impl ExitOptions {
    pub fn new(scope: Scope, reason: &str) -> Self {
        Self {
            scope,
            reason: reason.into(),
            confirm: None,
            ack_timeout: Duration::from_secs(5),
            drain_timeout: Duration::from_secs(15),
            stale_after: DEFAULT_STALE_AFTER,
        }
    }
}

/// A heartbeat older than this is not a live instance (engines beat twice a second).
pub const DEFAULT_STALE_AFTER: Duration = Duration::from_secs(3);

/// What the user sees as the exit goes.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum ExitStep {
    Checked { products: usize, live_instances: usize },
    Paused { revision: u64, ack: Acknowledgement },
    Drained { inflight_left: i64 },
    Rebuilt { product_id: u64, buyers: usize, outcome: Outcome, delta: i64 },
    Resumed { revision: u64, ack: Acknowledgement },
    Verified { products: usize, drifting: Vec<u64> },
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExitReport {
    pub scope: Scope,
    pub pause_revision: u64,
    pub normal_revision: u64,
    /// From the pause being written to every instance having applied NORMAL.
    pub paused_ms: u64,
    pub rewrites: Vec<RewriteResult>,
    pub buyers_rebuilt: usize,
    pub resume: Acknowledgement,
    /// Live instances that applied NORMAL but are not back on Redis (their breaker has not
    /// seen Redis healthy yet); they hold sales (PAUSED) rather than sell through the DB.
    pub not_back_on_redis: Vec<String>,
    /// Exact readings, after the exit, of the products whose drift is not 0.
    pub drifting_after: Vec<Reading>,
    pub audit_id: u64,
}

/// Runs the guided exit. `progress` sees each step.
pub async fn guided_exit(
    conns: &Connections,
    opts: &ExitOptions,
    progress: &(dyn Fn(&ExitStep) + Sync),
) -> Result<ExitReport, SwitchError> {
    let changer = Changer::person(&conns.settings)?;
    if opts.reason.trim().is_empty() {
        return Err(SwitchError::NoReason);
    }
    if conns.settings.environment == EnvironmentKind::Production && opts.confirm.as_deref() != Some(&opts.scope.key()) {
        return Err(SwitchError::ConfirmationRequired(opts.scope.key()));
    }
    let products = match opts.scope {
        // A product held in DB mode by its own row stays there (and keeps selling through
        // the DB), so rebuilding its Redis stock now would be stale at once: it leaves with
        // its own exit.
        Scope::Global => {
            let held: Vec<u64> = store::scopes(&conns.mysql)
                .await?
                .into_iter()
                .filter_map(|s| s.scope.product_id().filter(|_| s.mode != Mode::Normal))
                .collect();
            product_ids(&conns.mysql).await?.into_iter().filter(|p| !held.contains(p)).collect()
        }
        Scope::Product(p) => vec![p],
    };
    // 1. Redis must answer us, and every live engine must reach it again.
    let mut redis = conns.redis.clone();
    redis::cmd("PING").query_async::<String>(&mut redis).await.map_err(SwitchError::RedisUnreachable)?;
    let now = acks::acknowledgement(&conns.mysql, 0, opts.stale_after).await?;
    let failing: Vec<String> =
        now.instances.iter().filter(|i| i.live && i.breaker_state == "OPEN").map(|i| i.instance_id.clone()).collect();
    if !failing.is_empty() {
        return Err(SwitchError::InstancesCannotReachRedis(failing));
    }
    progress(&ExitStep::Checked { products: products.len(), live_instances: now.live });

    // 2. Pause.
    let started = Instant::now();
    let pause =
        store::set(&conns.mysql, &changer, opts.scope, Mode::Paused, &format!("guided exit: {}", opts.reason)).await?;
    let result = rebuild_and_resume(conns, opts, &changer, &products, pause.revision, progress).await;
    let (rewrites, buyers_rebuilt, normal, resume) = match result {
        Ok(done) => done,
        Err(e) => {
            let why = format!("guided exit aborted, back to DB mode: {e}");
            let back = store::set(&conns.mysql, &changer, opts.scope, Mode::Degraded, &why).await;
            audit_exit(conns, opts, "ABORTED", serde_json::json!({ "error": e.to_string() })).await?;
            back?;
            return Err(e);
        }
    };
    let paused_ms = started.elapsed().as_millis() as u64;
    let not_back_on_redis = resume
        .instances
        .iter()
        .filter(|i| i.live && i.effective_mode != Mode::Normal)
        .map(|i| i.instance_id.clone())
        .collect();

    // 6. Verify.
    let mut redis = conns.redis.clone();
    let readings = read_products(&conns.mysql, &mut redis, &conns.keys, &products).await?;
    let total = readings.len();
    let drifting_after: Vec<Reading> = readings.into_iter().filter(|r| r.drift != Some(0)).collect();
    let drifting: Vec<u64> = drifting_after.iter().map(|r| r.product_id).collect();
    progress(&ExitStep::Verified { products: total, drifting: drifting.clone() });
    let details = serde_json::json!({
        "pause_revision": pause.revision,
        "normal_revision": normal,
        "paused_ms": paused_ms,
        "products": products.len(),
        "buyers_rebuilt": buyers_rebuilt,
        "drifting_after": drifting,
        "propagation_ms": resume.propagation_ms,
    });
    let audit_id = audit_exit(conns, opts, "COMPLETED", details).await?;
    Ok(ExitReport {
        scope: opts.scope,
        pause_revision: pause.revision,
        normal_revision: normal,
        paused_ms,
        rewrites,
        buyers_rebuilt,
        resume,
        not_back_on_redis,
        drifting_after,
        audit_id,
    })
}

type Rebuilt = (Vec<RewriteResult>, usize, u64, Acknowledgement);

/// Steps 2 (waiting) to 5.
async fn rebuild_and_resume(
    conns: &Connections,
    opts: &ExitOptions,
    changer: &Changer,
    products: &[u64],
    pause_revision: u64,
    progress: &(dyn Fn(&ExitStep) + Sync),
) -> Result<Rebuilt, SwitchError> {
    let ack = acks::wait_applied(&conns.mysql, pause_revision, opts.stale_after, opts.ack_timeout, &|_| {}).await?;
    if !ack.complete && ack.live > 0 {
        return Err(SwitchError::NotAcknowledged { revision: pause_revision, applied: ack.applied, live: ack.live });
    }
    progress(&ExitStep::Paused { revision: pause_revision, ack });

    // 3. Drain.
    let mut redis = conns.redis.clone();
    let deadline = Instant::now() + opts.drain_timeout;
    loop {
        let mut pipe = redis::pipe();
        for &p in products {
            pipe.hlen(conns.keys.inflight(p));
        }
        let left: Vec<i64> = pipe.query_async(&mut redis).await?;
        let left: i64 = left.iter().sum();
        if left == 0 {
            progress(&ExitStep::Drained { inflight_left: 0 });
            break;
        }
        if Instant::now() >= deadline {
            return Err(SwitchError::NotDrained(left));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // 4. Rebuild per-user counts and stock. Sales are paused for as long as this takes, so
    // products are rebuilt REBUILD_PARALLELISM at a time (each has its own lock and fence).
    let reason = format!("guided exit from DB mode: {}", opts.reason);
    let mut pending = products.iter().copied();
    let mut running = tokio::task::JoinSet::new();
    let mut rewrites = Vec::with_capacity(products.len());
    let mut buyers_rebuilt = 0;
    loop {
        while running.len() < REBUILD_PARALLELISM {
            let Some(p) = pending.next() else { break };
            let (conns, reason) = (conns.clone(), reason.clone());
            running.spawn(async move { (p, rebuild_product(&conns, p, &reason).await) });
        }
        let Some(joined) = running.join_next().await else { break };
        let (p, rebuilt) = joined.map_err(|e| SwitchError::Corrupt(format!("a rebuild task failed: {e}")))?;
        let (users, result) = rebuilt?;
        if !matches!(result.outcome, Outcome::Applied | Outcome::Rebuilt | Outcome::Noop) {
            return Err(SwitchError::RewriteNotClean(p, result.outcome));
        }
        buyers_rebuilt += users;
        progress(&ExitStep::Rebuilt { product_id: p, buyers: users, outcome: result.outcome, delta: result.delta });
        rewrites.push(result);
    }
    rewrites.sort_by_key(|r| r.product_id);

    // 5. Resume.
    let normal = store::set(&conns.mysql, changer, opts.scope, Mode::Normal, &reason).await?;
    let ack = wait_normal(conns, opts, normal.revision).await?;
    progress(&ExitStep::Resumed { revision: normal.revision, ack: ack.clone() });
    Ok((rewrites, buyers_rebuilt, normal.revision, ack))
}

/// Products rebuilt at once during the pause.
const REBUILD_PARALLELISM: usize = 8;

/// One product's per-user counts, then its stock by the fenced rewrite.
async fn rebuild_product(conns: &Connections, p: u64, reason: &str) -> Result<(usize, RewriteResult), SwitchError> {
    let mut redis = conns.redis.clone();
    let users = buyers::rebuild(&conns.mysql, &mut redis, &conns.keys, p).await?;
    let req = RewriteRequest { confirm: Some(p), ..RewriteRequest::new(p, reason) };
    let result = rewrite::rewrite(conns, &req).await.map_err(|e| SwitchError::Rewrite(p, Box::new(e)))?;
    Ok((users, result))
}

/// Waits until every live instance applied `revision` and reports NORMAL (tripped breakers
/// close a heartbeat after applying it), or the timeout; NORMAL is written either way.
async fn wait_normal(conns: &Connections, opts: &ExitOptions, revision: u64) -> Result<Acknowledgement, SwitchError> {
    let deadline = Instant::now() + opts.ack_timeout;
    loop {
        let ack = acks::acknowledgement(&conns.mysql, revision, opts.stale_after).await?;
        let normal = ack.instances.iter().filter(|i| i.live).all(|i| i.effective_mode == Mode::Normal);
        if (ack.complete && normal) || ack.live == 0 || Instant::now() >= deadline {
            return Ok(ack);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn audit_exit(
    conns: &Connections,
    opts: &ExitOptions,
    outcome: &str,
    details: serde_json::Value,
) -> Result<u64, SwitchError> {
    let entry = AuditEntry::by(&conns.settings, "degrade.exit", &opts.scope.key(), &opts.reason, outcome, details);
    Ok(audit::record(&conns.mysql, &entry).await?)
}
