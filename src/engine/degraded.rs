//! The degrade path: with Redis out of the picture, an order goes straight to the DB, the
//! conditional UPDATE and the order insert in one transaction (contract section 5).
//!
//! The conditional UPDATE locks the product's inventory row first, so everything after it in
//! the transaction (the per-user limit check, the insert) is serialised per product: two
//! requests of one buyer cannot both pass the limit.

use std::time::Duration;

use sqlx::MySqlPool;

use super::is_duplicate;
use super::ledger_write::{deduct, insert_orders, NewOrder, Source};
use super::reserve::{ReserveOutcome, ReserveRequest};

async fn existing_order(pool: &MySqlPool, req: &ReserveRequest) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT order_no FROM orders WHERE user_id = ? AND product_id = ? AND idempotency_key = ?")
        .bind(req.user_id)
        .bind(req.product_id)
        .bind(&req.idempotency_key)
        .fetch_optional(pool)
        .await
}

/// Places an order in the DB alone. `NotReady` never comes from here: the DB always knows.
pub async fn place_order(
    pool: &MySqlPool,
    req: &ReserveRequest,
    order_no: &str,
    payment_timeout: Duration,
) -> Result<ReserveOutcome, sqlx::Error> {
    if let Some(order_no) = existing_order(pool, req).await? {
        return Ok(ReserveOutcome::Replayed { order_no });
    }
    let mut tx = super::metrics::begin(pool).await?;
    if !deduct(&mut tx, req.product_id, req.qty).await? {
        tx.rollback().await?;
        return Ok(ReserveOutcome::SoldOut);
    }
    let bought: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(buy_count), 0) AS SIGNED) FROM orders \
         WHERE user_id = ? AND product_id = ? AND status IN ('WAIT_PAY', 'PAID')",
    )
    .bind(req.user_id)
    .bind(req.product_id)
    .fetch_one(&mut *tx)
    .await?;
    if bought + req.qty > req.per_user_limit {
        tx.rollback().await?;
        return Ok(ReserveOutcome::LimitReached);
    }
    let deadline = (chrono::Utc::now() + chrono::Duration::from_std(payment_timeout).unwrap_or_default()).naive_utc();
    let order = NewOrder {
        order_no,
        user_id: req.user_id,
        product_id: req.product_id,
        qty: req.qty,
        idempotency_key: &req.idempotency_key,
        source: Source::Db,
        pay_deadline: deadline,
    };
    let inserted = insert_orders(&mut tx, &[order]).await;
    match inserted {
        Ok(_) => {
            tx.commit().await?;
            Ok(ReserveOutcome::Reserved { order_no: order_no.to_string() })
        }
        // The same (user, idempotency key) raced us: answer with its order.
        Err(e) if is_duplicate(&e) => {
            tx.rollback().await?;
            match existing_order(pool, req).await? {
                Some(order_no) => Ok(ReserveOutcome::Replayed { order_no }),
                None => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}
