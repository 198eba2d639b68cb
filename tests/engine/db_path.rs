//! The DB path of degraded mode against the real MariaDB and Redis: it sells only while the
//! switch in the DB says DEGRADED, and answers a concurrent retry with the first order.

use crate::in_process;
use crate::sale;
use crate::support;

use std::time::Duration;

use axum::http::StatusCode;
use sqlx::MySqlPool;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::switch::{store, Changer, Home, Mode, Scope};
use stockguard_engine::engine::degraded;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::engine::{ReserveOutcome, ReserveRequest};
use support::waits::{wait_for, wait_for_running};
use support::{scalar, TestRedis};

const PRODUCT: u64 = 1301;

async fn post_order(state: &EngineState, user: u64, idem: &str) -> (StatusCode, serde_json::Value) {
    in_process::post_order(state, PRODUCT, user, 1, idem).await
}

#[sqlx::test(migrations = "./migrations")]
async fn an_instance_on_the_db_path_beside_a_redis_path_instance_cannot_sell_while_the_switch_is_normal(
    pool: MySqlPool,
) {
    let redis = TestRedis::new("pin").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, 5, 1).await;
    let engine =
        EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    let (url, stop, handle) = sale::spawn_engine(engine).await;

    // What a pinned instance (`engine serve --degraded`) did: the DB path, switch NORMAL.
    let req = ReserveRequest {
        user_id: 99,
        product_id: PRODUCT,
        qty: 1,
        idempotency_key: "pinned".into(),
        per_user_limit: 1,
    };
    let pinned = degraded::place_order(&pool, Home::Sale, &req, "pinned-1", Duration::from_secs(900)).await;
    assert!(!matches!(pinned, Ok(ReserveOutcome::Reserved { .. } | ReserveOutcome::Replayed { .. })), "{pinned:?}");
    assert_eq!(scalar(&pool, "SELECT stock FROM inventory").await, 5, "the DB path sold nothing");

    // The Redis-path instance sells the sale out; the DB refuses none of its orders.
    let client = reqwest::Client::new();
    let mut accepted = 0;
    for user in 1..=7u64 {
        let body = serde_json::json!({ "user_id": user, "product_id": PRODUCT, "qty": 1, "idempotency_key": "k" });
        if client.post(format!("{url}/orders")).json(&body).send().await.unwrap().status() == 202 {
            accepted += 1;
        }
    }
    assert_eq!(accepted, 5);
    wait_for("the reservations are persisted", Duration::from_secs(10), async || {
        scalar(&pool, "SELECT COUNT(*) FROM orders").await + scalar(&pool, "SELECT COUNT(*) FROM order_failures").await
            == 5
    })
    .await;
    assert_eq!(scalar(&pool, "SELECT COUNT(*) FROM order_failures").await, 0, "none FAILED");
    assert_eq!(scalar(&pool, "SELECT stock FROM inventory").await, 0);
    let _ = stop.send(());
    handle.await.unwrap();
}

#[sqlx::test(migrations = "./migrations")]
async fn two_identical_requests_at_once_in_db_mode_both_get_the_same_order_number(pool: MySqlPool) {
    let redis = TestRedis::new("twin").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, 10, 1).await;
    let person = Changer::person(&conns.settings).unwrap();
    store::set(&pool, &person, Scope::Product(PRODUCT), Mode::Degraded, "drill").await.unwrap();
    let state = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    state.apply_switch(store::read_view(&pool).await.unwrap());

    // Both pass any check made before the hot row is theirs.
    let mut hold = pool.begin().await.unwrap();
    sqlx::query("SELECT stock FROM inventory WHERE product_id = ? FOR UPDATE")
        .bind(PRODUCT)
        .fetch_one(&mut *hold)
        .await
        .unwrap();
    let twins: Vec<_> = (0..2)
        .map(|_| {
            let state = state.clone();
            tokio::spawn(async move { post_order(&state, 1, "same").await })
        })
        .collect();
    wait_for_running(&pool, "UPDATE inventory", 2).await;
    hold.commit().await.unwrap();

    let mut numbers = Vec::new();
    for t in twins {
        let (status, body) = t.await.unwrap();
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        numbers.push(body["order_no"].as_str().unwrap().to_string());
    }
    assert_eq!(numbers[0], numbers[1]);
    assert_eq!(scalar(&pool, "SELECT COUNT(*) FROM orders").await, 1);
    assert_eq!(scalar(&pool, "SELECT stock FROM inventory").await, 9);
}
