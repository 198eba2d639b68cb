//! The guided exit from DB mode (contract section 5): back to Redis without losing a sale
//! made through the DB and without accepting an order the DB will refuse.
//!
//! 1. Check: Redis answers, and no live engine's breaker still fails to reach it.
//! 2. Pause the scope (`PAUSED`, a compare-and-set on the scope's revision) and wait until
//!    every live instance applied it. The pause is a barrier in the DB itself: a DB-path order
//!    reads its scopes' switch rows with a shared lock as its first statement and sells only
//!    if they say DEGRADED, and the pause's write takes the row exclusively. So the pause
//!    commits only after every DB-path order already past its check has committed (however
//!    stale its instance's heartbeat), and every later one is refused. From here nothing
//!    sells, so the DB stops moving under the rebuild.
//! 3. Wait until every reservation still in flight in Redis is persisted.
//! 4. Rebuild per-user counts ([`super::buyers`]), the idempotency hash for orders sold
//!    through the DB ([`super::idem`]) and Redis stock (the fenced rewrite, one per product,
//!    each audited) from the DB. Sales wait for this step, so it goes a chunk of products
//!    at a time (500, two chunks at once), a round trip per step and chunk
//!    ([`RebuildPath::Batched`], [`crate::rewrite::batch`]): 5,000 products in about half a
//!    second instead of ten or more (`stockguard bench exit`).
//! 5. `NORMAL`, as a compare-and-set on the pause's revision, and wait until every live
//!    instance applied it (tripped breakers close).
//! 6. Verify: an exact reading of every product in scope; drift is a failure.
//!
//! Any failure after step 2 puts the scope back to `DEGRADED` (sales continue through the DB)
//! as a compare-and-set on the revision the exit wrote last: if someone changed the scope
//! meanwhile, their change stands and the error says so ([`ScopeLeft`]). Sales stop only
//! between 2 and 5; the report says for how long.

use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde::Serialize;
use tracing::{info_span, Instrument as _};

use super::acks::{self, Acknowledgement, InstanceAck};
use super::mode::{Home, Mode, Scope};
use super::store::{self, Changer};
use super::{buyers, idem, SwitchError};
use crate::audit::{self, AuditEntry};
use crate::catalog;
use crate::connect::Connections;
use crate::profile::EnvironmentKind;
use crate::recon::read_products;
use crate::redis_link::per_product;
use crate::rewrite::{self, Outcome, RewriteRequest, RewriteResult};
use crate::step::Step as _;

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
    /// How Redis is rebuilt while sales are paused.
    pub rebuild: RebuildPath,
}

/// How the exit rebuilds Redis while sales are paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebuildPath {
    /// `chunk` products per round trip of each step (counts, idempotency entries, the fenced
    /// rewrite in a batch: each product still its own lock, token and audit rows).
    Batched { chunk: usize },
    /// One product at a time, [`REBUILD_PARALLELISM`] at once, a dozen round trips each: the
    /// path before issue 16, kept so that `stockguard bench exit` measures both in one run.
    PerProduct,
}

/// Products per batch. `bench exit` found 500 (two batches at once) shorter than 1,000 or 250
/// at 5,000 products: a Redis pipeline of a batch takes a few milliseconds, and a second
/// batch's steps fill the first one's round trips.
pub const REBUILD_CHUNK: usize = 500;

impl ExitOptions {
    pub fn new(scope: Scope, reason: &str) -> Self {
        Self {
            scope,
            reason: reason.into(),
            confirm: None,
            ack_timeout: Duration::from_secs(5),
            drain_timeout: Duration::from_secs(15),
            stale_after: DEFAULT_STALE_AFTER,
            rebuild: RebuildPath::Batched { chunk: REBUILD_CHUNK },
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
    Verified { products: usize, drifting: Vec<crate::product_id::ProductId> },
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
    pub audit_id: u64,
}

/// A product the exit's verification found drifting (`None`: no exact reading).
#[derive(Debug, Clone, Serialize)]
pub struct ProductDrift {
    pub product_id: crate::product_id::ProductId,
    pub drift: Option<i64>,
}

/// Where a failed exit left its scope.
#[derive(Debug)]
pub enum ScopeLeft {
    /// Back in DB mode at this revision: sales continue through the DB.
    BackInDbMode { revision: u64 },
    /// Someone changed the scope meanwhile; their change stands.
    ChangedMeanwhile { revision: u64, mode: Mode, changed_by: String },
    /// Going back to DB mode failed too: the scope may still be PAUSED (no sales). Set it by
    /// hand (`stockguard degrade on`).
    NotRestored(Box<SwitchError>),
}

impl std::fmt::Display for ScopeLeft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BackInDbMode { revision } => write!(f, "back in DB mode (revision {revision})"),
            Self::ChangedMeanwhile { revision, mode, changed_by } => {
                write!(
                    f,
                    "the scope was changed meanwhile to {mode} (revision {revision} by {changed_by:?}); left as it is"
                )
            }
            Self::NotRestored(e) => write!(f, "could not go back to DB mode ({e}); the scope may still be PAUSED"),
        }
    }
}

/// Runs the guided exit. `progress` sees each step. One span for the exit, one within it per
/// step (and per product rebuilt).
#[tracing::instrument(name = "guided_exit", skip_all, fields(scope = %opts.scope))]
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
    let products = in_scope(conns, opts.scope).await?;
    // The engines that sell what this exit rebuilds: only their breakers, acknowledgements
    // and modes count (a drill's engine, stopped by its drill, never holds up the sale's exit).
    let home = home_of(conns, opts.scope).await?;
    let concerned = |i: &InstanceAck| i.home == home;
    // 1. Redis must answer us, and every live engine must reach it again.
    let live = async {
        let mut redis = conns.redis.clone();
        redis::cmd("PING").query_async::<String>(&mut redis).await.map_err(SwitchError::RedisUnreachable)?;
        let now = acks::acknowledgement(&conns.mysql, 0, opts.stale_after).await?;
        let failing: Vec<String> = now
            .instances
            .iter()
            .filter(|i| i.live && i.breaker_state == "OPEN" && concerned(i))
            .map(|i| i.instance_id.clone())
            .collect();
        if !failing.is_empty() {
            return Err(SwitchError::InstancesCannotReachRedis(failing));
        }
        Ok(now.live)
    }
    .instrument(info_span!("check"))
    .await?;
    progress(&ExitStep::Checked { products: products.len(), live_instances: live });

    // 2. Pause, on the revision the scope was read at: a change made since is not ours to
    // pause over.
    let started = Instant::now();
    let pause = async {
        let before =
            store::scopes(&conns.mysql).await?.into_iter().find(|s| s.scope == opts.scope).map_or(0, |s| s.revision);
        let why = format!("guided exit: {}", opts.reason);
        store::set_if(&conns.mysql, &changer, opts.scope, Mode::Paused, &why, before).await
    }
    .instrument(info_span!("pause"))
    .await?;
    // The revision the exit wrote last: a step back to DB mode is a compare-and-set on it.
    let mut written = pause.revision;
    let done = match rebuild_and_resume(conns, opts, &changer, &products, &concerned, &mut written, progress).await {
        Ok(done) => done,
        Err(e) => return Err(abort(conns, opts, &changer, written, e).await),
    };
    let paused_ms = started.elapsed().as_millis() as u64;
    let not_back_on_redis = done
        .resume
        .instances
        .iter()
        .filter(|i| i.live && i.effective_mode != Mode::Normal && concerned(i))
        .map(|i| i.instance_id.clone())
        .collect();

    // 6. Verify. Drift now means Redis would sell what the DB does not have (or refuse what
    // it has): a failure, back to DB mode.
    let mut redis = conns.redis.clone();
    let verify = read_products(&conns.mysql, &mut redis, &conns.keys, &products).instrument(info_span!("verify"));
    let readings = match verify.await {
        Ok(readings) => readings,
        Err(e) => return Err(abort(conns, opts, &changer, written, e.into()).await),
    };
    let drifting: Vec<ProductDrift> = readings
        .iter()
        .filter(|r| r.drift != Some(0))
        .map(|r| ProductDrift { product_id: r.product_id.clone(), drift: r.drift })
        .collect();
    progress(&ExitStep::Verified {
        products: readings.len(),
        drifting: drifting.iter().map(|d| d.product_id.clone()).collect(),
    });
    if !drifting.is_empty() {
        return Err(abort(conns, opts, &changer, written, SwitchError::DriftAfterExit(drifting)).await);
    }
    let details = serde_json::json!({
        "pause_revision": pause.revision,
        "normal_revision": written,
        "paused_ms": paused_ms,
        "products": products.len(),
        "buyers_rebuilt": done.buyers_rebuilt,
        "idempotency_rebuilt": done.idempotency_rebuilt,
        "propagation_ms": done.resume.propagation_ms,
    });
    let audit_id = audit_exit(conns, opts, "COMPLETED", details).await?;
    tracing::info!(pause_revision = pause.revision, normal_revision = written, paused_ms, "guided exit completed");
    Ok(ExitReport {
        scope: opts.scope,
        pause_revision: pause.revision,
        normal_revision: written,
        paused_ms,
        rewrites: done.rewrites,
        buyers_rebuilt: done.buyers_rebuilt,
        resume: done.resume,
        not_back_on_redis,
        audit_id,
    })
}

/// Back to DB mode after a failure, as a compare-and-set on `written` (the revision the exit
/// wrote last), audited; returns the error to report.
#[tracing::instrument(name = "abort", skip_all, fields(written = written))]
async fn abort(
    conns: &Connections,
    opts: &ExitOptions,
    changer: &Changer,
    written: u64,
    cause: SwitchError,
) -> SwitchError {
    let why = format!("guided exit aborted, back to DB mode: {cause}");
    let left = match store::set_if(&conns.mysql, changer, opts.scope, Mode::Degraded, &why, written).await {
        Ok(change) => ScopeLeft::BackInDbMode { revision: change.revision },
        Err(SwitchError::ChangedMeanwhile { found, mode, changed_by, .. }) => {
            ScopeLeft::ChangedMeanwhile { revision: found, mode, changed_by }
        }
        Err(e) => ScopeLeft::NotRestored(Box::new(e)),
    };
    tracing::info!(error = %cause, left = %left, "guided exit aborted");
    let details = serde_json::json!({ "error": cause.to_string(), "left": left.to_string() });
    // The switch changes themselves are audited in their own transactions; a failed audit of
    // the exit must not hide why the exit failed.
    if let Err(e) = audit_exit(conns, opts, "ABORTED", details).await {
        tracing::error!(error = %e, "cannot audit the aborted guided exit");
    }
    SwitchError::ExitFailed { cause: Box::new(cause), left }
}

struct Rebuilt {
    rewrites: Vec<RewriteResult>,
    buyers_rebuilt: usize,
    idempotency_rebuilt: usize,
    resume: Acknowledgement,
}

/// Steps 2 (waiting) to 5. `written` holds the pause's revision, and NORMAL's once written.
async fn rebuild_and_resume(
    conns: &Connections,
    opts: &ExitOptions,
    changer: &Changer,
    products: &[u64],
    concerned: &(dyn Fn(&InstanceAck) -> bool + Sync),
    written: &mut u64,
    progress: &(dyn Fn(&ExitStep) + Sync),
) -> Result<Rebuilt, SwitchError> {
    let pause_revision = *written;
    let ack =
        acks::wait_applied_among(&conns.mysql, pause_revision, opts.stale_after, opts.ack_timeout, concerned, &|_| {})
            .instrument(info_span!("pause_applied", revision = pause_revision))
            .await?;
    if !ack.complete && ack.live > 0 {
        return Err(SwitchError::NotAcknowledged { revision: pause_revision, applied: ack.applied, live: ack.live });
    }
    progress(&ExitStep::Paused { revision: pause_revision, ack });

    // 3. Drain.
    drain(conns, products, opts.drain_timeout).instrument(info_span!("drain")).await?;
    progress(&ExitStep::Drained { inflight_left: 0 });

    // 4. Rebuild per-user counts and stock. Sales are paused for as long as this takes.
    let reason = format!("guided exit from DB mode: {}", opts.reason);
    let rebuilt = match opts.rebuild {
        RebuildPath::Batched { chunk } => rebuild_batched(conns, products, chunk.max(1), &reason, progress).await?,
        RebuildPath::PerProduct => rebuild_per_product(conns, products, &reason, progress).await?,
    };
    let RebuildCounts { mut rewrites, buyers_rebuilt, idempotency_rebuilt } = rebuilt;
    rewrites.sort_by_key(|r| r.product_id);

    // 5. Resume, only over our own pause: a `degrade on` (or another exit) written meanwhile
    // stands, and this exit fails.
    let span = info_span!("resume");
    let normal = store::set_if(&conns.mysql, changer, opts.scope, Mode::Normal, &reason, pause_revision)
        .instrument(span.clone())
        .await?;
    *written = normal.revision;
    let resume = wait_normal(conns, opts, normal.revision, concerned).instrument(span).await?;
    progress(&ExitStep::Resumed { revision: normal.revision, ack: resume.clone() });
    Ok(Rebuilt { rewrites, buyers_rebuilt, idempotency_rebuilt, resume })
}

/// Waits until no reservation of `products` is in flight in Redis, or fails after `timeout`.
async fn drain(conns: &Connections, products: &[u64], timeout: Duration) -> Result<(), SwitchError> {
    let redis = conns.redis.clone();
    let deadline = Instant::now() + timeout;
    loop {
        let replies = per_product(&redis, products, |pipe, p| {
            pipe.hlen(conns.keys.inflight(p));
        })
        .await?;
        let left: i64 = replies.iter().flatten().map(redis::from_redis_value::<i64>).sum::<Result<_, _>>()?;
        if left == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(SwitchError::NotDrained(left));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What step 4 rebuilt.
struct RebuildCounts {
    rewrites: Vec<RewriteResult>,
    buyers_rebuilt: usize,
    idempotency_rebuilt: usize,
}

impl RebuildCounts {
    /// Adds one product's rebuild, failing on a rewrite that did not leave Redis rebuilt.
    fn add(
        &mut self,
        (users, replays, result): (usize, usize, RewriteResult),
        progress: &(dyn Fn(&ExitStep) + Sync),
    ) -> Result<(), SwitchError> {
        if !matches!(result.outcome, Outcome::Applied | Outcome::Rebuilt | Outcome::Noop) {
            return Err(SwitchError::RewriteNotClean(result.product_id, result.outcome));
        }
        self.buyers_rebuilt += users;
        self.idempotency_rebuilt += replays;
        progress(&ExitStep::Rebuilt {
            product_id: result.product_id,
            buyers: users,
            outcome: result.outcome,
            delta: result.delta,
        });
        self.rewrites.push(result);
        Ok(())
    }
}

/// Step 4, `chunk` products at a time, [`BATCHES_AT_ONCE`] chunks at once: per chunk, one
/// snapshot and one pipeline for the per-user counts, one query and one pipeline for the
/// idempotency entries, and one batch of fenced rewrites (a round trip per step, not per
/// product and step).
async fn rebuild_batched(
    conns: &Connections,
    products: &[u64],
    chunk: usize,
    reason: &str,
    progress: &(dyn Fn(&ExitStep) + Sync),
) -> Result<RebuildCounts, SwitchError> {
    let mut counts =
        RebuildCounts { rewrites: Vec::with_capacity(products.len()), buyers_rebuilt: 0, idempotency_rebuilt: 0 };
    // The futures are made first (they do nothing until polled): a stream mapping a closure
    // that borrows would not be `Send` for every lifetime, and the exit runs in spawned tasks.
    let parts: Vec<_> = products
        .chunks(chunk)
        .map(|part| {
            let span = info_span!("rebuild_batch", products = part.len(), first = part[0]);
            rebuild_chunk(conns, part, reason).instrument(span)
        })
        .collect();
    let mut chunks = futures_util::stream::iter(parts).buffered(BATCHES_AT_ONCE);
    // On a failure the other batch in flight is dropped where it stands, as in a crash: its
    // locks expire, its runs stay RUNNING until the next rewrite of a product settles them
    // (ABANDONED), and its fences refuse it; the exit goes back to DB mode either way.
    while let Some(rebuilt) = chunks.next().await {
        for product in rebuilt? {
            counts.add(product, progress)?;
        }
    }
    Ok(counts)
}

/// Chunks rebuilt at once by [`RebuildPath::Batched`]: most of a chunk's time is round trips,
/// so a second chunk's fill them.
const BATCHES_AT_ONCE: usize = 2;

/// One chunk's counts, idempotency entries and stock. The three touch different keys and
/// read the DB only, so they run at once.
async fn rebuild_chunk(
    conns: &Connections,
    part: &[u64],
    reason: &str,
) -> Result<Vec<(usize, usize, RewriteResult)>, SwitchError> {
    let requests: Vec<RewriteRequest> =
        part.iter().map(|&p| RewriteRequest { confirm: Some(p), ..RewriteRequest::new(p, reason) }).collect();
    let rewrites = async {
        rewrite::rewrite_batch(conns, &requests).await.map_err(|e| SwitchError::RewriteBatch {
            first: part[0],
            count: part.len(),
            source: Box::new(e),
        })
    };
    let (users, replays, results) = futures_util::try_join!(
        buyers::rebuild_many(&conns.mysql, &conns.redis, &conns.keys, part),
        idem::rebuild_many(&conns.mysql, &conns.redis, &conns.keys, part),
        rewrites,
    )?;
    Ok(users.into_iter().zip(replays).zip(results).map(|((u, r), x)| (u, r, x)).collect())
}

/// Step 4 as it was before issue 16: one product at a time, [`REBUILD_PARALLELISM`] at once.
async fn rebuild_per_product(
    conns: &Connections,
    products: &[u64],
    reason: &str,
    progress: &(dyn Fn(&ExitStep) + Sync),
) -> Result<RebuildCounts, SwitchError> {
    let mut counts =
        RebuildCounts { rewrites: Vec::with_capacity(products.len()), buyers_rebuilt: 0, idempotency_rebuilt: 0 };
    let mut pending = products.iter().copied();
    let mut running = tokio::task::JoinSet::new();
    loop {
        while running.len() < REBUILD_PARALLELISM {
            let Some(p) = pending.next() else { break };
            let (conns, reason) = (conns.clone(), reason.to_string());
            // A task of its own does not inherit the exit's span: it is given one under it.
            let span = info_span!("rebuild", product_id = p);
            running.spawn(async move { rebuild_product(&conns, p, &reason).await }.instrument(span));
        }
        let Some(joined) = running.join_next().await else { break };
        let rebuilt = joined.map_err(|e| SwitchError::Corrupt(format!("a rebuild task failed: {e}")))?;
        counts.add(rebuilt?, progress)?;
    }
    Ok(counts)
}

/// Products rebuilt at once by [`RebuildPath::PerProduct`].
pub const REBUILD_PARALLELISM: usize = 8;

/// One product's per-user counts and idempotency entries, then its stock by the fenced
/// rewrite.
async fn rebuild_product(
    conns: &Connections,
    p: u64,
    reason: &str,
) -> Result<(usize, usize, RewriteResult), SwitchError> {
    let mut redis = conns.redis.clone();
    let users = buyers::rebuild(&conns.mysql, &mut redis, &conns.keys, p).await?;
    let replays = idem::rebuild(&conns.mysql, &mut redis, &conns.keys, p).await?;
    let req = RewriteRequest { confirm: Some(p), ..RewriteRequest::new(p, reason) };
    let result = rewrite::rewrite(conns, &req).await.map_err(|e| SwitchError::Rewrite(p, Box::new(e)))?;
    Ok((users, replays, result))
}

/// The products an exit of `scope` rebuilds: the sale's for the global row, a drill rig's
/// for its row. A product held in DB mode by its own row stays there and keeps selling
/// through the DB, so rebuilding its Redis stock now would be stale at once: it leaves with
/// its own exit.
async fn in_scope(conns: &Connections, scope: Scope) -> Result<Vec<u64>, SwitchError> {
    let home = match scope {
        Scope::Product(p) => return Ok(vec![p]),
        Scope::Global => Home::Sale,
        Scope::Rig(run) => Home::Rig(run),
    };
    let held: Vec<u64> = store::scopes(&conns.mysql)
        .await?
        .into_iter()
        .filter_map(|s| s.scope.product_id().filter(|_| s.mode != Mode::Normal))
        .collect();
    let products = catalog::home_products(&conns.mysql, home).await.step("reading the products in scope (in scope)")?;
    Ok(products.into_iter().filter(|p| !held.contains(p)).collect())
}

/// The home row of the engines that sell what an exit of `scope` rebuilds: the row itself for
/// the global row or a rig's; for one product, its home's (a sale product's engines are the
/// sale's, a rig product's its drill's).
async fn home_of(conns: &Connections, scope: Scope) -> Result<Scope, SwitchError> {
    let Scope::Product(p) = scope else { return Ok(scope) };
    let rig: Option<Option<u64>> = sqlx::query_scalar("SELECT rig FROM inventory WHERE product_id = ?")
        .bind(p)
        .fetch_optional(&conns.mysql)
        .await
        .step("reading the product's rig (home of)")?;
    Ok(match rig.flatten() {
        Some(run) => Scope::Rig(run),
        None => Scope::Global,
    })
}

/// Waits until every live instance applied `revision` and reports NORMAL (tripped breakers
/// close a heartbeat after applying it), or the timeout; NORMAL is written either way.
async fn wait_normal(
    conns: &Connections,
    opts: &ExitOptions,
    revision: u64,
    concerned: &(dyn Fn(&InstanceAck) -> bool + Sync),
) -> Result<Acknowledgement, SwitchError> {
    let deadline = Instant::now() + opts.ack_timeout;
    loop {
        let ack = acks::acknowledgement(&conns.mysql, revision, opts.stale_after).await?.among(concerned);
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
    Ok(audit::record(&conns.mysql, &entry).await.step("writing the audit row (audit exit)")?)
}
