//! The guided exit as a real barrier (issue 12): a DB-path order the heartbeats cannot see,
//! a switch change made during the exit, revisions committing out of order, idempotency
//! across DB mode, drift found by the exit's own verification, and the per-user count
//! rebuild racing the closer. Everything against the real MariaDB and Redis.

use crate::in_process;
use crate::sale;
use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::read_products;
use stockguard_core::switch::exit::DEFAULT_STALE_AFTER;
use stockguard_core::switch::{self, acks, store, Changer, ExitOptions, ExitStep, Mode, Scope, ScopeLeft, SwitchError};
use stockguard_engine::engine::close::{close_order, CloseKind};
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::waits::{wait_for, wait_for_running};
use support::{scalar, TestRedis};

const PRODUCT: u64 = 1201;

async fn post_order(state: &EngineState, user: u64, idem: &str) -> (StatusCode, serde_json::Value) {
    in_process::post_order(state, PRODUCT, user, 1, idem).await
}

async fn post_http(url: &str, user: u64, idem: &str) -> (u16, serde_json::Value) {
    let body = serde_json::json!({ "user_id": user, "product_id": PRODUCT, "qty": 1, "idempotency_key": idem });
    let resp = reqwest::Client::new().post(format!("{url}/orders")).json(&body).send().await.unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap_or(serde_json::Value::Null))
}

async fn drift_of(conns: &Connections) -> Option<i64> {
    let mut r = conns.redis.clone();
    read_products(&conns.mysql, &mut r, &conns.keys, &[PRODUCT]).await.unwrap()[0].drift
}

async fn redis_stock(conns: &Connections) -> i64 {
    let mut r = conns.redis.clone();
    redis::cmd("GET").arg(conns.keys.stock(PRODUCT)).query_async(&mut r).await.unwrap()
}

async fn inflight(conns: &Connections) -> i64 {
    let mut r = conns.redis.clone();
    redis::cmd("HLEN").arg(conns.keys.inflight(PRODUCT)).query_async(&mut r).await.unwrap()
}

async fn global_row(pool: &MySqlPool) -> switch::ScopeState {
    store::scopes(pool).await.unwrap().into_iter().find(|s| s.scope == Scope::Global).expect("a global row")
}

/// The sale in DB mode (global row DEGRADED), `stock` units, and the person changing it.
async fn sale_in_db_mode(pool: &MySqlPool, redis: &TestRedis, stock: i64, limit: i64) -> (Connections, Changer) {
    let conns = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, stock, limit).await;
    let person = Changer::person(&conns.settings).unwrap();
    store::set(pool, &person, Scope::Global, Mode::Degraded, "drill: Redis suspected").await.unwrap();
    (conns, person)
}

/// An instance that applied the switch but never heartbeats (as one stuck on the DB pool).
async fn silent_instance(conns: &Connections) -> EngineState {
    let state = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    state.apply_switch(store::read_view(&conns.mysql).await.unwrap());
    state
}

/// Runs `f` to completion on its own thread and runtime, with its own pool: a person at
/// another terminal, whose change really commits while the caller is blocked.
fn elsewhere<T: Send + 'static>(
    mysql_url: String,
    f: impl FnOnce(MySqlPool) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>> + Send + 'static,
) -> T {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move { f(MySqlPool::connect(&mysql_url).await.unwrap()).await })
    })
    .join()
    .unwrap()
}

fn quick_exit(reason: &str) -> ExitOptions {
    ExitOptions { ack_timeout: Duration::from_millis(300), ..ExitOptions::new(Scope::Global, reason) }
}

#[sqlx::test(migrations = "./migrations")]
async fn exit_waits_for_a_db_path_order_held_on_the_hot_row(pool: MySqlPool) {
    let redis = TestRedis::new("xhot").await;
    let (conns, _) = sale_in_db_mode(&pool, &redis, 3, 1).await;
    let stuck = silent_instance(&conns).await;

    // The hot row is held; the instance's DB-path order waits behind it and cannot heartbeat.
    let mut hold = pool.begin().await.unwrap();
    sqlx::query("SELECT stock FROM inventory WHERE product_id = ? FOR UPDATE")
        .bind(PRODUCT)
        .fetch_one(&mut *hold)
        .await
        .unwrap();
    let order = tokio::spawn(async move { post_order(&stuck, 1, "held").await });
    wait_for_running(&pool, "UPDATE inventory", 1).await;

    let exit = tokio::spawn({
        let conns = conns.clone();
        async move { switch::guided_exit(&conns, &quick_exit("Redis is back"), &|_| {}).await }
    });
    // Long enough for an exit that trusts heartbeats to finish while the order still waits.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    hold.commit().await.unwrap();
    let (status, body) = order.await.unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    exit.await.unwrap().expect("the exit completes once the order committed");
    assert_eq!(drift_of(&conns).await, Some(0), "Redis stock is what the DB says after the held order");
    assert_eq!(redis_stock(&conns).await, 2);

    // Back on Redis: the rest sells, and nothing accepted is refused by the DB.
    let engine =
        EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    let (url, stop, handle) = sale::spawn_engine(engine).await;
    let mut accepted = 1;
    for user in 10..16 {
        if post_http(&url, user, "after").await.0 == 202 {
            accepted += 1;
        }
    }
    wait_for("the reservations are persisted", Duration::from_secs(10), async || inflight(&conns).await == 0).await;
    assert_eq!(accepted, 3, "no buyer accepted beyond stock");
    assert_eq!(scalar(&pool, "SELECT COUNT(*) FROM order_failures").await, 0, "none FAILED");
    assert_eq!(scalar(&pool, "SELECT COUNT(*) FROM orders WHERE status = 'WAIT_PAY'").await, 3);
    let _ = stop.send(());
    handle.await.unwrap();
}

#[sqlx::test(migrations = "./migrations")]
async fn the_pause_is_not_acknowledged_by_an_engine_still_in_db_mode_when_a_later_revision_commits_first(
    pool: MySqlPool,
) {
    let redis = TestRedis::new("xrev").await;
    let (conns, person) = sale_in_db_mode(&pool, &redis, 10, 1).await;
    let config = EngineConfig {
        instance_id: "reader".into(),
        switch_poll: Duration::from_millis(300),
        ..EngineConfig::default()
    };
    let engine = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), config);
    let (_, stop, handle) = sale::spawn_engine(engine).await;
    let degraded = global_row(&pool).await.revision;
    wait_for("the engine applied DB mode", Duration::from_secs(5), async || {
        acks::acknowledgement(&pool, degraded, DEFAULT_STALE_AFTER).await.unwrap().complete
    })
    .await;

    // A DB-path order in progress holds the global switch row (shared), so the pause, which
    // took its revision first, waits to commit...
    let mut order_like = pool.begin().await.unwrap();
    sqlx::query("SELECT mode FROM degrade_switch WHERE scope = 'global' LOCK IN SHARE MODE")
        .fetch_all(&mut *order_like)
        .await
        .unwrap();
    let pause = tokio::spawn({
        let (pool, person) = (pool.clone(), person.clone());
        async move { store::set(&pool, &person, Scope::Global, Mode::Paused, "guided exit").await }
    });
    wait_for_running(&pool, "INSERT INTO degrade_switch", 1).await;
    // ...while an unrelated product-scope change, a higher revision, is written meanwhile.
    let other = tokio::spawn({
        let (pool, person) = (pool.clone(), person.clone());
        async move { store::set(&pool, &person, Scope::Product(PRODUCT + 1), Mode::Degraded, "unrelated").await }
    });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    order_like.commit().await.unwrap();
    let pause = pause.await.unwrap().unwrap();

    let ack = acks::acknowledgement(&pool, pause.revision, DEFAULT_STALE_AFTER).await.unwrap();
    for i in ack.instances.iter().filter(|i| i.live && i.applied) {
        assert_eq!(
            i.effective_mode,
            Mode::Paused,
            "{} reports the pause applied while in {}",
            i.instance_id,
            i.effective_mode
        );
    }
    assert!(other.await.unwrap().unwrap().revision > pause.revision);
    let _ = stop.send(());
    handle.await.unwrap();
}

#[sqlx::test(migrations = "./migrations")]
async fn a_degrade_on_issued_during_the_rebuild_is_not_overwritten_by_the_exit(pool: MySqlPool) {
    let redis = TestRedis::new("xcas").await;
    let (conns, person) = sale_in_db_mode(&pool, &redis, 10, 1).await;
    let url = support::mysql_url_of(&pool).await;
    let on_revision = Arc::new(Mutex::new(None));
    let progress = |step: &ExitStep| {
        if let ExitStep::Rebuilt { .. } = step {
            let person = person.clone();
            let revision = elsewhere(url.clone(), move |pool| {
                Box::pin(async move {
                    store::set(&pool, &person, Scope::Global, Mode::Degraded, "Redis flapping again")
                        .await
                        .unwrap()
                        .revision
                })
            });
            *on_revision.lock().unwrap() = Some(revision);
        }
    };
    let result = switch::guided_exit(&conns, &quick_exit("Redis is back"), &progress).await;
    let on = on_revision.lock().unwrap().expect("degrade on ran during the rebuild");
    match result {
        Err(SwitchError::ExitFailed { cause, left: ScopeLeft::ChangedMeanwhile { revision, mode, .. } }) => {
            assert!(matches!(*cause, SwitchError::ChangedMeanwhile { .. }), "{cause}");
            assert_eq!((revision, mode), (on, Mode::Degraded));
        }
        other => panic!("the exit must not resume over a newer change: {other:?}"),
    }
    let global = global_row(&pool).await;
    assert_eq!((global.mode, global.revision), (Mode::Degraded, on), "the person's change stands");
}

#[sqlx::test(migrations = "./migrations")]
async fn drift_found_by_the_exit_verification_puts_the_sale_back_in_db_mode(pool: MySqlPool) {
    let redis = TestRedis::new("xdrift").await;
    let (conns, _) = sale_in_db_mode(&pool, &redis, 10, 1).await;
    let (url, key) = (redis.url.clone(), conns.keys.stock(PRODUCT));
    let progress = |step: &ExitStep| {
        if let ExitStep::Resumed { .. } = step {
            // Something writes Redis stock behind the exit's back.
            let mut c = support::blocking_conn(&url);
            let _: i64 = redis::cmd("INCRBY").arg(&key).arg(2).query(&mut *c).unwrap();
        }
    };
    let result = switch::guided_exit(&conns, &quick_exit("Redis is back"), &progress).await;
    match result {
        Err(SwitchError::ExitFailed { cause, left: ScopeLeft::BackInDbMode { revision } }) => {
            assert!(matches!(&*cause, SwitchError::DriftAfterExit(d) if d[0].drift == Some(2)), "{cause}");
            let global = global_row(&pool).await;
            assert_eq!((global.mode, global.revision), (Mode::Degraded, revision), "back to DB mode");
        }
        other => panic!("drift after the exit is a failure: {other:?}"),
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn a_retry_after_the_exit_of_an_order_placed_in_db_mode_gets_the_first_order_number(pool: MySqlPool) {
    let redis = TestRedis::new("xidem").await;
    let (conns, _) = sale_in_db_mode(&pool, &redis, 10, 2).await;
    let engine =
        EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    let (url, stop, handle) = sale::spawn_engine(engine.clone()).await;
    wait_for("the engine is in DB mode", Duration::from_secs(5), async || engine.home_mode() == Mode::Degraded).await;

    let (status, first) = post_http(&url, 7, "pay-once").await;
    assert_eq!(status, 202, "{first}");
    assert_eq!(scalar(&pool, "SELECT COUNT(*) FROM orders WHERE source = 'DB'").await, 1);
    switch::guided_exit(&conns, &ExitOptions::new(Scope::Global, "Redis is back"), &|_| {}).await.unwrap();
    assert_eq!(engine.home_mode(), Mode::Normal);
    let stock = redis_stock(&conns).await;

    let (status, retry) = post_http(&url, 7, "pay-once").await;
    assert_eq!(status, 202, "{retry}");
    assert_eq!(retry["order_no"], first["order_no"], "the retry gets the first order number");
    assert_eq!(redis_stock(&conns).await, stock, "and reserves nothing");
    assert_eq!(inflight(&conns).await, 0);
    let _ = stop.send(());
    handle.await.unwrap();
}

#[sqlx::test(migrations = "./migrations")]
async fn the_buyers_rebuild_counts_an_order_closed_meanwhile_once(pool: MySqlPool) {
    let redis = TestRedis::new("xbuy").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    const USERS: u64 = 500;
    sale::open_sale(&conns, PRODUCT, USERS as i64, 1).await;
    for chunk in (1..=USERS).collect::<Vec<_>>().chunks(500) {
        let mut qb = sqlx::QueryBuilder::new(
            "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, idempotency_key, source, pay_deadline) ",
        );
        qb.push_values(chunk, |mut b, &u| {
            b.push_bind(format!("o{u}"))
                .push_bind(u)
                .push_bind(PRODUCT)
                .push_bind(1)
                .push_bind("WAIT_PAY")
                .push_bind(format!("k{u}"))
                .push_bind("DB")
                .push_bind(chrono::Utc::now().naive_utc());
        });
        qb.build().execute(&pool).await.unwrap();
    }
    sqlx::query("UPDATE inventory SET stock = 0 WHERE product_id = ?").bind(PRODUCT).execute(&pool).await.unwrap();

    // The closer cancels every order while the counts are rebuilt again and again. Each user
    // holds 1 unit either way: live before the close, or a pending release after it.
    let closer = tokio::spawn({
        let pool = pool.clone();
        async move {
            for u in 1..=USERS {
                close_order(&pool, &format!("o{u}"), CloseKind::Cancel { user_id: u }, chrono::Utc::now().naive_utc())
                    .await
                    .unwrap();
            }
        }
    });
    let mut r = conns.redis.clone();
    let mut rebuilds = 0;
    while !closer.is_finished() {
        switch::buyers::rebuild(&pool, &mut r, &conns.keys, PRODUCT).await.unwrap();
        rebuilds += 1;
        let counts: Vec<i64> = redis::cmd("HVALS").arg(conns.keys.buyers(PRODUCT)).query_async(&mut r).await.unwrap();
        let doubled = counts.iter().filter(|&&c| c != 1).count();
        assert_eq!(doubled, 0, "rebuild {rebuilds}: {doubled} users counted twice");
        assert_eq!(counts.len() as u64, USERS);
    }
    closer.await.unwrap();
    assert!(rebuilds > 3, "the rebuild raced the closer {rebuilds} times");
}
