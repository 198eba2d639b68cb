//! Vouching by reading a reservation back from the replica (`engine/replicas/readback.rs`):
//! a replica vouches for a reservation only while it holds the order's idempotency entry
//! naming that very order, and only while it is a replica following its master. Real
//! servers: a master and a replica of the test's own; the replica stopped (SIGSTOP) or
//! promoted.

use crate::sale;
use crate::support;

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_engine::engine::replicas::readback::{Proof, Readers};
use stockguard_engine::engine::replicas::ReplicaGate;
use stockguard_engine::engine::reserve::ReserveOutcome;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::engine::vouched::reserve_vouched;
use support::redis_server::RedisServer;
use support::waits::wait_for;
use tokio::time::Instant;

const P: u64 = 14;
const TIMEOUT: Duration = Duration::from_millis(50);

fn proof(order_no: &str) -> Proof {
    Proof { key: "rb:{14}:idem".into(), field: "7:key-1".into(), order_no: order_no.into() }
}

async fn readers_of(master: &RedisServer) -> Readers {
    let info = redis::IntoConnectionInfo::into_connection_info(master.url()).unwrap();
    Readers::connect(&mut master.conn().await, &info, 1).await.expect("the replica is reached")
}

async fn write_entry(master: &RedisServer, order_no: &str) {
    let p = proof(order_no);
    let _: () =
        redis::cmd("HSET").arg(&p.key).arg(&p.field).arg(order_no).query_async(&mut master.conn().await).await.unwrap();
}

/// How many times the server behind `conn` ran `command` (`INFO commandstats`).
pub(crate) async fn calls(conn: &mut redis::aio::MultiplexedConnection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(conn).await.unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// Buyer `user` asks for one unit through the gate; their order is on the replica when they
/// are told.
async fn buy_one(state: &EngineState, on_replica: &mut redis::aio::MultiplexedConnection, user: u64) {
    let reserver = state.reserver().await.unwrap();
    let req = sale::one_unit(user, P, 1);
    let answer = reserve_vouched(state, state.replicas().unwrap(), reserver, &req).await.unwrap();
    let ReserveOutcome::Reserved { order_no } = answer else { panic!("buyer {user}: {answer:?}") };
    let held: Option<String> = redis::cmd("HGET")
        .arg(state.keys.idempotency(P))
        .arg(req.idempotency_field())
        .query_async(on_replica)
        .await
        .unwrap();
    assert_eq!(held.as_deref(), Some(order_no.as_str()), "buyer {user}'s order is on the replica when they are told");
}

#[tokio::test]
async fn a_replica_vouches_for_a_reservation_once_it_holds_the_entry_naming_that_order_and_not_before() {
    let master = RedisServer::start().await;
    let _replica = RedisServer::replica_of(&master).await;
    let readers = readers_of(&master).await;

    let (vouched, failed) = readers.read_back(&[&proof("A-1")], 1, Instant::now() + TIMEOUT).await;
    assert_eq!((vouched, failed), (vec![false], false), "nothing written: nothing vouched for, and no failure");

    write_entry(&master, "A-1").await;
    let (vouched, failed) = readers.read_back(&[&proof("A-1"), &proof("B-2")], 1, Instant::now() + TIMEOUT).await;
    assert_eq!(
        (vouched, failed),
        (vec![true, false], false),
        "the entry names A-1: the replica vouches for A-1, never for another order under the same key"
    );
}

#[tokio::test]
async fn a_stalled_replica_vouches_for_nothing_and_the_read_gives_up_at_the_timeout() {
    let master = RedisServer::start().await;
    let replica = RedisServer::replica_of(&master).await;
    let readers = readers_of(&master).await;
    replica.pause();
    write_entry(&master, "A-1").await;

    let started = Instant::now();
    let (vouched, failed) = readers.read_back(&[&proof("A-1")], 1, started + TIMEOUT).await;
    let took = started.elapsed();
    replica.resume();
    assert_eq!((vouched, failed), (vec![false], false), "a stalled replica vouches for nothing, and is not broken");
    assert!(took >= TIMEOUT, "the read waited out the timeout ({took:?})");
    assert!(took < TIMEOUT * 10, "and gave up then ({took:?})");
}

#[tokio::test]
async fn of_two_replicas_one_stalled_the_other_vouches_without_waiting_for_it() {
    let master = RedisServer::start().await;
    let stalled = RedisServer::replica_of(&master).await;
    let _healthy = RedisServer::replica_of(&master).await;
    let info = redis::IntoConnectionInfo::into_connection_info(master.url()).unwrap();
    let readers = Readers::connect(&mut master.conn().await, &info, 2).await.expect("both replicas are reached");
    stalled.pause();
    write_entry(&master, "A-1").await;

    let patience = Duration::from_secs(5);
    let started = Instant::now();
    let (vouched, failed) = readers.read_back(&[&proof("A-1")], 1, started + patience).await;
    let took = started.elapsed();
    stalled.resume();
    assert_eq!((vouched, failed), (vec![true], false), "one replica is all it needs, and the healthy one has it");
    assert!(took < patience / 2, "the stalled replica did not hold the read up ({took:?})");
}

#[tokio::test]
async fn a_replica_promoted_to_master_vouches_for_nothing_even_holding_the_entry() {
    let master = RedisServer::start().await;
    let mut replica = RedisServer::replica_of(&master).await;
    let readers = readers_of(&master).await;
    write_entry(&master, "A-1").await;
    master.wait_replicated(1).await;
    let (vouched, _) = readers.read_back(&[&proof("A-1")], 1, Instant::now() + TIMEOUT).await;
    assert_eq!(vouched, vec![true], "a replica with the entry vouches");

    // Promoted, it takes writes of its own (the sale's address may follow it): what it holds
    // is no longer a copy of the master's, and it says so.
    replica.promote().await;
    let (vouched, failed) = readers.read_back(&[&proof("A-1")], 1, Instant::now() + TIMEOUT).await;
    assert_eq!((vouched, failed), (vec![false], true), "a master vouches for nothing, and the readers are dropped");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_engine_reads_its_reservations_back_from_the_replica_and_each_is_there_when_its_buyer_is_told(
    pool: MySqlPool,
) {
    let master = RedisServer::start().await;
    let replica = RedisServer::replica_of(&master).await;
    let conns = support::connections_to(&pool, &master.url(), "rback1").await;
    sale::open_sale(&conns, P, 500, 1).await;
    let gate = ReplicaGate::start(&master.url(), 1, TIMEOUT).unwrap();
    let config = EngineConfig { payment_timeout: Duration::from_secs(600), ..EngineConfig::default() };
    let state = EngineState::with_replicas(pool.clone(), conns.redis.clone(), conns.keys.clone(), config, Some(gate));
    let mut on_replica = replica.conn().await;

    // The gate finds the replica in the background; meanwhile it vouches by `WAIT`.
    let mut user = 0u64;
    wait_for("the gate to read back from the replica", Duration::from_secs(10), async || {
        user += 1;
        buy_one(&state, &mut on_replica, user).await;
        calls(&mut replica.conn().await, "role").await > 0
    })
    .await;
    let waits_before = calls(&mut master.conn().await, "wait").await;
    for _ in 0..50 {
        user += 1;
        buy_one(&state, &mut on_replica, user).await;
    }
    assert_eq!(calls(&mut master.conn().await, "wait").await, waits_before, "reading back, the gate sends no WAIT");
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(&pool).await.unwrap();
    assert_eq!(rows, 0, "every order vouched for by the replica, none written through");
}
