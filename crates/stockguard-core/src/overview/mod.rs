//! The sale overview: the first thing an on-call engineer sees after connecting. Units sold
//! of initial stock, orders per second, accepted vs sold out vs errors, p99 and backlog (from
//! the engines' own `/metrics`), the sale's mode, the open alerts with their acknowledgements,
//! the open compensation cases, and the stock burn-down.
//!
//! - [`scrape`]: every engine instance of `engine_heartbeats` asked for its metrics; one that
//!   does not answer, or whose heartbeat is stale, is listed as such, never left out.
//! - [`metrics`]: the exposition parsed, engines added up, rates and p99 from two scrapes.
//! - [`burndown`]: units left over the whole sale, bucketed by time in SQL from the ledger.
//! - [`chart`]: the burn-down drawn with `plotters` (SVG for the window, PNG files).
//! - [`verdict`]: the first line: exact, or how many products are oversold or drifting.
//! - [`over_adapter`]: the same overview of a sale read over its adapter (no engine of ours
//!   to scrape: units, order rows and their rate, all from the tick's reading).
//!
//! The caller keeps the previous [`FleetScrape`] and hands it back: the desktop app's feed
//! does so every tick, the CLI scrapes twice a second apart ([`once`]).

pub mod burndown;
pub mod chart;
pub mod metrics;
pub mod over_adapter;
pub mod scrape;
pub mod verdict;

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

pub use burndown::{BurnDown, BurnPoint};
pub use scrape::{EngineAnswer, FleetScrape};

use crate::alerts::{self, AlertState, Thresholds};
use crate::compensation::read::CaseSummary;
use crate::compensation::CaseStatus;
use crate::connect::Connections;
use crate::switch::exit::DEFAULT_STALE_AFTER;
use crate::switch::{Mode, Scope};

#[derive(Debug, thiserror::Error)]
pub enum OverviewError {
    #[error("no product {0} in this sale")]
    NoSuchProduct(u64),
    #[error("the answer is not Prometheus text: {0}")]
    Exposition(String),
    #[error("{url}: {why}")]
    Scrape { url: String, why: String },
    #[error("cannot make an HTTP client for the scrapes: {0}")]
    Http(String),
    #[error(transparent)]
    Chart(#[from] crate::chart::ChartError),
    #[error(transparent)]
    Alerts(#[from] crate::alerts::AlertError),
    #[error(transparent)]
    Switch(#[from] crate::switch::SwitchError),
    #[error(transparent)]
    Compensation(#[from] crate::compensation::CompensationError),
    #[error(transparent)]
    Recon(#[from] crate::recon::ReconError),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// The sale read over its adapter failed.
    #[error(transparent)]
    Adapter(#[from] crate::adapter::AdapterError),
}

/// Units of the sale, from the ledger.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SaleFigures {
    pub products: i64,
    pub initial_units: i64,
    /// Units the DB's stock still holds.
    pub remaining_units: i64,
    /// `initial - remaining`: units sold per the ledger (persisted orders not returned).
    pub sold_units: i64,
    pub sold_pct: f64,
}

/// Orders as the engines counted them (since each engine started), and their pace.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OrderFigures {
    pub requests: u64,
    pub accepted: u64,
    pub sold_out: u64,
    /// The engine could not serve the order (`UNAVAILABLE`): what a buyer sees as a 5xx other
    /// than "not ready" or "paused" (the load generator's "errors", less its transport errors).
    pub errors: u64,
    /// Every other answer: over the per-user limit, rate-limited, not ready, paused, bad request.
    pub refused: u64,
    /// Every answer code with its count.
    pub by_outcome: BTreeMap<String, u64>,
    /// Seconds between this scrape and the previous one; none for a first scrape.
    pub window_s: Option<f64>,
    pub orders_per_s: Option<f64>,
    pub accepted_per_s: Option<f64>,
    /// p99 of `POST /orders` over the window (none without orders in it).
    pub p99_ms: Option<f64>,
    /// p99 since the engines started.
    pub p99_total_ms: Option<f64>,
    /// Reservations not yet persisted (the engines' sale-wide gauge); none when no engine
    /// answered.
    pub backlog: Option<i64>,
    pub inflight_units: Option<i64>,
}

/// An engine as the overview shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EngineFigures {
    pub instance_id: String,
    pub listen_addr: String,
    pub answer: EngineAnswer,
    /// Why a live engine did not answer.
    pub error: Option<String>,
    pub heartbeat_age_ms: i64,
    pub breaker_state: String,
    pub requests: Option<u64>,
    pub orders_per_s: Option<f64>,
}

/// The overview at one moment.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Overview {
    pub at: DateTime<Utc>,
    /// The first line: is the sale safe ([`verdict`]).
    pub verdict: verdict::Verdict,
    pub sale: SaleFigures,
    pub orders: OrderFigures,
    pub engines: Vec<EngineFigures>,
    /// The sale's mode: the degrade switch's global row (NORMAL when never set).
    pub mode: Mode,
    /// Products whose own scope is not NORMAL.
    pub products_off_normal: usize,
    /// The firing alerts with their acknowledgements, as the caller evaluated them.
    pub alerts: Vec<AlertState>,
    /// Cases not executed or closed, newest first.
    pub compensation_open: Vec<CaseSummary>,
    /// The sale's name when it is read over its adapter ([`over_adapter`]): then what only
    /// our engines know (answers other than an order, p99, backlog, the mode) is not there.
    pub over_adapter: Option<String>,
}

fn count(v: f64) -> u64 {
    v.max(0.0).round() as u64
}

/// The order figures from this scrape and, for the rates and the window's p99, the previous.
pub fn order_figures(now: &FleetScrape, previous: Option<&FleetScrape>) -> (OrderFigures, Vec<EngineFigures>) {
    let total = metrics::sum(now.answered().map(|(_, m)| m));
    let by_outcome: BTreeMap<String, u64> = total.requests.iter().map(|(k, v)| (k.clone(), count(*v))).collect();
    let of = |k: &str| by_outcome.get(k).copied().unwrap_or(0);
    let requests: u64 = by_outcome.values().sum();
    let (accepted, sold_out, errors) = (of("accepted"), of("SOLD_OUT"), of("UNAVAILABLE"));
    let mut figures = OrderFigures {
        requests,
        accepted,
        sold_out,
        errors,
        refused: requests - accepted - sold_out - errors,
        p99_total_ms: metrics::quantile(0.99, &total.latency).map(|s| s * 1000.0),
        backlog: total.backlog.map(|v| v.round() as i64),
        inflight_units: total.inflight_units.map(|v| v.round() as i64),
        by_outcome,
        ..OrderFigures::default()
    };
    // Per engine, what it counted since the previous scrape (engines in both only).
    let window = previous.map(|p| now.at.saturating_duration_since(p.at).as_secs_f64()).filter(|w| *w > 0.0);
    let increases: Vec<(&str, metrics::EngineMetrics)> = match previous {
        Some(p) => now
            .answered()
            .filter_map(|(e, m)| {
                p.answered()
                    .find(|(pe, _)| pe.instance_id == e.instance_id)
                    .map(|(_, pm)| (e.instance_id.as_str(), m.since(pm)))
            })
            .collect(),
        None => Vec::new(),
    };
    // No engine in both scrapes: no pace to tell (not a pace of zero).
    if let Some(w) = window.filter(|_| !increases.is_empty()) {
        let in_window = metrics::sum(increases.iter().map(|(_, m)| m));
        figures.window_s = Some(w);
        figures.orders_per_s = Some(in_window.total_requests() / w);
        figures.accepted_per_s = Some(in_window.requests.get("accepted").copied().unwrap_or(0.0) / w);
        figures.p99_ms = metrics::quantile(0.99, &in_window.latency).map(|s| s * 1000.0);
    }
    let engines = now
        .engines
        .iter()
        .map(|e| EngineFigures {
            instance_id: e.instance_id.clone(),
            listen_addr: e.listen_addr.clone(),
            answer: e.answer,
            error: e.error.clone(),
            heartbeat_age_ms: e.heartbeat_age_ms,
            breaker_state: e.breaker_state.clone(),
            requests: e.metrics.as_ref().map(|m| count(m.total_requests())),
            orders_per_s: window.and_then(|w| {
                increases.iter().find(|(id, _)| *id == e.instance_id).map(|(_, m)| m.total_requests() / w)
            }),
        })
        .collect();
    (figures, engines)
}

/// The sale's units from the ledger: one pass over `inventory` (a row per product), its own
/// products only (a drill rig's, running or past, are the drill's: issue 51).
pub async fn sale_figures(pool: &sqlx::MySqlPool) -> Result<SaleFigures, OverviewError> {
    let (products, initial_units, remaining_units): (i64, i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), CAST(COALESCE(SUM(initial_stock), 0) AS SIGNED), CAST(COALESCE(SUM(stock), 0) AS SIGNED) \
         FROM inventory WHERE rig IS NULL",
    )
    .fetch_one(pool)
    .await?;
    let sold_units = initial_units - remaining_units;
    let sold_pct = if initial_units > 0 { sold_units as f64 * 100.0 / initial_units as f64 } else { 0.0 };
    Ok(SaleFigures { products, initial_units, remaining_units, sold_units, sold_pct })
}

/// Reads the overview: scrapes the engines now (rates against `previous`), reads the ledger,
/// the switch and the open compensation cases; `alerts` are the caller's (the desktop's alert
/// desk, or [`once`]), so nothing evaluates them twice. Returns the scrape for the next call.
pub async fn read(
    conns: &Connections,
    alerts: Vec<AlertState>,
    previous: Option<&FleetScrape>,
) -> Result<(Overview, FleetScrape), OverviewError> {
    let fleet = scrape::scrape(&conns.mysql, DEFAULT_STALE_AFTER).await?;
    let (orders, engines) = order_figures(&fleet, previous);
    let sale = sale_figures(&conns.mysql).await?;
    let scopes = crate::switch::store::scopes(&conns.mysql).await?;
    let mode = scopes.iter().find(|s| s.scope == Scope::Global).map_or(Mode::Normal, |s| s.mode);
    let products_off_normal =
        scopes.iter().filter(|s| s.scope.product_id().is_some() && s.mode != Mode::Normal).count();
    let compensation_open = crate::compensation::read::list(&conns.mysql, None)
        .await?
        .into_iter()
        .filter(|c| !matches!(c.status, CaseStatus::Executed | CaseStatus::Closed))
        .collect();
    let verdict = verdict::of(&alerts);
    let overview = Overview {
        at: Utc::now(),
        verdict,
        sale,
        orders,
        engines,
        mode,
        products_off_normal,
        alerts,
        compensation_open,
        over_adapter: None,
    };
    Ok((overview, fleet))
}

/// A one-off overview (the CLI's): a scrape, then the alerts as `stockguard alerts` finds
/// them (two readings `between` apart), then the second scrape, so the rates have a window.
pub async fn once(conns: &Connections, thresholds: Thresholds, between: Duration) -> Result<Overview, OverviewError> {
    let first = scrape::scrape(&conns.mysql, DEFAULT_STALE_AFTER).await?;
    let firing = alerts::now::firing(conns, &thresholds, between).await?;
    let states = alerts::acks::states(conns, &firing).await?;
    Ok(read(conns, states, Some(&first)).await?.0)
}
