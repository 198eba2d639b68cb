//! A drill beside the sale is the drill's (issue 51, items 1 to 3): the sale's alerts, product
//! list and overview count the sale's own engines and products, and the sale's guided exit,
//! of the whole sale or of one product, waits for the sale's engines only. A drill's engine
//! that its drill stopped (breaker open, never applying another revision) stays live here for
//! the whole test, as one does for a few seconds after a drill stops it.

use crate::sale;
use crate::support;

use std::time::Duration;

use chrono::Utc;
use sqlx::MySqlPool;
use stockguard_core::alerts::{self, AlertKind, Thresholds};
use stockguard_core::catalog;
use stockguard_core::connect::Connections;
use stockguard_core::overview;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::switch::acks::{self, BreakerReport, Heartbeat};
use stockguard_core::switch::{self, store, Changer, ExitOptions, Mode, Scope};
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::waits::wait_for;
use support::TestRedis;

const SALE_PRODUCT: u64 = 1;
const RIG_PRODUCT: u64 = 900;
const RUN: u64 = 77;

/// A drill's engine its drill stopped: breaker open, still on revision 0, beating now.
async fn a_stopped_drill_engine(pool: &MySqlPool) {
    let hb = Heartbeat {
        instance_id: format!("drill{RUN}-e1"),
        listen_addr: "127.0.0.1:1".into(),
        home: Scope::Rig(RUN),
        started_at: Utc::now().naive_utc(),
        applied_revision: 0,
        effective_mode: Mode::Degraded,
        breaker: BreakerReport { state: "OPEN", reason: Some("the drill cut Redis".into()), tripped_at: None },
        accepted_guarantee: None,
    };
    acks::write_heartbeat(pool, &hb).await.unwrap();
}

/// The sale (one product) with its own engine serving, and a drill's rig product beside it.
async fn a_sale_beside_a_drill(pool: &MySqlPool, redis: &TestRedis) -> (Connections, EngineState) {
    let conns = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, SALE_PRODUCT, 20, 1).await;
    sale::open_sale(&conns, RIG_PRODUCT, 500, 1).await;
    sqlx::query("UPDATE inventory SET rig = ? WHERE product_id = ?")
        .bind(RUN)
        .bind(RIG_PRODUCT)
        .execute(pool)
        .await
        .unwrap();
    let engine =
        EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    (conns, engine)
}

/// The exit's patience: a drill engine's heartbeat counts as live throughout.
fn exit_of(scope: Scope) -> ExitOptions {
    ExitOptions {
        ack_timeout: Duration::from_secs(3),
        stale_after: Duration::from_secs(120),
        ..ExitOptions::new(scope, "Redis is back")
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn a_drills_open_breaker_and_products_stay_out_of_the_sales_alerts_product_list_and_overview(pool: MySqlPool) {
    let redis = TestRedis::new("rigapart1").await;
    let (conns, engine) = a_sale_beside_a_drill(&pool, &redis).await;
    let (_url, stop, handle) = sale::spawn_engine(engine.clone()).await;
    a_stopped_drill_engine(&pool).await;
    wait_for("the sale's engine beats", Duration::from_secs(10), async || {
        support::scalar(&pool, "SELECT COUNT(*) FROM engine_heartbeats WHERE home = 'global'").await == 1
    })
    .await;

    let firing = alerts::now::firing(&conns, &Thresholds::default(), Duration::from_millis(100)).await.unwrap();
    assert!(
        !firing.iter().any(|a| a.kind == AlertKind::BreakerOpen),
        "the drill's tripped engine pages no one on the sale's desk: {firing:?}"
    );
    let listed: Vec<u64> = catalog::list_products(&pool).await.unwrap().iter().map(|p| p.product_id).collect();
    assert_eq!(listed, [SALE_PRODUCT], "the sale's products are its own");
    let figures = overview::sale_figures(&pool).await.unwrap();
    assert_eq!((figures.products, figures.initial_units), (1, 20), "the sale's counts are its own");
    let _ = stop.send(());
    handle.await.unwrap();
}

#[sqlx::test(migrations = "./migrations")]
async fn the_sales_guided_exit_waits_for_the_sales_engines_only(pool: MySqlPool) {
    let redis = TestRedis::new("rigapart2").await;
    let (conns, engine) = a_sale_beside_a_drill(&pool, &redis).await;
    let (_url, stop, handle) = sale::spawn_engine(engine.clone()).await;
    let person = Changer::person(&conns.settings).unwrap();

    // The whole sale to DB mode and back, with a drill's stopped engine beside it.
    store::set(&pool, &person, Scope::Global, Mode::Degraded, "Redis suspected").await.unwrap();
    wait_for("the sale's engine is in DB mode", Duration::from_secs(10), async || engine.home_mode() == Mode::Degraded)
        .await;
    a_stopped_drill_engine(&pool).await;
    let report = switch::guided_exit(&conns, &exit_of(Scope::Global), &|_| {}).await;
    assert!(report.is_ok(), "the drill's engine does not hold up the sale's exit: {report:?}");
    assert_eq!(engine.home_mode(), Mode::Normal);

    // One sale product, whose exit the drill's open breaker must not block either.
    store::set(&pool, &person, Scope::Product(SALE_PRODUCT), Mode::Degraded, "one product").await.unwrap();
    a_stopped_drill_engine(&pool).await;
    let report = switch::guided_exit(&conns, &exit_of(Scope::Product(SALE_PRODUCT)), &|_| {}).await;
    assert!(report.is_ok(), "nor a sale product's: {report:?}");
    let _ = stop.send(());
    handle.await.unwrap();
}
