//! The four ways to deduct, as SQL on the bench's own tables ([`super::SCHEMA`]): one
//! buyer's attempt on one connection, and what became of the buyer.

use serde::Serialize;
use sqlx::mysql::MySqlConnection;
use sqlx::Connection as _;

/// A way to take one buyer's units off the hot row and record the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// `UPDATE ... SET stock = stock - ? WHERE ... AND stock >= ?` then the order insert, one
    /// transaction; zero affected rows means sold out.
    ConditionalUpdate,
    /// `SELECT stock ... FOR UPDATE`, check in Rust, write the computed stock, insert: the
    /// naive strategy with the read locked.
    ForUpdate,
    /// Read stock and version without a lock, then `UPDATE ... WHERE version = ?`; zero
    /// affected rows means someone else won, so read again, up to the attempt limit.
    Optimistic,
    /// Read stock without a lock, check it in Rust, write the computed value back. Wrong.
    Naive,
}

impl Strategy {
    pub const ALL: [Strategy; 4] =
        [Strategy::ConditionalUpdate, Strategy::ForUpdate, Strategy::Optimistic, Strategy::Naive];

    pub fn label(self) -> &'static str {
        match self {
            Strategy::ConditionalUpdate => "conditional update",
            Strategy::ForUpdate => "SELECT ... FOR UPDATE",
            Strategy::Optimistic => "optimistic version",
            Strategy::Naive => "naive read-then-write",
        }
    }
}

/// What became of one buyer.
pub enum Outcome {
    Ordered { retries: u64 },
    SoldOut { retries: u64 },
    GaveUp { retries: u64 },
}

/// One buyer's attempt of `qty` units of `product`.
pub async fn attempt(
    conn: &mut MySqlConnection,
    strategy: Strategy,
    product: u64,
    buyer: u64,
    qty: i64,
    optimistic_attempts: u32,
) -> Result<Outcome, sqlx::Error> {
    match strategy {
        Strategy::ConditionalUpdate => conditional_update(conn, product, buyer, qty).await,
        Strategy::ForUpdate => read_then_write(conn, product, buyer, qty, true).await,
        Strategy::Optimistic => optimistic(conn, product, buyer, qty, optimistic_attempts).await,
        Strategy::Naive => read_then_write(conn, product, buyer, qty, false).await,
    }
}

async fn insert_order(conn: &mut MySqlConnection, product: u64, buyer: u64, qty: i64) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO bench_orders (product_id, user_id, qty) VALUES (?, ?, ?)")
        .bind(product)
        .bind(buyer)
        .bind(qty)
        .execute(conn)
        .await?;
    Ok(())
}

async fn conditional_update(
    conn: &mut MySqlConnection,
    product: u64,
    buyer: u64,
    qty: i64,
) -> Result<Outcome, sqlx::Error> {
    let mut tx = conn.begin().await?;
    let deducted = sqlx::query("UPDATE bench_inventory SET stock = stock - ? WHERE product_id = ? AND stock >= ?")
        .bind(qty)
        .bind(product)
        .bind(qty)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if deducted == 0 {
        tx.rollback().await?;
        return Ok(Outcome::SoldOut { retries: 0 });
    }
    insert_order(&mut tx, product, buyer, qty).await?;
    tx.commit().await?;
    Ok(Outcome::Ordered { retries: 0 })
}

async fn optimistic(
    conn: &mut MySqlConnection,
    product: u64,
    buyer: u64,
    qty: i64,
    attempts: u32,
) -> Result<Outcome, sqlx::Error> {
    let mut retries = 0;
    for attempt in 1..=attempts {
        // Read outside the transaction: a read inside it would see the same snapshot on
        // every retry (REPEATABLE READ).
        let (stock, version): (i64, u64) =
            sqlx::query_as("SELECT stock, version FROM bench_inventory WHERE product_id = ?")
                .bind(product)
                .fetch_one(&mut *conn)
                .await?;
        if stock < qty {
            return Ok(Outcome::SoldOut { retries });
        }
        let mut tx = conn.begin().await?;
        let won = sqlx::query(
            "UPDATE bench_inventory SET stock = stock - ?, version = version + 1 WHERE product_id = ? AND version = ?",
        )
        .bind(qty)
        .bind(product)
        .bind(version)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if won == 1 {
            insert_order(&mut tx, product, buyer, qty).await?;
            tx.commit().await?;
            return Ok(Outcome::Ordered { retries });
        }
        tx.rollback().await?;
        if attempt < attempts {
            retries += 1;
        }
    }
    Ok(Outcome::GaveUp { retries })
}

/// Read the stock, check it in Rust, write the computed value back, insert the order.
///
/// With `lock` the read is `SELECT ... FOR UPDATE`: the row stays locked until the commit, so
/// nobody else reads it in between. Without, it is the classic bug: a plain `SELECT` takes no
/// lock (the transaction does not help), so several buyers read the same stock, each writes
/// back that value minus their units, and all of their orders stand.
async fn read_then_write(
    conn: &mut MySqlConnection,
    product: u64,
    buyer: u64,
    qty: i64,
    lock: bool,
) -> Result<Outcome, sqlx::Error> {
    let mut tx = conn.begin().await?;
    let read = if lock {
        "SELECT stock FROM bench_inventory WHERE product_id = ? FOR UPDATE"
    } else {
        "SELECT stock FROM bench_inventory WHERE product_id = ?"
    };
    let stock: i64 = sqlx::query_scalar(read).bind(product).fetch_one(&mut *tx).await?;
    if stock < qty {
        tx.rollback().await?;
        return Ok(Outcome::SoldOut { retries: 0 });
    }
    sqlx::query("UPDATE bench_inventory SET stock = ? WHERE product_id = ?")
        .bind(stock - qty)
        .bind(product)
        .execute(&mut *tx)
        .await?;
    insert_order(&mut tx, product, buyer, qty).await?;
    tx.commit().await?;
    Ok(Outcome::Ordered { retries: 0 })
}
