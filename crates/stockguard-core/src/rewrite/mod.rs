//! The locked, fenced rewrite of Redis stock (contract section 4).
//!
//! 1. Take the lock (`lock`): a random token, `NX`, a TTL.
//! 2. Insert a `rewrite_runs` row: its auto-increment id is the fencing token F. Claim the
//!    fence in Redis (`claim.lua`: `fence = max(fence, F)`) *before* reading, settle older
//!    runs of the product that never reported (`ABANDONED`), and write the audit row of the
//!    intent (`rewrite.begin`), so a write that lands after its client gave up is on record.
//! 3. Take an exact reading (`crate::recon`): observed O, expected E. A history a failover
//!    forked (two orders of one number, [`crate::recon::fork`]) is taken as lost.
//! 4. Apply in one script (`apply.lua`), only while the fence is still F: `INCRBY` the delta
//!    E - O (keeping reservations made since the reading) within the cut's epoch; a missing
//!    key is rebuilt with `SET E`, which starts a new epoch (F). A product whose Redis
//!    history was lost (`HISTORY_LOST`) is reset: its E counts every order the DB holds, with
//!    no after-cut correction, so the `INCRBY` lands at or below the truth (never above), and
//!    the same script starts a new epoch; the rewrite then reads again, in that epoch, where
//!    the numbers are Redis's own, and applies what is left as a delta.
//!    When Redis moved under the reading, read again (a few times) under the same lock.
//! 5. Read back; record before, after, delta, drift after and the outcome, and an audit row.
//! 6. Release the lock by compare-and-delete.
//!
//! A holder that stalls past its TTL cannot write any more, whichever write reaches Redis
//! first: its successor claimed the fence before reading, and a write lands only under its
//! own fence (Kleppmann's rule: the storage refuses every older holder). A dry run claims
//! nothing and stops after step 3.
//!
//! [`batch`] takes the same steps for many products at once (each still its own lock, token,
//! fence and audit rows), a round trip per step instead of per product and step: the guided
//! exit's rebuild of thousands of products.
//!
//! [`repairs`] says which statuses a rewrite repairs (Redis's drift, a missing key, a lost
//! history; not the DB's incidents): the window fills its rewrite form with those products.

pub mod batch;
pub mod lock;

pub use batch::{rewrite_batch, BatchHolder, Started};

use std::sync::LazyLock;
use std::time::Duration;

use redis::{Script, ScriptInvocation};
use serde::{Deserialize, Serialize};
use tracing::field::Empty;
use tracing::{Instrument as _, Span};

use crate::action::Action;
use crate::audit::{self, AuditEntry};
use crate::connect::Connections;
use crate::profile::EnvironmentKind;
use crate::recon::{read_products, DriftStatus, Reading, ReconError};
use crate::step::Step as _;
use lock::LockGuard;

/// What became of a rewrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Outcome {
    /// The delta was applied.
    Applied,
    /// The missing key was rebuilt.
    Rebuilt,
    /// No drift: nothing to write.
    Noop,
    /// Dry run: the delta was computed and nothing changed.
    DryRun,
    /// A newer rewrite claimed the fence: this one wrote nothing.
    RefusedFence,
    /// Another rewrite of the product holds the lock.
    LockBusy,
    /// Redis kept moving between the reading and the write (the key vanished or appeared,
    /// or a reset found sales since its cut) on every attempt: nothing written.
    #[serde(rename = "FAILED")]
    Changed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "APPLIED",
            Self::Rebuilt => "REBUILT",
            Self::Noop => "NOOP",
            Self::DryRun => "DRY_RUN",
            Self::RefusedFence => "REFUSED_FENCE",
            Self::LockBusy => "LOCK_BUSY",
            Self::Changed => "FAILED",
        }
    }
}

/// The result, with the stable JSON field names of `docs/json.md`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RewriteResult {
    pub product_id: u64,
    /// The reading the rewrite acted on (or would have).
    pub reading: Option<Reading>,
    pub before: Option<i64>,
    pub after: Option<i64>,
    pub delta: i64,
    pub drift_after: Option<i64>,
    /// The fencing token (rewrite run id); 0 when the lock was busy and no run started.
    pub fence_token: u64,
    pub audit_id: u64,
    pub outcome: Outcome,
}

impl RewriteResult {
    /// The result when another holder has the product's lock: no run, no token.
    pub fn lock_busy(product_id: u64) -> Self {
        Self {
            product_id,
            reading: None,
            before: None,
            after: None,
            delta: 0,
            drift_after: None,
            fence_token: 0,
            audit_id: 0,
            outcome: Outcome::LockBusy,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    /// Refused by the rule for [`Action::RewriteStock`] (a dry run is never refused).
    #[error(transparent)]
    Refused(#[from] crate::action::Refused),
    #[error("production: confirm by typing the product id (--confirm {0})")]
    ConfirmationRequired(u64),
    #[error("a reason is required (it goes to the audit log)")]
    NoReason,
    #[error(transparent)]
    Recon(#[from] ReconError),
    #[error(transparent)]
    Db(#[from] crate::step::StepFailed),
    #[error("Redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("the run of product {product_id} in batch {batch} is missing after its INSERT")]
    RunMissing { batch: String, product_id: u64 },
}

/// What to rewrite and how.
#[derive(Debug, Clone)]
pub struct RewriteRequest {
    pub product_id: u64,
    pub reason: String,
    pub dry_run: bool,
    /// The product id typed again; required on production for a real rewrite.
    pub confirm: Option<u64>,
    pub lock_ttl: Duration,
}

impl RewriteRequest {
    pub fn new(product_id: u64, reason: &str) -> Self {
        Self { product_id, reason: reason.into(), dry_run: false, confirm: None, lock_ttl: Duration::from_secs(10) }
    }
}

/// A rewrite between its steps: the lock is held and the fencing token is known.
#[derive(Debug)]
pub struct Holder {
    pub guard: LockGuard,
    pub fence_token: u64,
    pub request: RewriteRequest,
    /// The fence is this holder's (always false for a dry run, which claims nothing).
    pub claimed: bool,
}

static CLAIM: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("claim.lua")));
static APPLY: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("apply.lua")));

/// Readings (and writes) tried under one lock when Redis moves between them.
const ATTEMPTS: usize = 3;

fn check_allowed(conns: &Connections, req: &RewriteRequest) -> Result<(), RewriteError> {
    if req.reason.trim().is_empty() {
        return Err(RewriteError::NoReason);
    }
    if req.dry_run {
        return Ok(());
    }
    let s = &conns.settings;
    s.may(Action::RewriteStock)?;
    if s.environment == EnvironmentKind::Production && req.confirm != Some(req.product_id) {
        return Err(RewriteError::ConfirmationRequired(req.product_id));
    }
    Ok(())
}

/// The audit entry of a finished rewrite (`rewrite`, or `rewrite.dry_run`).
fn rewrite_entry(conns: &Connections, req: &RewriteRequest, result: &RewriteResult) -> AuditEntry {
    let details = serde_json::json!({
        "before": result.before,
        "after": result.after,
        "delta": result.delta,
        "drift_after": result.drift_after,
        "fence_token": result.fence_token,
        "dry_run": req.dry_run,
        "expected_redis": result.reading.as_ref().map(|r| r.expected_redis),
    });
    let action = if req.dry_run { "rewrite.dry_run" } else { "rewrite" };
    AuditEntry::by(
        &conns.settings,
        action,
        &format!("product:{}", req.product_id),
        &req.reason,
        result.outcome.as_str(),
        details,
    )
}

async fn audit_rewrite(conns: &Connections, req: &RewriteRequest, result: &RewriteResult) -> Result<u64, sqlx::Error> {
    audit::record(&conns.mysql, &rewrite_entry(conns, req, result)).await
}

/// Steps 1 and 2: the lock, the run row whose id is the fencing token, the fence claimed,
/// older silent runs settled, the intent audited. `None` when the lock is busy.
pub async fn begin(conns: &Connections, req: &RewriteRequest) -> Result<Option<Holder>, RewriteError> {
    check_allowed(conns, req)?;
    let mut redis = conns.redis.clone();
    let Some(guard) = lock::acquire(&mut redis, &conns.keys, req.product_id, req.lock_ttl.as_millis() as u64).await?
    else {
        return Ok(None);
    };
    match start_run(conns, req).await {
        Ok((fence_token, claimed)) => Ok(Some(Holder { guard, fence_token, request: req.clone(), claimed })),
        Err(e) => {
            let _ = lock::release(&mut redis, &guard).await;
            Err(e)
        }
    }
}

async fn start_run(conns: &Connections, req: &RewriteRequest) -> Result<(u64, bool), RewriteError> {
    let token = sqlx::query("INSERT INTO rewrite_runs (product_id, requested_by, reason, dry_run) VALUES (?, ?, ?, ?)")
        .bind(req.product_id)
        .bind(&conns.settings.actor)
        .bind(&req.reason)
        .bind(req.dry_run)
        .execute(&conns.mysql)
        .await
        .step("inserting the rewrite run (taking its fencing token)")?
        .last_insert_id();
    if req.dry_run {
        return Ok((token, false));
    }
    let mut redis = conns.redis.clone();
    let fence: u64 = CLAIM.key(conns.keys.fence(req.product_id)).arg(token).invoke_async(&mut redis).await?;
    // From here no older holder can write (its fence is gone), so a run of this product still
    // RUNNING is settled: whether its write landed before the claim, this run's reading sees.
    sqlx::query(
        "UPDATE rewrite_runs SET outcome = 'ABANDONED', finished_at = CURRENT_TIMESTAMP(3), \
         error = 'its holder never reported back; a newer rewrite took the fence' \
         WHERE product_id = ? AND id < ? AND outcome = 'RUNNING'",
    )
    .bind(req.product_id)
    .bind(token)
    .execute(&conns.mysql)
    .await
    .step("settling older runs of the product as ABANDONED")?;
    // The intent goes on record before anything is written: a write that lands after its
    // client gave up (a timeout, a crash) still has an audit row naming its token.
    let entry = AuditEntry::by(
        &conns.settings,
        "rewrite.begin",
        &format!("product:{}", req.product_id),
        &req.reason,
        if fence == token { "STARTED" } else { "REFUSED_FENCE" },
        serde_json::json!({ "fence_token": token, "fence": fence }),
    );
    audit::record(&conns.mysql, &entry).await.step("writing the rewrite's intent to the audit log")?;
    Ok((token, fence == token))
}

/// Step 3: the exact reading.
pub async fn read(conns: &Connections, holder: &Holder) -> Result<Reading, RewriteError> {
    reading_of(conns, holder.request.product_id).await
}

/// The reading a rewrite (or its dry run) goes by: the exact reading of `product`, with a
/// history a failover forked taken as lost, which the reading alone cannot see once the
/// promoted master has passed the dead one's numbers ([`crate::recon::fork`]).
async fn reading_of(conns: &Connections, product: u64) -> Result<Reading, RewriteError> {
    let mut redis = conns.redis.clone();
    let reading = read_products(&conns.mysql, &mut redis, &conns.keys, &[product]).await?.remove(0);
    if reading.redis_stock.is_none() || reading.history_lost {
        return Ok(reading);
    }
    let forked = crate::recon::fork::forked(&conns.mysql, product, reading.cut_epoch)
        .await
        .step("looking for a forked Redis history")?;
    Ok(if forked { reading.with_history_lost() } else { reading })
}

/// The span of one product's rewrite (or of its last steps, [`finish`]): the fencing token,
/// the kind of write and the outcome are recorded as they become known.
fn span(req: &RewriteRequest, fence_token: Option<u64>) -> Span {
    tracing::info_span!(
        "rewrite",
        product_id = req.product_id,
        dry_run = req.dry_run,
        fence_token,
        mode = Empty,
        outcome = Empty
    )
}

/// What a reading calls for: a write in `mode` of `delta`, or an outcome with no write.
struct Plan {
    mode: &'static str,
    delta: i64,
    without_write: Option<Outcome>,
}

fn plan(holder: &Holder, reading: &Reading) -> Plan {
    let delta = reading.expected_redis - reading.redis_stock.unwrap_or(0);
    let mode = match reading.redis_stock {
        None => "rebuild",
        Some(_) if reading.history_lost => "reset",
        Some(_) => "delta",
    };
    let without_write = if holder.request.dry_run {
        Some(Outcome::DryRun)
    } else if !holder.claimed {
        Some(Outcome::RefusedFence)
    } else if !needs_write(reading) {
        Some(Outcome::Noop)
    } else {
        None
    };
    Plan { mode, delta, without_write }
}

/// Whether a reading calls for a write: a missing key (rebuilt), a lost history (reset: it
/// needs its new epoch even when the numbers happen to agree), or a drift.
fn needs_write(reading: &Reading) -> bool {
    reading.redis_stock.is_none() || reading.history_lost || reading.expected_redis != reading.redis_stock.unwrap_or(0)
}

/// Whether a rewrite repairs a product in `status`: a drift either way (its delta), a missing
/// key (rebuilt), a lost history (reset under a new epoch) are Redis's, and setting Redis from
/// the DB ends them. An oversell or a broken ledger is the DB's: a rewrite sets Redis from that
/// very DB and leaves the incident as it was. `OK` needs nothing; `UNSETTLED` (a reading over an
/// adapter) is no verdict yet.
pub fn repairs(status: DriftStatus) -> bool {
    matches!(
        status,
        DriftStatus::RedisHigh | DriftStatus::RedisLow | DriftStatus::KeyMissing | DriftStatus::HistoryLost
    )
}

/// The products among `readings` a rewrite repairs ([`repairs`]), in the readings' order.
pub fn repairable(readings: &[Reading]) -> Vec<u64> {
    readings.iter().filter(|r| repairs(r.status)).filter_map(|r| r.product_id.as_num()).collect()
}

/// The `apply.lua` call of a planned write, under the holder's fence.
fn apply_call<'a>(keys: &crate::keys::Keys, holder: &Holder, reading: &Reading, plan: &Plan) -> ScriptInvocation<'a> {
    let p = holder.request.product_id;
    let mut call = APPLY.key(keys.stock(p));
    call.key(keys.fence(p))
        .key(keys.seq(p))
        .key(keys.epoch(p))
        .arg(holder.fence_token)
        .arg(plan.delta)
        .arg(reading.expected_redis)
        .arg(plan.mode)
        .arg(reading.cut_seq)
        .arg(reading.cut_epoch);
    call
}

/// The outcome `apply.lua` answered with its code.
fn applied(code: i64) -> Outcome {
    match code {
        1 => Outcome::Applied,
        2 => Outcome::Rebuilt,
        -1 => Outcome::RefusedFence,
        _ => Outcome::Changed,
    }
}

/// Step 4: the write the reading calls for, under the holder's fence. Runs inside [`span`].
async fn apply(conns: &Connections, holder: &Holder, reading: &Reading) -> Result<Outcome, RewriteError> {
    let plan = plan(holder, reading);
    Span::current().record("mode", plan.mode);
    if let Some(outcome) = plan.without_write {
        return Ok(outcome);
    }
    let mut redis = conns.redis.clone();
    let (code, _value): (i64, i64) = apply_call(&conns.keys, holder, reading, &plan).invoke_async(&mut redis).await?;
    Ok(applied(code))
}

/// Steps 4 to 6 (or, for a dry run, the record of step 3): write under the fence, read
/// back, record, release.
pub async fn finish(conns: &Connections, holder: Holder, reading: Reading) -> Result<RewriteResult, RewriteError> {
    let span = span(&holder.request, Some(holder.fence_token));
    async {
        let outcome = apply(conns, &holder, &reading).await?;
        record(conns, holder, reading, outcome, 0).await
    }
    .instrument(span)
    .await
}

/// After a reset: its delta took no after-cut correction, so Redis may be below the truth by
/// what was reserved since its cut. Read again, now in the reset's own epoch, and apply that
/// as a delta under the same fence. The units applied (0 when nothing was left, or Redis
/// moved on every try: the run's drift after then says what is left).
async fn settle_after_reset(conns: &Connections, holder: &Holder) -> Result<i64, RewriteError> {
    for _ in 0..ATTEMPTS {
        let reading = read(conns, holder).await?;
        if reading.history_lost || !needs_write(&reading) {
            return Ok(0);
        }
        match apply(conns, holder, &reading).await? {
            Outcome::Applied => return Ok(reading.expected_redis - reading.redis_stock.unwrap_or(0)),
            Outcome::Changed => continue,
            _ => return Ok(0),
        }
    }
    Ok(0)
}

/// Steps 5 and 6. Runs inside [`span`]. `settled`: units a second pass applied after a
/// reset ([`settle_after_reset`]), recorded in the run's delta with the first.
async fn record(
    conns: &Connections,
    holder: Holder,
    reading: Reading,
    outcome: Outcome,
    settled: i64,
) -> Result<RewriteResult, RewriteError> {
    let mut redis = conns.redis.clone();
    let p = holder.request.product_id;
    let delta = reading.expected_redis - reading.redis_stock.unwrap_or(0) + settled;
    let after_reading = if holder.request.dry_run { None } else { Some(read(conns, &holder).await?) };
    let mut result = RewriteResult {
        product_id: p,
        before: reading.redis_stock,
        after: after_reading.as_ref().map_or(reading.redis_stock, |r| r.redis_stock),
        delta,
        drift_after: after_reading.as_ref().map_or(reading.drift, |r| r.drift),
        fence_token: holder.fence_token,
        audit_id: 0,
        outcome,
        reading: Some(reading),
    };
    sqlx::query(
        "UPDATE rewrite_runs SET finished_at = CURRENT_TIMESTAMP(3), observed_redis = ?, expected_redis = ?, delta = ?, \
         before_stock = ?, after_stock = ?, drift_after = ?, outcome = ? WHERE id = ?",
    )
    .bind(result.before)
    .bind(result.reading.as_ref().map(|r| r.expected_redis))
    .bind(result.delta)
    .bind(result.before)
    .bind(result.after)
    .bind(result.drift_after)
    .bind(result.outcome.as_str())
    .bind(holder.fence_token)
    .execute(&conns.mysql)
    .await
    .step("recording the rewrite run's outcome")?;
    result.audit_id = audit_rewrite(conns, &holder.request, &result).await.step("writing the rewrite's audit row")?;
    lock::release(&mut redis, &holder.guard).await?;
    Span::current().record("outcome", result.outcome.as_str());
    tracing::info!(delta = result.delta, drift_after = result.drift_after, "rewrite recorded");
    Ok(result)
}

/// A run that failed between its steps: recorded as FAILED with the error, lock released.
async fn abort(conns: &Connections, holder: &Holder, error: &RewriteError) {
    let _ = sqlx::query(
        "UPDATE rewrite_runs SET finished_at = CURRENT_TIMESTAMP(3), outcome = 'FAILED', error = ? \
         WHERE id = ? AND outcome = 'RUNNING'",
    )
    .bind(error.to_string().chars().take(1000).collect::<String>())
    .bind(holder.fence_token)
    .execute(&conns.mysql)
    .await;
    let mut redis = conns.redis.clone();
    let _ = lock::release(&mut redis, &holder.guard).await;
}

/// The whole rewrite of one product, in one span. A dry run is [`preview`]: it reads and says
/// what the rewrite would do, and takes nothing (no lock, no run, no fencing token).
pub async fn rewrite(conns: &Connections, req: &RewriteRequest) -> Result<RewriteResult, RewriteError> {
    if req.dry_run {
        return preview(conns, req).instrument(span(req, None)).await;
    }
    rewrite_steps(conns, req).instrument(span(req, None)).await
}

/// What a rewrite of the product would do now, read without writing anything: `before` is
/// Redis's stock, `after` the value the rewrite would write (`before` when it would write
/// nothing), `drift_after` the drift it would leave (0 once written). A dry run holds no lock,
/// records no run and takes no fencing token (`fence_token` 0), so it needs no right to
/// write: a viewer or a read-only profile may ask.
pub async fn preview(conns: &Connections, req: &RewriteRequest) -> Result<RewriteResult, RewriteError> {
    check_allowed(conns, req)?;
    let reading = reading_of(conns, req.product_id).await?;
    let delta = reading.expected_redis - reading.redis_stock.unwrap_or(0);
    let writes = needs_write(&reading);
    let result = RewriteResult {
        product_id: req.product_id,
        before: reading.redis_stock,
        after: if writes { Some(reading.expected_redis) } else { reading.redis_stock },
        delta,
        drift_after: if writes { Some(0) } else { reading.drift },
        fence_token: 0,
        audit_id: 0,
        outcome: Outcome::DryRun,
        reading: Some(reading),
    };
    Span::current().record("outcome", Outcome::DryRun.as_str());
    Ok(result)
}

async fn rewrite_steps(conns: &Connections, req: &RewriteRequest) -> Result<RewriteResult, RewriteError> {
    let Some(holder) = begin(conns, req).await? else {
        Span::current().record("outcome", Outcome::LockBusy.as_str());
        let mut result = RewriteResult::lock_busy(req.product_id);
        result.audit_id = audit_rewrite(conns, req, &result).await.step("writing the busy rewrite's audit row")?;
        return Ok(result);
    };
    Span::current().record("fence_token", holder.fence_token);
    let mut attempt = 0;
    let steps = loop {
        attempt += 1;
        let reading = match read(conns, &holder).await {
            Ok(r) => r,
            Err(e) => break Err(e),
        };
        match apply(conns, &holder, &reading).await {
            // Redis moved between the reading and the write (a reset under live sales, a key
            // that came or went): nothing was written, so read again under the same lock.
            Ok(Outcome::Changed) if attempt < ATTEMPTS => continue,
            Ok(outcome) => break Ok((reading, outcome)),
            Err(e) => break Err(e),
        }
    };
    let steps = match steps {
        // The reset wrote: a second pass that fails leaves it on record all the same, with the
        // drift after saying what is left.
        Ok((reading, Outcome::Rebuilt)) if reading.history_lost && reading.redis_stock.is_some() => {
            let settled = settle_after_reset(conns, &holder).await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the second pass after a reset");
                0
            });
            Ok((reading, Outcome::Rebuilt, settled))
        }
        Ok((reading, outcome)) => Ok((reading, outcome, 0)),
        Err(e) => Err(e),
    };
    match steps {
        Ok((reading, outcome, settled)) => record(conns, holder, reading, outcome, settled).await,
        Err(e) => {
            Span::current().record("outcome", "FAILED");
            abort(conns, &holder, &e).await;
            Err(e)
        }
    }
}

/// Rewrites several products one after the other; each has its own lock, token and audit.
/// `confirmed` holds the product ids typed again (each needed on production).
pub async fn rewrite_many(
    conns: &Connections,
    products: &[u64],
    template: &RewriteRequest,
    confirmed: &[u64],
) -> Vec<Result<RewriteResult, RewriteError>> {
    let mut out = Vec::with_capacity(products.len());
    for &p in products {
        let req = RewriteRequest { product_id: p, confirm: confirmed.contains(&p).then_some(p), ..template.clone() };
        out.push(rewrite(conns, &req).await);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Product `id` (100 units, 40 of them sold) with Redis at `redis`, its history lost or
    /// not, classified as the reading classifies it.
    fn reading(id: u64, redis: Option<i64>, history_lost: bool) -> Reading {
        let mut r = Reading::exact(id, 100, 40);
        r.redis_stock = redis;
        r.drift = redis.map(|v| v - r.expected_redis);
        r.history_lost = history_lost;
        r.status = DriftStatus::classify(
            r.initial_stock,
            r.db_stock,
            r.live_orders_qty,
            redis,
            r.expected_redis,
            history_lost,
        );
        r
    }

    #[test]
    fn a_rewrite_repairs_redis_drift_a_missing_key_and_a_lost_history_and_writes_for_each() {
        for r in [
            reading(1, Some(67), false),
            reading(1, Some(55), false),
            reading(1, None, false),
            reading(1, Some(60), true),
        ] {
            assert!(repairs(r.status), "{:?}", r.status);
            assert!(needs_write(&r), "a status a rewrite repairs calls for a write: {:?}", r.status);
        }
    }

    #[test]
    fn a_rewrite_repairs_no_db_incident_and_nothing_that_is_ok_or_unsettled() {
        for status in [DriftStatus::Oversold, DriftStatus::LedgerMismatch, DriftStatus::Ok, DriftStatus::Unsettled] {
            assert!(!repairs(status), "{status:?}");
        }
    }

    #[test]
    fn the_repairable_products_keep_the_readings_order() {
        let mut oversold = reading(1020, Some(60), false);
        oversold.live_orders_qty = 103;
        oversold.status = DriftStatus::Oversold;
        let readings =
            [reading(1018, None, false), oversold, reading(1016, Some(67), false), reading(1001, Some(60), false)];
        assert_eq!(repairable(&readings), vec![1018, 1016]);
    }
}
