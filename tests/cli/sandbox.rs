//! The sandbox: `up` reuses reachable servers or starts private ones, `down` stops only
//! those, and the seed puts one product in each drift status with the right numbers.

use crate::support;

use sqlx::MySqlPool;
use stockguard_core::profile::{EnvironmentKind, ProfileStore};
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_engine::sandbox::{self, process, seed, UpOptions, DEMO_PRODUCTS};
use support::TestRedis;

#[sqlx::test(migrations = "./migrations")]
async fn the_seed_puts_one_product_in_each_drift_status_with_the_right_numbers(pool: MySqlPool) {
    let redis = TestRedis::new("seed").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;

    let report = sandbox::seed(&conns, &mut |_| {}).await.expect("seed");

    let mut r = conns.redis.clone();
    let readings = read_products(&conns.mysql, &mut r, &conns.keys, &[]).await.unwrap();
    assert_eq!(readings.len(), DEMO_PRODUCTS.len());
    for demo in DEMO_PRODUCTS {
        let reading = readings.iter().find(|x| x.product_id == demo.id).unwrap();
        assert_eq!(reading.status, demo.status, "product {} {}", demo.id, demo.name);
    }
    let by_status = |s| readings.iter().find(|x| x.status == s).unwrap();
    assert_eq!(by_status(DriftStatus::RedisHigh).drift, Some(seed::SEEDED_REDIS_HIGH));
    assert_eq!(by_status(DriftStatus::RedisLow).drift, Some(seed::SEEDED_REDIS_LOW));
    assert_eq!(by_status(DriftStatus::KeyMissing).redis_stock, None);
    let ledger = by_status(DriftStatus::LedgerMismatch);
    assert_eq!(ledger.db_stock + ledger.live_orders_qty - ledger.initial_stock, seed::SEEDED_LEDGER_EDIT);
    let oversold = by_status(DriftStatus::Oversold);
    assert_eq!(oversold.live_orders_qty - oversold.initial_stock, seed::SEEDED_OVERSOLD);
    // The healthy products hold both identities of the contract.
    for ok in readings.iter().filter(|x| x.status == DriftStatus::Ok) {
        assert_eq!(ok.initial_stock, ok.db_stock + ok.live_orders_qty, "DB ledger of {}", ok.product_id);
        assert_eq!(ok.redis_stock, Some(ok.db_stock - ok.inflight_pending - ok.pending_release));
    }

    // Every order state is present, and some stock is in flight and some pending release.
    let states: Vec<String> = sqlx::query_scalar("SELECT DISTINCT CAST(status AS CHAR) FROM orders ORDER BY 1")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(states, ["CANCELLED", "CLOSED", "PAID", "WAIT_PAY"]);
    assert!(report.inflight > 0 && report.pending_releases > 0);
    assert!(readings.iter().any(|x| x.inflight_pending > 0) && readings.iter().any(|x| x.pending_release > 0));

    let audit = stockguard_core::audit::recent(&pool, Some("sandbox.seed"), 10).await.unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].id, report.audit_id);
}

#[sqlx::test(migrations = "./migrations")]
async fn seeding_twice_gives_the_same_sale(pool: MySqlPool) {
    let redis = TestRedis::new("seed2").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let first = sandbox::seed(&conns, &mut |_| {}).await.unwrap();
    let second = sandbox::seed(&conns, &mut |_| {}).await.unwrap();
    assert_eq!(first.orders, second.orders);
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(&pool).await.unwrap();
    assert_eq!(count as usize, second.orders);
}

#[sqlx::test(migrations = "./migrations")]
async fn seeding_refuses_anything_but_a_sandbox(pool: MySqlPool) {
    let redis = TestRedis::new("seedp").await;
    let conns = support::connections(&pool, &redis, EnvironmentKind::Production).await;
    let err = sandbox::seed(&conns, &mut |_| {}).await.unwrap_err();
    assert!(matches!(err, sandbox::SandboxError::NotSandbox(EnvironmentKind::Production)));
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM inventory").fetch_one(&pool).await.unwrap();
    assert_eq!(count, 0, "nothing was written");
}

#[tokio::test]
async fn sandbox_up_reuses_reachable_servers_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::env::var("DATABASE_URL").unwrap();
    let db = format!("sgt_up_{}", std::process::id());
    let mut url = url::Url::parse(&base).unwrap();
    url.set_path(&format!("/{db}"));
    let redis = TestRedis::new("up").await;
    let opts = UpOptions {
        dir: dir.path().to_path_buf(),
        mysql_url: url.to_string(),
        redis_url: redis.url.clone(),
        key_prefix: redis.keys.prefix().to_string(),
        profile_store: Some(dir.path().join("profiles.toml")),
        redis_cluster: false,
    };

    let report = sandbox::up(&opts, &mut |_| {}).await.expect("up");

    assert!(!report.mysql_private && !report.redis_private);
    let store = ProfileStore::load(&dir.path().join("profiles.toml")).unwrap();
    assert_eq!(store.get("sandbox").unwrap().environment, EnvironmentKind::Sandbox);
    let pool = MySqlPool::connect(url.as_str()).await.unwrap();
    let tables: Vec<String> = sqlx::query_scalar("SHOW TABLES").fetch_all(&pool).await.unwrap();
    assert!(tables.iter().any(|t| t == "inventory"), "migrated: {tables:?}");
    sqlx::query(&format!("DROP DATABASE `{db}`")).execute(&pool).await.unwrap();
    let down = sandbox::down(dir.path()).await.unwrap();
    assert!(!down.mysql_stopped && !down.redis_stopped, "down stops nothing it did not start");
}

#[tokio::test]
async fn sandbox_up_starts_private_servers_when_none_answer_and_down_stops_them() {
    let dir = tempfile::tempdir().unwrap();
    // Ports nothing listens on: the sandbox must start its own servers.
    let dead_mysql = process::free_port().unwrap();
    let dead_redis = process::free_port().unwrap();
    let opts = UpOptions {
        dir: dir.path().to_path_buf(),
        mysql_url: format!("mysql://root@127.0.0.1:{dead_mysql}/stockguard"),
        redis_url: format!("redis://127.0.0.1:{dead_redis}/"),
        key_prefix: "sg".into(),
        profile_store: Some(dir.path().join("profiles.toml")),
        redis_cluster: false,
    };

    let report = sandbox::up(&opts, &mut |_| {}).await.expect("up with private servers");
    let state = sandbox::state::SandboxState::load(dir.path()).unwrap();
    let (mysql, redis) = (state.mysql.clone().unwrap(), state.redis.clone().unwrap());
    let outcome = async {
        assert!(report.mysql_private && report.redis_private);
        assert!(process::is_ours(&mysql) && process::is_ours(&redis));

        // The private sale works end to end: seed it and read it back.
        let store = ProfileStore::load(&dir.path().join("profiles.toml")).unwrap();
        let profile = store.get("sandbox").unwrap().clone();
        let settings = stockguard_core::profile::ConnectionSettings::from_urls(
            EnvironmentKind::Sandbox,
            &profile.mysql_url,
            &profile.redis_url,
            &profile.key_prefix,
        );
        let conns = stockguard_core::connect::Connections::open(settings).await.unwrap();
        sandbox::seed(&conns, &mut |_| {}).await.unwrap();
        let mut r = conns.redis.clone();
        let readings = read_products(&conns.mysql, &mut r, &conns.keys, &[]).await.unwrap();
        assert_eq!(readings.len(), DEMO_PRODUCTS.len());

        // A second `up` finds its own servers still running and reuses them.
        let again = sandbox::up(&opts, &mut |_| {}).await.unwrap();
        assert_eq!(again.mysql_url, report.mysql_url);
    }
    .await;

    let down = sandbox::down(dir.path()).await.expect("down");
    assert!(down.mysql_stopped && down.redis_stopped);
    assert!(!process::is_alive(mysql.pid) && !process::is_alive(redis.pid));
    outcome
}

/// Every file `up` left in its folder, as text.
fn files_under(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            out.push((path.display().to_string(), text));
        }
    }
    out
}

#[tokio::test]
async fn sandbox_up_never_writes_a_urls_password_into_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::env::var("DATABASE_URL").unwrap();
    let db = format!("sgt_uppw_{}", std::process::id());
    let mut mysql = url::Url::parse(&base).unwrap();
    mysql.set_path(&format!("/{db}"));
    // Redis's `default` user without a password accepts any password given with its name:
    // the URL with a password reaches the shared Redis, as a real password would.
    let redis = TestRedis::new("uppw").await;
    let mut redis_url = url::Url::parse(&redis.url).unwrap();
    redis_url.set_username("default").unwrap();
    redis_url.set_password(Some("hunter2")).unwrap();
    let opts = UpOptions {
        dir: dir.path().to_path_buf(),
        mysql_url: mysql.to_string(),
        redis_url: redis_url.to_string(),
        key_prefix: redis.keys.prefix().to_string(),
        profile_store: Some(dir.path().join("profiles.toml")),
        redis_cluster: false,
    };

    let result = sandbox::up(&opts, &mut |_| {}).await;

    for (path, text) in files_under(dir.path()) {
        assert!(!text.contains("hunter2"), "{path} holds the password:\n{text}");
    }
    let err = result.expect_err("a URL with a password is refused");
    assert!(err.to_string().contains("password"), "{err}");
    let pool = MySqlPool::connect(&base).await.unwrap();
    sqlx::query(&format!("DROP DATABASE IF EXISTS `{db}`")).execute(&pool).await.unwrap();
}
