//! What the two failover runs of issue 30 share (`cluster_accepted` on a cluster,
//! `one_server_failover` on one server with a replica): the product's stock as Redis holds it,
//! the wait for the sale to sell down, the load of 2,000 buyers for 400 units, the replica cut
//! off from its master, the probe for the first order accepted after the kill, what the
//! buyers' answers must add up to, and the line each run prints.

use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_engine::load::{self, LoadConfig, LoadReport};

/// The product's units on sale, and the buyers that ask for them.
pub const STOCK: i64 = 400;
const BUYERS: u64 = 2_000;

pub async fn redis_stock(conns: &Connections, product: u64) -> Option<i64> {
    let mut r = conns.redis.clone();
    redis::cmd("GET").arg(conns.keys.stock(product)).query_async(&mut r).await.ok()
}

/// Waits until Redis holds at most `units` of the product.
pub async fn sold_down_to(conns: &Connections, product: u64, units: i64) {
    crate::support::waits::wait_for(&format!("the stock falls to {units}"), Duration::from_secs(30), async || {
        redis_stock(conns, product).await.is_some_and(|s| s <= units)
    })
    .await;
}

/// 2,000 buyers over 20 s at 200 a second, each asking once for one unit of `product`.
pub fn buyers(engine: &str, product: u64) -> LoadConfig {
    LoadConfig {
        target: engine.to_string(),
        products: vec![product],
        buyers: BUYERS,
        rate: 200,
        duration: Duration::from_secs(20),
        concurrency: 32,
        drain_timeout: Duration::from_secs(60),
    }
}

/// The buyers of [`buyers`] sent to `engine`, in a task of their own: its report once they
/// are done and every accepted order is drained.
pub fn start_buyers(pool: &MySqlPool, engine: &str, product: u64) -> tokio::task::JoinHandle<LoadReport> {
    let (pool, cfg) = (pool.clone(), buyers(engine, product));
    tokio::spawn(async move { load::run(&pool, &cfg, &|_, _| {}).await.expect("the load runs") })
}

/// The master drops its one replica's link (`CLIENT KILL TYPE replica`): what it writes from
/// now on is its alone.
pub async fn drop_the_replica(on_master: &mut redis::aio::MultiplexedConnection) {
    let dropped: i64 =
        redis::cmd("CLIENT").arg("KILL").arg("TYPE").arg("replica").query_async(on_master).await.unwrap();
    assert_eq!(dropped, 1, "the master had one replica to drop");
}

/// Every ACCEPTED answer of `report` is an order row, none a FAILED record, nothing oversold,
/// everything drained, and the probe's order (`probe_order`, the first accepted after the
/// kill) is a row.
pub async fn assert_every_accepted_answer_kept(pool: &MySqlPool, report: &LoadReport, probe_order: &str) {
    let v = &report.verdict;
    assert_eq!(v.lost, 0, "every ACCEPTED answer is an order row or a FAILED record: {report:?}");
    assert_eq!(v.failed_back, 0, "and none is FAILED: ACCEPTED is final (issue 54): {report:?}");
    assert_eq!(v.oversold_units, 0, "{report:?}");
    assert!(v.drained, "{report:?}");
    assert!(v.duplicated <= report.errors, "an order no answer announced can only be an errored request: {report:?}");
    let probe_rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE order_no = ?")
        .bind(probe_order)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(probe_rows, 1, "the first order accepted after the kill is a row");
}

/// Asks for one unit as a new buyer every 20 ms until one is accepted: how long that took,
/// and the order number.
pub async fn first_accepted(engine: &str, product: u64) -> (Duration, String) {
    let http = reqwest::Client::new();
    let since = tokio::time::Instant::now();
    for user in 900_000u64.. {
        let body = serde_json::json!({"user_id": user, "product_id": product, "qty": 1, "idempotency_key": "probe"});
        if let Ok(answer) = http.post(format!("{engine}/orders")).json(&body).send().await {
            if answer.status() == reqwest::StatusCode::ACCEPTED {
                let body: serde_json::Value = answer.json().await.unwrap();
                return (since.elapsed(), body["order_no"].as_str().unwrap().to_string());
            }
        }
        assert!(since.elapsed() < Duration::from_secs(40), "no order accepted within 40 s of the kill");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    unreachable!()
}

/// What the buyers felt, in one line: requests, accepted, the error rate, failed back, and
/// the time to the first order accepted after the kill.
pub fn felt(report: &LoadReport, first_after_kill: Duration) -> String {
    format!(
        "{} requests, {} accepted, {} errors ({:.1}% of requests), {} failed back, first order accepted \
         {first_after_kill:?} after the kill",
        report.requests,
        report.accepted,
        report.errors,
        100.0 * report.errors as f64 / report.requests.max(1) as f64,
        report.verdict.failed_back,
    )
}
