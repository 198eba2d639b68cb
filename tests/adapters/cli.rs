//! The CLI on a sale it did not build: through a SELECT-only account on the sale's database,
//! every command leaves the sale's tables as they were (issue 28), and a check that finds a
//! missing column says which in one line.

use std::process::{Command, Output};
use std::sync::Arc;

use sqlx::MySqlPool;

use crate::sales::course_stream::CourseStreamSale;
use crate::sales::go_counters::GoCountersSale;
use crate::sales::Traffic;

/// Runs the CLI with a config folder of its own and only the profile settings in `env`.
pub(crate) fn stockguard(args: &[&str], env: &[(&str, &str)]) -> Output {
    let config = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    cmd.args(args).env("STOCKGUARD_CONFIG_DIR", config.path());
    for k in crate::support::PROFILE_OVERRIDES {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The course sale's adapter file, written in `dir`, and the environment that reads the sale
/// through it: a SELECT-only account on the sale's database, `state` as Stockguard's own.
pub(crate) async fn adapter_env(
    sale: &CourseStreamSale,
    dir: &std::path::Path,
    state: &MySqlPool,
) -> Vec<(&'static str, String)> {
    let adapter = dir.join("sale.toml");
    std::fs::write(&adapter, sale.adapter_toml()).unwrap();
    vec![
        ("STOCKGUARD_MYSQL_URL", sale.db.select_only_url().await),
        ("STOCKGUARD_REDIS_URL", crate::support::redis_url()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox".into()),
        ("STOCKGUARD_ADAPTER", adapter.to_str().unwrap().into()),
        ("STOCKGUARD_STATE_URL", crate::support::mysql_url_of(state).await),
    ]
}

#[sqlx::test(migrations = false)]
async fn every_command_through_a_select_only_account_leaves_the_sales_tables_as_they_were(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    Traffic::buyers(10).on(&[1, 2]).run(&sale).await;
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let tables = sale.db.tables().await;
    let before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?")
        .bind(&sale.db.name)
        .fetch_one(&sale.db.pool)
        .await
        .unwrap();

    let check = stockguard(&["adapter", "check"], &env);
    let (out, err) = text(&check);
    assert!(check.status.success(), "{out}{err}");
    assert!(out.contains("orders per status"), "{out}");
    assert!(out.contains("everything the adapter names exists"), "{out}");
    for args in [
        &["adapter", "baseline", "--reason", "sale opens"][..],
        &["recon", "--json"],
        &["adapter", "repair", "--product", "1", "--dry-run"],
    ] {
        let run = stockguard(args, &env);
        let (out, err) = text(&run);
        // The dry run is refused (nothing to repair) or answers; neither writes.
        assert!(run.status.success() || err.contains("nothing to repair"), "{args:?}: {out}{err}");
        assert_eq!(sale.db.tables().await, tables, "{args:?} changed the sale's tables");
    }
    let recon = stockguard(&["recon", "--json"], &env);
    let readings: serde_json::Value = serde_json::from_slice(&recon.stdout).expect("recon --json prints JSON");
    for r in readings.as_array().unwrap() {
        assert_eq!(r["initial_source"], "baseline", "{r}");
        assert!(r.get("settled").is_some() && r.get("in_flight").is_some(), "{r}");
    }
    let after: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?")
        .bind(&sale.db.name)
        .fetch_one(&sale.db.pool)
        .await
        .unwrap();
    assert_eq!(before, after);
    let baselines: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM adapter_baselines").fetch_one(&state).await.unwrap();
    assert_eq!(baselines, 2, "the baselines are in the state database");

    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, sale.adapter_toml().replace("remaining = \"stock\"", "remaining = \"stok\"")).unwrap();
    let mut env = env.to_vec();
    env[3] = ("STOCKGUARD_ADAPTER", broken.to_str().unwrap());
    let check = stockguard(&["adapter", "check"], &env);
    let (_, err) = text(&check);
    assert!(!check.status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("has no column stok"), "{err}");
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn alerts_over_an_adapter_say_what_fires_and_commands_of_our_own_sale_refuse_the_file(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    Traffic::buyers(6).on(&[1, 2]).run(&sale).await;
    crate::support::waits::wait_for("the consumer drains the stream", std::time::Duration::from_secs(30), async || {
        sale.stream_backlog().await == 0
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let firing = |out: &Output| -> Vec<String> {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let alerts: serde_json::Value = serde_json::from_slice(&out.stdout).expect("alerts --json prints JSON");
        alerts.as_array().unwrap().iter().map(|a| format!("{} {}", a["key"], a["kind"])).collect()
    };
    assert_eq!(firing(&stockguard(&["alerts", "--json"], &env)), Vec::<String>::new(), "a clean sale: nothing fires");

    // A unit Redis took that no order holds: a settled REDIS_LOW on product 2, confirmed by two
    // readings, fires as a drift of that product and of no other.
    sale.lose_one_after_redis(2).await;
    let mut last = Vec::new();
    crate::support::waits::wait_for("the drift fires", std::time::Duration::from_secs(30), async || {
        last = firing(&stockguard(&["alerts", "--json"], &env));
        !last.is_empty()
    })
    .await;
    assert_eq!(last, ["\"drift:2\" \"DRIFT_CONFIRMED\""]);
    let watch = stockguard(&["drift", "watch", "--interval", "0.1", "--count", "2"], &env);
    let (out, err) = text(&watch);
    assert!(watch.status.success(), "{err}");
    assert!(out.contains("REDIS_LOW") && out.contains("confirmed drift (two agreeing readings): 2 REDIS_LOW"), "{out}");

    let (_, err) = text(&stockguard(&["alerts", "ack", "drift:2", "--reason", "mine"], &env));
    assert!(err.lines().count() == 1 && err.contains("not built yet"), "{err}");
    for command in [&["overview"][..], &["rewrite", "--product", "2", "--reason", "x"], &["migrate"]] {
        let run = stockguard(command, &env);
        let (_, err) = text(&run);
        assert!(!run.status.success(), "{command:?}");
        assert!(err.lines().count() == 1 && err.contains("reads only a sale Stockguard built"), "{command:?}: {err}");
    }
    sale.cleanup().await;
}

#[tokio::test]
async fn a_counters_only_sale_is_checked_read_and_alerted_on_with_no_mysql_url_at_all() {
    let sale = Arc::new(GoCountersSale::start(&[(41, 10), (42, 10)]).await);
    Traffic::buyers(24).on(&[41, 42]).run(&sale).await;
    sale.oversell(42, 2).await;
    let dir = tempfile::tempdir().unwrap();
    let adapter = dir.path().join("tickets.toml");
    std::fs::write(&adapter, sale.adapter_toml()).unwrap();
    let redis = crate::support::redis_url();
    // `stockguard` removes every profile override first: STOCKGUARD_MYSQL_URL is unset.
    let env = [
        ("STOCKGUARD_REDIS_URL", redis.as_str()),
        ("STOCKGUARD_ENVIRONMENT", "sandbox"),
        ("STOCKGUARD_ADAPTER", adapter.to_str().unwrap()),
    ];

    let check = stockguard(&["adapter", "check"], &env);
    let (out, err) = text(&check);
    assert!(check.status.success(), "{out}{err}");
    assert!(out.contains("everything the adapter names exists"), "{out}");

    let recon = stockguard(&["recon", "--json"], &env);
    let (out, err) = text(&recon);
    assert!(recon.status.success(), "{out}{err}");
    let readings: serde_json::Value = serde_json::from_str(&out).expect("recon --json prints JSON");
    let status = |id: u64| {
        readings.as_array().unwrap().iter().find(|r| r["product_id"] == id).map(|r| r["status"].clone()).unwrap()
    };
    assert_eq!((status(41), status(42)), (serde_json::json!("OK"), serde_json::json!("OVERSOLD")), "{out}");

    let alerts = stockguard(&["alerts", "--json"], &env);
    let (out, err) = text(&alerts);
    assert!(alerts.status.success(), "{out}{err}");
    let firing: serde_json::Value = serde_json::from_str(&out).expect("alerts --json prints JSON");
    let keys: Vec<&str> = firing.as_array().unwrap().iter().filter_map(|a| a["key"].as_str()).collect();
    assert_eq!(keys, ["oversold:42"], "{out}");

    // A file that names tables still wants the sale's MySQL URL, and says so in one line.
    let with_table = dir.path().join("with-table.toml");
    std::fs::write(
        &with_table,
        format!("{}\n[orders]\ntable = \"t\"\nproduct = \"p\"\nstatus = \"s\"\nlive = [1]\n", sale.adapter_toml()),
    )
    .unwrap();
    let env = [env[0], env[1], ("STOCKGUARD_ADAPTER", with_table.to_str().unwrap())];
    let refused = stockguard(&["recon"], &env);
    let (out, err) = text(&refused);
    assert!(!refused.status.success(), "{out}{err}");
    assert!(err.contains("STOCKGUARD_MYSQL_URL"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    sale.cleanup().await;
}
