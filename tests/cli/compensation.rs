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
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, price_cents) VALUES (4, 'x', 2, -1, 999)",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, source, pay_deadline) VALUES \
         ('A1', 1, 4, 1, 'PAID', 'DB', NOW()), ('A2', 2, 4, 1, 'PAID', 'DB', NOW()), ('A3', 3, 4, 1, 'PAID', 'DB', NOW())",
    )
    .execute(&pool)
    .await
    .unwrap();
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
    assert!(rows[1].contains(",A3,") && rows[1].contains("CANCEL_REFUND,999,DONE"), "{csv}");
    let stock: i32 =
        sqlx::query_scalar("SELECT stock FROM inventory WHERE product_id = 4").fetch_one(&pool).await.unwrap();
    assert_eq!(stock, 0);
    accounts::forget(&pool).await;
}
