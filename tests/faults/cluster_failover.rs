//! Redis Cluster: a master killed mid-sale. A cluster of the test's own (three masters with a
//! replica each, started the way `sandbox up --redis-cluster` starts one), two engines
//! selling twelve products at about 2,000 requests a second, the replica of one master left
//! behind (its replication link cut, the replica stopped before it reconnects), then that
//! master killed and the replica let go on.
//! The cluster promotes the replica; the engines follow the new topology and keep selling
//! through Redis; the deductions the replica never had come back as drift, which two readings
//! confirm and the fenced rewrite repairs; the sale ends exact.

use crate::sale;
use crate::support;

use std::time::Duration;

use nix::sys::signal::Signal;
use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_core::redis_link::product_slot;
use stockguard_core::rewrite::{self, Outcome, RewriteRequest};
use stockguard_core::switch::Mode;
use stockguard_engine::engine::breaker::{BreakerConfig, CLUSTER_FAILOVER_GRACE};
use stockguard_engine::engine::replicas::ReplicaGate;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::load::{self, LoadConfig};
use stockguard_engine::sandbox::cluster::{self, Cluster};
use stockguard_engine::sandbox::state::StartedServer;

const STOCK: i64 = 5_000;
/// Each engine sells six products.
const PRODUCTS: [[u64; 6]; 2] = [[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]];

pub(crate) fn signal(node: &StartedServer, signal: Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(node.pid as i32), signal).unwrap();
}

/// Kills every node when the test ends, however it ends.
pub(crate) struct Nodes(pub(crate) Cluster);

impl Drop for Nodes {
    fn drop(&mut self) {
        for node in &self.0.nodes {
            let _ =
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(node.pid as i32), nix::sys::signal::Signal::SIGKILL);
        }
    }
}

pub(crate) async fn node_conn(node: &StartedServer) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(format!("redis://127.0.0.1:{}/", node.port)).unwrap();
    client.get_multiplexed_async_connection().await.unwrap()
}

/// The master serving `slot` and its replica, read from the cluster's own node table.
pub(crate) async fn owners(cluster: &Cluster, slot: u16) -> (StartedServer, StartedServer) {
    let table: String =
        redis::cmd("CLUSTER").arg("NODES").query_async(&mut node_conn(&cluster.nodes[0]).await).await.unwrap();
    let rows: Vec<Vec<&str>> = table.lines().map(|l| l.split(' ').collect()).collect();
    let serves = |row: &Vec<&str>| {
        row.iter().skip(8).any(|range| {
            let (from, to) = range.split_once('-').unwrap_or((range, range));
            from.parse::<u16>().is_ok_and(|f| f <= slot) && to.parse::<u16>().is_ok_and(|t| slot <= t)
        })
    };
    let master = rows.iter().find(|r| r[2].contains("master") && serves(r)).expect("a master serves every slot");
    let replica = rows.iter().find(|r| r[3] == master[0]).expect("every master has a replica");
    let node = |row: &Vec<&str>| {
        let port: u16 = row[1].split(['@', ':']).nth(1).unwrap().parse().unwrap();
        cluster.nodes.iter().find(|n| n.port == port).unwrap().clone()
    };
    (node(master), node(replica))
}

pub(crate) async fn role(node: &StartedServer) -> String {
    let info: String =
        redis::cmd("INFO").arg("replication").query_async(&mut node_conn(node).await).await.unwrap_or_default();
    info.lines().find_map(|l| l.strip_prefix("role:")).unwrap_or("").trim().to_string()
}

/// An engine on the cluster: accepted only once a replica (or the DB) has the reservation,
/// and a breaker that lets the cluster fail a master over before it gives up on Redis.
fn engine(pool: &MySqlPool, conns: &Connections, url: &str) -> EngineState {
    let gate = ReplicaGate::start(url, 1, Duration::from_millis(50)).unwrap();
    let config = EngineConfig {
        payment_timeout: Duration::from_secs(600),
        breaker: BreakerConfig { grace: CLUSTER_FAILOVER_GRACE, ..BreakerConfig::default() },
        per_user_rate: 0,
        ..EngineConfig::default()
    };
    EngineState::with_replicas(pool.clone(), conns.redis.clone(), conns.keys.clone(), config, Some(gate))
}

async fn orders_of(pool: &MySqlPool, products: &[u64]) -> i64 {
    let ids = products.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    support::scalar(pool, &format!("SELECT COUNT(*) FROM orders WHERE product_id IN ({ids})")).await
}

#[sqlx::test(migrations = "./migrations")]
async fn a_master_killed_mid_sale_is_failed_over_and_the_sale_ends_exact(pool: MySqlPool) {
    let dir = tempfile::tempdir().unwrap();
    let nodes = Nodes(cluster::start(dir.path()).await.expect("the cluster starts"));
    let url = nodes.0.url();
    let conns = support::connections_to(&pool, &url, "cfail").await;
    assert!(conns.redis.is_cluster());
    let all: Vec<u64> = PRODUCTS.concat();
    for &p in &all {
        sale::open_sale(&conns, p, STOCK, 1).await;
    }
    // The victim: the master of product 1's slot. The products on it are the ones its
    // failover touches; the others must not notice.
    let (master, replica) = owners(&nodes.0, product_slot(1)).await;
    let mut on_victim = Vec::new();
    for &p in &all {
        if owners(&nodes.0, product_slot(p)).await.0.port == master.port {
            on_victim.push(p);
        }
    }

    let mut engines = Vec::new();
    let mut states = Vec::new();
    for _ in PRODUCTS {
        let state = engine(&pool, &conns, &url);
        states.push(state.clone());
        engines.push(sale::spawn_engine(state).await);
    }
    let mut loads = Vec::new();
    for ((engine_url, _, _), products) in engines.iter().zip(PRODUCTS) {
        let cfg = LoadConfig {
            target: engine_url.clone(),
            products: products.to_vec(),
            buyers: 3_000,
            rate: 1_000,
            duration: Duration::from_secs(12),
            concurrency: 64,
            drain_timeout: Duration::from_secs(60),
        };
        let pool = pool.clone();
        loads.push(tokio::spawn(async move { load::run(&pool, &cfg, &|_, _| {}).await.expect("the load runs") }));
    }

    // Two seconds of sales, then the replica falls behind: it is stopped (SIGSTOP) and its
    // master drops the replication link, so what the master writes from now on is the
    // master's alone. Half a second later the master dies and the replica goes on.
    tokio::time::sleep(Duration::from_secs(2)).await;
    signal(&replica, Signal::SIGSTOP);
    let dropped: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("replica")
        .query_async(&mut node_conn(&master).await)
        .await
        .unwrap();
    assert_eq!(dropped, 1, "the master had one replica to drop");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed_at = tokio::time::Instant::now();
    signal(&master, Signal::SIGKILL);
    signal(&replica, Signal::SIGCONT);

    // The cluster promotes the replica by itself.
    while role(&replica).await != "master" {
        assert!(killed_at.elapsed() < Duration::from_secs(30), "the replica was not promoted within 30 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let promoted_after = killed_at.elapsed();
    let victim_orders_at_promotion = orders_of(&pool, &on_victim).await;

    // What the promoted replica lacks shows as drift on the first two readings the console
    // gets once its link has re-read the topology: confirmed.
    let mut taken = 0;
    let mut attempts = 0;
    while taken < 2 {
        attempts += 1;
        assert!(attempts <= 20, "no two readings within 20 attempts");
        let mut r = conns.redis.clone();
        // An error: the link is still re-reading the topology.
        if let Ok(readings) = read_products(&conns.mysql, &mut r, &conns.keys, &on_victim).await {
            taken += 1;
            assert!(
                readings.iter().any(|r| r.drift != Some(0) || r.status == DriftStatus::HistoryLost),
                "reading {taken} after the promotion shows the lost deductions: {readings:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // Repaired by the fenced rewrite while the sale goes on. Once the promoted master has
    // passed the dead one's numbers only the DB tells the history forked: the rewrite goes by
    // it (a reset and a second pass), or a reading taken among the reissued numbers would
    // leave a few units REDIS_HIGH (once in five runs before it did).
    let mut outcomes = Vec::new();
    for &p in &on_victim {
        let result =
            rewrite::rewrite(&conns, &RewriteRequest::new(p, "cluster failover: drift confirmed")).await.unwrap();
        assert!(
            matches!(result.outcome, Outcome::Applied | Outcome::Rebuilt | Outcome::Noop),
            "product {p}: {:?}",
            result.outcome
        );
        outcomes.push((p, result.outcome, result.reading.map(|r| r.status)));
    }

    let mut reports = Vec::new();
    for load in loads {
        reports.push(load.await.unwrap());
    }
    let errors: u64 = reports.iter().map(|r| r.errors).sum();
    for (report, products) in reports.iter().zip(PRODUCTS) {
        let v = &report.verdict;
        assert_eq!(v.lost, 0, "no accepted order of {products:?} is lost: {report:?}");
        assert_eq!(v.oversold_units, 0, "{report:?}");
    }
    // An order nobody was told about can only be a request whose answer was an error (the
    // script ran on the dying master, or its answer was lost on the way back).
    let unannounced: u64 = reports.iter().map(|r| r.verdict.duplicated).sum();
    assert!(unannounced <= errors, "{unannounced} orders no answer announced, {errors} errors");

    // The engines kept selling through Redis: the victim's products took orders after the
    // promotion, no breaker tripped, nothing sold through the DB path.
    assert!(
        orders_of(&pool, &on_victim).await > victim_orders_at_promotion,
        "the failed-over products sell again after the promotion"
    );
    let db_path: i64 = support::scalar(&pool, "SELECT COUNT(*) FROM orders WHERE source = 'DB'").await;
    assert_eq!(db_path, 0, "no order went through the DB path");
    let scopes = stockguard_core::switch::store::scopes(&pool).await.unwrap();
    assert!(scopes.iter().all(|s| s.mode == Mode::Normal), "the shared switch never left NORMAL: {scopes:?}");
    for state in &states {
        assert!(!state.breaker.is_tripped(), "no breaker tripped");
    }

    // The sale ends exact: every product's reading is OK with drift 0, and the DB's stock
    // plus its live orders is the initial stock.
    let mut r = conns.redis.clone();
    for &p in &all {
        sale::persist_all(&conns, p).await;
    }
    let end = read_products(&conns.mysql, &mut r, &conns.keys, &all).await.unwrap();
    for reading in &end {
        assert_eq!(reading.drift, Some(0), "product {}: {reading:?}", reading.product_id);
        assert_eq!(reading.status, DriftStatus::Ok, "product {}", reading.product_id);
    }
    eprintln!(
        "cluster failover: promoted after {promoted_after:?}, drift confirmed after {attempts} reading attempts, \
         {} accepted, {errors} errors, {unannounced} unannounced orders, rewrites (product, outcome, status read): \
         {outcomes:?}",
        reports.iter().map(|r| r.accepted).sum::<u64>()
    );
    for (_, stop, handle) in engines {
        let _ = stop.send(());
        let _ = handle.await;
    }
}
