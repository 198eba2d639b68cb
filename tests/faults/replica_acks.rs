//! Accepted orders outlive a failover to a lagging replica (the `redis-failover-loss` drill
//! lost 6 before this): with replica acknowledgements, an engine answers "accepted" only once
//! the replica has the reservation (`WAIT`) or the engine has written the order to the DB
//! itself. Real servers: a master and a replica of the test's own, the replica stopped with
//! SIGSTOP or cut off and promoted, the master killed.

use crate::sale;
use crate::support;

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_core::rewrite::{self, RewriteRequest};
use stockguard_engine::engine::replicas::ReplicaGate;
use stockguard_engine::engine::reserve::ReserveOutcome;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::engine::vouched::reserve_vouched;
use support::redis_server::RedisServer;

const P: u64 = 9;

/// An engine on `master` that waits for one replica, 50 ms at most.
fn engine(pool: &MySqlPool, conns: &Connections, master: &RedisServer) -> EngineState {
    let gate = ReplicaGate::start(&master.url(), 1, Duration::from_millis(50)).unwrap();
    let config = EngineConfig { payment_timeout: Duration::from_secs(600), ..EngineConfig::default() };
    EngineState::with_replicas(pool.clone(), conns.redis.clone(), conns.keys.clone(), config, Some(gate))
}

/// Buyers `users` each ask for one unit: the order numbers they were told were accepted.
async fn buy(state: &EngineState, users: std::ops::Range<u64>) -> Vec<String> {
    let reserver = state.reserver().await.unwrap();
    let mut accepted = Vec::new();
    for user in users {
        let req = sale::one_unit(user, P, 1);
        match reserve_vouched(state, state.replicas().unwrap(), reserver, &req).await.unwrap() {
            ReserveOutcome::Reserved { order_no } => accepted.push(order_no),
            ReserveOutcome::SoldOut => {}
            other => panic!("unexpected answer for user {user}: {other:?}"),
        }
    }
    accepted
}

async fn order_rows(pool: &MySqlPool) -> Vec<String> {
    sqlx::query_scalar("SELECT order_no FROM orders ORDER BY order_no").fetch_all(pool).await.unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn orders_accepted_while_the_replica_lagged_survive_the_master_dying(pool: MySqlPool) {
    let mut master = RedisServer::start().await;
    let mut replica = RedisServer::replica_of(&master).await;
    let on_master = support::connections_to(&pool, &master.url(), "racks1").await;
    sale::open_sale(&on_master, P, 100, 1).await;
    let state = engine(&pool, &on_master, &master);

    // The replica answers: its acknowledgement vouches for the orders, none is written
    // through (nothing is in the DB before a consumer runs).
    let mut accepted = buy(&state, 1..11).await;
    assert_eq!(accepted.len(), 10);
    assert!(order_rows(&pool).await.is_empty(), "vouched by the replica, not written to the DB");

    // The replica stalls (SIGSTOP): no acknowledgement within 50 ms, so each order is in
    // the DB before its buyer is told. The history is whole, so the DB has a unit for every
    // reservation: nothing else is written ahead of them.
    replica.pause();
    let stalled = buy(&state, 11..21).await;
    assert_eq!(stalled.len(), 10);
    let mut written = stalled.clone();
    written.sort();
    assert_eq!(order_rows(&pool).await, written, "written through before the answer");
    replica.resume();
    accepted.extend(stalled);

    // The replica is cut off and promoted (what a failover does to a lagging one); the old
    // master sells ten more, none of which the replica will ever have, and dies.
    replica.promote().await;
    accepted.extend(buy(&state, 21..31).await);
    assert_eq!(accepted.len(), 30);
    master.kill();
    let settings = ConnectionSettings::from_urls(
        EnvironmentKind::Sandbox,
        &support::mysql_url_of(&pool).await,
        &replica.url(),
        on_master.keys.prefix(),
    );
    let on_replica = Connections::open(settings).await.unwrap();
    sale::persist_all(&on_replica, P).await;

    // Every accepted order is an order, exactly once; nothing failed, nothing oversold.
    accepted.sort();
    assert_eq!(order_rows(&pool).await, accepted);
    let failed: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM order_failures").fetch_one(&pool).await.unwrap();
    assert_eq!(failed, 0);
    assert_eq!(sale::db_stock(&pool, P).await, 70);

    // The promoted replica lacks the last ten deductions: never read as OK, and the fenced
    // rewrite sets what the DB says.
    let mut r = on_replica.redis.clone();
    let before = read_products(&pool, &mut r, &on_replica.keys, &[P]).await.unwrap().remove(0);
    assert_ne!(before.status, DriftStatus::Ok, "{before:?}");
    assert_eq!(before.redis_stock, Some(80), "the replica's stock, ten deductions behind");
    rewrite::rewrite(&on_replica, &RewriteRequest::new(P, "failover to a lagging replica")).await.unwrap();
    let after = read_products(&pool, &mut r, &on_replica.keys, &[P]).await.unwrap().remove(0);
    assert_eq!((after.status, after.redis_stock), (DriftStatus::Ok, Some(70)));
}

#[sqlx::test(migrations = "./migrations")]
async fn an_order_the_db_refused_while_the_replica_lagged_never_becomes_an_order_later(pool: MySqlPool) {
    let master = RedisServer::start().await;
    let replica = RedisServer::replica_of(&master).await;
    let conns = support::connections_to(&pool, &master.url(), "racks2").await;
    sale::open_sale(&conns, P, 2, 1).await;
    let state = engine(&pool, &conns, &master);
    assert_eq!(buy(&state, 1..3).await.len(), 2);
    sale::persist_all(&conns, P).await;

    // Redis is one unit high (the DB has none left): the next buyer reserves in Redis, the
    // replica does not answer, and the DB refuses the write: the buyer is told sold out.
    let mut r = conns.redis.clone();
    let _: i64 = redis::cmd("INCRBY").arg(conns.keys.stock(P)).arg(1).query_async(&mut r).await.unwrap();
    replica.pause();
    assert!(buy(&state, 3..4).await.is_empty(), "refused by the DB, so not accepted");
    replica.resume();

    // A unit comes back to the DB (an order cancelled), then the consumer reaches the
    // refused reservation's message: it must stay failed, not take the freed unit.
    sqlx::query("UPDATE orders SET status = 'CANCELLED' WHERE user_id = 1").execute(&pool).await.unwrap();
    sqlx::query("UPDATE inventory SET stock = stock + 1 WHERE product_id = ?").bind(P).execute(&pool).await.unwrap();
    sale::persist_all(&conns, P).await;
    let buyer_3: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE user_id = 3").fetch_one(&pool).await.unwrap();
    assert_eq!(buyer_3, 0, "told sold out, so no order");
    let failed: Vec<String> =
        sqlx::query_scalar("SELECT reason FROM order_failures WHERE user_id = 3").fetch_all(&pool).await.unwrap();
    assert_eq!(failed, vec!["DB_REFUSED_STOCK".to_string()]);
    assert_eq!(sale::db_stock(&pool, P).await, 1, "the freed unit is still there");
}

#[sqlx::test(migrations = "./migrations")]
async fn orders_a_stalled_replica_did_not_vouch_for_are_written_through_in_batches_not_one_by_one(pool: MySqlPool) {
    const BUYERS: u64 = 200;
    let master = RedisServer::start().await;
    let replica = RedisServer::replica_of(&master).await;
    let conns = support::connections_to(&pool, &master.url(), "racks3").await;
    sale::open_sale(&conns, P, 1_000, 1).await;
    let (url, stop, handle) = sale::spawn_engine(engine(&pool, &conns, &master)).await;

    // The replica stalls: every WAIT runs out its 50 ms, and every order it covered has to be
    // in the DB before its buyer is told. Two hundred buyers ask at once.
    replica.pause();
    let http = reqwest::Client::new();
    let mut asks = tokio::task::JoinSet::new();
    for user in 1..=BUYERS {
        let (http, url) = (http.clone(), format!("{url}/orders"));
        asks.spawn(async move {
            let body =
                serde_json::json!({"user_id": user, "product_id": P, "qty": 1, "idempotency_key": format!("k{user}")});
            let answer = http.post(url).json(&body).send().await.unwrap();
            let status = answer.status();
            let body: serde_json::Value = answer.json().await.unwrap_or_default();
            assert_eq!(status, reqwest::StatusCode::ACCEPTED, "buyer {user}: {body}");
            body["order_no"].as_str().unwrap().to_string()
        });
    }
    let mut accepted = asks.join_all().await;
    accepted.sort();

    // Every accepted order is a row, exactly once, and nothing is oversold.
    assert_eq!(order_rows(&pool).await, accepted, "written through before the answer");
    assert_eq!(sale::db_stock(&pool, P).await, 1_000 - BUYERS as i64);

    // They were written in a few batches, one after each WAIT or so, not one transaction per
    // order in turn on the hot row: after its failed WAIT, an order waits at most two batches.
    let health: serde_json::Value = reqwest::get(format!("{url}/health")).await.unwrap().json().await.unwrap();
    assert_eq!(health["accepted_guarantee"], "db_write_through", "{health}");
    let (orders, batches) =
        (health["write_through"]["orders"].as_u64().unwrap(), health["write_through"]["batches"].as_u64().unwrap());
    assert_eq!(orders, BUYERS, "every order was written through: {health}");
    println!("{orders} orders written through in {batches} batches");
    assert!(batches * 5 <= orders, "{orders} orders in {batches} batches: not batched");
    replica.resume();
    let _ = stop.send(());
    let _ = handle.await;
}

#[sqlx::test(migrations = "./migrations")]
async fn an_order_vouched_for_is_on_the_replica_when_its_buyer_is_told_even_once_the_master_forgot_the_script(
    pool: MySqlPool,
) {
    let master = RedisServer::start().await;
    let replica = RedisServer::replica_of(&master).await;
    let conns = support::connections_to(&pool, &master.url(), "racks4").await;
    sale::open_sale(&conns, P, 100, 1).await;
    let state = engine(&pool, &conns, &master);
    let (mut on_master, mut on_replica) = (master.conn().await, replica.conn().await);

    for user in 1..=20u64 {
        // Halfway, the master forgets the script (a restart, a SCRIPT FLUSH): the call is
        // refused (NOSCRIPT, nothing ran), the script is loaded again on the gate's link and
        // the reservation made there, and the group WAIT on that link vouches for it.
        if user == 11 {
            let _: () = redis::cmd("SCRIPT").arg("FLUSH").query_async(&mut on_master).await.unwrap();
        }
        assert_eq!(buy(&state, user..user + 1).await.len(), 1, "buyer {user} accepted");
        let on_the_replica: i64 =
            redis::cmd("GET").arg(conns.keys.stock(P)).query_async(&mut on_replica).await.unwrap();
        assert_eq!(on_the_replica, 100 - user as i64, "the replica holds buyer {user}'s unit when they are told");
    }
    assert!(order_rows(&pool).await.is_empty(), "every order vouched for by the replica, none written through");
    assert_eq!(state.replicas().unwrap().guarantee(), stockguard_core::guarantee::Guarantee::Replica);
}
