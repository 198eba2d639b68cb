//! The sale a compensation case over an adapter is of ([`SaleSide`]), and what executing one
//! line does there ([`perform`]): the same re-check as our own sale's effect trigger, made from
//! the sale's own rows just before the line, then a cancel-and-refund line cancelled in the
//! sale's own database when its adapter file declares how, every other line handed over in the
//! export. The run that records each line is [`super::execute`]'s, the same as our own sale's.
//!
//! The state database cannot read the sale, so the re-check is made here, at execution time,
//! in one transaction of the sale's: the order a line names must still be there, the one its
//! line was born from (product, buyer, quantity; no price, which no reading records), live,
//! and still among the last accepted orders beyond the product's initial stock, found the way
//! the case was opened ([`super::over_adapter`]: its live orders newest first, against the
//! initial stock a reading finds). A line that fails a check is `SKIPPED` with a detail saying
//! which, and nothing is written in the sale. A cancel is `DONE` only when the sale's own row,
//! read back in the same transaction, holds the declared cancel status; otherwise it is rolled
//! back and `SKIPPED`. An order found in the cancel status already is `DONE` without a cancel
//! (a retry of a run whose record was lost cannot be told from the sale's own cancel path, and
//! its detail says both, so finance checks the sale's refund first). When the run cancels, the
//! transaction holds the product's live order rows (`FOR UPDATE`, read committed: rows only, no
//! gaps) from the re-check to the commit, so no earlier order is cancelled under it. The stock
//! figure is read plainly: a baseline is the state database's, and a stock row held would stall
//! the sale's own order path.

use sqlx::{Connection as _, MySqlPool};

use super::open::beyond_stock;
use super::{Action, CompensationError};
use crate::adapter::compensate::{self, Hold, SaleRow};
use crate::adapter::file::{Cancel, Initial, OrdersSection};
use crate::adapter::{AdapterError, AdapterFile, OpenedSale};
use crate::product_id::ProductId;
use crate::step::{again_on_deadlock, is_deadlock};

/// The sale a case over an adapter is of: its file and its own database.
#[derive(Clone, Copy)]
pub struct SaleSide<'a> {
    pub file: &'a AdapterFile,
    /// The sale's database (a SELECT-only account opens and hands over; a declared cancel
    /// needs one that may update the orders' status).
    pub db: &'a MySqlPool,
}

impl<'a> SaleSide<'a> {
    /// The side of an opened sale: refused for a sale that names no orders table (counters
    /// only), since a case lists the sale's orders.
    pub fn of(sale: &'a OpenedSale) -> Result<Self, CompensationError> {
        let db = sale.mysql.as_ref().filter(|_| sale.file.orders.is_some()).ok_or_else(|| {
            CompensationError::Refused(format!(
                "the sale {:?} names no orders table: a compensation case lists the sale's orders",
                sale.file.sale.name
            ))
        })?;
        Ok(Self { file: &sale.file, db })
    }

    /// Why a case of this sale cannot be executed, if it cannot: the re-check needs the
    /// product's initial stock from the sale's database, and a sale without a stock table keeps
    /// it in Redis only.
    pub(super) fn cannot_recheck(&self) -> Option<String> {
        self.file.stock.is_none().then(|| {
            format!(
                "the sale {:?} has no [stock] table: its initial stock is in Redis only, which an execution does not \
                 read, so the re-check each line needs (its order still beyond stock) cannot be made; nothing was \
                 executed",
                self.file.sale.name
            )
        })
    }
}

/// What a line was born from: its `adapter_orders` row, as its trigger copied it into the line.
pub(super) struct Born<'a> {
    pub order_no: &'a str,
    /// The case's product.
    pub product: ProductId,
    pub user_id: u64,
    pub qty: i64,
    pub price_cents: i64,
    /// An oversold order (a row of the sale), not a withdrawn acceptance (never a row).
    pub oversold: bool,
}

/// What a line's run did in the sale: `(outcome, detail)` for its effect row.
pub(super) async fn perform(
    sale: SaleSide<'_>,
    state: &MySqlPool,
    line: &Born<'_>,
    action: Action,
) -> Result<(&'static str, String), AdapterError> {
    let cancel = match action {
        Action::CancelRefund => sale.file.compensation.cancel.as_ref(),
        _ => None,
    };
    let (Some(orders), true) = (sale.file.orders.as_ref(), line.oversold) else {
        // A withdrawn acceptance was never a row of the sale: its coupon or note is handed over.
        return Ok(("DONE", HANDED_OVER.into()));
    };
    let baseline = match sale.file.stock.as_ref().map(|s| &s.initial) {
        Some(Initial::Baseline) => {
            crate::adapter::state::baselines(state, &sale.file.sale.name).await?.get(&line.product).copied()
        }
        _ => None,
    };
    // InnoDB may pick the run's transaction as a deadlock's victim against the sale's own
    // writers (it holds the product's orders): it was rolled back whole, so it is tried again.
    // The project's one retry ([`again_on_deadlock`]): a deadlock's error goes to it, any
    // other answer is the line's.
    let tried = again_on_deadlock(|| async {
        match recheck_then_act(sale, orders, cancel, line, baseline).await {
            Err(AdapterError::Db { source, .. }) if is_deadlock(&source) => Err(source),
            done => Ok(done),
        }
    })
    .await;
    tried.unwrap_or_else(|source| {
        Err(AdapterError::Db { step: "a line's re-check (a deadlock's victim each try)", source })
    })
}

const HANDED_OVER: &str = "handed over in the approved export: the sale's own systems carry it out";

fn sale_db(step: &'static str) -> impl Fn(sqlx::Error) -> AdapterError {
    move |source| AdapterError::Db { step, source }
}

/// What one try found and did, before its transaction ends.
enum Verdict {
    /// Nothing was written in the sale: the transaction is rolled back.
    Nothing(&'static str, String),
    /// The cancel the sale's row confirms: the transaction is committed.
    Cancelled(String),
}

/// One try: the re-check and the line's effect in one transaction of the sale's, ended by its
/// verdict (committed only for a cancel its row confirms).
async fn recheck_then_act(
    sale: SaleSide<'_>,
    orders: &OrdersSection,
    cancel: Option<&Cancel>,
    line: &Born<'_>,
    baseline: Option<i64>,
) -> Result<(&'static str, String), AdapterError> {
    let hold = if cancel.is_some() { Hold::Rows } else { Hold::Nothing };
    let mut conn = sale.db.acquire().await.map_err(sale_db("connect for a line's re-check"))?;
    if hold == Hold::Rows {
        // Read committed: `FOR UPDATE` holds the rows it reads and no gaps, so the sale's new
        // orders are not held up (a newer order only adds to what is beyond stock).
        sqlx::query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .execute(&mut *conn)
            .await
            .map_err(sale_db("set the re-check's isolation"))?;
    }
    let mut tx = conn.begin().await.map_err(sale_db("begin a line's re-check"))?;
    let verdict = match recheck(&mut tx, sale.file, orders, cancel, line, baseline, hold).await {
        Ok(v) => v,
        Err(e) => {
            let _ = tx.rollback().await;
            return Err(e);
        }
    };
    match verdict {
        Verdict::Nothing(outcome, detail) => {
            tx.rollback().await.map_err(sale_db("end a line's re-check"))?;
            Ok((outcome, detail))
        }
        Verdict::Cancelled(detail) => {
            tx.commit().await.map_err(sale_db("commit a cancel"))?;
            Ok(("DONE", detail))
        }
    }
}

/// The re-check, then the line's effect: see the module's doc.
async fn recheck(
    tx: &mut sqlx::MySqlConnection,
    file: &AdapterFile,
    orders: &OrdersSection,
    cancel: Option<&Cancel>,
    line: &Born<'_>,
    baseline: Option<i64>,
    hold: Hold,
) -> Result<Verdict, AdapterError> {
    let skipped = |detail: String| Ok(Verdict::Nothing("SKIPPED", detail));
    let Some(row) = compensate::order_row(&mut *tx, orders, cancel, line.order_no, hold).await? else {
        return skipped("the order is gone from the sale: nothing to do".into());
    };
    if let Some(diff) = not_born_from(&row, line) {
        return skipped(format!("the sale's order is not the one its line was born from ({diff}): nothing done"));
    }
    if let (true, Some(c)) = (row.cancelled, cancel) {
        // A retry after a run whose record was lost, or the sale's own cancel path.
        return Ok(Verdict::Nothing(
            "DONE",
            format!(
                "the order was in the cancel status {} already: not cancelled by this run but by an earlier run \
                 whose record was lost or by the sale's own cancel path; check whether the sale refunded it before \
                 paying from the export",
                compensate::cancel_code(c)
            ),
        ));
    }
    if !row.live {
        return skipped(format!("the order was no longer live in the sale (status {}): nothing to do", row.status));
    }
    let live = compensate::live_orders(&mut *tx, orders, &line.product, hold).await?;
    let live_units: i64 = live.iter().map(|o| o.qty).sum();
    let Some((initial, source)) =
        compensate::initial_stock(&mut *tx, file, baseline, &line.product, live_units).await?
    else {
        return Err(AdapterError::Refused(format!(
            "the sale {:?} has no [stock] table: the re-check cannot find its initial stock",
            file.sale.name
        )));
    };
    let units_beyond = (live_units - initial).max(0);
    let stands =
        format!("{units_beyond} {} beyond {initial} ({source})", if units_beyond == 1 { "unit" } else { "units" });
    if !beyond_stock(live, |o| o.qty, initial).iter().any(|o| o.order_no == line.order_no) {
        return skipped(format!(
            "the order is no longer beyond stock in the sale: {stands} now and none of them is this order's; nothing done"
        ));
    }
    let Some(cancel) = cancel else {
        return Ok(Verdict::Nothing("DONE", format!("{HANDED_OVER}; still beyond stock when handed over: {stands}")));
    };
    let code = compensate::cancel_code(cancel);
    let (now, confirmed) = compensate::cancel_in(&mut *tx, orders, cancel, line.order_no).await?;
    if !confirmed {
        return skipped(format!(
            "the sale did not keep the cancel: its row read back in status {now} and not the cancel status {code}: \
             the run rolled it back and nothing is recorded as done"
        ));
    }
    Ok(Verdict::Cancelled(format!(
        "cancelled in the sale: its row read back in the cancel status {code}; still beyond stock then: {stands}; \
         the refund is the sale's own from the export"
    )))
}

/// How the sale's order differs from what its line was born from, in words; `None` when it is
/// the same order. The sale's file names no price, so a line's price is what a reading records
/// (none); a line with one was not born from a reading.
fn not_born_from(row: &SaleRow, line: &Born<'_>) -> Option<String> {
    let mut diff = Vec::new();
    if row.product.trim() != line.product.to_string() {
        diff.push(format!("product {} in the sale where the case has {}", row.product, line.product));
    }
    if row.user_id != line.user_id {
        diff.push(format!("buyer {} in the sale where the line has {}", row.user_id, line.user_id));
    }
    if row.qty != line.qty {
        diff.push(format!("quantity {} in the sale where the line has {}", row.qty, line.qty));
    }
    if line.price_cents != 0 {
        diff.push(format!("a price of {} cents on the line that no reading of the sale records", line.price_cents));
    }
    (!diff.is_empty()).then(|| diff.join("; "))
}
