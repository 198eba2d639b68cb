//! Order handlers: parse, validate, call the order path, answer.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use tracing::field::Empty;
use tracing::{Instrument as _, Span};

use super::error::ApiError;
use crate::engine::close::{close_order, CloseKind, CloseOutcome};
use crate::engine::order_no::product_of;
use crate::engine::reserve::{ReserveOutcome, ReserveRequest};
use crate::engine::state::{EngineState, RedisCallError};
use crate::engine::{degraded, metrics, vouched};
use stockguard_core::switch::Mode;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateOrder {
    pub user_id: u64,
    pub product_id: u64,
    pub qty: i64,
    pub idempotency_key: String,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct OrderAnswer {
    pub order_no: String,
    pub status: String,
}

const MAX_IDEMPOTENCY_KEY: usize = 64;

/// Who pays or cancels: the body of `POST /orders/{order_no}/pay` and `.../cancel`. Order
/// numbers are guessable (product, time, instance, counter), so the number alone proves
/// nothing; an order acted on by anyone but its buyer is answered 404, as if it did not exist.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Buyer {
    pub user_id: u64,
}

/// `GET /orders/{order_no}?user_id=`: with a buyer, only that buyer's order is shown (or
/// their reservation's FAILED, when its number turned out to be another buyer's order).
#[derive(Debug, Deserialize)]
pub struct Viewer {
    pub user_id: Option<u64>,
}

fn parse_buyer(body: Result<Bytes, BytesRejection>) -> Result<Buyer, ApiError> {
    let body = body.map_err(|r| ApiError::BadRequest(r.body_text()))?;
    serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("say who you are: a JSON body {{\"user_id\": ...}} ({e})")))
}

fn parse_body(body: &Bytes) -> Result<CreateOrder, ApiError> {
    let req: CreateOrder =
        serde_json::from_slice(body).map_err(|e| ApiError::BadRequest(format!("malformed order: {e}")))?;
    if req.qty <= 0 {
        return Err(ApiError::BadRequest(format!("qty must be at least 1, got {}", req.qty)));
    }
    if req.idempotency_key.is_empty() || req.idempotency_key.len() > MAX_IDEMPOTENCY_KEY {
        return Err(ApiError::BadRequest(format!("idempotency_key must be 1-{MAX_IDEMPOTENCY_KEY} bytes")));
    }
    Ok(req)
}

pub async fn create(
    State(state): State<EngineState>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<(StatusCode, Json<OrderAnswer>), ApiError> {
    // One span per request, its ids recorded as they become known. Under the default `warn`
    // filter it is disabled: a level check, and records that do nothing.
    let span = tracing::info_span!("order", product_id = Empty, user_id = Empty, order_no = Empty);
    let m = metrics::get();
    m.http_in_flight.inc();
    let result = metrics::timed(&m.request_seconds, create_order(&state, body, &span)).instrument(span.clone()).await;
    m.http_in_flight.dec();
    let outcome = match &result {
        Ok(_) => "accepted",
        Err(e) => e.code(),
    };
    m.requests.with_label_values(&[outcome]).inc();
    result
}

async fn create_order(
    state: &EngineState,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
    span: &Span,
) -> Result<(StatusCode, Json<OrderAnswer>), ApiError> {
    // The instance-wide bucket first: it costs no I/O.
    if !state.limits.admit_global() {
        return Err(ApiError::RateLimited);
    }
    let body = body.map_err(|r| match r.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::TooLarge,
        _ => ApiError::BadRequest(r.body_text()),
    })?;
    let req = parse_body(&body)?;
    span.record("product_id", req.product_id).record("user_id", req.user_id);
    let rule = state.product(req.product_id).await?.ok_or(ApiError::UnknownProduct(req.product_id))?;
    if req.qty > rule.per_user_limit {
        return Err(ApiError::BadRequest(format!(
            "qty {} is over the per-user limit of {}",
            req.qty, rule.per_user_limit
        )));
    }
    let request = ReserveRequest {
        user_id: req.user_id,
        product_id: req.product_id,
        qty: req.qty,
        idempotency_key: req.idempotency_key,
        per_user_limit: rule.per_user_limit,
    };
    // Held until the answer: a switch change counts as applied only once every request
    // that chose its path under the old mode has finished.
    let _admitted = state.admission.read().await;
    let outcome = match state.mode_for(request.product_id) {
        // The guided exit is rebuilding Redis from the DB: nothing may sell for a moment.
        Mode::Paused => return Err(ApiError::Paused),
        Mode::Degraded => {
            // Degraded: Redis is not touched at all, not even for the per-user rate.
            let order_no = state.reserver().await?.next_order_no(request.product_id);
            span.record("order_no", order_no.as_str());
            degraded::place_order(&state.pool, state.config.home, &request, &order_no, state.config.payment_timeout)
                .await?
        }
        Mode::Normal => {
            let mut redis = state.redis.clone();
            if state.limits.limits_users()
                && !state.redis_call(state.limits.admit_user(&mut redis, &state.keys, request.user_id)).await?
            {
                return Err(ApiError::RateLimited);
            }
            let reserver = state.reserver().await?;
            match state.vouching().await.gate() {
                Some(gate) => vouched::reserve_vouched(state, gate, reserver, &request).await?,
                // After a failover that lost reservations, Redis's word is not enough: the
                // order is in the DB before its buyer is told (issue 54).
                None if !state.history_whole(request.product_id).await => {
                    vouched::reserve_written_through(state, reserver, &request).await?
                }
                None => {
                    let reserve = reserver.reserve(&mut redis, &state.keys, &request);
                    metrics::timed(&metrics::get().redis_seconds, state.redis_call(reserve)).await?
                }
            }
        }
    };
    match outcome {
        ReserveOutcome::Reserved { order_no } | ReserveOutcome::Replayed { order_no } => {
            // A replay's number is the first request's, not the one recorded above.
            span.record("order_no", order_no.as_str());
            Ok((StatusCode::ACCEPTED, Json(OrderAnswer { order_no, status: "ACCEPTED".into() })))
        }
        ReserveOutcome::SoldOut => Err(ApiError::SoldOut),
        ReserveOutcome::LimitReached => Err(ApiError::LimitReached),
        ReserveOutcome::NotReady => Err(ApiError::NotReady),
    }
}

/// Prometheus text format.
pub async fn metrics_text(State(state): State<EngineState>) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    let mut redis = state.redis.clone();
    let products = match stockguard_core::catalog::home_products(&state.pool, state.config.home).await {
        Ok(ids) => ids,
        Err(_) => state.known_products().await,
    };
    let sampled = tokio::time::timeout(
        metrics::SCRAPE_BUDGET,
        stockguard_core::backlog::sample(&mut redis, &state.keys, &products),
    )
    .await
    .ok()
    .and_then(Result::ok)
    .map(|b| (b.messages, b.inflight_units));
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        metrics::render(sampled, state.breaker.is_tripped()),
    )
}

/// Where an order is: in the DB (its status), refused by the DB (FAILED), or still in flight
/// (PROCESSING).
/// With a `viewer`, another buyer's order is not shown: the viewer's own reservation under
/// that number failed (`ORDER_NO_CLASH`), or the number is not theirs (404).
async fn status_of(state: &EngineState, order_no: &str, viewer: Option<u64>) -> Result<String, ApiError> {
    if let Some(known) = persisted_status(state, order_no, viewer).await? {
        return known;
    }
    if let Some(product) = product_of(order_no) {
        let mut redis = state.redis.clone();
        let in_flight: bool =
            redis::cmd("HEXISTS").arg(state.keys.inflight(product)).arg(order_no).query_async(&mut redis).await?;
        if in_flight {
            return Ok("PROCESSING".into());
        }
    }
    // Not in the DB a moment ago and not in flight now: persisted (or failed back) in
    // between, since a reservation leaves the in-flight hash only after its outcome is
    // committed. Asked again, the DB has it. (Found by the mq-backlog drill: answering 404
    // here told buyers of accepted orders that their order did not exist.)
    match persisted_status(state, order_no, viewer).await? {
        Some(known) => known,
        None => Err(ApiError::UnknownOrder(order_no.to_string())),
    }
}

/// The order's state as the DB has it: its row, or its failure. `None` when the DB has
/// neither; `Some(Err)` when the number is another buyer's.
async fn persisted_status(
    state: &EngineState,
    order_no: &str,
    viewer: Option<u64>,
) -> Result<Option<Result<String, ApiError>>, ApiError> {
    let row: Option<(String, u64)> =
        sqlx::query_as("SELECT CAST(status AS CHAR), user_id FROM orders WHERE order_no = ?")
            .bind(order_no)
            .fetch_optional(&state.pool)
            .await?;
    let someone_elses = match row {
        Some((status, owner)) if viewer.is_none_or(|v| v == owner) => return Ok(Some(Ok(status))),
        Some(_) => true,
        None => false,
    };
    let failed: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM order_failures WHERE order_no = ? AND (? IS NULL OR user_id = ?) LIMIT 1")
            .bind(order_no)
            .bind(viewer)
            .bind(viewer)
            .fetch_optional(&state.pool)
            .await?;
    if failed.is_some() {
        return Ok(Some(Ok("FAILED".into())));
    }
    Ok(someone_elses.then(|| Err(ApiError::UnknownOrder(order_no.to_string()))))
}

pub async fn show(
    State(state): State<EngineState>,
    Path(order_no): Path<String>,
    viewer: Result<Query<Viewer>, QueryRejection>,
) -> Result<Json<OrderAnswer>, ApiError> {
    let Query(viewer) = viewer.map_err(|r| ApiError::BadRequest(r.body_text()))?;
    let status = status_of(&state, &order_no, viewer.user_id).await?;
    Ok(Json(OrderAnswer { order_no, status }))
}

/// Compare-and-set `WAIT_PAY -> PAID` of the buyer's own order. Paying twice is answered
/// PAID; paying a closed, cancelled, failed or not yet persisted order fails cleanly;
/// another buyer's order is unknown (404) and unchanged.
pub async fn pay(
    State(state): State<EngineState>,
    Path(order_no): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<OrderAnswer>, ApiError> {
    let buyer = parse_buyer(body)?;
    let updated =
        sqlx::query("UPDATE orders SET status = 'PAID' WHERE order_no = ? AND user_id = ? AND status = 'WAIT_PAY'")
            .bind(&order_no)
            .bind(buyer.user_id)
            .execute(&state.pool)
            .await?
            .rows_affected();
    if updated == 1 {
        return Ok(Json(OrderAnswer { order_no, status: "PAID".into() }));
    }
    match status_of(&state, &order_no, Some(buyer.user_id)).await?.as_str() {
        "PAID" => Ok(Json(OrderAnswer { order_no, status: "PAID".into() })),
        "CLOSED" => Err(ApiError::NotPayable(order_no, "CLOSED")),
        "CANCELLED" => Err(ApiError::NotPayable(order_no, "CANCELLED")),
        "FAILED" => Err(ApiError::NotPayable(order_no, "FAILED")),
        _ => Err(ApiError::NotPayable(order_no, "PROCESSING")),
    }
}

/// The buyer cancels their own order: the same compare-and-set path as the timeout close,
/// at once. Another buyer's order is unknown (404) and unchanged.
pub async fn cancel(
    State(state): State<EngineState>,
    Path(order_no): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<OrderAnswer>, ApiError> {
    let buyer = parse_buyer(body)?;
    let now = chrono::Utc::now().naive_utc();
    match close_order(&state.pool, &order_no, CloseKind::Cancel { user_id: buyer.user_id }, now).await? {
        CloseOutcome::Closed => Ok(Json(OrderAnswer { order_no, status: "CANCELLED".into() })),
        CloseOutcome::NotWaiting(status) if status == "CANCELLED" => Ok(Json(OrderAnswer { order_no, status })),
        CloseOutcome::NotWaiting(status) => Err(ApiError::NotCancellable(order_no, status)),
        CloseOutcome::NotFound => {
            // Still in flight (PROCESSING): not in the DB yet, so nothing to cancel until it
            // is; or unknown (404).
            let status = status_of(&state, &order_no, Some(buyer.user_id)).await?;
            Err(ApiError::NotCancellable(order_no, status))
        }
    }
}

/// Healthy when the DB answers and, unless this instance is off the Redis path, Redis too.
/// The body says which mode and switch revision the instance is on, and its breaker.
pub async fn health(State(state): State<EngineState>) -> Result<Json<serde_json::Value>, ApiError> {
    sqlx::query("SELECT 1").execute(&state.pool).await?;
    let mode = state.home_mode();
    let mut redis = state.redis.clone();
    let ping =
        tokio::time::timeout(state.config.redis_timeout, redis::cmd("PING").query_async::<String>(&mut redis)).await;
    let redis_ok = matches!(ping, Ok(Ok(_)));
    if !redis_ok && mode == Mode::Normal {
        return Err(match ping {
            Ok(Err(e)) => e.into(),
            _ => RedisCallError::TimedOut(state.config.redis_timeout).into(),
        });
    }
    let breaker = state.breaker.report();
    let history_lost: Vec<serde_json::Value> = state
        .histories
        .lost()
        .iter()
        .map(|(product_id, epoch)| serde_json::json!({ "product_id": product_id, "epoch": epoch }))
        .collect();
    Ok(Json(serde_json::json!({
        "status": "ok",
        "instance_id": state.config.instance_id,
        "mode": mode.as_str(),
        "revision": state.switch_view().revision,
        "redis": if redis_ok { "ok" } else { "down" },
        "breaker": breaker.state,
        "breaker_reason": breaker.reason,
        "accepted_guarantee": state.vouching().await.guarantee(),
        "write_through": state.write_through.counts(),
        // Products whose Redis history a failover lost (issue 54): written through until rebuilt.
        "history_lost": history_lost,
    })))
}
