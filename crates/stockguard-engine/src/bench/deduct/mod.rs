//! One hot product, four ways to deduct it in the DB ([`strategy`]), side by side: the
//! conditional update the engine uses (`UPDATE ... WHERE stock >= ?`, affected rows decide),
//! `SELECT ... FOR UPDATE` then update, an optimistic version column with bounded retry, and
//! the naive read-then-write that oversells. Each runs at several pool sizes (a pool of N
//! connections, N workers taking buyers from a shared counter); every buyer makes one attempt.
//!
//! Self-contained: it works in a [`ScratchDatabase`] of its own with two small tables it
//! creates itself ([`SCHEMA`]), not the app's migrations (the one exception to "no DDL in
//! code", as for `bench recon`'s digits table). The strategies are not the app's code paths,
//! one of them is wrong on purpose, and an order here is one narrow row, so what is measured
//! is the deduction on the hot row, not the app's order numbers, statuses and indexes; and
//! the bench keeps working whatever the migrations become.
//!
//! A run is several rounds; a round is one sale (full stock, every buyer one attempt) of
//! every strategy at every pool size, the order rotating so that no strategy always goes
//! first or last. What is counted comes from the DB after each sale (orders and the final
//! stock), not from what the workers believe they did.

pub mod report;
pub mod strategy;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use secrecy::ExposeSecret as _;
use serde::Serialize;
use sqlx::mysql::MySqlPoolOptions;
use sqlx::MySqlPool;

use super::{BenchError, ScratchDatabase};
pub use report::{DeductCell, DeductReport, DeductSale};
use stockguard_core::connect::{self, Connections};
use stockguard_core::profile::ConnectionSettings;
pub use strategy::Strategy;
use strategy::{attempt, Outcome};

/// The bench's own tables. `stock` is signed and unchecked so that a wrong strategy can do
/// its damage where we can count it.
pub const SCHEMA: [&str; 2] = [
    "CREATE TABLE bench_inventory (product_id BIGINT UNSIGNED PRIMARY KEY, stock INT NOT NULL, \
     version BIGINT UNSIGNED NOT NULL DEFAULT 0) ENGINE=InnoDB",
    "CREATE TABLE bench_orders (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, product_id BIGINT UNSIGNED NOT NULL, \
     user_id BIGINT UNSIGNED NOT NULL, qty INT NOT NULL, KEY idx_bench_orders_product (product_id)) ENGINE=InnoDB",
];

/// How big a run is.
#[derive(Debug, Clone, Serialize)]
pub struct DeductPlan {
    pub initial_stock: i64,
    pub buyers: u64,
    /// Units per buyer.
    pub qty: i64,
    /// Pool sizes (and concurrent workers) to measure at.
    pub connections: Vec<u32>,
    /// Attempts of the optimistic strategy before a buyer gives up (first try included).
    pub optimistic_attempts: u32,
    /// Sales of every strategy at every pool size.
    pub rounds: u32,
}

impl DeductPlan {
    /// The sale: stock 1,000, 5,000 buyers, at 8, 32 and 128 connections. One sale
    /// sells out in about a second, too short to tell two strategies apart on a busy machine
    /// in one go; five rounds take about two minutes.
    pub fn full() -> Self {
        Self {
            initial_stock: 1_000,
            buyers: 5_000,
            qty: 1,
            connections: vec![8, 32, 128],
            optimistic_attempts: 3,
            rounds: 5,
        }
    }

    /// For CI: seconds, not minutes.
    pub fn quick() -> Self {
        Self { initial_stock: 100, buyers: 500, qty: 1, connections: vec![4, 8], optimistic_attempts: 3, rounds: 2 }
    }
}

/// What the workers of one run saw.
#[derive(Default)]
struct Tally {
    committed: AtomicU64,
    retries: AtomicU64,
    gave_up: AtomicU64,
    sold_out: AtomicU64,
    /// Nanoseconds from the base instant to the start of the run and to the latest commit.
    start_ns: AtomicU64,
    last_commit_ns: AtomicU64,
}

impl Tally {
    fn record(&self, outcome: Outcome, base: Instant) {
        let retries = match outcome {
            Outcome::Ordered { retries } => {
                self.committed.fetch_add(1, Ordering::Relaxed);
                self.last_commit_ns.fetch_max(nanos(base.elapsed()), Ordering::Relaxed);
                retries
            }
            Outcome::SoldOut { retries } => {
                self.sold_out.fetch_add(1, Ordering::Relaxed);
                retries
            }
            Outcome::GaveUp { retries } => {
                self.gave_up.fetch_add(1, Ordering::Relaxed);
                retries
            }
        };
        self.retries.fetch_add(retries, Ordering::Relaxed);
    }
}

/// The `deduct` benchmark: every strategy at every pool size of the plan, on the profile's
/// MySQL server, in a scratch database dropped at the end.
pub async fn run(
    conns: &Connections,
    plan: &DeductPlan,
    progress: &mut dyn FnMut(&str),
) -> Result<DeductReport, BenchError> {
    let scratch = ScratchDatabase::create(&conns.settings, "deduct").await?;
    let result = measure(&scratch.settings, plan, progress).await;
    let (mut report, dropped) = scratch.drop_after(result).await?;
    report.notes.push(dropped);
    Ok(report)
}

async fn measure(
    settings: &ConnectionSettings,
    plan: &DeductPlan,
    progress: &mut dyn FnMut(&str),
) -> Result<DeductReport, BenchError> {
    let options = connect::mysql_options_with(settings.mysql_url.expose_secret(), &settings.tls.mysql)
        .map_err(|e| BenchError::Engine(e.to_string()))?;
    // Setting up and counting; the sales get pools of their own.
    let control = MySqlPoolOptions::new().max_connections(2).connect_with(options.clone()).await?;
    for ddl in SCHEMA {
        sqlx::query(ddl).execute(&control).await?;
    }
    let mut sales = Vec::new();
    for round in 0..plan.rounds {
        for (k, &connections) in plan.connections.iter().enumerate() {
            // Each pool size, and each round, starts with the next strategy, so no strategy
            // always goes first (cold caches) or last (after the others filled the log).
            for j in 0..Strategy::ALL.len() {
                let strategy = Strategy::ALL[(j + k + round as usize) % Strategy::ALL.len()];
                let run_order = sales.len() + 1;
                // A row of its own per sale, so each sale is counted apart.
                let product = run_order as u64;
                let what =
                    format!("round {}/{}, {}, {connections} connections", round + 1, plan.rounds, strategy.label());
                progress(&format!("{what} ..."));
                sqlx::query("INSERT INTO bench_inventory (product_id, stock, version) VALUES (?, ?, 0)")
                    .bind(product)
                    .bind(plan.initial_stock)
                    .execute(&control)
                    .await?;
                let pool = MySqlPoolOptions::new()
                    .max_connections(connections)
                    .acquire_timeout(Duration::from_secs(30))
                    .connect_with(options.clone())
                    .await?;
                let (tally, elapsed) = drive(&pool, strategy, product, plan, connections).await;
                pool.close().await;
                let tally = tally?;
                let mut sale = count(&control, strategy, connections, product, plan, &tally, elapsed).await?;
                sale.round = round;
                sale.run_order = run_order;
                progress(&format!(
                    "{what}: {:.0} tx/s, {} orders, {} oversold, {} retries, {} gave up",
                    sale.committed_per_s, sale.orders_in_db, sale.oversold, sale.retries, sale.gave_up
                ));
                sales.push(sale);
            }
        }
    }
    control.close().await;
    let notes = vec![
        format!(
            "every buyer makes one attempt; optimistic: at most {} attempts, no pause between them",
            plan.optimistic_attempts
        ),
        "tx/s: committed order transactions from the start of a sale to its last commit; orders, stock, oversold and lost are counted in the DB after each sale".into(),
        "ratios: each round's strategy over the same round's conditional update, median over the rounds".into(),
    ];
    Ok(DeductReport::new(plan, sales, notes))
}

/// `connections` workers, each holding one connection of `pool`, taking buyers from a shared
/// counter until every buyer has had an attempt. The clock starts once all are connected.
async fn drive(
    pool: &MySqlPool,
    strategy: Strategy,
    product: u64,
    plan: &DeductPlan,
    connections: u32,
) -> (Result<Arc<Tally>, BenchError>, Duration) {
    let next = Arc::new(AtomicU64::new(0));
    let tally = Arc::new(Tally::default());
    let ready = Arc::new(tokio::sync::Barrier::new(connections as usize + 1));
    let (buyers, qty, attempts) = (plan.buyers, plan.qty, plan.optimistic_attempts);
    // Commits are stamped against this; the start of the run is stamped after connecting.
    let base = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..connections {
        let (pool, next, tally, ready) = (pool.clone(), next.clone(), tally.clone(), ready.clone());
        workers.push(tokio::spawn(async move {
            // Connect, then wait for the others: a worker that cannot connect still reaches
            // the barrier, or the rest would wait for ever.
            let conn = pool.acquire().await;
            ready.wait().await;
            let mut conn = conn?;
            loop {
                let buyer = next.fetch_add(1, Ordering::Relaxed);
                if buyer >= buyers {
                    return Ok::<(), sqlx::Error>(());
                }
                let outcome = attempt(&mut conn, strategy, product, buyer, qty, attempts).await?;
                tally.record(outcome, base);
            }
        }));
    }
    ready.wait().await;
    let t0 = Instant::now();
    tally.start_ns.store(nanos(t0 - base), Ordering::Relaxed);
    let mut failed = None;
    for w in workers {
        if let Err(e) = w.await.expect("bench worker") {
            failed.get_or_insert(e);
        }
    }
    let elapsed = t0.elapsed();
    match failed {
        Some(e) => (Err(e.into()), elapsed),
        None => (Ok(tally), elapsed),
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One sale, with orders and stock counted in the DB; round and run order are the caller's.
async fn count(
    control: &MySqlPool,
    strategy: Strategy,
    connections: u32,
    product: u64,
    plan: &DeductPlan,
    tally: &Tally,
    elapsed: Duration,
) -> Result<DeductSale, BenchError> {
    let (orders_in_db, units_in_db): (i64, i64) =
        sqlx::query_as("SELECT COUNT(*), CAST(COALESCE(SUM(qty), 0) AS SIGNED) FROM bench_orders WHERE product_id = ?")
            .bind(product)
            .fetch_one(control)
            .await?;
    let final_stock: i64 = sqlx::query_scalar("SELECT stock FROM bench_inventory WHERE product_id = ?")
        .bind(product)
        .fetch_one(control)
        .await?;
    let committed = tally.committed.load(Ordering::Relaxed);
    let until_last_commit = Duration::from_nanos(
        tally.last_commit_ns.load(Ordering::Relaxed).saturating_sub(tally.start_ns.load(Ordering::Relaxed)),
    );
    Ok(DeductSale {
        strategy,
        connections,
        round: 0,
        run_order: 0,
        committed_per_s: if committed == 0 { 0.0 } else { committed as f64 / until_last_commit.as_secs_f64() },
        committed,
        retries: tally.retries.load(Ordering::Relaxed),
        gave_up: tally.gave_up.load(Ordering::Relaxed),
        sold_out: tally.sold_out.load(Ordering::Relaxed),
        orders_in_db: orders_in_db as u64,
        units_in_db,
        final_stock,
        oversold: (units_in_db - plan.initial_stock).max(0),
        lost_deductions: units_in_db + final_stock - plan.initial_stock,
        elapsed_ms: elapsed.as_secs_f64() * 1000.0,
    })
}
