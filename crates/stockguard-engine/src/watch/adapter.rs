//! `stockguard watch` over an adapter file: the headless watcher on a sale Stockguard did not
//! build. Each interval it takes a reading of the sale the file describes (two passes each,
//! `crate::adapter::reading`), and serves it with the native gauges where they apply, plus
//! `stockguard_reading_settled` and `stockguard_in_flight_entries`. A drift, an oversell among
//! them, is confirmed only when two readings in a row agree on it and the second is settled
//! (`UNSETTLED` is never a verdict), as `stockguard alerts` over an adapter does; a confirmed
//! oversell opens its compensation case in the state database through
//! `OnOversold::observe_adapter`, the step every loop calls, so it gets its case with no window
//! open. Without a state database the watcher still serves metrics, and says once that an
//! oversell's case cannot be opened.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::watch;

use super::{pause, say_opened, serve, Gauges, WatchError, WatchOptions};
use stockguard_core::adapter::{self, OpenedSale};
use stockguard_core::alerts;
use stockguard_core::compensation::on_tick::OnOversold;
use stockguard_core::compensation::over_adapter::SaleSide;
use stockguard_core::recon::drift::DriftTracker;
use stockguard_core::recon::{DriftStatus, Reading};
use stockguard_core::ProductId;

/// Reads the sale each `interval` and serves the latest reading at `GET /metrics` on
/// `listener`, until `stop` resolves.
pub async fn run_adapter(
    sale: Arc<OpenedSale>,
    listener: tokio::net::TcpListener,
    opts: WatchOptions,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), WatchError> {
    serve(listener, stop, move |gauges, stopped| read_forever(sale, gauges, opts, stopped)).await
}

async fn read_forever(
    sale: Arc<OpenedSale>,
    gauges: Arc<Gauges>,
    opts: WatchOptions,
    mut stopped: watch::Receiver<bool>,
) {
    let mut tracker = DriftTracker::default();
    let mut on_oversold = OnOversold::default();
    let mut without_state_said = false;
    let mut revision = 0u64;
    let links = sale.links();
    // A case names the sale's orders: a sale without an orders table (counters only) gets none.
    let side = sale.mysql.as_ref().map(|db| SaleSide { file: &sale.file, db });
    loop {
        let started = Instant::now();
        // Read each tick: a baseline recorded again takes effect at once.
        let read = match sale.baselines().await {
            Ok(baselines) => adapter::read(&sale.file, &links, &baselines, &[]).await,
            Err(e) => Err(e),
        };
        match read {
            Ok(readings) => {
                revision += 1;
                let plain: Vec<Reading> = readings.iter().map(|r| r.reading.clone()).collect();
                let confirmed = adapter::alerts::confirm_settled(&mut tracker, &plain);
                match (&sale.state, side) {
                    (Some(state), Some(side)) => {
                        say_opened(&gauges, on_oversold.observe_adapter(state, side, &readings, &confirmed).await)
                    }
                    _ if !without_state_said && confirmed.iter().any(|c| c.status == DriftStatus::Oversold) => {
                        without_state_said = true;
                        gauges.errors.inc();
                        tracing::warn!(
                            "watch: an oversell is confirmed but its compensation case cannot be opened: it needs a \
                             state database (STOCKGUARD_STATE_URL) and the sale's orders table"
                        );
                    }
                    _ => {}
                }
                let ids: Vec<ProductId> = confirmed.iter().map(|c| c.product_id.clone()).collect();
                gauges.show(&plain, &ids, started.elapsed(), revision);
                // The reading's own alerts; the backlog and the breakers are our engine's signals,
                // which a sale we did not build has not.
                let firing = alerts::evaluate(&plain, &confirmed, &alerts::Signals::default(), &opts.thresholds);
                gauges.show_alerts(&firing, &[]);
            }
            Err(e) => {
                gauges.errors.inc();
                tracing::warn!(error = %e, "watch: reading over the adapter failed");
            }
        }
        if !pause(&opts, started, &mut stopped).await {
            return;
        }
    }
}
