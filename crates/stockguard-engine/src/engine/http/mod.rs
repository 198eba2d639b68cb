//! The engine's HTTP API (axum).
//!
//! - `POST /orders` -> 202 `{order_no, status: "ACCEPTED"}`; 409 `SOLD_OUT` / `LIMIT_REACHED`;
//!   503 `NOT_READY` (stock key missing, not a sell-out); 400 bad input; 404 unknown product;
//!   413 oversized body.
//! - `GET /orders/{order_no}[?user_id=]` -> `PROCESSING`, `WAIT_PAY`, `PAID`, `CLOSED`,
//!   `CANCELLED`, `FAILED`; with `user_id`, another buyer's order is 404.
//! - `POST /orders/{order_no}/pay`, `POST /orders/{order_no}/cancel`, body `{user_id}`: only
//!   the order's buyer may (anyone else gets 404 and changes nothing); 400 without a buyer.
//! - `GET /health`, `GET /metrics` (Prometheus text).
//! - 429 `RATE_LIMITED` when a rate limit refuses a request.
//!
//! [`listen`] binds the socket `engine serve` listens on, with a backlog for a sale's burst.

mod error;
pub mod listen;
mod orders;

pub use error::ApiError;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;

use super::state::EngineState;

pub fn router(state: EngineState) -> Router {
    let limit = state.config.max_body_bytes;
    Router::new()
        .route("/orders", post(orders::create))
        .route("/orders/{order_no}", get(orders::show))
        .route("/orders/{order_no}/pay", post(orders::pay))
        .route("/orders/{order_no}/cancel", post(orders::cancel))
        .route("/health", get(orders::health))
        .route("/metrics", get(orders::metrics_text))
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

/// Serves until `shutdown` completes (mini-redis style: the caller decides when to stop).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: EngineState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state)).with_graceful_shutdown(shutdown).await
}
