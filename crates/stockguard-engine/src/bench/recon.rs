//! Reconciliation at scale: the ledger query over 10,000 products and millions of orders,
//! with and without the covering index; the chunked check against the raw query; one exact
//! drift reading of 1,000 products.
//!
//! It builds its own [`ScratchDatabase`] beside the profile's (`sg_bench_recon_<hash of its
//! name>`), fills it with one multi-row `INSERT ... SELECT` per million orders, and drops it
//! at the end.

use std::time::{Duration, Instant};

use sqlx::MySqlPool;

use super::{BenchError, BenchReport, Figure, ScratchDatabase};
use stockguard_core::connect::Connections;
use stockguard_core::recon::ledger::{self, LedgerOptions};
use stockguard_core::recon::reading::{read_products_timed, LedgerGaps, ReadTimings};

const PRODUCTS: u64 = 10_000;

async fn time<T>(f: impl std::future::Future<Output = Result<T, ledger::LedgerError>>) -> Result<(T, f64), BenchError> {
    let t = Instant::now();
    let out = f.await.map_err(|e| BenchError::Engine(e.to_string()))?;
    Ok((out, t.elapsed().as_secs_f64() * 1000.0))
}

/// Adds `n` orders (ids from `from`) spread over the products, 55% of them live.
async fn add_orders(pool: &MySqlPool, from: u64, n: u64) -> Result<(), BenchError> {
    const STEP: u64 = 1_000_000;
    let mut done = 0;
    while done < n {
        let batch = STEP.min(n - done);
        let base = from + done;
        // d holds 0..9; six cross joins give a million numbers.
        sqlx::query(
            "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, pay_deadline) \
             SELECT CONCAT('b', ? + k), ? + k, 1 + (? + k) % ?, 1 + (k % 2), \
                    ELT(1 + (k % 20), 'PAID','PAID','PAID','PAID','PAID','PAID','PAID','WAIT_PAY','WAIT_PAY','WAIT_PAY', \
                        'WAIT_PAY','CLOSED','CLOSED','CLOSED','CLOSED','CANCELLED','CANCELLED','CANCELLED','CANCELLED','CANCELLED'), \
                    NOW() \
             FROM (SELECT a.n + 10*b.n + 100*c.n + 1000*d.n + 10000*e.n + 100000*f.n AS k \
                   FROM bench_digits a, bench_digits b, bench_digits c, bench_digits d, bench_digits e, bench_digits f) nums \
             WHERE k < ?",
        )
        .bind(base)
        .bind(base)
        .bind(base)
        .bind(PRODUCTS)
        .bind(batch)
        .execute(pool)
        .await?;
        done += batch;
    }
    Ok(())
}

/// The `recon` benchmark.
pub async fn run(conns: &Connections, quick: bool, progress: &mut dyn FnMut(&str)) -> Result<BenchReport, BenchError> {
    let sizes: &[u64] = if quick { &[100_000] } else { &[1_000_000, 10_000_000] };
    let scratch = ScratchDatabase::create(&conns.settings, "recon").await?;
    let result = measure(&scratch, conns, sizes, progress).await;
    let (mut report, dropped) = scratch.drop_after(result).await?;
    report.notes.push(dropped);
    Ok(report)
}

async fn measure(
    scratch: &ScratchDatabase,
    conns: &Connections,
    sizes: &[u64],
    progress: &mut dyn FnMut(&str),
) -> Result<BenchReport, BenchError> {
    let pool = scratch.migrated_pool().await?;
    sqlx::query("CREATE TABLE bench_digits (n INT PRIMARY KEY)").execute(&pool).await?;
    sqlx::query("INSERT INTO bench_digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)").execute(&pool).await?;
    // 10,000 products; initial stock is set after the orders so the ledger holds.
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock) \
         SELECT 1 + a.n + 10*b.n + 100*c.n + 1000*d.n, 'p', 0, 0 FROM bench_digits a, bench_digits b, bench_digits c, bench_digits d",
    )
    .execute(&pool)
    .await?;

    let limit = Duration::from_secs(120);
    let mut figures = Vec::new();
    let mut ratios = Vec::new();
    let mut notes = Vec::new();
    let mut have = 0u64;
    // Bulk loading into a table with five secondary indexes is disk-bound once they outgrow
    // the buffer pool; building them after the load (a sorted build) is many times faster.
    // The scratch table is ours, so drop them now and put them back after each fill.
    const SECONDARY: [(&str, &str); 5] = [
        ("uk_orders_order_no", "UNIQUE KEY uk_orders_order_no (order_no)"),
        (
            "uk_orders_user_product_idempotency",
            "UNIQUE KEY uk_orders_user_product_idempotency (user_id, product_id, idempotency_key)",
        ),
        ("idx_orders_recon", "KEY idx_orders_recon (product_id, status, buy_count)"),
        ("idx_orders_close", "KEY idx_orders_close (status, pay_deadline)"),
        ("idx_orders_reserve", "KEY idx_orders_reserve (product_id, reserve_epoch, reserve_seq, buy_count)"),
    ];
    for &size in sizes {
        progress(&format!("filling {size} orders"));
        let t = Instant::now();
        let drop = SECONDARY.iter().map(|(name, _)| format!("DROP INDEX {name}")).collect::<Vec<_>>().join(", ");
        sqlx::query(&format!("ALTER TABLE orders {drop}")).execute(&pool).await?;
        add_orders(&pool, have, size - have).await?;
        let add = SECONDARY.iter().map(|(_, def)| format!("ADD {def}")).collect::<Vec<_>>().join(", ");
        sqlx::query(&format!("ALTER TABLE orders {add}")).execute(&pool).await?;
        have = size;
        notes.push(format!("filled to {size} orders in {:.0} s", t.elapsed().as_secs_f64()));
        sqlx::query(
            "UPDATE inventory i LEFT JOIN (SELECT product_id, SUM(buy_count) AS live FROM orders \
             WHERE status IN ('WAIT_PAY','PAID') GROUP BY product_id) o ON o.product_id = i.product_id \
             SET i.initial_stock = COALESCE(o.live, 0) + 100, i.stock = 100",
        )
        .execute(&pool)
        .await?;
        sqlx::query("ANALYZE TABLE orders").execute(&pool).await?;
        let label = if size >= 1_000_000 { format!("{}M", size / 1_000_000) } else { format!("{}k", size / 1000) };

        progress("raw query, covering index");
        let (_, covering) = time(ledger::raw_ledger_query(&pool, limit)).await?;
        progress("raw query, (status, product_id, buy_count)");
        sqlx::query("ALTER TABLE orders ADD INDEX bench_status_first (status, product_id, buy_count)")
            .execute(&pool)
            .await?;
        let (_, status_first) = time(raw_with(&pool, "FORCE INDEX (bench_status_first)", limit)).await?;
        sqlx::query("ALTER TABLE orders DROP INDEX bench_status_first").execute(&pool).await?;
        progress("raw query, no index");
        let (_, none) = time(raw_with(
            &pool,
            "IGNORE INDEX (idx_orders_recon, idx_orders_close, idx_orders_reserve, uk_orders_user_product_idempotency)",
            limit,
        ))
        .await?;
        progress("chunked ledger check");
        let (chunked, chunked_ms) = time(ledger::reconcile(
            &pool,
            &LedgerOptions { statement_limit: limit, ..LedgerOptions::default() },
            false,
            &mut |_, _| {},
        ))
        .await?;
        if !chunked.mismatches.is_empty() {
            notes.push(format!(
                "{label}: the chunked check found {} mismatches (expected none)",
                chunked.mismatches.len()
            ));
        }
        figures.push(Figure::new(
            &format!("{label} orders: raw query, covering (product_id, status, buy_count)"),
            covering,
            "ms",
        ));
        figures.push(Figure::new(
            &format!("{label} orders: raw query, (status, product_id, buy_count)"),
            status_first,
            "ms",
        ));
        figures.push(Figure::new(&format!("{label} orders: raw query, no index (table scan)"), none, "ms"));
        figures.push(Figure::new(
            &format!("{label} orders: chunked check, total ({} chunks)", chunked.chunks),
            chunked_ms,
            "ms",
        ));
        figures.push(Figure::new(
            &format!("{label} orders: chunked check, slowest statement"),
            chunked.slowest_statement_ms,
            "ms",
        ));
        ratios.push(Figure::new(&format!("{label}: no index / covering"), none / covering, ""));
        ratios.push(Figure::new(&format!("{label}: status-first / covering"), status_first / covering, ""));
        ratios.push(Figure::new(&format!("{label}: chunked total / raw covering"), chunked_ms / covering, ""));
        progress(&format!(
            "{label}: covering {covering:.0} ms, status-first {status_first:.0} ms, none {none:.0} ms, chunked {chunked_ms:.0} ms (slowest {:.0} ms)",
            chunked.slowest_statement_ms
        ));
    }

    // One exact drift reading of 1,000 products, on the filled database.
    progress("drift reading of 1,000 products");
    let keys = stockguard_core::keys::Keys::new(format!("benchrecon{:x}", rand::random::<u32>()));
    let mut redis = conns.redis.clone();
    let ids: Vec<u64> = (1..=1000).collect();
    stockguard_core::redis_link::per_product(&redis, &ids, |pipe, id| {
        pipe.set(keys.stock(id), 100);
    })
    .await?;
    // Full readings (live orders summed) and light ones (the sampler's ticks between ledger
    // passes), interleaved so both see the same machine.
    let mut full: Vec<ReadTimings> = Vec::new();
    let mut light: Vec<ReadTimings> = Vec::new();
    for _ in 0..5 {
        let (readings, t) = read_products_timed(&pool, &mut redis, &keys, &ids, None)
            .await
            .map_err(|e| BenchError::Engine(e.to_string()))?;
        let gaps = LedgerGaps::from_readings(&readings);
        full.push(t);
        let (readings, t) = read_products_timed(&pool, &mut redis, &keys, &ids, Some(&gaps))
            .await
            .map_err(|e| BenchError::Engine(e.to_string()))?;
        if readings.iter().any(|r| !r.live_derived) {
            return Err(BenchError::Engine("the light reading fell back to a full one".into()));
        }
        light.push(t);
    }
    let _: () =
        redis::cmd("DEL").arg(ids.iter().map(|&id| keys.stock(id)).collect::<Vec<_>>()).query_async(&mut redis).await?;
    let median = |xs: &[ReadTimings], f: fn(&ReadTimings) -> f64| {
        let mut v: Vec<f64> = xs.iter().map(f).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let total = |t: &ReadTimings| t.db_ms + t.redis_ms;
    let (full_total, light_total) = (median(&full, total), median(&light, total));
    figures.push(Figure::new(
        "drift reading of 1,000 products, ledger sums included (median of 5, DB + Redis)",
        full_total,
        "ms",
    ));
    figures.push(Figure::new("  of which DB", median(&full, |t| t.db_ms), "ms"));
    figures.push(Figure::new("  of which Redis", median(&full, |t| t.redis_ms), "ms"));
    figures.push(Figure::new(
        "drift reading of 1,000 products between ledger passes (the sampler's tick; median of 5)",
        light_total,
        "ms",
    ));
    figures.push(Figure::new("  of which DB", median(&light, |t| t.db_ms), "ms"));
    figures.push(Figure::new("  of which Redis", median(&light, |t| t.redis_ms), "ms"));
    ratios.push(Figure::new("tick reading / full reading", light_total / full_total, ""));
    pool.close().await;
    Ok(BenchReport { bench: "recon".into(), figures, ratios, notes })
}

async fn raw_with(pool: &MySqlPool, hint: &str, limit: Duration) -> Result<(), ledger::LedgerError> {
    let kind = ledger::server_kind(pool).await?;
    let sql = ledger::with_time_limit(
        kind,
        &format!("SELECT product_id, CAST(SUM(buy_count) AS SIGNED) FROM orders {hint} WHERE status IN ('WAIT_PAY','PAID') GROUP BY product_id"),
        limit,
    );
    let _: Vec<(u64, i64)> = sqlx::query_as(&sql).fetch_all(pool).await?;
    Ok(())
}
