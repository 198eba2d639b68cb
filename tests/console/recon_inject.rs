//! Drift injected during a live sale is confirmed within two readings, a rewrite repairs it
//! while the sale goes on, and the sale ends with nothing oversold and the identity holding.

use crate::sale;
use crate::support;

use std::time::Duration;

use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::drift::DriftTracker;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_core::rewrite::{self, Outcome, RewriteRequest};
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::load::{self, LoadConfig};
use support::TestRedis;

const PRODUCT: u64 = 601;

/// Readings until the tracker confirms a drift on the product; how many readings it took.
async fn readings_until_confirmed(
    conns: &Connections,
    tracker: &mut DriftTracker,
) -> (usize, DriftStatus, Option<i64>) {
    let mut r = conns.redis.clone();
    for n in 1..=10 {
        let readings = read_products(&conns.mysql, &mut r, &conns.keys, &[PRODUCT]).await.unwrap();
        if let Some(c) = tracker.observe(&readings).into_iter().find(|c| c.product_id == PRODUCT) {
            return (n, c.status, c.drift);
        }
    }
    panic!("drift not confirmed within 10 readings");
}

#[sqlx::test(migrations = "./migrations")]
async fn injected_drift_is_confirmed_within_two_readings_and_repaired_during_the_sale(pool: MySqlPool) {
    let redis = TestRedis::new("inject").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let mut r = conns.redis.clone();
    sale::open_sale(&conns, PRODUCT, 3000, 1).await;
    let state = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    let (url, stop, engine) = sale::spawn_engine(state).await;
    let load_pool = pool.clone();
    let sale = tokio::spawn(async move {
        let cfg = LoadConfig {
            target: url,
            products: vec![PRODUCT],
            buyers: 5000,
            rate: 500,
            duration: Duration::from_secs(60),
            concurrency: 32,
            drain_timeout: Duration::from_secs(30),
        };
        load::run(&load_pool, &cfg, &|_, _| {}).await.unwrap()
    });
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut tracker = DriftTracker::default();
    let k = 7;
    // +k: Redis would hand out units the DB cannot honour.
    let _: () = r.incr(conns.keys.stock(PRODUCT), k).await.unwrap();
    let (n, status, drift) = readings_until_confirmed(&conns, &mut tracker).await;
    assert_eq!((status, drift), (DriftStatus::RedisHigh, Some(k)));
    assert!(n <= 2, "confirmed after {n} readings");
    let fix = rewrite::rewrite(&conns, &RewriteRequest::new(PRODUCT, "+k injected")).await.unwrap();
    assert_eq!((fix.outcome, fix.drift_after), (Outcome::Applied, Some(0)));

    // -k: buyers would be told "sold out" while units remain.
    let _: () = r.decr(conns.keys.stock(PRODUCT), k).await.unwrap();
    let (n, status, drift) = readings_until_confirmed(&conns, &mut tracker).await;
    assert_eq!((status, drift), (DriftStatus::RedisLow, Some(-k)));
    assert!(n <= 2, "confirmed after {n} readings");
    let fix = rewrite::rewrite(&conns, &RewriteRequest::new(PRODUCT, "-k injected")).await.unwrap();
    assert_eq!((fix.outcome, fix.drift_after), (Outcome::Applied, Some(0)));

    // The key deleted: not a sell-out, a missing key.
    let _: () = r.del(conns.keys.stock(PRODUCT)).await.unwrap();
    let (n, status, _) = readings_until_confirmed(&conns, &mut tracker).await;
    assert_eq!(status, DriftStatus::KeyMissing);
    assert!(n <= 2, "confirmed after {n} readings");
    let fix = rewrite::rewrite(&conns, &RewriteRequest::new(PRODUCT, "key deleted")).await.unwrap();
    assert_eq!((fix.outcome, fix.drift_after), (Outcome::Rebuilt, Some(0)));

    let report = sale.await.unwrap();
    let _ = stop.send(());
    engine.await.unwrap();
    assert!(report.holds(), "{}", report.to_text());
    assert_eq!(report.verdict.oversold_units, 0);
    assert!(report.accepted > 0, "the sale went on around the repairs: {}", report.to_text());
    let end = read_products(&pool, &mut r, &conns.keys, &[PRODUCT]).await.unwrap().remove(0);
    assert_eq!((end.status, end.drift), (DriftStatus::Ok, Some(0)), "{end:?}");
    assert_eq!(end.initial_stock, end.db_stock + end.live_orders_qty, "the DB identity holds");
}
