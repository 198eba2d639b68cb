//! The degrade switch with three engine instances against the real MariaDB and Redis:
//! flipping to the DB under load, Redis cut off mid-sale, the guided exit back, and a slow
//! MySQL that must not make engines flap.

use crate::sale;
use crate::support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::action::Refused;
use stockguard_core::connect::Connections;
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};
use stockguard_core::recon::read_products;
use stockguard_core::switch::exit::DEFAULT_STALE_AFTER;
use stockguard_core::switch::{self, store, Changer, ExitOptions, Home, Mode, Scope};
use stockguard_engine::drill::{Fault, FaultProxy};
use stockguard_engine::engine::breaker::BreakerConfig;
use stockguard_engine::engine::state::{EngineConfig, EngineState};
use support::TestRedis;

const PRODUCT: u64 = 701;
const STOCK: i64 = 20_000;

fn engine_config(n: usize) -> EngineConfig {
    EngineConfig {
        instance_id: format!("engine-{n}"),
        batch_size: 100,
        close_interval: Duration::from_millis(50),
        switch_poll: Duration::from_millis(50),
        redis_timeout: Duration::from_millis(300),
        breaker: BreakerConfig {
            trip_after: 5,
            probe_interval: Duration::from_millis(100),
            healthy_probes: 3,
            grace: Duration::ZERO,
        },
        ..EngineConfig::default()
    }
}

struct Engine {
    url: String,
    state: EngineState,
    stop: tokio::sync::oneshot::Sender<()>,
    handle: tokio::task::JoinHandle<()>,
}

/// Three engines; each reaches MySQL and Redis at the given URLs (a proxy, or the servers).
async fn fleet(mysql_url: &str, redis_url: &str, prefix: &str) -> Vec<Engine> {
    let mut engines = Vec::new();
    for n in 0..3 {
        let settings = ConnectionSettings::from_urls(EnvironmentKind::Sandbox, mysql_url, redis_url, prefix);
        let conns = Connections::open(settings).await.expect("engine connects");
        let state = EngineState::new(conns.mysql, conns.redis, conns.keys, engine_config(n));
        let (url, stop, handle) = sale::spawn_engine(state.clone()).await;
        engines.push(Engine { url, state, stop, handle });
    }
    engines
}

async fn stop_fleet(engines: Vec<Engine>) {
    for e in engines {
        let _ = e.stop.send(());
        e.handle.await.unwrap();
    }
}

/// Buyers sending orders round-robin to the engines until stopped; every accepted order
/// number is kept for the final check.
struct Buyers {
    running: Arc<AtomicBool>,
    accepted: Arc<Mutex<HashSet<String>>>,
    answers: Arc<Mutex<Vec<u16>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Buyers {
    fn start(urls: Vec<String>, workers: usize) -> Self {
        let running = Arc::new(AtomicBool::new(true));
        let accepted = Arc::new(Mutex::new(HashSet::new()));
        let answers = Arc::new(Mutex::new(Vec::new()));
        let next_user = Arc::new(AtomicU64::new(1));
        let client = reqwest::Client::new();
        let tasks = (0..workers)
            .map(|w| {
                let (running, accepted, answers, next_user, client, urls) =
                    (running.clone(), accepted.clone(), answers.clone(), next_user.clone(), client.clone(), urls.clone());
                tokio::spawn(async move {
                    let mut i = w;
                    while running.load(Ordering::Relaxed) {
                        let user = next_user.fetch_add(1, Ordering::Relaxed);
                        let body = serde_json::json!({"user_id": user, "product_id": PRODUCT, "qty": 1, "idempotency_key": format!("k{user}")});
                        let sent = client.post(format!("{}/orders", urls[i % urls.len()])).json(&body).send().await;
                        i += 1;
                        let Ok(resp) = sent else {
                            answers.lock().unwrap().push(0);
                            continue;
                        };
                        let status = resp.status().as_u16();
                        answers.lock().unwrap().push(status);
                        if status == 202 {
                            let v: serde_json::Value = resp.json().await.unwrap();
                            accepted.lock().unwrap().insert(v["order_no"].as_str().unwrap().to_string());
                        }
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                })
            })
            .collect();
        Self { running, accepted, answers, tasks }
    }

    fn accepted_count(&self) -> usize {
        self.accepted.lock().unwrap().len()
    }

    async fn stop(self) -> (HashSet<String>, Vec<u16>) {
        self.running.store(false, Ordering::Relaxed);
        for t in self.tasks {
            t.await.unwrap();
        }
        let accepted = self.accepted.lock().unwrap().clone();
        let answers = self.answers.lock().unwrap().clone();
        (accepted, answers)
    }
}

/// Waits until the streams are drained, then checks "nothing lost": every accepted order is
/// in the DB and not refused, and the ledger holds: stock + live units = initial, stock >= 0.
async fn assert_nothing_lost(pool: &MySqlPool, conns: &Connections, accepted: &HashSet<String>) {
    let mut r = conns.redis.clone();
    for _ in 0..200 {
        let inflight: i64 = redis::cmd("HLEN").arg(conns.keys.inflight(PRODUCT)).query_async(&mut r).await.unwrap();
        if inflight == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stored: HashSet<String> = sqlx::query_scalar::<_, String>("SELECT order_no FROM orders WHERE product_id = ?")
        .bind(PRODUCT)
        .fetch_all(pool)
        .await
        .unwrap()
        .into_iter()
        .collect();
    let lost: Vec<_> = accepted.difference(&stored).collect();
    assert!(lost.is_empty(), "{} accepted orders are not in the DB, e.g. {:?}", lost.len(), lost.first());
    let refused: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM order_failures").fetch_one(pool).await.unwrap();
    assert_eq!(refused, 0, "no accepted order may be refused by the DB");
    let (stock, live): (i64, i64) = sqlx::query_as(
        "SELECT CAST(i.stock AS SIGNED), CAST((SELECT COALESCE(SUM(buy_count), 0) FROM orders o \
         WHERE o.product_id = i.product_id AND o.status IN ('WAIT_PAY', 'PAID')) AS SIGNED) \
         FROM inventory i WHERE i.product_id = ?",
    )
    .bind(PRODUCT)
    .fetch_one(pool)
    .await
    .unwrap();
    assert!(stock >= 0, "oversold: stock {stock}");
    assert_eq!(stock + live, STOCK, "stock {stock} + live {live} must be the initial {STOCK}");
}

async fn orders_by_source(pool: &MySqlPool, source: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE product_id = ? AND source = ?")
        .bind(PRODUCT)
        .bind(source)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn wait_for(what: &str, timeout: Duration, mut check: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn drift_of(conns: &Connections) -> Option<i64> {
    let mut r = conns.redis.clone();
    read_products(&conns.mysql, &mut r, &conns.keys, &[PRODUCT]).await.unwrap()[0].drift
}

#[sqlx::test(migrations = "./migrations")]
async fn degrade_on_under_load_is_applied_by_three_instances_within_a_second_and_the_exit_loses_nothing(
    pool: MySqlPool,
) {
    let redis = TestRedis::new("degr").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, STOCK, 1).await;
    let engines = fleet(&support::mysql_url_of(&pool).await, &redis.url, redis.keys.prefix()).await;
    let buyers = Buyers::start(engines.iter().map(|e| e.url.clone()).collect(), 24);
    wait_for("orders flow through Redis", Duration::from_secs(20), async || buyers.accepted_count() > 300).await;

    let toggled = switch::enter_db_mode(
        &conns,
        Scope::Global,
        "drill: Redis suspected",
        Duration::from_secs(5),
        DEFAULT_STALE_AFTER,
        &|_| {},
    )
    .await
    .unwrap();
    eprintln!(
        "degrade on: applied by {} of {} live instances in {:?} ms",
        toggled.ack.applied, toggled.ack.live, toggled.ack.propagation_ms
    );
    assert_eq!((toggled.ack.applied, toggled.ack.live), (3, 3), "{:?}", toggled.ack);
    assert!(toggled.ack.complete);
    let took = toggled.ack.propagation_ms.expect("each instance applied exactly this revision");
    assert!(took < 1000, "applied by all three in {took} ms, over the 1 s bar");
    assert!(engines.iter().all(|e| e.state.home_mode() == Mode::Degraded));

    // Orders keep flowing, now through the DB.
    let before = orders_by_source(&pool, "DB").await;
    wait_for("orders flow through the DB", Duration::from_secs(20), async || {
        orders_by_source(&pool, "DB").await > before + 300
    })
    .await;

    // The guided exit, with buyers still buying.
    let report = switch::guided_exit(&conns, &ExitOptions::new(Scope::Global, "drill over"), &|_| {}).await.unwrap();
    eprintln!("guided exit: paused {} ms, resume {:?}", report.paused_ms, report.resume.propagation_ms);
    assert!(report.not_back_on_redis.is_empty(), "{report:?}");
    assert_eq!(report.resume.applied, 3);
    let redis_before = orders_by_source(&pool, "REDIS").await;
    wait_for("orders flow through Redis again", Duration::from_secs(20), async || {
        orders_by_source(&pool, "REDIS").await > redis_before + 300
    })
    .await;

    let (accepted, answers) = buyers.stop().await;
    assert!(
        answers.iter().all(|&s| s == 202 || s == 503),
        "only accepted or briefly paused: {:?}",
        answers.iter().filter(|&&s| s != 202 && s != 503).take(5).collect::<Vec<_>>()
    );
    assert_nothing_lost(&pool, &conns, &accepted).await;
    assert_eq!(drift_of(&conns).await, Some(0));
    let audited: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action IN ('degrade.switch', 'degrade.exit')")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(audited, 4, "on, pause, normal, and the exit itself");
    stop_fleet(engines).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn redis_cut_off_mid_sale_trips_the_engines_and_the_guided_exit_brings_them_back_with_nothing_lost(
    pool: MySqlPool,
) {
    let redis = TestRedis::new("cut").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, STOCK, 1).await;
    let proxy = FaultProxy::start(support::redis_addr()).await.unwrap();
    let engines =
        fleet(&support::mysql_url_of(&pool).await, &format!("redis://{}/", proxy.addr()), redis.keys.prefix()).await;
    let buyers = Buyers::start(engines.iter().map(|e| e.url.clone()).collect(), 24);
    wait_for("orders flow through Redis", Duration::from_secs(20), async || buyers.accepted_count() > 300).await;

    // Redis goes away: new connections refused, the open ones cut.
    proxy.set(Fault::Refuse);
    proxy.cut();
    wait_for("every engine is on the DB path", Duration::from_secs(10), async || {
        engines.iter().all(|e| e.state.home_mode() == Mode::Degraded)
    })
    .await;
    let tripped = engines.iter().filter(|e| e.state.breaker.is_tripped()).count();
    assert!(tripped >= 1, "at least one breaker tripped by itself");
    wait_for("the trip is escalated to the shared switch", Duration::from_secs(5), async || {
        store::scopes(&pool)
            .await
            .unwrap()
            .iter()
            .any(|s| s.scope == Scope::Global && s.mode == Mode::Degraded && s.changed_by.starts_with("breaker:"))
    })
    .await;
    let before = orders_by_source(&pool, "DB").await;
    wait_for("the sale continues through the DB", Duration::from_secs(20), async || {
        orders_by_source(&pool, "DB").await > before + 300
    })
    .await;
    // Even an engine the shared switch took off Redis before its own breaker tripped finds
    // out, by probing, that it cannot reach Redis.
    wait_for("every engine reports Redis unreachable in its heartbeat", Duration::from_secs(10), async || {
        let ack = switch::acks::acknowledgement(&pool, 0, DEFAULT_STALE_AFTER).await.unwrap();
        ack.live == 3 && ack.instances.iter().all(|i| i.breaker_state == "OPEN")
    })
    .await;
    // The exit refuses while engines cannot reach Redis.
    let refused = switch::guided_exit(&conns, &ExitOptions::new(Scope::Global, "too early"), &|_| {}).await;
    assert!(matches!(refused, Err(switch::SwitchError::InstancesCannotReachRedis(_))), "{refused:?}");

    // Redis is back: breakers see it healthy, then the guided exit runs.
    proxy.set(Fault::PassThrough);
    wait_for("every engine reports Redis healthy in its heartbeat", Duration::from_secs(15), async || {
        let ack = switch::acks::acknowledgement(&pool, 0, DEFAULT_STALE_AFTER).await.unwrap();
        ack.live == 3 && ack.instances.iter().all(|i| i.breaker_state == "HALF_OPEN")
    })
    .await;
    let report =
        switch::guided_exit(&conns, &ExitOptions::new(Scope::Global, "Redis restored"), &|_| {}).await.unwrap();
    assert!(report.not_back_on_redis.is_empty(), "{report:?}");
    assert!(engines.iter().all(|e| !e.state.breaker.is_tripped() && e.state.home_mode() == Mode::Normal));
    let redis_before = orders_by_source(&pool, "REDIS").await;
    wait_for("orders flow through Redis again", Duration::from_secs(20), async || {
        orders_by_source(&pool, "REDIS").await > redis_before + 300
    })
    .await;

    let (accepted, _) = buyers.stop().await;
    assert_nothing_lost(&pool, &conns, &accepted).await;
    assert_eq!(drift_of(&conns).await, Some(0));
    stop_fleet(engines).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_slow_mysql_leaves_engines_on_their_last_known_mode_without_flapping(pool: MySqlPool) {
    let redis = TestRedis::new("slow").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, STOCK, 1).await;
    let mysql = url::Url::parse(&support::mysql_url_of(&pool).await).unwrap();
    let upstream = format!("127.0.0.1:{}", mysql.port().unwrap_or(3306)).parse().unwrap();
    let proxy = FaultProxy::start(upstream).await.unwrap();
    let mut through_proxy = mysql.clone();
    through_proxy.set_port(Some(proxy.addr().port())).unwrap();
    let engines = fleet(through_proxy.as_str(), &redis.url, redis.keys.prefix()).await;
    let person = Changer::person(&conns.settings).unwrap();

    for mode in [Mode::Degraded, Mode::Normal] {
        let change = store::set(&pool, &person, Scope::Global, mode, "slow MySQL drill").await.unwrap();
        wait_for("every engine applied the change", Duration::from_secs(5), async || {
            engines.iter().all(|e| e.state.switch_view().revision == change.revision)
        })
        .await;
        // MySQL turns slow (each chunk held 1 s, past the 400 ms switch read limit), and
        // meanwhile someone flips the switch: the engines cannot see it and must not guess.
        proxy.set(Fault::Latency(Duration::from_secs(1)));
        let other = if mode == Mode::Degraded { Mode::Normal } else { Mode::Degraded };
        let flipped = store::set(&pool, &person, Scope::Global, other, "unseen while slow").await.unwrap();
        let mut samples = 0;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while tokio::time::Instant::now() < deadline {
            for e in &engines {
                assert_eq!(e.state.home_mode(), mode, "an engine changed mode while MySQL was slow");
                samples += 1;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(samples > 100);
        // MySQL recovers: the engines catch up with the change they could not read.
        proxy.set(Fault::PassThrough);
        proxy.cut(); // drop connections stuck behind the slow ones
        wait_for("the engines apply the flip once MySQL answers", Duration::from_secs(15), async || {
            engines.iter().all(|e| e.state.switch_view().revision == flipped.revision && e.state.home_mode() == other)
        })
        .await;
    }
    stop_fleet(engines).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn every_change_is_a_new_revision_with_an_audit_row_and_viewers_cannot_change_it(pool: MySqlPool) {
    let redis = TestRedis::new("swst").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let person = Changer::person(&conns.settings).unwrap();
    let a = store::set(&pool, &person, Scope::Global, Mode::Degraded, "one").await.unwrap();
    let b = store::set(&pool, &person, Scope::Product(9), Mode::Degraded, "two").await.unwrap();
    let c = store::set(&pool, &person, Scope::Global, Mode::Normal, "three").await.unwrap();
    assert!(a.revision < b.revision && b.revision < c.revision);
    let view = store::read_view(&pool).await.unwrap();
    assert_eq!((view.revision, view.global_revision), (c.revision, c.revision));
    assert_eq!(view.mode_for(9), Mode::Degraded);
    assert_eq!(view.mode_for(10), Mode::Normal);
    let audit: Vec<(String, String, String)> =
        sqlx::query_as("SELECT target, reason, outcome FROM audit_log WHERE action = 'degrade.switch' ORDER BY id")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        audit,
        vec![
            ("global".into(), "one".into(), "DEGRADED".into()),
            ("product:9".into(), "two".into(), "DEGRADED".into()),
            ("global".into(), "three".into(), "NORMAL".into()),
        ]
    );
    assert!(matches!(
        store::set(&pool, &person, Scope::Global, Mode::Normal, " ").await,
        Err(switch::SwitchError::NoReason)
    ));
    let mut viewer = conns.settings.clone();
    viewer.role = stockguard_core::profile::Role::Viewer;
    assert!(matches!(Changer::person(&viewer), Err(switch::SwitchError::Refused(Refused::Role { .. }))));
    viewer.role = stockguard_core::profile::Role::Oncall;
    viewer.read_only = true;
    assert!(matches!(Changer::person(&viewer), Err(switch::SwitchError::Refused(Refused::ReadOnly { .. }))));
    // Two escalations of tripped breakers write one change.
    let first = store::escalate_breaker(&pool, Home::Sale, "e1", "5 timeouts").await.unwrap();
    let second = store::escalate_breaker(&pool, Home::Sale, "e2", "5 timeouts").await.unwrap();
    assert!(first.is_some() && second.is_none());
}

#[sqlx::test(migrations = "./migrations")]
async fn a_product_scope_sends_only_that_product_to_the_db_and_a_stale_instance_is_not_counted(pool: MySqlPool) {
    let redis = TestRedis::new("scope").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    sale::open_sale(&conns, PRODUCT, 100, 5).await;
    sale::open_sale(&conns, PRODUCT + 1, 100, 5).await;
    // An instance that stopped beating a minute ago.
    sqlx::query(
        "INSERT INTO engine_heartbeats (instance_id, listen_addr, started_at, last_seen) \
         VALUES ('gone', '10.0.0.9:8080', NOW(3) - INTERVAL 2 HOUR, NOW(3) - INTERVAL 60 SECOND)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let settings = ConnectionSettings::from_urls(
        EnvironmentKind::Sandbox,
        &support::mysql_url_of(&pool).await,
        &redis.url,
        redis.keys.prefix(),
    );
    let engine_conns = Connections::open(settings).await.unwrap();
    let state = EngineState::new(engine_conns.mysql, engine_conns.redis, engine_conns.keys, engine_config(0));
    let (url, stop, handle) = sale::spawn_engine(state).await;

    let toggled = switch::enter_db_mode(
        &conns,
        Scope::Product(PRODUCT + 1),
        "one product's Redis keys are suspect",
        Duration::from_secs(5),
        DEFAULT_STALE_AFTER,
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!((toggled.ack.applied, toggled.ack.live), (1, 1), "{:?}", toggled.ack);
    let gone = toggled.ack.instances.iter().find(|i| i.instance_id == "gone").expect("the stale instance is listed");
    assert!(!gone.live && !gone.applied);

    let client = reqwest::Client::new();
    for product in [PRODUCT, PRODUCT + 1] {
        let body = serde_json::json!({"user_id": 1, "product_id": product, "qty": 1, "idempotency_key": "a"});
        let resp = client.post(format!("{url}/orders")).json(&body).send().await.unwrap();
        assert_eq!(resp.status(), 202);
    }
    wait_for("both orders are in the DB", Duration::from_secs(10), async || {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(&pool).await.unwrap();
        n == 2
    })
    .await;
    let sources: Vec<(u64, String)> =
        sqlx::query_as("SELECT product_id, CAST(source AS CHAR) FROM orders ORDER BY product_id")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(sources, vec![(PRODUCT, "REDIS".to_string()), (PRODUCT + 1, "DB".to_string())]);
    // A global exit leaves the product held by its own row alone.
    let report = switch::guided_exit(&conns, &ExitOptions::new(Scope::Global, "global back"), &|_| {}).await.unwrap();
    assert_eq!(report.rewrites.iter().map(|r| r.product_id).collect::<Vec<_>>(), vec![PRODUCT]);
    let view = store::read_view(&pool).await.unwrap();
    assert_eq!((view.mode_for(PRODUCT), view.mode_for(PRODUCT + 1)), (Mode::Normal, Mode::Degraded));
    let _ = stop.send(());
    handle.await.unwrap();
}
