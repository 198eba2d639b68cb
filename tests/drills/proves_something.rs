//! A drill passes only when it proved something (issue 51, items 5 and 6): a run with no
//! fault, a fault that did not bite, or a rig whose engine never came back is not `PASSED`;
//! a file whose schedule cannot be drawn, or whose fault outlives its load, is refused when
//! it is read, in one line naming the field, before anything is put on sale.

use std::process::Stdio;
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::drills::plan::Plan;
use stockguard_core::drills::RunStatus;
use stockguard_core::profile::EnvironmentKind;
use stockguard_engine::drill::runner::{self, RunOutcome, Variant};

use crate::rig;
use crate::support::{self, TestRedis, PROFILE_OVERRIDES};

/// One engine, one product that does not sell out, a short steady load; `faults` appended.
fn drill(name: &str, guided_exit: bool, faults: &str) -> String {
    format!(
        r#"
name = "{name}"
title_en = "A drill for the proof checks"
title_zh = "验证检查用演练"
description = "For tests: does the run prove anything?"
guided_exit = {guided_exit}
drain_s = 10

[rig]
engines = 1
products = [{{ stock = 5000, per_user_limit = 1 }}]

[load]
buyers = 800
rate = 100
duration_s = 8
seed = 51
{faults}"#
    )
}

/// Runs a drill file on the test's database and key prefix, in its short form (x0.75).
async fn run(pool: &MySqlPool, redis: &TestRedis, text: &str) -> RunOutcome {
    let conns = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    let opts = rig::options(text, Variant { short: Some(0.75), ..Variant::default() }, None);
    runner::run(&conns, opts, &|_| {}).await.expect("the drill runs to its end")
}

fn reason(outcome: &RunOutcome) -> String {
    outcome.summary.reason.clone().unwrap_or_default()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_drill_with_no_faults_is_inconclusive_because_no_fault_ran(pool: MySqlPool) {
    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("nofault").await;
    let outcome = run(&pool, &redis, &drill("test-no-fault", true, "")).await;
    assert_eq!(outcome.status, RunStatus::Inconclusive, "{:?}", outcome.summary.checks);
    assert!(reason(&outcome).contains("no fault ran"), "{}", reason(&outcome));
    let stored: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM drill_runs WHERE id = ?")
        .bind(outcome.run_id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(stored, "INCONCLUSIVE", "the run is kept as it ended");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_one_millisecond_redis_latency_that_did_not_bite_is_inconclusive_with_the_reason(pool: MySqlPool) {
    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("nobite").await;
    let fault = r#"
[[faults]]
name = "1 ms on every Redis reply"
target = "redis"
action = "latency"
at_s = 3
for_s = 3
latency_ms = 1
"#;
    let outcome = run(&pool, &redis, &drill("test-no-bite", true, fault)).await;
    assert_eq!(outcome.status, RunStatus::Inconclusive, "{:?}", outcome.summary.checks);
    let why = reason(&outcome);
    assert!(why.contains("did not take effect") && why.contains("1 ms on every Redis reply"), "{why}");
    let check = outcome.summary.checks.iter().find(|c| c.name == "fault_took_effect").expect("the check is shown");
    assert!(!check.passed && check.figure.contains("did not bite"), "{check:?}");
    // The drift allowance is said beside the drift check, scaled with the short form.
    let drift = outcome.summary.checks.iter().find(|c| c.name == "no_drift_outside_faults").unwrap();
    assert!(drift.bound.contains("7.5 s recovery allowance"), "{drift:?}");
}

/// The rig's engine processes (children of this test process, which runs the runner).
#[cfg(target_os = "linux")]
fn rig_engines() -> Vec<i32> {
    let me = std::process::id().to_string();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid ...
        let ppid = stat.rsplit_once(") ").and_then(|(_, rest)| rest.split(' ').nth(1)).unwrap_or("");
        let cmdline = std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default();
        if ppid == me && cmdline.contains("serve\0") && cmdline.contains("--instance-id\0drill") {
            pids.push(pid);
        }
    }
    pids
}

#[cfg(target_os = "linux")]
#[sqlx::test(migrations = "./migrations")]
async fn an_engine_stop_after_which_the_engine_never_came_back_is_not_passed(pool: MySqlPool) {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;

    let _slot = rig::one_at_a_time().await;
    let redis = TestRedis::new("notback").await;
    let fault = r#"
[[faults]]
name = "the only engine stopped"
target = "engine"
action = "stop"
at_s = 2
for_s = 1
"#;
    // Once the runner has continued the engine, it is stopped again for good: it never
    // comes back (what the newcomer's run did, by whatever cause).
    let watcher = {
        let pool = pool.clone();
        tokio::spawn(async move {
            loop {
                let restored: i64 =
                    sqlx::query_scalar("SELECT COUNT(*) FROM drill_events WHERE kind = 'fault_restored'")
                        .fetch_one(&pool)
                        .await
                        .unwrap();
                if restored > 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let engines = rig_engines();
            assert_eq!(engines.len(), 1, "the rig's one engine is found");
            kill(Pid::from_raw(engines[0]), Signal::SIGSTOP).unwrap();
        })
    };
    let outcome = run(&pool, &redis, &drill("test-not-back", false, fault)).await;
    watcher.await.expect("the engine was stopped for good");
    assert_ne!(outcome.status, RunStatus::Passed);
    assert!(matches!(outcome.status, RunStatus::Inconclusive | RunStatus::Failed), "{:?}", outcome.status);
    let why = reason(&outcome);
    assert!(why.contains("the rig's engines were not back at the end"), "{why}");
    let back = outcome.summary.checks.iter().find(|c| c.name == "engines_back_at_end").expect("the check is shown");
    assert!(!back.passed && back.figure.contains("1 unheard"), "{back:?}");
}

/// `stockguard drill run FILE` on the test's database and key prefix: its exit and stderr.
async fn cli_run(pool: &MySqlPool, redis: &TestRedis, text: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("drill.toml");
    std::fs::write(&file, text).unwrap();
    let mut cmd = tokio::process::Command::new(rig::binary());
    for var in PROFILE_OVERRIDES {
        cmd.env_remove(var);
    }
    let out = cmd
        .args(["drill", "run", file.to_str().unwrap()])
        .env("STOCKGUARD_MYSQL_URL", support::mysql_url_of(pool).await)
        .env("STOCKGUARD_REDIS_URL", &redis.url)
        .env("STOCKGUARD_KEY_PREFIX", redis.keys.prefix())
        .env("STOCKGUARD_ENVIRONMENT", "sandbox")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out).await.expect("refused at once").unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).trim().to_string())
}

/// Nothing was begun and nothing put on sale.
async fn nothing_on_sale(pool: &MySqlPool) {
    assert_eq!(support::scalar(pool, "SELECT COUNT(*) FROM drill_runs").await, 0, "no run begun");
    assert_eq!(support::scalar(pool, "SELECT COUNT(*) FROM inventory WHERE rig IS NOT NULL").await, 0);
}

#[sqlx::test(migrations = "./migrations")]
async fn ten_billion_buyers_are_refused_when_the_file_is_read_in_one_line_naming_load_buyers(pool: MySqlPool) {
    let redis = TestRedis::new("bigload").await;
    let text = drill("test-big-load", true, "").replace("buyers = 800", "buyers = 10000000000");
    // Checked before the CLI runs it: on a file the parser accepts, the runner would draw ten
    // billion requests.
    let err = Plan::parse(&text).expect_err("refused when read").to_string();
    assert!(err.contains("load.buyers") && !err.contains('\n'), "{err}");
    let (ok, stderr) = cli_run(&pool, &redis, &text).await;
    assert!(!ok, "refused");
    assert!(stderr.contains("load.buyers") && stderr.lines().count() == 1, "{stderr}");
    nothing_on_sale(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_fault_running_29_s_past_the_load_is_refused_when_the_file_is_read_in_one_line(pool: MySqlPool) {
    let redis = TestRedis::new("pastload").await;
    let fault = r#"
[[faults]]
name = "Redis cut past the load"
target = "redis"
action = "down"
at_s = 4
for_s = 33
"#;
    let text = drill("test-past-load", true, fault);
    let err = Plan::parse(&text).expect_err("refused when read").to_string();
    assert!(err.contains("for_s = 33") && err.contains("29 s past the load's end") && !err.contains('\n'), "{err}");
    let (ok, stderr) = cli_run(&pool, &redis, &text).await;
    assert!(!ok, "refused");
    assert!(stderr.contains("for_s = 33") && stderr.lines().count() == 1, "{stderr}");
    nothing_on_sale(&pool).await;
}
