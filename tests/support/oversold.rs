//! A sale oversold in the DB, as a hand edit or a bug leaves one: `sold` paid orders for
//! `initial` units, the ledger's identity intact (stock below zero by the units beyond).
//! What the compensation tests start from.

use sqlx::MySqlPool;

/// Puts `product` on sale with `initial` units at `price_cents` (or reprices a product already
/// there) and adds `sold` paid orders `{prefix}001`, `{prefix}002`, ... by buyers 1001, 1002, ...
pub async fn seed(pool: &MySqlPool, product: u64, initial: i64, sold: u64, price_cents: i64, prefix: &str) {
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, price_cents) VALUES (?, 'oversold', ?, ?, ?) \
         ON DUPLICATE KEY UPDATE initial_stock = VALUES(initial_stock), stock = VALUES(stock), price_cents = VALUES(price_cents)",
    )
    .bind(product)
    .bind(initial)
    .bind(initial - sold as i64)
    .bind(price_cents)
    .execute(pool)
    .await
    .unwrap();
    for n in 1..=sold {
        sqlx::query(
            "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, source, pay_deadline) \
             VALUES (?, ?, ?, 1, 'PAID', 'DB', NOW() + INTERVAL 1 HOUR)",
        )
        .bind(format!("{prefix}{n:03}"))
        .bind(1000 + n)
        .bind(product)
        .execute(pool)
        .await
        .unwrap();
    }
}
