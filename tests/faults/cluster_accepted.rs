//! The run of issue 30 on a Redis Cluster of the test's own (three masters, a replica each):
//! one engine with the settings `engine serve` gives it on a cluster (no replica flag), 2,000
//! buyers for 400 units of one product, and the master owning the product's slot killed
//! (SIGKILL) once a third of the units are sold, its replica lagging behind (stopped, its
//! link cut) so that the master's last writes are its alone. Every ACCEPTED answer is an
//! order row or a FAILED record, nothing is oversold, the sale sells on through the failover
//! and the reading is OK after the fenced repair; the buyers' error rate and the time to the
//! first accepted order after the kill are printed.

use crate::cluster_failover::{owners, role, signal, Nodes};
use crate::failover_sale::{
    assert_every_accepted_answer_kept, drop_the_replica, felt, first_accepted, redis_stock, sold_down_to, start_buyers,
    STOCK,
};
use crate::sale;
use crate::support;

use std::time::Duration;

use nix::sys::signal::Signal;
use sqlx::MySqlPool;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_core::redis_link::product_slot;
use stockguard_core::rewrite::{self, RewriteRequest};
use stockguard_engine::engine::breaker::{BreakerConfig, CLUSTER_FAILOVER_GRACE};
use stockguard_engine::engine::replicas::guarantee::Guarantee;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::sandbox::cluster;
use stockguard_engine::sandbox::state::StartedServer;

const P: u64 = 1;

#[sqlx::test(migrations = "./migrations")]
async fn with_default_flags_a_killed_master_loses_no_accepted_order_and_the_sale_sells_on(pool: MySqlPool) {
    let dir = tempfile::tempdir().unwrap();
    let nodes = Nodes(cluster::start(dir.path()).await.expect("the cluster starts"));
    let url = nodes.0.url();
    let conns = support::connections_to(&pool, &url, "cacc").await;
    sale::open_sale(&conns, P, STOCK, 1).await;
    let (master, replica) = owners(&nodes.0, product_slot(P)).await;

    // What `engine serve` sets on a cluster with no flags: a breaker that waits out a
    // failover; nothing about replicas.
    let config = EngineConfig {
        breaker: BreakerConfig { grace: CLUSTER_FAILOVER_GRACE, ..BreakerConfig::default() },
        per_user_rate: 0,
        ..EngineConfig::default()
    };
    let state = EngineState::new(pool.clone(), conns.redis.clone(), conns.keys.clone(), config);
    let (engine, stop, handle) = sale::spawn_engine(state.clone()).await;
    assert_eq!(state.vouching().await.guarantee(), Guarantee::Replica, "it found the replicas by itself");

    let load = start_buyers(&pool, &engine, P);

    // A third sold: the replica falls behind (stopped, its link dropped by the master), the
    // master sells ten more units that are its alone, and is killed; the replica goes on.
    sold_down_to(&conns, P, STOCK * 2 / 3).await;
    signal(&replica, Signal::SIGSTOP);
    drop_the_replica(&mut crate::cluster_failover::node_conn(&master).await).await;
    let cut_at = redis_stock(&conns, P).await.unwrap();
    sold_down_to(&conns, P, cut_at - 10).await;
    signal(&master, Signal::SIGKILL);
    signal(&replica, Signal::SIGCONT);
    let (first_after_kill, probe_order) = first_accepted(&engine, P).await;
    assert_eq!(role(&replica).await, "master", "the replica took over");

    let report = load.await.unwrap();
    assert_every_accepted_answer_kept(&pool, &report, &probe_order).await;
    let _ = stop.send(());
    let _ = handle.await;

    // The promoted replica lacks the master's last deductions: the fenced rewrite sets what
    // the DB says, once the console's link has re-read the topology.
    sale::persist_all(&conns, P).await;
    let mut attempts = 0;
    while rewrite::rewrite(&conns, &RewriteRequest::new(P, "cluster failover")).await.is_err() {
        attempts += 1;
        assert!(attempts < 40, "the rewrite did not get through within 40 attempts");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut r = conns.redis.clone();
    let reading = read_products(&conns.mysql, &mut r, &conns.keys, &[P]).await.unwrap().remove(0);
    assert_eq!((reading.status, reading.drift), (DriftStatus::Ok, Some(0)), "{reading:?}");
    let oversold: i64 = support::scalar(&pool, "SELECT COUNT(*) FROM inventory WHERE stock < 0").await;
    assert_eq!(oversold, 0);

    eprintln!("cluster, default flags: {}", felt(&report, first_after_kill));
}

/// `buyers` ask at once for one unit of `product` through the engine's gate: how long until
/// the last was answered, and the order numbers accepted.
async fn all_at_once(state: &EngineState, product: u64, buyers: std::ops::Range<u64>) -> (Duration, Vec<String>) {
    use stockguard_engine::engine::vouched::reserve_vouched;
    use stockguard_engine::engine::ReserveOutcome;
    let since = tokio::time::Instant::now();
    let mut asks = tokio::task::JoinSet::new();
    for user in buyers {
        let state = state.clone();
        asks.spawn(async move {
            let reserver = state.reserver().await.unwrap();
            let gate = state.vouching().await.gate().expect("the engine vouches");
            match reserve_vouched(&state, gate, reserver, &sale::one_unit(user, product, 1)).await.unwrap() {
                ReserveOutcome::Reserved { order_no } => order_no,
                other => panic!("buyer {user}: {other:?}"),
            }
        });
    }
    let accepted = asks.join_all().await;
    (since.elapsed(), accepted)
}

/// How many `HGET`s `replica` answered: the gate's reads back (a replica runs no other; the
/// master's writes reach it as writes).
async fn replica_reads(replica: &StartedServer) -> u64 {
    crate::replica_readback::calls(&mut crate::cluster_failover::node_conn(replica).await, "hget").await
}

#[sqlx::test(migrations = "./migrations")]
async fn a_stalled_replica_costs_its_masters_orders_one_timeout_together_and_other_masters_nothing(pool: MySqlPool) {
    let dir = tempfile::tempdir().unwrap();
    let nodes = Nodes(cluster::start(dir.path()).await.expect("the cluster starts"));
    let conns = support::connections_to(&pool, &nodes.0.url(), "cgrp").await;
    // Two products on two masters; the replica of the first one's master stalls.
    let (stalled_master, stalled) = owners(&nodes.0, product_slot(1)).await;
    let mut other = 2;
    while owners(&nodes.0, product_slot(other)).await.0.port == stalled_master.port {
        other += 1;
    }
    for p in [1, other] {
        sale::open_sale(&conns, p, 1_000, 1).await;
    }
    let state = EngineState::new(pool.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    assert_eq!(state.vouching().await.guarantee(), Guarantee::Replica);
    let rows = |order_nos: &Vec<String>| {
        let list = order_nos.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(",");
        format!("SELECT COUNT(*) FROM orders WHERE order_no IN ({list})")
    };
    // Warm: the gate's connection to each master is open, it reads its reservations back from
    // each master's replica (it finds them in the background: `engine/replicas/readback.rs`),
    // and each replica keeps up (a fresh cluster's replica can miss the timeout at first, and a
    // master whose last round ran out sends its next groups as a lagging one's): a warm-up
    // order is vouched for by its replica, not written through.
    let mut warm_up = 1_000..;
    for p in [1, other] {
        let (_, replica) = owners(&nodes.0, product_slot(p)).await;
        support::waits::wait_for(
            "a replica read back vouches for a warm-up order",
            Duration::from_secs(30),
            async || {
                let user = warm_up.next().unwrap();
                let (_, accepted) = all_at_once(&state, p, user..user + 1).await;
                support::scalar(&pool, &rows(&accepted)).await == 0 && replica_reads(&replica).await > 0
            },
        )
        .await;
    }
    signal(&stalled, Signal::SIGSTOP);

    let timeout = EngineConfig::default().replica_ack_timeout;
    let (on_stalled, on_other) = tokio::join!(all_at_once(&state, 1, 100..140), all_at_once(&state, other, 100..140));
    signal(&stalled, Signal::SIGCONT);

    // Forty orders, one 50 ms timeout after another, would take two seconds: grouped, they
    // take a few timeouts, and each is in the DB before its answer.
    let (took, written) = on_stalled;
    eprintln!("40 orders on the stalled replica's master answered in {took:?}; the other master's in {:?}", on_other.0);
    assert!(took < timeout * 40 / 2, "40 orders on the stalled master took {took:?}: not grouped");
    assert_eq!(support::scalar(&pool, &rows(&written)).await, 40, "written through before the answers");
    // The other master's replica vouched for its orders: none waited out a timeout and was
    // written through.
    assert_eq!(
        support::scalar(&pool, &rows(&on_other.1)).await,
        0,
        "the other master's orders were vouched by its replica"
    );
}
