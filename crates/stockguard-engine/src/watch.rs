//! `stockguard watch --metrics-listen ADDR`: the headless watcher for a team's own
//! monitoring. It takes an exact reading of every product each interval (the desktop board's
//! sampler, without a window) and serves the latest one as Prometheus metrics, so Prometheus
//! rules (`deploy/prometheus/alerts.yml`) and Grafana (`deploy/grafana/`) see what the console
//! sees.
//!
//! Labels are bounded to products (and, for the status, the eight statuses): never orders or
//! users, whose numbers grow without bound. A drift is "confirmed" when two readings in a row
//! agree on it (`recon::drift::DriftTracker`, the console's own rule).
//!
//! It also serves the alerts the reading raises (`stockguard_alert_firing{alert,kind}`) and
//! which of them someone acknowledged in Stockguard (`stockguard_alert_acknowledged`), so a
//! Prometheus rule can page only for what nobody has taken (Alertmanager has no
//! acknowledgement of its own). With `settle_acknowledgements` it also closes the
//! acknowledgements whose alert cleared or expired, as the console does; that writes to the
//! DB (an on-call account), so it is asked for, never assumed.
//!
//! A confirmed oversell opens its compensation case here too (`compensation::on_tick`, the
//! step every reading loop calls), so an oversell gets its case with no window open; an
//! account that may not open one is logged and counted as an error, once per incident.
//!
//! Over an adapter file ([`run_adapter`], `watch/adapter.rs`) it reads the sale the file
//! describes each interval, with the same gauges where they apply plus whether each product's
//! reading settled and what waits in flight; a drift (an oversell among them) is confirmed
//! only by two settled readings that agree, and a confirmed oversell opens its case in the
//! state database through the same step (`OnOversold::observe_adapter`).
//!
//! It lives beside the engine because it is an HTTP server (the core has none).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prometheus::{Encoder as _, Gauge, GaugeVec, IntCounter, Opts, Registry, TextEncoder};
use tokio::sync::watch;

use stockguard_core::alerts::{self, acks, Alert, Thresholds};
use stockguard_core::compensation::on_tick::{self, OnOversold};
use stockguard_core::compensation::open::Opened;
use stockguard_core::compensation::CompensationError;
use stockguard_core::connect::Connections;
use stockguard_core::recon::drift::DriftTracker;
use stockguard_core::recon::reading::read_products;
use stockguard_core::recon::{DriftStatus, Reading};
use stockguard_core::ProductId;

mod adapter;
pub use adapter::run_adapter;

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: String, source: std::io::Error },
    #[error("the metrics server failed: {0}")]
    Serve(std::io::Error),
}

/// The watcher's gauges, refreshed after each reading.
struct Gauges {
    registry: Registry,
    drift: GaugeVec,
    confirmed: GaugeVec,
    status: GaugeVec,
    inflight: GaugeVec,
    pending_release: GaugeVec,
    redis_stock: GaugeVec,
    db_stock: GaugeVec,
    settled: GaugeVec,
    in_flight: GaugeVec,
    alert_firing: GaugeVec,
    alert_acknowledged: GaugeVec,
    reading_seconds: Gauge,
    revision: Gauge,
    last_reading: Gauge,
    errors: IntCounter,
}

const STATUSES: [DriftStatus; 9] = [
    DriftStatus::Unsettled,
    DriftStatus::Ok,
    DriftStatus::RedisHigh,
    DriftStatus::RedisLow,
    DriftStatus::KeyMissing,
    DriftStatus::KeyUnreadable,
    DriftStatus::HistoryLost,
    DriftStatus::LedgerMismatch,
    DriftStatus::Oversold,
];

impl Gauges {
    fn new() -> Self {
        let registry = Registry::new();
        let per_product = |name: &str, help: &str| {
            let g = GaugeVec::new(Opts::new(name, help), &["product"]).expect("valid gauge");
            registry.register(Box::new(g.clone())).expect("registered once");
            g
        };
        let single = |name: &str, help: &str| {
            let g = Gauge::new(name, help).expect("valid gauge");
            registry.register(Box::new(g.clone())).expect("registered once");
            g
        };
        let status = GaugeVec::new(
            Opts::new(
                "stockguard_product_status",
                "1 for the product's status in the latest reading, 0 for the others",
            ),
            &["product", "status"],
        )
        .expect("valid gauge");
        registry.register(Box::new(status.clone())).expect("registered once");
        let by_alert = |name: &str, help: &str| {
            let g = GaugeVec::new(Opts::new(name, help), &["alert", "kind"]).expect("valid gauge");
            registry.register(Box::new(g.clone())).expect("registered once");
            g
        };
        let alert_firing = by_alert("stockguard_alert_firing", "1 for each alert the latest reading raises");
        let alert_acknowledged =
            by_alert("stockguard_alert_acknowledged", "1 for each firing alert someone acknowledged in Stockguard");
        let errors = IntCounter::new("stockguard_watch_reading_errors_total", "Readings that failed").expect("valid");
        registry.register(Box::new(errors.clone())).expect("registered once");
        Self {
            drift: per_product(
                "stockguard_drift_units",
                "Redis stock minus what it should hold, as of the reading's cut (absent: no stock key)",
            ),
            confirmed: per_product("stockguard_drift_confirmed", "1 when two readings in a row agree on a drift"),
            inflight: per_product("stockguard_inflight_pending_units", "Units reserved in Redis, not yet in the DB"),
            pending_release: per_product(
                "stockguard_pending_release_units",
                "Units released in the DB, not yet in Redis",
            ),
            redis_stock: per_product("stockguard_redis_stock_units", "Redis stock at the reading's cut"),
            db_stock: per_product("stockguard_db_stock_units", "The DB's stock (the ledger)"),
            settled: per_product(
                "stockguard_reading_settled",
                "1 when the product's drift is a verdict (always, on our own sale; over an adapter, two passes agreed)",
            ),
            in_flight: per_product(
                "stockguard_in_flight_entries",
                "Over an adapter: what waits in the sale's in-flight source for the product (0 on our own sale)",
            ),
            reading_seconds: single("stockguard_reading_duration_seconds", "How long the latest reading took"),
            revision: single("stockguard_reading_revision", "Readings taken since the watcher started"),
            last_reading: single("stockguard_last_reading_timestamp_seconds", "When the latest reading finished"),
            status,
            alert_firing,
            alert_acknowledged,
            errors,
            registry,
        }
    }

    fn show(&self, readings: &[Reading], confirmed: &[ProductId], took: Duration, revision: u64) {
        for gauge in [
            &self.drift,
            &self.confirmed,
            &self.inflight,
            &self.pending_release,
            &self.redis_stock,
            &self.db_stock,
            &self.settled,
            &self.in_flight,
        ] {
            // Products that left the sale leave the metrics too.
            gauge.reset();
        }
        self.status.reset();
        for r in readings {
            let p = r.product_id.to_string();
            if let Some(drift) = r.drift {
                self.drift.with_label_values(&[&p]).set(drift as f64);
            }
            if let Some(stock) = r.redis_stock {
                self.redis_stock.with_label_values(&[&p]).set(stock as f64);
            }
            self.confirmed.with_label_values(&[&p]).set(if confirmed.contains(&r.product_id) { 1.0 } else { 0.0 });
            self.inflight.with_label_values(&[&p]).set(r.inflight_pending as f64);
            self.pending_release.with_label_values(&[&p]).set(r.pending_release as f64);
            self.db_stock.with_label_values(&[&p]).set(r.db_stock as f64);
            self.settled.with_label_values(&[&p]).set(if r.settled { 1.0 } else { 0.0 });
            self.in_flight.with_label_values(&[&p]).set(r.in_flight as f64);
            for s in STATUSES {
                self.status.with_label_values(&[&p, s.as_str()]).set(if s == r.status { 1.0 } else { 0.0 });
            }
        }
        self.reading_seconds.set(took.as_secs_f64());
        self.revision.set(revision as f64);
        self.last_reading.set(chrono::Utc::now().timestamp_millis() as f64 / 1000.0);
    }

    fn show_alerts(&self, firing: &[Alert], acknowledged: &[String]) {
        self.alert_firing.reset();
        self.alert_acknowledged.reset();
        for a in firing {
            let labels = [a.key.as_str(), a.kind.as_str()];
            self.alert_firing.with_label_values(&labels).set(1.0);
            let taken = acknowledged.contains(&a.key);
            self.alert_acknowledged.with_label_values(&labels).set(if taken { 1.0 } else { 0.0 });
        }
    }

    fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut out).expect("metrics encode");
        String::from_utf8(out).expect("metrics are UTF-8")
    }
}

/// Reads every product each `interval` and serves the latest reading at `GET /metrics` on
/// `listener`, until `stop` resolves.
pub async fn run(
    conns: Connections,
    listener: tokio::net::TcpListener,
    opts: WatchOptions,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), WatchError> {
    serve(listener, stop, move |gauges, stopped| read_forever(conns, gauges, opts, stopped)).await
}

/// Serves the gauges `reader` keeps up to date until `stop` resolves, then waits for the reader.
async fn serve<R, F>(
    listener: tokio::net::TcpListener,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
    reader: R,
) -> Result<(), WatchError>
where
    R: FnOnce(Arc<Gauges>, watch::Receiver<bool>) -> F,
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let gauges = Arc::new(Gauges::new());
    let (stopping, stopped) = watch::channel(false);
    let reader = tokio::spawn(reader(gauges.clone(), stopped));
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let gauges = gauges.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], gauges.render()) }
        }),
    );
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop.await;
            let _ = stopping.send(true);
        })
        .await;
    let _ = reader.await;
    served.map_err(WatchError::Serve)
}

/// How the watcher reads.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// A reading of every product this often.
    pub interval: Duration,
    pub thresholds: Thresholds,
    /// Close acknowledgements whose alert cleared or expired (writes to the DB).
    pub settle_acknowledgements: bool,
}

/// Binds `addr` for [`run`], with a clear error.
pub async fn bind(addr: &str) -> Result<tokio::net::TcpListener, WatchError> {
    tokio::net::TcpListener::bind(addr).await.map_err(|source| WatchError::Listen { addr: addr.into(), source })
}

async fn read_forever(conns: Connections, gauges: Arc<Gauges>, opts: WatchOptions, mut stopped: watch::Receiver<bool>) {
    let mut tracker = DriftTracker::default();
    let mut on_oversold = OnOversold::default();
    let mut revision = 0u64;
    let mut redis = conns.redis.clone();
    loop {
        let started = Instant::now();
        match read_products(&conns.mysql, &mut redis, &conns.keys, &[]).await {
            Ok(readings) => {
                revision += 1;
                let confirmed = tracker.observe(&readings);
                // As every reading loop does: a confirmed oversell opens its case, window or not.
                say_opened(&gauges, on_oversold.observe(&conns.mysql, &readings, &confirmed).await);
                let ids: Vec<ProductId> = confirmed.iter().map(|c| c.product_id.clone()).collect();
                gauges.show(&readings, &ids, started.elapsed(), revision);
                // Our own sale's ids are numbers.
                let products: Vec<u64> = readings.iter().filter_map(|r| r.product_id.as_num()).collect();
                let signals = match alerts::now::signals(&conns, &products).await {
                    Ok(signals) => signals,
                    Err(e) => {
                        // The reading's own alerts still count; the backlog is then unknown.
                        gauges.errors.inc();
                        tracing::warn!(error = %e, "watch: backlog or breakers unreadable");
                        alerts::Signals::default()
                    }
                };
                let firing = alerts::evaluate(&readings, &confirmed, &signals, &opts.thresholds);
                if let Err(e) = alerts_tick(&conns, &gauges, &firing, &readings, opts.settle_acknowledgements).await {
                    gauges.errors.inc();
                    tracing::warn!(error = %e, "watch: alerts failed");
                }
            }
            Err(e) => {
                gauges.errors.inc();
                tracing::warn!(error = %e, "watch: reading failed");
            }
        }
        if !pause(&opts, started, &mut stopped).await {
            return;
        }
    }
}

/// Waits out the rest of the interval; false when the watcher is stopping.
async fn pause(opts: &WatchOptions, started: Instant, stopped: &mut watch::Receiver<bool>) -> bool {
    let next = opts.interval.saturating_sub(started.elapsed());
    tokio::select! {
        _ = tokio::time::sleep(next) => true,
        _ = stopped.changed() => false,
    }
}

/// Logs the cases a tick opened; a case that could not be opened counts as an error.
fn say_opened(gauges: &Gauges, opened: Vec<(ProductId, Result<Opened, CompensationError>)>) {
    for (product, opened) in opened {
        match opened {
            Ok(o) => {
                tracing::info!(product = %product, case = o.case_id, created = o.created, "compensation case for an oversell")
            }
            Err(e) => {
                gauges.errors.inc();
                tracing::warn!(error = %on_tick::not_opened(&product, &e), "watch: compensation");
            }
        }
    }
}

/// Settles acknowledgements (when asked) and shows what fires and who took it.
async fn alerts_tick(
    conns: &Connections,
    gauges: &Gauges,
    firing: &[Alert],
    readings: &[stockguard_core::recon::Reading],
    settle: bool,
) -> Result<(), alerts::AlertError> {
    if settle {
        for (ack, why) in acks::settle(conns, firing, readings).await? {
            tracing::info!(alert = %ack.alert_key, acked_by = %ack.acked_by, why, "acknowledgement closed");
        }
    }
    let taken: Vec<String> = acks::open(conns).await?.into_iter().map(|a| a.alert_key).collect();
    gauges.show_alerts(firing, &taken);
    Ok(())
}

/// The address a listener serves on, for the message a person reads.
pub fn served_on(listener: &tokio::net::TcpListener) -> Option<SocketAddr> {
    listener.local_addr().ok()
}
