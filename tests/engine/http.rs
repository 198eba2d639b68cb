//! The engine's HTTP API, driven in-process (tower `oneshot`) against the real servers.

use crate::sale;
use crate::support;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt as _;
use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::profile::EnvironmentKind;
use stockguard_engine::engine::consumer::{self, ConsumerConfig};
use stockguard_engine::engine::http::router;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::TestRedis;
use tower::ServiceExt as _;

const PRODUCT: u64 = 7;

async fn engine(pool: &MySqlPool, redis: &TestRedis, stock: i64, limit: i64) -> EngineState {
    let conns = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, stock, limit).await;
    EngineState::new(conns.mysql, conns.redis, conns.keys, EngineConfig::default())
}

async fn call(state: &EngineState, method: &str, uri: &str, body: impl Into<Body>) -> (StatusCode, serde_json::Value) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(body.into())
        .unwrap();
    let resp = router(state.clone()).oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null))
}

/// One consumer pass: every reservation so far becomes an order row.
async fn persist_all(state: &EngineState) {
    let cfg = ConsumerConfig {
        name: "c".into(),
        batch_size: 10,
        claim_min_idle: Duration::from_secs(30),
        payment_timeout: Duration::from_secs(900),
    };
    let mut r = state.redis.clone();
    consumer::run_once(&state.pool, &mut r, &state.keys, &[PRODUCT], &cfg).await.unwrap();
}

fn order(user: u64, qty: i64, idem: &str) -> String {
    serde_json::json!({ "user_id": user, "product_id": PRODUCT, "qty": qty, "idempotency_key": idem }).to_string()
}

async fn nothing_reserved(state: &EngineState, stock: i64) {
    let mut r = state.redis.clone();
    let now: i64 = r.get(state.keys.stock(PRODUCT)).await.unwrap();
    let stream: i64 = r.xlen(state.keys.orders_stream(PRODUCT)).await.unwrap();
    assert_eq!((now, stream), (stock, 0), "nothing was reserved");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_order_is_accepted_processed_persisted_and_paid(pool: MySqlPool) {
    let redis = TestRedis::new("h1").await;
    let state = engine(&pool, &redis, 10, 2).await;

    let (status, body) = call(&state, "POST", "/orders", order(1, 2, "k1")).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(body["status"], "ACCEPTED");
    let order_no = body["order_no"].as_str().unwrap().to_string();

    let (_, shown) = call(&state, "GET", &format!("/orders/{order_no}"), Body::empty()).await;
    assert_eq!(shown["status"], "PROCESSING");

    persist_all(&state).await;
    let (_, shown) = call(&state, "GET", &format!("/orders/{order_no}"), Body::empty()).await;
    assert_eq!(shown["status"], "WAIT_PAY");

    let (status, paid) = call(&state, "POST", &format!("/orders/{order_no}/pay"), buyer(1)).await;
    assert_eq!((status, paid["status"].as_str()), (StatusCode::OK, Some("PAID")));
    let (status, again) = call(&state, "POST", &format!("/orders/{order_no}/pay"), buyer(1)).await;
    assert_eq!((status, again["status"].as_str()), (StatusCode::OK, Some("PAID")), "paying twice is harmless");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_same_idempotency_key_returns_the_same_order(pool: MySqlPool) {
    let redis = TestRedis::new("h2").await;
    let state = engine(&pool, &redis, 10, 5).await;
    let (_, first) = call(&state, "POST", "/orders", order(3, 1, "retry-me")).await;
    let (status, second) = call(&state, "POST", "/orders", order(3, 1, "retry-me")).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(first["order_no"], second["order_no"]);
    let mut r = state.redis.clone();
    let stock: i64 = r.get(state.keys.stock(PRODUCT)).await.unwrap();
    assert_eq!(stock, 9, "reserved once");
}

#[sqlx::test(migrations = "./migrations")]
async fn sold_out_limit_and_missing_key_get_their_own_answers(pool: MySqlPool) {
    let redis = TestRedis::new("h3").await;
    let state = engine(&pool, &redis, 1, 1).await;
    assert_eq!(call(&state, "POST", "/orders", order(1, 1, "a")).await.0, StatusCode::ACCEPTED);
    let (status, body) = call(&state, "POST", "/orders", order(1, 1, "b")).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::CONFLICT, Some("LIMIT_REACHED")));
    let (status, body) = call(&state, "POST", "/orders", order(2, 1, "c")).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::CONFLICT, Some("SOLD_OUT")));

    let mut r = state.redis.clone();
    let _: () = r.del(state.keys.stock(PRODUCT)).await.unwrap();
    let (status, body) = call(&state, "POST", "/orders", order(4, 1, "d")).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("NOT_READY")));
}

#[sqlx::test(migrations = "./migrations")]
async fn bad_input_gets_a_clear_4xx_and_reserves_nothing(pool: MySqlPool) {
    let redis = TestRedis::new("h4").await;
    let state = engine(&pool, &redis, 10, 2).await;
    let unknown_product =
        serde_json::json!({ "user_id": 1, "product_id": 999, "qty": 1, "idempotency_key": "x" }).to_string();
    let oversized = format!(r#"{{"user_id":1,"product_id":7,"qty":1,"idempotency_key":"{}"}}"#, "k".repeat(10_000));
    let cases: Vec<(&str, String, StatusCode, &str)> = vec![
        ("negative qty", order(1, -1, "a"), StatusCode::BAD_REQUEST, "BAD_REQUEST"),
        ("zero qty", order(1, 0, "a"), StatusCode::BAD_REQUEST, "BAD_REQUEST"),
        ("qty over the limit", order(1, 3, "a"), StatusCode::BAD_REQUEST, "BAD_REQUEST"),
        ("unknown product", unknown_product, StatusCode::NOT_FOUND, "UNKNOWN_PRODUCT"),
        ("malformed JSON", "{\"user_id\": 1,".to_string(), StatusCode::BAD_REQUEST, "BAD_REQUEST"),
        (
            "missing field",
            r#"{"user_id":1,"product_id":7,"qty":1}"#.to_string(),
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
        ),
        ("empty idempotency key", order(1, 1, ""), StatusCode::BAD_REQUEST, "BAD_REQUEST"),
        ("oversized body", oversized, StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE"),
    ];
    for (what, body, expected, code) in cases {
        let (status, answer) = call(&state, "POST", "/orders", body).await;
        assert_eq!(status, expected, "{what}: {answer}");
        assert_eq!(answer["error"], code, "{what}");
        assert!(answer["message"].as_str().is_some_and(|m| !m.is_empty()), "{what} explains itself");
    }
    nothing_reserved(&state, 10).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn an_unknown_order_is_not_found_and_cannot_be_paid(pool: MySqlPool) {
    let redis = TestRedis::new("h5").await;
    let state = engine(&pool, &redis, 10, 2).await;
    assert_eq!(call(&state, "GET", "/orders/7-nothing", Body::empty()).await.0, StatusCode::NOT_FOUND);
    assert_eq!(call(&state, "POST", "/orders/7-nothing/pay", buyer(1)).await.0, StatusCode::NOT_FOUND);
}

#[sqlx::test(migrations = "./migrations")]
async fn a_cancelled_order_returns_its_stock_and_cannot_be_paid(pool: MySqlPool) {
    let redis = TestRedis::new("h6").await;
    let state = engine(&pool, &redis, 10, 2).await;
    let (_, body) = call(&state, "POST", "/orders", order(1, 2, "k")).await;
    let order_no = body["order_no"].as_str().unwrap().to_string();

    let (status, early) = call(&state, "POST", &format!("/orders/{order_no}/cancel"), buyer(1)).await;
    assert_eq!((status, early["error"].as_str()), (StatusCode::CONFLICT, Some("NOT_CANCELLABLE")), "still in flight");

    persist_all(&state).await;

    let (status, cancelled) = call(&state, "POST", &format!("/orders/{order_no}/cancel"), buyer(1)).await;
    assert_eq!((status, cancelled["status"].as_str()), (StatusCode::OK, Some("CANCELLED")));
    let (status, paid) = call(&state, "POST", &format!("/orders/{order_no}/pay"), buyer(1)).await;
    assert_eq!((status, paid["error"].as_str()), (StatusCode::CONFLICT, Some("NOT_PAYABLE")));
    let stock: i64 = sqlx::query_scalar("SELECT stock FROM inventory").fetch_one(&pool).await.unwrap();
    assert_eq!(stock, 10, "the stock is back in the DB");
    let (_, shown) = call(&state, "GET", &format!("/orders/{order_no}"), Body::empty()).await;
    assert_eq!(shown["status"], "CANCELLED");
}

fn buyer(user: u64) -> String {
    serde_json::json!({ "user_id": user }).to_string()
}

#[sqlx::test(migrations = "./migrations")]
async fn another_buyer_can_neither_pay_nor_cancel_an_order_nor_see_it(pool: MySqlPool) {
    let redis = TestRedis::new("h7").await;
    let state = engine(&pool, &redis, 10, 2).await;
    let (_, body) = call(&state, "POST", "/orders", order(1, 1, "k")).await;
    let order_no = body["order_no"].as_str().unwrap().to_string();
    persist_all(&state).await;

    for action in ["pay", "cancel"] {
        let (status, answer) = call(&state, "POST", &format!("/orders/{order_no}/{action}"), buyer(2)).await;
        assert_eq!((status, answer["error"].as_str()), (StatusCode::NOT_FOUND, Some("UNKNOWN_ORDER")), "{action}");
    }
    let (status, _) = call(&state, "GET", &format!("/orders/{order_no}?user_id=2"), Body::empty()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not shown to another buyer");

    let status: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM orders").fetch_one(&pool).await.unwrap();
    assert_eq!(status, "WAIT_PAY", "nothing changed");
    let stock: i64 = sqlx::query_scalar("SELECT stock FROM inventory").fetch_one(&pool).await.unwrap();
    assert_eq!(stock, 9, "no stock returned");
    let (status, paid) = call(&state, "POST", &format!("/orders/{order_no}/pay"), buyer(1)).await;
    assert_eq!((status, paid["status"].as_str()), (StatusCode::OK, Some("PAID")), "the buyer still can");
}

#[sqlx::test(migrations = "./migrations")]
async fn paying_or_cancelling_without_saying_who_is_refused(pool: MySqlPool) {
    let redis = TestRedis::new("h8").await;
    let state = engine(&pool, &redis, 10, 2).await;
    let (_, body) = call(&state, "POST", "/orders", order(1, 1, "k")).await;
    let order_no = body["order_no"].as_str().unwrap().to_string();
    persist_all(&state).await;

    for action in ["pay", "cancel"] {
        let (status, answer) = call(&state, "POST", &format!("/orders/{order_no}/{action}"), Body::empty()).await;
        assert_eq!((status, answer["error"].as_str()), (StatusCode::BAD_REQUEST, Some("BAD_REQUEST")), "{action}");
    }
    let status: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM orders").fetch_one(&pool).await.unwrap();
    assert_eq!(status, "WAIT_PAY", "nothing changed");
}
