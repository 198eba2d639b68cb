//! "Accepted" survives a failover by default (issue 30): an engine started with no replica
//! setting finds the replica behind its one Redis server and answers "accepted" only once
//! the replica has the reservation or the engine has written the order to the DB. Real
//! servers: a master and a replica of the test's own; the replica stalls, is cut off and
//! promoted, the master is killed, and a second engine sells on from the promoted replica.

use crate::sale;
use crate::support;

use std::collections::HashMap;
use std::ops::Range;

use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::guarantee::Guarantee;
use stockguard_core::health::Health;
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};
use stockguard_engine::engine::replicas::guarantee::ReplicaAcks;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::redis_server::RedisServer;

const P: u64 = 11;

/// An engine serving over HTTP with the default configuration: its URL, and how to stop it.
struct Engine {
    url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    handle: tokio::task::JoinHandle<()>,
}

async fn engine_on(pool: &MySqlPool, conns: &Connections) -> Engine {
    let state = EngineState::new(pool.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default());
    let (url, stop, handle) = sale::spawn_engine(state).await;
    Engine { url, stop, handle }
}

impl Engine {
    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.handle.await;
    }

    /// What `/health` says an accepted answer survives.
    async fn guarantee(&self) -> String {
        let health: serde_json::Value =
            reqwest::get(format!("{}/health", self.url)).await.unwrap().json().await.unwrap();
        health["accepted_guarantee"].as_str().unwrap_or_default().to_string()
    }

    /// Buyers `users` each ask for one unit at once (idempotency key `k{user}`): the order
    /// number each was told was accepted.
    async fn buy(&self, users: Range<u64>) -> HashMap<u64, String> {
        let http = reqwest::Client::new();
        let mut asks = tokio::task::JoinSet::new();
        for user in users {
            let http = http.clone();
            let url = format!("{}/orders", self.url);
            asks.spawn(async move {
                let body = serde_json::json!({"user_id": user, "product_id": P, "qty": 1, "idempotency_key": format!("k{user}")});
                let answer = http.post(url).json(&body).send().await.unwrap();
                let status = answer.status();
                let body: serde_json::Value = answer.json().await.unwrap_or_default();
                assert_eq!(status, reqwest::StatusCode::ACCEPTED, "buyer {user}: {body}");
                (user, body["order_no"].as_str().unwrap().to_string())
            });
        }
        asks.join_all().await.into_iter().collect()
    }
}

/// Waits until the console's health strip (the core's probe, from the engines' heartbeats)
/// says the sale's accepted orders survive `want`, and returns that sample; fails with what it
/// said last.
async fn console_says(conns: &Connections, want: Guarantee) -> Health {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let health = stockguard_core::health::probe(conns, &[]).await.expect("the health strip reads");
        if health.accepted_guarantee == Some(want) {
            return health;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the console says {:?}, the engine {want}",
            health.accepted_guarantee
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn rows_among(pool: &MySqlPool, order_nos: impl Iterator<Item = &String>) -> i64 {
    let list = order_nos.map(|n| format!("'{n}'")).collect::<Vec<_>>().join(",");
    support::scalar(pool, &format!("SELECT COUNT(*) FROM orders WHERE order_no IN ({list})")).await
}

#[sqlx::test(migrations = "./migrations")]
async fn with_default_flags_every_accepted_order_outlives_the_master_failing_over_to_its_replica(pool: MySqlPool) {
    let mut master = RedisServer::start().await;
    let mut replica = RedisServer::replica_of(&master).await;
    let on_master = support::connections_to(&pool, &master.url(), "accdef").await;
    sale::open_sale(&on_master, P, 100, 1).await;
    let first = engine_on(&pool, &on_master).await;
    assert_eq!(first.guarantee().await, "replica", "the engine found the replica with no flag given");
    let health = console_says(&on_master, Guarantee::Replica).await;
    assert_eq!(health.engines_may_lose_accepted, 0);

    // The replica keeps up: twenty buyers, vouched for by it.
    let vouched = first.buy(1..21).await;

    // The replica stalls: each order is in the DB before its buyer is told.
    replica.pause();
    let stalled = first.buy(21..41).await;
    assert_eq!(rows_among(&pool, stalled.values()).await, 20, "written through before the answer");
    assert_eq!(first.guarantee().await, "db_write_through");
    console_says(&on_master, Guarantee::DbWriteThrough).await;

    // The replica is cut off and promoted; the old master sells twenty more, which the
    // replica will never have, and dies.
    replica.resume();
    replica.promote().await;
    let last_words = first.buy(41..61).await;
    assert_eq!(rows_among(&pool, last_words.values()).await, 20, "no replica had them, so the DB has them");
    master.kill();
    first.stop().await;

    // A second engine on the promoted replica, default flags again: nothing behind it.
    let settings = ConnectionSettings::from_urls(
        EnvironmentKind::Sandbox,
        &support::mysql_url_of(&pool).await,
        &replica.url(),
        on_master.keys.prefix(),
    );
    let on_replica = Connections::open(settings).await.unwrap();
    let second = engine_on(&pool, &on_replica).await;
    assert_eq!(second.guarantee().await, "no_replicas");
    console_says(&on_replica, Guarantee::NoReplicas).await;

    // Buyers the replica vouched for retry with the same key: their first answer, again.
    assert_eq!(second.buy(1..21).await, vouched, "a retry after the failover is answered with the first order");
    // Buyers whose orders only the DB has retry too: never a second order.
    let retried = second.buy(21..31).await;
    // The sale goes on.
    let after = second.buy(61..71).await;
    second.stop().await;
    sale::persist_all(&on_replica, P).await;

    // Every accepted answer is an order row, exactly once; nothing oversold.
    let accepted: Vec<&String> =
        vouched.values().chain(stalled.values()).chain(last_words.values()).chain(after.values()).collect();
    assert_eq!(rows_among(&pool, accepted.iter().copied()).await, 70, "every accepted answer is an order");
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM orders").await, 70, "and nothing else is");
    assert_eq!(sale::db_stock(&pool, P).await, 30, "0 oversold");
    let per_buyer: i64 =
        support::scalar(&pool, "SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) n FROM orders GROUP BY user_id) t")
            .await;
    assert_eq!(per_buyer, 1, "no buyer has a second order");
    // A retry the promoted replica could not recognise got another number: it ended FAILED.
    for (user, order_no) in &retried {
        if *order_no != stalled[user] {
            let failed: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM order_failures WHERE order_no = ?")
                .bind(order_no)
                .fetch_one(&pool)
                .await
                .unwrap();
            assert_eq!(failed, 1, "buyer {user}'s second answer {order_no} is a FAILED record");
        }
    }
}

/// An engine connected as the on-call role's Redis user, whose rules refuse `INFO`.
async fn oncall_engine_on(pool: &MySqlPool, server: &RedisServer, tag: &str) -> EngineState {
    let prefix = tag.to_string();
    let mut admin = server.conn().await;
    let mut setuser = redis::cmd("ACL");
    setuser.arg("SETUSER").arg("oncall").arg("reset").arg("on").arg(">pw");
    for rule in stockguard_core::roles::SaleRole::Oncall.redis_rules(&prefix) {
        setuser.arg(rule);
    }
    let _: () = setuser.query_async(&mut admin).await.unwrap();
    let url = format!("redis://oncall:pw@127.0.0.1:{}/", server.port);
    let settings =
        ConnectionSettings::from_urls(EnvironmentKind::Sandbox, &support::mysql_url_of(pool).await, &url, &prefix);
    let conns = Connections::open(settings).await.unwrap();
    EngineState::new(pool.clone(), conns.redis.clone(), conns.keys.clone(), EngineConfig::default())
}

#[sqlx::test(migrations = "./migrations")]
async fn a_sale_account_that_may_not_run_info_still_tells_a_server_with_a_replica_from_one_without(pool: MySqlPool) {
    use stockguard_engine::engine::replicas::guarantee::Guarantee;
    let alone = RedisServer::start().await;
    let engine = oncall_engine_on(&pool, &alone, "alone").await;
    assert_eq!(engine.vouching().await.guarantee(), Guarantee::NoReplicas, "nothing to wait for, so nothing waits");

    let master = RedisServer::start().await;
    let _replica = RedisServer::replica_of(&master).await;
    let engine = oncall_engine_on(&pool, &master, "followed").await;
    assert_eq!(engine.vouching().await.guarantee(), Guarantee::Replica);
}

#[sqlx::test(migrations = "./migrations")]
async fn an_engine_that_opted_out_of_vouching_shows_on_the_console_as_one_that_may_lose_accepted_orders(
    pool: MySqlPool,
) {
    let master = RedisServer::start().await;
    let _replica = RedisServer::replica_of(&master).await;
    let conns = support::connections_to(&pool, &master.url(), "optout").await;
    sale::open_sale(&conns, P, 10, 1).await;
    let config = EngineConfig { replica_acks: ReplicaAcks::Off, ..EngineConfig::default() };
    let state = EngineState::new(pool.clone(), conns.redis.clone(), conns.keys.clone(), config);
    let (url, stop, handle) = sale::spawn_engine(state).await;
    let engine = Engine { url, stop, handle };
    engine.buy(1..3).await;
    assert_eq!(engine.guarantee().await, "none_opted_out");
    let health = console_says(&conns, Guarantee::NoneOptedOut).await;
    assert_eq!(health.engines_may_lose_accepted, 1, "the one engine that may lose what it accepted is counted");
    engine.stop().await;
}
