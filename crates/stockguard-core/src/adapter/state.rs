//! The console's own state for a sale it did not build: baselines (the initial stock the
//! sale does not store) and the audit of every write, in a database of Stockguard's own
//! (`STOCKGUARD_STATE_URL`), migrated with the embedded migrations. The sale's database is
//! only ever read.

use std::collections::HashMap;

use serde::Serialize;
use sqlx::MySqlPool;

use super::file::AdapterFile;
use super::reading::AdapterReading;
use super::AdapterError;
use crate::audit::{self, AuditEntry};
use crate::product_id::ProductId;
use crate::profile::ConnectionSettings;

fn state(step: &'static str) -> impl Fn(sqlx::Error) -> AdapterError {
    move |source| AdapterError::StateDb { step, source }
}

/// The recorded initial stock of each product of the sale (each id as it was recorded: a
/// number, or text).
pub async fn baselines(pool: &MySqlPool, sale: &str) -> Result<HashMap<ProductId, i64>, AdapterError> {
    let rows: Vec<(String, bool, i64)> = sqlx::query_as(
        "SELECT CAST(product_id AS CHAR), product_is_text, initial_stock FROM adapter_baselines WHERE sale = ?",
    )
    .bind(sale)
    .fetch_all(pool)
    .await
    .map_err(state("read the baselines"))?;
    rows.into_iter()
        .map(|(text, is_text, initial)| match ProductId::from_stored(text.clone(), is_text) {
            Some(id) => Ok((id, initial)),
            None => Err(AdapterError::Refused(format!(
                "the state database: adapter_baselines holds the product number {text:?} of sale {sale}, not a whole \
                 number; correct that row"
            ))),
        })
        .collect()
}

/// One product's recorded baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Baseline {
    pub product_id: ProductId,
    pub initial_stock: i64,
    /// The baseline it replaced, if any.
    pub previous: Option<i64>,
}

/// Records `initial = what is left + what live orders hold` for each product read (the DB
/// side of a reading: one statement, one moment), replacing earlier baselines, with one audit
/// row; in one transaction; for the roles the catalogue lets write `adapter_baselines`
/// ([`crate::action::Action::RecordBaselines`]). A later top-up in the sale's DB reads `LEDGER_MISMATCH` until
/// someone records a baseline again, with a reason.
pub async fn record_baselines(
    pool: &MySqlPool,
    settings: &ConnectionSettings,
    file: &AdapterFile,
    readings: &[AdapterReading],
    reason: &str,
) -> Result<Vec<Baseline>, AdapterError> {
    settings.may(crate::action::Action::RecordBaselines)?;
    if reason.trim().is_empty() {
        return Err(AdapterError::Refused("a baseline needs a reason (--reason)".into()));
    }
    if file.stock.is_none() {
        return Err(AdapterError::Refused("the sale has no [stock] table: there is nothing to baseline".into()));
    }
    let before = baselines(pool, &file.sale.name).await?;
    let mut tx = pool.begin().await.map_err(state("begin the baseline"))?;
    let mut out = Vec::with_capacity(readings.len());
    for r in readings {
        let initial = r.reading.db_stock + r.reading.live_orders_qty;
        let (stored, is_text) = r.reading.product_id.stored();
        sqlx::query(
            "INSERT INTO adapter_baselines (sale, product_id, product_is_text, initial_stock, reason, recorded_by) \
             VALUES (?, ?, ?, ?, ?, USER()) \
             ON DUPLICATE KEY UPDATE initial_stock = VALUES(initial_stock), reason = VALUES(reason), \
             recorded_at = NOW(3), recorded_by = USER()",
        )
        .bind(&file.sale.name)
        .bind(&stored)
        .bind(is_text)
        .bind(initial)
        .bind(reason)
        .execute(&mut *tx)
        .await
        .map_err(state("record a baseline"))?;
        out.push(Baseline {
            product_id: r.reading.product_id.clone(),
            initial_stock: initial,
            previous: before.get(&r.reading.product_id).copied(),
        });
    }
    let entry = AuditEntry::by(
        settings,
        "adapter_baseline",
        &format!("sale:{}", file.sale.name),
        reason,
        "RECORDED",
        serde_json::json!({ "baselines": out }),
    );
    audit::record(&mut *tx, &entry).await.map_err(state("write the audit row"))?;
    tx.commit().await.map_err(state("commit the baseline"))?;
    Ok(out)
}

/// Opens the state database and brings its schema up to date (it is Stockguard's own: the
/// embedded migrations, the baselines among them); a role account opens one that is up to
/// date without DDL rights. Beside a sale, [`open_beside`] first refuses the sale's own
/// database.
pub async fn open(url: &str) -> Result<MySqlPool, AdapterError> {
    let (display, pool) = connect(url).await?;
    crate::connect::migrate_if_behind(&pool, &display).await.map_err(AdapterError::StateConnect)?;
    Ok(pool)
}

/// Opens the state database of the sale `file` describes (read in `sale_db`, when it has a
/// database): refused, before anything is written, when it is not a database of its own
/// ([`refuse_the_sales_own`]); then as [`open`].
pub async fn open_beside(
    url: &str,
    file: &AdapterFile,
    sale_db: Option<&MySqlPool>,
) -> Result<MySqlPool, AdapterError> {
    let (display, pool) = connect(url).await?;
    if let Err(refused) = refuse_in(&pool, &display, file, sale_db).await {
        pool.close().await;
        return Err(refused);
    }
    crate::connect::migrate_if_behind(&pool, &display).await.map_err(AdapterError::StateConnect)?;
    Ok(pool)
}

/// Refuses a state URL that names the sale's own database (the same server and database as
/// `sale_db`), or a database that holds the sale's tables (`[stock]`, `[orders]`) and is not
/// Stockguard's yet: migrating either would write 25 tables of ours (`orders`, `inventory`,
/// ...) among the sale's. Connects, looks, and closes; writes nothing.
pub async fn refuse_the_sales_own(
    url: &str,
    file: &AdapterFile,
    sale_db: Option<&MySqlPool>,
) -> Result<(), AdapterError> {
    let (display, pool) = connect(url).await?;
    let looked = refuse_in(&pool, &display, file, sale_db).await;
    pool.close().await;
    looked
}

async fn connect(url: &str) -> Result<(String, MySqlPool), AdapterError> {
    let display = crate::profile::redact(url);
    let options = crate::connect::mysql_options(url).map_err(AdapterError::StateConnect)?;
    let pool = sqlx::mysql::MySqlPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(crate::connect::CONNECT_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(|e| AdapterError::StateConnect(crate::connect::classify_mysql_error(&display, e)))?;
    Ok((display, pool))
}

/// Where a connection is: the server's host name and port, and its database.
async fn whereabouts(pool: &MySqlPool, step: &'static str) -> Result<(String, u16, Option<String>), AdapterError> {
    let (host, port, db): (String, i64, Option<String>) =
        sqlx::query_as("SELECT CAST(@@hostname AS CHAR), CAST(@@port AS SIGNED), DATABASE()")
            .fetch_one(pool)
            .await
            .map_err(state(step))?;
    Ok((host, u16::try_from(port).unwrap_or(0), db))
}

async fn refuse_in(
    state_pool: &MySqlPool,
    display: &str,
    file: &AdapterFile,
    sale_db: Option<&MySqlPool>,
) -> Result<(), AdapterError> {
    let (host, port, db) = whereabouts(state_pool, "look where the state database is").await?;
    let Some(db) = db else {
        return Err(AdapterError::Refused(format!(
            "the state database URL {display} names no database: name one of Stockguard's own (nothing was written)"
        )));
    };
    if let Some(sale_db) = sale_db {
        if whereabouts(sale_db, "look where the sale's database is").await? == (host.clone(), port, Some(db.clone())) {
            return Err(AdapterError::Refused(format!(
                "the state database URL {display} names the sale's own database ({db} on {host}:{port}): Stockguard \
                 keeps its state in a database of its own, never among the sale's tables; nothing was written \
                 (create one, e.g. CREATE DATABASE stockguard_state, and name it in STOCKGUARD_STATE_URL)"
            )));
        }
    }
    let sales_tables: Vec<&str> =
        [file.stock.as_ref().map(|s| s.table.as_str()), file.orders.as_ref().map(|o| o.table.as_str())]
            .into_iter()
            .flatten()
            .collect();
    let present: Vec<String> = sqlx::query_scalar(
        "SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE()",
    )
    .fetch_all(state_pool)
    .await
    .map_err(state("list the state database's tables"))?;
    let ours = present.iter().any(|t| t == "_sqlx_migrations");
    let theirs: Vec<&str> = sales_tables.into_iter().filter(|t| present.iter().any(|p| p == t)).collect();
    if !ours && !theirs.is_empty() {
        return Err(AdapterError::Refused(format!(
            "the state database {db} on {host}:{port} holds the sale's tables ({}) and is not Stockguard's: it looks \
             like the sale's database or a copy of it; nothing was written (name a database of Stockguard's own in \
             STOCKGUARD_STATE_URL)",
            theirs.join(", ")
        )));
    }
    Ok(())
}
