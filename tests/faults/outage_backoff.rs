//! A Redis outage seen by a running engine (issue "house in order"): a private, durable
//! `redis-server` is killed for ten seconds under an engine serving on a socket, then started
//! again with its data. The background loops must say so once each (not once per try), and
//! come back by themselves: a release made during the outage reaches Redis, a new order is
//! reserved and persisted, and the stock identity holds, with nothing restarted.
//!
//! The engine runs in this process; its log goes to a buffer through a global subscriber
//! (the only one of this binary), which sees the lines of every task on every thread. Other
//! tests of the binary log there too: only the lines of this test's engine instance count.

use crate::sale;
use crate::support;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use sqlx::MySqlPool;
use stockguard_core::connect::Connections;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_engine::engine::backoff::most_warnings;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::redis_server::RedisServer;
use support::scalar;
use support::waits::wait_for;

const P: u64 = 31;
const OUTAGE: Duration = Duration::from_secs(10);
/// The loops that touch Redis while no order comes in: the persist loop and the release
/// relay (the closer, the product list, the switch and the heartbeat only use the DB).
const LOOPS_ON_REDIS: u64 = 2;
const REDIS_TASKS: [&str; LOOPS_ON_REDIS as usize] = ["persist pass", "release relay pass"];

/// Every line the process logs, from the moment [`log`] is first called.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl Log {
    fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap()).lines().map(str::to_owned).collect()
    }
}

impl std::io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn log() -> Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Log::default();
        let writer = log.clone();
        tracing_subscriber::fmt()
            .with_env_filter("info,sqlx=error")
            .with_ansi(false)
            .without_time()
            .with_writer(move || writer.clone())
            .try_init()
            .expect("the only subscriber of this test binary");
        log
    })
    .clone()
}

/// Lines at warn level or above (`fmt` right-aligns the level: " WARN", "ERROR").
fn warnings(lines: &[String]) -> Vec<&String> {
    lines.iter().filter(|l| l.starts_with(" WARN") || l.starts_with("ERROR")).collect()
}

async fn post(url: &str, path: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
    let resp = reqwest::Client::new().post(format!("{url}{path}")).json(&body).send().await.unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap_or(serde_json::Value::Null))
}

async fn order(url: &str, user: u64) -> String {
    let body = serde_json::json!({ "user_id": user, "product_id": P, "qty": 1, "idempotency_key": format!("k{user}") });
    let (status, answer) = post(url, "/orders", body).await;
    assert_eq!(status, 202, "user {user}'s order: {answer}");
    answer["order_no"].as_str().unwrap().to_owned()
}

async fn live_orders(pool: &MySqlPool) -> i64 {
    scalar(pool, "SELECT COUNT(*) FROM orders WHERE status = 'WAIT_PAY'").await
}

#[sqlx::test(migrations = "./migrations")]
async fn with_redis_down_for_ten_seconds_each_loop_warns_once_and_recovers_by_itself(pool: MySqlPool) {
    let started = Instant::now();
    let log = log();
    let mut server = RedisServer::start_durable().await;
    let conns = support::connections_to(&pool, &server.url(), "outage").await;
    sale::open_sale(&conns, P, 10, 2).await;
    // The engine has its own Redis connection, as a separate process would.
    let engine_redis = stockguard_core::connect::connect_redis(&conns.settings).await.unwrap();
    let state = EngineState::new(conns.mysql.clone(), engine_redis, conns.keys.clone(), EngineConfig::default());
    let ours = format!("instance={}", state.config.instance_id);
    let (url, stop, engine) = sale::spawn_engine(state).await;

    // Three units sold and persisted before the outage.
    let first = order(&url, 1).await;
    for user in 2..=3 {
        order(&url, user).await;
    }
    wait_for("the three orders are persisted", Duration::from_secs(10), async || live_orders(&pool).await == 3).await;

    let before = log.lines().len();
    server.kill();
    let down = Instant::now();
    // A buyer cancels during the outage: the DB takes the unit back at once, and its release
    // waits for Redis in the outbox (the relay must keep trying, quietly).
    let (status, answer) = post(&url, &format!("/orders/{first}/cancel"), serde_json::json!({ "user_id": 1 })).await;
    assert_eq!((status, answer["status"].as_str()), (200, Some("CANCELLED")), "{answer}");
    tokio::time::sleep(OUTAGE.saturating_sub(down.elapsed())).await;
    server.start_again().await;
    let outage = down.elapsed();

    // Back by itself: the release made during the outage reaches Redis.
    wait_for("the relay applies the release made during the outage", Duration::from_secs(15), async || {
        scalar(&pool, "SELECT COUNT(*) FROM outbox WHERE status = 'DONE'").await == 1
    })
    .await;
    // A new order is reserved in Redis and persisted to the DB, nothing restarted.
    order(&url, 4).await;
    wait_for("the order placed after the outage is persisted", Duration::from_secs(10), async || {
        live_orders(&pool).await == 3
            && scalar(&pool, "SELECT COUNT(*) FROM orders WHERE user_id = 4 AND status = 'WAIT_PAY'").await == 1
    })
    .await;

    // The identity holds: Redis says what the DB says, and the DB's ledger adds up.
    let after = Connections::open(conns.settings.clone()).await.unwrap();
    let mut r = after.redis.clone();
    let reading = read_products(&after.mysql, &mut r, &after.keys, &[P]).await.unwrap().remove(0);
    assert_eq!((reading.status, reading.drift), (DriftStatus::Ok, Some(0)), "{reading:?}");
    assert_eq!(reading.initial_stock, reading.db_stock + reading.live_orders_qty, "{reading:?}");
    assert_eq!((reading.redis_stock, reading.inflight_pending, reading.pending_release), (Some(7), 0, 0));

    let window = down.elapsed();
    let lines = log.lines();
    let during: Vec<String> = lines[before..].iter().filter(|l| l.contains(&ours)).cloned().collect();
    let warned = warnings(&during);
    let recovered: Vec<_> = during.iter().filter(|l| l.contains("recovered after")).collect();
    eprintln!(
        "outage {:.1} s; {} lines at warn or above from the kill to recovery:\n{}\nrecoveries:\n{}\ntest wall time {:.1} s",
        outage.as_secs_f64(),
        warned.len(),
        warned.iter().map(|l| l.as_str()).collect::<Vec<_>>().join("\n"),
        recovered.iter().map(|l| l.as_str()).collect::<Vec<_>>().join("\n"),
        started.elapsed().as_secs_f64(),
    );
    // The policy: the first failure of an outage, then one reminder per 30 s of it; counted
    // from the kill until recovery was checked. The loops on Redis fail all through; any other
    // loop may fail too on a loaded machine (a heartbeat write to the DB past its 400 ms, seen
    // once while other suites ran beside this one), and is held to the same policy.
    let bound = LOOPS_ON_REDIS * most_warnings(window);
    // (A warning of no loop counts with those of the loops on Redis, as all did before.)
    let on_redis = warned
        .iter()
        .filter(|l| !l.contains("task=\"") || REDIS_TASKS.iter().any(|t| l.contains(&format!("task=\"{t}\""))))
        .count();
    assert!(
        on_redis as u64 <= bound,
        "{on_redis} warnings of the loops on Redis in {window:?}, at most {bound} expected"
    );
    let mut tasks: Vec<&str> = warned.iter().filter_map(|l| l.split("task=\"").nth(1)?.split('"').next()).collect();
    tasks.sort_unstable();
    for task in tasks.iter().copied().collect::<std::collections::BTreeSet<_>>() {
        let said = tasks.iter().filter(|t| **t == task).count() as u64;
        assert!(said <= most_warnings(window), "the {task} warned {said} times in {window:?}");
    }
    for task in REDIS_TASKS {
        let first = warned.iter().filter(|l| l.contains(&format!("{task} failed"))).count();
        assert_eq!(first, 1, "the {task} says once that it fails");
        assert!(recovered.iter().any(|l| l.contains(&format!("{task} recovered"))), "the {task} says it recovered");
    }

    let _ = stop.send(());
    engine.await.unwrap();
}
