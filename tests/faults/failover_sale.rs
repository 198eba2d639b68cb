//! What the two failover runs of issue 30 share (`cluster_accepted` on a cluster,
//! `one_server_failover` on one server with a replica): the product's stock as Redis holds it,
//! the wait for the sale to sell down, the load of 2,000 buyers for 400 units, the probe for
//! the first order accepted after the kill, and the line each run prints.

use std::time::Duration;

use stockguard_core::connect::Connections;
use stockguard_engine::load::{LoadConfig, LoadReport};

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
