//! After the run: wait for the engine to persist every accepted order, then check the
//! generator's own record against the DB.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde::Serialize;
use sqlx::MySqlPool;

use super::drive::Recorded;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Verdict {
    /// Accepted orders found neither in `orders` nor failed back: must be 0.
    pub lost: u64,
    /// Orders in the DB for this run's buyers that no answer announced, or an order number
    /// announced twice: must be 0.
    pub duplicated: u64,
    /// Accepted, then refused by the DB and told FAILED (allowed, but worth knowing).
    pub failed_back: u64,
    /// Units of live orders beyond initial stock, over the products: must be 0.
    pub oversold_units: i64,
    /// SOLD_OUT answers for products that still had stock at the end.
    pub false_sold_out: u64,
    /// True when every accepted order reached the DB within the drain timeout.
    pub drained: bool,
}

/// The order numbers of `order_nos` that `table` holds.
async fn found_in(pool: &MySqlPool, table: &str, order_nos: &[&str]) -> Result<HashSet<String>, sqlx::Error> {
    let mut found = HashSet::new();
    for chunk in order_nos.chunks(1000) {
        let sql = format!("SELECT order_no FROM {table} WHERE order_no IN ({})", vec!["?"; chunk.len()].join(","));
        let mut q = sqlx::query_scalar::<_, String>(&sql);
        for no in chunk {
            q = q.bind(*no);
        }
        found.extend(q.fetch_all(pool).await?);
    }
    Ok(found)
}

/// Waits (up to `within`) until every order number is an order row or a recorded failure;
/// answers the numbers found in `orders` and in `order_failures`.
pub(crate) async fn outcomes_of(
    pool: &MySqlPool,
    order_nos: &[&str],
    within: Duration,
) -> Result<(HashSet<String>, HashSet<String>), sqlx::Error> {
    let deadline = Instant::now() + within;
    loop {
        let in_orders = found_in(pool, "orders", order_nos).await?;
        let in_failures = found_in(pool, "order_failures", order_nos).await?;
        if in_orders.len() + in_failures.len() >= order_nos.len() || Instant::now() >= deadline {
            return Ok((in_orders, in_failures));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub async fn verify(
    pool: &MySqlPool,
    rec: &Recorded,
    products: &[u64],
    buyers: u64,
    drain_timeout: Duration,
) -> Result<Verdict, sqlx::Error> {
    let accepted: Vec<&str> =
        rec.answers.iter().filter(|a| a.status == 202).filter_map(|a| a.order_no.as_deref()).collect();
    let announced: HashSet<&str> = accepted.iter().copied().collect();
    let mut verdict = Verdict { duplicated: (accepted.len() - announced.len()) as u64, ..Verdict::default() };
    let unique: Vec<&str> = announced.iter().copied().collect();

    let (in_orders, in_failures) = outcomes_of(pool, &unique, drain_timeout).await?;
    verdict.lost = unique.iter().filter(|n| !in_orders.contains(**n) && !in_failures.contains(**n)).count() as u64;
    verdict.drained = verdict.lost == 0;
    verdict.failed_back = in_failures.len() as u64;

    // A row of the run's buyers that no ACCEPTED answer announced is an order nobody was told
    // of (a retry sold twice). Counted by number, not as rows now minus rows found above: a
    // consumer still draining when the wait ran out wrote announced orders in between, and a
    // slow drain read as that many duplicates (105 on a loaded machine).
    let run_rows: Vec<String> = sqlx::query_scalar("SELECT order_no FROM orders WHERE user_id BETWEEN ? AND ?")
        .bind(rec.first_user)
        .bind(rec.first_user + buyers - 1)
        .fetch_all(pool)
        .await?;
    verdict.duplicated += run_rows.iter().filter(|n| !announced.contains(n.as_str())).count() as u64;

    let id_list = products.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let ends: Vec<(u64, i32, i32, i64)> = sqlx::query_as(&format!(
        "SELECT i.product_id, i.initial_stock, i.stock, \
                CAST(COALESCE((SELECT SUM(buy_count) FROM orders o WHERE o.product_id = i.product_id \
                               AND o.status IN ('WAIT_PAY','PAID')), 0) AS SIGNED) \
         FROM inventory i WHERE i.product_id IN ({id_list})"
    ))
    .fetch_all(pool)
    .await?;
    let mut stock_left: HashMap<u64, i32> = HashMap::new();
    for (product, initial, stock, live) in ends {
        verdict.oversold_units += (live - i64::from(initial)).max(0);
        stock_left.insert(product, stock);
    }
    verdict.false_sold_out = rec
        .answers
        .iter()
        .filter(|a| a.error.as_deref() == Some("SOLD_OUT"))
        .filter(|a| stock_left.get(&a.product_id).is_some_and(|s| *s > 0))
        .count() as u64;
    Ok(verdict)
}
