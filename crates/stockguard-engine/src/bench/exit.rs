//! The guided exit at scale (issue 16): how long sales stay paused while the exit rebuilds
//! Redis from the DB, for 20, 1,000 and 5,000 products, the per-product path (before issue
//! 16: a dozen round trips per product, eight products at once) against the batched one (a
//! round trip per step for a thousand products), side by side in one run, and the drift
//! after each (it must be 0: the exit's own verification fails otherwise).
//!
//! Each measurement starts from the same sale: every product on sale with 100 units, Redis
//! holding them all (as it did before DB mode), then one to three buyers per product served
//! by the DB path (`orders.source = 'DB'`), so that stock, per-user counts and idempotency
//! entries all need rebuilding. No engine is live, and the exit's wait for acknowledgements
//! is cut to a millisecond; with live engines both paths pay the same propagation on top.
//!
//! It works in a [`ScratchDatabase`] of its own (its switch rows are the scratch sale's) and
//! under its own key prefix, and leaves neither behind. On a Redis Cluster the pipelines are
//! split by slot like everywhere else.

use std::time::Duration;

use sqlx::MySqlPool;

use super::{BenchError, BenchReport, Figure, ScratchDatabase};
use stockguard_core::connect::Connections;
use stockguard_core::keys::Keys;
use stockguard_core::recon::read_products;
use stockguard_core::redis_link::per_product;
use stockguard_core::switch::{self, store, Changer, ExitOptions, Mode, RebuildPath, Scope};

/// Units per product at the start of the sale.
const STOCK: i64 = 100;
/// Rows per INSERT while setting up (a statement binds at most 65,535 values).
const ROWS: usize = 1000;

/// The `exit` benchmark.
pub async fn run(conns: &Connections, quick: bool, progress: &mut dyn FnMut(&str)) -> Result<BenchReport, BenchError> {
    let sizes: &[u64] = if quick { &[5, 40] } else { &[20, 1000, 5000] };
    let scratch = ScratchDatabase::create(&conns.settings, "exit").await?;
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
    let sale = Connections {
        mysql: pool.clone(),
        redis: conns.redis.clone(),
        keys: Keys::new(format!("{}:benchexit{:x}", conns.keys.prefix(), rand::random::<u32>())),
        settings: scratch.settings.clone(),
        transport: conns.transport.clone(),
    };
    let mut figures = Vec::new();
    let mut ratios = Vec::new();
    for &n in sizes {
        let mut paused = Vec::new();
        for (label, path) in [
            ("per-product rewrites (before)", RebuildPath::PerProduct),
            ("batched rewrites", RebuildPath::Batched { chunk: switch::exit::REBUILD_CHUNK }),
        ] {
            progress(&format!("{n} products, {label}"));
            let products = sale_in_db_mode(&sale, n).await?;
            let measured = exit_once(&sale, &products, path).await;
            remove_sale(&sale, &products).await?;
            let (paused_ms, drifting) = measured?;
            progress(&format!("{n} products, {label}: paused {paused_ms} ms, {drifting} drifting after"));
            figures.push(Figure::new(&format!("{n} products: sales paused, {label}"), paused_ms as f64, "ms"));
            figures.push(Figure::new(
                &format!("{n} products: products drifting after the exit, {label}"),
                drifting as f64,
                "products",
            ));
            paused.push(paused_ms.max(1) as f64);
        }
        ratios.push(Figure::new(&format!("{n} products: paused per-product / batched"), paused[0] / paused[1], ""));
    }
    pool.close().await;
    let notes = vec![
        format!("batched: {} products per round trip of each step", switch::exit::REBUILD_CHUNK),
        "no engine live; acknowledgement waits cut to 1 ms".into(),
    ];
    Ok(BenchReport { bench: "exit".into(), figures, ratios, notes })
}

/// The guided exit over `products` by `path`: its `paused_ms`, and how many products an exact
/// reading finds drifting afterwards.
async fn exit_once(sale: &Connections, products: &[u64], path: RebuildPath) -> Result<(u64, usize), BenchError> {
    let opts = ExitOptions {
        ack_timeout: Duration::from_millis(1),
        rebuild: path,
        ..ExitOptions::new(Scope::Global, "bench exit")
    };
    let report = switch::guided_exit(sale, &opts, &|_| {}).await.map_err(|e| BenchError::Engine(e.to_string()))?;
    let mut redis = sale.redis.clone();
    let readings = read_products(&sale.mysql, &mut redis, &sale.keys, products)
        .await
        .map_err(|e| BenchError::Engine(e.to_string()))?;
    Ok((report.paused_ms, readings.iter().filter(|r| r.drift != Some(0)).count()))
}

/// Products 1..=n on sale with [`STOCK`] units in the DB and in Redis, then DB mode and one
/// to three buyers per product sold through the DB (the DB's stock goes down, Redis's not).
async fn sale_in_db_mode(sale: &Connections, n: u64) -> Result<Vec<u64>, BenchError> {
    let products: Vec<u64> = (1..=n).collect();
    for part in products.chunks(ROWS) {
        let mut insert =
            sqlx::QueryBuilder::new("INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) ");
        insert.push_values(part, |mut row, &p| {
            row.push_bind(p).push_bind("bench exit").push_bind(STOCK).push_bind(STOCK).push_bind(3);
        });
        insert.build().execute(&sale.mysql).await?;
    }
    per_product(&sale.redis, &products, |pipe, p| {
        pipe.set(sale.keys.stock(p), STOCK);
    })
    .await?;
    let person = Changer::person(&sale.settings).map_err(|e| BenchError::Engine(e.to_string()))?;
    store::set(&sale.mysql, &person, Scope::Global, Mode::Degraded, "bench exit: Redis suspected")
        .await
        .map_err(|e| BenchError::Engine(e.to_string()))?;
    let orders: Vec<(u64, u64)> = products.iter().flat_map(|&p| (1..=1 + p % 3).map(move |u| (p, u))).collect();
    let deadline = chrono::Utc::now().naive_utc() + chrono::Duration::minutes(10);
    for part in orders.chunks(ROWS) {
        let mut insert = sqlx::QueryBuilder::new(
            "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, idempotency_key, source, pay_deadline) ",
        );
        insert.push_values(part, |mut row, &(p, u)| {
            row.push_bind(format!("bx-{p}-{u}"))
                .push_bind(u)
                .push_bind(p)
                .push_bind(1 + (u % 2) as i64)
                .push_bind(if u.is_multiple_of(2) { "PAID" } else { "WAIT_PAY" })
                .push_bind(format!("k-{p}-{u}"))
                .push_bind("DB")
                .push_bind(deadline);
        });
        insert.build().execute(&sale.mysql).await?;
    }
    sqlx::query(
        "UPDATE inventory i JOIN (SELECT product_id, SUM(buy_count) AS sold FROM orders GROUP BY product_id) o \
         ON o.product_id = i.product_id SET i.stock = i.stock - o.sold",
    )
    .execute(&sale.mysql)
    .await?;
    Ok(products)
}

/// The products' rows and Redis keys gone, ready for the next measurement.
async fn remove_sale(sale: &Connections, products: &[u64]) -> Result<(), BenchError> {
    clear_tables(&sale.mysql).await?;
    // `UNLINK` frees the hashes in the background; one product's keys share a slot.
    per_product(&sale.redis, products, |pipe, p| {
        pipe.cmd("UNLINK").arg(sale.keys.all_for_product(p));
    })
    .await?;
    Ok(())
}

async fn clear_tables(pool: &MySqlPool) -> Result<(), sqlx::Error> {
    // The switch rows stay: the next sale enters DB mode by a change of its own.
    for table in ["orders", "outbox", "inventory"] {
        sqlx::query(&format!("DELETE FROM {table}")).execute(pool).await?;
    }
    Ok(())
}
