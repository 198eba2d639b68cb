//! Issue 12, finding 8: a stream that comes back without its `persist` group (Redis
//! restarted without its data, the group destroyed) must not stop the consumers: they
//! recreate the group and persist what was reserved since, without an engine restart.

use crate::sale;
use crate::support;

use std::time::Duration;

use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::keys::PERSIST_GROUP;
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};
use stockguard_engine::engine::consumer::{self, ConsumerConfig};
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::engine::{ReserveOutcome, ReserveRequest};
use support::redis_server::RedisServer;
use support::TestRedis;

const PRODUCT: u64 = 77;

fn request(user_id: u64) -> ReserveRequest {
    ReserveRequest { user_id, product_id: PRODUCT, qty: 1, idempotency_key: "k".into(), per_user_limit: 5 }
}

/// Reserves through the engine's own reserver and connection, retrying while the connection
/// manager reconnects after the restart.
async fn reserve(state: &EngineState, user_id: u64) -> String {
    for _ in 0..100 {
        let mut redis = state.redis.clone();
        match state.reserver().await.unwrap().reserve(&mut redis, &state.keys, &request(user_id)).await {
            Ok(ReserveOutcome::Reserved { order_no }) => return order_no,
            Ok(other) => panic!("{other:?}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    panic!("Redis did not come back")
}

/// Waits until the order is a row in the DB; false after `secs`.
async fn persisted_within(pool: &MySqlPool, order_no: &str, secs: u64) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while tokio::time::Instant::now() < deadline {
        let found: Option<i32> = sqlx::query_scalar("SELECT 1 FROM orders WHERE order_no = ?")
            .bind(order_no)
            .fetch_optional(pool)
            .await
            .unwrap();
        if found.is_some() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[sqlx::test(migrations = "./migrations")]
async fn after_a_redis_restart_new_orders_are_persisted_without_restarting_the_engine(pool: MySqlPool) {
    let mut server = RedisServer::start().await;
    let settings = ConnectionSettings::from_urls(
        EnvironmentKind::Sandbox,
        &support::mysql_url_of(&pool).await,
        &server.url(),
        "sg",
    );
    let conns = Connections::open(settings).await.unwrap();
    sale::open_sale(&conns, PRODUCT, 10, 5).await;
    let state = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let consumers = tokio::spawn(stockguard_engine::engine::run::run_consumers(state.clone(), stopped));

    let before = reserve(&state, 1).await;
    assert!(persisted_within(&pool, &before, 10).await, "the consumers work before the restart");

    server.restart_empty().await;
    // Stock is put back after the loss (the rewrite would rebuild it); the stream comes back
    // with the next reservation, without its group.
    let mut r = conns.redis.clone();
    for _ in 0..100 {
        if r.set::<_, _, ()>(conns.keys.stock(PRODUCT), 9).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after = reserve(&state, 2).await;

    let persisted = persisted_within(&pool, &after, 10).await;
    let _ = stop.send(true);
    consumers.await.unwrap();
    assert!(persisted, "an order accepted after the restart is persisted by the running consumers");
}

fn consumer_cfg() -> ConsumerConfig {
    ConsumerConfig {
        name: "a".into(),
        batch_size: 200,
        claim_min_idle: Duration::from_millis(0),
        payment_timeout: Duration::from_secs(900),
    }
}

/// A sale whose group was destroyed after one reservation was appended.
async fn sale_without_its_group(
    pool: &MySqlPool,
    redis: &TestRedis,
) -> (stockguard_core::redis_link::RedisLink, String) {
    let conns = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, 10, 5).await;
    let mut conn = redis.conn().await;
    let reserver = sale::reserver(pool).await;
    let ReserveOutcome::Reserved { order_no } = reserver.reserve(&mut conn, &redis.keys, &request(1)).await.unwrap()
    else {
        panic!("reserved")
    };
    let _: i64 = redis::cmd("XGROUP")
        .arg("DESTROY")
        .arg(redis.keys.orders_stream(PRODUCT))
        .arg(PERSIST_GROUP)
        .query_async(&mut conn)
        .await
        .unwrap();
    (conn, order_no)
}

#[sqlx::test(migrations = "./migrations")]
async fn a_pass_that_reclaims_recreates_a_destroyed_group_and_persists_the_stream(pool: MySqlPool) {
    let redis = TestRedis::new("cg1").await;
    let (mut conn, order_no) = sale_without_its_group(&pool, &redis).await;

    let outcome = consumer::run_once(&pool, &mut conn, &redis.keys, &[PRODUCT], &consumer_cfg()).await;

    assert_eq!(outcome.expect("no NOGROUP error").persisted, vec![order_no]);
}

#[sqlx::test(migrations = "./migrations")]
async fn recovering_own_messages_recreates_a_destroyed_group(pool: MySqlPool) {
    let redis = TestRedis::new("cg2").await;
    let (mut conn, order_no) = sale_without_its_group(&pool, &redis).await;

    consumer::recover_own(&pool, &mut conn, &redis.keys, &[PRODUCT], &consumer_cfg()).await.expect("no NOGROUP error");
    let outcome = consumer::run_pass(&pool, &mut conn, &redis.keys, &[PRODUCT], &consumer_cfg(), false).await;

    assert_eq!(outcome.expect("no NOGROUP error").persisted, vec![order_no]);
}

#[sqlx::test(migrations = "./migrations")]
async fn one_products_missing_stream_does_not_hide_the_backlog_of_the_others(pool: MySqlPool) {
    let redis = TestRedis::new("cg4").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let reserver = sale::reserver(&pool).await;
    let mut r = conns.redis.clone();
    // Three products with reservations not yet persisted: 2, 3 and 1 of them.
    for (p, buyers) in [(1u64, 2u64), (2, 3), (3, 1)] {
        sale::open_sale(&conns, p, 10, 5).await;
        for user in 0..buyers {
            let req =
                ReserveRequest { user_id: user, product_id: p, qty: 1, idempotency_key: "k".into(), per_user_limit: 5 };
            assert!(matches!(
                reserver.reserve(&mut r, &conns.keys, &req).await.unwrap(),
                ReserveOutcome::Reserved { .. }
            ));
        }
    }
    // Product 3's stream is lost; product 2's stream lost its group.
    let _: () = r.del(conns.keys.orders_stream(3)).await.unwrap();
    let _: () = redis::cmd("XGROUP")
        .arg("DESTROY")
        .arg(conns.keys.orders_stream(2))
        .arg(PERSIST_GROUP)
        .query_async(&mut r)
        .await
        .unwrap();

    let backlog = stockguard_core::backlog::sample(&mut r, &conns.keys, &[1, 2, 3]).await.unwrap();
    assert_eq!(backlog.messages, 2 + 3, "product 1's lag, and all of product 2's stream");
    assert_eq!(backlog.inflight_units, 6);
    assert_eq!(backlog.missing_streams, vec![3]);
}
