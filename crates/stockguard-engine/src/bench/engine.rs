//! One engine through HTTP against the reserve ceiling, batched against single-order
//! persistence, and what vouching for accepted orders on a replica costs ([`super::vouching`]).

use std::path::Path;
use std::time::{Duration, Instant};

use super::engine_process::EngineProcess;
use super::vouching::{self, VouchingPlan};
use super::{reserve, BenchError, BenchProduct, BenchReport, Figure, ScratchDatabase, CLIENTS};
use crate::engine::consumer::{self, ConsumerConfig};
use crate::load::{self, LoadConfig};
use stockguard_core::connect::Connections;

/// Persisted orders per second with the given batch size, draining `n` messages.
async fn persist_rate(conns: &Connections, product: u64, n: u64, batch_size: usize) -> Result<f64, BenchError> {
    let cfg = ConsumerConfig {
        name: format!("bench-{batch_size}"),
        batch_size,
        claim_min_idle: Duration::from_secs(600),
        payment_timeout: Duration::from_secs(900),
    };
    let mut redis = conns.redis.clone();
    let started = Instant::now();
    let mut done = 0u64;
    while done < n {
        let o = consumer::run_once(&conns.mysql, &mut redis, &conns.keys, &[product], &cfg).await?;
        let progressed = (o.persisted.len() + o.duplicates.len() + o.failed.len()) as u64;
        if progressed == 0 {
            break;
        }
        done += progressed;
    }
    Ok(done as f64 / started.elapsed().as_secs_f64())
}

/// What `bench engine` measures, and how much.
#[derive(Debug, Clone, Copy)]
pub struct EnginePlan {
    /// A small run that only checks the benchmark still works.
    pub quick: bool,
    pub vouching: VouchingPlan,
    /// Only what vouching costs: no ceiling, no run on the profile's Redis, no persist figures.
    pub vouching_only: bool,
}

impl EnginePlan {
    pub fn new(quick: bool) -> Self {
        Self { quick, vouching: if quick { VouchingPlan::quick() } else { VouchingPlan::full() }, vouching_only: false }
    }
}

/// The `engine` benchmark. `engine_exe` is the `stockguard` binary (to serve the engine in
/// its own process). It works in a [`ScratchDatabase`] of its own, dropped at the end: no
/// purge of an earlier run's deleted orders runs under this one's measurements.
pub async fn run(
    conns: &Connections,
    engine_exe: &Path,
    plan: &EnginePlan,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<BenchReport, BenchError> {
    let scratch = ScratchDatabase::create(&conns.settings, "engine").await?;
    let result = async {
        let mysql = scratch.migrated_pool().await?;
        let conns = Connections { mysql, settings: scratch.settings.clone(), ..conns.clone() };
        let report = measure(&conns, engine_exe, plan, progress).await;
        conns.mysql.close().await;
        report
    }
    .await;
    let dropped = scratch.drop_database().await?;
    let mut report = result?;
    report.notes.push(dropped);
    Ok(report)
}

/// `redis-benchmark` of the reserve script on a product of its own, dropped afterwards.
async fn measure_ceiling(conns: &Connections, requests: u64) -> Result<f64, BenchError> {
    let product = BenchProduct::create(conns, 1_000_000_000, 1_000_000_000).await?;
    let ceiling = reserve::ceiling(conns, product.id, requests, CLIENTS, 1).await;
    product.drop_all(conns).await?;
    ceiling
}

async fn measure(
    conns: &Connections,
    engine_exe: &Path,
    plan: &EnginePlan,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<BenchReport, BenchError> {
    let mut report = if plan.vouching_only {
        BenchReport { bench: "engine".into(), figures: Vec::new(), ratios: Vec::new(), notes: Vec::new() }
    } else {
        measure_http_and_persist(conns, engine_exe, plan.quick, progress).await?
    };
    let (figures, ratios, notes) = vouching::measure(conns, engine_exe, &plan.vouching, progress).await?;
    report.figures.extend(figures);
    report.ratios.extend(ratios);
    report.notes.extend(notes);
    Ok(report)
}

async fn measure_http_and_persist(
    conns: &Connections,
    engine_exe: &Path,
    quick: bool,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<BenchReport, BenchError> {
    // Long enough that starting up (connections, the script's first load, the consumers'
    // first reads) is a small part of the HTTP run: about 6 s of sending here.
    let (http_orders, ceiling_requests, persist_orders) =
        if quick { (2_000u64, 20_000u64, 1_000u64) } else { (200_000, 200_000, 20_000) };
    let mut figures = Vec::new();
    let mut ratios = Vec::new();

    // The ceiling is measured right before and right after the HTTP run, and their mean is
    // the figure compared: the machine's speed drifts (by 10-15% within minutes here), and
    // bracketing keeps the drift out of the ratio as far as it is steady.
    progress("the reserve ceiling (redis-benchmark), before");
    let before = measure_ceiling(conns, ceiling_requests).await?;
    progress("one engine through HTTP on the profile's Redis");

    // One engine through HTTP: every buyer can buy, so every answer is an acceptance.
    let product = BenchProduct::create(conns, http_orders as i64, 1).await?;
    let engine = EngineProcess::start(engine_exe, conns).await?;
    let cfg = LoadConfig {
        target: engine.url.clone(),
        products: vec![product.id],
        buyers: http_orders,
        rate: 1_000_000,
        duration: Duration::from_secs(300),
        concurrency: CLIENTS as usize,
        drain_timeout: Duration::from_secs(120),
    };
    let report = load::run(&conns.mysql, &cfg, &|_, _| {}).await;
    engine.stop().await;
    // Its 200,000 orders stay until the scratch database is dropped: deleting them now
    // would set InnoDB purging under the measurements that follow.
    product.drop_keys(conns).await?;
    let report = report?;
    // The figures of a run that lost, duplicated or oversold would measure a broken engine.
    if !report.holds() {
        return Err(BenchError::Engine(format!("the HTTP run did not hold:\n{}", report.to_text())));
    }

    progress("the reserve ceiling (redis-benchmark), after");
    let after = measure_ceiling(conns, ceiling_requests).await?;
    let ceiling = (before + after) / 2.0;
    figures.push(Figure::new(
        &format!("ceiling: redis-benchmark EVALSHA reserve script, -c {CLIENTS}, before the HTTP run"),
        before,
        "req/s",
    ));
    figures.push(Figure::new(
        &format!("ceiling: redis-benchmark EVALSHA reserve script, -c {CLIENTS}, after the HTTP run"),
        after,
        "req/s",
    ));
    figures.push(Figure::new("ceiling: mean of before and after", ceiling, "req/s"));
    figures.push(Figure::new(
        &format!("engine via HTTP: accepted orders/s ({CLIENTS} concurrent)"),
        report.accepted_per_sec,
        "orders/s",
    ));
    figures.push(Figure::new("engine via HTTP: latency p50", report.latency_p50_ms, "ms"));
    figures.push(Figure::new("engine via HTTP: latency p99", report.latency_p99_ms, "ms"));
    figures.push(Figure::new("engine via HTTP: latency p99.9", report.latency_p999_ms, "ms"));
    ratios.push(Figure::new("engine accepted/s / reserve ceiling", report.accepted_per_sec / ceiling, ""));

    // Persisting: batched against single-order transactions, on one hot row.
    progress("persisting, single-order transactions against batches");
    let product = BenchProduct::create(conns, (persist_orders * 2) as i64, 1_000_000).await?;
    let result = async {
        reserve::reserve_many(conns, product.id, persist_orders, 32, "s").await?;
        let single = persist_rate(conns, product.id, persist_orders, 1).await?;
        reserve::reserve_many(conns, product.id, persist_orders, 32, "p").await?;
        let batched = persist_rate(conns, product.id, persist_orders, 200).await?;
        Ok::<_, BenchError>((single, batched))
    }
    .await;
    product.drop_keys(conns).await?;
    let (single, batched) = result?;
    figures.push(Figure::new("persist: single-order transactions (UPDATE + INSERT each)", single, "orders/s"));
    figures.push(Figure::new("persist: batches of up to 200 (one UPDATE, one INSERT)", batched, "orders/s"));
    ratios.push(Figure::new("batched / single-order persist", batched / single, ""));

    Ok(BenchReport {
        bench: "engine".into(),
        figures,
        ratios,
        notes: vec![
            format!("HTTP: {http_orders} buyers, load generator and engine on the same machine (they share its cores)"),
            format!("ceiling: {ceiling_requests} requests before and {ceiling_requests} after the HTTP run"),
            format!("persist: {persist_orders} orders each way, one product (one hot inventory row)"),
            report.to_text().lines().next().unwrap_or_default().to_string(),
            report.to_text().lines().last().unwrap_or_default().to_string(),
        ],
    })
}
