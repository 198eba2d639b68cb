//! One sampler tick: the drill's invariants read from the DB ledger and Redis (never from the
//! engines' metrics), over the runner's own connections, which no fault touches.
//!
//! The oversell figure comes from the DB alone, so it is known even while Redis cannot be
//! read: live orders above initial stock, or stock below zero.

use stockguard_core::compensation::open::beyond_stock;
use stockguard_core::connect::Connections;
use stockguard_core::drills::events::TickFigures;
use stockguard_core::drills::summary::AffectedOrder;

use super::RunnerError;

/// An engine whose heartbeat is older than this is counted as unheard.
const LIVE_WITHIN_US: i64 = 3_000_000;

/// The tick's figures, and how many products were below zero in Redis by more than the
/// releases owed to them ([`below_zero_beyond_owed`]).
pub async fn tick(
    conns: &Connections,
    products: &[u64],
    instances: &[String],
) -> Result<(TickFigures, u32), RunnerError> {
    let mut figures = TickFigures { oversold_units: oversold_units(conns, products).await?, ..Default::default() };
    let mut negative = 0;
    let mut redis = conns.redis.clone();
    match stockguard_core::recon::reading::read_products(&conns.mysql, &mut redis, &conns.keys, products).await {
        Ok(readings) => {
            figures.redis_reachable = true;
            for r in &readings {
                let drift = r.drift.unwrap_or(0);
                figures.drift += drift;
                if drift.abs() > figures.drift_max_abs.abs() {
                    figures.drift_max_abs = drift;
                }
                figures.redis_stock += r.redis_stock.unwrap_or(0);
                figures.db_stock += r.db_stock;
                figures.inflight += r.inflight_pending;
                if below_zero_beyond_owed(r.redis_stock, r.pending_release) {
                    negative += 1;
                    tracing::warn!(
                        product = %r.product_id,
                        redis_stock = ?r.redis_stock,
                        pending_release = r.pending_release,
                        drift = ?r.drift,
                        "Redis below zero beyond the releases owed to it"
                    );
                }
                figures.history_lost += u32::from(r.history_lost);
            }
        }
        Err(e) => tracing::warn!(error = %e, "the drill's reading failed this tick"),
    }
    if let Ok(backlog) = stockguard_core::backlog::sample(&mut redis, &conns.keys, products).await {
        figures.backlog = backlog.messages.max(0) as u64;
    }
    let (redis_path, db_path) = modes(conns, instances).await?;
    figures.redis_path = redis_path;
    figures.db_path = db_path;
    Ok((figures, negative))
}

/// Whether Redis holds less than nothing even once every release owed to it is applied.
///
/// Redis may sit below zero by the releases it is owed, and the contract's identity says so
/// (`redis = db stock - in flight - pending release`): a rebuild after DB mode writes that
/// value, and while the DB path sold units that cancelled orders returned to the DB, their
/// releases are still pending, so a sold-out product is rebuilt at minus those units until
/// the relay applies them (a `redis-down` run here aborted on one such tick). No buyer sees
/// it: below zero and at zero both refuse. Below zero beyond that is Redis handing out units
/// it never had.
fn below_zero_beyond_owed(redis_stock: Option<i64>, pending_release: i64) -> bool {
    redis_stock.is_some_and(|s| s + pending_release < 0)
}

fn id_list(products: &[u64]) -> String {
    products.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// Units beyond stock over the products, from the ledger.
pub async fn oversold_units(conns: &Connections, products: &[u64]) -> Result<i64, RunnerError> {
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(&format!(
        "SELECT CAST(i.initial_stock AS SIGNED), CAST(i.stock AS SIGNED), \
                CAST(COALESCE(SUM(o.buy_count), 0) AS SIGNED) \
         FROM inventory i LEFT JOIN orders o ON o.product_id = i.product_id AND o.status IN ('WAIT_PAY', 'PAID') \
         WHERE i.product_id IN ({}) GROUP BY i.product_id, i.initial_stock, i.stock",
        id_list(products)
    ))
    .fetch_all(&conns.mysql)
    .await?;
    Ok(rows.into_iter().map(|(initial, stock, live)| (live - initial).max(0).max(-stock)).sum())
}

/// Engines on the Redis path and on the DB path, by their heartbeats.
async fn modes(conns: &Connections, instances: &[String]) -> Result<(u32, u32), RunnerError> {
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT instance_id, CAST(effective_mode AS CHAR), \
                CAST(TIMESTAMPDIFF(MICROSECOND, last_seen, NOW(3)) AS SIGNED) FROM engine_heartbeats",
    )
    .fetch_all(&conns.mysql)
    .await?;
    let (mut redis_path, mut db_path) = (0, 0);
    for (id, mode, age_us) in rows {
        if !instances.contains(&id) || age_us > LIVE_WITHIN_US {
            continue;
        }
        match mode.as_str() {
            "NORMAL" => redis_path += 1,
            "DEGRADED" => db_path += 1,
            _ => {}
        }
    }
    Ok((redis_path, db_path))
}

/// The orders that cannot be served: per product, the last accepted live orders covering
/// the units beyond stock (the first accepted are the ones stock can honour), and every
/// accepted order withdrawn (`order_failures`) of the drill's products.
pub async fn affected_orders(conns: &Connections, products: &[u64]) -> Result<Vec<AffectedOrder>, RunnerError> {
    let mut affected = Vec::new();
    for &product in products {
        let initial: i64 =
            sqlx::query_scalar("SELECT CAST(initial_stock AS SIGNED) FROM inventory WHERE product_id = ?")
                .bind(product)
                .fetch_one(&conns.mysql)
                .await?;
        let live: Vec<(String, u64, i64)> = sqlx::query_as(
            "SELECT order_no, user_id, CAST(buy_count AS SIGNED) FROM orders \
             WHERE product_id = ? AND status IN ('WAIT_PAY', 'PAID') ORDER BY id DESC",
        )
        .bind(product)
        .fetch_all(&conns.mysql)
        .await?;
        for (order_no, user_id, buy_count) in beyond_stock(live, |o| o.2, initial) {
            affected.push(AffectedOrder { order_no, product_id: product, user_id, buy_count, why: "OVERSOLD".into() });
        }
    }
    let failed: Vec<(String, u64, u64, i64)> = sqlx::query_as(&format!(
        "SELECT order_no, product_id, user_id, CAST(qty AS SIGNED) FROM order_failures WHERE product_id IN ({})",
        id_list(products)
    ))
    .fetch_all(&conns.mysql)
    .await?;
    affected.extend(failed.into_iter().map(|(order_no, product_id, user_id, buy_count)| AffectedOrder {
        order_no,
        product_id,
        user_id,
        buy_count,
        why: "FAILED".into(),
    }));
    Ok(affected)
}

#[cfg(test)]
mod tests {
    use super::below_zero_beyond_owed;

    #[test]
    fn redis_below_zero_by_the_releases_it_is_owed_is_the_contracts_value_not_a_violation() {
        assert!(!below_zero_beyond_owed(Some(-2), 2));
        assert!(!below_zero_beyond_owed(Some(0), 0));
        assert!(!below_zero_beyond_owed(None, 0), "a missing key holds nothing, not less");
    }

    #[test]
    fn redis_below_zero_beyond_its_releases_owed_is_a_violation() {
        assert!(below_zero_beyond_owed(Some(-1), 0));
        assert!(below_zero_beyond_owed(Some(-3), 2));
    }
}
