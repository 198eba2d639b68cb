//! Four eyes, round 3 (issue 48, finding 4): what the checkers approved is what is executed.
//! The executor's own hand edits between approval and execution (an unpaid order marked paid,
//! then refunded; the initial stock lowered so a cleared oversell reads "beyond stock" again; an
//! order's id moved to reorder acceptance) never reach a buyer's money.

use crate::four_eyes::{approved_refunds, desk, events, oversold, refused_raw, P};
use crate::support::TestRedis;

use sqlx::MySqlPool;
use stockguard_core::compensation::execute::{execute, LineRun};

async fn detail(pool: &MySqlPool, order: &str) -> (String, String) {
    sqlx::query_as("SELECT CAST(outcome AS CHAR), outcome_detail FROM compensation_lines WHERE order_no = ?")
        .bind(order)
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn an_unpaid_order_marked_paid_by_hand_after_approval_is_skipped_and_not_refunded(pool: MySqlPool) {
    let redis = TestRedis::new("fea1").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "H").await;
    sqlx::query("UPDATE orders SET status = 'WAIT_PAY' WHERE product_id = ?").bind(P).execute(&pool).await.unwrap();
    let case_id = approved_refunds(&d).await;
    // The executor's own account may correct a status by hand (incidents), and does.
    sqlx::query("UPDATE orders SET status = 'PAID' WHERE order_no = 'H003'").execute(&d.executor).await.unwrap();
    let run = execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    assert!(matches!(&run.lines[..], [LineRun::Skipped { .. }]), "{:?}", run.lines);
    let (outcome, why) = detail(&pool, "H003").await;
    assert_eq!(outcome, "SKIPPED");
    assert!(why.contains("changed since the plan was approved (WAIT_PAY -> PAID)"), "{why}");
    assert!(events(&pool).await.is_empty(), "nothing refunded for an order the checkers saw unpaid");
    let status: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM orders WHERE order_no = 'H003'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(status, "PAID", "the order is left alone for a fresh approval");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_initial_stock_lowered_after_approval_does_not_make_an_honourable_buyer_beyond_stock(pool: MySqlPool) {
    let redis = TestRedis::new("fea2").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 10, 11, 500, "I").await;
    let case_id = approved_refunds(&d).await;
    // Acceptance is the orders' ids: no one reorders it.
    let moved = "UPDATE orders SET id = 999999 WHERE order_no = 'I001'";
    assert!(refused_raw(&d.executor, moved).await.contains("fixed"));
    // An earlier buyer's order times out: the oversell has cleared, I011 is honourable now ...
    sqlx::query("UPDATE orders SET status = 'CLOSED' WHERE order_no = 'I001'").execute(&pool).await.unwrap();
    // ... and the executor lowers the initial stock by hand so that it reads beyond stock again.
    sqlx::query("UPDATE inventory SET initial_stock = 9 WHERE product_id = ?")
        .bind(P)
        .execute(&d.executor)
        .await
        .unwrap();
    execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    let (outcome, why) = detail(&pool, "I011").await;
    assert_eq!(outcome, "SKIPPED");
    assert!(why.contains("initial stock was lowered since the plan was approved (10 -> 9)"), "{why}");
    assert!(events(&pool).await.is_empty());
}

#[sqlx::test(migrations = "./migrations")]
async fn a_plan_that_fulfils_every_line_executes_each_its_own_fulfilments_are_no_change(pool: MySqlPool) {
    use stockguard_core::compensation::open::open_case;
    use stockguard_core::compensation::plan::{set_plan, Choice, Lines};
    use stockguard_core::compensation::workflow::{take, StepKind};
    use stockguard_core::compensation::Action;
    let redis = TestRedis::new("fea3").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 5, 500, "F").await;
    let case_id = open_case(&d.maker.mysql, P).await.unwrap().case_id;
    let fulfil = [Choice { lines: Lines::All, action: Action::Fulfil, amount_cents: None, note: String::new() }];
    set_plan(&d.maker.mysql, case_id, &fulfil).await.unwrap();
    take(&d.maker.mysql, case_id, StepKind::Propose, "the merchant found units").await.unwrap();
    take(&d.checker.mysql, case_id, StepKind::Approve, "ok").await.unwrap();
    let run = execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    assert_eq!(run.lines.len(), 3);
    assert!(run.lines.iter().all(|l| matches!(l, LineRun::Done { .. })), "{:?}", run.lines);
    let initial: i64 = sqlx::query_scalar("SELECT initial_stock FROM inventory WHERE product_id = ?")
        .bind(P)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(initial, 5, "three units added, once each");
}
