//! Prometheus metrics of one engine instance (`GET /metrics`): requests by outcome, request
//! latency, Redis latency, DB pool wait, and, computed at scrape time, the stream backlog and
//! the units in flight.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use prometheus::{
    Encoder as _, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};
use sqlx::{MySql, MySqlPool, Transaction};

const LATENCY_BUCKETS: &[f64] = &[0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5];

pub struct Metrics {
    registry: Registry,
    pub requests: IntCounterVec,
    pub request_seconds: Histogram,
    pub redis_seconds: Histogram,
    pub db_pool_wait_seconds: Histogram,
    pub persisted: IntCounter,
    pub failed_orders: IntCounter,
    /// Reservations no replica acknowledged in time, written to the DB by the order path.
    pub written_through: IntCounter,
    /// The batches those were written in (one transaction each, unless a batch did not fit).
    pub write_through_batches: IntCounter,
    pub http_in_flight: IntGauge,
    stream_backlog: IntGauge,
    inflight_units: IntGauge,
    breaker_open: IntGauge,
}

fn histogram(name: &str, help: &str) -> Histogram {
    Histogram::with_opts(HistogramOpts::new(name, help).buckets(LATENCY_BUCKETS.to_vec())).expect("valid histogram")
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    let registry = Registry::new();
    let m = Metrics {
        requests: IntCounterVec::new(Opts::new("stockguard_requests_total", "Order requests by outcome"), &["outcome"])
            .unwrap(),
        request_seconds: histogram("stockguard_request_duration_seconds", "POST /orders latency"),
        redis_seconds: histogram("stockguard_redis_latency_seconds", "Reserve script round trip"),
        db_pool_wait_seconds: histogram(
            "stockguard_db_pool_wait_seconds",
            "Time to get a transaction: pool wait plus BEGIN",
        ),
        persisted: IntCounter::new("stockguard_persisted_orders_total", "Orders written to the DB").unwrap(),
        failed_orders: IntCounter::new("stockguard_failed_orders_total", "Accepted orders the DB refused").unwrap(),
        written_through: IntCounter::new(
            "stockguard_written_through_total",
            "Reservations no replica acknowledged in time, written to the DB before answering",
        )
        .unwrap(),
        write_through_batches: IntCounter::new(
            "stockguard_write_through_batches_total",
            "Batches the written-through reservations were written to the DB in",
        )
        .unwrap(),
        http_in_flight: IntGauge::new("stockguard_http_in_flight", "Order requests being served").unwrap(),
        stream_backlog: IntGauge::new("stockguard_stream_backlog", "Reservation messages not yet acknowledged")
            .unwrap(),
        inflight_units: IntGauge::new("stockguard_inflight_units", "Units reserved in Redis, not yet in the DB")
            .unwrap(),
        breaker_open: IntGauge::new(
            "stockguard_breaker_open",
            "1 while this instance's Redis breaker is tripped (it sells through the DB path)",
        )
        .unwrap(),
        registry,
    };
    m.registry.register(Box::new(m.requests.clone())).unwrap();
    for h in [&m.request_seconds, &m.redis_seconds, &m.db_pool_wait_seconds] {
        m.registry.register(Box::new(h.clone())).unwrap();
    }
    for c in [&m.persisted, &m.failed_orders, &m.written_through, &m.write_through_batches] {
        m.registry.register(Box::new(c.clone())).unwrap();
    }
    for g in [&m.http_in_flight, &m.stream_backlog, &m.inflight_units, &m.breaker_open] {
        m.registry.register(Box::new(g.clone())).unwrap();
    }
    m
});

/// The process's metrics.
pub fn get() -> &'static Metrics {
    &METRICS
}

/// Begins a transaction, recording how long it took to get one: the wait for a pooled
/// connection plus the `BEGIN` round trip (a loopback round trip is ~0.1 ms, so under load
/// this is dominated by the pool wait).
pub async fn begin(pool: &MySqlPool) -> Result<Transaction<'static, MySql>, sqlx::Error> {
    let started = Instant::now();
    let tx = pool.begin().await;
    get().db_pool_wait_seconds.observe(started.elapsed().as_secs_f64());
    tx
}

/// [`begin`], with `statement` (one or more statements ending in `START TRANSACTION`) in
/// place of `BEGIN`: for a transaction that sets its own isolation level. Begun whole
/// ([`stockguard_core::tx`]): a request dropped between the statements' answers leaves no
/// connection in a transaction nobody ends.
pub async fn begin_with(pool: &MySqlPool, statement: &'static str) -> Result<Transaction<'static, MySql>, sqlx::Error> {
    let started = Instant::now();
    let tx = stockguard_core::tx::begin_with(pool, statement).await;
    get().db_pool_wait_seconds.observe(started.elapsed().as_secs_f64());
    tx
}

/// Runs `f`, recording its duration in `histogram`.
pub async fn timed<T>(histogram: &Histogram, f: impl std::future::Future<Output = T>) -> T {
    let started = Instant::now();
    let out = f.await;
    histogram.observe(started.elapsed().as_secs_f64());
    out
}

/// The text exposition, after refreshing the scrape-time gauges.
pub fn render(backlog: Option<(i64, i64)>, breaker_open: bool) -> String {
    let m = get();
    m.breaker_open.set(i64::from(breaker_open));
    if let Some((backlog, inflight)) = backlog {
        m.stream_backlog.set(backlog);
        m.inflight_units.set(inflight);
    }
    let mut out = Vec::new();
    TextEncoder::new().encode(&m.registry.gather(), &mut out).expect("metrics encode");
    String::from_utf8(out).expect("metrics are UTF-8")
}

/// How long a scrape may spend reading Redis before answering with what it has.
pub const SCRAPE_BUDGET: Duration = Duration::from_millis(500);
