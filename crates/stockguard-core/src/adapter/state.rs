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
use crate::profile::ConnectionSettings;

fn state(step: &'static str) -> impl Fn(sqlx::Error) -> AdapterError {
    move |source| AdapterError::StateDb { step, source }
}

/// The recorded initial stock of each product of the sale.
pub async fn baselines(pool: &MySqlPool, sale: &str) -> Result<HashMap<u64, i64>, AdapterError> {
    let rows: Vec<(u64, i64)> =
        sqlx::query_as("SELECT product_id, initial_stock FROM adapter_baselines WHERE sale = ?")
            .bind(sale)
            .fetch_all(pool)
            .await
            .map_err(state("read the baselines"))?;
    Ok(rows.into_iter().collect())
}

/// One product's recorded baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Baseline {
    pub product_id: u64,
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
        sqlx::query(
            "INSERT INTO adapter_baselines (sale, product_id, initial_stock, reason, recorded_by) \
             VALUES (?, ?, ?, ?, USER()) \
             ON DUPLICATE KEY UPDATE initial_stock = VALUES(initial_stock), reason = VALUES(reason), \
             recorded_at = NOW(3), recorded_by = USER()",
        )
        .bind(&file.sale.name)
        .bind(r.reading.product_id)
        .bind(initial)
        .bind(reason)
        .execute(&mut *tx)
        .await
        .map_err(state("record a baseline"))?;
        out.push(Baseline {
            product_id: r.reading.product_id,
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
/// date without DDL rights.
pub async fn open(url: &str) -> Result<MySqlPool, AdapterError> {
    let display = crate::profile::redact(url);
    let options = crate::connect::mysql_options(url).map_err(AdapterError::StateConnect)?;
    let pool = sqlx::mysql::MySqlPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(crate::connect::CONNECT_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(|e| AdapterError::StateConnect(crate::connect::classify_mysql_error(&display, e)))?;
    crate::connect::migrate_if_behind(&pool, &display).await.map_err(AdapterError::StateConnect)?;
    Ok(pool)
}
