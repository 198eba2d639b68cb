//! Stopping a drill from outside: a halt asked from another process ends every fault within
//! five seconds; a runner killed with SIGKILL leaves no fault behind once its lease runs out,
//! no engine process behind, is ended DEAD by the next look once its heartbeat outlived its
//! lease, and (killed once its breakers tripped) leaves only its own rig in DB mode, and that
//! only until its lease runs out.

use std::process::Stdio;
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::drills::{RunStatus, STALE_AFTER};
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::switch::{self, ExitOptions, Scope};
use tokio::process::{Child, Command};

use crate::rig::{self, LONG_FAULT};
use crate::support::waits::wait_for;
use crate::support::{self, TestRedis, PROFILE_OVERRIDES};

/// The `stockguard` CLI against this test's database and key prefix.
async fn cli(pool: &MySqlPool, redis: &TestRedis, args: &[&str]) -> Command {
    let mut cmd = Command::new(rig::binary());
    for var in PROFILE_OVERRIDES {
        cmd.env_remove(var);
    }
    cmd.args(args)
        .env("STOCKGUARD_MYSQL_URL", support::mysql_url_of(pool).await)
        .env("STOCKGUARD_REDIS_URL", &redis.url)
        .env("STOCKGUARD_KEY_PREFIX", redis.keys.prefix())
        .env("STOCKGUARD_ENVIRONMENT", "sandbox")
        .env("STOCKGUARD_ACTOR", "facilitator")
        .env("STOCKGUARD_ROLE", "facilitator")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// A runner process of the long-fault drill, driving the test's proxy service.
async fn runner(pool: &MySqlPool, redis: &TestRedis, api: &str, dir: &tempfile::TempDir) -> Child {
    let file = dir.path().join("long-fault.toml");
    std::fs::write(&file, LONG_FAULT).unwrap();
    let log = std::fs::File::create(dir.path().join("runner.log")).unwrap();
    cli(pool, redis, &["drill", "run", file.to_str().unwrap(), "--proxy-api", api])
        .await
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the runner starts")
}

async fn run_status(pool: &MySqlPool) -> Option<String> {
    sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM drill_runs ORDER BY id DESC LIMIT 1")
        .fetch_optional(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_halt_from_another_process_ends_every_fault_within_five_seconds(pool: MySqlPool) {
    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("halt").await;
    let (api, proxies) = rig::proxy_service(Duration::from_secs(30)).await;
    let dir = tempfile::tempdir().unwrap();
    let mut runner = runner(&pool, &redis, &api, &dir).await;
    assert!(rig::within(Duration::from_secs(60), || rig::faulted(&proxies)).await.is_some(), "the fault was injected");

    let halted =
        cli(&pool, &redis, &["drill", "halt", "--reason", "the drill hurt a real sale"]).await.output().await.unwrap();
    assert!(halted.status.success(), "{}", String::from_utf8_lossy(&halted.stderr));
    let ended = rig::within(Duration::from_secs(10), || rig::clean(&proxies)).await.expect("every fault ended");
    assert!(ended <= Duration::from_secs(5), "the faults ended {ended:?} after the halt");

    let exit = tokio::time::timeout(Duration::from_secs(60), runner.wait()).await.expect("the runner ends").unwrap();
    assert!(!exit.success(), "a halted drill is not a passed one");
    assert_eq!(run_status(&pool).await.as_deref(), Some(RunStatus::Halted.as_str()));
    let audited = support::scalar(&pool, "SELECT COUNT(*) FROM audit_log WHERE action = 'drill.halt'").await;
    assert_eq!(audited, 1);
}

#[cfg(unix)]
#[sqlx::test(migrations = "./migrations")]
async fn a_runner_killed_mid_drill_leaves_no_fault_after_its_lease_and_shows_dead(pool: MySqlPool) {
    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("kill").await;
    let lease = Duration::from_secs(2);
    let (api, proxies) = rig::proxy_service(lease).await;
    let dir = tempfile::tempdir().unwrap();
    let mut runner = runner(&pool, &redis, &api, &dir).await;
    assert!(rig::within(Duration::from_secs(60), || rig::faulted(&proxies)).await.is_some(), "the fault was injected");
    let engines: Vec<String> =
        sqlx::query_scalar("SELECT listen_addr FROM engine_heartbeats").fetch_all(&pool).await.unwrap();
    assert!(!engines.is_empty(), "the runner's engines beat");

    runner.start_kill().unwrap();
    runner.wait().await.unwrap();
    // Still faulted right after (nobody restored anything) ...
    assert!(rig::faulted(&proxies), "a killed runner restores nothing itself");
    // ... and clean once the lease ran out (the service sweeps every tenth of a lease).
    let ended = rig::within(lease * 3, || rig::clean(&proxies)).await.expect("the fault ended with its lease");
    assert!(ended <= lease + Duration::from_millis(500), "the fault outlived its lease: {ended:?}");
    // No engine of the dead runner is left serving.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for addr in &engines {
        assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "engine {addr} outlived its runner");
    }

    // Once its heartbeat outlived the runner's lease, `drill status` ends the run DEAD.
    wait_for("drill status shows the run dead", STALE_AFTER * 3, async || {
        let runs = drill_status(&pool, &redis).await;
        runs[0]["status"] == "DEAD" && runs[0]["dead"] == true
    })
    .await;
}

/// What `drill status --json` says (and clears, as every look does).
async fn drill_status(pool: &MySqlPool, redis: &TestRedis) -> serde_json::Value {
    let shown = cli(pool, redis, &["drill", "status", "--json"]).await.output().await.unwrap();
    assert!(shown.status.success(), "{}", String::from_utf8_lossy(&shown.stderr));
    serde_json::from_slice(&shown.stdout).unwrap()
}

/// What `degrade status --json` says (and clears, as every look does).
async fn degrade_status(pool: &MySqlPool, redis: &TestRedis) -> serde_json::Value {
    let shown = cli(pool, redis, &["degrade", "status", "--json"]).await.output().await.unwrap();
    assert!(shown.status.success(), "{}", String::from_utf8_lossy(&shown.stderr));
    serde_json::from_slice(&shown.stdout).unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_runner_killed_once_its_breakers_tripped_leaves_the_sale_out_of_db_mode_and_its_rig_row_lapses_with_its_lease(
    pool: MySqlPool,
) {
    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("killdb").await;
    // The sale beside the drill: one product of its own, on sale in Redis.
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) VALUES (1, 'sale', 10, 10, 1)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let mut r = redis.conn().await;
    let _: () = redis::cmd("SET").arg(redis.keys.stock(1)).arg(10).query_async(&mut r).await.unwrap();
    let mut runner = cli(&pool, &redis, &["drill", "run", "redis-down", "--short", "0.3"])
        .await
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the runner starts");
    let tripped = "SELECT COUNT(*) FROM degrade_switch WHERE scope LIKE 'rig:%' AND mode = 'DEGRADED'";
    wait_for("a breaker of the drill escalated", Duration::from_secs(90), async || {
        support::scalar(&pool, tripped).await == 1
    })
    .await;
    runner.start_kill().unwrap();
    runner.wait().await.unwrap();

    // Only the dead drill's rig is in DB mode: the sale's switch was never touched.
    let sale_rows = support::scalar(&pool, "SELECT COUNT(*) FROM degrade_switch WHERE scope NOT LIKE 'rig:%'").await;
    assert_eq!(sale_rows, 0, "the drill left the sale's switch changed");
    // While the runner's lease runs, a look leaves its rig's row as the breakers put it ...
    let beat_age = "SELECT TIMESTAMPDIFF(MICROSECOND, heartbeat_at, NOW(3)) FROM drill_runs";
    let young = Duration::from_micros(support::scalar(&pool, beat_age).await.try_into().unwrap());
    let status = degrade_status(&pool, &redis).await;
    if young < STALE_AFTER - Duration::from_secs(2) {
        assert_eq!(status["scopes"][0]["mode"], "DEGRADED", "{status}");
    }
    // ... and once the lease ran out, the next look ends the run DEAD and the rig's row lapses.
    let rig_in_force = "SELECT COUNT(*) FROM degrade_switch WHERE scope LIKE 'rig:%' AND mode <> 'NORMAL'";
    wait_for("the dead drill's rig row lapsed", STALE_AFTER * 3, async || {
        degrade_status(&pool, &redis).await;
        support::scalar(&pool, rig_in_force).await == 0
    })
    .await;
    // The lease runs from the runner's last heartbeat (which, on a loaded machine, can be
    // seconds before the kill), so the lapse is measured from it, on the database's clock.
    let after_beat = "SELECT TIMESTAMPDIFF(MICROSECOND, r.heartbeat_at, a.at) FROM drill_runs r \
                      JOIN audit_log a ON a.action = 'degrade.switch' AND a.target LIKE 'rig:%' \
                      AND a.outcome = 'NORMAL'";
    let lapsed = Duration::from_micros(support::scalar(&pool, after_beat).await.try_into().unwrap());
    assert!(lapsed >= STALE_AFTER, "the row lapsed {lapsed:?} after the last heartbeat, before the lease ran out");
    assert_eq!(run_status(&pool).await.as_deref(), Some(RunStatus::Dead.as_str()));
    // A heartbeat-free, switch-free sale: no engine's heartbeat, no row in force, the sale's
    // never set.
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM engine_heartbeats").await, 0);
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM degrade_switch WHERE mode <> 'NORMAL'").await, 0);
    let sale_rows = support::scalar(&pool, "SELECT COUNT(*) FROM degrade_switch WHERE scope NOT LIKE 'rig:%'").await;
    assert_eq!(sale_rows, 0, "the lapse left the sale's switch changed");
    let audited = "SELECT COUNT(*) FROM audit_log WHERE action = 'drill.dead' OR \
                   (action = 'degrade.switch' AND target LIKE 'rig:%' AND outcome = 'NORMAL')";
    assert_eq!(support::scalar(&pool, audited).await, 2, "the run's end and its row's lapse are audited");
    // The sale's own guided exit is held neither by the dead engines' breakers nor by the
    // reservations they left in flight.
    let conns = support::connections(&pool, &redis, EnvironmentKind::Sandbox).await;
    let exit = ExitOptions::new(Scope::Global, "tests: the sale after a dead drill");
    let report =
        switch::guided_exit(&conns, &exit, &|_| {}).await.expect("the sale's exit is not held by the dead drill");
    let rebuilt: Vec<u64> = report.rewrites.iter().map(|r| r.product_id).collect();
    assert_eq!(rebuilt, vec![1], "the sale's exit rebuilt the sale's product only");
}
