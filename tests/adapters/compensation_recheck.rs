//! Execution over an adapter re-checks each line in the sale's own rows (issue 48, finding 4):
//! an approved case of the course-shaped sale, with a declared cancel and an account that may
//! write it, meets a sale that moved after approval (stock topped up, an earlier order cancelled,
//! an order's buyer changed, a cancel the sale's own trigger turns into another status). Each
//! line the sale no longer bears out is SKIPPED with a detail and left as it is in the sale; a
//! cancel is DONE only when the sale's row reads back the cancel status.

use std::sync::Arc;
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::adapter::AdapterFile;
use stockguard_core::compensation::execute::{Execution, LineRun};
use stockguard_core::compensation::over_adapter::{self, SaleSide};
use stockguard_core::compensation::plan::{set_plan, Choice, Lines};
use stockguard_core::compensation::read::show;
use stockguard_core::compensation::workflow::{take, StepKind};
use stockguard_core::compensation::{Action, LineOutcome};

use crate::sales::course_stream::{status, CourseStreamSale};
use crate::sales::Traffic;
use crate::support::{self, waits::wait_for};

const P: i64 = 1;
const STOCK: i64 = 4;

/// An approved case of two orders the sale wrote beyond its stock of 4, to cancel and refund,
/// its baseline recorded as the sale opened; and the people of the case.
struct Approved {
    sale: Arc<CourseStreamSale>,
    file: AdapterFile,
    case_id: u64,
    /// The sale's ids of the orders beyond stock, oldest first.
    beyond: Vec<i64>,
    /// The orders sold within stock, oldest first.
    sold: Vec<i64>,
    executor: MySqlPool,
    executor_name: String,
}

impl Approved {
    async fn new(state: &MySqlPool) -> Self {
        let sale = Arc::new(CourseStreamSale::start(&[(P, STOCK)]).await);
        Traffic::buyers(6).on(&[P]).run(&sale).await;
        wait_for("the consumer drains the stream", Duration::from_secs(30), async || sale.stream_backlog().await == 0)
            .await;
        stockguard_core::adapter::state::open(&support::mysql_url_of(state).await)
            .await
            .expect("the state database is migrated");
        let mut sold = sale.order_ids(P, status::UNPAID).await;
        sold.sort();
        assert_eq!(sold.len() as i64, STOCK, "the sale sold its stock and no more");
        let text = format!("{}\n[compensation]\ncancel = {{ status = {} }}\n", sale.adapter_toml(), status::CANCELLED);
        let file = AdapterFile::parse(&text, std::path::Path::new("sale.toml")).unwrap();
        record_baseline(state, &file, STOCK).await;
        sale.oversell(P, 2).await;
        let mut beyond: Vec<i64> =
            sale.order_ids(P, status::UNPAID).await.into_iter().filter(|id| !sold.contains(id)).collect();
        beyond.sort();
        assert_eq!(beyond.len(), 2);

        let maker = support::accounts::person(state, "mak").await;
        let checker = support::accounts::person(state, "chk").await;
        let executor = support::accounts::person(state, "exe").await;
        let executor_name: String =
            sqlx::query_scalar("SELECT SUBSTRING_INDEX(USER(), '@', 1)").fetch_one(&executor).await.unwrap();
        let select_only = MySqlPool::connect(&sale.db.select_only_url().await).await.unwrap();
        let opened =
            over_adapter::open_case(&maker, SaleSide { file: &file, db: &select_only }, &(P as u64).into(), STOCK, &[])
                .await
                .unwrap();
        assert_eq!(opened.lines_added, 2);
        let all = [Choice { lines: Lines::All, action: Action::CancelRefund, amount_cents: None, note: String::new() }];
        set_plan(&maker, opened.case_id, &all).await.unwrap();
        take(&maker, opened.case_id, StepKind::Propose, "cancel what was sold beyond stock").await.unwrap();
        take(&checker, opened.case_id, StepKind::Approve, "checked").await.unwrap();
        select_only.close().await;
        Self { sale, file, case_id: opened.case_id, beyond, sold, executor, executor_name }
    }

    /// The executor runs the case through an account of the sale's that may write its orders.
    async fn execute(&self) -> Execution {
        over_adapter::execute(
            &self.executor,
            SaleSide { file: &self.file, db: &self.sale.db.pool },
            self.case_id,
            &|_, _, _| {},
        )
        .await
        .unwrap()
    }

    /// The sale's status of one of its orders.
    async fn status_in_sale(&self, order: i64) -> i64 {
        sqlx::query_scalar("SELECT CAST(status AS SIGNED) FROM tb_voucher_order WHERE id = ?")
            .bind(order)
            .fetch_one(&self.sale.db.pool)
            .await
            .unwrap()
    }

    async fn end(self, state: &MySqlPool) {
        self.executor.close().await;
        support::accounts::forget(state).await;
        self.sale.cleanup().await;
    }
}

/// The product's initial stock as `adapter baseline` records it, in the state database.
async fn record_baseline(state: &MySqlPool, file: &AdapterFile, initial: i64) {
    sqlx::query(
        "INSERT INTO adapter_baselines (sale, product_id, initial_stock, reason, recorded_by) \
         VALUES (?, ?, ?, 'the test records it', USER()) \
         ON DUPLICATE KEY UPDATE initial_stock = VALUES(initial_stock), reason = VALUES(reason)",
    )
    .bind(&file.sale.name)
    .bind(P)
    .bind(initial)
    .execute(state)
    .await
    .unwrap();
}

/// The run's word on one order.
fn run_of(ran: &Execution, order: i64) -> &LineRun {
    let order = order.to_string();
    ran.lines
        .iter()
        .find(|l| match l {
            LineRun::Done { order_no, .. }
            | LineRun::Skipped { order_no, .. }
            | LineRun::AlreadyDone { order_no }
            | LineRun::Unknown { order_no, .. } => *order_no == order,
        })
        .unwrap_or_else(|| panic!("order {order} in {ran:?}"))
}

fn skipped_saying(run: &LineRun, said: &str) -> bool {
    matches!(run, LineRun::Skipped { detail, .. } if detail.contains(said))
}

/// The newer order beyond stock is still beyond it: cancelled, and its line says the sale's own
/// row confirms it, by whom.
async fn newest_cancelled_as_confirmed(case: &Approved, ran: &Execution) {
    let newest = case.beyond[1];
    assert!(
        matches!(run_of(ran, newest), LineRun::Done { detail, .. } if detail.contains("its row read back in the cancel status 4")),
        "{ran:?}"
    );
    assert_eq!(case.status_in_sale(newest).await, status::CANCELLED);
    let shown = show(&case.executor, case.case_id).await.unwrap();
    let line = shown.lines.iter().find(|l| l.order_no == newest.to_string()).unwrap();
    assert_eq!(line.outcome, LineOutcome::Done);
    assert_eq!(line.executed_by.as_deref(), Some(case.executor_name.as_str()), "{line:?}");
}

#[sqlx::test(migrations = false)]
async fn a_line_no_longer_beyond_stock_once_the_sale_is_topped_up_is_skipped_and_nothing_is_cancelled(
    state: MySqlPool,
) {
    let case = Approved::new(&state).await;
    // After approval the team tops the product up by one unit and records the new baseline.
    sqlx::query("UPDATE tb_seckill_voucher SET stock = stock + 1 WHERE voucher_id = ?")
        .bind(P)
        .execute(&case.sale.db.pool)
        .await
        .unwrap();
    record_baseline(&state, &case.file, STOCK + 1).await;

    let ran = case.execute().await;
    let older = case.beyond[0];
    assert!(skipped_saying(run_of(&ran, older), "no longer beyond stock"), "{ran:?}");
    assert!(skipped_saying(run_of(&ran, older), "1 unit beyond 5 (the recorded baseline)"), "{ran:?}");
    assert_eq!(case.status_in_sale(older).await, status::UNPAID, "the order within the topped-up stock is kept");
    newest_cancelled_as_confirmed(&case, &ran).await;
    assert_eq!(ran.after.status.to_string(), "EXECUTED");
    case.end(&state).await;
}

#[sqlx::test(migrations = false)]
async fn a_line_no_longer_beyond_stock_once_an_earlier_order_is_cancelled_in_the_sale_is_skipped_and_kept(
    state: MySqlPool,
) {
    let case = Approved::new(&state).await;
    // After approval a buyer within stock cancels through the sale's own path: its unit is back.
    assert!(case.sale.cancel(case.sold[0]).await, "the earlier order was live");

    let ran = case.execute().await;
    let older = case.beyond[0];
    assert!(skipped_saying(run_of(&ran, older), "no longer beyond stock"), "{ran:?}");
    assert_eq!(case.status_in_sale(older).await, status::UNPAID, "the order now within stock is kept");
    newest_cancelled_as_confirmed(&case, &ran).await;
    case.end(&state).await;
}

#[sqlx::test(migrations = false)]
async fn a_line_whose_order_got_another_buyer_in_the_sale_after_approval_is_skipped_not_cancelled(state: MySqlPool) {
    let case = Approved::new(&state).await;
    let older = case.beyond[0];
    // After approval, someone with a hand in the sale's database gives the order another buyer.
    sqlx::query("UPDATE tb_voucher_order SET user_id = 31337 WHERE id = ?")
        .bind(older)
        .execute(&case.sale.db.pool)
        .await
        .unwrap();

    let ran = case.execute().await;
    assert!(skipped_saying(run_of(&ran, older), "not the one its line was born from"), "{ran:?}");
    assert!(skipped_saying(run_of(&ran, older), "buyer 31337 in the sale"), "{ran:?}");
    assert_eq!(case.status_in_sale(older).await, status::UNPAID, "nothing cancelled for another buyer");
    newest_cancelled_as_confirmed(&case, &ran).await;
    case.end(&state).await;
}

#[sqlx::test(migrations = false)]
async fn a_cancel_the_sales_row_does_not_end_in_the_cancel_status_is_not_recorded_as_done(state: MySqlPool) {
    let case = Approved::new(&state).await;
    let older = case.beyond[0];
    // The sale's own rule turns a cancel of this order into "refunding" (5): the UPDATE matches
    // and changes the row, and the row does not hold the cancel status.
    sqlx::raw_sql(&format!(
        "CREATE TRIGGER tb_voucher_order_refunding BEFORE UPDATE ON tb_voucher_order FOR EACH ROW \
         BEGIN IF NEW.status = 4 AND OLD.id = {older} THEN SET NEW.status = 5; END IF; END"
    ))
    .execute(&case.sale.db.pool)
    .await
    .unwrap();

    let ran = case.execute().await;
    assert!(
        skipped_saying(run_of(&ran, older), "its row read back in status 5 and not the cancel status 4"),
        "{ran:?}"
    );
    let shown = show(&case.executor, case.case_id).await.unwrap();
    let line = shown.lines.iter().find(|l| l.order_no == older.to_string()).unwrap();
    assert_eq!(line.outcome, LineOutcome::Skipped, "{line:?}");
    assert_eq!(case.status_in_sale(older).await, status::UNPAID, "the run rolled back what the sale did not keep");
    newest_cancelled_as_confirmed(&case, &ran).await;
    case.end(&state).await;
}
