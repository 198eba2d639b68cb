//! Ledger reconciliation: the reference article's query over live orders, checked against
//! `inventory` (`initial_stock = stock + SUM(live buy_count)`).
//!
//! It is a heavy read, so it runs in read-only transactions, in chunks of products sized so
//! that no statement holds the server for more than about [`TARGET_STATEMENT`], each under a
//! server-enforced time limit (MySQL: the `MAX_EXECUTION_TIME` optimizer hint; MariaDB:
//! `SET STATEMENT max_statement_time = ... FOR`), and on the profile's replica when one is set.
//! Chunks run on [`LedgerOptions::parallelism`] connections at once: the server does the same
//! index reads as the single raw query, each statement stays short, and the whole check
//! takes no longer than the raw query would.

use std::time::{Duration, Instant};

use serde::Serialize;
use sqlx::{MySqlPool, Row as _};

/// Which server family: they spell statement time limits differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ServerKind {
    MariaDb,
    MySql,
}

/// The chunk size is adapted so each statement takes about this long.
pub const TARGET_STATEMENT: Duration = Duration::from_millis(150);

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("a reconciliation statement ran past its {limit_ms} ms limit and the server aborted it")]
    Timeout { limit_ms: u64 },
    #[error("DB: {0}")]
    Db(#[from] sqlx::Error),
}

fn classify(err: sqlx::Error, limit: Duration) -> LedgerError {
    // MariaDB 1969 ER_STATEMENT_TIMEOUT; MySQL 3024 ER_QUERY_TIMEOUT.
    let code = err
        .as_database_error()
        .and_then(|e| e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .map(|e| e.number());
    match code {
        Some(1969) | Some(3024) => LedgerError::Timeout { limit_ms: limit.as_millis() as u64 },
        _ => LedgerError::Db(err),
    }
}

pub async fn server_kind(pool: &MySqlPool) -> Result<ServerKind, sqlx::Error> {
    let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(pool).await?;
    Ok(if version.to_ascii_lowercase().contains("mariadb") { ServerKind::MariaDb } else { ServerKind::MySql })
}

/// `sql` (a SELECT) with the server's statement time limit applied.
pub fn with_time_limit(kind: ServerKind, sql: &str, limit: Duration) -> String {
    match kind {
        // Seconds, fractions allowed.
        ServerKind::MariaDb => format!("SET STATEMENT max_statement_time = {:.3} FOR {sql}", limit.as_secs_f64()),
        // Milliseconds, as an optimizer hint right after SELECT.
        ServerKind::MySql => match sql.strip_prefix("SELECT ") {
            Some(rest) => format!("SELECT /*+ MAX_EXECUTION_TIME({}) */ {rest}", limit.as_millis().max(1)),
            None => sql.to_string(),
        },
    }
}

/// The reference article's query, served by the covering index.
pub const LEDGER_SQL: &str = "SELECT product_id, SUM(buy_count) FROM orders FORCE INDEX (idx_orders_recon) \
     WHERE status IN ('WAIT_PAY','PAID') GROUP BY product_id";

/// One chunk, two statements in one read-only transaction (one snapshot): live units per
/// product for a range of ids (the article's query, narrowed to the range: a range scan of
/// the covering index), then the inventory rows of the range (a primary-key range).
const CHUNK_ORDERS_SQL: &str =
    "SELECT product_id, CAST(SUM(buy_count) AS SIGNED) FROM orders FORCE INDEX (idx_orders_recon) \
     WHERE product_id BETWEEN ? AND ? AND status IN ('WAIT_PAY','PAID') GROUP BY product_id";
const CHUNK_INVENTORY_SQL: &str = "SELECT product_id, CAST(initial_stock AS SIGNED), CAST(stock AS SIGNED) \
     FROM inventory WHERE product_id BETWEEN ? AND ?";

/// A product whose DB ledger does not add up, or that is oversold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LedgerMismatch {
    pub product_id: u64,
    pub initial_stock: i64,
    pub db_stock: i64,
    pub live_orders_qty: i64,
    /// `initial_stock - db_stock - live_orders_qty`: what is missing from (negative: extra
    /// in) the ledger.
    pub gap: i64,
    pub oversold: bool,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LedgerReport {
    pub server: ServerKind,
    pub products_checked: u64,
    pub mismatches: Vec<LedgerMismatch>,
    pub chunks: u32,
    pub slowest_statement_ms: f64,
    pub total_ms: f64,
    /// Seconds the replica was behind its source, when the check ran on a replica.
    pub replica_lag_secs: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct LedgerOptions {
    /// Limit for any one statement.
    pub statement_limit: Duration,
    /// Products in the first chunk (later ones adapt).
    pub first_chunk: u64,
    /// Chunks in flight at once, each on its own connection.
    pub parallelism: usize,
}

impl Default for LedgerOptions {
    fn default() -> Self {
        Self { statement_limit: Duration::from_secs(5), first_chunk: 500, parallelism: 2 }
    }
}

/// The next range of ids to check, and the width the chunks adapt.
struct Cursor {
    next: u64,
    max: u64,
    width: u64,
    exhausted: bool,
}

impl Cursor {
    fn take(&mut self) -> Option<(u64, u64)> {
        if self.exhausted {
            return None;
        }
        let to = self.next.saturating_add(self.width - 1).min(self.max);
        let range = (self.next, to);
        self.exhausted = to == self.max;
        self.next = to.saturating_add(1);
        Some(range)
    }

    /// Aims the next chunk at the target statement time.
    fn adapt(&mut self, took: Duration) {
        let scale = (TARGET_STATEMENT.as_secs_f64() / took.as_secs_f64().max(0.001)).clamp(0.25, 4.0);
        self.width = ((self.width as f64 * scale) as u64).max(1);
    }
}

/// A checked chunk: `(product, initial, stock, live)` rows and the orders statement's time.
type Chunk = (Vec<(u64, i64, i64, i64)>, Duration);

async fn check_chunk(
    pool: &MySqlPool,
    orders_sql: &str,
    inventory_sql: &str,
    (from, to): (u64, u64),
    limit: Duration,
) -> Result<Chunk, LedgerError> {
    let mut tx = begin_snapshot(pool).await?;
    let t = Instant::now();
    let live: Result<Vec<(u64, i64)>, _> = sqlx::query_as(orders_sql).bind(from).bind(to).fetch_all(&mut *tx).await;
    let took = t.elapsed();
    let inventory: Result<Vec<(u64, i64, i64)>, _> = match &live {
        Ok(_) => sqlx::query_as(inventory_sql).bind(from).bind(to).fetch_all(&mut *tx).await,
        Err(_) => Ok(Vec::new()),
    };
    tx.commit().await?;
    let live: std::collections::HashMap<u64, i64> = live.map_err(|e| classify(e, limit))?.into_iter().collect();
    let rows = inventory
        .map_err(|e| classify(e, limit))?
        .into_iter()
        .map(|(id, initial, stock)| (id, initial, stock, live.get(&id).copied().unwrap_or(0)))
        .collect();
    Ok((rows, took))
}

/// Starts a read-only transaction whose statements all read one snapshot, whatever the
/// server's default isolation: under READ COMMITTED (common on MySQL 8 sites) each statement
/// would take its own, and a sale committing between the chunk's two statements would show
/// as a ledger mismatch that is not there. `SET TRANSACTION` applies to the next transaction
/// only; `WITH CONSISTENT SNAPSHOT` takes the snapshot now rather than at the first read.
/// A transaction sqlx knows of ([`crate::tx`]): a reading dropped midway (a timeout) leaves
/// no pooled connection inside a read-only snapshot.
async fn begin_snapshot(pool: &MySqlPool) -> Result<sqlx::Transaction<'static, sqlx::MySql>, sqlx::Error> {
    crate::tx::begin_with(
        pool,
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
    )
    .await
}

/// Seconds behind the source, if this server is a replica.
pub async fn replica_lag(pool: &MySqlPool) -> Option<u64> {
    for sql in ["SHOW REPLICA STATUS", "SHOW SLAVE STATUS"] {
        if let Ok(Some(row)) = sqlx::query(sql).fetch_optional(pool).await {
            for col in ["Seconds_Behind_Source", "Seconds_Behind_Master"] {
                if let Ok(Some(v)) = row.try_get::<Option<u64>, _>(col) {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// Runs the whole ledger check in chunks; `progress(done, total)` after each chunk.
pub async fn reconcile(
    pool: &MySqlPool,
    opts: &LedgerOptions,
    on_replica: bool,
    progress: &mut (dyn FnMut(u64, u64) + Send),
) -> Result<LedgerReport, LedgerError> {
    let started = Instant::now();
    let kind = server_kind(pool).await?;
    let (min, max, count): (Option<u64>, Option<u64>, i64) =
        sqlx::query_as("SELECT MIN(product_id), MAX(product_id), COUNT(*) FROM inventory").fetch_one(pool).await?;
    let mut report = LedgerReport {
        server: kind,
        products_checked: 0,
        mismatches: Vec::new(),
        chunks: 0,
        slowest_statement_ms: 0.0,
        total_ms: 0.0,
        replica_lag_secs: if on_replica { replica_lag(pool).await } else { None },
    };
    let (Some(min), Some(max)) = (min, max) else {
        return Ok(report);
    };
    // Ranges of ids, not of products: with gaps in the ids a chunk may hold fewer products.
    let span = (max - min + 1).max(1);
    let density = count as f64 / span as f64;
    let width = ((opts.first_chunk as f64 / density.max(1e-9)) as u64).max(1);
    let orders_sql: std::sync::Arc<str> = with_time_limit(kind, CHUNK_ORDERS_SQL, opts.statement_limit).into();
    let inventory_sql: std::sync::Arc<str> = with_time_limit(kind, CHUNK_INVENTORY_SQL, opts.statement_limit).into();
    let cursor = std::sync::Arc::new(std::sync::Mutex::new(Cursor { next: min, max, width, exhausted: false }));
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<Result<Chunk, LedgerError>>();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..opts.parallelism.max(1) {
        let (pool, orders_sql, inventory_sql, cursor, done_tx) =
            (pool.clone(), orders_sql.clone(), inventory_sql.clone(), cursor.clone(), done_tx.clone());
        let limit = opts.statement_limit;
        workers.spawn(async move {
            loop {
                let Some(range) = cursor.lock().expect("cursor lock").take() else { return };
                let checked = check_chunk(&pool, &orders_sql, &inventory_sql, range, limit).await;
                if let Ok((_, took)) = &checked {
                    cursor.lock().expect("cursor lock").adapt(*took);
                }
                let failed = checked.is_err();
                if done_tx.send(checked).is_err() || failed {
                    return;
                }
            }
        });
    }
    drop(done_tx);
    while let Some(checked) = done_rx.recv().await {
        // On the first failure the other workers are dropped with the JoinSet.
        let (rows, took) = checked?;
        report.chunks += 1;
        report.slowest_statement_ms = report.slowest_statement_ms.max(took.as_secs_f64() * 1000.0);
        for (product_id, initial, stock, live) in rows {
            report.products_checked += 1;
            let gap = initial - stock - live;
            let oversold = live > initial || stock < 0;
            if gap != 0 || oversold {
                report.mismatches.push(LedgerMismatch {
                    product_id,
                    initial_stock: initial,
                    db_stock: stock,
                    live_orders_qty: live,
                    gap,
                    oversold,
                });
            }
        }
        progress(report.products_checked, count as u64);
    }
    report.mismatches.sort_by_key(|m| m.product_id);
    report.total_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// The unchunked query, under a time limit (for the benchmark and the time-limit test).
pub async fn raw_ledger_query(pool: &MySqlPool, limit: Duration) -> Result<Vec<(u64, i64)>, LedgerError> {
    let kind = server_kind(pool).await?;
    let sql = with_time_limit(kind, &LEDGER_SQL.replace("SUM(buy_count)", "CAST(SUM(buy_count) AS SIGNED)"), limit);
    let mut tx = crate::tx::begin_with(pool, "START TRANSACTION READ ONLY").await?;
    let rows = sqlx::query_as(&sql).fetch_all(&mut *tx).await;
    tx.commit().await?;
    rows.map_err(|e| classify(e, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_gets_the_max_execution_time_hint_in_milliseconds() {
        let sql = with_time_limit(ServerKind::MySql, "SELECT product_id FROM orders", Duration::from_millis(250));
        assert_eq!(sql, "SELECT /*+ MAX_EXECUTION_TIME(250) */ product_id FROM orders");
    }

    #[test]
    fn mariadb_gets_max_statement_time_in_seconds() {
        let sql = with_time_limit(ServerKind::MariaDb, "SELECT 1", Duration::from_millis(250));
        assert_eq!(sql, "SET STATEMENT max_statement_time = 0.250 FOR SELECT 1");
    }

    #[test]
    fn the_chunk_statements_are_selects_the_mysql_hint_can_attach_to() {
        for sql in [CHUNK_ORDERS_SQL, CHUNK_INVENTORY_SQL] {
            assert!(with_time_limit(ServerKind::MySql, sql, Duration::from_secs(1))
                .starts_with("SELECT /*+ MAX_EXECUTION_TIME(1000) */ product_id"));
        }
        assert!(
            with_time_limit(ServerKind::MySql, LEDGER_SQL, Duration::from_secs(1)).contains("MAX_EXECUTION_TIME(1000)")
        );
    }
}
