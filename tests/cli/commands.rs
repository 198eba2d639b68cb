//! The CLI's answers to bad input: one clear line on stderr, a non-zero exit, no panic.

use std::process::{Command, Output};

use crate::support;

pub(crate) fn stockguard(args: &[&str], env: &[(&str, &str)]) -> Output {
    let config = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stockguard"));
    cmd.args(args).env("STOCKGUARD_CONFIG_DIR", config.path()).env("RUST_BACKTRACE", "1");
    for k in support::PROFILE_OVERRIDES {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Asserts a failure with exactly one line on stderr that contains `needle`.
pub(crate) fn assert_one_line_error(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected failure, got success: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line, got: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(lines[0].contains(needle), "`{needle}` not in: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("stack backtrace"), "{stderr}");
}

#[test]
fn an_unknown_profile_is_named_in_a_one_line_error() {
    let out = stockguard(&["--profile", "nope", "products"], &[]);
    assert_one_line_error(&out, "unknown profile `nope`");
}

#[test]
fn no_profile_at_all_says_how_to_get_one() {
    let out = stockguard(&["products"], &[]);
    assert_one_line_error(&out, "no profile chosen");
}

#[test]
fn an_unreachable_mysql_is_reported_as_unreachable() {
    let port = support::free_port();
    let mysql = format!("mysql://root@127.0.0.1:{port}/x");
    let out = stockguard(
        &["products"],
        &[("STOCKGUARD_MYSQL_URL", &mysql), ("STOCKGUARD_REDIS_URL", "redis://127.0.0.1:6379/")],
    );
    assert_one_line_error(&out, "cannot reach MySQL");
}

#[test]
fn an_unreachable_redis_is_reported_as_unreachable() {
    let port = support::free_port();
    let redis = format!("redis://127.0.0.1:{port}/");
    let mysql = std::env::var("DATABASE_URL").unwrap();
    let out = stockguard(&["products"], &[("STOCKGUARD_MYSQL_URL", &mysql), ("STOCKGUARD_REDIS_URL", &redis)]);
    assert_one_line_error(&out, "cannot reach Redis");
}

#[test]
fn a_malformed_url_is_reported_without_its_password() {
    let out = stockguard(
        &["products"],
        &[("STOCKGUARD_MYSQL_URL", "mysql//root:hunter2@db"), ("STOCKGUARD_REDIS_URL", "redis://x/")],
    );
    assert_one_line_error(&out, "malformed MySQL URL");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("hunter2"));
}

#[test]
fn a_profile_with_a_password_in_its_url_is_not_saved() {
    let out = stockguard(
        &[
            "profile",
            "add",
            "p1",
            "--environment",
            "staging",
            "--mysql-url",
            "mysql://u:pw@db/sale",
            "--redis-url",
            "redis://c/",
        ],
        &[],
    );
    assert_one_line_error(&out, "must not hold a password");
}

#[test]
fn a_bad_key_prefix_override_is_refused() {
    let out = stockguard(
        &["products"],
        &[
            ("STOCKGUARD_MYSQL_URL", "mysql://root@127.0.0.1/x"),
            ("STOCKGUARD_REDIS_URL", "redis://x/"),
            ("STOCKGUARD_KEY_PREFIX", "a b"),
        ],
    );
    assert_one_line_error(&out, "invalid key prefix");
}

#[test]
fn engine_serve_degraded_is_refused_with_a_pointer_to_the_shared_switch() {
    let out = stockguard(&["engine", "serve", "--degraded", "--listen", "127.0.0.1:0"], &[]);
    assert_one_line_error(&out, "stockguard degrade on");
}

#[test]
fn the_fault_proxy_refuses_to_listen_where_other_machines_reach_it_unless_told() {
    let out = stockguard(&["drill", "proxy", "serve", "--listen", "0.0.0.0:0"], &[]);
    assert_one_line_error(&out, "has no authentication");
}

/// A sale of 3,000 products in this test's own database, as environment for the CLI.
async fn a_sale_of_3000_products(pool: &sqlx::MySqlPool) -> Vec<(&'static str, String)> {
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit) \
         SELECT seq, CONCAT('product ', seq), 10, 10, 5 FROM seq_1_to_3000",
    )
    .execute(pool)
    .await
    .unwrap();
    sale_env(pool).await
}

/// The environment that points the CLI at this test's database and the test Redis.
pub(crate) async fn sale_env(pool: &sqlx::MySqlPool) -> Vec<(&'static str, String)> {
    let (db,): (String,) = sqlx::query_as("SELECT DATABASE()").fetch_one(pool).await.unwrap();
    let mut url = url::Url::parse(&std::env::var("DATABASE_URL").unwrap()).unwrap();
    url.set_path(&format!("/{db}"));
    let redis = std::env::var("STOCKGUARD_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    vec![
        ("STOCKGUARD_MYSQL_URL", url.to_string()),
        ("STOCKGUARD_REDIS_URL", redis),
        ("STOCKGUARD_KEY_PREFIX", format!("cli{}", std::process::id())),
        ("STOCKGUARD_ENVIRONMENT", "sandbox".into()),
    ]
}

#[sqlx::test(migrations = "./migrations")]
async fn a_reader_that_closes_the_pipe_early_ends_the_output_quietly(pool: sqlx::MySqlPool) {
    use std::io::Read as _;
    let env = a_sale_of_3000_products(&pool).await;
    for args in [&["recon", "--json"][..], &["recon"][..]] {
        let config = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_stockguard"))
            .args(args)
            .env("STOCKGUARD_CONFIG_DIR", config.path())
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Like `| head -c 100`: read a little, then close the pipe.
        let mut first = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn a_rewrite_of_an_unknown_product_says_so_once(pool: sqlx::MySqlPool) {
    let env = a_sale_of_3000_products(&pool).await;
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = stockguard(&["rewrite", "--product", "99999", "--reason", "typo"], &env);
    assert_one_line_error(&out, "no product 99999 in this sale");
}

#[sqlx::test(migrations = "./migrations")]
async fn drill_halt_with_nothing_running_says_so_and_drill_status_shows_the_runs(pool: sqlx::MySqlPool) {
    let env = a_sale_of_3000_products(&pool).await;
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = stockguard(&["drill", "halt", "--reason", "practice"], &env);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no drill is running"));

    let run = stockguard_core::drills::NewRun {
        scenario: "redis-down",
        runner: "host:1",
        plan_hash: "ab",
        seed: 1,
        parameters: serde_json::json!({}),
    };
    let id = stockguard_core::drills::begin(&pool, &run).await.unwrap();
    let out = stockguard(&["drill", "status", "--json"], &env);
    let runs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (runs[0]["id"].as_u64(), runs[0]["status"].as_str(), runs[0]["dead"].as_bool()),
        (Some(id), Some("RUNNING"), Some(false))
    );

    let out = stockguard(&["drill", "halt", "--reason", ""], &env);
    assert_one_line_error(&out, "a reason is required");
}
