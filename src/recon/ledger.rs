//! Ledger reconciliation: the reference article's query over live orders, checked against
//! `inventory` (`initial_stock = stock + SUM(live buy_count)`).
//!
//! It is a heavy read, so it runs in read-only transactions, in chunks of products sized so
//! that no statement holds the server for more than about [`TARGET_STATEMENT`], each under a
//! server-enforced time limit (MySQL: the `MAX_EXECUTION_TIME` optimizer hint; MariaDB:
//! `SET STATEMENT max_statement_time = ... FOR`), and on the profile's replica when one is set.

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
}

impl Default for LedgerOptions {
    fn default() -> Self {
        Self { statement_limit: Duration::from_secs(5), first_chunk: 500 }
    }
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
    let mut width = ((opts.first_chunk as f64 / density.max(1e-9)) as u64).max(1);
    let orders_sql = with_time_limit(kind, CHUNK_ORDERS_SQL, opts.statement_limit);
    let inventory_sql = with_time_limit(kind, CHUNK_INVENTORY_SQL, opts.statement_limit);
    let mut from = min;
    while from <= max {
        let to = from.saturating_add(width - 1).min(max);
        let mut conn = pool.acquire().await?;
        sqlx::query("START TRANSACTION READ ONLY").execute(&mut *conn).await?;
        let t = Instant::now();
        let live: Result<Vec<(u64, i64)>, _> =
            sqlx::query_as(&orders_sql).bind(from).bind(to).fetch_all(&mut *conn).await;
        let took = t.elapsed();
        let inventory: Result<Vec<(u64, i64, i64)>, _> = match &live {
            Ok(_) => sqlx::query_as(&inventory_sql).bind(from).bind(to).fetch_all(&mut *conn).await,
            Err(_) => Ok(Vec::new()),
        };
        sqlx::query("COMMIT").execute(&mut *conn).await?;
        let live: std::collections::HashMap<u64, i64> =
            live.map_err(|e| classify(e, opts.statement_limit))?.into_iter().collect();
        let rows: Vec<(u64, i64, i64, i64)> = inventory
            .map_err(|e| classify(e, opts.statement_limit))?
            .into_iter()
            .map(|(id, initial, stock)| (id, initial, stock, live.get(&id).copied().unwrap_or(0)))
            .collect();
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
        // Aim the next chunk at the target statement time.
        let scale = (TARGET_STATEMENT.as_secs_f64() / took.as_secs_f64().max(0.001)).clamp(0.25, 4.0);
        width = ((width as f64 * scale) as u64).max(1);
        from = to.saturating_add(1);
        if to == max {
            break;
        }
    }
    report.total_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// The unchunked query, under a time limit (for the benchmark and the time-limit test).
pub async fn raw_ledger_query(pool: &MySqlPool, limit: Duration) -> Result<Vec<(u64, i64)>, LedgerError> {
    let kind = server_kind(pool).await?;
    let sql = with_time_limit(kind, &LEDGER_SQL.replace("SUM(buy_count)", "CAST(SUM(buy_count) AS SIGNED)"), limit);
    let mut conn = pool.acquire().await?;
    sqlx::query("START TRANSACTION READ ONLY").execute(&mut *conn).await?;
    let rows = sqlx::query_as(&sql).fetch_all(&mut *conn).await;
    sqlx::query("COMMIT").execute(&mut *conn).await?;
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
