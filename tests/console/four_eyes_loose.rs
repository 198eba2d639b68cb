//! Four eyes, round 3 (issue 48): the rules hold in a loose session and against a replaced
//! order. Any account may `SET SESSION sql_mode = ''`; there a NULL written to a NOT NULL column
//! reaches the triggers as NULL and is stored as 0. Each attack below is a role's own account,
//! by raw SQL, in such a session (the desk of `four_eyes`).

use crate::four_eyes::{approved_refunds, desk, events, oversold, refused_raw, P};
use crate::support::TestRedis;

use sqlx::{MySqlConnection, MySqlPool};
use stockguard_core::compensation::execute::execute;
use stockguard_core::compensation::open::open_case;
use stockguard_core::compensation::workflow::{take, StepKind};
use stockguard_core::compensation::CaseStatus;

/// A connection of `pool`'s account, taken out of the pool, in a loose session.
async fn loose(pool: &MySqlPool) -> MySqlConnection {
    let mut conn = pool.acquire().await.expect("a connection").detach();
    sqlx::query("SET SESSION sql_mode = ''").execute(&mut conn).await.expect("any account may loosen its session");
    conn
}

/// The trigger's words refusing `sql` in the loose session `conn`.
async fn refused_loose(conn: &mut MySqlConnection, sql: &str) -> String {
    let err = sqlx::query(sql).execute(&mut *conn).await.expect_err(sql);
    let db = err.as_database_error().unwrap_or_else(|| panic!("{sql}: a server refusal, not {err}"));
    assert_eq!(db.code().as_deref(), Some("45000"), "{sql}: {err}");
    db.message().to_string()
}

#[sqlx::test(migrations = "./migrations")]
async fn in_a_loose_session_a_null_cannot_carry_a_line_past_the_plans_rules(pool: MySqlPool) {
    let redis = TestRedis::new("fel1").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 1000, "L").await;
    let case_id = open_case(&d.maker.mysql, P).await.unwrap().case_id;
    let mut maker = loose(&d.maker.mysql).await;
    // The review's attack first: a NULL price let a refund of 500,000.00 through the refund rule.
    for attack in [
        "price_cents = NULL, action = 'CANCEL_REFUND', amount_cents = 50000000",
        "qty = NULL, action = 'CANCEL_REFUND', amount_cents = 50000000",
        "user_id = NULL",
        "accepted_at = NULL",
        "case_id = NULL",
        "order_no = NULL",
        "action = 'COUPON', amount_cents = NULL",
        "action = 'NOTE', note = NULL",
        "action = 'BOGUS', amount_cents = 50000000",
        "outcome = NULL",
        "outcome_detail = NULL",
    ] {
        let sql = format!("UPDATE compensation_lines SET {attack} WHERE case_id = {case_id}");
        refused_loose(&mut maker, &sql).await;
    }
    let line: (u64, i64, i64, Option<String>) = sqlx::query_as(
        "SELECT user_id, price_cents, amount_cents, CAST(action AS CHAR) FROM compensation_lines WHERE case_id = ?",
    )
    .bind(case_id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(line, (1003, 1000, 0, None), "the line is still as its order says, unplanned");
}

#[sqlx::test(migrations = "./migrations")]
async fn in_a_loose_session_an_approved_lines_order_keeps_its_buyer_and_quantity(pool: MySqlPool) {
    let redis = TestRedis::new("fel2").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 10, 12, 1999, "M").await;
    let case_id = approved_refunds(&d).await;
    for who in [&d.maker.mysql, &d.admin.mysql] {
        let mut person = loose(who).await;
        for attack in [
            "user_id = NULL",
            "buy_count = NULL",
            "price_cents = NULL",
            "product_id = NULL",
            "created_at = NULL",
            "order_no = NULL",
            "status = 'BOGUS'",
        ] {
            let sql = format!("UPDATE orders SET {attack} WHERE order_no = 'M012'");
            assert!(refused_loose(&mut person, &sql).await.starts_with("orders:"), "{attack}");
        }
    }
    let finished = execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    assert_eq!(finished.after.status, CaseStatus::Executed);
    assert_eq!(
        events(&pool).await,
        vec![("M011".to_string(), 1011, 1999), ("M012".to_string(), 1012, 1999)],
        "both refunds, to the orders' own buyers"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn in_a_loose_session_admin_cannot_zero_a_pending_events_buyer_amount_or_key(pool: MySqlPool) {
    let redis = TestRedis::new("fel3").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "Z").await;
    let case_id = approved_refunds(&d).await;
    execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    let mut admin = loose(&d.admin.mysql).await;
    for attack in [
        "user_id = NULL",
        "amount_cents = NULL",
        "idempotency_key = NULL",
        "kind = NULL",
        "case_id = NULL",
        "order_no = NULL",
        "action = NULL",
        "created_at = NULL",
        "status = NULL",
    ] {
        let sql = format!("UPDATE compensation_events SET {attack}");
        assert!(refused_loose(&mut admin, &sql).await.contains("an event is fixed"), "{attack}");
    }
    // What admin may do: mark it sent, once.
    sqlx::query("UPDATE compensation_events SET status = 'SENT'").execute(&mut admin).await.unwrap();
    let event: (String, u64, i64, String) =
        sqlx::query_as("SELECT order_no, user_id, amount_cents, idempotency_key FROM compensation_events")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(event, ("Z003".into(), 1003, 500, format!("compensation:{case_id}:Z003:CANCEL_REFUND")));
}

#[sqlx::test(migrations = "./migrations")]
async fn in_a_loose_session_a_close_or_a_rejection_without_a_reason_is_refused(pool: MySqlPool) {
    let redis = TestRedis::new("fel4").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "C").await;
    // A draft with no lines (raw, as on-call may open one): closing it needs a reason.
    sqlx::query("INSERT INTO compensation_cases (product_id) VALUES (?)")
        .bind(P)
        .execute(&d.maker.mysql)
        .await
        .unwrap();
    let empty: u64 = sqlx::query_scalar("SELECT MAX(id) FROM compensation_cases").fetch_one(&pool).await.unwrap();
    let mut maker = loose(&d.maker.mysql).await;
    // INSERT ... SELECT: a loose session stores a NULL there as '' (a one-row VALUES is refused
    // by the server itself).
    let close = format!("INSERT INTO compensation_steps (case_id, step, reason) SELECT {empty}, 'CLOSE', NULL");
    refused_loose(&mut maker, &close).await;
    let bogus = format!("INSERT INTO compensation_steps (case_id, step, reason) SELECT {empty}, 'BOGUS', 'why'");
    refused_loose(&mut maker, &bogus).await;
    sqlx::query("INSERT INTO compensation_steps (case_id, step, reason) VALUES (?, 'CLOSE', 'opened by mistake')")
        .bind(empty)
        .execute(&d.maker.mysql)
        .await
        .unwrap();

    let case_id = crate::four_eyes::planned_refunds(&d).await;
    take(&d.maker.mysql, case_id, StepKind::Propose, "refunds").await.unwrap();
    let mut checker = loose(&d.checker.mysql).await;
    let reject =
        format!("INSERT INTO compensation_verdicts (case_id, verdict, reason) SELECT {case_id}, 'REJECT', NULL");
    refused_loose(&mut checker, &reject).await;
    let status: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM compensation_cases WHERE id = ?")
        .bind(case_id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(status, "PROPOSED", "no rejection without a reason");
}

#[sqlx::test(migrations = "./migrations")]
async fn admin_cannot_move_the_settings_row_and_a_missing_row_means_two_checkers(pool: MySqlPool) {
    let redis = TestRedis::new("fel5").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "S").await;
    let mut admin = loose(&d.admin.mysql).await;
    sqlx::query("SET SESSION check_constraint_checks = 0").execute(&mut admin).await.unwrap();
    for attack in ["id = 2", "two_checkers_above_cents = NULL", "two_checkers_above_cents = -1"] {
        let sql = format!("UPDATE compensation_settings SET {attack}");
        assert!(refused_loose(&mut admin, &sql).await.contains("settings row"), "{attack}");
    }
    // A row that is missing anyway (the schema's owner deleted it): a 5.00 refund needs two.
    sqlx::query("DELETE FROM compensation_settings").execute(&pool).await.unwrap();
    let case_id = crate::four_eyes::planned_refunds(&d).await;
    let proposed = take(&d.maker.mysql, case_id, StepKind::Propose, "refunds").await.unwrap();
    assert_eq!(proposed.approvals_needed, 2);
}

#[sqlx::test(migrations = "./migrations")]
async fn admin_cannot_redirect_an_approved_refund_by_replacing_or_deleting_its_order(pool: MySqlPool) {
    let redis = TestRedis::new("fel6").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 10, 12, 1999, "Q").await;
    let case_id = approved_refunds(&d).await;
    let replace = format!(
        "REPLACE INTO orders (order_no, user_id, product_id, buy_count, status, source, pay_deadline) \
         VALUES ('Q012', 31337, {P}, 1, 'PAID', 'DB', NOW() + INTERVAL 1 HOUR)"
    );
    assert!(refused_raw(&d.admin.mysql, &replace).await.contains("kept"));
    let mut admin = loose(&d.admin.mysql).await;
    assert!(refused_loose(&mut admin, &replace).await.contains("kept"));
    assert!(refused_loose(&mut admin, "DELETE FROM orders WHERE order_no = 'Q012'").await.contains("kept"));
    // An order in no case is still admin's to correct.
    sqlx::query("DELETE FROM orders WHERE order_no = 'Q001'").execute(&mut admin).await.unwrap();

    // Were the order replaced anyway (the schema's owner may drop a trigger), the effect refuses
    // an order that is not its line's, and nothing is paid to the new buyer.
    sqlx::query("DROP TRIGGER orders_kept").execute(&pool).await.unwrap();
    sqlx::query(&replace).execute(&pool).await.unwrap();
    let err = execute(&d.executor, case_id, &|_, _, _| {}).await.expect_err("a replaced order");
    assert!(err.to_string().contains("not the one its line was born from"), "{err}");
    assert!(events(&pool).await.iter().all(|(_, buyer, _)| *buyer != 31337), "{:?}", events(&pool).await);
}
