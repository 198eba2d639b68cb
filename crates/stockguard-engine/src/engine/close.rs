//! Closing orders: the timeout close and the buyer's cancel take one path.
//!
//! In one transaction: lock the product's inventory row (inventory before orders, always),
//! compare-and-set the order `WAIT_PAY -> CLOSED|CANCELLED`, and only if that changed a row,
//! return the stock to `inventory` and write the release to the outbox. A close that runs
//! twice, or races a cancel, changes the order once and returns the stock once. A cancel
//! names its buyer and changes only that buyer's order: order numbers are guessable.
//!
//! A unit the DB owes never goes back to Redis: while stock is below zero (the product was
//! sold beyond its stock), a returned unit pays back that debt in the DB, and only what the
//! close brings stock above zero is released ([`units_to_release`]). Released anyway, Redis
//! would sell again units the DB then refuses (`REDIS_HIGH`). Compensation's cancel keeps the
//! same rule (its trigger in `migrations/20261202000022_compensation_from_the_ledger.sql`).

use chrono::NaiveDateTime;
use sqlx::MySqlPool;
use stockguard_core::switch::Home;

/// Where a closed order ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseKind {
    /// The payment deadline passed.
    Timeout,
    /// The buyer cancelled. To anyone else the order is [`CloseOutcome::NotFound`].
    Cancel { user_id: u64 },
}

impl CloseKind {
    fn status(self) -> &'static str {
        match self {
            Self::Timeout => "CLOSED",
            Self::Cancel { .. } => "CANCELLED",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseOutcome {
    /// This call closed it; the stock is back in the DB and a release is pending.
    Closed,
    /// Someone else got there first, or it was paid: its current status.
    NotWaiting(String),
    NotFound,
}

/// Closes one order. A timeout close only applies once `now` is past the order's deadline.
pub async fn close_order(
    pool: &MySqlPool,
    order_no: &str,
    kind: CloseKind,
    now: NaiveDateTime,
) -> Result<CloseOutcome, sqlx::Error> {
    let Some((product_id, qty, owner)) =
        sqlx::query_as::<_, (u64, i32, u64)>("SELECT product_id, buy_count, user_id FROM orders WHERE order_no = ?")
            .bind(order_no)
            .fetch_optional(pool)
            .await?
    else {
        return Ok(CloseOutcome::NotFound);
    };
    // Another buyer's order does not exist for this one: saying otherwise would confirm a
    // guessed number.
    if matches!(kind, CloseKind::Cancel { user_id } if user_id != owner) {
        return Ok(CloseOutcome::NotFound);
    }
    let mut tx = pool.begin().await?;
    let stock: i64 = sqlx::query_scalar("SELECT CAST(stock AS SIGNED) FROM inventory WHERE product_id = ? FOR UPDATE")
        .bind(product_id)
        .fetch_one(&mut *tx)
        .await?;
    // The compare-and-set also holds the deadline (timeout) or the buyer (cancel).
    let guard = match kind {
        CloseKind::Timeout => " AND pay_deadline <= ?",
        CloseKind::Cancel { .. } => " AND user_id = ?",
    };
    let sql = format!("UPDATE orders SET status = ? WHERE order_no = ? AND status = 'WAIT_PAY'{guard}");
    let cas = sqlx::query(&sql).bind(kind.status()).bind(order_no);
    let cas = match kind {
        CloseKind::Timeout => cas.bind(now),
        CloseKind::Cancel { user_id } => cas.bind(user_id),
    };
    if cas.execute(&mut *tx).await?.rows_affected() != 1 {
        tx.rollback().await?;
        let status: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM orders WHERE order_no = ?")
            .bind(order_no)
            .fetch_one(pool)
            .await?;
        return Ok(CloseOutcome::NotWaiting(status));
    }
    sqlx::query("UPDATE inventory SET stock = stock + ? WHERE product_id = ?")
        .bind(qty)
        .bind(product_id)
        .execute(&mut *tx)
        .await?;
    let release = units_to_release(stock, i64::from(qty));
    if release > 0 {
        sqlx::query("INSERT INTO outbox (kind, product_id, order_no, qty) VALUES ('RELEASE', ?, ?, ?)")
            .bind(product_id)
            .bind(order_no)
            .bind(release)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(CloseOutcome::Closed)
}

/// Of `qty` units returned to a stock of `stock`, those that go back to Redis: what the return
/// brings stock above zero. The rest pays back units sold beyond stock.
pub fn units_to_release(stock: i64, qty: i64) -> i64 {
    (stock + qty).max(0) - stock.max(0)
}

/// Closes up to `limit` orders of `home`'s products whose deadline passed by `now`; returns
/// how many it closed.
pub async fn close_due_orders(
    pool: &MySqlPool,
    home: Home,
    now: NaiveDateTime,
    limit: u32,
) -> Result<usize, sqlx::Error> {
    let due: Vec<(String,)> = sqlx::query_as(
        "SELECT o.order_no FROM orders o JOIN inventory i ON i.product_id = o.product_id \
         WHERE o.status = 'WAIT_PAY' AND o.pay_deadline <= ? AND i.rig <=> ? ORDER BY o.pay_deadline LIMIT ?",
    )
    .bind(now)
    .bind(home.rig())
    .bind(limit)
    .fetch_all(pool)
    .await?;
    let mut closed = 0;
    for (order_no,) in due {
        if close_order(pool, &order_no, CloseKind::Timeout, now).await? == CloseOutcome::Closed {
            closed += 1;
        }
    }
    Ok(closed)
}

#[cfg(test)]
mod tests {
    use super::units_to_release;

    #[test]
    fn a_unit_returned_while_stock_is_below_zero_pays_the_debt_and_never_reaches_redis() {
        assert_eq!(units_to_release(-5, 1), 0);
        assert_eq!(units_to_release(-1, 1), 0);
        assert_eq!(units_to_release(-1, 3), 2, "only what lifts stock above zero");
        assert_eq!(units_to_release(0, 2), 2);
        assert_eq!(units_to_release(7, 1), 1);
    }
}
