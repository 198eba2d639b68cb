//! The sale overview, the first screen after connecting: its figures arrive as one
//! `overview-tick` event per sampler tick (the feed below, started on connect; on a sale read
//! over its adapter, [`spawn_over_adapter_feed`]); its burn-down chart is drawn on request.

use std::sync::Arc;

use serde::Serialize;
use stockguard_core::adapter::{AdapterReading, OpenedSale};
use stockguard_core::chart::ChartLabels;
use stockguard_core::connect::Connections;
use stockguard_core::overview::over_adapter::OrderRate;
use stockguard_core::overview::{self, burndown, chart, FleetScrape, OverviewError};
use stockguard_core::recon::sampler::Tick;
use stockguard_core::sale::Capability;
use tauri::{AppHandle, Emitter as _, Manager as _, State};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::watch;

use crate::alert_desk::AlertDesk;
use crate::error::DesktopError;
use crate::state::AppState;

pub const TICK_EVENT: &str = "overview-tick";
pub const ERROR_EVENT: &str = "overview-error";

/// Computes the overview on every sampler tick until the sampler stops, keeping the previous
/// scrape for the rates.
pub fn spawn_feed(app: AppHandle, conns: Connections, mut ticks: broadcast::Receiver<Arc<Tick>>) {
    tauri::async_runtime::spawn(async move {
        let mut previous: Option<FleetScrape> = None;
        loop {
            match ticks.recv().await {
                Ok(_) => {}
                // Only the newest tick matters.
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            }
            // The alerts the alert desk published (this tick's, or the one before while the desk
            // is still at it): evaluated and read once per tick, for the tray and this screen.
            let alerts = app.state::<AlertDesk>().latest().map(|u| u.alerts).unwrap_or_default();
            match overview::read(&conns, alerts, previous.as_ref()).await {
                Ok((o, scrape)) => {
                    previous = Some(scrape);
                    let _ = app.emit(TICK_EVENT, &o);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "sale overview");
                    let _ = app.emit(ERROR_EVENT, e.to_string());
                }
            }
        }
    });
}

/// The overview of a sale read over its adapter, on every sampler tick: from that tick's
/// adapter readings (`latest`, which the sampler sets before it sends the tick) and the alerts
/// the alert desk published.
pub fn spawn_over_adapter_feed(
    app: AppHandle,
    sale: Arc<OpenedSale>,
    latest: watch::Receiver<Arc<Vec<AdapterReading>>>,
    mut ticks: broadcast::Receiver<Arc<Tick>>,
) {
    tauri::async_runtime::spawn(async move {
        let mut rate = OrderRate::default();
        loop {
            match ticks.recv().await {
                Ok(_) => {}
                // Only the newest tick matters.
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            }
            let readings = latest.borrow().clone();
            let alerts = app.state::<AlertDesk>().latest().map(|u| u.alerts).unwrap_or_default();
            match overview::over_adapter::read(&sale, &readings, alerts, &mut rate).await {
                Ok(o) => {
                    let _ = app.emit(TICK_EVENT, &o);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "sale overview over an adapter");
                    let _ = app.emit(ERROR_EVENT, e.to_string());
                }
            }
        }
    });
}

/// The burn-down as the window shows it: the chart and the numbers it ends on.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct BurnDownView {
    pub svg: String,
    pub product_id: Option<u64>,
    pub initial_units: i64,
    /// Units left at the end of the curve (initial less live orders).
    pub remaining_units: i64,
    pub bucket_secs: i64,
    pub points: usize,
}

/// The stock burn-down of `product` (none: the whole sale) as SVG; `series` names the line.
#[tauri::command(rename_all = "snake_case")]
pub async fn burndown_chart(
    state: State<'_, AppState>,
    product: Option<u64>,
    labels: ChartLabels,
    series: String,
    width: u32,
    height: u32,
) -> Result<BurnDownView, DesktopError> {
    let live = state.live().await?;
    let b = burndown::read(&live.ours(Capability::Burndown)?.mysql, product).await?;
    let svg = chart::burndown_svg(&b, &labels, &series, (width, height)).map_err(OverviewError::from)?;
    Ok(BurnDownView {
        svg,
        product_id: b.product_id,
        initial_units: b.initial_units,
        remaining_units: b.remaining(),
        bucket_secs: b.bucket_secs,
        points: b.points.len(),
    })
}
