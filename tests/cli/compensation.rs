//! `stockguard compensation` as three people would use it, each with their own MySQL account:
//! the maker is refused their own approval in one clear line, a checker approves, a third
//! person executes (after typing the case id again) and exports the CSV.

use crate::commands::{assert_one_line_error, sale_env, stockguard};
use crate::support::accounts;

fn as_person(env: &[(&'static str, String)], mysql_url: &str) -> Vec<(&'static str, String)> {
    let mut env = env.to_vec();
    env.retain(|(k, _)| *k != "STOCKGUARD_MYSQL_URL");
    env.push(("STOCKGUARD_MYSQL_URL", mysql_url.to_string()));
    env
}

fn run(args: &[&str], env: &[(&'static str, String)]) -> std::process::Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    stockguard(args, &env)
}

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_case_goes_from_its_maker_through_a_checker_to_an_executor(pool: sqlx::MySqlPool) {
    crate::support::oversold::seed(&pool, 4, 2, 3, 999, "A").await;
    let env = sale_env(&pool).await;
    let maker = as_person(&env, &accounts::account(&pool, "maker").await);
    let checker = as_person(&env, &accounts::account(&pool, "checker").await);
    let executor = as_person(&env, &accounts::account(&pool, "exec").await);

    assert!(ok(&run(&["compensation", "open", "--product", "4"], &maker)).contains("opened case 1 with 1 lines"));
    ok(&run(&["compensation", "propose", "1", "--oversold", "cancel-refund", "--note", "refund A3"], &maker));
    assert_one_line_error(&run(&["compensation", "approve", "1"], &maker), "four eyes");
    assert!(ok(&run(&["compensation", "approve", "1", "--reason", "ok"], &checker)).contains("APPROVED"));
    assert_one_line_error(&run(&["compensation", "execute", "1", "--confirm", "1"], &checker), "cannot execute");
    assert_one_line_error(&run(&["compensation", "execute", "1"], &executor), "--confirm 1");
    let executed = ok(&run(&["compensation", "execute", "1", "--confirm", "1"], &executor));
    assert!(executed.contains("1 done, 0 skipped"), "{executed}");

    let csv = ok(&run(&["compensation", "export", "1"], &executor));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows[0].starts_with("case_id,product_id,order_no"), "{csv}");
    assert!(rows[1].contains(",A003,") && rows[1].contains("CANCEL_REFUND,999,DONE"), "{csv}");
    let stock: i32 =
        sqlx::query_scalar("SELECT stock FROM inventory WHERE product_id = 4").fetch_one(&pool).await.unwrap();
    assert_eq!(stock, 0);
    accounts::forget(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn show_says_why_these_orders_and_why_two_checkers(pool: sqlx::MySqlPool) {
    crate::support::oversold::seed(&pool, 4, 2, 3, 999, "W").await;
    sqlx::query("UPDATE compensation_settings SET two_checkers_above_cents = 100").execute(&pool).await.unwrap();
    let env = sale_env(&pool).await;
    let maker = as_person(&env, &accounts::account(&pool, "maker").await);
    ok(&run(&["compensation", "open", "--product", "4"], &maker));
    ok(&run(&["compensation", "propose", "1", "--oversold", "cancel-refund", "--note", "refund W3"], &maker));
    let shown = ok(&run(&["compensation", "show", "1"], &maker));
    assert!(shown.contains("approvals 0/2"), "{shown}");
    assert!(shown.contains("two checkers: the plan's total 9.99 is above 1.00"), "{shown}");
    assert!(shown.contains("beyond the 2 on sale"), "{shown}");
    let line = shown.lines().find(|l| l.contains("W003")).unwrap_or_else(|| panic!("{shown}"));
    assert!(line.contains("OVERSOLD #3"), "the third unit sold, of two: {line}");
    accounts::forget(&pool).await;
}

/// Lines done (outcome written) and effect keys of the case, from the DB.
async fn done_and_keys(pool: &sqlx::MySqlPool) -> (i64, i64) {
    let done: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM compensation_lines WHERE outcome = 'DONE'")
        .fetch_one(pool)
        .await
        .unwrap();
    let keys: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM compensation_effects").fetch_one(pool).await.unwrap();
    (done, keys)
}

#[sqlx::test(migrations = "./migrations")]
async fn an_executor_killed_in_the_middle_of_a_line_and_run_again_gives_one_effect_per_line(pool: sqlx::MySqlPool) {
    use std::io::BufRead as _;

    // Five units, nine paid orders: the last four are beyond stock (stock -4).
    crate::support::oversold::seed(&pool, 6, 5, 9, 700, "B").await;
    let env = sale_env(&pool).await;
    let maker = as_person(&env, &accounts::account(&pool, "maker").await);
    let checker = as_person(&env, &accounts::account(&pool, "checker").await);
    let executor = as_person(&env, &accounts::account(&pool, "exec").await);
    ok(&run(&["compensation", "open", "--product", "6"], &maker));
    ok(&run(&["compensation", "propose", "1", "--oversold", "cancel-refund"], &maker));
    ok(&run(&["compensation", "approve", "1", "--reason", "ok"], &checker));

    // Someone holds the row of order B008's line: the executor, two lines done, blocks on it
    // in the middle of its third line (its effect row's trigger, having locked the stock,
    // waits on the line; nothing committed), and is killed there.
    let mut holder = pool.begin().await.unwrap();
    sqlx::query("SELECT order_no FROM compensation_lines WHERE order_no = 'B008' FOR UPDATE")
        .execute(&mut *holder)
        .await
        .unwrap();
    let config = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_stockguard"))
        .args(["compensation", "execute", "1", "--confirm", "1"])
        .env("STOCKGUARD_CONFIG_DIR", config.path())
        .envs(executor.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let progress = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    for line in progress {
        if line.unwrap().contains("[2/4]") {
            break;
        }
    }
    // Until the executor waits on the held row: its third line is open.
    for _ in 0..100 {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER LIKE 'sgt_exec_%' AND INFO LIKE 'INSERT INTO compensation_effects%'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        if waiting > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    holder.rollback().await.unwrap();
    // The server rolls the dead connection's line back once it sees the connection gone.
    for _ in 0..100 {
        if done_and_keys(&pool).await == (2, 2) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(done_and_keys(&pool).await, (2, 2), "the killed line left nothing");

    let again = ok(&run(&["compensation", "execute", "1", "--confirm", "1"], &executor));
    assert!(again.contains("2 done, 0 skipped"), "{again}");
    assert_eq!(done_and_keys(&pool).await, (4, 4));
    let events: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM compensation_events").fetch_one(&pool).await.unwrap();
    let cancelled: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE status = 'CANCELLED'").fetch_one(&pool).await.unwrap();
    let stock: i32 =
        sqlx::query_scalar("SELECT stock FROM inventory WHERE product_id = 6").fetch_one(&pool).await.unwrap();
    assert_eq!((events, cancelled, stock), (4, 4, 0), "one refund per line, the units back once");
    assert!(again.contains("EXECUTED"), "{again}");
    accounts::forget(&pool).await;
}
