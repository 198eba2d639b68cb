//! Opening a case from the ledger.
//!
//! The orders beyond stock are the last ones the DB accepted (`orders.id` order): the first
//! accepted are those the stock can honour. How many units are beyond is the live orders'
//! units above initial stock. Stock below zero with live orders within initial stock is a
//! ledger mismatch (a hand edit of `stock`), not a sale beyond stock: its orders are all
//! honourable and none is put in a case. An order that straddles the line is in the case
//! whole. Withdrawn acceptances (`order_failures`) get lines of their own.
//!
//! An order already compensated (a line done in any case) or in a case not yet closed is not
//! added again; the pending or skipped lines of a closed case are, so closing a case never
//! drops what is still owed. The database holds the same rules for a raw `INSERT` (a line is
//! born from its order: `migrations/20261202000022_compensation_from_the_ledger.sql`).

use std::collections::HashSet;

use crate::step::Step as _;
use chrono::NaiveDateTime;
use serde::Serialize;
use sqlx::MySqlPool;

use super::{CompensationError, LineReason};
use crate::product_id::ProductId;

/// What opening did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Opened {
    pub case_id: u64,
    /// False: the product's open case was found and returned.
    pub created: bool,
    pub lines_added: usize,
    /// Affected orders not added because the open case is past its draft (its plan is under
    /// approval or done): they join a case opened after it closes.
    pub waiting: usize,
}

pub(super) struct Candidate {
    pub(super) order_no: String,
    pub(super) user_id: u64,
    pub(super) qty: i64,
    pub(super) accepted_at: NaiveDateTime,
    /// What the order was sold at (the line's trigger takes it from the order again).
    pub(super) price_cents: i64,
    pub(super) reason: LineReason,
}

/// Opens the product's case, or returns its open one with any newly affected orders added
/// (while it is a draft). Two openers at once serialise on the product's inventory row.
pub async fn open_case(pool: &MySqlPool, product_id: u64) -> Result<Opened, CompensationError> {
    let mut tx = pool.begin().await.step("beginning a transaction (open case)")?;
    let initial: Option<i64> =
        sqlx::query_scalar("SELECT CAST(initial_stock AS SIGNED) FROM inventory WHERE product_id = ? FOR UPDATE")
            .bind(product_id)
            .fetch_optional(&mut *tx)
            .await
            .step("locking inventory (open case)")?;
    let initial = initial.ok_or(CompensationError::NoSuchProduct(product_id))?;
    let candidates =
        affected(&mut tx, product_id, initial).await.step("reading the orders beyond stock (open case)")?;
    open_in(tx, OUR_SALE, &ProductId::Num(product_id), candidates).await
}

/// The sale name of our own sale's cases (`compensation_cases.sale`).
pub(super) const OUR_SALE: &str = "";

/// Opens the case of `sale`'s product in `tx` from its affected orders (or returns its open
/// one, with those not yet in a case added while it is a draft), and commits.
pub(super) async fn open_in(
    mut tx: sqlx::Transaction<'_, sqlx::MySql>,
    sale: &str,
    product: &ProductId,
    candidates: Vec<Candidate>,
) -> Result<Opened, CompensationError> {
    // Kept as its text and whether it is text (a sale's ids are all of one kind).
    let (product_id, is_text) = product.stored();
    let known: HashSet<String> = sqlx::query_scalar(
        "SELECT l.order_no FROM compensation_lines l JOIN compensation_cases c ON c.id = l.case_id \
         WHERE c.product_id = ? AND c.sale = ? AND (c.status <> 'CLOSED' OR l.outcome = 'DONE')",
    )
    .bind(&product_id)
    .bind(sale)
    .fetch_all(&mut *tx)
    .await
    .step("reading compensation_lines (open case)")?
    .into_iter()
    .collect();
    let candidates: Vec<Candidate> = candidates.into_iter().filter(|c| !known.contains(&c.order_no)).collect();

    let open: Option<(u64, String)> = sqlx::query_as(
        "SELECT id, CAST(status AS CHAR) FROM compensation_cases WHERE sale = ? AND open_product = ? FOR UPDATE",
    )
    .bind(sale)
    .bind(&product_id)
    .fetch_optional(&mut *tx)
    .await
    .step("locking compensation_cases (open case)")?;
    let (case_id, created, status) = match open {
        Some((id, status)) => (id, false, status),
        None if candidates.is_empty() => return Err(CompensationError::NothingToCompensate(product.clone())),
        None => {
            // `opened_by` is the trigger's to set: the connected account, as the server knows it.
            let id = sqlx::query(
                "INSERT INTO compensation_cases (product_id, product_is_text, sale, opened_by) VALUES (?, ?, ?, '')",
            )
            .bind(&product_id)
            .bind(is_text)
            .bind(sale)
            .execute(&mut *tx)
            .await
            .map_err(CompensationError::from_db("inserting into compensation_cases (open case)"))?
            .last_insert_id();
            sqlx::query("INSERT INTO compensation_steps (case_id, step, reason) VALUES (?, 'OPEN', ?)")
                .bind(id)
                .bind(format!("{} affected orders found in the ledger", candidates.len()))
                .execute(&mut *tx)
                .await
                .map_err(CompensationError::from_db("recording the OPEN step (open case)"))?;
            (id, true, "DRAFT".to_string())
        }
    };
    if status != "DRAFT" {
        tx.commit().await.step("committing (open case)")?;
        return Ok(Opened { case_id, created, lines_added: 0, waiting: candidates.len() });
    }
    for c in &candidates {
        sqlx::query(
            "INSERT INTO compensation_lines (case_id, order_no, user_id, qty, accepted_at, price_cents, reason) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(case_id)
        .bind(&c.order_no)
        .bind(c.user_id)
        .bind(c.qty)
        .bind(c.accepted_at)
        .bind(c.price_cents)
        .bind(c.reason.as_str())
        .execute(&mut *tx)
        .await
        .step("inserting into compensation_lines (open case)")?;
    }
    tx.commit().await.step("committing (open case)")?;
    Ok(Opened { case_id, created, lines_added: candidates.len(), waiting: 0 })
}

/// The orders beyond stock among a product's live orders, given newest first: the fewest
/// last-accepted orders covering the live units above initial stock. Returned newest first.
pub fn beyond_stock<T>(live_newest_first: Vec<T>, qty: impl Fn(&T) -> i64, initial: i64) -> Vec<T> {
    let total: i64 = live_newest_first.iter().map(&qty).sum();
    let mut beyond = (total - initial).max(0);
    let mut out = Vec::new();
    for order in live_newest_first {
        if beyond <= 0 {
            break;
        }
        beyond -= qty(&order);
        out.push(order);
    }
    out
}

/// The product's affected orders, oversold ones first, each group in acceptance order.
async fn affected(
    tx: &mut sqlx::Transaction<'_, sqlx::MySql>,
    product_id: u64,
    initial: i64,
) -> Result<Vec<Candidate>, sqlx::Error> {
    let live: Vec<(String, u64, i64, NaiveDateTime, i64)> = sqlx::query_as(
        "SELECT order_no, user_id, CAST(buy_count AS SIGNED), created_at, COALESCE(price_cents, 0) FROM orders \
         WHERE product_id = ? AND status IN ('WAIT_PAY', 'PAID') ORDER BY id DESC",
    )
    .bind(product_id)
    .fetch_all(&mut **tx)
    .await?;
    let mut oversold: Vec<Candidate> = beyond_stock(live, |o| o.2, initial)
        .into_iter()
        .map(|(order_no, user_id, qty, accepted_at, price_cents)| Candidate {
            order_no,
            user_id,
            qty,
            accepted_at,
            price_cents,
            reason: LineReason::Oversold,
        })
        .collect();
    oversold.reverse();
    let withdrawn: Vec<(String, u64, i64, NaiveDateTime, i64)> = sqlx::query_as(
        "SELECT order_no, user_id, CAST(qty AS SIGNED), created_at, COALESCE(price_cents, 0) FROM order_failures \
         WHERE product_id = ? ORDER BY created_at, order_no",
    )
    .bind(product_id)
    .fetch_all(&mut **tx)
    .await?;
    oversold.extend(withdrawn.into_iter().map(|(order_no, user_id, qty, accepted_at, price_cents)| Candidate {
        order_no,
        user_id,
        qty,
        accepted_at,
        price_cents,
        reason: LineReason::Withdrawn,
    }));
    Ok(oversold)
}
