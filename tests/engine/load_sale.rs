//! The whole order path under load, through HTTP: a real engine on a loopback port, the
//! load generator's own record checked against the DB.

use crate::sale;
use crate::support;

use std::time::Duration;

use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::load::conn::Conn;
use stockguard_engine::load::{self, LoadConfig};
use support::TestRedis;

const PRODUCT: u64 = 77;

#[sqlx::test(migrations = "./migrations")]
async fn five_thousand_buyers_through_http_buy_exactly_the_thousand_units(pool: MySqlPool) {
    let redis = TestRedis::new("load").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, 1000, 1).await;
    let mut r = conns.redis.clone();
    let state = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    let (url, stop, engine) = sale::spawn_engine(state).await;

    let cfg = LoadConfig {
        target: url,
        products: vec![PRODUCT],
        buyers: 5000,
        rate: 50_000,
        duration: Duration::from_secs(60),
        concurrency: 200,
        drain_timeout: Duration::from_secs(60),
    };
    let report = load::run(&pool, &cfg, &|_, _| {}).await.unwrap();

    assert_eq!(report.requests, 5000);
    assert_eq!(report.accepted, 1000, "{}", report.to_text());
    assert_eq!(report.sold_out, 4000);
    assert_eq!(report.errors, 0);
    assert_eq!(report.verdict.lost, 0);
    assert_eq!(report.verdict.duplicated, 0);
    assert_eq!(report.verdict.oversold_units, 0);
    assert_eq!(report.verdict.false_sold_out, 0);
    assert!(report.verdict.drained && report.holds());
    assert!(report.redis_latency_mean_ms.is_some() && report.db_pool_wait_mean_ms.is_some());

    let orders: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(&pool).await.unwrap();
    assert_eq!(orders, 1000);
    let reading = &read_products(&pool, &mut r, &conns.keys, &[PRODUCT]).await.unwrap()[0];
    assert_eq!((reading.db_stock, reading.redis_stock, reading.inflight_pending), (0, Some(0), 0));
    assert_eq!(reading.status, DriftStatus::Ok);
    let inflight: i64 = r.hlen(conns.keys.inflight(PRODUCT)).await.unwrap();
    assert_eq!(inflight, 0);

    let _ = stop.send(());
    engine.await.unwrap();
}

#[sqlx::test(migrations = "./migrations")]
async fn a_rate_the_engine_cannot_keep_up_with_still_stops_at_the_duration(pool: MySqlPool) {
    let redis = TestRedis::new("load-duration").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, 10_000_000, 1).await;
    let state = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    let (url, stop, engine) = sale::spawn_engine(state).await;

    // Ten million buyers at a million a second: on schedule that is ten seconds of sending,
    // far more than any engine here answers in one.
    let cfg = LoadConfig {
        target: url,
        products: vec![PRODUCT],
        buyers: 10_000_000,
        rate: 1_000_000,
        duration: Duration::from_secs(1),
        concurrency: 16,
        drain_timeout: Duration::from_secs(60),
    };
    let report = load::run(&pool, &cfg, &|_, _| {}).await.unwrap();

    assert!(report.sending_secs < 2.0, "sent for {} s with a 1 s duration", report.sending_secs);
    assert!(report.requests > 0 && report.requests < 10_000_000);
    assert_eq!(report.accepted, report.requests, "{}", report.to_text());
    assert_eq!((report.verdict.lost, report.verdict.duplicated, report.verdict.oversold_units), (0, 0, 0));
    assert!(report.holds());

    let _ = stop.send(());
    engine.await.unwrap();
}

#[sqlx::test(migrations = "./migrations")]
async fn a_load_connection_carries_on_when_the_engine_restarts_on_its_port(pool: MySqlPool) {
    let redis = TestRedis::new("load-restart").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, 10, 1).await;
    let serve_on = |listener: tokio::net::TcpListener| {
        let state =
            EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let engine = tokio::spawn(stockguard_engine::engine::run::serve(listener, state, async {
            let _ = stopped.await;
        }));
        (stop, engine)
    };
    let order = |user: u64| {
        format!(r#"{{"user_id":{user},"product_id":{PRODUCT},"qty":1,"idempotency_key":"restart-{user}"}}"#)
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, engine) = serve_on(listener);
    let mut conn = Conn::new(addr.to_string(), Duration::from_secs(10));
    assert_eq!(conn.post_json("/orders", order(1)).await.unwrap().0, 202);

    // The engine stops (closing the idle keep-alive connection) and a new one takes the port.
    let _ = stop.send(());
    engine.await.unwrap().unwrap();
    let (stop, engine) = serve_on(tokio::net::TcpListener::bind(addr).await.unwrap());

    let (status, body) = conn.post_json("/orders", order(2)).await.unwrap();
    assert_eq!(status, 202, "{}", String::from_utf8_lossy(&body));
    let _ = stop.send(());
    engine.await.unwrap().unwrap();
}
