//! Orders posted to an engine's router in process, without a socket. Not part of `support`
//! (whose module the desktop crate's e2e test also compiles, without axum or tower): the
//! test binaries that use it declare it in their `main.rs`.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt as _;
use stockguard_engine::engine::http::router;
use stockguard_engine::engine::state::EngineState;
use tower::ServiceExt as _;

/// `POST /orders` for `qty` units of `product`: the status and the JSON answer (`Null` when
/// the body is not JSON).
pub async fn post_order(
    state: &EngineState,
    product: u64,
    user: u64,
    qty: i64,
    idem: &str,
) -> (StatusCode, serde_json::Value) {
    let body = serde_json::json!({ "user_id": user, "product_id": product, "qty": qty, "idempotency_key": idem });
    let req = Request::builder()
        .method("POST")
        .uri("/orders")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = router(state.clone()).oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null))
}
