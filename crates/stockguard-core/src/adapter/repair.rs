//! The delta rewrite over an adapter: a settled drift applied to the sale's own Redis
//! counter as one `INCRBY` (a `DECRBY` when Redis is high). Deductions the sale makes while it
//! runs commute with an increment, where a `SET` would erase them. Only where the file says
//! `[repair] rewrite = "delta"`; refused while the product is `UNSETTLED`.
//!
//! Under our lock (a named lock in the state database, one per sale and product) and, when the
//! file names one, the sale's own lock key, held while the repair runs; the reading that
//! decides is taken under both. Audited in the state database. A dry run reads only: no lock,
//! no key, no write. The rule of our own rewrite holds: the profile's role must be one that
//! may [`Action::RewriteStock`], a reason is required, and on production the product id is
//! typed again. `stockguard rewrite` and `stockguard adapter repair` both come here.
//!
//! A repair applies what was reviewed: with `expect_drift` (the dry run's drift, which the dry
//! run's command line carries) it runs only while the settled drift, read under the locks, is
//! still that; otherwise nothing is written and the drift now is said. On production it is
//! required. A repair that adds units (a `REDIS_LOW`) acts only on a settled reading, which
//! by [`super::reading`]'s rule has seen and attributed everything that may be in flight.

use std::time::Duration;

use serde::Serialize;
use sqlx::MySqlPool;

use super::file::{AdapterFile, Negative, RedisForm, RewriteMode};
use super::links::SaleLinks;
use super::reading::{self, AdapterReading};
use super::state;
use super::AdapterError;
use crate::action::Action;
use crate::audit::{self, AuditEntry};
use crate::product_id::ProductId;
use crate::profile::{ConnectionSettings, EnvironmentKind};
use crate::recon::DriftStatus;
use crate::redis_link::Link;

/// How long the sale's own lock key is held at most (it is released as soon as the repair is
/// done; the expiry covers a console that dies holding it).
const FENCE_TTL: Duration = Duration::from_secs(30);

/// Deletes the sale's lock key only while it still holds our token, hashed once.
static RELEASE_FENCE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end",
    )
});

/// What a repair did, or would do.
#[derive(Debug, Clone, Serialize)]
pub struct DeltaRepair {
    pub product_id: ProductId,
    pub key: String,
    pub status_before: DriftStatus,
    pub redis_before: Option<i64>,
    pub drift: i64,
    /// What the units the sale reads move by (the drift's opposite).
    pub delta: i64,
    /// What `INCRBY` adds to the counter: the delta, and on a clamped counter (`negative =
    /// "clamp"`, which the sale reads as 0 below zero) first the rejected tries that took it
    /// below zero (`AdapterReading::redis_excess`); an increment of the delta alone would leave
    /// it below zero and change nothing the sale reads.
    pub increment: i64,
    /// The units the sale reads after the increment, as the counter `INCRBY` returned reads
    /// (for a dry run: what it would read if nothing else moved).
    pub redis_after: Option<i64>,
    /// The counter as `INCRBY` returned it, raw (below zero on a clamped counter that is still
    /// short); `None` for a dry run.
    pub counter_after: Option<i64>,
    /// The drift left: after a repair, by the units read back (the drift less what they moved).
    pub drift_after: i64,
    pub dry_run: bool,
}

/// A repair asked for: which product, why, whether only to look, on production the product
/// id typed again, and the drift the person reviewed.
#[derive(Debug, Clone)]
pub struct DeltaRequest {
    pub product: ProductId,
    pub reason: String,
    pub dry_run: bool,
    /// The product id typed again.
    pub confirm: Option<ProductId>,
    /// The settled drift the repair was reviewed for (the dry run's): the repair runs only
    /// while the drift is still this. Required on production.
    pub expect_drift: Option<i64>,
}

impl DeltaRequest {
    pub fn new(product: impl Into<ProductId>, reason: &str, dry_run: bool) -> Self {
        Self { product: product.into(), reason: reason.into(), dry_run, confirm: None, expect_drift: None }
    }

    /// The same request, to run only while the settled drift is `drift`.
    pub fn expecting(self, drift: i64) -> Self {
        Self { expect_drift: Some(drift), ..self }
    }
}

/// Repairs one product's settled drift (see the module docs).
pub async fn repair<C: Link>(
    file: &AdapterFile,
    links: &SaleLinks<'_, C>,
    state_db: Option<&MySqlPool>,
    settings: &ConnectionSettings,
    req: &DeltaRequest,
) -> Result<DeltaRepair, AdapterError> {
    let (product, reason, dry_run) = (&req.product, req.reason.as_str(), req.dry_run);
    if file.repair.rewrite != RewriteMode::Delta {
        return Err(AdapterError::ReadOnly { sale: file.sale.name.clone() });
    }
    if !dry_run {
        settings.may(Action::RewriteStock)?;
        if settings.environment == EnvironmentKind::Production
            && req.confirm.as_ref().map(ToString::to_string) != Some(product.to_string())
        {
            return Err(AdapterError::ConfirmationRequired(product.clone()));
        }
        if settings.environment == EnvironmentKind::Production && req.expect_drift.is_none() {
            return Err(AdapterError::Refused(format!(
                "PRODUCTION: a repair applies the drift you reviewed: run it with --dry-run first, then again with \
                 --expect-drift D (the drift the dry run showed for product {product})"
            )));
        }
    }
    let Some(RedisForm::Counter(template)) = file.redis.as_ref().map(|r| r.form()) else {
        unreachable!("checked by AdapterFile::parse: delta needs a string counter")
    };
    let redis = links.redis.ok_or_else(|| AdapterError::Refused("no Redis URL was given for the sale".into()))?;
    if !dry_run && reason.trim().is_empty() {
        return Err(AdapterError::Refused("a repair needs a reason (--reason)".into()));
    }
    let key = template.key(product);
    let clamp = file.redis.as_ref().is_some_and(|r| r.negative == Some(Negative::Clamp));
    if dry_run {
        let baselines = match state_db {
            Some(p) => state::baselines(p, &file.sale.name).await?,
            None => Default::default(),
        };
        let r = one(file, links, &baselines, product).await?;
        return plan(&r, &key, clamp, true, req.expect_drift);
    }
    let pool = state_db.ok_or(AdapterError::NoStateDb)?;
    // Our lock: a named lock on a connection of its own, held until it is released.
    let mut lock_conn =
        pool.acquire().await.map_err(|source| AdapterError::StateDb { step: "take a connection", source })?;
    let lock_name = format!("stockguard:adapter:{}:{product}", file.sale.name);
    let got: Option<i64> = sqlx::query_scalar("SELECT GET_LOCK(?, 0)")
        .bind(&lock_name)
        .fetch_one(&mut *lock_conn)
        .await
        .map_err(|source| AdapterError::StateDb { step: "take the repair lock", source })?;
    if got != Some(1) {
        return Err(AdapterError::Refused(format!("another repair of product {product} is running")));
    }
    let token = format!("stockguard:{}", rand::random::<u64>());
    let fence = file.repair.fence_key.as_ref().map(|f| f.key(product));
    let outcome = async {
        if let Some(fence) = &fence {
            let mut conn = redis.clone();
            let taken: Option<String> = redis::cmd("SET")
                .arg(fence)
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(FENCE_TTL.as_millis() as u64)
                .query_async(&mut conn)
                .await
                .map_err(|source| AdapterError::Redis { step: "take the sale's own lock key", source })?;
            if taken.is_none() {
                return Err(AdapterError::Refused(format!("the sale's own lock key {fence} is held: try again")));
            }
        }
        let baselines = state::baselines(pool, &file.sale.name).await?;
        let r = one(file, links, &baselines, product).await?;
        let mut done = plan(&r, &key, clamp, false, req.expect_drift)?;
        let mut conn = redis.clone();
        let after: i64 = redis::cmd("INCRBY")
            .arg(&key)
            .arg(done.increment)
            .query_async(&mut conn)
            .await
            .map_err(|source| AdapterError::Redis { step: "apply the delta", source })?;
        // Read back: the units the sale reads now, and the drift they leave.
        let units = if clamp { after.max(0) } else { after };
        done.counter_after = Some(after);
        done.redis_after = Some(units);
        done.drift_after = done.drift + (units - done.redis_before.unwrap_or(0));
        let entry = AuditEntry::by(
            settings,
            "adapter_rewrite",
            &format!("sale:{}:product:{product}", file.sale.name),
            reason,
            "APPLIED",
            serde_json::to_value(&done).unwrap_or_default(),
        );
        audit::record(pool, &entry)
            .await
            .map_err(|source| AdapterError::StateDb { step: "write the audit row", source })?;
        Ok(done)
    }
    .await;
    if let Some(fence) = &fence {
        let mut conn = redis.clone();
        let _: Result<i64, _> = RELEASE_FENCE.key(fence).arg(&token).invoke_async(&mut conn).await;
    }
    let _ = sqlx::query("SELECT RELEASE_LOCK(?)").bind(&lock_name).execute(&mut *lock_conn).await;
    outcome
}

async fn one<C: Link>(
    file: &AdapterFile,
    links: &SaleLinks<'_, C>,
    baselines: &std::collections::HashMap<ProductId, i64>,
    product: &ProductId,
) -> Result<AdapterReading, AdapterError> {
    reading::read(file, links, baselines, std::slice::from_ref(product))
        .await?
        .pop()
        .ok_or_else(|| AdapterError::UnknownProduct(product.clone()))
}

/// What to add, or why not.
fn plan(
    r: &AdapterReading,
    key: &str,
    clamp: bool,
    dry_run: bool,
    expect: Option<i64>,
) -> Result<DeltaRepair, AdapterError> {
    let reading = &r.reading;
    match reading.status {
        DriftStatus::RedisHigh | DriftStatus::RedisLow => {}
        DriftStatus::Unsettled => {
            let why = r.unsettled.as_ref().map_or("it is not settled".to_string(), ToString::to_string);
            return Err(AdapterError::Refused(format!(
                "product {} is UNSETTLED ({why}; {} in flight): a drift that is not settled is not repaired, \
                 nothing was written; try again when the sale is quiet",
                reading.product_id, reading.in_flight
            )));
        }
        DriftStatus::Ok => {
            return Err(AdapterError::Refused(format!(
                "product {} has no drift: nothing to repair",
                reading.product_id
            )))
        }
        other => {
            return Err(AdapterError::Refused(format!(
                "product {} is {other}: not a Redis drift a delta repairs",
                reading.product_id
            )))
        }
    }
    let drift = reading.drift.expect("a settled RedisHigh/RedisLow has a drift");
    if let Some(expected) = expect.filter(|e| *e != drift) {
        return Err(AdapterError::Refused(format!(
            "product {}: the settled drift is now {drift:+}, not the {expected:+} you reviewed: nothing was written; \
             review the dry run again",
            reading.product_id
        )));
    }
    // The delta is the drift's opposite: what Redis holds beyond (or short of) the DB. A
    // clamped counter below zero is first brought back to zero (a try rejected meanwhile takes
    // one more below: the sale then reads one unit fewer, never more).
    let delta = -drift;
    let below_zero = if clamp && delta > 0 { r.redis_excess.max(0) } else { 0 };
    let increment = delta.checked_add(below_zero).ok_or_else(|| {
        AdapterError::Refused(format!("product {}: the increment overflows a 64-bit counter", reading.product_id))
    })?;
    Ok(DeltaRepair {
        product_id: reading.product_id.clone(),
        key: key.to_string(),
        status_before: reading.status,
        redis_before: reading.redis_stock,
        drift,
        delta,
        increment,
        redis_after: if dry_run { reading.redis_stock.map(|r| r - drift) } else { None },
        counter_after: None,
        drift_after: drift + delta,
        dry_run,
    })
}
