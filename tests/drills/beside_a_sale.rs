//! A drill touches only its own rig (issue 26): run beside a seeded sale whose own engine is
//! selling, the drill's breakers, switch changes, guided exit and consumers stay on the
//! drill's products, and the sale is what it was.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::AsyncCommands as _;
use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::drills::plan::Plan;
use stockguard_core::drills::RunStatus;
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::DriftStatus;
use stockguard_core::switch::Mode;
use stockguard_engine::drill::runner::{self, Variant};
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use stockguard_engine::sandbox::seed::DEMO_PRODUCTS;

use crate::rig;
use crate::sale;
use crate::support::waits::wait_for;
use crate::support::{self, TestRedis};

/// The seeded product the sale's buyers keep buying during the drill; every other seeded
/// product must come out of the drill exactly as it went in.
const BOUGHT: u64 = 1001;
/// The seed's products are 1001-1020; a drill's rig takes ids above every existing one.
const LAST_SEEDED: u64 = 1020;

/// Everything of the sale but the product its buyers buy: rows, switch, Redis keys.
#[derive(Debug, PartialEq, Eq)]
struct SaleState {
    inventory: Vec<(u64, i32, i32, Option<u64>)>,
    orders: Vec<(String, String, i32)>,
    failures: i64,
    outbox: Vec<(u64, String)>,
    switch: Vec<(String, String, u64)>,
    /// A string, hash or set key's `DUMP`; a stream's length and pending count (a live
    /// consumer's reads move a stream's group bookkeeping, not its messages).
    redis: BTreeMap<String, String>,
}

/// The product id in a key's hash tag (`…:{1002}:stock`).
fn tag_of(key: &str) -> Option<u64> {
    let open = key.find('{')?;
    let close = key[open..].find('}')? + open;
    key[open + 1..close].parse().ok()
}

async fn sale_state(conns: &Connections) -> SaleState {
    let db = &conns.mysql;
    let inventory = sqlx::query_as(
        "SELECT product_id, stock, initial_stock, rig FROM inventory WHERE product_id <= ? AND product_id <> ? \
         ORDER BY product_id",
    )
    .bind(LAST_SEEDED)
    .bind(BOUGHT)
    .fetch_all(db)
    .await
    .unwrap();
    let orders = sqlx::query_as(
        "SELECT order_no, CAST(status AS CHAR), buy_count FROM orders WHERE product_id <= ? AND product_id <> ? \
         ORDER BY order_no",
    )
    .bind(LAST_SEEDED)
    .bind(BOUGHT)
    .fetch_all(db)
    .await
    .unwrap();
    let failures = sqlx::query_scalar("SELECT COUNT(*) FROM order_failures WHERE product_id <= ? AND product_id <> ?")
        .bind(LAST_SEEDED)
        .bind(BOUGHT)
        .fetch_one(db)
        .await
        .unwrap();
    let outbox = sqlx::query_as(
        "SELECT id, CAST(status AS CHAR) FROM outbox WHERE product_id <= ? AND product_id <> ? ORDER BY id",
    )
    .bind(LAST_SEEDED)
    .bind(BOUGHT)
    .fetch_all(db)
    .await
    .unwrap();
    // The sale's rows: every scope but a drill rig's.
    let switch = sqlx::query_as(
        "SELECT scope, CAST(mode AS CHAR), revision FROM degrade_switch WHERE scope NOT LIKE 'rig:%' ORDER BY scope",
    )
    .fetch_all(db)
    .await
    .unwrap();
    let mut r = conns.redis.clone();
    let keys: Vec<String> = r.keys(format!("{}*", conns.keys.prefix())).await.unwrap();
    let mut redis = BTreeMap::new();
    for key in keys {
        // The rig's keys, and the bought product's, are not the untouched sale.
        if tag_of(&key).is_some_and(|p| p > LAST_SEEDED || p == BOUGHT) {
            continue;
        }
        let kind: String = redis::cmd("TYPE").arg(&key).query_async(&mut r).await.unwrap();
        let seen = if kind == "stream" {
            let len: u64 = r.xlen(&key).await.unwrap();
            let pending: redis::Value =
                redis::cmd("XPENDING").arg(&key).arg("persist").query_async(&mut r).await.unwrap();
            format!("stream of {len}, pending {pending:?}")
        } else {
            let dump: Vec<u8> = redis::cmd("DUMP").arg(&key).query_async(&mut r).await.unwrap();
            format!("{kind} {dump:?}")
        };
        redis.insert(key, seen);
    }
    SaleState { inventory, orders, failures, outbox, switch, redis }
}

/// The sale's own buyers, one order each, against the sale's own engine until stopped;
/// every answer's status kept, and the engine's mode and breaker watched between orders.
struct SaleBuyers {
    running: Arc<AtomicBool>,
    answers: Arc<Mutex<BTreeMap<u16, usize>>>,
    left_redis: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl SaleBuyers {
    fn start(url: String, engine: EngineState) -> Self {
        let running = Arc::new(AtomicBool::new(true));
        let answers = Arc::new(Mutex::new(BTreeMap::new()));
        let left_redis = Arc::new(AtomicBool::new(false));
        let (run, seen, left) = (running.clone(), answers.clone(), left_redis.clone());
        let task = tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut user = 1_500_000u64;
            while run.load(Ordering::Relaxed) {
                user += 1;
                let body =
                    serde_json::json!({ "user_id": user, "product_id": BOUGHT, "qty": 1, "idempotency_key": "a" });
                let status = match client.post(format!("{url}/orders")).json(&body).send().await {
                    Ok(resp) => resp.status().as_u16(),
                    Err(_) => 0,
                };
                *seen.lock().unwrap().entry(status).or_default() += 1;
                if engine.mode_for(BOUGHT) != Mode::Normal || engine.breaker.is_tripped() {
                    left.store(true, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        Self { running, answers, left_redis, task }
    }

    async fn stop(self) -> (BTreeMap<u16, usize>, bool) {
        self.running.store(false, Ordering::Relaxed);
        self.task.await.unwrap();
        let answers = self.answers.lock().unwrap().clone();
        (answers, self.left_redis.load(Ordering::Relaxed))
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn a_drill_beside_a_live_sale_leaves_the_sale_as_it_was_and_its_engine_on_redis(pool: MySqlPool) {
    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("beside").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    stockguard_engine::sandbox::seed::seed(&conns, &mut |_| {}).await.expect("the demo sale is seeded");
    // No seeded order falls due while the test runs (the nearest is a minute away, which a
    // loaded machine may pass): the sale's closer has nothing to do but what its buyers bring.
    sqlx::query("UPDATE orders SET pay_deadline = pay_deadline + INTERVAL 1 HOUR WHERE status = 'WAIT_PAY'")
        .execute(&pool)
        .await
        .unwrap();
    // Pending releases of a product whose stock key is missing wait for the key, for good.
    let waiting_for_key: Vec<String> =
        DEMO_PRODUCTS.iter().filter(|d| d.status == DriftStatus::KeyMissing).map(|d| d.id.to_string()).collect();
    let others_pending = format!(
        "SELECT COUNT(*) FROM outbox WHERE status = 'PENDING' AND product_id NOT IN ({})",
        waiting_for_key.join(", ")
    );

    // The sale's own engine, selling and persisting the sale (its in-flight reservations
    // first: once they are in, the sale holds still but for what its buyers buy).
    let config = EngineConfig { instance_id: "sale-engine".into(), per_user_rate: 0, ..EngineConfig::default() };
    let engine = EngineState::new(conns.mysql.clone(), conns.redis.clone(), conns.keys.clone(), config);
    let (url, stop_engine, served) = sale::spawn_engine(engine.clone()).await;
    let seeded: Vec<u64> = (1001..=LAST_SEEDED).collect();
    wait_for(
        "the sale's engine persisted the seed's reservations and relayed its releases",
        Duration::from_secs(30),
        async || {
            let mut r = conns.redis.clone();
            let backlog = stockguard_core::backlog::sample(&mut r, &conns.keys, &seeded).await.unwrap();
            backlog.messages == 0 && support::scalar(&pool, &others_pending).await == 0
        },
    )
    .await;
    let before = sale_state(&conns).await;
    let audit_before: u64 = sqlx::query_scalar("SELECT CAST(COALESCE(MAX(id), 0) AS UNSIGNED) FROM audit_log")
        .fetch_one(&pool)
        .await
        .unwrap();
    let buyers = SaleBuyers::start(url, engine.clone());

    // A drill whose faults take its engines to the DB path and back (breakers, escalation,
    // the guided exit), shorter than CI's short form: beside the sale's own engine and buyers
    // on two cores, 0.3 sent 81-88% of its schedule in one run of five.
    let (_, text) = Plan::builtin("redis-down").unwrap();
    let opts = rig::options(&text, Variant { short: Some(0.2), ..Variant::default() }, None);
    let outcome = runner::run(&conns, opts, &|_| {}).await.expect("the drill runs");
    let (answers, left_redis) = buyers.stop().await;
    let _ = stop_engine.send(());
    served.await.unwrap();

    let failed: Vec<_> = outcome.summary.failed_checks().collect();
    if let Some(sent) = outcome.summary.checks.iter().find(|c| c.name == "load_sent_as_planned") {
        eprintln!("beside a sale: the drill's load sent {}", sent.figure);
    }
    assert_eq!(outcome.status, RunStatus::Passed, "{:?}; failed: {failed:#?}", outcome.summary.reason);
    assert!(outcome.summary.figures.time_to_db_path_ms.is_some(), "the drill's own engines went to the DB path");
    let rig_row: Option<String> = sqlx::query_scalar("SELECT CAST(mode AS CHAR) FROM degrade_switch WHERE scope = ?")
        .bind(format!("rig:{}", outcome.run_id))
        .fetch_optional(&pool)
        .await
        .unwrap();
    assert_eq!(
        rig_row.as_deref(),
        Some("NORMAL"),
        "the drill's breakers escalated to its rig's row, and it led it back"
    );

    // The sale: its rows, its switch (no global row, no product row) and its keys as they were.
    let after = sale_state(&conns).await;
    assert_eq!(after.switch, before.switch, "the drill changed the sale's switch");
    assert_eq!(after.inventory, before.inventory);
    assert_eq!(after.orders, before.orders, "the drill's engines persisted or closed the sale's orders");
    assert_eq!((after.failures, &after.outbox), (before.failures, &before.outbox));
    assert_eq!(after.redis, before.redis, "the drill rebuilt or consumed the sale's keys");
    // Its audit rows are the drill's own: its rig's row and its products.
    let rig_products: Vec<u64> = sqlx::query_scalar("SELECT product_id FROM inventory WHERE rig = ?")
        .bind(outcome.run_id)
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(!rig_products.is_empty() && rig_products.iter().all(|&p| p > LAST_SEEDED));
    let new_audit: Vec<(String, String)> =
        sqlx::query_as("SELECT action, target FROM audit_log WHERE id > ? ORDER BY id")
            .bind(audit_before)
            .fetch_all(&pool)
            .await
            .unwrap();
    let own = |target: &str| {
        target == format!("rig:{}", outcome.run_id)
            || target.starts_with("drill")
            || rig_products.iter().any(|p| target == format!("product:{p}") || target == p.to_string())
    };
    let foreign: Vec<_> = new_audit.iter().filter(|(_, target)| !own(target)).collect();
    assert!(foreign.is_empty(), "audit rows about the sale, not the drill: {foreign:?}");
    assert!(new_audit.iter().any(|(action, _)| action == "degrade.exit"), "the drill's exit is audited: {new_audit:?}");

    // The rig is off sale: its keys and heartbeats gone, its products out of the sale's reading.
    let mut r = conns.redis.clone();
    let keys_left: Vec<String> = r.keys(format!("{}*", conns.keys.prefix())).await.unwrap();
    let rig_keys: Vec<_> = keys_left.iter().filter(|k| tag_of(k).is_some_and(|p| rig_products.contains(&p))).collect();
    assert!(rig_keys.is_empty(), "the rig's keys stayed: {rig_keys:?}");
    // Its engines' heartbeats are gone; the sale's engine's stays.
    let homes: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT home FROM engine_heartbeats ORDER BY home").fetch_all(&pool).await.unwrap();
    assert_eq!(homes, ["global"], "the rig's engines' heartbeats stayed");
    let read = stockguard_core::recon::reading::product_ids(&pool).await.unwrap();
    assert_eq!(read, seeded, "the sale's reading shows its own products only");

    // The sale's engine sold from Redis throughout: never DB mode, never paused.
    assert!(!left_redis, "the sale's engine left the Redis path during the drill");
    assert!(answers.get(&202).is_some_and(|&n| n > 0), "the sale's buyers were served: {answers:?}");
    assert!(
        answers.keys().all(|&s| matches!(s, 202 | 409)),
        "the sale's buyers got answers other than accepted or sold out: {answers:?}"
    );
}
