//! The drift sampler: readings at an interval, drift confirmed by [`super::drift`]'s rule, a
//! bounded recent history and a thinned archive so a chart can show the whole sale.
//!
//! The sampler only reads. What a tick calls for (a compensation case for a confirmed
//! oversell, alerts) is done by whoever consumes the ticks, through the same steps every loop
//! calls ([`crate::compensation::on_tick`], [`crate::alerts::evaluate`]), so the headless
//! watcher and the window behave alike.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio::sync::{broadcast, watch};

use super::drift::{ConfirmedDrift, DriftTracker};
use super::reading::{read_products, read_products_light, LedgerGaps, Reading};
use crate::connect::Connections;
use crate::product_id::ProductId;

/// One tick of the sampler, as sent to watchers (the desktop board, `drift watch`).
#[derive(Debug, Clone, Serialize)]
pub struct Tick {
    pub at: DateTime<Utc>,
    pub readings: Vec<Reading>,
    pub confirmed: Vec<ConfirmedDrift>,
    /// How long the reading took (DB and Redis together).
    pub took_ms: f64,
}

/// One point of the drift history: each product's drift at an instant.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryPoint {
    pub at: DateTime<Utc>,
    pub drift: Vec<(ProductId, Option<i64>)>,
}

/// Recent points at full rate, older ones thinned out (every `archive_every`-th kept).
#[derive(Debug)]
pub struct History {
    recent: VecDeque<HistoryPoint>,
    archive: Vec<HistoryPoint>,
    capacity: usize,
    archive_every: usize,
    evicted: usize,
}

impl History {
    pub fn new(capacity: usize, archive_every: usize) -> Self {
        Self {
            recent: VecDeque::with_capacity(capacity),
            archive: Vec::new(),
            capacity,
            archive_every: archive_every.max(1),
            evicted: 0,
        }
    }

    pub fn push(&mut self, point: HistoryPoint) {
        if self.recent.len() == self.capacity {
            if let Some(old) = self.recent.pop_front() {
                if self.evicted.is_multiple_of(self.archive_every) {
                    self.archive.push(old);
                }
                self.evicted += 1;
            }
        }
        self.recent.push_back(point);
    }

    /// The whole sale, oldest first: the thinned archive, then the recent points.
    pub fn all(&self) -> Vec<HistoryPoint> {
        self.archive.iter().chain(self.recent.iter()).cloned().collect()
    }

    /// Like [`all`](Self::all), keeping only `products`: what a chart of a few products needs,
    /// without copying every product's drift.
    pub fn of_products(&self, products: &[ProductId]) -> Vec<HistoryPoint> {
        self.archive
            .iter()
            .chain(self.recent.iter())
            .map(|p| HistoryPoint {
                at: p.at,
                drift: p.drift.iter().filter(|(id, _)| products.contains(id)).cloned().collect(),
            })
            .collect()
    }

    pub fn recent_len(&self) -> usize {
        self.recent.len()
    }
}

#[derive(Debug, Clone)]
pub struct SamplerConfig {
    pub interval: Duration,
    /// Points kept at full rate (3,600 = an hour at 1 s).
    pub recent_capacity: usize,
    /// Of the points older than that, one in this many is kept.
    pub archive_every: usize,
    /// How often a reading sums live orders (the ledger statuses); readings in between
    /// derive them from the last such reading's ledger gaps (see `reading`), which keeps a
    /// tick cheap on a big sale. Drift is exact either way.
    pub ledger_every: Duration,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(1),
            recent_capacity: 3600,
            archive_every: 10,
            ledger_every: Duration::from_secs(10),
        }
    }
}

/// Samples until `stop` turns true: one batched [`Tick`] per interval on `ticks`, and the
/// history kept in `history`. A failed reading is reported on `errors` and sampling goes on.
pub async fn run(
    conns: Connections,
    config: SamplerConfig,
    ticks: broadcast::Sender<Arc<Tick>>,
    errors: broadcast::Sender<String>,
    history: Arc<Mutex<History>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut tracker = DriftTracker::default();
    let mut redis = conns.redis.clone();
    let mut interval = tokio::time::interval(config.interval);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut gaps = LedgerGaps::default();
    let mut last_full: Option<Instant> = None;
    while !*stop.borrow() {
        tokio::select! {
            _ = interval.tick() => {}
            _ = stop.changed() => continue,
        }
        let started = Instant::now();
        let full = last_full.is_none_or(|t| t.elapsed() >= config.ledger_every);
        let read = if full {
            read_products(&conns.mysql, &mut redis, &conns.keys, &[]).await
        } else {
            read_products_light(&conns.mysql, &mut redis, &conns.keys, &[], &gaps).await
        };
        match read {
            Ok(readings) => {
                if readings.iter().any(|r| !r.live_derived) {
                    gaps = LedgerGaps::from_readings(&readings);
                    last_full = Some(started);
                }
                let confirmed = tracker.observe(&readings);
                let at = Utc::now();
                history.lock().expect("history lock").push(HistoryPoint {
                    at,
                    drift: readings.iter().map(|r| (r.product_id.clone(), r.drift)).collect(),
                });
                let tick = Tick { at, readings, confirmed, took_ms: started.elapsed().as_secs_f64() * 1000.0 };
                let _ = ticks.send(Arc::new(tick));
            }
            Err(e) => {
                let _ = errors.send(e.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_keeps_recent_points_and_thins_older_ones() {
        let mut h = History::new(3, 2);
        for i in 0..9 {
            h.push(HistoryPoint { at: Utc::now(), drift: vec![(1.into(), Some(i))] });
        }
        assert_eq!(h.recent_len(), 3);
        let drifts: Vec<i64> = h.all().iter().map(|p| p.drift[0].1.unwrap()).collect();
        assert_eq!(drifts, vec![0, 2, 4, 6, 7, 8]);
        assert_eq!(h.of_products(&[1.into()]).len(), 6);
        assert!(h.of_products(&[2.into()]).iter().all(|p| p.drift.is_empty()), "only the products asked for");
    }
}
