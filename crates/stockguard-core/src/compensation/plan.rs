//! What each line of a draft gets.

use serde::Serialize;
use sqlx::MySqlPool;

use super::{Action, CompensationError, LineReason};
use crate::audit::{self, AuditEntry};
use crate::step::Step as _;

/// The largest coupon a line may get: 10,000,000.00 (the database holds the same bound).
pub const MAX_COUPON_CENTS: i64 = 1_000_000_000;

/// Which lines a choice applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lines {
    All,
    Reason(LineReason),
    Order(String),
}

/// One choice of the plan: `lines` get `action`; the amount is the line's refund (price x
/// quantity) for cancel-and-refund, `amount_cents` for a coupon, 0 otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub lines: Lines,
    pub action: Action,
    pub amount_cents: Option<i64>,
    pub note: String,
}

/// What planning changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Planned {
    pub lines_changed: usize,
    pub total_cents: i64,
}

/// Applies the choices, in order (a later one overrides an earlier one for the same line).
/// Refused unless the case is a draft; a choice that fits no line, or an action a line cannot
/// take, refuses the whole plan and changes nothing.
pub async fn set_plan(pool: &MySqlPool, case_id: u64, choices: &[Choice]) -> Result<Planned, CompensationError> {
    let mut tx = pool.begin().await.step("beginning a transaction (set plan)")?;
    let status: Option<String> =
        sqlx::query_scalar("SELECT CAST(status AS CHAR) FROM compensation_cases WHERE id = ? FOR UPDATE")
            .bind(case_id)
            .fetch_optional(&mut *tx)
            .await
            .step("locking compensation_cases (set plan)")?;
    match status.as_deref() {
        None => return Err(CompensationError::NoSuchCase(case_id)),
        Some("DRAFT") => {}
        Some(other) => {
            return Err(CompensationError::Refused(format!(
                "the plan can change only while the case is a draft (case {case_id} is {other})"
            )))
        }
    }
    let lines: Vec<(u64, String, String, i64, i64)> = sqlx::query_as(
        "SELECT id, order_no, CAST(reason AS CHAR), CAST(qty AS SIGNED), price_cents FROM compensation_lines \
         WHERE case_id = ? ORDER BY id",
    )
    .bind(case_id)
    .fetch_all(&mut *tx)
    .await
    .step("reading compensation_lines (set plan)")?;
    let mut changed = std::collections::BTreeSet::new();
    for choice in choices {
        if choice.action == Action::Coupon && choice.amount_cents.is_none_or(|a| !(1..=MAX_COUPON_CENTS).contains(&a)) {
            return Err(CompensationError::BadPlan(format!(
                "a coupon is between 0.01 and {}.{:02}",
                MAX_COUPON_CENTS / 100,
                MAX_COUPON_CENTS % 100
            )));
        }
        let mut matched = 0;
        for (id, order_no, reason, qty, price) in &lines {
            let reason = LineReason::parse(reason).unwrap_or(LineReason::Oversold);
            let selected = match &choice.lines {
                Lines::All => true,
                Lines::Reason(r) => *r == reason,
                Lines::Order(o) => o == order_no,
            };
            if !selected {
                continue;
            }
            if !choice.action.fits(reason) {
                return Err(CompensationError::BadPlan(format!(
                    "order {order_no} is {reason}: it can get a coupon or a note, not {}",
                    choice.action
                )));
            }
            let amount = match choice.action {
                Action::CancelRefund => price * qty,
                Action::Coupon => choice.amount_cents.unwrap_or(0),
                Action::Fulfil | Action::Note => 0,
            };
            sqlx::query("UPDATE compensation_lines SET action = ?, amount_cents = ?, note = ? WHERE id = ?")
                .bind(choice.action.as_str())
                .bind(amount)
                .bind(&choice.note)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(CompensationError::from_db("updating a line's plan (set plan)"))?;
            changed.insert(*id);
            matched += 1;
        }
        if matched == 0 {
            return Err(CompensationError::BadPlan(format!("no line of case {case_id} matches {:?}", choice.lines)));
        }
    }
    let total: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(amount_cents), 0) AS SIGNED) FROM compensation_lines WHERE case_id = ?",
    )
    .bind(case_id)
    .fetch_one(&mut *tx)
    .await
    .step("reading compensation_lines (set plan)")?;
    let planned = Planned { lines_changed: changed.len(), total_cents: total };
    // Who planned is the server's word (the audit log's trigger and the case's `planners`);
    // the functions of a case take the pool alone, so no profile role or environment is said.
    let entry = AuditEntry {
        actor: String::new(),
        role: String::new(),
        environment: String::new(),
        action: "compensation.plan".into(),
        target: format!("case:{case_id}"),
        reason: choices.iter().map(|c| c.note.as_str()).filter(|n| !n.is_empty()).collect::<Vec<_>>().join("; "),
        outcome: "PLANNED".into(),
        details: serde_json::json!({ "case_id": case_id, "lines_changed": planned.lines_changed, "total_cents": total }),
    };
    audit::record(&mut *tx, &entry).await.step("writing the audit row (set plan)")?;
    tx.commit().await.step("committing (set plan)")?;
    Ok(planned)
}
