//! The locked, fenced rewrite of Redis stock.

use crate::support;

use std::time::Duration;

use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::action::{Action, Refused};
use stockguard_core::connect::Connections;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::{read_products, DriftStatus, Reading};
use stockguard_core::rewrite::{self, Outcome, RewriteError, RewriteRequest};
use stockguard_engine::sandbox;
use support::TestRedis;

async fn reading(conns: &Connections, product: u64) -> Reading {
    let mut r = conns.redis.clone();
    read_products(&conns.mysql, &mut r, &conns.keys, &[product]).await.unwrap().remove(0)
}

async fn seeded(pool: &MySqlPool, redis: &TestRedis) -> Connections {
    let conns = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    sandbox::seed(&conns, &mut |_| {}).await.unwrap();
    conns
}

fn product_in(status: DriftStatus) -> u64 {
    sandbox::DEMO_PRODUCTS.iter().find(|d| d.status == status).unwrap().id
}

#[sqlx::test(migrations = "./migrations")]
async fn a_rewrite_repairs_redis_high_redis_low_and_a_missing_key_and_audits_each(pool: MySqlPool) {
    let redis = TestRedis::new("rw1").await;
    let conns = seeded(&pool, &redis).await;
    for (status, outcome) in [
        (DriftStatus::RedisHigh, Outcome::Applied),
        (DriftStatus::RedisLow, Outcome::Applied),
        (DriftStatus::KeyMissing, Outcome::Rebuilt),
    ] {
        let p = product_in(status);
        let before = reading(&conns, p).await;
        let result = rewrite::rewrite(&conns, &RewriteRequest::new(p, "repair seeded drift")).await.unwrap();
        assert_eq!(result.outcome, outcome, "{status:?}");
        assert_eq!(result.drift_after, Some(0));
        assert_eq!(result.after, Some(before.expected_redis));
        assert_eq!(result.delta, before.expected_redis - before.redis_stock.unwrap_or(0));
        assert!(result.fence_token > 0 && result.audit_id > 0);
        assert_eq!(reading(&conns, p).await.status, DriftStatus::Ok);
        let run_outcome: String = sqlx::query_scalar("SELECT CAST(outcome AS CHAR) FROM rewrite_runs WHERE id = ?")
            .bind(result.fence_token)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(run_outcome, outcome.as_str());
    }
    let audits = stockguard_core::audit::recent(&pool, Some("rewrite"), 10).await.unwrap();
    assert_eq!(audits.len(), 3);
    assert!(audits.iter().all(|a| a.reason == "repair seeded drift"
        && a.details.as_ref().is_some_and(|d| d["fence_token"].as_u64().is_some())));
}

#[sqlx::test(migrations = "./migrations")]
async fn a_dry_run_shows_what_it_would_write_and_takes_nothing(pool: MySqlPool) {
    let redis = TestRedis::new("rw2").await;
    let conns = seeded(&pool, &redis).await;
    let p = product_in(DriftStatus::RedisHigh);
    let runs_before = support::scalar(&pool, "SELECT COUNT(*) FROM rewrite_runs").await;
    let result =
        rewrite::rewrite(&conns, &RewriteRequest { dry_run: true, ..RewriteRequest::new(p, "look") }).await.unwrap();
    assert_eq!(result.outcome, Outcome::DryRun);
    assert_eq!(result.delta, -sandbox::seed::SEEDED_REDIS_HIGH);
    let expected = result.reading.as_ref().unwrap().expected_redis;
    assert_eq!(result.after, Some(expected), "the value it would write");
    assert_eq!(result.before, Some(expected + sandbox::seed::SEEDED_REDIS_HIGH));
    assert_eq!((result.drift_after, result.fence_token), (Some(0), 0), "the drift it would leave; no token");
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM rewrite_runs").await, runs_before, "no run recorded");
    let mut r = conns.redis.clone();
    let lock: Option<String> = r.get(conns.keys.rewrite_lock(p)).await.unwrap();
    assert_eq!(lock, None, "no lock held or left");
    let after = reading(&conns, p).await;
    assert_eq!(after.drift, Some(sandbox::seed::SEEDED_REDIS_HIGH), "nothing changed");
    let mut r = conns.redis.clone();
    let fence: Option<u64> = r.get(conns.keys.fence(p)).await.unwrap();
    assert_eq!(fence, None, "the fence is untouched");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_holder_paused_past_its_ttl_is_refused_by_the_fence(pool: MySqlPool) {
    let redis = TestRedis::new("rw3").await;
    let conns = seeded(&pool, &redis).await;
    let p = product_in(DriftStatus::RedisHigh);
    let short = RewriteRequest { lock_ttl: Duration::from_millis(150), ..RewriteRequest::new(p, "slow holder") };

    // A takes the lock and reads, then stalls past its TTL.
    let a = rewrite::begin(&conns, &short).await.unwrap().expect("A gets the lock");
    let a_reading = rewrite::read(&conns, &a).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;

    // B gets the expired lock and repairs the drift. Then more drift is injected.
    let b = rewrite::rewrite(&conns, &RewriteRequest::new(p, "fast holder")).await.unwrap();
    assert_eq!(b.outcome, Outcome::Applied);
    assert!(b.fence_token > a.fence_token);
    let mut r = conns.redis.clone();
    let _: () = r.incr(conns.keys.stock(p), 2).await.unwrap();

    // A wakes up and writes its stale delta: refused by the fence.
    let a_result = rewrite::finish(&conns, a, a_reading).await.unwrap();
    assert_eq!(a_result.outcome, Outcome::RefusedFence);
    assert_eq!(reading(&conns, p).await.drift, Some(2), "only the injected drift remains; A wrote nothing");

    let c = rewrite::rewrite(&conns, &RewriteRequest::new(p, "final")).await.unwrap();
    assert_eq!(c.outcome, Outcome::Applied);
    assert_eq!(reading(&conns, p).await.drift, Some(0));
}

#[sqlx::test(migrations = "./migrations")]
async fn eight_concurrent_rewrites_apply_once_per_token_and_leave_no_drift(pool: MySqlPool) {
    let redis = TestRedis::new("rw4").await;
    let conns = seeded(&pool, &redis).await;
    let p = product_in(DriftStatus::RedisLow);
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let conns = conns.clone();
            tokio::spawn(async move {
                rewrite::rewrite(&conns, &RewriteRequest::new(p, &format!("racer {i}"))).await.unwrap()
            })
        })
        .collect();
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap());
    }
    let applied: Vec<_> = results.iter().filter(|r| r.outcome == Outcome::Applied).collect();
    assert_eq!(
        applied.len(),
        1,
        "the drift is repaired once: {:?}",
        results.iter().map(|r| r.outcome).collect::<Vec<_>>()
    );
    assert!(results.iter().all(|r| matches!(r.outcome, Outcome::Applied | Outcome::Noop | Outcome::LockBusy)));
    let mut tokens: Vec<u64> = results.iter().map(|r| r.fence_token).filter(|t| *t > 0).collect();
    let n = tokens.len();
    tokens.sort();
    tokens.dedup();
    assert_eq!(tokens.len(), n, "every run has its own token");
    assert_eq!(reading(&conns, p).await.drift, Some(0));
    let audits = stockguard_core::audit::recent(&pool, Some("rewrite"), 20).await.unwrap();
    assert_eq!(audits.len(), 8, "every attempt is audited, busy ones too");
}

#[sqlx::test(migrations = "./migrations")]
async fn production_needs_the_product_id_typed_and_read_only_refuses(pool: MySqlPool) {
    let redis = TestRedis::new("rw5").await;
    let sandbox_conns = seeded(&pool, &redis).await;
    let p = product_in(DriftStatus::RedisHigh);
    let mut prod = sandbox_conns.clone();
    prod.settings.environment = EnvironmentKind::Production;

    let err = rewrite::rewrite(&prod, &RewriteRequest::new(p, "fix")).await.unwrap_err();
    assert!(matches!(err, RewriteError::ConfirmationRequired(id) if id == p));
    let wrong = rewrite::rewrite(&prod, &RewriteRequest { confirm: Some(p + 1), ..RewriteRequest::new(p, "fix") })
        .await
        .unwrap_err();
    assert!(matches!(wrong, RewriteError::ConfirmationRequired(_)));
    assert_eq!(reading(&prod, p).await.drift, Some(sandbox::seed::SEEDED_REDIS_HIGH), "nothing written");
    let ok =
        rewrite::rewrite(&prod, &RewriteRequest { confirm: Some(p), ..RewriteRequest::new(p, "fix") }).await.unwrap();
    assert_eq!(ok.outcome, Outcome::Applied);

    let mut read_only = sandbox_conns.clone();
    read_only.settings.read_only = true;
    let q = product_in(DriftStatus::RedisLow);
    assert!(matches!(
        rewrite::rewrite(&read_only, &RewriteRequest::new(q, "fix")).await,
        Err(RewriteError::Refused(Refused::ReadOnly { action: Action::RewriteStock }))
    ));
    let dry = rewrite::rewrite(&read_only, &RewriteRequest { dry_run: true, ..RewriteRequest::new(q, "look") })
        .await
        .unwrap();
    assert_eq!(dry.outcome, Outcome::DryRun);
    assert!(matches!(
        rewrite::rewrite(&sandbox_conns, &RewriteRequest::new(q, "  ")).await,
        Err(RewriteError::NoReason)
    ));
}

/// Two holders of one product: A reads, stalls past its lock, B takes the lock and reads the
/// same uncorrected stock. Returns them with their readings, A first.
async fn a_stalled_holder_and_its_successor(
    conns: &Connections,
    p: u64,
) -> ((rewrite::Holder, Reading), (rewrite::Holder, Reading)) {
    let short = RewriteRequest { lock_ttl: Duration::from_millis(100), ..RewriteRequest::new(p, "slow holder") };
    let a = rewrite::begin(conns, &short).await.unwrap().expect("A gets the lock");
    let a_reading = rewrite::read(conns, &a).await.unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    let b = rewrite::begin(conns, &RewriteRequest::new(p, "successor")).await.unwrap().expect("A's lock expired");
    let b_reading = rewrite::read(conns, &b).await.unwrap();
    assert_eq!(a_reading.drift, b_reading.drift, "both read the same uncorrected stock");
    ((a, a_reading), (b, b_reading))
}

#[sqlx::test(migrations = "./migrations")]
async fn a_stale_holders_write_is_refused_even_when_it_reaches_redis_before_its_successors(pool: MySqlPool) {
    let redis = TestRedis::new("rw6").await;
    let conns = seeded(&pool, &redis).await;
    let p = product_in(DriftStatus::RedisLow);
    let ((a, a_reading), (b, b_reading)) = a_stalled_holder_and_its_successor(&conns, p).await;

    let late = rewrite::finish(&conns, a, a_reading).await.unwrap();
    assert_eq!(late.outcome, Outcome::RefusedFence, "A's write arrives first and is refused");
    let current = rewrite::finish(&conns, b, b_reading).await.unwrap();
    assert_eq!(current.outcome, Outcome::Applied);
    assert_eq!(reading(&conns, p).await.drift, Some(0), "corrected once, not twice");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_stale_holders_write_is_refused_when_it_arrives_after_its_successors(pool: MySqlPool) {
    let redis = TestRedis::new("rw7").await;
    let conns = seeded(&pool, &redis).await;
    let p = product_in(DriftStatus::RedisHigh);
    let ((a, a_reading), (b, b_reading)) = a_stalled_holder_and_its_successor(&conns, p).await;

    assert_eq!(rewrite::finish(&conns, b, b_reading).await.unwrap().outcome, Outcome::Applied);
    assert_eq!(rewrite::finish(&conns, a, a_reading).await.unwrap().outcome, Outcome::RefusedFence);
    assert_eq!(reading(&conns, p).await.drift, Some(0));
}

#[sqlx::test(migrations = "./migrations")]
async fn a_rewrite_is_on_record_before_it_writes_and_a_holder_that_never_reports_is_settled(pool: MySqlPool) {
    let redis = TestRedis::new("rw8").await;
    let conns = seeded(&pool, &redis).await;
    let p = product_in(DriftStatus::RedisHigh);
    let short = RewriteRequest { lock_ttl: Duration::from_millis(100), ..RewriteRequest::new(p, "gives up") };
    let a = rewrite::begin(&conns, &short).await.unwrap().expect("A gets the lock");

    // Before A writes anything, its intent is in the audit log with its token.
    let begun = stockguard_core::audit::recent(&pool, Some("rewrite.begin"), 5).await.unwrap();
    assert_eq!(begun.len(), 1);
    assert_eq!(begun[0].outcome, "STARTED");
    assert_eq!(begun[0].details.as_ref().unwrap()["fence_token"].as_u64(), Some(a.fence_token));

    // A's client gives up (A never finishes); the next rewrite settles A's run.
    drop(a);
    tokio::time::sleep(Duration::from_millis(250)).await;
    let next = rewrite::rewrite(&conns, &RewriteRequest::new(p, "after the timeout")).await.unwrap();
    assert_eq!(next.outcome, Outcome::Applied);
    let outcomes: Vec<(u64, String)> =
        sqlx::query_as("SELECT id, CAST(outcome AS CHAR) FROM rewrite_runs WHERE product_id = ? ORDER BY id")
            .bind(p)
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(outcomes[0].1, "ABANDONED", "{outcomes:?}");
    assert_eq!(outcomes[1].1, "APPLIED");
}
