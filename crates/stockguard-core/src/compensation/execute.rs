//! Execution: one transaction per line, holding the line's effect, its key and its outcome.
//!
//! The key is the row `(case, order, action)` in `compensation_effects`, and that row *is* the
//! execution: its trigger (`migrations/20261202000022_compensation_from_the_ledger.sql`)
//! checks the executor (neither maker, checker nor planner), locks the product's inventory
//! before the order (the lock order of every path), rechecks the ledger (the order still live
//! and still among the last accepted orders beyond stock), performs the effect, and writes the
//! line's outcome and the refund or coupon event with the order's own buyer and the approved
//! amount. Raw SQL by an executor can therefore only execute, never record an effect that did
//! not happen, and no role writes an event itself.
//!
//! A second executor of the same line waits on the inventory lock and then finds the line
//! done; a retry finds it done; an executor that dies mid-line leaves nothing (its transaction
//! never commits). The only outcome this process cannot know is a commit whose answer was
//! lost; such a line is reported as unknown and the next run settles it from the key row.
//!
//! Effects stay in the DB ledger. Cancelling an oversold order returns its unit to
//! `inventory.stock`, where it pays back the units sold beyond stock; only what brings stock
//! above zero is released to Redis (a unit the DB owes never is). Fulfilling adds the units to
//! the sale: initial stock and stock both rise by the line's quantity. An unpaid order is
//! cancelled, not refunded. Refunds and coupons leave a `compensation.executed` event in
//! `compensation_events` with its idempotency key, for the systems downstream.
//!
//! Over an adapter ([`super::over_adapter`]) the same run re-checks each line in the sale's own
//! rows just before it (the order still there, the one its line was born from, live and still
//! beyond stock), performs its effect there (a cancel is done only when the sale's row reads
//! back the cancel status; a retry finds it done) and the effect row records what it did
//! ([`super::sale_side`]). The executor checks and the once-per-line key are the same
//! triggers'; what the row says happened in the sale is the executor's run's word, since the
//! state database cannot read the sale (docs/contract.md, "Who may do what").

use crate::product_id::ProductId;
use crate::step::{again_on_deadlock, is_deadlock, is_unique_violation, Step as _};
use serde::Serialize;
use sqlx::MySqlPool;

use super::workflow::{status_and_maker, stepped, Stepped};
use super::{whoami, Action, CaseStatus, CompensationError};

/// What became of one line in this run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum LineRun {
    Done {
        order_no: String,
        detail: String,
    },
    Skipped {
        order_no: String,
        detail: String,
    },
    /// Another run (a retry, a second executor) had already done it: nothing was done now.
    AlreadyDone {
        order_no: String,
    },
    /// The commit's answer was lost: run `execute` again to settle it.
    Unknown {
        order_no: String,
        error: String,
    },
}

/// A run over a case's pending lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Execution {
    pub lines: Vec<LineRun>,
    pub after: Stepped,
}

struct Pending {
    order_no: String,
    action: Action,
    /// An oversold order (not a withdrawn acceptance).
    oversold: bool,
    /// What the line was born from: its buyer, quantity and price.
    user_id: u64,
    qty: i64,
    price_cents: i64,
}

/// Executes every pending line of an approved (or already executing) case as the connected
/// account, which must be neither its maker nor one of its checkers. `progress(done, total,
/// order_no)` is called after each line.
pub async fn execute(
    pool: &MySqlPool,
    case_id: u64,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<Execution, CompensationError> {
    execute_at(pool, case_id, Venue::Ledger, progress).await
}

/// Where a line's effect happens.
#[derive(Clone, Copy)]
pub(super) enum Venue<'a> {
    /// Our own sale: the effect row's trigger performs it in the ledger.
    Ledger,
    /// A sale read over its adapter: the run performs it there (or hands it over in the
    /// export) first, and the effect row records what it did.
    Adapter(super::sale_side::SaleSide<'a>),
}

pub(super) async fn execute_at(
    pool: &MySqlPool,
    case_id: u64,
    venue: Venue<'_>,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<Execution, CompensationError> {
    let actor = whoami(pool).await.step("asking the server who the account is (execute)")?;
    let (status, _) = status_and_maker(pool, case_id).await?;
    if !matches!(status, CaseStatus::Approved | CaseStatus::Executing) {
        return Err(CompensationError::Refused(format!(
            "case {case_id} is {status}: only an approved case is executed"
        )));
    }
    // The trigger checks the executor against the maker and the checkers. Two executors
    // starting together lock the case and its steps through that trigger and can deadlock
    // (seen in CI): the victim's statement was rolled back whole and is sent again.
    again_on_deadlock(|| {
        sqlx::query("INSERT INTO compensation_steps (case_id, step, reason) VALUES (?, 'EXECUTE', '')")
            .bind(case_id)
            .execute(pool)
    })
    .await
    .map_err(CompensationError::from_db("recording the EXECUTE step (execute)"))?;
    let rows: Vec<(String, Option<String>, String, u64, i64, i64)> = sqlx::query_as(
        "SELECT order_no, CAST(action AS CHAR), CAST(reason AS CHAR), user_id, CAST(qty AS SIGNED), price_cents \
         FROM compensation_lines WHERE case_id = ? AND outcome = 'PENDING' ORDER BY id",
    )
    .bind(case_id)
    .fetch_all(pool)
    .await
    .step("reading compensation_lines (execute)")?;
    let pending: Vec<Pending> = rows
        .into_iter()
        .map(|(order_no, action, reason, user_id, qty, price_cents)| Pending {
            order_no,
            action: action.as_deref().and_then(Action::parse).unwrap_or(Action::Note),
            oversold: reason == "OVERSOLD",
            user_id,
            qty,
            price_cents,
        })
        .collect();
    let (product, is_text): (String, bool) =
        sqlx::query_as("SELECT CAST(product_id AS CHAR), product_is_text FROM compensation_cases WHERE id = ?")
            .bind(case_id)
            .fetch_one(pool)
            .await
            .step("reading compensation_cases (execute)")?;
    let product = ProductId::from_stored(product.clone(), is_text).ok_or_else(|| {
        CompensationError::Refused(format!(
            "compensation_cases holds the product number {product:?}, not a whole number"
        ))
    })?;
    let mut lines = Vec::with_capacity(pending.len());
    for (i, line) in pending.iter().enumerate() {
        lines.push(run_line(pool, case_id, &product, line, venue).await?);
        progress(i + 1, pending.len(), &line.order_no);
    }
    let left: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM compensation_lines WHERE case_id = ? AND outcome = 'PENDING'")
            .bind(case_id)
            .fetch_one(pool)
            .await
            .step("reading compensation_lines (execute)")?;
    let status: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM compensation_cases WHERE id = ?")
        .bind(case_id)
        .fetch_one(pool)
        .await
        .step("reading compensation_cases (execute)")?;
    if left == 0 && status == "EXECUTING" {
        // Two executors finishing together: the second finds the case executed already.
        let _ = again_on_deadlock(|| {
            sqlx::query("INSERT INTO compensation_steps (case_id, step, reason) VALUES (?, 'EXECUTED', '')")
                .bind(case_id)
                .execute(pool)
        })
        .await;
    }
    Ok(Execution { lines, after: stepped(pool, case_id, actor).await? })
}

async fn run_line(
    pool: &MySqlPool,
    case_id: u64,
    product: &ProductId,
    line: &Pending,
    venue: Venue<'_>,
) -> Result<LineRun, CompensationError> {
    // Over an adapter the line is re-checked in the sale and its effect happens there first
    // (idempotent: a retry finds it done), then its row records what it did. A line another
    // executor settled since this run listed it is not touched in the sale again.
    let reported = match venue {
        Venue::Ledger => None,
        Venue::Adapter(sale) => {
            if line_outcome(pool, case_id, &line.order_no).await?.is_some_and(|o| o != "PENDING") {
                return Ok(LineRun::AlreadyDone { order_no: line.order_no.clone() });
            }
            let born = super::sale_side::Born {
                order_no: &line.order_no,
                product: product.clone(),
                user_id: line.user_id,
                qty: line.qty,
                price_cents: line.price_cents,
                oversold: line.oversold,
            };
            Some(super::sale_side::perform(sale, pool, &born, line.action).await?)
        }
    };
    // A deadlock's victim was rolled back whole (its effect too): the line is tried again,
    // as any statement is ([`again_on_deadlock`]); whatever else ends the try is its answer.
    let reported = reported.as_ref();
    let tried = again_on_deadlock(move || async move {
        match key_line(pool, case_id, line, reported).await {
            Err(KeyFailed::Deadlock(e)) => Err(e),
            Err(KeyFailed::Other(e)) => Ok(Err(e)),
            Ok(run) => Ok(Ok(run)),
        }
    })
    .await;
    tried.map_err(CompensationError::from_db("inserting the line's effect (run line)"))?
}

/// Why one try of a line did not settle it.
enum KeyFailed {
    Deadlock(sqlx::Error),
    Other(CompensationError),
}

impl<E: Into<CompensationError>> From<E> for KeyFailed {
    fn from(e: E) -> Self {
        Self::Other(e.into())
    }
}

/// One try of a line: its effect row in one transaction.
async fn key_line(
    pool: &MySqlPool,
    case_id: u64,
    line: &Pending,
    reported: Option<&(&'static str, String)>,
) -> Result<LineRun, KeyFailed> {
    let order_no = line.order_no.clone();
    let mut tx = pool.begin().await.step("beginning a transaction (run line)")?;
    // The effect's trigger executes the line (see the module's doc) or says why not.
    let keyed = match reported {
        None => sqlx::query("INSERT INTO compensation_effects (case_id, order_no, action) VALUES (?, ?, ?)")
            .bind(case_id)
            .bind(&line.order_no)
            .bind(line.action.as_str()),
        Some((outcome, detail)) => sqlx::query(
            "INSERT INTO compensation_effects (case_id, order_no, action, outcome, detail) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(case_id)
        .bind(&line.order_no)
        .bind(line.action.as_str())
        .bind(*outcome)
        .bind(detail.as_str()),
    }
    .execute(&mut *tx)
    .await;
    match keyed {
        Ok(_) => {}
        Err(e) if is_unique_violation(&e) || is_executed_already(&e) => {
            tx.rollback().await.step("rolling back (run line)")?;
            return Ok(LineRun::AlreadyDone { order_no });
        }
        Err(e) if is_deadlock(&e) => {
            // The server rolled the transaction back already.
            drop(tx);
            return Err(KeyFailed::Deadlock(e));
        }
        Err(e) => {
            tx.rollback().await.step("rolling back (run line)")?;
            // Another executor ran this line, and finished the case meanwhile (the trigger
            // then refuses any effect): the line is done already, not failed.
            if line_outcome(pool, case_id, &line.order_no).await?.is_some_and(|o| o != "PENDING") {
                return Ok(LineRun::AlreadyDone { order_no });
            }
            return Err(KeyFailed::Other(CompensationError::from_db("inserting the line's effect (run line)")(e)));
        }
    }
    let (outcome, detail): (String, String) = sqlx::query_as(
        "SELECT CAST(outcome AS CHAR), detail FROM compensation_effects WHERE case_id = ? AND order_no = ? AND action = ?",
    )
    .bind(case_id)
    .bind(&line.order_no)
    .bind(line.action.as_str())
    .fetch_one(&mut *tx)
    .await.step("reading compensation_effects (run line)")?;
    match tx.commit().await {
        Ok(()) if outcome == "DONE" => Ok(LineRun::Done { order_no, detail }),
        Ok(()) => Ok(LineRun::Skipped { order_no, detail }),
        Err(e) => Ok(LineRun::Unknown { order_no, error: e.to_string() }),
    }
}

/// The line's outcome as it stands (`None`: no such line).
async fn line_outcome(pool: &MySqlPool, case_id: u64, order_no: &str) -> Result<Option<String>, CompensationError> {
    Ok(sqlx::query_scalar("SELECT CAST(outcome AS CHAR) FROM compensation_lines WHERE case_id = ? AND order_no = ?")
        .bind(case_id)
        .bind(order_no)
        .fetch_optional(pool)
        .await
        .step("reading the line's outcome (run line)")?)
}

/// True when the effect's trigger found the line executed already (its own SQLSTATE).
fn is_executed_already(err: &sqlx::Error) -> bool {
    err.as_database_error().and_then(|e| e.code()).as_deref() == Some("45001")
}
