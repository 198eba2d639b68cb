//! Execution: one transaction per line, holding the line's effect, its key and its outcome.
//!
//! The key is the row `(case, order, action)` in `compensation_effects`, inserted first: a
//! second executor of the same line waits on it and then finds it taken, a retry finds it
//! taken, and an executor that dies mid-line leaves nothing (its transaction never commits).
//! The only outcome this process cannot know is a commit whose answer was lost; such a line is
//! reported as unknown and the next run settles it from the key row (present: done, with its
//! outcome; absent: not done, and done then).
//!
//! Effects stay in the DB ledger. Cancelling an oversold order returns its unit to
//! `inventory.stock` (where it pays back the units sold beyond stock) and never to Redis,
//! which would hand it out again. Fulfilling adds the units to the sale: initial stock and
//! stock both rise by the line's quantity. Refunds and coupons leave a `compensation.executed`
//! event in `compensation_events` with its idempotency key, for the systems downstream.

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
    id: u64,
    order_no: String,
    user_id: u64,
    qty: i64,
    action: Action,
    amount_cents: i64,
}

/// Executes every pending line of an approved (or already executing) case as the connected
/// account, which must be neither its maker nor one of its checkers. `progress(done, total,
/// order_no)` is called after each line.
pub async fn execute(
    pool: &MySqlPool,
    case_id: u64,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<Execution, CompensationError> {
    let actor = whoami(pool).await?;
    let (status, _) = status_and_maker(pool, case_id).await?;
    if !matches!(status, CaseStatus::Approved | CaseStatus::Executing) {
        return Err(CompensationError::Refused(format!(
            "case {case_id} is {status}: only an approved case is executed"
        )));
    }
    // The trigger checks the executor against the maker and the checkers.
    sqlx::query("INSERT INTO compensation_steps (case_id, step, reason) VALUES (?, 'EXECUTE', '')")
        .bind(case_id)
        .execute(pool)
        .await
        .map_err(CompensationError::from_db)?;
    let product_id: u64 = sqlx::query_scalar("SELECT product_id FROM compensation_cases WHERE id = ?")
        .bind(case_id)
        .fetch_one(pool)
        .await?;
    let rows: Vec<(u64, String, u64, i64, Option<String>, i64)> = sqlx::query_as(
        "SELECT id, order_no, user_id, CAST(qty AS SIGNED), CAST(action AS CHAR), amount_cents \
         FROM compensation_lines WHERE case_id = ? AND outcome = 'PENDING' ORDER BY id",
    )
    .bind(case_id)
    .fetch_all(pool)
    .await?;
    let pending: Vec<Pending> = rows
        .into_iter()
        .map(|(id, order_no, user_id, qty, action, amount_cents)| Pending {
            id,
            order_no,
            user_id,
            qty,
            action: action.as_deref().and_then(Action::parse).unwrap_or(Action::Note),
            amount_cents,
        })
        .collect();
    let mut lines = Vec::with_capacity(pending.len());
    for (i, line) in pending.iter().enumerate() {
        lines.push(run_line(pool, case_id, product_id, line).await?);
        progress(i + 1, pending.len(), &line.order_no);
    }
    let left: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM compensation_lines WHERE case_id = ? AND outcome = 'PENDING'")
            .bind(case_id)
            .fetch_one(pool)
            .await?;
    let status: String = sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM compensation_cases WHERE id = ?")
        .bind(case_id)
        .fetch_one(pool)
        .await?;
    if left == 0 && status == "EXECUTING" {
        // Two executors finishing together: the second finds the case executed already.
        let _ = sqlx::query("INSERT INTO compensation_steps (case_id, step, reason) VALUES (?, 'EXECUTED', '')")
            .bind(case_id)
            .execute(pool)
            .await;
    }
    Ok(Execution { lines, after: stepped(pool, case_id, actor).await? })
}

async fn run_line(
    pool: &MySqlPool,
    case_id: u64,
    product_id: u64,
    line: &Pending,
) -> Result<LineRun, CompensationError> {
    let order_no = line.order_no.clone();
    let mut tx = pool.begin().await?;
    let keyed = sqlx::query("INSERT INTO compensation_effects (case_id, order_no, action) VALUES (?, ?, ?)")
        .bind(case_id)
        .bind(&line.order_no)
        .bind(line.action.as_str())
        .execute(&mut *tx)
        .await;
    match keyed {
        Ok(_) => {}
        Err(e) if is_duplicate(&e) => {
            tx.rollback().await?;
            return Ok(LineRun::AlreadyDone { order_no });
        }
        Err(e) => return Err(CompensationError::from_db(e)),
    }
    let (outcome, detail) = match line.action {
        Action::Fulfil => {
            sqlx::query(
                "UPDATE inventory SET initial_stock = initial_stock + ?, stock = stock + ? WHERE product_id = ?",
            )
            .bind(line.qty)
            .bind(line.qty)
            .bind(product_id)
            .execute(&mut *tx)
            .await?;
            ("DONE", format!("{} units added to the sale", line.qty))
        }
        Action::CancelRefund => {
            let cancelled = sqlx::query(
                "UPDATE orders SET status = 'CANCELLED' WHERE order_no = ? AND status IN ('WAIT_PAY', 'PAID')",
            )
            .bind(&line.order_no)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if cancelled == 1 {
                sqlx::query("UPDATE inventory SET stock = stock + ? WHERE product_id = ?")
                    .bind(line.qty)
                    .bind(product_id)
                    .execute(&mut *tx)
                    .await?;
                event(&mut tx, case_id, line).await?;
                ("DONE", format!("cancelled; {} cents refunded", line.amount_cents))
            } else {
                ("SKIPPED", "the order was no longer live (closed or cancelled before): nothing to cancel".into())
            }
        }
        Action::Coupon => {
            event(&mut tx, case_id, line).await?;
            ("DONE", format!("coupon of {} cents", line.amount_cents))
        }
        Action::Note => ("DONE", "noted".to_string()),
    };
    sqlx::query(
        "UPDATE compensation_lines SET outcome = ?, outcome_detail = ?, executed_at = NOW(3) \
         WHERE id = ? AND outcome = 'PENDING'",
    )
    .bind(outcome)
    .bind(&detail)
    .bind(line.id)
    .execute(&mut *tx)
    .await
    .map_err(CompensationError::from_db)?;
    match tx.commit().await {
        Ok(()) if outcome == "DONE" => Ok(LineRun::Done { order_no, detail }),
        Ok(()) => Ok(LineRun::Skipped { order_no, detail }),
        Err(e) => Ok(LineRun::Unknown { order_no, error: e.to_string() }),
    }
}

/// The `compensation.executed` event of a refund or a coupon.
async fn event(tx: &mut sqlx::Transaction<'_, sqlx::MySql>, case_id: u64, line: &Pending) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO compensation_events (idempotency_key, kind, case_id, order_no, user_id, action, amount_cents) \
         VALUES (?, 'compensation.executed', ?, ?, ?, ?, ?)",
    )
    .bind(idempotency_key(case_id, &line.order_no, line.action))
    .bind(case_id)
    .bind(&line.order_no)
    .bind(line.user_id)
    .bind(line.action.as_str())
    .bind(line.amount_cents)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The key downstream systems deduplicate on: one per (case, order, action).
pub fn idempotency_key(case_id: u64, order_no: &str, action: Action) -> String {
    format!("compensation:{case_id}:{order_no}:{}", action.as_str())
}

/// True when a statement failed on a unique key (MySQL error 1062).
fn is_duplicate(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .and_then(|e| e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .is_some_and(|e| e.number() == 1062)
}
