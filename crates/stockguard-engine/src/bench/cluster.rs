//! Redis Cluster beside one Redis server, in one run: the reserve script (the
//! `redis-benchmark` ceiling and our client, on one hot product and spread over twelve), an
//! exact reading of 5,000 products, and engines through HTTP (one engine on the server, one
//! on the cluster, three on the cluster, and one on the cluster with vouching off beside the
//! default, which vouches).
//!
//! The cluster is a private one the benchmark starts for itself (three masters with a replica
//! each, [`crate::sandbox::cluster`]) on the same machine as the profile's Redis, and stops at
//! the end. Both sides share the machine's cores, so this measures what the cluster costs a
//! sale and where it spreads load (across masters, per hash slot), not a cluster spread over
//! machines.

use std::path::Path;
use std::time::Duration;

use super::engine_process::EngineProcess;
use super::{reserve, BenchError, BenchProduct, BenchReport, Figure, ScratchDatabase};
use crate::load::{self, LoadConfig};
use crate::sandbox::cluster;
use stockguard_core::connect::Connections;
use stockguard_core::profile::ConnectionSettings;

/// Products the "spread" figures sell: twelve hash slots, spread over the three masters.
const SPREAD: usize = 12;
/// Outstanding requests, as in `bench reserve` and `bench engine`.
const CLIENTS: u32 = 50;

struct Plan {
    reserve_requests: u64,
    http_orders: u64,
}

/// The `cluster` benchmark. `engine_exe` is the `stockguard` binary (engines run in their own
/// processes). Works in a scratch database of its own.
pub async fn run(
    conns: &Connections,
    engine_exe: &Path,
    quick: bool,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<BenchReport, BenchError> {
    let plan = if quick {
        Plan { reserve_requests: 2_000, http_orders: 1_200 }
    } else {
        Plan { reserve_requests: 100_000, http_orders: 60_000 }
    };
    let dir = tempfile::tempdir().map_err(|e| BenchError::Engine(format!("a folder for the cluster: {e}")))?;
    progress("starting a private Redis Cluster (3 masters, 3 replicas)");
    let started = cluster::start(dir.path()).await.map_err(|e| BenchError::Engine(e.to_string()))?;
    // The cluster's processes outlive this one unless stopped: stopped whatever happens.
    let result = async {
        let scratch = ScratchDatabase::create(&conns.settings, "cluster").await?;
        let measured = async {
            let mysql = scratch.migrated_pool().await?;
            let single = Connections { mysql: mysql.clone(), settings: scratch.settings.clone(), ..conns.clone() };
            let settings = ConnectionSettings { redis_url: started.url().into(), ..scratch.settings.clone() };
            let redis = stockguard_core::connect::connect_redis(&settings)
                .await
                .map_err(|e| BenchError::Engine(e.to_string()))?;
            let on_cluster =
                Connections { mysql, redis, settings, keys: conns.keys.clone(), transport: conns.transport.clone() };
            let report = measure(&single, &on_cluster, &started, engine_exe, &plan, progress).await;
            single.mysql.close().await;
            report
        }
        .await;
        scratch.drop_after(measured).await
    }
    .await;
    let _ = cluster::stop(&started).await;
    let (mut report, dropped) = result?;
    report.notes.push(dropped);
    Ok(report)
}

async fn measure(
    single: &Connections,
    on_cluster: &Connections,
    started: &cluster::Cluster,
    engine_exe: &Path,
    plan: &Plan,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<BenchReport, BenchError> {
    let n = plan.reserve_requests;
    let mut figures = Vec::new();
    let mut ratios = Vec::new();
    let rate = |took: Duration| n as f64 / took.as_secs_f64();

    for (side, conns) in [("one server", single), ("cluster", on_cluster)] {
        progress(&format!("reserve script on the {side}"));
        let hot = BenchProduct::create(conns, 1_000_000_000, 1_000_000_000).await?;
        let mut spread = Vec::with_capacity(SPREAD);
        for _ in 0..SPREAD {
            spread.push(BenchProduct::create(conns, 1_000_000_000, 1_000_000_000).await?);
        }
        let ids: Vec<u64> = spread.iter().map(|p| p.id).collect();
        let measured = async {
            // `redis-benchmark --cluster` puts hash tags of its own in place of `{tag}` in
            // a key, so it cannot aim at one product's keys: the ceiling is the server's.
            let ceiling = if conns.redis.is_cluster() {
                None
            } else {
                Some(reserve::ceiling(conns, hot.id, n, CLIENTS, 1).await?)
            };
            let one = rate(reserve::reserve_many(conns, hot.id, n, CLIENTS, &format!("{side}h")).await?);
            let many = rate(reserve::reserve_spread(conns, &ids, n, CLIENTS, &format!("{side}s")).await?);
            Ok::<_, BenchError>((ceiling, one, many))
        }
        .await;
        hot.drop_keys(conns).await?;
        for p in spread {
            p.drop_keys(conns).await?;
        }
        let (ceiling, one, many) = measured?;
        if let Some(ceiling) = ceiling {
            figures.push(Figure::new(
                &format!("{side}: redis-benchmark EVALSHA reserve, one product, -c {CLIENTS}"),
                ceiling,
                "req/s",
            ));
        }
        figures.push(Figure::new(&format!("{side}: our client, one hot product"), one, "req/s"));
        figures.push(Figure::new(&format!("{side}: our client, {SPREAD} products"), many, "req/s"));
    }
    ratios.push(Figure::new(
        "cluster / one server: our client, one hot product",
        pick(&figures, "cluster", "one hot product") / pick(&figures, "one server", "one hot product"),
        "",
    ));
    ratios.push(Figure::new(
        &format!("cluster / one server: our client, {SPREAD} products"),
        pick(&figures, "cluster", "products") / pick(&figures, "one server", "products"),
        "",
    ));

    // One exact reading of 5,000 products on each side (what the sampler does every second).
    for (side, conns) in [("one server", single), ("cluster", on_cluster)] {
        progress(&format!("readings of {READ_PRODUCTS} products on the {side}"));
        let (full, light) = readings(conns).await?;
        figures.push(Figure::new(
            &format!("{side}: exact reading of {READ_PRODUCTS} products, ledger sums (median of 5)"),
            full,
            "ms",
        ));
        figures.push(Figure::new(
            &format!("{side}: exact reading of {READ_PRODUCTS} products, sampler tick (median of 5)"),
            light,
            "ms",
        ));
    }
    ratios.push(Figure::new(
        &format!("cluster / one server: sampler tick over {READ_PRODUCTS} products"),
        pick(&figures, "cluster", "sampler tick") / pick(&figures, "one server", "sampler tick"),
        "",
    ));

    // Engines through HTTP, each selling its own products.
    let one_server = engines(single, engine_exe, 1, plan.http_orders, progress).await?;
    let one_cluster = engines(on_cluster, engine_exe, 1, plan.http_orders, progress).await?;
    let three_cluster = engines(on_cluster, engine_exe, 3, plan.http_orders, progress).await?;
    // Vouching's price on the cluster: the engine above vouches (the default, which finds the
    // replicas); the same engine with the opt-out beside it.
    let off_cluster =
        engines_with(on_cluster, engine_exe, 1, plan.http_orders, &["--replica-acks", "0"], None, progress).await?;
    // And with one replica stalled (SIGSTOP once the engine has decided to vouch): the orders
    // on its master are written through, each within about one timeout; fewer of them, as in
    // `bench engine`.
    let stalled_orders = (plan.http_orders / 20).max(SPREAD as u64 * 5);
    let stalled = engines_with(on_cluster, engine_exe, 1, stalled_orders, &[], Some(started), progress).await?;
    figures.push(Figure::new("one server, one engine: accepted orders/s", one_server.0, "orders/s"));
    figures.push(Figure::new("one server, one engine: p99", one_server.1, "ms"));
    figures.push(Figure::new("cluster, one engine: accepted orders/s", one_cluster.0, "orders/s"));
    figures.push(Figure::new("cluster, one engine: p99", one_cluster.1, "ms"));
    figures.push(Figure::new("cluster, three engines: accepted orders/s (sum)", three_cluster.0, "orders/s"));
    figures.push(Figure::new("cluster, three engines: p99 (worst engine)", three_cluster.1, "ms"));
    ratios.push(Figure::new("cluster / one server, one engine", one_cluster.0 / one_server.0, ""));
    ratios.push(Figure::new("cluster: three engines / one engine", three_cluster.0 / one_cluster.0, ""));
    figures.push(Figure::new(
        "cluster, one engine, vouching off (--replica-acks 0): accepted orders/s",
        off_cluster.0,
        "orders/s",
    ));
    figures.push(Figure::new("cluster, one engine, vouching off (--replica-acks 0): p99", off_cluster.1, "ms"));
    ratios.push(Figure::new(
        "cluster, one engine: vouching on (default) / off, accepted orders/s",
        one_cluster.0 / off_cluster.0,
        "",
    ));
    ratios.push(Figure::new(
        "cluster, one engine: vouching on (default) / off, p99",
        one_cluster.1 / off_cluster.1,
        "",
    ));
    figures.push(Figure::new(
        "cluster, one engine, vouching on, one replica stalled (SIGSTOP): accepted orders/s",
        stalled.0,
        "orders/s",
    ));
    figures.push(Figure::new("cluster, one engine, vouching on, one replica stalled (SIGSTOP): p99", stalled.1, "ms"));
    ratios.push(Figure::new(
        "cluster, one engine: one replica stalled / vouching off, accepted orders/s",
        stalled.0 / off_cluster.0,
        "",
    ));
    let timeout_ms = crate::engine::state::EngineConfig::default().replica_ack_timeout.as_secs_f64() * 1000.0;
    ratios.push(Figure::new(
        &format!("cluster, one engine, one replica stalled: p99 / the {timeout_ms:.0} ms acknowledgement timeout"),
        stalled.1 / timeout_ms,
        "",
    ));

    Ok(BenchReport {
        bench: "cluster".into(),
        figures,
        ratios,
        notes: vec![
            format!(
                "reserve: {n} requests per figure, {CLIENTS} concurrent; {SPREAD} products spread over the hash slots"
            ),
            format!(
                "HTTP: {} orders per engine setup, spread over {SPREAD} products; engines, load generator, MySQL and \
                 every Redis process share this machine's cores",
                plan.http_orders
            ),
            "the cluster is three masters with a replica each, on loopback; a production cluster spreads its masters \
             over machines"
                .into(),
            format!(
                "engines on the cluster run with the default --replica-acks auto, which finds the replicas and \
                 vouches for every reservation (a group read of the replicas, or one WAIT, per master); the \
                 vouching-off figures run the same engine with --replica-acks 0; the stalled-replica figures stop \
                 one replica (SIGSTOP) once the engine has decided to vouch, so the orders of the products on its \
                 master meet reads that run out, and send \
                 {stalled_orders} orders"
            ),
            "no redis-benchmark ceiling on the cluster: with --cluster it replaces `{tag}` in keys with hash tags of \
             its own, so it cannot aim at one product's keys"
                .into(),
        ],
    })
}

/// The figure of `side` whose name holds `what`.
fn pick(figures: &[Figure], side: &str, what: &str) -> f64 {
    figures.iter().find(|f| f.name.starts_with(side) && f.name.contains(what)).map_or(f64::NAN, |f| f.value)
}

/// Products of the readings' figures.
const READ_PRODUCTS: u64 = 5_000;

/// Five full readings of [`READ_PRODUCTS`] products and five light ones (the sampler's ticks
/// between ledger passes), interleaved: their medians, in ms.
async fn readings(conns: &Connections) -> Result<(f64, f64), BenchError> {
    use stockguard_core::recon::reading::{read_products_timed, LedgerGaps};
    let first = 9_500_000_000 + u64::from(rand::random::<u16>()) * 10_000;
    let ids: Vec<u64> = (first..first + READ_PRODUCTS).collect();
    for chunk in ids.chunks(1_000) {
        let rows = chunk.iter().map(|id| format!("({id}, 'bench reading', 100, 100, 1)")).collect::<Vec<_>>().join(",");
        sqlx::query(&format!(
            "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) VALUES {rows}"
        ))
        .execute(&conns.mysql)
        .await?;
    }
    stockguard_core::redis_link::per_product(&conns.redis, &ids, |pipe, id| {
        pipe.set(conns.keys.stock(id), 100);
    })
    .await?;
    let mut redis = conns.redis.clone();
    let (mut full, mut light) = (Vec::new(), Vec::new());
    let ms = |t: stockguard_core::recon::reading::ReadTimings| t.db_ms + t.redis_ms;
    let failed = |e: stockguard_core::recon::ReconError| BenchError::Engine(e.to_string());
    for _ in 0..5 {
        let (read, t) = read_products_timed(&conns.mysql, &mut redis, &conns.keys, &ids, None).await.map_err(failed)?;
        full.push(ms(t));
        let gaps = LedgerGaps::from_readings(&read);
        let (_, t) =
            read_products_timed(&conns.mysql, &mut redis, &conns.keys, &ids, Some(&gaps)).await.map_err(failed)?;
        light.push(ms(t));
    }
    stockguard_core::redis_link::per_product(&conns.redis, &ids, |pipe, id| {
        pipe.del(conns.keys.stock(id));
    })
    .await?;
    sqlx::query("DELETE FROM inventory WHERE product_id BETWEEN ? AND ?")
        .bind(first)
        .bind(first + READ_PRODUCTS)
        .execute(&conns.mysql)
        .await?;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok((median(full), median(light)))
}

/// `count` engines in their own processes, each sold `orders / count` buyers over its own
/// products at full speed: the accepted orders/s summed and the worst p99.
async fn engines(
    conns: &Connections,
    exe: &Path,
    count: usize,
    orders: u64,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(f64, f64), BenchError> {
    engines_with(conns, exe, count, orders, &[], None, progress).await
}

/// [`engines`] served with more `engine serve` flags.
async fn engines_with(
    conns: &Connections,
    exe: &Path,
    count: usize,
    orders: u64,
    flags: &[&str],
    stall: Option<&cluster::Cluster>,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(f64, f64), BenchError> {
    progress(&format!(
        "{count} engine(s) through HTTP on {}{}",
        if conns.redis.is_cluster() { "the cluster" } else { "one server" },
        if flags.is_empty() { String::new() } else { format!(" ({})", flags.join(" ")) }
    ));
    let mut products = Vec::new();
    for _ in 0..SPREAD {
        products.push(BenchProduct::create(conns, orders as i64, 1_000).await?);
    }
    let ids: Vec<u64> = products.iter().map(|p| p.id).collect();
    let mut running = Vec::new();
    for _ in 0..count {
        running.push(EngineProcess::start_with(exe, conns, flags).await?);
    }
    // The replica stalls once each engine has decided to vouch (its `/health` says so).
    let stalled = match stall {
        Some(cluster) => {
            for engine in &running {
                let (guarantee, _, _) = super::vouching::engine_says(&engine.url).await;
                if guarantee != "replica" {
                    return Err(BenchError::Engine(format!("the engine says `{guarantee}`: it does not vouch")));
                }
            }
            progress("one replica stalled (SIGSTOP)");
            Some(cluster::stall_a_replica(cluster).await.map_err(|e| BenchError::Engine(e.to_string()))?)
        }
        None => None,
    };
    let per_engine = ids.len() / count;
    let loads = running.iter().enumerate().map(|(i, engine)| {
        let cfg = LoadConfig {
            target: engine.url.clone(),
            products: ids[i * per_engine..(i + 1) * per_engine].to_vec(),
            buyers: orders / count as u64 / per_engine as u64,
            rate: 1_000_000,
            duration: Duration::from_secs(300),
            concurrency: CLIENTS as usize,
            drain_timeout: Duration::from_secs(120),
        };
        let pool = conns.mysql.clone();
        async move { load::run(&pool, &cfg, &|_, _| {}).await }
    });
    let reports = futures_util::future::join_all(loads).await;
    let mut written_through = 0;
    for engine in &running {
        written_through += super::vouching::engine_says(&engine.url).await.1;
    }
    for engine in running {
        engine.stop().await;
    }
    if let (Some(cluster), Some(node)) = (stall, stalled) {
        cluster::resume_replica(cluster, node)
            .await
            .map_err(|e| BenchError::Engine(format!("the stalled replica did not catch up: {e}")))?;
        if written_through == 0 {
            return Err(BenchError::Engine("no order was written through: the replica did not stall".into()));
        }
    }
    for p in products {
        p.drop_keys(conns).await?;
    }
    let mut accepted = 0.0;
    let mut p99: f64 = 0.0;
    for report in reports {
        let report = report?;
        if !report.holds() {
            return Err(BenchError::Engine(format!("an HTTP run did not hold:\n{}", report.to_text())));
        }
        accepted += report.accepted_per_sec;
        p99 = p99.max(report.latency_p99_ms);
    }
    Ok((accepted, p99))
}
