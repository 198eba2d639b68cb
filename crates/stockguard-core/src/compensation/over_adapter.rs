//! Compensation on a sale Stockguard did not build (issue 29): its cases live in the state
//! database, through the same workflow and the same four-eyes triggers as our own sale's.
//!
//! Opening ([`open_case`]) reads the product's live orders in the sale, newest first (by the
//! adapter's `created`, then its `order_id`), takes the fewest last-accepted ones that cover the
//! units above the initial stock ([`super::open::beyond_stock`], the rule of our own cases),
//! writes them to `adapter_orders` (fixed once written, the reader the server's word; a row
//! already there is compared, and one that differs from the sale refuses the opening), and opens
//! the case from them ([`super::open`]): each line is born from its row by the database's
//! trigger (`migrations/20261205000029_adapter_compensation.sql`). Orders accepted and lost
//! (never a row) join as `WITHDRAWN` lines when the caller passes them: the hook for the
//! accepted-but-lost listing, which is the adapter's to read.
//!
//! Plan, propose, approve, reject, close, list, show and export are the native steps run on the
//! state database. Execution ([`execute`]) differs in its effect only: the state database
//! cannot reach the sale's, so the run re-checks each line in the sale's own rows just before it
//! (the order still the one its line was born from, live, and still beyond the initial stock as
//! it was opened: [`super::sale_side`]), performs the effect, and the effect row records it,
//! once per line, by an executor the triggers accept. A line the sale no longer bears out is
//! `SKIPPED` with a detail saying why. A cancel-and-refund line is cancelled in the sale's own
//! database when the adapter file declares how (`[compensation] cancel`, with an account that
//! may write the orders' status), and is `DONE` only when the sale's row reads back the cancel
//! status; every other line, and every line of a sale that declares no cancel, is handed over
//! in the approved case's CSV export.

use chrono::{NaiveDateTime, Utc};
use sqlx::MySqlPool;

use super::execute::{self, Execution, Venue};
use super::open::{beyond_stock, open_in, Candidate, Opened};
use super::{CompensationError, LineReason};
use crate::adapter::compensate::{self, SaleOrder};
use crate::adapter::{AdapterError, OpenedSale};
use crate::product_id::ProductId;
use crate::step::Step as _;

/// The sale a case over an adapter is of, as every caller names it here.
pub use super::sale_side::SaleSide;

/// Opens the product's case of `sale` (asked by a person: the CLI, the window) against the
/// initial stock a reading of it finds now; refused while the product has no initial stock
/// to judge against (no baseline recorded).
pub async fn open_for(sale: &OpenedSale, product: &ProductId) -> Result<Opened, CompensationError> {
    let state = sale.state()?;
    let baselines = sale.baselines().await?;
    let readings = crate::adapter::read(&sale.file, &sale.links(), &baselines, std::slice::from_ref(product)).await?;
    let reading = readings.first().ok_or_else(|| AdapterError::UnknownProduct(product.clone()))?;
    let product = &reading.reading.product_id;
    if reading.initial_source == "none" {
        return Err(CompensationError::Refused(format!(
            "product {product} has no initial stock to judge against: record a baseline first (adapter baseline --reason)"
        )));
    }
    open_case(state, SaleSide::of(sale)?, product, reading.reading.initial_stock, &[]).await
}

/// Opens the product's case in the state database from the sale's orders beyond `initial`
/// (and the accepted-but-lost orders given), or returns its open one with newly affected
/// orders added while it is a draft.
pub async fn open_case(
    state: &MySqlPool,
    sale: SaleSide<'_>,
    product: &ProductId,
    initial: i64,
    lost: &[SaleOrder],
) -> Result<Opened, CompensationError> {
    let orders = sale.file.orders.as_ref().ok_or_else(|| {
        CompensationError::Refused(
            "the adapter file names no [orders] table: a case lists the sale's orders beyond stock".into(),
        )
    })?;
    let live = compensate::live_orders_newest_first(sale.db, orders, product).await?;
    let mut beyond = beyond_stock(live, |o| o.qty, initial);
    beyond.reverse();
    let name = sale.file.sale.name.as_str();
    let mut tx = state.begin().await.step("beginning a transaction (open case over an adapter)")?;
    let mut candidates = Vec::with_capacity(beyond.len() + lost.len());
    for (order, reason) in
        beyond.iter().map(|o| (o, LineReason::Oversold)).chain(lost.iter().map(|o| (o, LineReason::Withdrawn)))
    {
        let kind = if reason == LineReason::Oversold { "OVERSOLD" } else { "LOST" };
        let accepted_at = record(&mut tx, name, product, kind, order).await?;
        candidates.push(Candidate {
            order_no: order.order_no.clone(),
            user_id: order.user_id,
            qty: order.qty,
            accepted_at,
            price_cents: 0,
            reason,
        });
    }
    open_in(tx, name, product, candidates).await
}

/// What `adapter_orders` holds of an order: its kind, product (its text, and whether it is
/// text), buyer, quantity, time, price and who wrote it.
type Recorded = (String, String, bool, u64, i64, NaiveDateTime, i64, String);

/// Records `order` as read from the sale (written once: `INSERT IGNORE`, so two openings at
/// once wait in turn rather than deadlock on a gap lock), then compares the row there with what
/// the sale says now: a row that differs (a colleague's forged buyer or price, issue 48) refuses
/// the opening in one line naming the order and who wrote the row, and the transaction writes
/// nothing. Returns the time the line is born with (the recorded one).
async fn record(
    tx: &mut sqlx::Transaction<'_, sqlx::MySql>,
    sale: &str,
    product: &ProductId,
    kind: &str,
    order: &SaleOrder,
) -> Result<NaiveDateTime, CompensationError> {
    let (product_id, is_text) = product.stored();
    sqlx::query(
        "INSERT IGNORE INTO adapter_orders (sale, order_no, kind, product_id, product_is_text, user_id, qty, \
                                            created_at, status_code) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(sale)
    .bind(&order.order_no)
    .bind(kind)
    .bind(&product_id)
    .bind(is_text)
    .bind(order.user_id)
    .bind(order.qty)
    .bind(order.created_at.unwrap_or_else(|| Utc::now().naive_utc()))
    .bind(&order.status)
    .execute(&mut **tx)
    .await
    .map_err(CompensationError::from_db("recording the sale's orders (open case over an adapter)"))?;
    let row: Recorded = sqlx::query_as(
        "SELECT CAST(kind AS CHAR), CAST(product_id AS CHAR), product_is_text, user_id, CAST(qty AS SIGNED), created_at, \
                price_cents, read_by \
         FROM adapter_orders WHERE sale = ? AND order_no = ?",
    )
    .bind(sale)
    .bind(&order.order_no)
    .fetch_one(&mut **tx)
    .await
    .step("reading the recorded orders (open case over an adapter)")?;
    if let Some(diff) = differs(&row, product, kind, order) {
        let by = &row.7;
        return Err(CompensationError::Refused(format!(
            "the sale's order {:?} is recorded in the state database by {by} with {diff}: a case is opened only \
             from the sale's own facts, and nothing was written (ask {by} why; the row is kept, so only the state \
             database's owner can remove it: adapter_orders, sale {sale:?})",
            order.order_no
        )));
    }
    Ok(row.5)
}

/// How a recorded row differs from the order the sale holds now, in the facts a payment
/// follows (kind, product, buyer, quantity, price), in words; `None` when it is the same order.
/// Its time and status are not compared: a row recorded before the file named the sale's
/// `created` column holds the time it was read, and a status moves.
fn differs(row: &Recorded, product: &ProductId, kind: &str, order: &SaleOrder) -> Option<String> {
    let (r_kind, r_product, r_is_text, r_user, r_qty, _, r_price, _) = row;
    let mut diff = Vec::new();
    if r_kind != kind {
        diff.push(format!("kind {r_kind} (the reading finds it {kind})"));
    }
    if (r_product.clone(), *r_is_text) != product.stored() {
        diff.push(format!("product {r_product} (the sale says {product})"));
    }
    if *r_user != order.user_id {
        diff.push(format!("buyer {r_user} (the sale says {})", order.user_id));
    }
    if *r_qty != order.qty {
        diff.push(format!("quantity {r_qty} (the sale says {})", order.qty));
    }
    if *r_price != 0 {
        diff.push(format!("price {r_price} cents (a reading records none)"));
    }
    (!diff.is_empty()).then(|| diff.join(", "))
}

/// Executes every pending line of an approved case of the sale `sale` (neither its maker, a
/// planner nor a checker may): see the module's doc for what each line does. Refused, before
/// anything is recorded, for a sale whose initial stock the re-check cannot read (no stock
/// table).
pub async fn execute(
    state: &MySqlPool,
    sale: SaleSide<'_>,
    case_id: u64,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<Execution, CompensationError> {
    let of: Option<String> = sqlx::query_scalar("SELECT sale FROM compensation_cases WHERE id = ?")
        .bind(case_id)
        .fetch_optional(state)
        .await
        .step("reading compensation_cases (execute over an adapter)")?;
    match of {
        None => return Err(CompensationError::NoSuchCase(case_id)),
        Some(s) if s != sale.file.sale.name => {
            return Err(CompensationError::Refused(format!(
                "case {case_id} is not of the sale {:?} this adapter file describes",
                sale.file.sale.name
            )))
        }
        Some(_) => {}
    }
    if let Some(why) = sale.cannot_recheck() {
        return Err(CompensationError::Refused(why));
    }
    execute::execute_at(state, case_id, Venue::Adapter(sale), progress).await
}
