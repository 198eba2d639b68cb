//! The drift sampler over an adapter: the sale read each interval (each reading two passes,
//! [`super::reading`]), a drift confirmed only when two readings agree on it and the second
//! is settled ([`super::alerts::confirm_settled`]), sent as the same [`Tick`] and kept in the
//! same [`History`] as our own sale's sampler, so every consumer of ticks (the board, the
//! alerts, the overview, the compensation step) works on both. What only an adapter reading
//! has (lost orders, reserved units, buckets) is published beside each tick on `latest`,
//! before the tick itself, so a consumer of the tick reads that tick's adapter readings.
//!
//! The sampler only reads, as ours does.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::Utc;
use tokio::sync::{broadcast, watch};

use super::alerts::confirm_settled;
use super::{read, AdapterReading, OpenedSale};
use crate::recon::drift::DriftTracker;
use crate::recon::sampler::{History, HistoryPoint, SamplerConfig, Tick};
use crate::recon::Reading;

/// Where the sampler's output goes.
pub struct Outlets {
    pub ticks: broadcast::Sender<Arc<Tick>>,
    /// The newest reading's adapter figures, set before its tick is sent.
    pub latest: watch::Sender<Arc<Vec<AdapterReading>>>,
    /// A reading that failed, in words; sampling goes on.
    pub errors: broadcast::Sender<String>,
    pub history: Arc<Mutex<History>>,
}

/// Samples `sale` until `stop` turns true. Baselines are read each tick: one recorded while
/// the window is open takes effect at once.
pub async fn run(sale: Arc<OpenedSale>, config: SamplerConfig, out: Outlets, mut stop: watch::Receiver<bool>) {
    let mut tracker = DriftTracker::default();
    let mut interval = tokio::time::interval(config.interval);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !*stop.borrow() {
        tokio::select! {
            _ = interval.tick() => {}
            _ = stop.changed() => continue,
        }
        let started = Instant::now();
        let read = async {
            let baselines = sale.baselines().await?;
            read(&sale.file, &sale.links(), &baselines, &[]).await
        };
        let readings = tokio::select! {
            read = read => read,
            _ = stop.changed() => continue,
        };
        match readings {
            Ok(readings) => {
                let plain: Vec<Reading> = readings.iter().map(|r| r.reading.clone()).collect();
                let confirmed = confirm_settled(&mut tracker, &plain);
                let at = Utc::now();
                out.history
                    .lock()
                    .expect("history lock")
                    .push(HistoryPoint { at, drift: plain.iter().map(|r| (r.product_id.clone(), r.drift)).collect() });
                out.latest.send_replace(Arc::new(readings));
                let took_ms = started.elapsed().as_secs_f64() * 1000.0;
                let _ = out.ticks.send(Arc::new(Tick { at, readings: plain, confirmed, took_ms }));
            }
            Err(e) => {
                let _ = out.errors.send(crate::step::chain(&e));
            }
        }
    }
}
