//! The guided exit over many products (issue 16): each product rebuilt in batches, still
//! under its own lock, fencing token and audit rows; and a stalled batch refused by the fence
//! product by product. Against the real MariaDB and Redis.

use crate::support;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::read_products;
use stockguard_core::redis_link::per_product;
use stockguard_core::rewrite::{self, batch, Outcome, RewriteRequest};
use stockguard_core::switch::{self, store, Changer, ExitOptions, ExitStep, Mode, Scope};
use support::TestRedis;

const FIRST: u64 = 5001;
const STOCK: i64 = 20;

/// `n` products from [`FIRST`] on, `STOCK` units each in the DB and in Redis.
async fn products_on_sale(conns: &Connections, n: u64) -> Vec<u64> {
    let ids: Vec<u64> = (FIRST..FIRST + n).collect();
    let mut insert =
        sqlx::QueryBuilder::new("INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) ");
    insert.push_values(&ids, |mut row, &p| {
        row.push_bind(p).push_bind("batch").push_bind(STOCK).push_bind(STOCK).push_bind(3);
    });
    insert.build().execute(&conns.mysql).await.unwrap();
    per_product(&conns.redis, &ids, |pipe, p| {
        pipe.set(conns.keys.stock(p), STOCK);
    })
    .await
    .unwrap();
    ids
}

/// One DB-path order: `(order_no, user, product, units, idempotency key)`.
type DbOrder = (String, u64, u64, i64, String);

/// Sells through the DB: product p gets `1 + p % 3` buyers, each buying `1 + user % 2` units;
/// the DB stock goes down, Redis (not in the sale any more) still says `STOCK`.
async fn sold_through_the_db(conns: &Connections, products: &[u64]) -> Vec<DbOrder> {
    let orders: Vec<DbOrder> = products
        .iter()
        .flat_map(|&p| {
            (1..=1 + p % 3).map(move |u| (format!("db-{p}-{u}"), u, p, 1 + (u % 2) as i64, format!("key-{p}-{u}")))
        })
        .collect();
    let mut insert = sqlx::QueryBuilder::new(
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, idempotency_key, source, pay_deadline) ",
    );
    insert.push_values(&orders, |mut row, (no, u, p, units, key)| {
        row.push_bind(no)
            .push_bind(u)
            .push_bind(p)
            .push_bind(units)
            .push_bind(if u.is_multiple_of(2) { "PAID" } else { "WAIT_PAY" })
            .push_bind(key)
            .push_bind("DB")
            .push_bind(chrono::Utc::now().naive_utc());
    });
    insert.build().execute(&conns.mysql).await.unwrap();
    sqlx::query(
        "UPDATE inventory i JOIN (SELECT product_id, SUM(buy_count) AS sold FROM orders GROUP BY product_id) o \
         ON o.product_id = i.product_id SET i.stock = i.stock - o.sold",
    )
    .execute(&conns.mysql)
    .await
    .unwrap();
    orders
}

async fn in_db_mode(conns: &Connections) {
    let person = Changer::person(&conns.settings).unwrap();
    store::set(&conns.mysql, &person, Scope::Global, Mode::Degraded, "drill: Redis suspected").await.unwrap();
}

async fn drifts(conns: &Connections, products: &[u64]) -> HashMap<u64, Option<i64>> {
    let mut r = conns.redis.clone();
    let readings = read_products(&conns.mysql, &mut r, &conns.keys, products).await.unwrap();
    readings.into_iter().map(|r| (r.product_id.as_num().expect("our own ids are numbers"), r.drift)).collect()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_guided_exit_over_300_products_rebuilds_each_under_its_own_token_and_leaves_no_drift(pool: MySqlPool) {
    let redis = TestRedis::new("xbatch").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let products = products_on_sale(&conns, 300).await;
    in_db_mode(&conns).await;
    let orders = sold_through_the_db(&conns, &products).await;
    // Some keys were lost with Redis too: those products are rebuilt, not corrected.
    let lost: Vec<u64> = products.iter().copied().filter(|p| p.is_multiple_of(50)).collect();
    per_product(&conns.redis, &lost, |pipe, p| {
        pipe.del(conns.keys.stock(p));
    })
    .await
    .unwrap();

    let rebuilt = Mutex::new(Vec::new());
    let opts = ExitOptions {
        ack_timeout: Duration::from_millis(300),
        // Chunks of 128: the 300 products take three batches, the last one partial.
        rebuild: switch::RebuildPath::Batched { chunk: 128 },
        ..ExitOptions::new(Scope::Global, "Redis is back")
    };
    let report = switch::guided_exit(&conns, &opts, &|step| {
        if let ExitStep::Rebuilt { product_id, .. } = step {
            rebuilt.lock().unwrap().push(*product_id);
        }
    })
    .await
    .unwrap();

    let mut seen = rebuilt.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, products, "one progress event per product");
    assert!(drifts(&conns, &products).await.values().all(|d| *d == Some(0)), "no drift after the exit");
    for r in &report.rewrites {
        let want = if lost.contains(&r.product_id) { Outcome::Rebuilt } else { Outcome::Applied };
        assert_eq!(r.outcome, want, "product {}", r.product_id);
        assert!(r.fence_token > 0 && r.audit_id > 0, "{r:?}");
    }
    let tokens: HashSet<u64> = report.rewrites.iter().map(|r| r.fence_token).collect();
    assert_eq!(tokens.len(), 300, "every product has its own token");

    // Each run is its own row, whose id is the product's token, in one of three batches.
    let runs: Vec<(u64, u64, String, Option<String>)> =
        sqlx::query_as("SELECT id, product_id, CAST(outcome AS CHAR), batch FROM rewrite_runs")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(runs.len(), 300);
    let token_of: HashMap<u64, u64> = report.rewrites.iter().map(|r| (r.product_id, r.fence_token)).collect();
    for (id, product, outcome, _) in &runs {
        assert_eq!(token_of[product], *id, "the run of product {product} is its token");
        assert!(outcome == "APPLIED" || outcome == "REBUILT", "{outcome}");
    }
    let batches: HashSet<_> = runs.iter().map(|r| r.3.clone().expect("a batch key")).collect();
    assert_eq!(batches.len(), 3);

    // The fence of each product is its own token.
    let fences = per_product(&conns.redis, &products, |pipe, p| {
        pipe.get(conns.keys.fence(p));
    })
    .await
    .unwrap();
    for (p, fence) in products.iter().zip(fences) {
        let fence: u64 = redis::from_redis_value(&fence[0]).unwrap();
        assert_eq!(fence, token_of[p]);
    }

    // Every product has its intent and its outcome on record, naming its token.
    for (action, outcomes) in [("rewrite.begin", ["STARTED", "STARTED"]), ("rewrite", ["APPLIED", "REBUILT"])] {
        let rows = stockguard_core::audit::recent(&pool, Some(action), 1000).await.unwrap();
        assert_eq!(rows.len(), 300, "{action}");
        for row in rows {
            let p: u64 = row.target.strip_prefix("product:").unwrap().parse().unwrap();
            let details = row.details.unwrap();
            assert_eq!(details["fence_token"].as_u64(), Some(token_of[&p]), "{action} of {p}");
            assert!(outcomes.contains(&row.outcome.as_str()), "{action}: {}", row.outcome);
            if action == "rewrite" {
                let result = report.rewrites.iter().find(|r| r.product_id == p).unwrap();
                assert_eq!(result.audit_id, row.id, "the result names its audit row");
            }
        }
    }

    // Per-user counts and idempotency entries are those of the orders sold through the DB.
    let hashes = per_product(&conns.redis, &products, |pipe, p| {
        pipe.hgetall(conns.keys.buyers(p)).hgetall(conns.keys.idempotency(p));
    })
    .await
    .unwrap();
    for (p, replies) in products.iter().zip(hashes) {
        let buyers: HashMap<u64, i64> = redis::from_redis_value(&replies[0]).unwrap();
        let idem: HashMap<String, String> = redis::from_redis_value(&replies[1]).unwrap();
        let mine: Vec<&DbOrder> = orders.iter().filter(|o| o.2 == *p).collect();
        let want: HashMap<u64, i64> = mine.iter().map(|(_, u, _, units, _)| (*u, *units)).collect();
        assert_eq!(buyers, want, "buyers of {p}");
        let want: HashMap<String, String> =
            mine.iter().map(|(no, u, _, _, key)| (format!("{u}:{key}"), no.clone())).collect();
        assert_eq!(idem, want, "idempotency entries of {p}");
    }
    let exits = stockguard_core::audit::recent(&pool, Some("degrade.exit"), 5).await.unwrap();
    assert_eq!(exits[0].outcome, "COMPLETED");
}

/// A batch of `products` that took its locks (short-lived) and fences, and read.
async fn a_stalled_batch(
    conns: &Connections,
    products: &[u64],
) -> (batch::BatchHolder, Vec<stockguard_core::recon::Reading>) {
    let requests: Vec<RewriteRequest> = products
        .iter()
        .map(|&p| RewriteRequest { lock_ttl: Duration::from_millis(100), ..RewriteRequest::new(p, "slow batch") })
        .collect();
    let a = batch::begin_batch(conns, &requests).await.unwrap();
    assert!(a.held().all(|h| h.claimed), "the stalled batch claimed every fence");
    let readings = batch::read_batch(conns, &a).await.unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    (a, readings)
}

/// Products whose Redis stock is 3 units above what the DB says.
async fn drifting_products(conns: &Connections, n: u64) -> Vec<u64> {
    let products = products_on_sale(conns, n).await;
    per_product(&conns.redis, &products, |pipe, p| {
        pipe.incr(conns.keys.stock(p), 3);
    })
    .await
    .unwrap();
    products
}

#[sqlx::test(migrations = "./migrations")]
async fn a_stale_batch_whose_fences_a_newer_batch_claimed_writes_nothing(pool: MySqlPool) {
    let redis = TestRedis::new("xbstale").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let products = drifting_products(&conns, 20).await;
    let (a, a_readings) = a_stalled_batch(&conns, &products).await;

    // B takes the expired locks, claims newer fences and repairs the drift; more drift follows.
    let requests: Vec<RewriteRequest> = products.iter().map(|&p| RewriteRequest::new(p, "newer batch")).collect();
    let b = rewrite::rewrite_batch(&conns, &requests).await.unwrap();
    assert!(b.iter().all(|r| r.outcome == Outcome::Applied), "{b:?}");
    per_product(&conns.redis, &products, |pipe, p| {
        pipe.incr(conns.keys.stock(p), 2);
    })
    .await
    .unwrap();

    // A wakes up and writes its stale deltas: every one refused by its product's fence.
    let a_tokens: Vec<u64> = a.held().map(|h| h.fence_token).collect();
    let late = batch::finish_batch(&conns, a, a_readings).await.unwrap();
    assert!(late.iter().all(|r| r.outcome == Outcome::RefusedFence), "{late:?}");
    assert!(
        drifts(&conns, &products).await.values().all(|d| *d == Some(2)),
        "only the injected drift; A wrote nothing"
    );
    for (token, newer) in a_tokens.iter().zip(&b) {
        assert!(newer.fence_token > *token);
        let outcome: String = sqlx::query_scalar("SELECT CAST(outcome AS CHAR) FROM rewrite_runs WHERE id = ?")
            .bind(token)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(outcome, "REFUSED_FENCE");
    }
    let mut r = conns.redis.clone();
    let lock: Option<String> = r.get(conns.keys.rewrite_lock(products[0])).await.unwrap();
    assert_eq!(lock, None, "no lock left behind");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_stale_batch_is_refused_even_when_its_writes_reach_redis_before_its_successors(pool: MySqlPool) {
    let redis = TestRedis::new("xbfirst").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let products = drifting_products(&conns, 20).await;
    let (a, a_readings) = a_stalled_batch(&conns, &products).await;
    let requests: Vec<RewriteRequest> = products.iter().map(|&p| RewriteRequest::new(p, "successor")).collect();
    let b = batch::begin_batch(&conns, &requests).await.expect("A's locks expired");
    let b_readings = batch::read_batch(&conns, &b).await.unwrap();

    let late = batch::finish_batch(&conns, a, a_readings).await.unwrap();
    assert!(late.iter().all(|r| r.outcome == Outcome::RefusedFence), "A's writes arrive first and are refused");
    let current = batch::finish_batch(&conns, b, b_readings).await.unwrap();
    assert!(current.iter().all(|r| r.outcome == Outcome::Applied), "{current:?}");
    assert!(drifts(&conns, &products).await.values().all(|d| *d == Some(0)), "corrected once, not twice");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_batch_skips_a_product_whose_lock_is_held_and_settles_a_run_that_never_reported(pool: MySqlPool) {
    let redis = TestRedis::new("xbbusy").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let products = drifting_products(&conns, 3).await;
    // A single rewrite of the first product holds its lock; one of the second gave up long ago.
    let holding = rewrite::begin(&conns, &RewriteRequest::new(products[0], "holding")).await.unwrap().unwrap();
    let short = RewriteRequest { lock_ttl: Duration::from_millis(50), ..RewriteRequest::new(products[1], "gave up") };
    let gave_up = rewrite::begin(&conns, &short).await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;

    let requests: Vec<RewriteRequest> = products.iter().map(|&p| RewriteRequest::new(p, "batch")).collect();
    let results = rewrite::rewrite_batch(&conns, &requests).await.unwrap();
    let outcomes: Vec<Outcome> = results.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::LockBusy, Outcome::Applied, Outcome::Applied]);
    assert_eq!(results[0].fence_token, 0, "no run started for the busy product");
    assert!(results.iter().all(|r| r.audit_id > 0), "a busy product is audited too");
    let abandoned: String = sqlx::query_scalar("SELECT CAST(outcome AS CHAR) FROM rewrite_runs WHERE id = ?")
        .bind(gave_up.fence_token)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(abandoned, "ABANDONED");
    let still: String = sqlx::query_scalar("SELECT CAST(outcome AS CHAR) FROM rewrite_runs WHERE id = ?")
        .bind(holding.fence_token)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(still, "RUNNING", "the holder of the busy lock is not settled");
}
