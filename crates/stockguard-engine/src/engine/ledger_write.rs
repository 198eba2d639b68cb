//! The two writes every order path makes to the ledger, written once: the conditional
//! deduction (the affected-row count decides) and the order insert. The Redis path's batches
//! and single orders and the degraded path all call these, inside their own transactions,
//! always deduction first (inventory before orders: the lock order every transaction keeps).

use chrono::NaiveDateTime;
use sqlx::{MySql, Transaction};

/// `UPDATE inventory SET stock = stock - n WHERE product_id = ? AND stock >= n`: true when
/// the units were there and are now deducted.
pub async fn deduct(tx: &mut Transaction<'static, MySql>, product_id: u64, qty: i64) -> Result<bool, sqlx::Error> {
    let affected = sqlx::query("UPDATE inventory SET stock = stock - ? WHERE product_id = ? AND stock >= ?")
        .bind(qty)
        .bind(product_id)
        .bind(qty)
        .execute(&mut **tx)
        .await?
        .rows_affected();
    Ok(affected == 1)
}

/// Where an order was sold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Reserved in Redis, persisted by a consumer (with its reservation sequence number and
    /// the Redis epoch that number belongs to).
    Redis { reserve_seq: u64, reserve_epoch: u64 },
    /// Sold straight through the DB in degraded mode.
    Db,
}

/// A `WAIT_PAY` order to insert.
#[derive(Debug, Clone)]
pub struct NewOrder<'a> {
    pub order_no: &'a str,
    pub user_id: u64,
    pub product_id: u64,
    pub qty: i64,
    pub idempotency_key: &'a str,
    pub source: Source,
    pub pay_deadline: NaiveDateTime,
}

/// One multi-row INSERT of the orders. A unique-key clash fails the whole statement.
pub async fn insert_orders(tx: &mut Transaction<'static, MySql>, orders: &[NewOrder<'_>]) -> Result<(), sqlx::Error> {
    let mut qb = sqlx::QueryBuilder::<MySql>::new(
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, idempotency_key, source, reserve_seq, reserve_epoch, pay_deadline) ",
    );
    qb.push_values(orders, |mut b, o| {
        let (source, seq, epoch) = match o.source {
            Source::Redis { reserve_seq, reserve_epoch } => ("REDIS", Some(reserve_seq), Some(reserve_epoch)),
            Source::Db => ("DB", None, None),
        };
        b.push_bind(o.order_no)
            .push_bind(o.user_id)
            .push_bind(o.product_id)
            .push_bind(o.qty)
            .push_bind("WAIT_PAY")
            .push_bind(o.idempotency_key)
            .push_bind(source)
            .push_bind(seq)
            .push_bind(epoch)
            .push_bind(o.pay_deadline);
    });
    qb.build().execute(&mut **tx).await?;
    Ok(())
}
