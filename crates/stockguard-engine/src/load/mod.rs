//! The load generator: buyers hit an engine's `POST /orders`, every answer is recorded, and
//! after the queue drains the record is checked against the DB (contract section 6).
//!
//! - [`conn`]: one keep-alive HTTP/1.1 connection per sending worker.
//! - [`drive`]: sending the requests at a paced rate and recording the answers.
//! - [`verify`]: waiting for the drain and checking lost, duplicated, oversold, false sold-out.
//! - [`report`]: the figures: the reference article's four pressure-test figures (oversell,
//!   success rate, DB pool wait, Redis latency) plus accepted/s and latency percentiles.

pub mod conn;
pub mod drive;
pub mod report;
pub mod verify;

use std::time::Duration;

pub use report::LoadReport;

#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// The engine's base URL, e.g. `http://127.0.0.1:8080`.
    pub target: String,
    pub products: Vec<u64>,
    /// Distinct buyers; each asks once for each product.
    pub buyers: u64,
    /// Requests per second to send.
    pub rate: u32,
    /// Stop sending after this long even if not every buyer has asked.
    pub duration: Duration,
    /// Requests outstanding at once at most.
    pub concurrency: usize,
    /// How long to wait for the engine to persist every accepted order.
    pub drain_timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("invalid load parameters: {0}")]
    Invalid(String),
    #[error("the target {0} does not answer: {1}")]
    TargetDown(String, String),
    #[error("checking against the DB failed: {0}")]
    Db(#[from] sqlx::Error),
}

impl LoadConfig {
    pub fn validate(&self) -> Result<(), LoadError> {
        let bad = |m: &str| Err(LoadError::Invalid(m.to_string()));
        if self.products.is_empty() {
            return bad("give at least one --product");
        }
        if self.buyers == 0 || self.rate == 0 || self.concurrency == 0 {
            return bad("--buyers, --rate and --concurrency must be at least 1");
        }
        if self.duration.is_zero() {
            return bad("--duration must be more than zero");
        }
        if url::Url::parse(&self.target).map(|u| u.scheme() != "http").unwrap_or(true) {
            return bad("--target must be an http:// URL");
        }
        Ok(())
    }
}

/// Drives the load, waits for the drain, checks the DB and reports.
pub async fn run(
    pool: &sqlx::MySqlPool,
    cfg: &LoadConfig,
    progress: &(dyn Fn(&drive::Counters, Duration) + Sync),
) -> Result<LoadReport, LoadError> {
    cfg.validate()?;
    let scrape = || async {
        let url = format!("{}/metrics", cfg.target.trim_end_matches('/'));
        match reqwest::get(url).await {
            Ok(r) => r.text().await.ok(),
            Err(_) => None,
        }
    };
    let before = scrape().await;
    let recorded = drive::drive(cfg, progress).await?;
    let verdict = verify::verify(pool, &recorded, &cfg.products, cfg.buyers, cfg.drain_timeout).await?;
    let after = scrape().await;
    let db_wait = report::mean_ms(before.as_deref(), after.as_deref(), "stockguard_db_pool_wait_seconds");
    let redis = report::mean_ms(before.as_deref(), after.as_deref(), "stockguard_redis_latency_seconds");
    Ok(report::build(&recorded, verdict, db_wait, redis))
}
