//! Scraping the engines: every instance in `engine_heartbeats` (its listen address is what it
//! reports there), the live ones asked for `GET /metrics` at once, each within a timeout.
//!
//! Nothing is dropped: an instance whose heartbeat is stale is listed as such (not asked: it
//! stopped, and a scrape of its address would only time out), and a live one that does not
//! answer, or answers something else than an exposition, is listed with why.

use std::time::{Duration, Instant};

use serde::Serialize;
use sqlx::MySqlPool;

use super::metrics::{self, EngineMetrics};
use super::OverviewError;

/// How long one engine may take to answer a scrape. The engine itself gives its Redis sample
/// half a second (`SCRAPE_BUDGET`), so a second is enough for a healthy one.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(1);

/// How an engine answered the scrape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EngineAnswer {
    /// Served its metrics: counted.
    Answered,
    /// Live by its heartbeat, but the scrape failed (`error` says how): not counted.
    NotAnswering,
    /// Its heartbeat is stale: stopped or cut off; not asked, not counted.
    Stale,
}

/// One engine in one scrape.
#[derive(Debug, Clone)]
pub struct EngineScrape {
    pub instance_id: String,
    pub listen_addr: String,
    pub heartbeat_age_ms: i64,
    pub breaker_state: String,
    pub answer: EngineAnswer,
    pub error: Option<String>,
    pub metrics: Option<EngineMetrics>,
}

/// Every engine at one moment: kept by the caller and passed back for the next overview,
/// which takes its rates from the two.
#[derive(Debug, Clone)]
pub struct FleetScrape {
    pub at: Instant,
    pub engines: Vec<EngineScrape>,
}

impl FleetScrape {
    /// The engines that answered, with their metrics.
    pub fn answered(&self) -> impl Iterator<Item = (&EngineScrape, &EngineMetrics)> {
        self.engines.iter().filter_map(|e| e.metrics.as_ref().map(|m| (e, m)))
    }
}

type HeartbeatRow = (String, String, i64, String);

/// Scrapes every live engine of `engine_heartbeats`; instances silent for longer than
/// `stale_after` are listed, not asked.
pub async fn scrape(pool: &MySqlPool, stale_after: Duration) -> Result<FleetScrape, OverviewError> {
    let rows: Vec<HeartbeatRow> = sqlx::query_as(
        "SELECT instance_id, listen_addr, CAST(TIMESTAMPDIFF(MICROSECOND, last_seen, NOW(3)) AS SIGNED), \
         CAST(breaker_state AS CHAR) FROM engine_heartbeats ORDER BY instance_id",
    )
    .fetch_all(pool)
    .await?;
    let client = reqwest::Client::builder()
        .timeout(SCRAPE_TIMEOUT)
        .no_proxy()
        .build()
        .map_err(|e| OverviewError::Http(e.to_string()))?;
    let stale_us = stale_after.as_micros() as i64;
    let at = Instant::now();
    let engines =
        futures_util::future::join_all(rows.into_iter().map(|(instance_id, listen_addr, age_us, breaker)| {
            let client = client.clone();
            async move {
                let mut engine = EngineScrape {
                    instance_id,
                    heartbeat_age_ms: age_us / 1000,
                    breaker_state: breaker,
                    answer: EngineAnswer::Stale,
                    error: None,
                    metrics: None,
                    listen_addr,
                };
                if age_us > stale_us {
                    return engine;
                }
                match fetch(&client, &engine.listen_addr).await.and_then(|text| metrics::parse(&text)) {
                    Ok(m) => {
                        engine.answer = EngineAnswer::Answered;
                        engine.metrics = Some(m);
                    }
                    Err(e) => {
                        engine.answer = EngineAnswer::NotAnswering;
                        engine.error = Some(e.to_string());
                    }
                }
                engine
            }
        }))
        .await;
    Ok(FleetScrape { at, engines })
}

async fn fetch(client: &reqwest::Client, listen_addr: &str) -> Result<String, OverviewError> {
    let url = format!("http://{listen_addr}/metrics");
    let failed = |e: reqwest::Error| {
        let why = if e.is_timeout() {
            format!("no answer within {} ms", SCRAPE_TIMEOUT.as_millis())
        } else if e.is_connect() {
            "connection refused or unreachable".to_string()
        } else {
            e.to_string()
        };
        OverviewError::Scrape { url: url.clone(), why }
    };
    let response = client.get(&url).send().await.map_err(failed)?;
    if !response.status().is_success() {
        return Err(OverviewError::Scrape { url: url.clone(), why: format!("answered {}", response.status()) });
    }
    response.text().await.map_err(failed)
}
