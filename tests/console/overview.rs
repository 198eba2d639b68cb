//! The sale overview against real servers: two `stockguard engine serve` processes (each with
//! its own counters) sell one product; the overview adds up what each counted, takes the pace
//! from two scrapes, lists an engine that does not answer and one whose heartbeat is stale,
//! meets the ledger on units sold, and raises the confirmed drift. The burn-down's buckets are
//! checked on orders stamped at known times.

use crate::sale;
use crate::support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::alerts::{self, Thresholds};
use stockguard_core::overview::{self, burndown, EngineAnswer, OverviewError};
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::drift::DriftTracker;
use stockguard_core::recon::read_products;
use stockguard_core::switch::acks::{write_heartbeat, BreakerReport, Heartbeat};
use stockguard_core::switch::Mode;
use support::TestRedis;

const SELLING: u64 = 11;
const QUIET: u64 = 12;

/// `stockguard engine serve` on this test's servers, stopped on drop.
struct EngineProcess {
    child: Child,
    url: String,
}

impl EngineProcess {
    fn start(env: &[(&str, &str)]) -> Self {
        let port = support::free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_stockguard"));
        cmd.args(["engine", "serve", "--listen", &format!("127.0.0.1:{port}")]);
        for k in support::PROFILE_OVERRIDES {
            cmd.env_remove(k);
        }
        let child = cmd.envs(env.iter().copied()).stdout(Stdio::null()).stderr(Stdio::inherit()).spawn().unwrap();
        Self { child, url: format!("http://127.0.0.1:{port}") }
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn order(client: &reqwest::Client, url: &str, user: u64, qty: i64) -> (u16, serde_json::Value) {
    let body = serde_json::json!({ "user_id": user, "product_id": SELLING, "qty": qty, "idempotency_key": format!("k{user}") });
    let resp = client.post(format!("{url}/orders")).json(&body).send().await.unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap_or(serde_json::Value::Null))
}

fn heartbeat(id: &str, addr: &str) -> Heartbeat {
    Heartbeat {
        instance_id: id.into(),
        listen_addr: addr.into(),
        home: stockguard_core::switch::Scope::Global,
        started_at: chrono::Utc::now().naive_utc(),
        applied_revision: 0,
        effective_mode: Mode::Normal,
        breaker: BreakerReport { state: "CLOSED", reason: None, tripped_at: None },
        accepted_guarantee: None,
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn the_overview_adds_up_the_engines_paces_them_lists_the_silent_and_meets_the_ledger(pool: MySqlPool) {
    let redis = TestRedis::new("overview").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, SELLING, 20, 1).await;
    sale::open_sale(&conns, QUIET, 10, 1).await;
    let mysql_url = support::mysql_url_of(&pool).await;
    let env = [
        ("STOCKGUARD_MYSQL_URL", mysql_url.as_str()),
        ("STOCKGUARD_REDIS_URL", redis.url.as_str()),
        ("STOCKGUARD_KEY_PREFIX", redis.keys.prefix()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox"),
    ];
    let (a, b) = (EngineProcess::start(&env), EngineProcess::start(&env));
    support::waits::wait_for("both engines report a heartbeat", Duration::from_secs(30), async || {
        support::scalar(&pool, "SELECT COUNT(*) FROM engine_heartbeats").await == 2
    })
    .await;
    let client = reqwest::Client::new();
    for url in [&a.url, &b.url] {
        support::waits::wait_for("the engine serves", Duration::from_secs(30), async || {
            client.get(format!("{url}/health")).send().await.is_ok_and(|r| r.status().is_success())
        })
        .await;
    }

    // Engine A sells 15; a first overview; then B sells the last 5, 5 buyers find it sold
    // out and one order is malformed.
    let mut first_order = String::new();
    for user in 1..=15 {
        let (status, body) = order(&client, &a.url, user, 1).await;
        assert_eq!(status, 202, "{body}");
        if user == 1 {
            first_order = body["order_no"].as_str().unwrap().to_string();
        }
    }
    // A drift on the quiet product, confirmed by two readings.
    let mut r = conns.redis.clone();
    let _: i64 = redis::cmd("INCRBY").arg(conns.keys.stock(QUIET)).arg(2).query_async(&mut r).await.unwrap();
    let mut tracker = DriftTracker::default();
    tracker.observe(&read_products(&conns.mysql, &mut r, &conns.keys, &[]).await.unwrap());
    let readings = read_products(&conns.mysql, &mut r, &conns.keys, &[]).await.unwrap();
    let confirmed = tracker.observe(&readings);
    let firing = alerts::evaluate(&readings, &confirmed, &alerts::Signals::default(), &Thresholds::default());
    let states = alerts::acks::states(&conns, &firing).await.unwrap();

    // An engine that says it is live but does not answer, and one that stopped an hour ago.
    let dead_addr = format!("127.0.0.1:{}", support::free_port());
    write_heartbeat(&pool, &heartbeat("engine-dead", &dead_addr)).await.unwrap();
    write_heartbeat(&pool, &heartbeat("engine-gone", "127.0.0.1:9")).await.unwrap();
    sqlx::query("UPDATE engine_heartbeats SET last_seen = NOW(3) - INTERVAL 1 HOUR WHERE instance_id = 'engine-gone'")
        .execute(&pool)
        .await
        .unwrap();

    let (first, scrape) = overview::read(&conns, states.clone(), None).await.unwrap();
    assert_eq!((first.orders.requests, first.orders.accepted), (15, 15));
    assert_eq!(first.orders.orders_per_s, None, "one scrape has no pace");

    let mut sold_out = 0;
    for user in 101..=110 {
        let (status, body) = order(&client, &b.url, user, 1).await;
        match status {
            202 => {}
            409 if body["error"] == "SOLD_OUT" => sold_out += 1,
            other => panic!("{other}: {body}"),
        }
    }
    assert_eq!(sold_out, 5);
    assert_eq!(order(&client, &b.url, 200, 0).await.0, 400);
    write_heartbeat(&pool, &heartbeat("engine-dead", &dead_addr)).await.unwrap();

    let (o, _) = overview::read(&conns, states, Some(&scrape)).await.unwrap();
    let f = &o.orders;
    assert_eq!((f.requests, f.accepted, f.sold_out, f.errors, f.refused), (26, 20, 5, 0, 1), "{f:?}");
    assert_eq!(f.by_outcome.get("BAD_REQUEST"), Some(&1));
    let window = f.window_s.expect("two scrapes make a window");
    assert_eq!((f.orders_per_s.unwrap() * window).round(), 11.0, "only B's 11 answers fell in the window");
    assert_eq!((f.accepted_per_s.unwrap() * window).round(), 5.0);
    assert!(f.p99_ms.is_some_and(|p| p > 0.0) && f.p99_total_ms.is_some_and(|p| p > 0.0), "{f:?}");
    assert!(f.backlog.is_some(), "the engines serve the backlog");

    let by_id = |id: &str| o.engines.iter().find(|e| e.instance_id == id).unwrap_or_else(|| panic!("{id} listed"));
    assert_eq!(o.engines.len(), 4, "nobody is left out: {:?}", o.engines);
    let answered: Vec<u64> =
        o.engines.iter().filter(|e| e.answer == EngineAnswer::Answered).filter_map(|e| e.requests).collect();
    let mut answered = answered;
    answered.sort();
    assert_eq!(answered, vec![11, 15], "each engine's own count");
    let dead = by_id("engine-dead");
    assert_eq!(dead.answer, EngineAnswer::NotAnswering);
    assert!(dead.error.as_deref().unwrap().contains(&dead_addr), "{dead:?}");
    assert_eq!(by_id("engine-gone").answer, EngineAnswer::Stale);

    assert_eq!(o.mode, Mode::Normal);
    assert!(o.compensation_open.is_empty());
    let keys: Vec<(&str, Option<i64>)> = o.alerts.iter().map(|s| (s.alert.key.as_str(), s.alert.value)).collect();
    assert_eq!(keys, vec![("drift:12", Some(2))]);

    // Units sold meet the ledger once the engines persisted the orders.
    support::waits::wait_for("the 20 orders are persisted", Duration::from_secs(30), async || {
        overview::sale_figures(&pool).await.unwrap().sold_units == 20
    })
    .await;
    let live = support::scalar(
        &pool,
        "SELECT CAST(SUM(buy_count) AS SIGNED) FROM orders WHERE status IN ('WAIT_PAY', 'PAID')",
    )
    .await;
    assert_eq!(live, 20);
    let sale = overview::sale_figures(&pool).await.unwrap();
    assert_eq!((sale.products, sale.initial_units, sale.remaining_units), (2, 30, 10));
    assert!((sale.sold_pct - 66.666).abs() < 0.01);

    // The burn-down ends where the ledger is, and a cancelled order gives its unit back.
    let whole = burndown::read(&pool, None).await.unwrap();
    assert_eq!((whole.initial_units, whole.remaining()), (30, 10));
    assert_eq!(whole.points.iter().map(|p| p.sold).sum::<i64>(), 20);
    let cancel = client
        .post(format!("{}/orders/{first_order}/cancel", a.url))
        .json(&serde_json::json!({ "user_id": 1 }))
        .send()
        .await
        .unwrap();
    assert!(cancel.status().is_success(), "{}", cancel.text().await.unwrap());
    assert_eq!(burndown::read(&pool, None).await.unwrap().remaining(), 11);
    assert_eq!(burndown::read(&pool, Some(SELLING)).await.unwrap().remaining(), 1);
    let quiet = burndown::read(&pool, Some(QUIET)).await.unwrap();
    assert_eq!((quiet.points.len(), quiet.remaining()), (1, 10), "no order yet: one point, full stock");
    assert!(matches!(burndown::read(&pool, Some(999)).await, Err(OverviewError::NoSuchProduct(999))));
}

#[sqlx::test(migrations = "./migrations")]
async fn the_burn_down_buckets_taken_and_returned_units_by_time_in_sql(pool: MySqlPool) {
    sqlx::query("INSERT INTO inventory (product_id, name, initial_stock, stock) VALUES (7, 'timed', 50, 45)")
        .execute(&pool)
        .await
        .unwrap();
    // 590 s ago the first order: a span just under 600 s, so 5 s buckets.
    let insert =
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, pay_deadline, created_at, updated_at) \
                  VALUES (?, ?, 7, ?, ?, NOW(3), NOW(3) - INTERVAL ? SECOND, NOW(3) - INTERVAL ? SECOND)";
    for (user, no, qty, status, created_ago, updated_ago) in
        [(1u64, "T1", 2, "PAID", 590, 590), (2, "T2", 3, "WAIT_PAY", 558, 558), (3, "T3", 1, "CLOSED", 499, 489)]
    {
        sqlx::query(insert)
            .bind(no)
            .bind(user)
            .bind(qty)
            .bind(status)
            .bind(created_ago)
            .bind(updated_ago)
            .execute(&pool)
            .await
            .unwrap();
    }
    let b = burndown::read(&pool, Some(7)).await.unwrap();
    assert_eq!(b.bucket_secs, 5);
    assert_eq!(b.points.len(), 119 + 1, "590 s in 5 s buckets, after the start point");
    let left = |bucket: usize| b.points[bucket + 1].remaining;
    assert_eq!(b.points[0].remaining, 50, "the start: every unit");
    assert_eq!((left(0), left(5), left(6), left(18), left(19), left(20)), (48, 48, 45, 44, 44, 45));
    assert_eq!(b.remaining(), 45, "initial less the live orders: the DB's stock");

    // One product's buckets come from a range of the burn-down index, not from the table.
    use sqlx::Row as _;
    let rows = sqlx::query(
        "EXPLAIN SELECT FLOOR(TIMESTAMPDIFF(MICROSECOND, NOW(), created_at) / 5000000) AS b, SUM(buy_count) \
         FROM orders WHERE TRUE AND product_id = 7 GROUP BY b",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let plan: Vec<(Option<String>, Option<String>)> =
        rows.iter().map(|r| (r.try_get("key").unwrap(), r.try_get("Extra").unwrap())).collect();
    assert_eq!(plan[0].0.as_deref(), Some("idx_orders_created"), "{plan:?}");
    assert!(plan[0].1.as_deref().unwrap_or_default().contains("Using index"), "covering: {plan:?}");
}
