//! Four eyes against the accounts it separates (issue 25): each person of a sale connects with
//! the MySQL and Redis accounts `roles apply` made for their role, and tries, by raw SQL and
//! raw Redis commands as a hostile colleague would, what the workflow forbids. What the
//! database enforces holds for them; what the code does on top is only a clearer answer.

use crate::roles::{applied, mysql_number, People, COMMAND_DENIED};
use crate::sale;
use crate::support::{self, TestRedis};

use sqlx::MySqlPool;
use stockguard_core::action::Refused;
use stockguard_core::compensation::execute::{execute, LineRun};
use stockguard_core::compensation::open::open_case;
use stockguard_core::compensation::plan::{set_plan, Choice, Lines, MAX_COUPON_CENTS};
use stockguard_core::compensation::read::show;
use stockguard_core::compensation::workflow::{take, StepKind};
use stockguard_core::compensation::{Action, CaseStatus, CompensationError};
use stockguard_core::connect::Connections;
use stockguard_core::recon::{read_products, DriftStatus};
use stockguard_core::roles::SaleRole;
use stockguard_core::switch::Home;

pub(crate) const P: u64 = 51;

/// The people of a compensation: a maker and an executor (on-call), two checkers (approvers),
/// an admin and a facilitator, each on their own accounts.
pub(crate) struct Desk {
    pub(crate) people: People,
    pub(crate) root: Connections,
    pub(crate) maker: Connections,
    pub(crate) executor: MySqlPool,
    pub(crate) checker: Connections,
    pub(crate) checker2: MySqlPool,
    pub(crate) admin: Connections,
    pub(crate) facilitator: Connections,
}

pub(crate) async fn desk(pool: &MySqlPool, redis: &TestRedis) -> Desk {
    let people = People::new();
    let mut spec = people.spec(&[SaleRole::Oncall, SaleRole::Approver, SaleRole::Admin, SaleRole::Facilitator]);
    for role in [SaleRole::Oncall, SaleRole::Approver] {
        let first = spec.persons.iter().find(|p| p.role == role).unwrap().clone();
        spec.persons.push(stockguard_core::roles::Person {
            name: format!("{role}2"),
            mysql_user: people.second(role),
            redis_user: None,
            ..first
        });
    }
    let root = support::connections(pool, redis, stockguard_core::profile::EnvironmentKind::Sandbox).await;
    let target = stockguard_core::roles::Target::of(&root).await.unwrap();
    let env = |var: &str| SaleRole::ALL.iter().find(|r| var == format!("PW_{r}")).map(|r| people.password(*r));
    stockguard_core::roles::apply(&stockguard_core::roles::plan(&spec, &target, &env).unwrap(), &root, "four eyes")
        .await
        .expect("the roles apply");
    let second = |role: SaleRole| {
        let people = &people;
        async move {
            let mut url = url::Url::parse(&support::mysql_url_of(pool).await).unwrap();
            url.set_username(&people.second(role)).unwrap();
            url.set_password(Some(&people.password(role))).unwrap();
            MySqlPool::connect(url.as_str()).await.expect("the second person connects")
        }
    };
    let executor = second(SaleRole::Oncall).await;
    let checker2 = second(SaleRole::Approver).await;
    Desk {
        maker: people.connect(SaleRole::Oncall, pool, redis).await,
        checker: people.connect(SaleRole::Approver, pool, redis).await,
        admin: people.connect(SaleRole::Admin, pool, redis).await,
        facilitator: people.connect(SaleRole::Facilitator, pool, redis).await,
        executor,
        checker2,
        root,
        people,
    }
}

/// `initial` units sold `sold` times at `price` (paid orders `{prefix}001...` by buyers 1001...),
/// stock below zero by the units beyond, Redis at 0.
pub(crate) async fn oversold(root: &Connections, initial: i64, sold: u64, price: i64, prefix: &str) {
    sale::put_on_sale(&root.mysql, &mut root.redis.clone(), &root.keys, P, (initial, 0), 1).await;
    support::oversold::seed(&root.mysql, P, initial, sold, price, prefix).await;
}

pub(crate) fn cancel_refund_all() -> [Choice; 1] {
    [Choice { lines: Lines::All, action: Action::CancelRefund, amount_cents: None, note: String::new() }]
}

/// Opens the product's case and plans cancel-and-refund for every line, as the maker.
pub(crate) async fn planned_refunds(d: &Desk) -> u64 {
    let case_id = open_case(&d.maker.mysql, P).await.unwrap().case_id;
    set_plan(&d.maker.mysql, case_id, &cancel_refund_all()).await.unwrap();
    case_id
}

/// Opens, plans (cancel and refund) and proposes as the maker; approves as the checker.
pub(crate) async fn approved_refunds(d: &Desk) -> u64 {
    let case_id = planned_refunds(d).await;
    take(&d.maker.mysql, case_id, StepKind::Propose, "refund what was sold beyond stock").await.unwrap();
    let approved = take(&d.checker.mysql, case_id, StepKind::Approve, "checked").await.unwrap();
    assert_eq!(approved.status, CaseStatus::Approved);
    case_id
}

/// The trigger's words of a statement the database refused.
pub(crate) async fn refused_raw(pool: &MySqlPool, sql: &str) -> String {
    let err = sqlx::query(sql).execute(pool).await.expect_err(sql);
    let db = err.as_database_error().unwrap_or_else(|| panic!("a server refusal, not {err}"));
    assert_eq!(db.code().as_deref(), Some("45000"), "{sql}: {err}");
    db.message().to_string()
}

async fn denied_raw(pool: &MySqlPool, sql: &str) {
    let err = sqlx::query(sql).execute(pool).await.expect_err(sql);
    assert_eq!(mysql_number(err), COMMAND_DENIED, "{sql}");
}

fn refusal<T: std::fmt::Debug>(result: Result<T, CompensationError>) -> String {
    match result {
        Err(CompensationError::Refused(why)) => why,
        other => panic!("a refusal, not {other:?}"),
    }
}

pub(crate) async fn events(pool: &MySqlPool) -> Vec<(String, u64, i64)> {
    sqlx::query_as("SELECT order_no, user_id, amount_cents FROM compensation_events ORDER BY order_no")
        .fetch_all(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_maker_cannot_redirect_a_refund_by_changing_the_buyer_of_a_line_or_of_its_order(pool: MySqlPool) {
    let redis = TestRedis::new("fe1").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 10, 12, 1999, "B").await;
    let case_id = planned_refunds(&d).await;
    let redirect = format!("UPDATE compensation_lines SET user_id = 777777 WHERE case_id = {case_id}");
    assert!(refused_raw(&d.maker.mysql, &redirect).await.contains("fixed"), "while a draft");
    take(&d.maker.mysql, case_id, StepKind::Propose, "refunds").await.unwrap();
    assert!(refused_raw(&d.maker.mysql, &redirect).await.contains("fixed"), "while proposed");
    take(&d.checker.mysql, case_id, StepKind::Approve, "ok").await.unwrap();
    assert!(refused_raw(&d.maker.mysql, &redirect).await.contains("fixed"), "once approved");
    let moved = format!("UPDATE compensation_lines SET accepted_at = NOW() WHERE case_id = {case_id}");
    assert!(refused_raw(&d.maker.mysql, &moved).await.contains("fixed"));
    // The order itself is the buyer's record: on-call may change its status, never its buyer.
    let order = "UPDATE orders SET user_id = 666666 WHERE order_no IN ('B011', 'B012')";
    assert!(refused_raw(&d.maker.mysql, order).await.contains("fixed"));
    let price = "UPDATE orders SET price_cents = 1 WHERE order_no = 'B011'";
    assert!(refused_raw(&d.maker.mysql, price).await.contains("fixed"));

    execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    assert_eq!(
        events(&pool).await,
        vec![("B011".to_string(), 1011, 1999), ("B012".to_string(), 1012, 1999)],
        "the refunds go to the orders' own buyers"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn no_role_writes_a_refund_event_and_an_event_is_born_once_from_its_effect(pool: MySqlPool) {
    let redis = TestRedis::new("fe2").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "E").await;
    let case_id = approved_refunds(&d).await;
    let forge = format!(
        "INSERT INTO compensation_events (idempotency_key, kind, case_id, order_no, user_id, action, amount_cents, status) \
         VALUES ('forged', 'compensation.executed', {case_id}, 'E003', 999, 'CANCEL_REFUND', 900000, 'SENT')"
    );
    for who in [&d.maker.mysql, &d.executor, &d.admin.mysql, &d.facilitator.mysql, &d.checker.mysql] {
        denied_raw(who, &forge).await;
    }
    execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    for who in [&d.maker.mysql, &d.executor, &d.admin.mysql] {
        denied_raw(who, &forge).await;
    }
    // Not even the schema's owner: a second event of the effect, or one the effect did not make.
    let err = sqlx::query(&forge).execute(&pool).await.expect_err("a second event of one effect");
    assert!(err.as_database_error().is_some_and(|e| e.is_unique_violation()), "{err}");
    let none = forge.replace("'E003'", "'E001'");
    assert!(refused_raw(&pool, &none).await.contains("needs its effect"));
    let (user, amount, status): (u64, i64, String) =
        sqlx::query_as("SELECT user_id, amount_cents, CAST(status AS CHAR) FROM compensation_events")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((user, amount, status.as_str()), (1003, 500, "PENDING"), "one event, as the effect made it");
    let rewrite = "UPDATE compensation_events SET amount_cents = 900000";
    assert!(refused_raw(&pool, rewrite).await.contains("fixed"));
}

#[sqlx::test(migrations = "./migrations")]
async fn a_negative_line_cannot_hide_refunds_from_the_second_checker(pool: MySqlPool) {
    let redis = TestRedis::new("fe3").await;
    let d = desk(&pool, &redis).await;
    // Three orders beyond stock at 600.00: 1,800.00 of refunds, above the 1,000.00 threshold.
    oversold(&d.root, 2, 5, 60_000, "N").await;
    let case_id = open_case(&d.maker.mysql, P).await.unwrap().case_id;
    let plan = [
        Choice { lines: Lines::All, action: Action::CancelRefund, amount_cents: None, note: String::new() },
        Choice { lines: Lines::Order("N003".into()), action: Action::Note, amount_cents: None, note: "x".into() },
    ];
    set_plan(&d.maker.mysql, case_id, &plan).await.unwrap();
    let negative =
        format!("UPDATE compensation_lines SET amount_cents = -100000 WHERE case_id = {case_id} AND order_no = 'N003'");
    assert!(refused_raw(&d.maker.mysql, &negative).await.contains("never negative"));
    let cheap_refund = format!(
        "UPDATE compensation_lines SET action = 'CANCEL_REFUND', amount_cents = 1 WHERE case_id = {case_id} AND order_no = 'N003'"
    );
    assert!(refused_raw(&d.maker.mysql, &cheap_refund).await.contains("price times its quantity"));
    set_plan(&d.maker.mysql, case_id, &cancel_refund_all()).await.unwrap();
    let proposed = take(&d.maker.mysql, case_id, StepKind::Propose, "refunds").await.unwrap();
    assert_eq!(proposed.approvals_needed, 2, "1,800.00 needs two checkers");
    let once = take(&d.checker.mysql, case_id, StepKind::Approve, "ok").await.unwrap();
    assert_eq!(once.status, CaseStatus::Proposed);
    let twice = take(&d.checker2, case_id, StepKind::Approve, "ok").await.unwrap();
    assert_eq!(twice.status, CaseStatus::Approved);
}

#[sqlx::test(migrations = "./migrations")]
async fn a_draft_takes_only_orders_of_its_own_product_and_each_line_as_its_order_says(pool: MySqlPool) {
    let redis = TestRedis::new("fe4").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "D").await;
    // Another product with an honourable order of its own.
    sqlx::query(
        "INSERT INTO inventory (product_id, name, initial_stock, stock, price_cents) VALUES (52, 'other', 5, 4, 700)",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, source, pay_deadline) \
         VALUES ('X001', 42, 52, 1, 'PAID', 'DB', NOW() + INTERVAL 1 HOUR)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let case_id = open_case(&d.maker.mysql, P).await.unwrap().case_id;
    let line = |order: &str, reason: &str| {
        format!(
            "INSERT INTO compensation_lines (case_id, order_no, user_id, qty, accepted_at, price_cents, reason) \
             VALUES ({case_id}, '{order}', 777, 9, NOW(), 99999, '{reason}')"
        )
    };
    assert!(refused_raw(&d.maker.mysql, &line("X001", "OVERSOLD")).await.contains("case's product"));
    assert!(refused_raw(&d.maker.mysql, &line("MADEUP", "OVERSOLD")).await.contains("no such order"));
    assert!(refused_raw(&d.maker.mysql, &line("MADEUP", "WITHDRAWN")).await.contains("no such order"));
    assert!(refused_raw(&d.maker.mysql, &line("D003", "OVERSOLD")).await.contains("in a case already"));
    // An honourable order of the product, added by hand: born as its order says...
    sqlx::query(&line("D001", "OVERSOLD")).execute(&d.maker.mysql).await.unwrap();
    let (user, qty, price): (u64, i64, i64) = sqlx::query_as(
        "SELECT user_id, CAST(qty AS SIGNED), price_cents FROM compensation_lines WHERE order_no = 'D001'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((user, qty, price), (1001, 1, 500));
    // ...and never cancelled: at execution it is not beyond stock.
    set_plan(&d.maker.mysql, case_id, &cancel_refund_all()).await.unwrap();
    take(&d.maker.mysql, case_id, StepKind::Propose, "refunds").await.unwrap();
    take(&d.checker.mysql, case_id, StepKind::Approve, "ok").await.unwrap();
    let run = execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    assert!(
        run.lines.iter().any(|l| matches!(l, LineRun::Skipped { order_no, detail }
        if order_no == "D001" && detail.contains("no longer beyond stock"))),
        "{:?}",
        run.lines
    );
    let statuses: Vec<(String, String)> =
        sqlx::query_as("SELECT order_no, CAST(status AS CHAR) FROM orders ORDER BY order_no")
            .fetch_all(&pool)
            .await
            .unwrap();
    let status = |no: &str| statuses.iter().find(|(o, _)| o == no).unwrap().1.clone();
    assert_eq!((status("D001"), status("D003"), status("X001")), ("PAID".into(), "CANCELLED".into(), "PAID".into()));
    assert_eq!(events(&pool).await, vec![("D003".to_string(), 1003, 500)]);
}

#[sqlx::test(migrations = "./migrations")]
async fn one_person_cannot_close_a_draft_that_owes_buyers(pool: MySqlPool) {
    let redis = TestRedis::new("fe5").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 5, 500, "C").await;
    let case_id = open_case(&d.maker.mysql, P).await.unwrap().case_id;
    for who in [&d.checker.mysql, &d.maker.mysql, &d.admin.mysql] {
        assert!(refusal(take(who, case_id, StepKind::Close, "nothing to do").await).contains("closed through its plan"));
    }
    assert_eq!(show(&pool, case_id).await.unwrap().status, CaseStatus::Draft);
    let reopened = open_case(&d.maker.mysql, P).await.unwrap();
    assert_eq!((reopened.case_id, reopened.created), (case_id, false), "the case is still there to work");
    // Notes through the four eyes are how a draft that owes nothing ends.
    let notes = [Choice { lines: Lines::All, action: Action::Note, amount_cents: None, note: "checked".into() }];
    set_plan(&d.maker.mysql, case_id, &notes).await.unwrap();
    take(&d.maker.mysql, case_id, StepKind::Propose, "nothing owed").await.unwrap();
    take(&d.checker.mysql, case_id, StepKind::Approve, "agreed").await.unwrap();
    execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    take(&d.executor, case_id, StepKind::Close, "noted").await.unwrap();
    assert_eq!(show(&pool, case_id).await.unwrap().status, CaseStatus::Closed);
    // Noted orders count as compensated: the product stays oversold and the next case has none.
    assert!(matches!(open_case(&d.maker.mysql, P).await, Err(CompensationError::NothingToCompensate(p)) if p == P));
}

#[sqlx::test(migrations = "./migrations")]
async fn an_unpaid_order_is_cancelled_and_not_refunded(pool: MySqlPool) {
    let redis = TestRedis::new("fe6").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 1000, "U").await;
    sqlx::query("UPDATE orders SET status = 'WAIT_PAY' WHERE order_no = 'U003'").execute(&pool).await.unwrap();
    let case_id = approved_refunds(&d).await;
    let run = execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    assert!(
        matches!(&run.lines[..], [LineRun::Done { detail, .. }] if detail.contains("unpaid: nothing refunded")),
        "{:?}",
        run.lines
    );
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM orders WHERE status = 'CANCELLED'").await, 1);
    assert!(events(&pool).await.is_empty(), "no refund for an order never paid");
}

#[sqlx::test(migrations = "./migrations")]
async fn orders_timing_out_while_their_case_executes_never_give_an_owed_unit_to_redis(pool: MySqlPool) {
    use stockguard_engine::engine::close::close_due_orders;
    use stockguard_engine::engine::relay::Relay;
    let redis = TestRedis::new("fe7").await;
    let d = desk(&pool, &redis).await;
    // 1,510 live orders for 10 units, half of them unpaid with their deadline passed.
    sale::put_on_sale(&pool, &mut d.root.redis.clone(), &d.root.keys, P, (10, 0), 1).await;
    sqlx::query("UPDATE inventory SET stock = -1500, price_cents = 50 WHERE product_id = ?")
        .bind(P)
        .execute(&pool)
        .await
        .unwrap();
    let mut insert = sqlx::QueryBuilder::<sqlx::MySql>::new(
        "INSERT INTO orders (order_no, user_id, product_id, buy_count, status, source, pay_deadline) ",
    );
    insert.push_values(1..=1510u64, |mut row, n| {
        row.push_bind(format!("T{n:04}"))
            .push_bind(10_000 + n)
            .push_bind(P)
            .push_bind(1)
            .push_bind(if n.is_multiple_of(2) { "WAIT_PAY" } else { "PAID" })
            .push_bind("DB")
            .push_unseparated(", NOW(3) - INTERVAL 1 MINUTE");
    });
    insert.build().execute(&pool).await.unwrap();
    let case_id = approved_refunds(&d).await;
    assert_eq!(show(&pool, case_id).await.unwrap().lines.len(), 1500);

    // The closer and the relay run beside the execution, as the engine's loops do.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let closer = async {
        let (mut closed, relay) = (0, Relay::default());
        let mut conn = d.root.redis.clone();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            closed +=
                close_due_orders(&pool, Home::Sale, chrono::Utc::now().naive_utc(), 50).await.expect("the closer runs");
            relay.run_once(&pool, Home::Sale, &mut conn, &d.root.keys, 500).await.expect("the relay runs");
        }
        closed
    };
    let executed = async {
        let run = execute(&d.executor, case_id, &|_, _, _| {}).await;
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        run
    };
    let (closed, run) = tokio::join!(closer, executed);
    let run = run.expect("execution ends without a deadlock or an error");
    let closed = closed + close_due_orders(&pool, Home::Sale, chrono::Utc::now().naive_utc(), 2000).await.unwrap();
    Relay::default().run_once(&pool, Home::Sale, &mut d.root.redis.clone(), &d.root.keys, 2000).await.unwrap();
    let done = run.lines.iter().filter(|l| matches!(l, LineRun::Done { .. })).count();
    println!("closer closed {closed}, execution cancelled {done} of 1500 lines");
    assert!(closed > 0, "the closer raced the execution");

    let reading = read_products(&pool, &mut d.root.redis.clone(), &d.root.keys, &[P]).await.unwrap().remove(0);
    assert!(
        matches!(reading.status, DriftStatus::Ok | DriftStatus::RedisLow),
        "never REDIS_HIGH: Redis may not sell what the DB owes: {reading:?}"
    );
    assert!(reading.db_stock >= 0 && reading.live_orders_qty <= 10, "{reading:?}");
    let refunded = events(&pool).await;
    assert!(refunded.iter().all(|(no, _, _)| no[1..].parse::<u64>().unwrap() % 2 == 1), "only paid orders refunded");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_approved_plan_leaves_orders_alone_once_the_oversell_has_cleared(pool: MySqlPool) {
    let redis = TestRedis::new("fe8").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "K").await;
    let case_id = approved_refunds(&d).await;
    // The merchant found a unit: the ledger is whole again before the plan runs.
    sqlx::query("UPDATE inventory SET initial_stock = 3, stock = 0 WHERE product_id = ?")
        .bind(P)
        .execute(&d.maker.mysql)
        .await
        .unwrap();
    let run = execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    assert!(matches!(&run.lines[..], [LineRun::Skipped { .. }]), "{:?}", run.lines);
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM orders WHERE status = 'PAID'").await, 3);
    assert!(events(&pool).await.is_empty());
}

#[sqlx::test(migrations = "./migrations")]
async fn stock_below_zero_with_honourable_orders_opens_no_case(pool: MySqlPool) {
    let redis = TestRedis::new("fe9").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 10, 5, 500, "M").await;
    // A hand edit: stock -3 while 5 live orders sit within 10 units (a ledger mismatch).
    sqlx::query("UPDATE inventory SET stock = -3 WHERE product_id = ?").bind(P).execute(&pool).await.unwrap();
    assert!(matches!(open_case(&d.maker.mysql, P).await, Err(CompensationError::NothingToCompensate(p)) if p == P));
}

#[sqlx::test(migrations = "./migrations")]
async fn a_refund_is_the_price_the_order_was_sold_at(pool: MySqlPool) {
    let redis = TestRedis::new("fe10").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 1999, "S").await;
    // On-call may reprice the product for later sales; the orders keep theirs.
    sqlx::query("UPDATE inventory SET price_cents = 500000 WHERE product_id = ?")
        .bind(P)
        .execute(&d.maker.mysql)
        .await
        .unwrap();
    let case_id = approved_refunds(&d).await;
    assert_eq!(show(&pool, case_id).await.unwrap().lines[0].price_cents, 1999);
    execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    assert_eq!(events(&pool).await, vec![("S003".to_string(), 1003, 1999)]);
}

#[sqlx::test(migrations = "./migrations")]
async fn an_executor_cannot_record_an_effect_that_did_not_happen(pool: MySqlPool) {
    let redis = TestRedis::new("fe11").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 4, 500, "R").await;
    let case_id = approved_refunds(&d).await;
    sqlx::query(&format!("INSERT INTO compensation_steps (case_id, step) VALUES ({case_id}, 'EXECUTE')"))
        .execute(&d.executor)
        .await
        .unwrap();
    let done = format!("UPDATE compensation_lines SET outcome = 'DONE' WHERE case_id = {case_id}");
    assert!(refused_raw(&d.executor, &done).await.contains("its effect's"));
    let other_action =
        format!("INSERT INTO compensation_effects (case_id, order_no, action) VALUES ({case_id}, 'R003', 'NOTE')");
    assert!(refused_raw(&d.executor, &other_action).await.contains("approved action"));
    // A raw effect row is an execution: the order is cancelled and refunded for real.
    sqlx::query(&format!(
        "INSERT INTO compensation_effects (case_id, order_no, action, executor) VALUES ({case_id}, 'R003', 'CANCEL_REFUND', 'someone')"
    ))
    .execute(&d.executor)
    .await
    .unwrap();
    let status: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM orders WHERE order_no = 'R003'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(status, "CANCELLED");
    assert_eq!(events(&pool).await, vec![("R003".to_string(), 1003, 500)]);
    let finished = execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    assert_eq!(finished.after.status, CaseStatus::Executed);
    // What an execution recorded stays as it happened.
    for edit in [
        "executed_by = 'someone else'",
        "executed_at = NOW() - INTERVAL 1 DAY",
        "outcome_detail = 'refunded twice'",
        "outcome = 'SKIPPED'",
    ] {
        let sql = format!("UPDATE compensation_lines SET {edit} WHERE case_id = {case_id}");
        let why = refused_raw(&d.executor, &sql).await;
        assert!(why.contains("effect") || why.contains("once"), "{edit}: {why}");
    }
    let by: String = sqlx::query_scalar("SELECT executed_by FROM compensation_lines WHERE order_no = 'R003'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(by, d.people.second_oncall(), "the server's word, not the INSERT's");
}

#[sqlx::test(migrations = "./migrations")]
async fn admin_cannot_empty_the_audit_log_or_drop_its_triggers(pool: MySqlPool) {
    let redis = TestRedis::new("fe12").await;
    let d = desk(&pool, &redis).await;
    let admin = &d.admin.mysql;
    for sql in ["TRUNCATE TABLE audit_log", "DROP TRIGGER audit_log_refuses_delete", "DROP TABLE audit_log"] {
        let err = sqlx::query(sql).execute(admin).await.expect_err(sql);
        let n = mysql_number(err);
        assert!(matches!(n, 1142 | 1227 | 1044), "{sql}: {n}");
    }
    denied_raw(admin, "DELETE FROM audit_log").await;
    denied_raw(admin, "UPDATE audit_log SET reason = 'rewritten'").await;
    assert!(support::scalar(&pool, "SELECT COUNT(*) FROM audit_log").await >= 1, "roles.apply's row is there");
    // Admin keeps what it is for: the threshold, hand corrections.
    sqlx::query("UPDATE compensation_settings SET two_checkers_above_cents = 5000").execute(admin).await.unwrap();
    let grants: Vec<String> = sqlx::query_scalar(&format!("SHOW GRANTS FOR `{}_admin`", d.people.role_prefix))
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(!grants.iter().any(|g| g.contains("ALL PRIVILEGES")), "{grants:?}");
}

#[sqlx::test(migrations = "./migrations")]
async fn redis_users_reach_no_key_and_no_function_outside_the_sales_prefix(pool: MySqlPool) {
    let redis = TestRedis::new("fe13").await;
    let d = desk(&pool, &redis).await;
    let library = "#!lua name=sgt_other_app\nredis.register_function('noop', function() return 1 end)";
    for (role, conns) in [("oncall", &d.maker), ("facilitator", &d.facilitator), ("admin", &d.admin)] {
        let mut r = conns.redis.clone();
        for args in [
            vec!["FUNCTION", "FLUSH"],
            vec!["FUNCTION", "LOAD", library],
            vec!["FUNCTION", "DELETE", "sgt_other_app"],
            vec!["SCAN", "0"],
            vec!["RANDOMKEY"],
            vec!["DBSIZE"],
            vec!["KEYS", "*"],
            vec!["FLUSHALL"],
            vec!["GET", "another-app:key"],
        ] {
            let result: redis::RedisResult<redis::Value> =
                redis::cmd(args[0]).arg(&args[1..]).query_async(&mut r).await;
            assert_eq!(result.as_ref().err().and_then(|e| e.code()), Some("NOPERM"), "{role}: {args:?} {result:?}");
        }
        let _: () = redis::cmd("SET").arg(conns.keys.stock(P)).arg(1).query_async(&mut r).await.unwrap();
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn no_redis_user_hears_key_names_or_channels_past_the_prefix_and_admin_keeps_others_scripts(pool: MySqlPool) {
    let redis = TestRedis::new("fe13b").await;
    let d = desk(&pool, &redis).await;
    let noperm =
        |result: &redis::RedisResult<redis::Value>| result.as_ref().err().and_then(|e| e.code()) == Some("NOPERM");
    for (role, conns) in
        [("oncall", &d.maker), ("approver", &d.checker), ("facilitator", &d.facilitator), ("admin", &d.admin)]
    {
        let mut r = conns.redis.clone();
        // BCAST tracking sends every key name written anywhere on the server.
        let tracking: redis::RedisResult<redis::Value> =
            redis::cmd("CLIENT").arg(&["TRACKING", "ON", "BCAST"]).query_async(&mut r).await;
        assert!(noperm(&tracking), "{role}: {tracking:?}");
    }
    let mut admin = d.admin.redis.clone();
    for args in [
        vec!["PUBLISH", "another-app:orders", "x"],
        vec!["PUBLISH", "__keyspace@0__:another-app:key", "x"],
        vec!["SCRIPT", "FLUSH"],
        vec!["SCRIPT", "KILL"],
    ] {
        let result: redis::RedisResult<redis::Value> =
            redis::cmd(args[0]).arg(&args[1..]).query_async(&mut admin).await;
        assert!(noperm(&result), "admin: {args:?} {result:?}");
    }
    let own = format!("{}:events", d.admin.keys.prefix());
    let _: i64 =
        redis::cmd("PUBLISH").arg(&own).arg("x").query_async(&mut admin).await.expect("the sale's own channel");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_facilitators_acknowledgement_is_refused_by_the_core_before_the_database(pool: MySqlPool) {
    use stockguard_core::alerts::{acks, AlertError};
    let redis = TestRedis::new("fe14").await;
    let people = People::new();
    let _admin = applied(&pool, &redis, &people, &[SaleRole::Facilitator]).await;
    let mut settings = people.settings(SaleRole::Facilitator, &pool, &redis).await;
    settings.role = stockguard_core::profile::Role::Facilitator;
    let facilitator = Connections::open(settings).await.unwrap();
    let refused = acks::acknowledge(&facilitator, &[], "oversold:1", "mine", None).await;
    assert!(
        matches!(
            refused,
            Err(AlertError::Refused(Refused::Role { role: stockguard_core::profile::Role::Facilitator, .. }))
        ),
        "{refused:?}"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn two_checkers_in_two_transactions_both_count_even_from_an_older_snapshot(pool: MySqlPool) {
    let redis = TestRedis::new("fe15").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "W").await;
    sqlx::query("UPDATE compensation_settings SET two_checkers_above_cents = 100").execute(&pool).await.unwrap();
    let case_id = planned_refunds(&d).await;
    take(&d.maker.mysql, case_id, StepKind::Propose, "refunds").await.unwrap();
    // The second checker's transaction reads first (its snapshot), then the first approves.
    let mut late = d.checker2.begin().await.unwrap();
    let seen: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM compensation_steps").fetch_one(&mut *late).await.unwrap();
    assert!(seen > 0);
    take(&d.checker.mysql, case_id, StepKind::Approve, "ok").await.unwrap();
    sqlx::query(&format!(
        "INSERT INTO compensation_verdicts (case_id, verdict, reason) VALUES ({case_id}, 'APPROVE', 'ok')"
    ))
    .execute(&mut *late)
    .await
    .unwrap();
    late.commit().await.unwrap();
    assert_eq!(show(&pool, case_id).await.unwrap().status, CaseStatus::Approved);
}

#[sqlx::test(migrations = "./migrations")]
async fn two_checkers_approving_in_the_same_instant_both_count_and_never_deadlock(pool: MySqlPool) {
    let redis = TestRedis::new("fe15b").await;
    let d = desk(&pool, &redis).await;
    sqlx::query("UPDATE compensation_settings SET two_checkers_above_cents = 100").execute(&pool).await.unwrap();
    // The review saw 8 raw races of 50 end in a deadlock (1213): 100 races here, raw SQL.
    for round in 0..100_u64 {
        let product = 200 + round;
        sale::put_on_sale(&d.root.mysql, &mut d.root.redis.clone(), &d.root.keys, product, (2, 0), 1).await;
        crate::support::oversold::seed(&d.root.mysql, product, 2, 3, 500, &format!("D{round}-")).await;
        let case_id = open_case(&d.maker.mysql, product).await.unwrap().case_id;
        set_plan(&d.maker.mysql, case_id, &cancel_refund_all()).await.unwrap();
        take(&d.maker.mysql, case_id, StepKind::Propose, "refunds").await.unwrap();
        let verdict =
            format!("INSERT INTO compensation_verdicts (case_id, verdict, reason) VALUES ({case_id}, 'APPROVE', 'ok')");
        let (first, second) =
            tokio::join!(sqlx::query(&verdict).execute(&d.checker.mysql), sqlx::query(&verdict).execute(&d.checker2));
        first.unwrap_or_else(|e| panic!("round {round}, the first checker: {e}"));
        second.unwrap_or_else(|e| panic!("round {round}, the second checker: {e}"));
        assert_eq!(show(&pool, case_id).await.unwrap().status, CaseStatus::Approved, "round {round}");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn no_role_writes_an_audit_row_in_the_workflows_own_shape_for_a_step_it_did_not_take(pool: MySqlPool) {
    let redis = TestRedis::new("fe15c").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "A").await;
    let case_id = approved_refunds(&d).await;
    let (step_id, actor): (u64, String) =
        sqlx::query_as("SELECT id, actor FROM compensation_steps WHERE case_id = ? AND step = 'APPROVE'")
            .bind(case_id)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(actor, d.people.user(SaleRole::Approver));
    let forge = |action: &str, step: u64| {
        format!(
            "INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome, details) \
             VALUES ('', 'db', '', '{action}', 'case:{case_id}', 'ok', 'RECORDED', \
                     JSON_OBJECT('case_id', {case_id}, 'step_id', {step}, 'product_id', {P}))"
        )
    };
    // An approval that never happened, an approval of the checker's written by someone else,
    // and the checker's own step under another action.
    for (who, sql) in [
        (&d.maker.mysql, forge("compensation.approve", step_id + 100)),
        (&d.maker.mysql, forge("compensation.approve", step_id)),
        (&d.admin.mysql, forge("compensation.approve", step_id)),
        (&d.checker.mysql, forge("compensation.execute", step_id)),
    ] {
        assert!(refused_raw(who, &sql).await.contains("role db"), "{sql}");
    }
    // A client's own audit rows (any other role) are still its to write.
    sqlx::query(
        "INSERT INTO audit_log (actor, role, environment, action, target, reason, outcome, details) \
         VALUES ('', 'oncall', 'sandbox', 'note', 'case', 'ok', 'RECORDED', '{}')",
    )
    .execute(&d.maker.mysql)
    .await
    .unwrap();
}

#[sqlx::test(migrations = "./migrations")]
async fn a_coupon_beyond_the_bound_is_refused_in_the_plan_and_by_the_database(pool: MySqlPool) {
    let redis = TestRedis::new("fe16").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "Q").await;
    let case_id = open_case(&d.maker.mysql, P).await.unwrap().case_id;
    let huge =
        [Choice { lines: Lines::All, action: Action::Coupon, amount_cents: Some(i64::MAX), note: String::new() }];
    let err = set_plan(&d.maker.mysql, case_id, &huge).await.unwrap_err();
    assert!(matches!(&err, CompensationError::BadPlan(why) if why.contains("10000000.00")), "{err}");
    let raw = format!(
        "UPDATE compensation_lines SET action = 'COUPON', amount_cents = {} WHERE case_id = {case_id}",
        MAX_COUPON_CENTS + 1
    );
    assert!(refused_raw(&d.maker.mysql, &raw).await.contains("coupon is between"));
}

#[sqlx::test(migrations = "./migrations")]
async fn a_proposer_apart_from_the_planner_does_not_make_the_planner_the_executor(pool: MySqlPool) {
    let redis = TestRedis::new("fe17").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "A").await;
    let case_id = planned_refunds(&d).await;
    // Admin proposes the on-call's plan, and so is its maker (an approver may not propose:
    // issue 48, finding 5); an approver approves.
    take(&d.admin.mysql, case_id, StepKind::Propose, "as planned").await.unwrap();
    take(&d.checker.mysql, case_id, StepKind::Approve, "ok").await.unwrap();
    let why = refusal(execute(&d.maker.mysql, case_id, &|_, _, _| {}).await);
    assert!(why.contains("who planned a line cannot execute"), "{why}");
    assert_eq!(support::scalar(&pool, "SELECT COUNT(*) FROM orders WHERE status = 'CANCELLED'").await, 0);
    execute(&d.executor, case_id, &|_, _, _| {}).await.expect("a person apart from all three executes");
}

#[sqlx::test(migrations = "./migrations")]
async fn every_compensation_step_leaves_an_audit_row_with_the_servers_account(pool: MySqlPool) {
    let redis = TestRedis::new("fe18").await;
    let d = desk(&pool, &redis).await;
    oversold(&d.root, 2, 3, 500, "L").await;
    let case_id = approved_refunds(&d).await;
    execute(&d.executor, case_id, &|_, _, _| {}).await.unwrap();
    take(&d.executor, case_id, StepKind::Close, "refunded").await.unwrap();
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT action, actor FROM audit_log WHERE action LIKE 'compensation.%' AND target = ? ORDER BY id",
    )
    .bind(format!("case:{case_id}"))
    .fetch_all(&pool)
    .await
    .unwrap();
    let maker = d.people.user(SaleRole::Oncall);
    let checker = d.people.user(SaleRole::Approver);
    let executor = d.people.second_oncall();
    let expected: Vec<(String, String)> = [
        ("compensation.open", &maker),
        ("compensation.plan", &maker),
        ("compensation.propose", &maker),
        ("compensation.approve", &checker),
        ("compensation.execute", &executor),
        ("compensation.executed", &executor),
        ("compensation.close", &executor),
    ]
    .into_iter()
    .map(|(a, who)| (a.to_string(), who.clone()))
    .collect();
    assert_eq!(rows, expected);
}
