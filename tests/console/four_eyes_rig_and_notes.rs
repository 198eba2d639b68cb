//! Four eyes, round 3 (issue 48), the last parts of findings 4 and 5
//! (`migrations/20261207000031_four_eyes_rig_and_notes.sql`): a facilitator's account writes the
//! ledger of drill rigs' products only, and an approver's account takes no step but a note. Each
//! attack is the role's own account (made by `roles apply`, the desk of `four_eyes`), by raw SQL
//! or the engine's own code, in a strict session and in a loose one (`SET SESSION sql_mode = ''`,
//! which any account may do); what the role still has to do is done the same way. Who holds which
//! role is what `roles apply` recorded, not an audit row of that shape a role's account writes.

use crate::four_eyes::{desk, oversold, planned_refunds, Desk, P};
use crate::roles::{applied, People};
use crate::sale;
use crate::support::{self, accounts, TestRedis};

use sqlx::{MySqlConnection, MySqlPool};
use stockguard_core::compensation::workflow::{take, StepKind};
use stockguard_core::compensation::CaseStatus;
use stockguard_core::drills::{self, NewRun, RunStatus};
use stockguard_core::roles::{self, SaleRole, Target};
use stockguard_core::switch::Home;
use stockguard_engine::engine::close::{close_due_orders, close_order, CloseKind, CloseOutcome};
use stockguard_engine::engine::consumer;
use stockguard_engine::engine::order_no::InstanceTag;
use stockguard_engine::engine::relay::Relay;
use stockguard_engine::engine::{ReserveOutcome, Reserver};

/// A drill rig's product, beside the sale's `P`.
const RIG: u64 = 61;

/// What the rules say when they refuse a facilitator.
const FACILITATOR_REFUSED: &str = "drills: a facilitator";

/// What the rules say when they refuse an approver's step.
const APPROVER_REFUSED: &str = "an approver's steps are notes";

/// Every step kind but a note.
const NOT_A_NOTE: [&str; 7] = ["OPEN", "PROPOSE", "APPROVE", "REJECT", "EXECUTE", "EXECUTED", "CLOSE"];

fn new_run(scenario: &str) -> NewRun<'_> {
    NewRun { scenario, runner: "host:4242", plan_hash: "ab12", seed: 7, parameters: serde_json::json!({}) }
}

/// A connection of `pool`'s account taken out of the pool: strict as the pool's, or loose.
pub(crate) async fn session(pool: &MySqlPool, loose: bool) -> MySqlConnection {
    let mut conn = pool.acquire().await.expect("a connection").detach();
    if loose {
        sqlx::query("SET SESSION sql_mode = ''").execute(&mut conn).await.expect("any account may loosen its session");
    }
    conn
}

/// The trigger's words refusing `sql` in `conn`.
pub(crate) async fn refused(conn: &mut MySqlConnection, sql: &str) -> String {
    let err = sqlx::query(sql).execute(&mut *conn).await.expect_err(sql);
    let db = err.as_database_error().unwrap_or_else(|| panic!("{sql}: a server refusal, not {err}"));
    assert_eq!(db.code().as_deref(), Some("45000"), "{sql}: {err}");
    db.message().to_string()
}

/// The rows `sql` wrote in `conn`.
async fn done(conn: &mut MySqlConnection, sql: &str) -> u64 {
    sqlx::query(sql).execute(&mut *conn).await.unwrap_or_else(|e| panic!("{sql}: {e}")).rows_affected()
}

/// The sale's product `P` (paid orders S001 and S002 of buyers 1001 and 1002, a pending release
/// of S001) and, beside it, the product `RIG` of a running drill, both put there by root; the
/// running drill's id and an ended one's.
async fn sale_and_rig(d: &Desk, pool: &MySqlPool) -> (u64, u64) {
    oversold(&d.root, 10, 2, 500, "S").await;
    sqlx::query("INSERT INTO outbox (kind, product_id, order_no, qty) VALUES ('RELEASE', ?, 'S001', 1)")
        .bind(P)
        .execute(pool)
        .await
        .unwrap();
    let ended = drills::begin(pool, &new_run("ended")).await.unwrap();
    drills::finish(pool, ended, RunStatus::Passed, &serde_json::json!({})).await.unwrap();
    let run = drills::begin(pool, &new_run("rig")).await.unwrap();
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit, price_cents, rig) \
         VALUES (?, 'drill', 10, 10, 1, 700, ?)",
    )
    .bind(RIG)
    .bind(run)
    .execute(pool)
    .await
    .unwrap();
    (run, ended)
}

fn order(order_no: &str, product: u64) -> String {
    format!(
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, source, pay_deadline) \
         VALUES ('{order_no}', 31337, {product}, 1, 'PAID', 'DB', NOW() + INTERVAL 1 HOUR)"
    )
}

#[sqlx::test(migrations = "./migrations")]
async fn a_facilitator_writes_orders_outbox_rows_and_failures_of_drill_rigs_products_only(pool: MySqlPool) {
    let redis = TestRedis::new("fer1").await;
    let d = desk(&pool, &redis).await;
    sale_and_rig(&d, &pool).await;
    for (n, loose) in [(1, false), (2, true)] {
        let mut facilitator = session(&d.facilitator.mysql, loose).await;
        // The review's attack: a paid order on the sale's product, at the sale's price, which a
        // case would then refund. And the rest of what its account may write there.
        let mut attacks = vec![
            order(&format!("F{n}"), P),
            order(&format!("F{n}X"), 999),
            "UPDATE orders SET status = 'CANCELLED' WHERE order_no = 'S001'".to_string(),
            format!("UPDATE orders SET pay_deadline = NOW() WHERE product_id = {P}"),
            format!("INSERT INTO outbox (kind, product_id, order_no, qty) VALUES ('RELEASE', {P}, 'S002', 5)"),
            format!("UPDATE outbox SET status = 'DONE' WHERE product_id = {P}"),
            format!(
                "INSERT IGNORE INTO order_failures (order_no, product_id, user_id, qty, reason) \
                 VALUES ('FF{n}', {P}, 31337, 1, 'forged')"
            ),
        ];
        if loose {
            // A NULL product (stored as 0 there) is no rig's either.
            attacks.push(format!(
                "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, source, pay_deadline) \
                 SELECT 'F{n}N', 31337, NULL, 1, 'PAID', 'DB', NOW() + INTERVAL 1 HOUR"
            ));
        }
        for sql in &attacks {
            let why = refused(&mut facilitator, sql).await;
            assert!(why.starts_with(FACILITATOR_REFUSED), "{sql}: {why}");
        }
        // The same writes on its rig's product: what the runner and its engines do.
        for sql in [
            order(&format!("R{n}"), RIG),
            format!("UPDATE orders SET status = 'CANCELLED' WHERE order_no = 'R{n}'"),
            format!("INSERT INTO outbox (kind, product_id, order_no, qty) VALUES ('RELEASE', {RIG}, 'R{n}', 1)"),
            format!("UPDATE outbox SET status = 'DONE', attempts = attempts + 1 WHERE order_no = 'R{n}'"),
            format!(
                "INSERT IGNORE INTO order_failures (order_no, product_id, user_id, qty, reason) \
                 VALUES ('RF{n}', {RIG}, 31337, 1, 'DB_STOCK')"
            ),
        ] {
            assert_eq!(done(&mut facilitator, &sql).await, 1, "{sql}");
        }
        // Nor is a rig's outbox row moved onto the sale's product.
        let moved = format!("UPDATE outbox SET product_id = {P} WHERE order_no = 'R{n}'");
        assert!(refused(&mut facilitator, &moved).await.starts_with(FACILITATOR_REFUSED));
    }

    // The sale's rows are as they were ...
    let orders: Vec<(String, String)> =
        sqlx::query_as("SELECT order_no, CAST(status AS CHAR) FROM orders WHERE product_id <> ? ORDER BY order_no")
            .bind(RIG)
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(orders, [("S001".into(), "PAID".into()), ("S002".into(), "PAID".into())]);
    let outbox: Vec<(u64, String, i32, String)> =
        sqlx::query_as("SELECT product_id, order_no, qty, CAST(status AS CHAR) FROM outbox WHERE product_id <> ?")
            .bind(RIG)
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(outbox, [(P, "S001".into(), 1, "PENDING".into())]);
    let sale_failures = format!("SELECT COUNT(*) FROM order_failures WHERE product_id <> {RIG}");
    assert_eq!(support::scalar(&pool, &sale_failures).await, 0);

    // ... and who writes them still may: on-call corrects a status, admin records an order, a
    // release and a failure, and an engine's own account sells.
    let mut oncall = session(&d.maker.mysql, false).await;
    assert_eq!(done(&mut oncall, "UPDATE orders SET status = 'CLOSED' WHERE order_no = 'S002'").await, 1);
    let mut admin = session(&d.admin.mysql, true).await;
    for sql in [
        order("A1", P),
        format!("INSERT INTO outbox (kind, product_id, order_no, qty) VALUES ('RELEASE', {P}, 'S002', 1)"),
        format!(
            "INSERT INTO order_failures (order_no, product_id, user_id, qty, reason) VALUES ('AF1', {P}, 1, 1, 'DB_STOCK')"
        ),
    ] {
        assert_eq!(done(&mut admin, &sql).await, 1, "{sql}");
    }
    let engine_account = accounts::person(&pool, "engine").await;
    let mut engine = session(&engine_account, false).await;
    assert_eq!(done(&mut engine, &order("E1", P)).await, 1);
    let deduct = format!("UPDATE inventory SET stock = stock - 1 WHERE product_id = {P} AND stock >= 1");
    assert_eq!(done(&mut engine, &deduct).await, 1);
    drop(engine);
    engine_account.close().await;
    accounts::forget(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_facilitator_puts_products_on_sale_only_in_a_rig_and_never_moves_one_into_or_out_of_it(pool: MySqlPool) {
    let redis = TestRedis::new("fer2").await;
    let d = desk(&pool, &redis).await;
    let (run, ended) = sale_and_rig(&d, &pool).await;
    let columns = "product_id, name, initial_stock, stock, per_user_limit, price_cents";
    for (n, loose) in [(1u64, false), (2, true)] {
        let mut facilitator = session(&d.facilitator.mysql, loose).await;
        let mut attacks = vec![
            // A product of the sale's own, at a price it picks.
            format!("INSERT INTO inventory ({columns}) VALUES ({}, 'forged', 5, 5, 1, 100)", 70 + n),
            format!("INSERT INTO inventory ({columns}, rig) VALUES ({}, 'forged', 5, 5, 1, 100, NULL)", 72 + n),
            // The sale's product: its stock, its initial stock, its price.
            format!("UPDATE inventory SET stock = stock + 100 WHERE product_id = {P}"),
            format!("UPDATE inventory SET initial_stock = 1 WHERE product_id = {P}"),
            format!("UPDATE inventory SET price_cents = 1 WHERE product_id = {P}"),
            // Into a rig, out of one, from one rig to another.
            format!("UPDATE inventory SET rig = {run} WHERE product_id = {P}"),
            format!("UPDATE inventory SET rig = NULL WHERE product_id = {RIG}"),
            format!("UPDATE inventory SET rig = {ended} WHERE product_id = {RIG}"),
            // An upsert onto the sale's product: the insert names a rig, the update is the sale's.
            format!(
                "INSERT INTO inventory ({columns}, rig) VALUES ({P}, 'upsert', 5, 5, 1, 1, {run}) \
                 ON DUPLICATE KEY UPDATE stock = 999, price_cents = 1"
            ),
        ];
        if loose {
            attacks.push(format!(
                "INSERT INTO inventory ({columns}, rig) SELECT {}, 'forged', 5, 5, 1, 100, NULL",
                74 + n
            ));
        }
        for sql in &attacks {
            let why = refused(&mut facilitator, sql).await;
            assert!(why.starts_with(FACILITATOR_REFUSED), "{sql}: {why}");
        }
        // What the runner and its engines do: a product put on sale in the rig, then sold.
        for sql in [
            format!("INSERT INTO inventory ({columns}, rig) VALUES ({}, 'drill {run}', 5, 5, 1, 100, {run})", 62 + n),
            format!("UPDATE inventory SET stock = stock - 1 WHERE product_id = {} AND stock >= 1", 62 + n),
            format!("UPDATE inventory SET stock = stock + 1, price_cents = 150 WHERE product_id = {RIG}"),
        ] {
            assert_eq!(done(&mut facilitator, &sql).await, 1, "{sql}");
        }
    }

    let products: Vec<(u64, i32, i32, i64, Option<u64>)> =
        sqlx::query_as("SELECT product_id, initial_stock, stock, price_cents, rig FROM inventory ORDER BY product_id")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        products,
        [(P, 10, 8, 500, None), (RIG, 10, 12, 150, Some(run)), (63, 5, 4, 100, Some(run)), (64, 5, 4, 100, Some(run))],
        "the sale's product as it was, its rig's product in its rig, the rig's new products in it"
    );

    // Who puts the sale's products on sale and corrects them still may.
    let mut oncall = session(&d.maker.mysql, true).await;
    assert_eq!(done(&mut oncall, &format!("UPDATE inventory SET stock = stock + 1 WHERE product_id = {P}")).await, 1);
    let mut admin = session(&d.admin.mysql, false).await;
    for sql in [
        format!("INSERT INTO inventory ({columns}) VALUES (80, 'the sale''s', 5, 5, 1, 100)"),
        format!("UPDATE inventory SET price_cents = 600 WHERE product_id = {P}"),
    ] {
        assert_eq!(done(&mut admin, &sql).await, 1, "{sql}");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn a_drill_engine_on_the_facilitators_account_sells_its_rig_and_closes_no_sale_order(pool: MySqlPool) {
    let redis = TestRedis::new("fer3").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 10, 2, 500, "S").await;
    let run = drills::begin(&pool, &new_run("rig")).await.unwrap();
    let f = &d.facilitator;
    let mut r = f.redis.clone();
    // The runner puts its rig's product on sale with its own account, one unit fewer in the DB
    // than in Redis, so that the engine persists one order and records one failure.
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit, price_cents, rig) \
         VALUES (?, 'drill', 1, 1, 1, 700, ?)",
    )
    .bind(RIG)
    .bind(run)
    .execute(&f.mysql)
    .await
    .expect("the runner puts its rig's product on sale");
    let _: () = redis::cmd("SET").arg(f.keys.stock(RIG)).arg(2).query_async(&mut r).await.unwrap();
    consumer::ensure_group(&mut r, &f.keys, RIG).await.unwrap();

    // Its engine, on the same credentials: two reservations, persisted, one cancelled, released.
    let reserver = Reserver::new(InstanceTag::claim(&f.mysql, "drill-e1").await.unwrap());
    let mut numbers = Vec::new();
    for buyer in [1, 2] {
        match reserver.reserve(&mut r, &f.keys, &sale::one_unit(buyer, RIG, 1)).await.unwrap() {
            ReserveOutcome::Reserved { order_no } => numbers.push(order_no),
            other => panic!("buyer {buyer}: {other:?}"),
        }
    }
    let cfg = sale::consumer_config("drill");
    let (mut persisted, mut failed) = (Vec::new(), Vec::new());
    for _ in 0..50 {
        let batch = consumer::run_once(&f.mysql, &mut r, &f.keys, &[RIG], &cfg).await.expect("the engine persists");
        persisted.extend(batch.persisted);
        failed.extend(batch.failed);
        let left: i64 = redis::cmd("HLEN").arg(f.keys.inflight(RIG)).query_async(&mut r).await.unwrap();
        if left == 0 {
            break;
        }
    }
    assert_eq!((persisted.len(), failed.len()), (1, 1), "one order written, one failure recorded");
    let now = chrono::Utc::now().naive_utc();
    let bought = &persisted[0];
    let buyer = if *bought == numbers[0] { 1 } else { 2 };
    let closed = close_order(&f.mysql, bought, CloseKind::Cancel { user_id: buyer }, now).await.unwrap();
    assert_eq!(closed, CloseOutcome::Closed);
    let relayed = Relay::default().run_once(&f.mysql, Home::Rig(run), &mut r, &f.keys, 10).await.unwrap();
    assert_eq!(relayed.applied, 1);
    let ledger = format!(
        "SELECT (SELECT stock FROM inventory WHERE product_id = {RIG}) * 1000 \
         + (SELECT COUNT(*) FROM order_failures WHERE product_id = {RIG}) * 100 \
         + (SELECT COUNT(*) FROM outbox WHERE product_id = {RIG} AND status = 'DONE') * 10 \
         + (SELECT COUNT(*) FROM orders WHERE product_id = {RIG} AND status = 'CANCELLED')"
    );
    assert_eq!(support::scalar(&pool, &ledger).await, 1111, "stock back to 1, a failure, a release done, a cancel");

    // The same engine code on the sale's orders, with the facilitator's account: a buyer's
    // cancel, and the timeout closer of an engine of the sale's home. Neither is written.
    sqlx::query("UPDATE orders SET status = 'WAIT_PAY', pay_deadline = NOW() - INTERVAL 1 MINUTE WHERE product_id = ?")
        .bind(P)
        .execute(&pool)
        .await
        .unwrap();
    let cancel = close_order(&f.mysql, "S001", CloseKind::Cancel { user_id: 1001 }, now).await;
    let err = cancel.expect_err("a sale order cancelled on the facilitator's account");
    assert!(err.to_string().contains(FACILITATOR_REFUSED), "{err}");
    let swept = close_due_orders(&f.mysql, Home::Sale, chrono::Utc::now().naive_utc(), 10).await;
    let err = swept.expect_err("the sale's due orders closed on the facilitator's account");
    assert!(err.to_string().contains(FACILITATOR_REFUSED), "{err}");
    let sale = format!(
        "SELECT (SELECT stock FROM inventory WHERE product_id = {P}) * 100 + \
         (SELECT COUNT(*) FROM orders WHERE product_id = {P} AND status = 'WAIT_PAY') * 10 + \
         (SELECT COUNT(*) FROM outbox WHERE product_id = {P})"
    );
    assert_eq!(support::scalar(&pool, &sale).await, 820, "stock 8, both orders waiting, nothing released");
}

#[sqlx::test(migrations = "./migrations")]
async fn who_is_a_facilitator_follows_roles_apply_and_not_a_record_of_one_the_facilitator_writes_itself(
    pool: MySqlPool,
) {
    let redis = TestRedis::new("fer6").await;
    let people = People::new();
    let admin = applied(&pool, &redis, &people, &[SaleRole::Facilitator]).await;
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit, price_cents) \
         VALUES (?, 'on sale', 10, 10, 1, 500)",
    )
    .bind(P)
    .execute(&pool)
    .await
    .unwrap();
    let correct = format!("UPDATE inventory SET stock = stock + 1 WHERE product_id = {P}");
    // A row in the shape of `roles apply`'s own record, saying it made the facilitator on-call:
    // the audit log keeps it (every role may write audit rows), the rule does not take it.
    let forged = format!(
        "INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome, details) \
         VALUES ('root', 'admin', 'sandbox', 'roles.apply', DATABASE(), 'moved', 'APPLIED', \
                 JSON_OBJECT('persons', JSON_ARRAY(JSON_OBJECT('name', 'facilitator', 'role', 'oncall', \
                     'mysql', JSON_OBJECT('server', 'mysql', 'user', '{}', 'host', '%')))))",
        people.user(SaleRole::Facilitator)
    );
    let facilitator = people.connect(SaleRole::Facilitator, &pool, &redis).await.mysql;
    for loose in [false, true] {
        let mut conn = session(&facilitator, loose).await;
        assert_eq!(done(&mut conn, &forged).await, 1);
        let why = refused(&mut conn, &correct).await;
        assert!(why.starts_with(FACILITATOR_REFUSED), "loose: {loose}: {why}");
    }
    facilitator.close().await;

    // `roles apply` moves the person to on-call: a hand correction of the sale's stock is theirs
    // now; moved back, it is not.
    let moved_to = |role: SaleRole| {
        let mut spec = people.spec(&[SaleRole::Facilitator]);
        spec.persons[0].role = role;
        spec
    };
    let env = |var: &str| (var == "PW_facilitator").then(|| people.password(SaleRole::Facilitator));
    let target = Target::of(&admin).await.unwrap();
    for (role, may) in [(SaleRole::Oncall, true), (SaleRole::Facilitator, false)] {
        roles::apply(&roles::plan(&moved_to(role), &target, &env).unwrap(), &admin, "moved").await.unwrap();
        let person = people.connect(SaleRole::Facilitator, &pool, &redis).await.mysql;
        let mut conn = session(&person, true).await;
        if may {
            assert_eq!(done(&mut conn, &correct).await, 1, "as {role}");
        } else {
            assert!(refused(&mut conn, &correct).await.starts_with(FACILITATOR_REFUSED), "as {role}");
        }
        drop(conn);
        person.close().await;
    }
    assert_eq!(sale::db_stock(&pool, P).await, 11, "one correction, by the person as on-call");
}

/// A step of `kind` on the case, by hand.
fn step(case_id: u64, kind: &str) -> String {
    format!("INSERT INTO compensation_steps (case_id, step, reason) VALUES ({case_id}, '{kind}', 'by hand')")
}

/// As `approver`, strict and loose: every step kind but a note is refused (and, loose, a NULL or
/// unknown kind); those of `only_the_rule`, which the workflow itself would take from this
/// account in the case's state, in this rule's words. A note is written.
async fn approver_tries(approver: &MySqlPool, case_id: u64, only_the_rule: &[&str]) {
    for loose in [false, true] {
        let mut conn = session(approver, loose).await;
        for kind in NOT_A_NOTE {
            let why = refused(&mut conn, &step(case_id, kind)).await;
            if only_the_rule.contains(&kind) {
                assert!(why.contains(APPROVER_REFUSED), "{kind} (loose: {loose}): {why}");
            }
        }
        if loose {
            for odd in ["NULL", "'BOGUS'"] {
                let sql =
                    format!("INSERT INTO compensation_steps (case_id, step, reason) SELECT {case_id}, {odd}, 'x'");
                refused(&mut conn, &sql).await;
            }
        }
        assert_eq!(done(&mut conn, &step(case_id, "NOTE")).await, 1, "a note (loose: {loose})");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn an_approvers_account_takes_no_step_but_a_note_and_its_verdict_still_writes_its_own(pool: MySqlPool) {
    let redis = TestRedis::new("fer4").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "N").await;
    let case_id = planned_refunds(&d).await;
    // A planned draft: the workflow would let anyone propose it, or open the case again.
    for approver in [&d.checker.mysql, &d.checker2] {
        approver_tries(approver, case_id, &["OPEN", "PROPOSE"]).await;
    }
    assert_eq!(take(&d.maker.mysql, case_id, StepKind::Propose, "refunds").await.unwrap().status, CaseStatus::Proposed);
    approver_tries(&d.checker2, case_id, &["OPEN"]).await;
    let approved = take(&d.checker.mysql, case_id, StepKind::Approve, "checked").await.expect("a verdict");
    assert_eq!(approved.status, CaseStatus::Approved);
    // Approved: the approver who did not approve is neither its maker nor its checker, and the
    // workflow would let them execute it.
    approver_tries(&d.checker2, case_id, &["OPEN", "EXECUTE"]).await;
    approver_tries(&d.checker.mysql, case_id, &["OPEN"]).await;
    // Executing, its one line done (as `execute` does it, by hand): the same for its end.
    let mut executor = session(&d.executor, false).await;
    assert_eq!(done(&mut executor, &step(case_id, "EXECUTE")).await, 1);
    let effect = format!(
        "INSERT INTO compensation_effects (case_id, order_no, action) VALUES ({case_id}, 'N003', 'CANCEL_REFUND')"
    );
    assert_eq!(done(&mut executor, &effect).await, 1);
    approver_tries(&d.checker2, case_id, &["OPEN", "EXECUTE", "EXECUTED"]).await;
    assert_eq!(done(&mut executor, &step(case_id, "EXECUTED")).await, 1);
    // Executed: the workflow would let anyone close it.
    for approver in [&d.checker.mysql, &d.checker2] {
        approver_tries(approver, case_id, &["OPEN", "CLOSE"]).await;
    }
    take(&d.executor, case_id, StepKind::Close, "refunded").await.expect("the executor closes");
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM compensation_events").await, 1, "the refund, once");

    // What the approvers' accounts wrote: notes, and the approval its verdict wrote.
    let approvers = [d.people.user(SaleRole::Approver), d.people.second(SaleRole::Approver)];
    let steps: Vec<String> = sqlx::query_scalar(
        "SELECT CAST(step AS CHAR) FROM compensation_steps WHERE actor IN (?, ?) AND step <> 'NOTE' ORDER BY id",
    )
    .bind(&approvers[0])
    .bind(&approvers[1])
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(steps, ["APPROVE"]);
    let notes = "SELECT COUNT(*) FROM compensation_steps WHERE step = 'NOTE'";
    assert_eq!(support::scalar(&pool, notes).await, 16, "one per account, state and session");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_approval_step_without_a_verdict_of_its_own_is_refused_and_verdicts_count_round_after_round(
    pool: MySqlPool,
) {
    let redis = TestRedis::new("fer5").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "V").await;
    sqlx::query("UPDATE compensation_settings SET two_checkers_above_cents = 0").execute(&pool).await.unwrap();
    let case_id = planned_refunds(&d).await;
    let proposed = take(&d.maker.mysql, case_id, StepKind::Propose, "refunds").await.unwrap();
    assert_eq!(proposed.approvals_needed, 2);
    assert_eq!(take(&d.checker.mysql, case_id, StepKind::Approve, "ok").await.unwrap().approvals, 1);
    // The second checker rejects, in a loose session: back to a draft, proposed again.
    let mut checker2 = session(&d.checker2, true).await;
    let reject = format!(
        "INSERT INTO compensation_verdicts (case_id, verdict, reason) VALUES ({case_id}, 'REJECT', 'one line is wrong')"
    );
    assert_eq!(done(&mut checker2, &reject).await, 1);
    take(&d.maker.mysql, case_id, StepKind::Propose, "refunds, checked again").await.unwrap();

    // The first checker's approval of the first round is no approval of this one: a step that
    // replays it (its verdict is there) is refused, strict or loose.
    let replay = format!("INSERT INTO compensation_steps (case_id, step, reason) VALUES ({case_id}, 'APPROVE', 'ok')");
    for loose in [false, true] {
        let mut checker = session(&d.checker.mysql, loose).await;
        let why = refused(&mut checker, &replay).await;
        assert!(why.contains(APPROVER_REFUSED), "loose: {loose}: {why}");
    }
    let status = "SELECT CAST(COALESCE(JSON_LENGTH(approvers), 0) AS SIGNED) FROM compensation_cases";
    assert_eq!(support::scalar(&pool, status).await, 0, "no approval of this round yet");

    // Its verdict of this round (loose) and the second checker's (strict) approve it.
    let mut checker = session(&d.checker.mysql, true).await;
    let approve =
        format!("INSERT INTO compensation_verdicts (case_id, verdict, reason) VALUES ({case_id}, 'APPROVE', 'ok now')");
    assert_eq!(done(&mut checker, &approve).await, 1);
    let approved = take(&d.checker2, case_id, StepKind::Approve, "ok").await.expect("the second verdict");
    assert_eq!((approved.status, approved.approvals), (CaseStatus::Approved, 2));
    // One step per verdict, and no other.
    let per_kind = "SELECT (SELECT COUNT(*) FROM compensation_steps WHERE step = 'APPROVE') * 100 \
                    + (SELECT COUNT(*) FROM compensation_verdicts WHERE verdict = 'APPROVE') * 10 \
                    + (SELECT COUNT(*) FROM compensation_steps WHERE step = 'REJECT') \
                    - (SELECT COUNT(*) FROM compensation_verdicts WHERE verdict = 'REJECT')";
    assert_eq!(support::scalar(&pool, per_kind).await, 330, "three approvals and one rejection, each its verdict's");
}
