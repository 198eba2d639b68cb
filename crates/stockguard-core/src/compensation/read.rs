//! Cases as the inbox and the case page show them.

use std::collections::HashMap;

use crate::step::Step as _;
use chrono::NaiveDateTime;
use serde::Serialize;
use sqlx::MySqlPool;

use super::{Action, Case, CaseStatus, CompensationError, Line, LineOutcome, LineReason, Step};
use crate::product_id::ProductId;

/// A case in the inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CaseSummary {
    pub id: u64,
    /// The product as the sale keys it (a number; over an adapter keyed by text, a string).
    pub product_id: ProductId,
    pub status: CaseStatus,
    pub lines: i64,
    pub total_cents: i64,
    pub opened_at: String,
    /// Seconds since it was opened.
    pub age_s: i64,
    pub maker: Option<String>,
}

fn text(at: NaiveDateTime) -> String {
    at.format("%Y-%m-%d %H:%M:%S%.3f").to_string()
}

type SummaryRow = (u64, String, bool, String, i64, i64, NaiveDateTime, i64, Option<String>);
type HeadRow =
    (String, bool, String, i64, i64, String, NaiveDateTime, Option<String>, u8, Option<u64>, Option<i64>, Option<i64>);

/// A case's product as `compensation_cases` keeps it (its text, and whether it is text).
fn stored(text: String, is_text: bool) -> Result<ProductId, CompensationError> {
    ProductId::from_stored(text.clone(), is_text).ok_or_else(|| {
        CompensationError::Refused(format!("compensation_cases holds the product number {text:?}, not a whole number"))
    })
}

/// Cases, newest first; only those of `status` when given.
pub async fn list(pool: &MySqlPool, status: Option<CaseStatus>) -> Result<Vec<CaseSummary>, CompensationError> {
    let rows: Vec<SummaryRow> = sqlx::query_as(
        "SELECT c.id, CAST(c.product_id AS CHAR), c.product_is_text, CAST(c.status AS CHAR), \
                (SELECT COUNT(*) FROM compensation_lines l WHERE l.case_id = c.id), \
                (SELECT CAST(COALESCE(SUM(amount_cents), 0) AS SIGNED) FROM compensation_lines l WHERE l.case_id = c.id), \
                c.opened_at, CAST(TIMESTAMPDIFF(SECOND, c.opened_at, NOW(3)) AS SIGNED), c.maker \
         FROM compensation_cases c WHERE (? IS NULL OR c.status = ?) ORDER BY c.id DESC",
    )
    .bind(status.map(CaseStatus::as_str))
    .bind(status.map(CaseStatus::as_str))
    .fetch_all(pool)
    .await.step("reading compensation_lines (list)")?;
    rows.into_iter()
        .map(|(id, product, is_text, status, lines, total_cents, opened, age_s, maker)| {
            Ok(CaseSummary {
                id,
                product_id: stored(product, is_text)?,
                status: CaseStatus::parse(&status).unwrap_or(CaseStatus::Draft),
                lines,
                total_cents,
                opened_at: text(opened),
                age_s,
                maker,
            })
        })
        .collect()
}

type LineRow = (
    String,
    u64,
    i64,
    NaiveDateTime,
    i64,
    String,
    Option<String>,
    i64,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
);

/// The whole case: lines in case order (oversold in acceptance order, then withdrawn), steps
/// in order.
pub async fn show(pool: &MySqlPool, case_id: u64) -> Result<Case, CompensationError> {
    let head: Option<HeadRow> = sqlx::query_as(
        "SELECT CAST(product_id AS CHAR), product_is_text, CAST(status AS CHAR), \
                (SELECT CAST(COALESCE(SUM(qty), 0) AS SIGNED) FROM compensation_lines WHERE case_id = c.id AND reason = 'OVERSOLD'), \
                (SELECT CAST(COALESCE(SUM(qty), 0) AS SIGNED) FROM compensation_lines WHERE case_id = c.id AND reason = 'WITHDRAWN'), \
                opened_by, opened_at, maker, approvals_needed, proposal_step, \
                (SELECT initial_stock FROM inventory WHERE c.sale = '' AND product_id = CAST(c.product_id AS UNSIGNED)), \
                (SELECT two_checkers_above_cents FROM compensation_settings WHERE id = 1) \
         FROM compensation_cases c WHERE id = ?",
    )
    .bind(case_id)
    .fetch_optional(pool)
    .await.step("reading compensation_lines (show)")?;
    let (
        product,
        is_text,
        status,
        oversold_units,
        withdrawn_units,
        opened_by,
        opened_at,
        maker,
        approvals_needed,
        proposal,
        initial_stock,
        two_checkers_above_cents,
    ) = head.ok_or(CompensationError::NoSuchCase(case_id))?;
    let product_id = stored(product, is_text)?;
    let rows: Vec<LineRow> = sqlx::query_as(
        "SELECT l.order_no, l.user_id, CAST(l.qty AS SIGNED), l.accepted_at, l.price_cents, CAST(l.reason AS CHAR), \
                CAST(l.action AS CHAR), l.amount_cents, l.note, CAST(l.outcome AS CHAR), l.outcome_detail, l.executed_by, \
                IF(a.read_by <> c.opened_by, a.read_by, NULL) \
         FROM compensation_lines l JOIN compensation_cases c ON c.id = l.case_id \
         LEFT JOIN adapter_orders a ON c.sale <> '' AND a.sale = c.sale AND a.order_no = l.order_no \
         WHERE l.case_id = ? ORDER BY l.id",
    )
    .bind(case_id)
    .fetch_all(pool)
    .await
    .step("reading compensation_lines (show)")?;
    let mut lines: Vec<Line> = rows
        .into_iter()
        .map(
            |(
                order_no,
                user_id,
                qty,
                accepted,
                price_cents,
                reason,
                action,
                amount_cents,
                note,
                outcome,
                detail,
                by,
                read_by,
            )| Line {
                order_no,
                user_id,
                qty,
                accepted_at: text(accepted),
                price_cents,
                reason: LineReason::parse(&reason).unwrap_or(LineReason::Oversold),
                action: action.as_deref().and_then(Action::parse),
                amount_cents,
                note,
                outcome: LineOutcome::parse(&outcome).unwrap_or(LineOutcome::Pending),
                outcome_detail: detail,
                executed_by: by,
                read_by,
                sold_from: None,
            },
        )
        .collect();
    // Our own sale's case (the inventory's initial stock: a number).
    if let (Some(_), Some(number)) = (initial_stock, product_id.as_num()) {
        let places = sold_from(pool, case_id, number).await?;
        for line in lines.iter_mut().filter(|l| l.reason == LineReason::Oversold) {
            line.sold_from = places.get(&line.order_no).copied();
        }
    }
    let steps: Vec<(u64, String, String, String, NaiveDateTime)> = sqlx::query_as(
        "SELECT id, CAST(step AS CHAR), actor, reason, at FROM compensation_steps WHERE case_id = ? ORDER BY id",
    )
    .bind(case_id)
    .fetch_all(pool)
    .await
    .step("reading compensation_steps (show)")?;
    let mut approvals: Vec<String> = Vec::new();
    for (id, step, actor, _, _) in &steps {
        if step == "APPROVE" && proposal.is_some_and(|p| *id > p) && !approvals.contains(actor) {
            approvals.push(actor.clone());
        }
    }
    Ok(Case {
        id: case_id,
        product_id,
        status: CaseStatus::parse(&status).unwrap_or(CaseStatus::Draft),
        oversold_units,
        withdrawn_units,
        opened_by,
        opened_at: text(opened_at),
        maker,
        approvals_needed,
        two_checkers_above_cents,
        approvals,
        initial_stock,
        total_cents: lines.iter().map(|l| l.amount_cents).sum(),
        lines,
        steps: steps
            .into_iter()
            .map(|(_, step, actor, reason, at)| Step { step, actor, reason, at: text(at) })
            .collect(),
    })
}

/// Why each oversold line of our own sale's case is in it: its first unit's place among the
/// units sold, in acceptance order (the live orders' and this case's, by id). Two statements,
/// whatever the product's orders: the live units before the case's first order (a covering
/// range of `idx_orders_recon`), then the orders from it on, which are few (the last accepted).
async fn sold_from(pool: &MySqlPool, case_id: u64, product_id: u64) -> Result<HashMap<String, i64>, CompensationError> {
    let first: Option<u64> = sqlx::query_scalar(
        "SELECT MIN(o.id) FROM compensation_lines l JOIN orders o ON o.order_no = l.order_no \
         WHERE l.case_id = ? AND l.reason = 'OVERSOLD'",
    )
    .bind(case_id)
    .fetch_one(pool)
    .await
    .step("reading the case's first order (show)")?;
    let Some(first) = first else {
        return Ok(HashMap::new());
    };
    let before: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(buy_count), 0) AS SIGNED) FROM orders \
         WHERE product_id = ? AND status IN ('WAIT_PAY', 'PAID') AND id < ?",
    )
    .bind(product_id)
    .bind(first)
    .fetch_one(pool)
    .await
    .step("reading the units sold before the case's orders (show)")?;
    let tail: Vec<(String, i64, i64, i64)> = sqlx::query_as(
        "SELECT o.order_no, CAST(o.buy_count AS SIGNED), CAST(o.status IN ('WAIT_PAY', 'PAID') AS SIGNED), \
                CAST(l.order_no IS NOT NULL AS SIGNED) \
         FROM orders o LEFT JOIN compensation_lines l \
              ON l.case_id = ? AND l.order_no = o.order_no AND l.reason = 'OVERSOLD' \
         WHERE o.product_id = ? AND o.id >= ? ORDER BY o.id",
    )
    .bind(case_id)
    .bind(product_id)
    .bind(first)
    .fetch_all(pool)
    .await
    .step("reading the case's orders in acceptance order (show)")?;
    let mut units = before;
    let mut places = HashMap::new();
    for (order_no, qty, live, in_case) in tail {
        if in_case != 0 {
            places.insert(order_no, units + 1);
        }
        if live != 0 || in_case != 0 {
            units += qty;
        }
    }
    Ok(places)
}
