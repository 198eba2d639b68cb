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
    stockguard_in(config.path(), args, env)
}

/// Runs the CLI with the profiles of `config` and only the profile settings in `env`.
fn stockguard_in(config: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    cmd.args(args).env("STOCKGUARD_CONFIG_DIR", config);
    for k in crate::support::PROFILE_OVERRIDES {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The name the course sale's adapter file gives it.
fn sale_name(sale: &CourseStreamSale) -> String {
    stockguard_core::adapter::AdapterFile::parse(&sale.adapter_toml(), std::path::Path::new("sale.toml"))
        .expect("the course sale's adapter file parses")
        .sale
        .name
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
    adapter_env_of(&sale.adapter_toml(), &sale.db, dir, state).await
}

/// The environment that reads a sale through its adapter file `toml` (written in `dir`): a
/// SELECT-only account on the sale's database `db`, `state` as Stockguard's own.
pub(crate) async fn adapter_env_of(
    toml: &str,
    db: &crate::sales::SaleDb,
    dir: &std::path::Path,
    state: &MySqlPool,
) -> Vec<(&'static str, String)> {
    let adapter = dir.join("sale.toml");
    std::fs::write(&adapter, toml).unwrap();
    vec![
        ("STOCKGUARD_MYSQL_URL", db.select_only_url().await),
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
        alerts.as_array().unwrap().iter().map(|a| format!("{} {}", a["alert"]["key"], a["alert"]["kind"])).collect()
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

    // A viewer may not acknowledge (the catalogue's rule, asked in the core); on-call may, and
    // the acknowledgement is the state database's, under the sale's name.
    let mut as_viewer = env.clone();
    as_viewer.push(("STOCKGUARD_ROLE", "viewer"));
    let refused = stockguard(&["alerts", "ack", "drift:2", "--reason", "mine"], &as_viewer);
    let (_, err) = text(&refused);
    assert!(!refused.status.success() && err.lines().count() == 1, "{err}");
    assert!(err.contains("the viewer role may not acknowledge alerts"), "{err}");
    let ack = stockguard(&["alerts", "ack", "drift:2", "--reason", "looking at the lost order"], &env);
    let (out, err) = text(&ack);
    assert!(ack.status.success(), "{out}{err}");
    assert!(out.contains("acknowledged drift:2"), "{out}");
    let listed = stockguard(&["alerts", "--json"], &env);
    let states: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("alerts --json prints JSON");
    assert_eq!(states[0]["alert"]["key"], "drift:2", "{states}");
    assert_eq!(states[0]["acknowledged"]["reason"], "looking at the lost order", "{states}");
    let kept: Vec<(String, String)> = sqlx::query_as("SELECT sale, alert_key FROM alert_acks WHERE closed_at IS NULL")
        .fetch_all(&state)
        .await
        .unwrap();
    assert_eq!(kept, [(sale_name(&sale), "drift:2".to_string())]);
    let audited: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'alert.ack' AND target = ?")
        .bind(format!("sale:{}:drift:2", sale_name(&sale)))
        .fetch_one(&state)
        .await
        .unwrap();
    assert_eq!(audited, 1, "the acknowledgement is audited in the state database");
    // What only our own sale can do is refused in the core's words, naming the sale (issue 50);
    // `overview` reads this sale too now (tests/adapters/capabilities.rs).
    for command in [&["products"][..], &["migrate"]] {
        let run = stockguard(command, &env);
        let (_, err) = text(&run);
        assert!(!run.status.success(), "{command:?}");
        let says = format!("is not for the sale {:?}, read over its adapter file", sale_name(&sale));
        assert!(err.lines().count() == 1 && err.contains(&says), "{command:?}: {err}");
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
    let keys: Vec<&str> = firing.as_array().unwrap().iter().filter_map(|a| a["alert"]["key"].as_str()).collect();
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

#[sqlx::test(migrations = false)]
async fn a_profile_that_names_an_adapter_and_a_state_database_reads_that_sale_with_no_adapter_flag(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    Traffic::buyers(4).on(&[1, 2]).run(&sale).await;
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let adapter = dir.path().join("sale.toml");
    std::fs::write(&adapter, sale.adapter_toml()).unwrap();
    let state_url = crate::support::mysql_url_of(&state).await;
    let redis_url = crate::support::redis_url();
    let add = stockguard_in(
        config.path(),
        &[
            "profile",
            "add",
            "theirs",
            "--environment",
            "sandbox",
            "--mysql-url",
            &sale.db.url,
            "--redis-url",
            &redis_url,
            "--adapter",
            adapter.to_str().unwrap(),
            "--state-url",
            &state_url,
        ],
        &[],
    );
    let (out, err) = text(&add);
    assert!(add.status.success(), "{out}{err}");

    let baseline =
        stockguard_in(config.path(), &["--profile", "theirs", "adapter", "baseline", "--reason", "opens"], &[]);
    assert!(baseline.status.success(), "{}", text(&baseline).1);
    let recon = stockguard_in(config.path(), &["--profile", "theirs", "recon", "--json"], &[]);
    let (out, err) = text(&recon);
    assert!(recon.status.success(), "{out}{err}");
    let readings: serde_json::Value = serde_json::from_slice(&recon.stdout).expect("recon --json prints JSON");
    let products: Vec<u64> = readings.as_array().unwrap().iter().map(|r| r["product_id"].as_u64().unwrap()).collect();
    assert_eq!(products, [1, 2], "the adapter sale's products: {readings}");
    for r in readings.as_array().unwrap() {
        assert_eq!(r["initial_source"], "baseline", "the profile's state database holds the baselines: {r}");
        assert!(r["settled"].is_boolean() && r["in_flight"].is_i64(), "{r}");
    }

    // The environment comes before the profile: a broken file named there is the one read.
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, sale.adapter_toml().replace("remaining = \"stock\"", "remaining = \"stok\"")).unwrap();
    let check = stockguard_in(
        config.path(),
        &["--profile", "theirs", "adapter", "check"],
        &[("STOCKGUARD_ADAPTER", broken.to_str().unwrap())],
    );
    let (_, err) = text(&check);
    assert!(!check.status.success() && err.contains("has no column stok"), "{err}");
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn rewrite_over_an_adapter_runs_the_delta_repair_with_the_rewrites_rules(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    Traffic::buyers(6).on(&[1, 2]).run(&sale).await;
    crate::support::waits::wait_for("the consumer drains the stream", std::time::Duration::from_secs(30), async || {
        sale.stream_backlog().await == 0
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert!(stockguard(&["adapter", "baseline", "--reason", "sale opens"], &env).status.success());
    sale.lose_one_after_redis(2).await;
    let audited = async || -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'adapter_rewrite'")
            .fetch_one(&state)
            .await
            .unwrap()
    };

    // A reading is settled once nothing moved between its passes: the dry run answers then.
    let mut out = String::new();
    crate::support::waits::wait_for(
        "the dry run reads a settled drift",
        std::time::Duration::from_secs(30),
        async || {
            let dry = stockguard(&["rewrite", "--product", "2", "--reason", "look first", "--dry-run"], &env);
            out = text(&dry).0;
            dry.status.success()
        },
    )
    .await;
    assert!(out.contains("dry run: product 2 is REDIS_LOW by 1") && out.contains("leaving drift 0"), "{out}");
    assert!(out.contains("no lock or fencing token taken"), "{out}");
    assert_eq!(audited().await, 0, "a dry run writes nothing");

    let mut as_viewer = env.clone();
    as_viewer.push(("STOCKGUARD_ROLE", "viewer"));
    let mut on_production = env.clone();
    on_production.retain(|(k, _)| *k != "STOCKGUARD_ENVIRONMENT");
    let file = dir.path().join("sale.toml");
    let read_only = dir.path().join("read-only.toml");
    std::fs::write(
        &read_only,
        std::fs::read_to_string(&file).unwrap().replace("rewrite = \"delta\"", "rewrite = \"off\""),
    )
    .unwrap();
    let mut as_read_only = env.clone();
    as_read_only.retain(|(k, _)| *k != "STOCKGUARD_ADAPTER");
    as_read_only.push(("STOCKGUARD_ADAPTER", read_only.to_str().unwrap()));
    for (who, env, says) in [
        ("a viewer", &as_viewer, "the viewer role may not rewrite Redis stock"),
        ("production without the id typed again", &on_production, "--confirm 2"),
        ("a read-only adapter", &as_read_only, "add `[repair] rewrite = \"delta\"`"),
    ] {
        let run = stockguard(&["rewrite", "--product", "2", "--reason", "lost order"], env);
        let (_, err) = text(&run);
        assert!(!run.status.success(), "{who}");
        assert!(err.lines().count() == 1 && err.contains(says), "{who}: {err}");
    }
    assert_eq!(audited().await, 0, "nothing refused was written");

    // What runs is what was reviewed: the dry run printed the command with the drift it showed;
    // a drift other than the one now is refused and writes nothing; on production the drift
    // reviewed is required.
    assert!(
        out.contains("to apply what you reviewed: stockguard adapter repair --product 2 --expect-drift -1"),
        "{out}"
    );
    let mut on_production_confirmed = on_production.clone();
    on_production_confirmed.push(("STOCKGUARD_ROLE", "oncall"));
    let run =
        stockguard(&["rewrite", "--product", "2", "--confirm", "2", "--reason", "lost"], &on_production_confirmed);
    let (_, err) = text(&run);
    assert!(!run.status.success() && err.contains("--expect-drift"), "{err}");
    let stale = stockguard(&["rewrite", "--product", "2", "--expect-drift", "-5", "--reason", "lost order"], &env);
    let (_, err) = text(&stale);
    assert!(!stale.status.success(), "a drift other than the one reviewed is refused");
    assert!(err.contains("the settled drift is now -1, not the -5 you reviewed: nothing was written"), "{err}");
    assert_eq!(audited().await, 0, "nothing refused was written");

    let done = stockguard(&["rewrite", "--product", "2", "--expect-drift", "-1", "--reason", "lost order"], &env);
    let (out, err) = text(&done);
    assert!(done.status.success(), "{out}{err}");
    assert!(
        out.contains("product 2: the sale reads") && out.contains("(+1); drift now 0 (read back, audited)"),
        "{out}"
    );
    assert_eq!(audited().await, 1, "the repair is audited in the state database");
    crate::support::waits::wait_for("product 2 reads OK", std::time::Duration::from_secs(30), async || {
        let recon = stockguard(&["recon", "--json", "--product", "2"], &env);
        let readings: serde_json::Value = serde_json::from_slice(&recon.stdout).expect("recon --json prints JSON");
        readings[0]["status"] == "OK"
    })
    .await;
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn an_acknowledged_drift_stays_open_while_its_product_is_unsettled_and_closes_once_it_reads_settled_ok(
    state: MySqlPool,
) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    // A reading attributes at most two entries in flight: a third makes every product UNSETTLED.
    let file = dir.path().join("sale.toml");
    let text_of = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text_of.replacen("[sale]\n", "[sale]\nmax_inflight = 2\n", 1)).unwrap();
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let open_acks = async || -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM alert_acks WHERE closed_at IS NULL").fetch_one(&state).await.unwrap()
    };
    let alerts_json = |env: &[(&str, &str)]| -> serde_json::Value {
        let out = stockguard(&["alerts", "--json"], env);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("alerts --json prints JSON")
    };

    sale.lose_one_after_redis(2).await;
    crate::support::waits::wait_for("the drift fires", std::time::Duration::from_secs(30), async || {
        alerts_json(&env).as_array().is_some_and(|a| !a.is_empty())
    })
    .await;
    let ack = stockguard(&["alerts", "ack", "drift:2", "--reason", "looking at it"], &env);
    assert!(ack.status.success(), "{}", String::from_utf8_lossy(&ack.stderr));

    // Three orders wait in the stream: past the bound, every product is UNSETTLED, so the drift
    // alert does not fire; its absence proves nothing, and the acknowledgement stays open.
    sale.pause_consumer().await;
    Traffic::buyers(3).on(&[1]).run(&sale).await;
    let recon = stockguard(&["recon"], &env);
    let (out, _) = text(&recon);
    assert!(out.contains("product 2: UNSETTLED, 3 in flight: 3 in flight, past the 2 a reading reads"), "{out}");
    for _ in 0..2 {
        let listed = alerts_json(&env);
        assert_eq!(listed.as_array().map(Vec::len), Some(0), "no verdict while unsettled: {listed}");
        assert_eq!(open_acks().await, 1, "an UNSETTLED reading leaves the acknowledgement as it was");
    }

    // Settled again, the drift is still there: still acknowledged, not re-paged.
    sale.resume_consumer().await;
    crate::support::waits::wait_for("the consumer drains the stream", std::time::Duration::from_secs(30), async || {
        sale.stream_backlog().await == 0
    })
    .await;
    let listed = alerts_json(&env);
    assert_eq!(listed[0]["alert"]["key"], "drift:2", "{listed}");
    assert_eq!(listed[0]["acknowledged"]["reason"], "looking at it", "{listed}");

    // Repaired, the product reads settled with no drift: now the acknowledgement closes.
    let done = stockguard(&["adapter", "repair", "--product", "2", "--expect-drift", "-1", "--reason", "lost"], &env);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    crate::support::waits::wait_for("the acknowledgement closes", std::time::Duration::from_secs(30), async || {
        alerts_json(&env);
        open_acks().await == 0
    })
    .await;
    let why: String = sqlx::query_scalar("SELECT close_reason FROM alert_acks").fetch_one(&state).await.unwrap();
    assert_eq!(why, "cleared");
    sale.cleanup().await;
}

/// The timeline of a sale read over its adapter comes from the state database by the same core
/// path as our own sale's: its baseline, the drift acknowledged, the repair and the
/// acknowledgement closing, in order, with who and why.
#[sqlx::test(migrations = false)]
async fn the_timeline_of_a_sale_over_its_adapter_lists_its_baseline_acknowledgement_and_repair_in_order(
    state: MySqlPool,
) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 20), (2, 20)]).await);
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let ok = |args: &[&str]| -> String {
        let out = stockguard(args, &env);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    ok(&["adapter", "baseline", "--reason", "sale opens"]);
    sale.lose_one_after_redis(2).await;
    crate::support::waits::wait_for("the drift fires", std::time::Duration::from_secs(30), async || {
        ok(&["alerts", "--json"]).contains("drift:2")
    })
    .await;
    ok(&["alerts", "ack", "drift:2", "--reason", "looking at it"]);
    crate::support::waits::wait_for(
        "the repair runs on a settled drift",
        std::time::Duration::from_secs(30),
        async || {
            let args = ["adapter", "repair", "--product", "2", "--expect-drift", "-1", "--reason", "lost order"];
            stockguard(&args, &env).status.success()
        },
    )
    .await;
    crate::support::waits::wait_for("the acknowledgement closes", std::time::Duration::from_secs(30), async || {
        ok(&["alerts", "--json"]);
        let open: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM alert_acks WHERE closed_at IS NULL")
            .fetch_one(&state)
            .await
            .unwrap();
        open == 0
    })
    .await;

    let read: serde_json::Value = serde_json::from_str(&ok(&["timeline", "--since", "1h", "--json"])).unwrap();
    assert_eq!(read["sale"], sale_name(&sale), "{read:#}");
    let events = read["events"].as_array().unwrap();
    let said: Vec<(&str, &str, &str)> = events
        .iter()
        .map(|e| (e["kind"].as_str().unwrap(), e["reason"].as_str().unwrap(), e["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        vec![
            ("audit", "sale opens", "RECORDED"),
            ("alert_acknowledged", "looking at it", "ACKNOWLEDGED"),
            ("repair", "lost order", "APPLIED"),
            ("alert_ack_closed", "the alert cleared", "CLEARED"),
        ],
        "{read:#}"
    );
    assert_eq!(events[2]["product_id"], 2, "{read:#}");
    assert_eq!(events[2]["record"]["table"], "audit_log", "{read:#}");
    assert!(events.iter().all(|e| !e["actor"].as_str().unwrap().is_empty()), "{read:#}");
    assert!(events.iter().all(|e| e["audit_id"].is_u64()), "each one's audit row is linked: {read:#}");
    sale.cleanup().await;
}
