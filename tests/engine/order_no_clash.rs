//! Issue 12, finding 7: two buyers given the same order number. Neither may lose their
//! order silently, and neither may be shown the other's.

use crate::sale;
use crate::support;

use std::time::Duration;

use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::keys::Keys;
use stockguard_core::reservation;
use stockguard_engine::engine::consumer::{self, ConsumerConfig};
use stockguard_engine::engine::order_no::{InstanceTag, OrderNumbers};
use stockguard_engine::engine::{ReserveOutcome, ReserveRequest, Reserver};
use support::TestRedis;

const PRODUCT: u64 = 42;
const CLASHING_NO: &str = "2a-18c0000000000abcd0000001";

/// The product on sale, five units a buyer (see `sale::put_on_sale`), and a connection to
/// its Redis.
async fn open_sale(pool: &MySqlPool, redis: &TestRedis, stock: i64) -> stockguard_core::redis_link::RedisLink {
    let mut conn = redis.conn().await;
    sale::put_on_sale(pool, &mut conn, &redis.keys, PRODUCT, (stock, stock), 5).await;
    conn
}

/// Calls the reserve script itself with a chosen order number, as an engine whose numbers
/// clash with another's would: the script's first answer code.
async fn reserve_as(conn: &mut stockguard_core::redis_link::RedisLink, keys: &Keys, order_no: &str, user: u64) -> i64 {
    let (code, _, _, _): (i64, String, u64, String) = redis::Script::new(Reserver::source())
        .key(keys.stock(PRODUCT))
        .key(keys.inflight(PRODUCT))
        .key(keys.buyers(PRODUCT))
        .key(keys.orders_stream(PRODUCT))
        .key(keys.idempotency(PRODUCT))
        .key(keys.seq(PRODUCT))
        .key(keys.epoch(PRODUCT))
        .arg(order_no)
        .arg(user)
        .arg(1)
        .arg(5)
        .arg(format!("{user}:k"))
        .arg(reservation::body(order_no, user, PRODUCT, 1, chrono::Utc::now().timestamp_millis(), "k"))
        .invoke_async(conn)
        .await
        .unwrap();
    code
}

fn consumer_cfg() -> ConsumerConfig {
    ConsumerConfig {
        name: "a".into(),
        batch_size: 200,
        claim_min_idle: Duration::from_secs(60),
        payment_timeout: Duration::from_secs(900),
    }
}

async fn count(pool: &MySqlPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn the_reserve_script_refuses_an_order_number_already_in_flight(pool: MySqlPool) {
    let redis = TestRedis::new("nc0").await;
    let mut conn = open_sale(&pool, &redis, 10).await;

    assert_eq!(reserve_as(&mut conn, &redis.keys, CLASHING_NO, 1).await, 1, "the first buyer reserves");
    assert_eq!(reserve_as(&mut conn, &redis.keys, CLASHING_NO, 2).await, 3, "the number is in use");

    let stock: i64 = conn.get(redis.keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(stock, 9, "only the first buyer's unit is deducted");
    let second: Option<i64> = conn.hget(redis.keys.buyers(PRODUCT), 2).await.unwrap();
    assert_eq!(second, None, "the second buyer is not counted");
    let stream: i64 = conn.xlen(redis.keys.orders_stream(PRODUCT)).await.unwrap();
    assert_eq!(stream, 1, "one message");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_second_buyer_whose_number_is_already_an_order_is_failed_back_and_given_the_unit_back(pool: MySqlPool) {
    let redis = TestRedis::new("nc1").await;
    let mut conn = open_sale(&pool, &redis, 10).await;
    let cfg = consumer_cfg();

    // The first buyer's order is persisted (no longer in flight) before the second buyer is
    // handed the same number: the script cannot see the clash, the DB must.
    assert_eq!(reserve_as(&mut conn, &redis.keys, CLASHING_NO, 1).await, 1);
    consumer::run_once(&pool, &mut conn, &redis.keys, &[PRODUCT], &cfg).await.unwrap();
    assert_eq!(reserve_as(&mut conn, &redis.keys, CLASHING_NO, 2).await, 1);
    let outcome = consumer::run_once(&pool, &mut conn, &redis.keys, &[PRODUCT], &cfg).await.unwrap();

    assert!(outcome.duplicates.is_empty(), "not taken for a redelivery: {outcome:?}");
    let owner: u64 = sqlx::query_scalar("SELECT user_id FROM orders WHERE order_no = ?")
        .bind(CLASHING_NO)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(owner, 1, "the first buyer keeps the order");
    let (user, reason): (u64, String) = sqlx::query_as("SELECT user_id, reason FROM order_failures WHERE order_no = ?")
        .bind(CLASHING_NO)
        .fetch_one(&pool)
        .await
        .expect("the second buyer's order is recorded as failed");
    assert_eq!((user, reason.as_str()), (2, "ORDER_NO_CLASH"));
    assert_eq!(count(&pool, "SELECT stock FROM inventory").await, 9, "the DB sold one unit");
    let stock: i64 = conn.get(redis.keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(stock, 9, "the second buyer's unit is back in Redis");
    let second: i64 = conn.hget(redis.keys.buyers(PRODUCT), 2).await.unwrap();
    assert_eq!(second, 0, "the second buyer may buy again");
    let inflight: i64 = conn.hlen(redis.keys.inflight(PRODUCT)).await.unwrap();
    assert_eq!(inflight, 0);
}

#[sqlx::test(migrations = "./migrations")]
async fn two_messages_with_one_number_in_one_batch_make_one_order_and_one_failure(pool: MySqlPool) {
    let redis = TestRedis::new("nc2").await;
    let mut conn = open_sale(&pool, &redis, 10).await;
    // Both in one batch, as when two engines raced before the script refused clashes: the
    // messages are appended directly (and the stock taken for both).
    for user in [1u64, 2] {
        let body = reservation::body(CLASHING_NO, user, PRODUCT, 1, chrono::Utc::now().timestamp_millis(), "k");
        let _: String = conn
            .xadd(redis.keys.orders_stream(PRODUCT), "*", &[(reservation::BODY_FIELD, body.as_str()), ("seq", "1")])
            .await
            .unwrap();
        let _: i64 = conn.decr(redis.keys.stock(PRODUCT), 1).await.unwrap();
        let _: i64 = conn.hincr(redis.keys.buyers(PRODUCT), user, 1).await.unwrap();
    }
    let _: i64 = conn.hset(redis.keys.inflight(PRODUCT), CLASHING_NO, 1).await.unwrap();

    consumer::run_once(&pool, &mut conn, &redis.keys, &[PRODUCT], &consumer_cfg()).await.unwrap();

    assert_eq!(count(&pool, "SELECT COUNT(*) FROM orders").await, 1);
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM order_failures WHERE reason = 'ORDER_NO_CLASH'").await, 1);
    let stock: i64 = conn.get(redis.keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(stock, 9, "Redis and the DB agree");
    let first: i64 = conn.hget(redis.keys.buyers(PRODUCT), 1).await.unwrap();
    let second: i64 = conn.hget(redis.keys.buyers(PRODUCT), 2).await.unwrap();
    assert_eq!(first + second, 1, "only the buyer who holds the order is counted");
}

#[sqlx::test(migrations = "./migrations")]
async fn two_engines_started_on_one_database_never_share_an_instance_tag(pool: MySqlPool) {
    let a = InstanceTag::claim(&pool, "engine-a").await.unwrap();
    let b = InstanceTag::claim(&pool, "engine-b").await.unwrap();
    assert_ne!(a, b);
    let same_ms = chrono::Utc::now().timestamp_millis();
    assert_ne!(OrderNumbers::new(a).next(PRODUCT, same_ms), OrderNumbers::new(b).next(PRODUCT, same_ms));
}

#[sqlx::test(migrations = "./migrations")]
async fn an_engine_handed_a_number_already_in_flight_retries_with_a_fresh_one(pool: MySqlPool) {
    let redis = TestRedis::new("nc3").await;
    let mut conn = open_sale(&pool, &redis, 10).await;
    let tag = InstanceTag::claim(&pool, "engine-a").await.unwrap();
    // Another reservation holds the number this engine will issue first (its counter's 0)
    // in every millisecond of the next ten seconds.
    let now = chrono::Utc::now().timestamp_millis();
    let taken: Vec<(String, i64)> =
        (now..now + 10_000).map(|ms| (OrderNumbers::new(tag).next(PRODUCT, ms), 1)).collect();
    let _: () = conn.hset_multiple(redis.keys.inflight(PRODUCT), &taken).await.unwrap();

    let req =
        ReserveRequest { user_id: 7, product_id: PRODUCT, qty: 1, idempotency_key: "k".into(), per_user_limit: 5 };
    let outcome = Reserver::new(tag).reserve(&mut conn, &redis.keys, &req).await.unwrap();

    let ReserveOutcome::Reserved { order_no } = outcome else { panic!("{outcome:?}") };
    assert!(!taken.iter().any(|(n, _)| *n == order_no), "a fresh number: {order_no}");
    let stock: i64 = conn.get(redis.keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(stock, 9, "deducted once");
}

#[sqlx::test(migrations = "./migrations")]
async fn each_buyer_of_a_clashed_number_sees_their_own_outcome(pool: MySqlPool) {
    use axum::body::Body;
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;

    let redis = TestRedis::new("nc4").await;
    let mut conn = open_sale(&pool, &redis, 10).await;
    let cfg = consumer_cfg();
    assert_eq!(reserve_as(&mut conn, &redis.keys, CLASHING_NO, 1).await, 1);
    consumer::run_once(&pool, &mut conn, &redis.keys, &[PRODUCT], &cfg).await.unwrap();
    assert_eq!(reserve_as(&mut conn, &redis.keys, CLASHING_NO, 2).await, 1);
    consumer::run_once(&pool, &mut conn, &redis.keys, &[PRODUCT], &cfg).await.unwrap();
    let conns = support::connections(&pool, &redis, stockguard_core::profile::EnvironmentKind::Sandbox).await;
    let state = stockguard_engine::engine::state::EngineState::new(
        conns.mysql,
        conns.redis,
        conns.keys,
        stockguard_engine::engine::state::EngineConfig::default(),
    );

    for (user, expected) in [(1, "WAIT_PAY"), (2, "FAILED")] {
        let req =
            axum::http::Request::get(format!("/orders/{CLASHING_NO}?user_id={user}")).body(Body::empty()).unwrap();
        let resp = stockguard_engine::engine::http::router(state.clone()).oneshot(req).await.unwrap();
        let body: serde_json::Value =
            serde_json::from_slice(&resp.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert_eq!(body["status"], expected, "buyer {user}");
    }
}
