//! Degraded mode (orders straight to the DB), rate limits and metrics.

use crate::in_process;
use crate::sale;
use crate::support;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt as _;
use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::switch::{store, Changer, Mode, Scope};
use stockguard_engine::engine::http::router;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::{scalar, TestRedis};
use tower::ServiceExt as _;

const PRODUCT: u64 = 11;

async fn engine(pool: &MySqlPool, redis: &TestRedis, stock: i64, limit: i64, config: EngineConfig) -> EngineState {
    let conns = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, stock, limit).await;
    EngineState::new(conns.mysql, conns.redis, conns.keys, config)
}

async fn post_order(state: &EngineState, user: u64, qty: i64, idem: &str) -> (StatusCode, serde_json::Value) {
    in_process::post_order(state, PRODUCT, user, qty, idem).await
}

/// The product sent to the DB through the switch (as `stockguard degrade on --product`
/// does), and an instance that applied it: the DB path sells only while the switch in the DB
/// says DEGRADED.
async fn db_mode_engine(pool: &MySqlPool, redis: &TestRedis, stock: i64, limit: i64) -> EngineState {
    let state = engine(pool, redis, stock, limit, EngineConfig::default()).await;
    let conns = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    let person = Changer::person(&conns.settings).unwrap();
    store::set(pool, &person, Scope::Product(PRODUCT), Mode::Degraded, "tests: the DB path").await.unwrap();
    state.apply_switch(store::read_view(pool).await.unwrap());
    state
}

#[sqlx::test(migrations = "./migrations")]
async fn in_degraded_mode_many_buyers_never_oversell_and_redis_is_untouched(pool: MySqlPool) {
    let redis = TestRedis::new("d1").await;
    let state = db_mode_engine(&pool, &redis, 100, 1).await;

    let tasks: Vec<_> = (0..400u64)
        .map(|user| {
            let state = state.clone();
            tokio::spawn(async move { post_order(&state, user, 1, "k").await.0 })
        })
        .collect();
    let mut accepted = 0;
    for t in tasks {
        match t.await.unwrap() {
            StatusCode::ACCEPTED => accepted += 1,
            StatusCode::CONFLICT => {}
            other => panic!("unexpected {other}"),
        }
    }

    assert_eq!(accepted, 100);
    assert_eq!(scalar(&pool, "SELECT COUNT(*) FROM orders WHERE source = 'DB' AND status = 'WAIT_PAY'").await, 100);
    assert_eq!(scalar(&pool, "SELECT stock FROM inventory").await, 0);
    let mut r = state.redis.clone();
    let redis_stock: i64 = r.get(state.keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(redis_stock, 100, "Redis was not touched; it is rebuilt when leaving degraded mode");
}

#[sqlx::test(migrations = "./migrations")]
async fn in_degraded_mode_the_limit_and_idempotency_still_hold(pool: MySqlPool) {
    let redis = TestRedis::new("d2").await;
    let state = db_mode_engine(&pool, &redis, 10, 2).await;
    let (s1, first) = post_order(&state, 1, 2, "a").await;
    let (s2, replay) = post_order(&state, 1, 2, "a").await;
    let (s3, over) = post_order(&state, 1, 1, "b").await;
    assert_eq!((s1, s2), (StatusCode::ACCEPTED, StatusCode::ACCEPTED));
    assert_eq!(first["order_no"], replay["order_no"]);
    assert_eq!((s3, over["error"].as_str()), (StatusCode::CONFLICT, Some("LIMIT_REACHED")));
    assert_eq!(scalar(&pool, "SELECT stock FROM inventory").await, 8);

    // Concurrent requests of one buyer: the inventory row lock serialises the limit check.
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let state = state.clone();
            tokio::spawn(async move { post_order(&state, 2, 1, &format!("c{i}")).await.0 })
        })
        .collect();
    let mut accepted = 0;
    for t in tasks {
        if t.await.unwrap() == StatusCode::ACCEPTED {
            accepted += 1;
        }
    }
    assert_eq!(accepted, 2, "user 2 gets exactly their limit");
}

#[sqlx::test(migrations = "./migrations")]
async fn in_degraded_mode_keys_that_differ_only_in_case_or_a_trailing_space_are_different_orders(pool: MySqlPool) {
    let redis = TestRedis::new("d-idem-bytes").await;
    let state = db_mode_engine(&pool, &redis, 10, 3).await;
    let mut order_of = std::collections::BTreeMap::new();
    for key in ["pay", "PAY", "pay "] {
        let (status, body) = post_order(&state, 1, 1, key).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{key:?}: {body}");
        order_of.insert(key, body["order_no"].as_str().unwrap().to_string());
    }
    // As in Redis mode: a key is its exact bytes, so these are three orders, not replays.
    assert_eq!(order_of.values().collect::<std::collections::BTreeSet<_>>().len(), 3);
    assert_eq!(scalar(&pool, "SELECT stock FROM inventory").await, 7);
    let (_, replay) = post_order(&state, 1, 1, "PAY").await;
    assert_eq!(replay["order_no"].as_str(), Some(order_of["PAY"].as_str()), "a replay finds its own key's order");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_buyer_over_the_per_user_rate_is_told_to_slow_down(pool: MySqlPool) {
    let redis = TestRedis::new("d3").await;
    let state = engine(&pool, &redis, 1000, 1000, EngineConfig { per_user_rate: 3, ..EngineConfig::default() }).await;
    let mut limited = 0;
    for i in 0..10 {
        let (status, body) = post_order(&state, 5, 1, &format!("k{i}")).await;
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(body["error"], "RATE_LIMITED");
            limited += 1;
        }
    }
    // 10 requests within (at most) two one-second windows of 3.
    assert!(limited >= 4, "limited {limited} of 10");
    let (status, _) = post_order(&state, 6, 1, "other-user").await;
    assert_eq!(status, StatusCode::ACCEPTED, "another buyer is not affected");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_instance_wide_bucket_refuses_past_its_rate(pool: MySqlPool) {
    let redis = TestRedis::new("d4").await;
    let state = engine(&pool, &redis, 1000, 1000, EngineConfig { global_rate: 5, ..EngineConfig::default() }).await;
    let mut codes = Vec::new();
    for user in 0..20 {
        codes.push(post_order(&state, user, 1, "k").await.0);
    }
    let limited = codes.iter().filter(|c| **c == StatusCode::TOO_MANY_REQUESTS).count();
    assert!(limited >= 10, "{codes:?}");
    let mut r = state.redis.clone();
    let stock: i64 = r.get(state.keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(stock, 1000 - (20 - limited as i64), "refused requests reserved nothing");
}

#[sqlx::test(migrations = "./migrations")]
async fn metrics_report_outcomes_latency_backlog_and_in_flight(pool: MySqlPool) {
    let redis = TestRedis::new("d5").await;
    let state = engine(&pool, &redis, 10, 1, EngineConfig::default()).await;
    post_order(&state, 1, 1, "k").await;
    post_order(&state, 1, 1, "k2").await;

    let req = Request::builder().uri("/metrics").body(Body::empty()).unwrap();
    let resp = router(state.clone()).oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let text = String::from_utf8(resp.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    for needle in [
        "stockguard_requests_total{outcome=\"accepted\"}",
        "stockguard_requests_total{outcome=\"LIMIT_REACHED\"}",
        "stockguard_request_duration_seconds_bucket",
        "stockguard_redis_latency_seconds_count",
        "stockguard_db_pool_wait_seconds_count",
        "stockguard_stream_backlog 1",
        "stockguard_inflight_units 1",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
}
