//! The order path's Redis and DB halves: reserve in Redis, persist exactly once.

use crate::sale;
use crate::support;

use std::sync::Arc;
use std::time::Duration;

use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::keys::Keys;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_engine::engine::consumer::{self, ConsumerConfig};
use stockguard_engine::engine::persist;
use stockguard_engine::engine::{ReserveOutcome, ReserveRequest};
use support::TestRedis;

const PRODUCT: u64 = 42;

/// The product on sale (see `sale::put_on_sale`), and a connection to its Redis.
async fn open_sale(
    pool: &MySqlPool,
    redis: &TestRedis,
    db_stock: i64,
    redis_stock: i64,
    limit: i64,
) -> stockguard_core::redis_link::RedisLink {
    let mut conn = redis.conn().await;
    sale::put_on_sale(pool, &mut conn, &redis.keys, PRODUCT, (db_stock, redis_stock), limit).await;
    conn
}

fn request(user_id: u64, qty: i64, idem: &str) -> ReserveRequest {
    ReserveRequest { user_id, product_id: PRODUCT, qty, idempotency_key: idem.into(), per_user_limit: 1 }
}

fn consumer_named(name: &str) -> ConsumerConfig {
    ConsumerConfig {
        name: name.into(),
        batch_size: 200,
        claim_min_idle: Duration::from_secs(60),
        payment_timeout: Duration::from_secs(900),
    }
}

/// Runs consumers until a pass finds nothing to do.
async fn drain(pool: &MySqlPool, conn: &mut stockguard_core::redis_link::RedisLink, keys: &Keys, cfg: &ConsumerConfig) {
    for _ in 0..1000 {
        let o = consumer::run_once(pool, conn, keys, &[PRODUCT], cfg).await.unwrap();
        if o.persisted.is_empty() && o.duplicates.is_empty() && o.failed.is_empty() {
            return;
        }
    }
    panic!("the stream did not drain");
}

async fn count(pool: &MySqlPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

/// Both identities of the contract hold for the product, and nothing is left in flight.
async fn assert_conserved(pool: &MySqlPool, conn: &mut stockguard_core::redis_link::RedisLink, keys: &Keys) {
    let r = &read_products(pool, conn, keys, &[PRODUCT]).await.unwrap()[0];
    assert_eq!(r.initial_stock, r.db_stock + r.live_orders_qty, "DB ledger: {r:?}");
    assert_eq!(r.drift, Some(0), "Redis side: {r:?}");
    assert_eq!(r.status, DriftStatus::Ok);
    let inflight: i64 = conn.hlen(keys.inflight(PRODUCT)).await.unwrap();
    assert_eq!(inflight, 0, "nothing left in flight");
    let pending: redis::streams::StreamPendingReply =
        conn.xpending(keys.orders_stream(PRODUCT), "persist").await.unwrap();
    assert_eq!(pending.count(), 0, "every message acknowledged");
    let stream: i64 = conn.xlen(keys.orders_stream(PRODUCT)).await.unwrap();
    assert_eq!(stream, 0, "acknowledged messages are deleted");
}

#[sqlx::test(migrations = "./migrations")]
async fn reserve_returns_sold_out_when_stock_is_zero(pool: MySqlPool) {
    let redis = TestRedis::new("r0").await;
    let mut conn = open_sale(&pool, &redis, 0, 0, 1).await;
    let out = sale::reserver(&pool).await.reserve(&mut conn, &redis.keys, &request(1, 1, "a")).await.unwrap();
    assert_eq!(out, ReserveOutcome::SoldOut);
}

#[sqlx::test(migrations = "./migrations")]
async fn reserve_tells_a_missing_stock_key_apart_from_a_sell_out(pool: MySqlPool) {
    let redis = TestRedis::new("r1").await;
    let mut conn = open_sale(&pool, &redis, 5, 5, 1).await;
    let _: () = conn.del(redis.keys.stock(PRODUCT)).await.unwrap();
    let out = sale::reserver(&pool).await.reserve(&mut conn, &redis.keys, &request(1, 1, "a")).await.unwrap();
    assert_eq!(out, ReserveOutcome::NotReady);
    let stream_len: i64 = conn.xlen(redis.keys.orders_stream(PRODUCT)).await.unwrap();
    assert_eq!(stream_len, 0, "nothing reserved");
}

#[sqlx::test(migrations = "./migrations")]
async fn reserve_enforces_the_per_user_limit(pool: MySqlPool) {
    let redis = TestRedis::new("r2").await;
    let mut conn = open_sale(&pool, &redis, 5, 5, 1).await;
    let reserver = sale::reserver(&pool).await;
    assert!(matches!(
        reserver.reserve(&mut conn, &redis.keys, &request(7, 1, "a")).await.unwrap(),
        ReserveOutcome::Reserved { .. }
    ));
    assert_eq!(
        reserver.reserve(&mut conn, &redis.keys, &request(7, 1, "b")).await.unwrap(),
        ReserveOutcome::LimitReached
    );
    let stock: i64 = conn.get(redis.keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(stock, 4);
}

#[sqlx::test(migrations = "./migrations")]
async fn replaying_an_idempotency_key_returns_the_same_order_and_reserves_once(pool: MySqlPool) {
    let redis = TestRedis::new("r3").await;
    let mut conn = open_sale(&pool, &redis, 5, 5, 3).await;
    let reserver = sale::reserver(&pool).await;
    let first = reserver.reserve(&mut conn, &redis.keys, &request(9, 1, "same")).await.unwrap();
    let again = reserver.reserve(&mut conn, &redis.keys, &request(9, 1, "same")).await.unwrap();
    let ReserveOutcome::Reserved { order_no } = first else { panic!("{first:?}") };
    assert_eq!(again, ReserveOutcome::Replayed { order_no });
    let stock: i64 = conn.get(redis.keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(stock, 4, "deducted once");
}

#[sqlx::test(migrations = "./migrations")]
async fn five_thousand_buyers_for_one_thousand_units_get_exactly_one_thousand_orders(pool: MySqlPool) {
    let redis = TestRedis::new("r4").await;
    let mut conn = open_sale(&pool, &redis, 1000, 1000, 1).await;
    let reserver = Arc::new(sale::reserver(&pool).await);
    let keys = redis.keys.clone();

    let tasks: Vec<_> = (0..5000u64)
        .map(|user| {
            let (reserver, keys, mut conn) = (reserver.clone(), keys.clone(), conn.clone());
            tokio::spawn(async move { reserver.reserve(&mut conn, &keys, &request(user, 1, "k")).await.unwrap() })
        })
        .collect();
    let mut accepted = 0;
    let mut sold_out = 0;
    for t in tasks {
        match t.await.unwrap() {
            ReserveOutcome::Reserved { .. } => accepted += 1,
            ReserveOutcome::SoldOut => sold_out += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((accepted, sold_out), (1000, 4000));

    // Two consumers drain the stream side by side.
    let (p2, k2, mut c2) = (pool.clone(), keys.clone(), conn.clone());
    let other = tokio::spawn(async move { drain(&p2, &mut c2, &k2, &consumer_named("b")).await });
    drain(&pool, &mut conn, &keys, &consumer_named("a")).await;
    other.await.unwrap();

    assert_eq!(count(&pool, "SELECT COUNT(*) FROM orders").await, 1000);
    assert_eq!(count(&pool, "SELECT COUNT(DISTINCT user_id) FROM orders").await, 1000);
    assert_eq!(count(&pool, "SELECT stock FROM inventory").await, 0);
    let redis_stock: i64 = conn.get(keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(redis_stock, 0);
    assert_conserved(&pool, &mut conn, &keys).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_message_delivered_twice_creates_one_order(pool: MySqlPool) {
    let redis = TestRedis::new("r5").await;
    let mut conn = open_sale(&pool, &redis, 10, 10, 1).await;
    let reserver = sale::reserver(&pool).await;
    for user in 0..3 {
        reserver.reserve(&mut conn, &redis.keys, &request(user, 1, "k")).await.unwrap();
    }
    let cfg = consumer_named("a");
    let batch = consumer::read_new(&mut conn, &redis.keys, PRODUCT, &cfg).await.unwrap();
    assert_eq!(batch.len(), 3);

    let first =
        persist::persist_batch(&pool, &mut conn, &redis.keys, PRODUCT, &batch, cfg.payment_timeout).await.unwrap();
    let second =
        persist::persist_batch(&pool, &mut conn, &redis.keys, PRODUCT, &batch, cfg.payment_timeout).await.unwrap();

    assert_eq!(first.persisted.len(), 3);
    assert!(second.persisted.is_empty() && second.failed.is_empty());
    assert_eq!(second.duplicates.len(), 3, "recognised by the unique order number");
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM orders").await, 3);
    assert_eq!(count(&pool, "SELECT stock FROM inventory").await, 7, "stock deducted once");
    assert_conserved(&pool, &mut conn, &redis.keys).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_consumer_killed_before_acknowledging_loses_nothing_and_duplicates_nothing(pool: MySqlPool) {
    let redis = TestRedis::new("r6").await;
    let mut conn = open_sale(&pool, &redis, 50, 50, 1).await;
    let reserver = sale::reserver(&pool).await;
    for user in 0..20 {
        reserver.reserve(&mut conn, &redis.keys, &request(user, 1, "k")).await.unwrap();
    }
    // Consumer A takes 10 messages and dies before writing anything.
    let mut a = consumer_named("a");
    a.batch_size = 10;
    let lost_with_a = consumer::read_new(&mut conn, &redis.keys, PRODUCT, &a).await.unwrap();
    assert_eq!(lost_with_a.len(), 10);
    // Consumer C takes the other 10, commits them to the DB and dies before confirming in
    // Redis (an engine restarted in the middle of a batch).
    let mut c = consumer_named("c");
    c.batch_size = 10;
    let committed_by_c = consumer::read_new(&mut conn, &redis.keys, PRODUCT, &c).await.unwrap();
    persist::write_batch(&pool, PRODUCT, &committed_by_c, c.payment_timeout).await.unwrap();

    // Consumer B reclaims everything idle and finishes the job.
    let mut b = consumer_named("b");
    b.claim_min_idle = Duration::from_millis(0);
    let outcome = consumer::run_once(&pool, &mut conn, &redis.keys, &[PRODUCT], &b).await.unwrap();

    assert_eq!(outcome.persisted.len(), 10);
    assert_eq!(outcome.duplicates.len(), 10);
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM orders").await, 20);
    assert_eq!(count(&pool, "SELECT stock FROM inventory").await, 30);
    assert_conserved(&pool, &mut conn, &redis.keys).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn orders_redis_over_issued_are_failed_and_recorded_not_oversold(pool: MySqlPool) {
    let redis = TestRedis::new("r7").await;
    // Redis believes in 10 units, the DB has 5: Redis will over-issue.
    let mut conn = open_sale(&pool, &redis, 5, 10, 1).await;
    let reserver = sale::reserver(&pool).await;
    for user in 0..10 {
        let out = reserver.reserve(&mut conn, &redis.keys, &request(user, 1, "k")).await.unwrap();
        assert!(matches!(out, ReserveOutcome::Reserved { .. }));
    }
    drain(&pool, &mut conn, &redis.keys, &consumer_named("a")).await;

    assert_eq!(count(&pool, "SELECT COUNT(*) FROM orders").await, 5);
    assert_eq!(count(&pool, "SELECT stock FROM inventory").await, 0);
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM order_failures").await, 5);
    let buyers_left: i64 = count(&pool, "SELECT COUNT(*) FROM order_failures").await;
    let mut given_back = 0;
    for user in 0..10u64 {
        let units: Option<i64> = conn.hget(redis.keys.buyers(PRODUCT), user).await.unwrap();
        if units == Some(0) {
            given_back += 1;
        }
    }
    assert_eq!(given_back, buyers_left, "refused buyers may try again");
    let inflight: i64 = conn.hlen(redis.keys.inflight(PRODUCT)).await.unwrap();
    assert_eq!(inflight, 0);
}

#[sqlx::test(migrations = "./migrations")]
async fn one_pass_persists_the_new_messages_of_many_products_even_with_one_idempotency_key(pool: MySqlPool) {
    let redis = TestRedis::new("r8").await;
    let mut conn = redis.conn().await;
    let products: Vec<u64> = (100..103).collect();
    let reserver = sale::reserver(&pool).await;
    for &p in &products {
        sqlx::query(
            "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) VALUES (?, 'p', 5, 5, 1)",
        )
        .bind(p)
        .execute(&pool)
        .await
        .unwrap();
        let _: () = conn.set(redis.keys.stock(p), 5).await.unwrap();
        consumer::ensure_group(&mut conn, &redis.keys, p).await.unwrap();
        for user in 0..2 {
            let req =
                ReserveRequest { user_id: user, product_id: p, qty: 1, idempotency_key: "k".into(), per_user_limit: 1 };
            reserver.reserve(&mut conn, &redis.keys, &req).await.unwrap();
        }
    }

    let outcome =
        consumer::run_pass(&pool, &mut conn, &redis.keys, &products, &consumer_named("a"), false).await.unwrap();

    // The same buyers used the same idempotency key for every product: a key is scoped to
    // (buyer, product), in Redis and in the DB alike, so all six are distinct orders.
    assert_eq!(outcome.persisted.len(), 6, "{outcome:?}");
    for &p in &products {
        let orders: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE product_id = ?")
            .bind(p)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(orders, 2, "product {p}");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn a_malformed_message_is_left_pending_while_the_good_ones_beside_it_are_persisted(pool: MySqlPool) {
    let redis = TestRedis::new("malformed").await;
    let mut conn = open_sale(&pool, &redis, 10, 10, 1).await;
    let reserver = sale::reserver(&pool).await;
    reserver.reserve(&mut conn, &redis.keys, &request(1, 1, "a")).await.unwrap();
    // A writer that forgot the quantity, between two good reservations.
    let bad_id: String = redis::cmd("XADD")
        .arg(redis.keys.orders_stream(PRODUCT))
        .arg("*")
        .arg(&["order_no", "BAD-1", "user_id", "9", "product_id", "42", "idem", "x", "ts", "1", "seq", "9"])
        .query_async(&mut conn)
        .await
        .unwrap();
    reserver.reserve(&mut conn, &redis.keys, &request(2, 1, "b")).await.unwrap();

    let cfg = consumer_named("c1");
    let outcome = consumer::run_once(&pool, &mut conn, &redis.keys, &[PRODUCT], &cfg).await.unwrap();

    assert_eq!(outcome.persisted.len(), 2);
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM orders").await, 2);
    let pending: redis::streams::StreamPendingReply =
        conn.xpending(redis.keys.orders_stream(PRODUCT), stockguard_core::keys::PERSIST_GROUP).await.unwrap();
    assert_eq!(pending.count(), 1, "only the malformed message stays pending");
    let held: redis::streams::StreamPendingCountReply = conn
        .xpending_count(redis.keys.orders_stream(PRODUCT), stockguard_core::keys::PERSIST_GROUP, "-", "+", 10)
        .await
        .unwrap();
    assert_eq!(held.ids[0].id, bad_id);
}

#[sqlx::test(migrations = "./migrations")]
async fn idempotency_keys_that_differ_only_in_case_or_a_trailing_space_are_different_orders_in_the_db_too(
    pool: MySqlPool,
) {
    let redis = TestRedis::new("r-idem-bytes").await;
    let mut conn = open_sale(&pool, &redis, 10, 10, 3).await;
    let reserver = sale::reserver(&pool).await;
    for key in ["pay", "PAY", "pay "] {
        let req = ReserveRequest { per_user_limit: 3, ..request(7, 1, key) };
        let outcome = reserver.reserve(&mut conn, &redis.keys, &req).await.unwrap();
        assert!(matches!(outcome, ReserveOutcome::Reserved { .. }), "{key:?}: {outcome:?}");
    }

    drain(&pool, &mut conn, &redis.keys, &consumer_named("c1")).await;

    // Redis compares keys byte for byte; a DB that compared them case-blind (or ignoring a
    // trailing space) would refuse two of the three accepted orders.
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM orders").await, 3);
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM order_failures").await, 0);
    assert_conserved(&pool, &mut conn, &redis.keys).await;
}
