//! The fenced rewrite of many products at once: the same six steps as [`super::rewrite`],
//! each taken for every product in one round trip (issue 16: the guided exit pauses sales
//! while it rebuilds Redis, and at a dozen round trips per product 5,000 products took a
//! minute).
//!
//! Nothing about a product's guarantees changes, because nothing is shared but the round
//! trips: each product has its own lock (`SET NX PX`, all in one pipeline), its own fencing
//! token (its own `rewrite_runs` row, all inserted by one multi-row `INSERT`), its fence
//! claimed in Redis before the reading (one pipeline of `claim.lua` calls), its intent on
//! record before anything is written (one multi-row `INSERT` of `rewrite.begin` rows), and
//! its write refused by `apply.lua` unless the fence is still its token. So a stalled holder
//! of a batch is refused product by product, exactly as a stalled single rewrite is.
//!
//! Reading the tokens back: InnoDB numbers the rows of one multi-row `INSERT` in order but not
//! necessarily consecutively (`innodb_autoinc_lock_mode = 2`, MySQL 8's default, interleaves
//! concurrent inserts), so the runs carry the batch's key (`rewrite_runs.batch`) and the ids
//! are selected by it. The audit rows carry the same key in their details (`batch`), which
//! ties a batch's runs and records together for a reader too.
//!
//! Two things the single rewrite does are not done here: the second pass after a reset (the
//! guided exit pauses sales while it rebuilds, so nothing is reserved after the cut and a
//! reset lands exactly), and the look for a forked history ([`crate::recon::fork`]: a scan of
//! each product's orders, too much for thousands of products).
//!
//! On a Redis Cluster every pipeline goes through [`crate::redis_link`]: one pipeline per
//! hash slot, since a product's keys (and its lock) share the slot of its tag `{P}`.

use std::collections::HashMap;

use tracing::field::Empty;
use tracing::Span;

use super::lock::{self, LockGuard};
use super::{
    applied, apply_call, check_allowed, plan, rewrite_entry, Holder, Outcome, RewriteError, RewriteRequest,
    RewriteResult, APPLY, ATTEMPTS, CLAIM,
};
use crate::audit::{self, AuditEntry};
use crate::connect::Connections;
use crate::recon::{read_products, Reading, ReconError};
use crate::redis_link::{idempotent_script_per_item, product_slot, script_once_per_item};
use crate::step::{again_on_deadlock, Step as _};

/// What became of one request of a batch when the locks were taken.
#[derive(Debug)]
pub enum Started {
    /// The lock was free: the run started, with its token and its fence claimed (or found
    /// taken by a newer token).
    Held(Holder),
    /// Another holder has the product's lock: no run started.
    Busy(RewriteRequest),
}

/// A batch between its steps: the runs it started, in the requests' order.
#[derive(Debug)]
pub struct BatchHolder {
    /// The batch's key: in `rewrite_runs.batch` and in the details of its audit rows.
    pub batch: String,
    pub started: Vec<Started>,
}

impl BatchHolder {
    /// The runs whose lock was free.
    pub fn held(&self) -> impl Iterator<Item = &Holder> {
        self.started.iter().filter_map(|s| match s {
            Started::Held(h) => Some(h),
            Started::Busy(_) => None,
        })
    }

    fn guards(&self) -> Vec<&LockGuard> {
        self.held().map(|h| &h.guard).collect()
    }
}

/// Steps 1 and 2 for every request: the locks, the runs (their ids are the tokens), the
/// fences claimed, older silent runs settled, the intents audited.
pub async fn begin_batch(conns: &Connections, requests: &[RewriteRequest]) -> Result<BatchHolder, RewriteError> {
    for req in requests {
        check_allowed(conns, req)?;
    }
    let batch = lock::new_token();
    let wanted: Vec<(u64, u64)> = requests.iter().map(|r| (r.product_id, r.lock_ttl.as_millis() as u64)).collect();
    let guards = lock::acquire_many(&conns.redis, &conns.keys, &wanted).await?;
    let locked: Vec<&RewriteRequest> =
        requests.iter().zip(&guards).filter(|(_, g)| g.is_some()).map(|(r, _)| r).collect();
    let runs = match start_runs(conns, &batch, &locked).await {
        Ok(runs) => runs,
        Err(e) => {
            let _ = fail_runs(conns, &batch, &e).await;
            let _ = lock::release_many(&conns.redis, &guards.iter().flatten().collect::<Vec<_>>()).await;
            return Err(e);
        }
    };
    let started = requests
        .iter()
        .zip(guards)
        .map(|(req, guard)| match guard {
            Some(guard) => {
                let (fence_token, claimed) = runs[&req.product_id];
                Started::Held(Holder { guard, fence_token, request: req.clone(), claimed })
            }
            None => Started::Busy(req.clone()),
        })
        .collect();
    Ok(BatchHolder { batch, started })
}

/// The runs of the locked requests: product -> (token, fence claimed).
async fn start_runs(
    conns: &Connections,
    batch: &str,
    locked: &[&RewriteRequest],
) -> Result<HashMap<u64, (u64, bool)>, RewriteError> {
    if locked.is_empty() {
        return Ok(HashMap::new());
    }
    // One multi-row INSERT, sent again whole if InnoDB picks it as a deadlock's victim.
    again_on_deadlock(|| async {
        let mut insert =
            sqlx::QueryBuilder::new("INSERT INTO rewrite_runs (product_id, requested_by, reason, dry_run, batch) ");
        insert.push_values(locked, |mut row, req| {
            row.push_bind(req.product_id)
                .push_bind(&conns.settings.actor)
                .push_bind(&req.reason)
                .push_bind(req.dry_run)
                .push_bind(batch);
        });
        insert.build().execute(&conns.mysql).await
    })
    .await
    .step("inserting the batch's rewrite runs (taking their fencing tokens)")?;
    // Each product is locked once, so it has one run in the batch.
    let tokens: HashMap<u64, u64> =
        sqlx::query_as::<_, (u64, u64)>("SELECT product_id, id FROM rewrite_runs WHERE batch = ?")
            .bind(batch)
            .fetch_all(&conns.mysql)
            .await
            .step("reading back the batch's run tokens")?
            .into_iter()
            .collect();
    let token_of =
        |p: u64| tokens.get(&p).copied().ok_or(RewriteError::RunMissing { batch: batch.into(), product_id: p });
    let mut runs = HashMap::with_capacity(locked.len());
    let mut claiming: Vec<(&RewriteRequest, u64)> = Vec::with_capacity(locked.len());
    for req in locked {
        let token = token_of(req.product_id)?;
        if req.dry_run {
            // A dry run claims nothing.
            runs.insert(req.product_id, (token, false));
        } else {
            claiming.push((req, token));
        }
    }
    if claiming.is_empty() {
        return Ok(runs);
    }
    // `max(fence, F)` is idempotent, so a claim sent again (NOSCRIPT on a cluster) is harmless.
    let fences = idempotent_script_per_item(
        &conns.redis,
        &claiming,
        |(req, _)| product_slot(req.product_id),
        &CLAIM,
        |(req, token)| {
            let mut call = CLAIM.key(conns.keys.fence(req.product_id));
            call.arg(*token);
            call
        },
    )
    .await?;
    // From here no older holder of these products can write (their fences are gone), so their
    // runs still RUNNING are settled, all in one statement.
    again_on_deadlock(|| {
        sqlx::query(
            "UPDATE rewrite_runs r JOIN rewrite_runs b ON b.product_id = r.product_id AND r.id < b.id \
             SET r.outcome = 'ABANDONED', r.finished_at = CURRENT_TIMESTAMP(3), \
                 r.error = 'its holder never reported back; a newer rewrite took the fence' \
             WHERE b.batch = ? AND NOT b.dry_run AND r.outcome = 'RUNNING'",
        )
        .bind(batch)
        .execute(&conns.mysql)
    })
    .await
    .step("settling older runs of the batch's products as ABANDONED")?;
    // The intents go on record before anything is written, one row per product with its token.
    let mut intents = Vec::with_capacity(claiming.len());
    for ((req, token), fence) in claiming.iter().zip(&fences) {
        let fence: u64 = redis::from_redis_value(fence)?;
        runs.insert(req.product_id, (*token, fence == *token));
        intents.push(AuditEntry::by(
            &conns.settings,
            "rewrite.begin",
            &format!("product:{}", req.product_id),
            &req.reason,
            if fence == *token { "STARTED" } else { "REFUSED_FENCE" },
            serde_json::json!({ "fence_token": token, "fence": fence, "batch": batch }),
        ));
    }
    again_on_deadlock(|| audit::record_many(&conns.mysql, &intents))
        .await
        .step("writing the batch's intents to the audit log")?;
    Ok(runs)
}

/// Exact readings of `products` (none when it is empty), by product.
async fn read_many(conns: &Connections, products: &[u64]) -> Result<HashMap<u64, Reading>, RewriteError> {
    if products.is_empty() {
        // `read_products` reads every product of the sale when given none.
        return Ok(HashMap::new());
    }
    let mut redis = conns.redis.clone();
    let readings = read_products(&conns.mysql, &mut redis, &conns.keys, products).await?;
    Ok(readings.into_iter().filter_map(|r| Some((r.product_id.as_num()?, r))).collect())
}

/// Step 3 for every run of the batch: one exact reading, in the order of [`BatchHolder::held`].
pub async fn read_batch(conns: &Connections, holder: &BatchHolder) -> Result<Vec<Reading>, RewriteError> {
    let ids: Vec<u64> = holder.held().map(|h| h.request.product_id).collect();
    let mut readings = read_many(conns, &ids).await?;
    ids.iter().map(|p| readings.remove(p).ok_or(RewriteError::Recon(ReconError::UnknownProduct(*p)))).collect()
}

/// Step 4 for every pair: one pipeline of `apply.lua` calls, each under its run's fence.
async fn apply_many(conns: &Connections, pairs: &[(&Holder, &Reading)]) -> Result<Vec<Outcome>, RewriteError> {
    let plans: Vec<_> = pairs.iter().map(|(h, r)| plan(h, r)).collect();
    let writes: Vec<(usize, &Holder, &Reading)> = pairs
        .iter()
        .zip(&plans)
        .enumerate()
        .filter(|(_, (_, plan))| plan.without_write.is_none())
        .map(|(i, ((h, r), _))| (i, *h, *r))
        .collect();
    // An INCRBY must never be sent twice, so the script is loaded before it is called.
    let replies = script_once_per_item(
        &conns.redis,
        &writes,
        |(_, h, _)| product_slot(h.request.product_id),
        &APPLY,
        |(i, h, r)| apply_call(&conns.keys, h, r, &plans[*i]),
    )
    .await?;
    let mut outcomes: Vec<Option<Outcome>> = plans.iter().map(|p| p.without_write).collect();
    for ((i, _, _), reply) in writes.iter().zip(&replies) {
        let (code, _value): (i64, i64) = redis::from_redis_value(reply)?;
        outcomes[*i] = Some(applied(code));
    }
    Ok(outcomes.into_iter().map(|o| o.unwrap_or(Outcome::Changed)).collect())
}

/// Steps 4 to 6 for a batch that read once (a test's stalled holder): write under each
/// fence, read back, record, release.
pub async fn finish_batch(
    conns: &Connections,
    holder: BatchHolder,
    readings: Vec<Reading>,
) -> Result<Vec<RewriteResult>, RewriteError> {
    let pairs: Vec<(&Holder, &Reading)> = holder.held().zip(&readings).collect();
    let outcomes = match apply_many(conns, &pairs).await {
        Ok(outcomes) => outcomes,
        Err(e) => {
            abort_batch(conns, &holder, &e).await;
            return Err(e);
        }
    };
    let done = readings.into_iter().zip(outcomes).filter_map(|(r, o)| Some((r.product_id.as_num()?, (r, o)))).collect();
    record_batch(conns, holder, done).await
}

/// The whole rewrite of many products, in one span: each product its own lock, token, fence
/// and audit rows; a round trip per step for all of them. Results in the requests' order.
#[tracing::instrument(name = "rewrite_batch", skip_all, fields(products = requests.len(), batch = Empty, outcome = Empty))]
pub async fn rewrite_batch(
    conns: &Connections,
    requests: &[RewriteRequest],
) -> Result<Vec<RewriteResult>, RewriteError> {
    let holder = begin_batch(conns, requests).await?;
    Span::current().record("batch", holder.batch.as_str());
    match read_and_apply(conns, &holder).await {
        Ok(done) => record_batch(conns, holder, done).await,
        Err(e) => {
            abort_batch(conns, &holder, &e).await;
            Err(e)
        }
    }
}

/// Steps 3 and 4, reading again (under the same locks) the products Redis moved under.
async fn read_and_apply(
    conns: &Connections,
    holder: &BatchHolder,
) -> Result<HashMap<u64, (Reading, Outcome)>, RewriteError> {
    let mut pending: Vec<&Holder> = holder.held().collect();
    let mut done = HashMap::with_capacity(pending.len());
    for attempt in 1..=ATTEMPTS {
        let ids: Vec<u64> = pending.iter().map(|h| h.request.product_id).collect();
        let mut readings = read_many(conns, &ids).await?;
        let readings: Vec<Reading> = ids
            .iter()
            .map(|p| readings.remove(p).ok_or(RewriteError::Recon(ReconError::UnknownProduct(*p))))
            .collect::<Result<_, _>>()?;
        let pairs: Vec<(&Holder, &Reading)> = pending.iter().copied().zip(&readings).collect();
        let outcomes = apply_many(conns, &pairs).await?;
        let mut again = Vec::new();
        for ((h, reading), outcome) in pending.iter().zip(readings).zip(outcomes) {
            // Redis moved between the reading and the write (a key that came or went, a reset
            // under live sales): nothing was written, so read again under the same lock.
            if outcome == Outcome::Changed && attempt < ATTEMPTS {
                again.push(*h);
            } else {
                done.insert(h.request.product_id, (reading, outcome));
            }
        }
        pending = again;
        if pending.is_empty() {
            break;
        }
    }
    Ok(done)
}

/// Steps 5 and 6: one read-back, one UPDATE of every run, the audit rows, the locks released.
async fn record_batch(
    conns: &Connections,
    holder: BatchHolder,
    mut done: HashMap<u64, (Reading, Outcome)>,
) -> Result<Vec<RewriteResult>, RewriteError> {
    let written: Vec<u64> = holder.held().filter(|h| !h.request.dry_run).map(|h| h.request.product_id).collect();
    let after = match read_many(conns, &written).await {
        Ok(after) => after,
        Err(e) => {
            abort_batch(conns, &holder, &e).await;
            return Err(e);
        }
    };
    let mut results = Vec::with_capacity(holder.started.len());
    for started in &holder.started {
        let result = match started {
            Started::Held(h) => {
                let p = h.request.product_id;
                let (reading, outcome) = done.remove(&p).ok_or(RewriteError::Recon(ReconError::UnknownProduct(p)))?;
                let back = after.get(&p);
                RewriteResult {
                    product_id: p,
                    before: reading.redis_stock,
                    after: back.map_or(reading.redis_stock, |r| r.redis_stock),
                    delta: reading.expected_redis - reading.redis_stock.unwrap_or(0),
                    drift_after: back.map_or(reading.drift, |r| r.drift),
                    fence_token: h.fence_token,
                    audit_id: 0,
                    outcome,
                    reading: Some(reading),
                }
            }
            Started::Busy(req) => RewriteResult::lock_busy(req.product_id),
        };
        results.push(result);
    }
    update_runs(conns, &results).await.step("recording the batch's run outcomes")?;
    audit_results(conns, &holder, &mut results).await?;
    lock::release_many(&conns.redis, &holder.guards()).await?;
    tracing::info!(
        runs = results.iter().filter(|r| r.fence_token > 0).count(),
        busy = results.iter().filter(|r| r.outcome == Outcome::LockBusy).count(),
        "rewrite batch recorded"
    );
    Ok(results)
}

/// Every run's outcome in one UPDATE, joined to a table of the values.
async fn update_runs(conns: &Connections, results: &[RewriteResult]) -> Result<(), sqlx::Error> {
    let sql_int = |v: Option<i64>| v.map_or_else(|| "NULL".to_string(), |v| v.to_string());
    // Only integers we hold and the outcomes' fixed names are inlined: nothing to escape.
    let rows: Vec<String> = results
        .iter()
        .filter(|r| r.fence_token > 0)
        .map(|r| {
            format!(
                "SELECT {} AS id, {} AS observed, {} AS expected, {} AS delta, {} AS after_stock, {} AS drift_after, '{}' AS outcome",
                r.fence_token,
                sql_int(r.before),
                sql_int(r.reading.as_ref().map(|x| x.expected_redis)),
                r.delta,
                sql_int(r.after),
                sql_int(r.drift_after),
                r.outcome.as_str()
            )
        })
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "UPDATE rewrite_runs r JOIN ({}) v ON v.id = r.id \
         SET r.finished_at = CURRENT_TIMESTAMP(3), r.observed_redis = v.observed, r.expected_redis = v.expected, \
             r.delta = v.delta, r.before_stock = v.observed, r.after_stock = v.after_stock, \
             r.drift_after = v.drift_after, r.outcome = v.outcome",
        rows.join(" UNION ALL ")
    );
    again_on_deadlock(|| sqlx::query(&sql).execute(&conns.mysql)).await?;
    Ok(())
}

/// One audit row per request (a busy lock too, as a single rewrite does), in one INSERT; the
/// ids are read back by the batch's key and set on the results.
async fn audit_results(
    conns: &Connections,
    holder: &BatchHolder,
    results: &mut [RewriteResult],
) -> Result<(), RewriteError> {
    let entries: Vec<AuditEntry> = holder
        .started
        .iter()
        .zip(results.iter())
        .map(|(started, result)| {
            let req = match started {
                Started::Held(h) => &h.request,
                Started::Busy(req) => req,
            };
            let mut entry = rewrite_entry(conns, req, result);
            entry.details["batch"] = holder.batch.clone().into();
            entry
        })
        .collect();
    let first = again_on_deadlock(|| audit::record_many(&conns.mysql, &entries))
        .await
        .step("writing the batch's audit rows")?;
    // The statement's rows are the batch's rows from `first` on (its `rewrite.begin` rows were
    // written before), numbered in the statement's order.
    let ids = audit::ids_by_detail(&conns.mysql, first, "batch", &holder.batch)
        .await
        .step("reading back the batch's audit row ids")?;
    for (result, id) in results.iter_mut().zip(ids) {
        result.audit_id = id;
    }
    Ok(())
}

/// A batch that failed between its steps: its runs still RUNNING recorded FAILED with the
/// error, its locks released.
async fn abort_batch(conns: &Connections, holder: &BatchHolder, error: &RewriteError) {
    Span::current().record("outcome", "FAILED");
    let _ = fail_runs(conns, &holder.batch, error).await;
    let _ = lock::release_many(&conns.redis, &holder.guards()).await;
}

async fn fail_runs(conns: &Connections, batch: &str, error: &RewriteError) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE rewrite_runs SET finished_at = CURRENT_TIMESTAMP(3), outcome = 'FAILED', error = ? \
         WHERE batch = ? AND outcome = 'RUNNING'",
    )
    .bind(error.to_string().chars().take(1000).collect::<String>())
    .bind(batch)
    .execute(&conns.mysql)
    .await?;
    Ok(())
}
