//! `stockguard degrade` over an adapter file (issue 29): the sale's own degrade flag, where its
//! `[switch]` section says the sale reads it, written and read back, audited in the state
//! database, by the switch's role rule and production's confirmation; refused in one line
//! without the section.

use std::process::Output;
use std::sync::Arc;

use sqlx::MySqlPool;

use crate::cli::{adapter_env, stockguard};
use crate::sales::course_stream::CourseStreamSale;
use crate::sales::redis_conn;

fn out(run: &Output) -> (String, String) {
    (String::from_utf8_lossy(&run.stdout).into_owned(), String::from_utf8_lossy(&run.stderr).into_owned())
}

/// Writes `text` as the adapter file and points the environment at it.
fn with_file<'a>(env: &[(&'a str, &'a str)], path: &'a std::path::Path, text: &str) -> Vec<(&'a str, &'a str)> {
    std::fs::write(path, text).unwrap();
    let mut env = env.to_vec();
    env.retain(|(k, _)| *k != "STOCKGUARD_ADAPTER");
    env.push(("STOCKGUARD_ADAPTER", path.to_str().unwrap()));
    env
}

fn status_json(env: &[(&str, &str)]) -> serde_json::Value {
    let run = stockguard(&["degrade", "status", "--json"], env);
    assert!(run.status.success(), "{:?}", out(&run));
    serde_json::from_slice(&run.stdout).expect("degrade status --json prints JSON")
}

#[sqlx::test(migrations = false)]
async fn degrade_over_an_adapter_with_a_redis_key_switch_turns_the_sales_own_flag_on_and_off_and_audits_each(
    state: MySqlPool,
) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 5)]).await);
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let base: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let key = format!("{}:seckill:degrade", sale.prefix);
    let toml = format!(
        "{}\n[switch]\nsource = \"redis_key\"\nkey = \"{key}\"\non = \"1\"\noff = \"0\"\n",
        sale.adapter_toml()
    );
    let path = dir.path().join("switch.toml");
    let env = with_file(&base, &path, &toml);
    let mut redis = redis_conn().await;
    let flag = async |redis: &mut redis::aio::MultiplexedConnection| -> Option<String> {
        redis::cmd("GET").arg(&key).query_async(redis).await.unwrap()
    };

    assert_eq!(status_json(&env)["mode"], "missing", "the sale never set its flag");
    let on = stockguard(&["degrade", "on", "--reason", "redis is flapping"], &env);
    let (text, err) = out(&on);
    assert!(on.status.success(), "{text}{err}");
    assert!(text.contains(&format!("(redis key {key}) is ON: reads \"1\" (was MISSING; audit ")), "{text}");
    assert_eq!(flag(&mut redis).await.as_deref(), Some("1"));
    let status = status_json(&env);
    assert_eq!(
        (&status["mode"], &status["value"], &status["location"]),
        (&"on".into(), &"1".into(), &key.clone().into())
    );

    let off = stockguard(&["degrade", "off", "--reason", "redis recovered"], &env);
    assert!(off.status.success(), "{:?}", out(&off));
    assert_eq!(flag(&mut redis).await.as_deref(), Some("0"));
    assert_eq!(status_json(&env)["mode"], "off");

    // The switch's role rule, with the role's own settings: a viewer may not, and nothing moves.
    let mut viewer = env.clone();
    viewer.push(("STOCKGUARD_ROLE", "viewer"));
    let refused = stockguard(&["degrade", "on", "--reason", "mine"], &viewer);
    let (_, err) = out(&refused);
    assert!(!refused.status.success());
    assert!(err.lines().count() == 1 && err.contains("the viewer role may not change the degrade switch"), "{err}");
    // Production: the scope typed again, or nothing is written.
    let mut production: Vec<(&str, &str)> =
        env.iter().filter(|(k, _)| *k != "STOCKGUARD_ENVIRONMENT").copied().collect();
    production.push(("STOCKGUARD_ENVIRONMENT", "production"));
    let unconfirmed = stockguard(&["degrade", "on", "--reason", "sale night"], &production);
    let (_, err) = out(&unconfirmed);
    assert!(!unconfirmed.status.success() && err.lines().count() == 1 && err.contains("--confirm global"), "{err}");
    assert_eq!(flag(&mut redis).await.as_deref(), Some("0"), "a refused switch writes nothing");
    let confirmed = stockguard(&["degrade", "on", "--reason", "sale night", "--confirm", "global"], &production);
    assert!(confirmed.status.success(), "{:?}", out(&confirmed));
    assert_eq!(flag(&mut redis).await.as_deref(), Some("1"));

    let audited: Vec<(String, String)> =
        sqlx::query_as("SELECT outcome, reason FROM audit_log WHERE action = 'adapter_switch' ORDER BY id")
            .fetch_all(&state)
            .await
            .unwrap();
    let expected = [("ON", "redis is flapping"), ("OFF", "redis recovered"), ("ON", "sale night")];
    assert_eq!(audited, expected.map(|(o, r)| (o.to_string(), r.to_string())), "each change, in the state database");
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn degrade_over_an_adapter_without_a_switch_section_refuses_in_one_line_saying_why(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 5)]).await);
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for args in [&["degrade", "on", "--reason", "x"][..], &["degrade", "off", "--reason", "x"], &["degrade", "status"]]
    {
        let run = stockguard(args, &env);
        let (_, err) = out(&run);
        assert!(!run.status.success(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("has no [switch] section"), "{args:?}: {err}");
    }
    let audited: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log").fetch_one(&state).await.unwrap();
    assert_eq!(audited, 0, "nothing was switched");
    sale.cleanup().await;
}

#[sqlx::test(migrations = false)]
async fn a_db_row_switch_needs_a_write_account_the_select_only_one_fails_naming_the_step(state: MySqlPool) {
    let sale = Arc::new(CourseStreamSale::start(&[(1, 5)]).await);
    // The sale's own settings table, where its code reads the flag.
    for sql in [
        "CREATE TABLE sys_config (name VARCHAR(64) PRIMARY KEY, value VARCHAR(16) NOT NULL)",
        "INSERT INTO sys_config VALUES ('seckill.degrade', 'false')",
    ] {
        sqlx::query(sql).execute(&sale.db.pool).await.unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let owned = adapter_env(&sale, dir.path(), &state).await;
    let base: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let toml = format!(
        "{}\n[switch]\nsource = \"db_row\"\ntable = \"sys_config\"\nkey_column = \"name\"\nkey = \"seckill.degrade\"\n\
         flag = \"value\"\non = \"true\"\noff = \"false\"\n",
        sale.adapter_toml()
    );
    let path = dir.path().join("switch.toml");
    let select_only = with_file(&base, &path, &toml);
    let row = async || -> String {
        sqlx::query_scalar("SELECT value FROM sys_config WHERE name = 'seckill.degrade'")
            .fetch_one(&sale.db.pool)
            .await
            .unwrap()
    };

    assert_eq!(status_json(&select_only)["mode"], "off", "the SELECT-only account reads the flag");
    let run = stockguard(&["degrade", "on", "--reason", "db only"], &select_only);
    let (_, err) = out(&run);
    assert!(!run.status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the sale's database: cannot write the switch row (it needs an UPDATE grant)"), "{err}");
    assert_eq!(row().await, "false");

    let mut writer: Vec<(&str, &str)> =
        select_only.iter().filter(|(k, _)| *k != "STOCKGUARD_MYSQL_URL").copied().collect();
    writer.push(("STOCKGUARD_MYSQL_URL", sale.db.url.as_str()));
    let run = stockguard(&["degrade", "on", "--reason", "db only"], &writer);
    assert!(run.status.success(), "{:?}", out(&run));
    assert_eq!(row().await, "true");
    assert_eq!(status_json(&writer)["mode"], "on");
    sale.cleanup().await;
}
