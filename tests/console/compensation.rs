//! Oversell compensation (issue 15): a case from the ledger, a plan, four eyes the database
//! enforces, and an execution with one effect per line. Each person connects with a MySQL
//! account of their own, as in production: the workflow's rules are the server's, keyed on
//! who is connected, so one shared account would make every step the maker's.

use crate::sale;
use crate::support::{self, accounts, TestRedis};

use sqlx::MySqlPool;
use stockguard_core::compensation::execute::{execute, LineRun};
use stockguard_core::compensation::open::open_case;
use stockguard_core::compensation::plan::{set_plan, Choice, Lines};
use stockguard_core::compensation::read::show;
use stockguard_core::compensation::workflow::{take, StepKind};
use stockguard_core::compensation::{Action, CaseStatus, CompensationError, LineReason};
use stockguard_core::profile::EnvironmentKind;
use stockguard_core::recon::{read_products, DriftStatus};

const P: u64 = 31;
const PRICE: i64 = 1999;

/// A sale of 10 units at 19.99 with 17 live orders (7 beyond stock, the ledger's identity
/// intact: stock -7) and 2 accepted orders withdrawn; Redis at 0.
async fn oversold_sale(pool: &MySqlPool, redis: &TestRedis) -> stockguard_core::connect::Connections {
    let conns = support::connections(pool, redis, EnvironmentKind::Sandbox).await;
    sale::put_on_sale(pool, &mut conns.redis.clone(), &conns.keys, P, (10, 0), 1).await;
    support::oversold::seed(pool, P, 10, 17, PRICE, "O").await;
    for n in 1..=2u64 {
        sqlx::query("INSERT INTO order_failures (order_no, product_id, user_id, qty, reason) VALUES (?, ?, ?, 1, 'DB_REFUSED_STOCK')")
            .bind(format!("F{n:03}"))
            .bind(P)
            .bind(200 + n)
            .execute(pool)
            .await
            .unwrap();
    }
    conns
}

/// Opens the case as `maker`, plans cancel-and-refund for the oversold lines and a coupon of
/// 5.00 for the withdrawn ones, and proposes it.
async fn proposed_case(maker: &MySqlPool) -> u64 {
    let case_id = open_case(maker, P).await.unwrap().case_id;
    let plan = [
        Choice {
            lines: Lines::Reason(LineReason::Oversold),
            action: Action::CancelRefund,
            amount_cents: None,
            note: String::new(),
        },
        Choice {
            lines: Lines::Reason(LineReason::Withdrawn),
            action: Action::Coupon,
            amount_cents: Some(500),
            note: "sorry".into(),
        },
    ];
    set_plan(maker, case_id, &plan).await.unwrap();
    take(maker, case_id, StepKind::Propose, "refund the oversold, a coupon for the withdrawn").await.unwrap();
    case_id
}

fn refused(result: Result<impl std::fmt::Debug, CompensationError>) -> String {
    match result {
        Err(CompensationError::Refused(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

async fn raw_error(pool: &MySqlPool, sql: &str) -> String {
    let err = sqlx::query(sql).execute(pool).await.expect_err("the database refuses it");
    err.as_database_error().map(|e| e.message().to_string()).unwrap_or_else(|| err.to_string())
}

#[sqlx::test(migrations = "./migrations")]
async fn seven_units_oversold_open_a_case_of_exactly_those_orders_in_acceptance_order(pool: MySqlPool) {
    let redis = TestRedis::new("comp1").await;
    oversold_sale(&pool, &redis).await;
    let opened = open_case(&pool, P).await.unwrap();
    assert!(opened.created);
    let again = open_case(&pool, P).await.unwrap();
    assert_eq!((again.case_id, again.created, again.lines_added), (opened.case_id, false, 0), "one case per incident");

    let case = show(&pool, opened.case_id).await.unwrap();
    let oversold: Vec<&str> =
        case.lines.iter().filter(|l| l.reason == LineReason::Oversold).map(|l| l.order_no.as_str()).collect();
    assert_eq!(oversold, ["O011", "O012", "O013", "O014", "O015", "O016", "O017"], "the last seven accepted");
    let withdrawn: Vec<&str> =
        case.lines.iter().filter(|l| l.reason == LineReason::Withdrawn).map(|l| l.order_no.as_str()).collect();
    assert_eq!(withdrawn, ["F001", "F002"]);
    assert_eq!((case.oversold_units, case.withdrawn_units), (7, 2));

    let plan = [Choice {
        lines: Lines::Reason(LineReason::Oversold),
        action: Action::CancelRefund,
        amount_cents: None,
        note: String::new(),
    }];
    let planned = set_plan(&pool, opened.case_id, &plan).await.unwrap();
    assert_eq!(planned.total_cents, 7 * PRICE, "the refunds are the orders' prices");
    let bad = [Choice {
        lines: Lines::Reason(LineReason::Withdrawn),
        action: Action::CancelRefund,
        amount_cents: None,
        note: String::new(),
    }];
    assert!(matches!(set_plan(&pool, opened.case_id, &bad).await, Err(CompensationError::BadPlan(_))));
    let unplanned = take(&pool, opened.case_id, StepKind::Propose, "").await;
    assert!(refused(unplanned).contains("every line needs an action"));
}

#[sqlx::test(migrations = "./migrations")]
async fn the_maker_cannot_approve_their_own_plan_nor_a_checker_execute_it_not_even_through_raw_sql(pool: MySqlPool) {
    let redis = TestRedis::new("comp2").await;
    oversold_sale(&pool, &redis).await;
    let (maker, checker) = (accounts::person(&pool, "maker").await, accounts::person(&pool, "checker").await);
    let case_id = proposed_case(&maker).await;

    assert!(refused(take(&maker, case_id, StepKind::Approve, "").await).contains("four eyes"));
    let verdict = format!("INSERT INTO compensation_verdicts (case_id, verdict) VALUES ({case_id}, 'APPROVE')");
    let raw = raw_error(&maker, &verdict).await;
    assert!(raw.contains("the maker cannot approve"), "{raw}");
    let step = format!("INSERT INTO compensation_steps (case_id, step) VALUES ({case_id}, 'APPROVE')");
    let raw = raw_error(&maker, &step).await;
    assert!(raw.contains("approvers only"), "a step without its verdict: {raw}");
    let raw =
        raw_error(&maker, &format!("UPDATE compensation_lines SET amount_cents = 1 WHERE case_id = {case_id}")).await;
    assert!(raw.contains("only while the case is a draft"), "{raw}");

    let approved = take(&checker, case_id, StepKind::Approve, "checked against the ledger").await.unwrap();
    assert_eq!(approved.status, CaseStatus::Approved);
    assert!(refused(execute(&checker, case_id, &|_, _, _| {}).await).contains("cannot execute"));
    assert!(refused(execute(&maker, case_id, &|_, _, _| {}).await).contains("cannot execute"));
    let raw = raw_error(
        &checker,
        &format!(
            "INSERT INTO compensation_effects (case_id, order_no, action) VALUES ({case_id}, 'O011', 'CANCEL_REFUND')"
        ),
    )
    .await;
    assert!(raw.contains("only while executing") || raw.contains("cannot execute"), "{raw}");
    let steps = show(&pool, case_id).await.unwrap().steps;
    let actors: Vec<(&str, &str)> = steps.iter().map(|s| (s.step.as_str(), s.actor.as_str())).collect();
    assert!(actors.iter().any(|(s, a)| *s == "PROPOSE" && a.starts_with("sgt_maker_")), "{actors:?}");
    assert!(actors.iter().any(|(s, a)| *s == "APPROVE" && a.starts_with("sgt_checker_")), "{actors:?}");
    accounts::forget(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn above_the_threshold_one_approval_is_not_enough(pool: MySqlPool) {
    let redis = TestRedis::new("comp3").await;
    oversold_sale(&pool, &redis).await;
    sqlx::query("UPDATE compensation_settings SET two_checkers_above_cents = 10000").execute(&pool).await.unwrap();
    let maker = accounts::person(&pool, "maker").await;
    let (first, second) = (accounts::person(&pool, "chk1").await, accounts::person(&pool, "chk2").await);
    let case_id = proposed_case(&maker).await;

    let once = take(&first, case_id, StepKind::Approve, "ok").await.unwrap();
    assert_eq!((once.status, once.approvals_needed, once.approvals), (CaseStatus::Proposed, 2, 1));
    assert!(refused(take(&first, case_id, StepKind::Approve, "ok again").await).contains("already approved"));
    let twice = take(&second, case_id, StepKind::Approve, "ok").await.unwrap();
    assert_eq!((twice.status, twice.approvals), (CaseStatus::Approved, 2));
    accounts::forget(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_rejection_needs_a_reason_and_sends_the_case_back_to_its_maker(pool: MySqlPool) {
    let redis = TestRedis::new("comp4").await;
    oversold_sale(&pool, &redis).await;
    let (maker, checker) = (accounts::person(&pool, "maker").await, accounts::person(&pool, "checker").await);
    let case_id = proposed_case(&maker).await;
    assert!(refused(take(&checker, case_id, StepKind::Reject, " ").await).contains("reason"));
    let back = take(&checker, case_id, StepKind::Reject, "fulfil instead: the merchant has units").await.unwrap();
    assert_eq!(back.status, CaseStatus::Draft);
    let fulfil = [Choice {
        lines: Lines::Reason(LineReason::Oversold),
        action: Action::Fulfil,
        amount_cents: None,
        note: String::new(),
    }];
    assert_eq!(set_plan(&maker, case_id, &fulfil).await.unwrap().total_cents, 2 * 500);
    accounts::forget(&pool).await;
}

/// Approves the proposed case as a checker of its own.
async fn approved(pool: &MySqlPool, case_id: u64) {
    let checker = accounts::person(pool, "checker").await;
    assert_eq!(take(&checker, case_id, StepKind::Approve, "ok").await.unwrap().status, CaseStatus::Approved);
}

/// After execution: one effect and one refund event per oversold line, one coupon event per
/// withdrawn line, the units back in the ledger once, and the product exact again.
async fn assert_executed_once(pool: &MySqlPool, conns: &stockguard_core::connect::Connections, case_id: u64) {
    assert_eq!(support::scalar(pool, "SELECT COUNT(*) FROM compensation_effects").await, 9);
    assert_eq!(
        support::scalar(pool, "SELECT COUNT(*) FROM compensation_events WHERE action = 'CANCEL_REFUND'").await,
        7
    );
    assert_eq!(support::scalar(pool, "SELECT COUNT(*) FROM compensation_events WHERE action = 'COUPON'").await, 2);
    assert_eq!(support::scalar(pool, "SELECT COUNT(*) FROM orders WHERE status = 'CANCELLED'").await, 7);
    assert_eq!(sale::db_stock(pool, P).await, 0, "-7 + the 7 cancelled units, once");
    let case = show(pool, case_id).await.unwrap();
    assert_eq!(case.status, CaseStatus::Executed);
    let mut r = conns.redis.clone();
    let reading = read_products(pool, &mut r, &conns.keys, &[P]).await.unwrap().remove(0);
    assert_eq!((reading.status, reading.drift), (DriftStatus::Ok, Some(0)), "{reading:?}");
}

#[sqlx::test(migrations = "./migrations")]
async fn two_executors_at_once_give_one_effect_per_line(pool: MySqlPool) {
    let redis = TestRedis::new("comp5").await;
    let conns = oversold_sale(&pool, &redis).await;
    let maker = accounts::person(&pool, "maker").await;
    let case_id = proposed_case(&maker).await;
    approved(&pool, case_id).await;
    let (a, b) = (accounts::person(&pool, "exec1").await, accounts::person(&pool, "exec2").await);

    let (ran_a, ran_b) = tokio::join!(execute(&a, case_id, &|_, _, _| {}), execute(&b, case_id, &|_, _, _| {}));
    let (ran_a, ran_b) = (ran_a.unwrap(), ran_b.unwrap());
    let done = |lines: &[LineRun]| lines.iter().filter(|l| matches!(l, LineRun::Done { .. })).count();
    assert_eq!(done(&ran_a.lines) + done(&ran_b.lines), 9, "each line done by exactly one executor");
    assert_executed_once(&pool, &conns, case_id).await;
    accounts::forget(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn an_executor_stopped_mid_run_and_run_again_gives_one_effect_per_line(pool: MySqlPool) {
    let redis = TestRedis::new("comp6").await;
    let conns = oversold_sale(&pool, &redis).await;
    let maker = accounts::person(&pool, "maker").await;
    let case_id = proposed_case(&maker).await;
    approved(&pool, case_id).await;
    let executor_url = accounts::account(&pool, "exec").await;
    let connect = async || MySqlPool::connect(&executor_url).await.expect("the executor connects");
    let executor = connect().await;

    // The run is dropped after its third line, as a killed process stops: whatever line it
    // was in never commits.
    let (third, reached) = tokio::sync::oneshot::channel::<()>();
    let third = std::sync::Mutex::new(Some(third));
    let on_line = move |done: usize, _: usize, _: &str| {
        if done == 3 {
            if let Some(tx) = third.lock().unwrap().take() {
                let _ = tx.send(());
            }
        }
    };
    let run = execute(&executor, case_id, &on_line);
    tokio::select! {
        _ = run => panic!("the run should have been stopped"),
        _ = reached => {}
    }
    let done_so_far = support::scalar(&pool, "SELECT COUNT(*) FROM compensation_lines WHERE outcome = 'DONE'").await;
    assert!((3..9).contains(&done_so_far), "{done_so_far} lines done before the stop");
    assert_eq!(show(&pool, case_id).await.unwrap().status, CaseStatus::Executing);

    // A killed process's connections close, and the server rolls back the line it was in
    // (a dropped future alone leaves its connection idle in the pool, its transaction and
    // row locks open until that connection is used again). The same person runs it again.
    executor.close().await;
    let executor = connect().await;
    let rerun = execute(&executor, case_id, &|_, _, _| {}).await.unwrap();
    assert_eq!(rerun.lines.len() as i64, 9 - done_so_far, "only the lines left are run again");
    assert_executed_once(&pool, &conns, case_id).await;
    accounts::forget(&pool).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_reading_loop_opens_the_case_once_it_confirms_the_oversell(pool: MySqlPool) {
    use stockguard_core::compensation::on_tick::OnOversold;
    use stockguard_core::recon::DriftTracker;

    let redis = TestRedis::new("comp7").await;
    let conns = oversold_sale(&pool, &redis).await;
    // What every loop (the window's board feed, `stockguard watch`) does each tick.
    let (mut tracker, mut on_oversold) = (DriftTracker::default(), OnOversold::default());
    let mut opened = Vec::new();
    for tick in 0..4 {
        let readings = read_products(&conns.mysql, &mut conns.redis.clone(), &conns.keys, &[]).await.unwrap();
        let confirmed = tracker.observe(&readings);
        if tick == 0 {
            assert!(confirmed.is_empty(), "one reading confirms nothing");
        } else {
            assert!(confirmed.iter().any(|c| c.product_id == P && c.status == DriftStatus::Oversold), "tick {tick}");
        }
        opened.extend(on_oversold.observe(&conns.mysql, &readings, &confirmed).await);
    }
    assert_eq!(opened.len(), 1, "one opening per incident, however many ticks confirm it");
    let (product, first) = &opened[0];
    assert!(*product == P && first.as_ref().unwrap().created, "{opened:?}");
    let cases = stockguard_core::compensation::read::list(&pool, None).await.unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!((cases[0].product_id.clone(), cases[0].lines), (P.into(), 9));
}
