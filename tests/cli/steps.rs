//! A database failure in the rewrite, the guided exit and compensation is said as the step it
//! was taking, with the server's own words after it, in the CLI's one line. The failure is
//! real: the command runs with an account the server lets read the sale and write nothing.

use crate::commands::{assert_one_line_error, sale_env, stockguard};
use crate::support::accounts;

/// The sale's environment with `mysql_url` as its account.
fn with_account(env: &[(&'static str, String)], mysql_url: &str) -> Vec<(&'static str, String)> {
    let mut env: Vec<_> = env.iter().filter(|(k, _)| *k != "STOCKGUARD_MYSQL_URL").cloned().collect();
    env.push(("STOCKGUARD_MYSQL_URL", mysql_url.to_string()));
    env
}

fn run(args: &[&str], env: &[(&'static str, String)]) -> std::process::Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    stockguard(args, &env)
}

/// What MariaDB and MySQL 8 both say when an account lacks a privilege.
const DENIED: &str = "command denied to user";

#[sqlx::test(migrations = "./migrations")]
async fn a_rewrite_refused_by_the_database_names_the_statement_it_was_taking(pool: sqlx::MySqlPool) {
    crate::support::oversold::seed(&pool, 61, 10, 0, 100, "R").await;
    let env = sale_env(&pool).await;
    let reader = with_account(&env, &accounts::reader(&pool, "rwr").await);
    let out = run(&["rewrite", "--product", "61", "--reason", "steps"], &reader);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the database failed while inserting the rewrite run (taking its fencing token)")
            && stderr.contains(DENIED),
        "{stderr}"
    );
    accounts::forget(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_guided_exit_refused_by_the_database_names_the_statement_it_was_taking(pool: sqlx::MySqlPool) {
    crate::support::oversold::seed(&pool, 62, 10, 0, 100, "X").await;
    let env = sale_env(&pool).await;
    let on = run(&["degrade", "on", "--product", "62", "--reason", "steps", "--wait", "1"], &env);
    assert!(on.status.success(), "{}", String::from_utf8_lossy(&on.stderr));
    let reader = with_account(&env, &accounts::reader(&pool, "exr").await);
    let out = run(&["degrade", "off", "--product", "62", "--reason", "steps", "--wait", "1"], &reader);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(!out.status.success(), "{stderr}");
    assert!(
        last.starts_with("error: ")
            && last.contains("the database failed while inserting into switch_changes")
            && last.contains(DENIED),
        "{stderr}"
    );
    accounts::forget(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn opening_a_case_refused_by_the_database_names_the_statement_it_was_taking(pool: sqlx::MySqlPool) {
    crate::support::oversold::seed(&pool, 63, 2, 3, 100, "C").await;
    let env = sale_env(&pool).await;
    let reader = with_account(&env, &accounts::reader(&pool, "cor").await);
    let out = run(&["compensation", "open", "--product", "63"], &reader);
    assert_one_line_error(&out, "the database failed while inserting into compensation_cases (open case)");
    assert_one_line_error(&out, DENIED);
    accounts::forget(&pool).await;
}
