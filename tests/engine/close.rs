//! Timeout close, cancel and the release relay: stock comes back to the DB and to Redis
//! exactly once, however often or concurrently they run.

use crate::sale;
use crate::support;

use std::time::Duration;

use chrono::{NaiveDateTime, Utc};
use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::keys::Keys;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_core::switch::Home;
use stockguard_engine::engine::close::{close_due_orders, close_order, CloseKind, CloseOutcome};
use stockguard_engine::engine::consumer::{self, ConsumerConfig};
use stockguard_engine::engine::relay::Relay;
use stockguard_engine::engine::{ReserveOutcome, ReserveRequest};
use support::TestRedis;

const PRODUCT: u64 = 5;
const PAYMENT: Duration = Duration::from_secs(900);

/// A sale of 10 units with `buyers` orders persisted (1 unit each), WAIT_PAY.
async fn sale_with_orders(
    pool: &MySqlPool,
    redis: &TestRedis,
    buyers: u64,
) -> (stockguard_core::redis_link::RedisLink, Vec<String>) {
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) VALUES (?, 'x', 10, 10, 1)",
    )
    .bind(PRODUCT)
    .execute(pool)
    .await
    .unwrap();
    let mut conn = redis.conn().await;
    let _: () = conn.set(redis.keys.stock(PRODUCT), 10).await.unwrap();
    consumer::ensure_group(&mut conn, &redis.keys, PRODUCT).await.unwrap();
    let reserver = sale::reserver(pool).await;
    let mut order_nos = Vec::new();
    for user in 0..buyers {
        let req = ReserveRequest {
            user_id: user,
            product_id: PRODUCT,
            qty: 1,
            idempotency_key: "k".into(),
            per_user_limit: 1,
        };
        let ReserveOutcome::Reserved { order_no } = reserver.reserve(&mut conn, &redis.keys, &req).await.unwrap()
        else {
            panic!()
        };
        order_nos.push(order_no);
    }
    let cfg = ConsumerConfig {
        name: "c".into(),
        batch_size: 100,
        claim_min_idle: Duration::from_secs(60),
        payment_timeout: PAYMENT,
    };
    consumer::run_once(pool, &mut conn, &redis.keys, &[PRODUCT], &cfg).await.unwrap();
    (conn, order_nos)
}

fn after_deadline() -> NaiveDateTime {
    (Utc::now() + chrono::Duration::from_std(PAYMENT).unwrap() + chrono::Duration::seconds(5)).naive_utc()
}

async fn db_stock(pool: &MySqlPool) -> i64 {
    sqlx::query_scalar("SELECT stock FROM inventory WHERE product_id = ?").bind(PRODUCT).fetch_one(pool).await.unwrap()
}

async fn redis_stock(conn: &mut stockguard_core::redis_link::RedisLink, keys: &Keys) -> i64 {
    conn.get(keys.stock(PRODUCT)).await.unwrap()
}

async fn assert_conserved(pool: &MySqlPool, conn: &mut stockguard_core::redis_link::RedisLink, keys: &Keys) {
    let r = &read_products(pool, conn, keys, &[PRODUCT]).await.unwrap()[0];
    assert_eq!(r.status, DriftStatus::Ok, "{r:?}");
    assert_eq!(r.drift, Some(0), "{r:?}");
    assert_eq!(r.pending_release, 0, "every release applied: {r:?}");
}

#[sqlx::test(migrations = "./migrations")]
async fn unpaid_orders_close_at_their_deadline_and_not_before(pool: MySqlPool) {
    let redis = TestRedis::new("c1").await;
    let (mut conn, _) = sale_with_orders(&pool, &redis, 4).await;

    let just_before =
        (Utc::now() + chrono::Duration::from_std(PAYMENT).unwrap() - chrono::Duration::seconds(5)).naive_utc();
    assert_eq!(close_due_orders(&pool, Home::Sale, just_before, 100).await.unwrap(), 0);
    assert_eq!(db_stock(&pool).await, 6);

    assert_eq!(close_due_orders(&pool, Home::Sale, after_deadline(), 100).await.unwrap(), 4);
    assert_eq!(db_stock(&pool).await, 10, "stock back in the DB");
    assert_eq!(redis_stock(&mut conn, &redis.keys).await, 6, "not yet in Redis: pending release");

    let relayed = Relay::default().run_once(&pool, Home::Sale, &mut conn, &redis.keys, 100).await.unwrap();
    assert_eq!(relayed.applied, 4);
    assert_eq!(redis_stock(&mut conn, &redis.keys).await, 10, "stock back in Redis");
    assert_conserved(&pool, &mut conn, &redis.keys).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn closing_and_relaying_twice_returns_stock_once(pool: MySqlPool) {
    let redis = TestRedis::new("c2").await;
    let (mut conn, _) = sale_with_orders(&pool, &redis, 3).await;
    assert_eq!(close_due_orders(&pool, Home::Sale, after_deadline(), 100).await.unwrap(), 3);
    assert_eq!(close_due_orders(&pool, Home::Sale, after_deadline(), 100).await.unwrap(), 0);
    let relay = Relay::default();
    relay.run_once(&pool, Home::Sale, &mut conn, &redis.keys, 100).await.unwrap();
    // The same release applied again (as if the outbox row were not marked done before a
    // crash): the `released` hash refuses it.
    sqlx::query("UPDATE outbox SET status = 'PENDING'").execute(&pool).await.unwrap();
    let again = relay.run_once(&pool, Home::Sale, &mut conn, &redis.keys, 100).await.unwrap();
    assert_eq!((again.applied, again.already_applied), (0, 3));
    assert_eq!(db_stock(&pool).await, 10);
    assert_eq!(redis_stock(&mut conn, &redis.keys).await, 10);
    assert_conserved(&pool, &mut conn, &redis.keys).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_timeout_close_racing_a_cancel_returns_stock_once(pool: MySqlPool) {
    let redis = TestRedis::new("c3").await;
    let (mut conn, order_nos) = sale_with_orders(&pool, &redis, 5).await;
    let mut racers = Vec::new();
    // Order i is buyer i's (see `sale_with_orders`).
    for (buyer, no) in order_nos.iter().enumerate() {
        let cancel = CloseKind::Cancel { user_id: buyer as u64 };
        for kind in [CloseKind::Timeout, cancel, CloseKind::Timeout, cancel] {
            let (pool, no) = (pool.clone(), no.clone());
            racers.push(tokio::spawn(async move { close_order(&pool, &no, kind, after_deadline()).await.unwrap() }));
        }
    }
    let mut closed = 0;
    for r in racers {
        if r.await.unwrap() == CloseOutcome::Closed {
            closed += 1;
        }
    }
    assert_eq!(closed, 5, "one winner per order");
    let relay = Relay::default();
    let (mut c1, mut c2) = (conn.clone(), conn.clone());
    let (a, b) = tokio::join!(
        relay.run_once(&pool, Home::Sale, &mut c1, &redis.keys, 100),
        relay.run_once(&pool, Home::Sale, &mut c2, &redis.keys, 100)
    );
    assert_eq!(a.unwrap().applied + b.unwrap().applied, 5, "each release applied once across two relays");
    assert_eq!(db_stock(&pool).await, 10);
    assert_eq!(redis_stock(&mut conn, &redis.keys).await, 10);
    assert_conserved(&pool, &mut conn, &redis.keys).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_paid_order_is_not_closed_and_a_closed_order_is_not_paid(pool: MySqlPool) {
    let redis = TestRedis::new("c4").await;
    let (mut conn, order_nos) = sale_with_orders(&pool, &redis, 2).await;
    sqlx::query("UPDATE orders SET status = 'PAID' WHERE order_no = ?")
        .bind(&order_nos[0])
        .execute(&pool)
        .await
        .unwrap();

    assert_eq!(close_due_orders(&pool, Home::Sale, after_deadline(), 100).await.unwrap(), 1);
    let paid = close_order(&pool, &order_nos[0], CloseKind::Timeout, after_deadline()).await.unwrap();
    assert_eq!(paid, CloseOutcome::NotWaiting("PAID".into()));
    let paying_closed = sqlx::query("UPDATE orders SET status = 'PAID' WHERE order_no = ? AND status = 'WAIT_PAY'")
        .bind(&order_nos[1])
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(paying_closed.rows_affected(), 0, "the compare-and-set refuses a closed order");
    Relay::default().run_once(&pool, Home::Sale, &mut conn, &redis.keys, 100).await.unwrap();
    assert_eq!(db_stock(&pool).await, 9);
    assert_conserved(&pool, &mut conn, &redis.keys).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_release_waits_while_the_stock_key_is_missing(pool: MySqlPool) {
    let redis = TestRedis::new("c5").await;
    let (mut conn, _) = sale_with_orders(&pool, &redis, 1).await;
    close_due_orders(&pool, Home::Sale, after_deadline(), 100).await.unwrap();
    let _: () = conn.del(redis.keys.stock(PRODUCT)).await.unwrap();
    let out = Relay::default().run_once(&pool, Home::Sale, &mut conn, &redis.keys, 100).await.unwrap();
    assert_eq!(out.waiting_for_key, 1);
    let exists: bool = conn.exists(redis.keys.stock(PRODUCT)).await.unwrap();
    assert!(!exists, "the release did not create a stock key from nothing");
    let pending: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM outbox WHERE status = 'PENDING'").fetch_one(&pool).await.unwrap();
    assert_eq!(pending, 1);
}
