//! The sale's side of compensation over an adapter: the live orders of a product as the sale
//! stores them (newest first: by the file's `created`, then its `order_id`), one order's row in
//! whatever status, the product's initial stock as a reading finds it, and the one write
//! Stockguard ever makes in the sale's own database: an order set to the sale's own cancelled
//! status, when the file declares it (`[compensation] cancel = { status = ... }`,
//! [`super::file::CompensationSection`]) and the account may write it, then read back. Without
//! a declared cancel an approved case ends in its export, for the team's own systems.
//!
//! Every read takes an executor, so an execution's re-check and its cancel are one transaction
//! of the sale's ([`Hold::Rows`] holds what it reads until then). The case itself (the state
//! database, four eyes) is `crate::compensation::over_adapter`; what a line's run does with
//! these, `crate::compensation::sale_side`.

use chrono::NaiveDateTime;
use sqlx::mysql::MySqlArguments;
use sqlx::query::QueryAs;
use sqlx::{MySql, MySqlConnection, MySqlPool};

use super::file::{AdapterFile, Cancel, Initial, OrdersSection, StatusValue};
use super::AdapterError;
use crate::product_id::ProductId;

/// A status code as the database's `CAST(... AS CHAR)` gives it.
fn code(s: &StatusValue) -> String {
    match s {
        StatusValue::Int(i) => i.to_string(),
        StatusValue::Text(t) => t.clone(),
    }
}

fn bind_status<'q>(
    query: sqlx::query::Query<'q, sqlx::MySql, sqlx::mysql::MySqlArguments>,
    s: &'q StatusValue,
) -> sqlx::query::Query<'q, sqlx::MySql, sqlx::mysql::MySqlArguments> {
    match s {
        StatusValue::Int(i) => query.bind(*i),
        StatusValue::Text(t) => query.bind(t.as_str()),
    }
}

fn bind_status_as<'q, O>(
    query: QueryAs<'q, MySql, O, MySqlArguments>,
    s: &'q StatusValue,
) -> QueryAs<'q, MySql, O, MySqlArguments> {
    match s {
        StatusValue::Int(i) => query.bind(*i),
        StatusValue::Text(t) => query.bind(t.as_str()),
    }
}

fn sale_db(step: &'static str) -> impl Fn(sqlx::Error) -> AdapterError {
    move |source| AdapterError::Db { step, source }
}

/// How a read of the sale holds the rows it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// A plain read (a SELECT-only account's).
    Nothing,
    /// `FOR UPDATE`: the rows read stay as read until the transaction ends (an execution that
    /// cancels: no order of the product is cancelled, paid or re-bought under its re-check).
    Rows,
}

impl Hold {
    fn clause(self) -> &'static str {
        match self {
            Self::Nothing => "",
            Self::Rows => " FOR UPDATE",
        }
    }
}

/// The status expression, the join and the units expression of the orders table.
fn parts(orders: &OrdersSection) -> (String, String, String) {
    let status = match &orders.join {
        Some(_) => format!("j.{}", orders.status.q()),
        None => format!("o.{}", orders.status.q()),
    };
    let join = orders
        .join
        .as_ref()
        .map(|j| format!(" JOIN {} j ON j.{} = o.{}", j.table.q(), j.key.q(), j.on.q()))
        .unwrap_or_default();
    let units = match (&orders.quantity_column, orders.quantity) {
        (Some(c), _) => format!("o.{}", c.q()),
        (None, q) => q.unwrap_or(1).to_string(),
    };
    (status, join, units)
}

fn order_id(orders: &OrdersSection) -> Result<&super::ident::Ident, AdapterError> {
    orders.order_id.as_ref().ok_or_else(|| {
        AdapterError::Refused(
            "the adapter file names no [orders] order_id: a compensation case lists orders by the sale's own ids"
                .into(),
        )
    })
}

/// One live order of the sale, as a case lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaleOrder {
    /// The sale's own order id.
    pub order_no: String,
    /// The buyer (0 when the file names no `user` column).
    pub user_id: u64,
    pub qty: i64,
    /// When the sale accepted it (the file's `created`; None without one).
    pub created_at: Option<NaiveDateTime>,
    /// Its status code as the sale stores it.
    pub status: String,
}

/// The product's live orders, newest first: by `created`, then `order_id`, both descending
/// (by `order_id` alone when the file names no `created`). One statement, SELECT only.
pub async fn live_orders_newest_first(
    pool: &MySqlPool,
    orders: &OrdersSection,
    product: &ProductId,
) -> Result<Vec<SaleOrder>, AdapterError> {
    live_orders(pool, orders, product, Hold::Nothing).await
}

/// [`live_orders_newest_first`] on any executor (a transaction of the sale's), holding the rows
/// as `hold` says.
pub async fn live_orders<'c, E: sqlx::Executor<'c, Database = MySql>>(
    exec: E,
    orders: &OrdersSection,
    product: &ProductId,
    hold: Hold,
) -> Result<Vec<SaleOrder>, AdapterError> {
    let order_id = order_id(orders)?;
    let (status, join, units) = parts(orders);
    let user = orders.user.as_ref().map_or("0".into(), |u| format!("COALESCE(o.{}, 0)", u.q()));
    let (created, order_by) = match &orders.created {
        Some(c) => (format!("CAST(o.{} AS DATETIME(3))", c.q()), format!("o.{} DESC, o.{} DESC", c.q(), order_id.q())),
        None => ("CAST(NULL AS DATETIME(3))".into(), format!("o.{} DESC", order_id.q())),
    };
    let sql = format!(
        "SELECT CAST(o.{id} AS CHAR), CAST({user} AS UNSIGNED), CAST({units} AS SIGNED), {created}, \
                CAST({status} AS CHAR) \
         FROM {t} o{join} WHERE o.{p} = ? AND {status} IN ({live}) ORDER BY {order_by}{lock}",
        id = order_id.q(),
        t = orders.table.q(),
        p = orders.product.q(),
        live = vec!["?"; orders.live.len()].join(","),
        lock = hold.clause(),
    );
    let query = sqlx::query_as::<_, (String, u64, i64, Option<NaiveDateTime>, Option<String>)>(&sql).bind(product);
    let step = match hold {
        Hold::Nothing => "read the product's live orders",
        Hold::Rows => "cancel an order (hold the product's live orders first)",
    };
    let rows = super::db::bind_statuses(query, &orders.live).fetch_all(exec).await.map_err(sale_db(step))?;
    Ok(rows
        .into_iter()
        .map(|(order_no, user_id, qty, created_at, status)| SaleOrder {
            order_no,
            user_id,
            qty,
            created_at,
            status: status.unwrap_or_default(),
        })
        .collect())
}

/// One order as the sale holds it now, in whatever status: the facts a line is born from, and
/// where its status stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaleRow {
    /// Its product, as text (the sale's column, whatever its type).
    pub product: String,
    /// The buyer (0 when the file names no `user` column).
    pub user_id: u64,
    pub qty: i64,
    /// Its status code as the sale stores it (`NULL` when it holds none).
    pub status: String,
    /// Its status is one of the file's live ones (the sale's own comparison).
    pub live: bool,
    /// Its status is the declared cancel status (false when none is declared).
    pub cancelled: bool,
}

/// The order `order_no`'s row, or `None` when the sale has no such order.
pub async fn order_row<'c, E: sqlx::Executor<'c, Database = MySql>>(
    exec: E,
    orders: &OrdersSection,
    cancel: Option<&Cancel>,
    order_no: &str,
    hold: Hold,
) -> Result<Option<SaleRow>, AdapterError> {
    let order_id = order_id(orders)?;
    let (status, join, units) = parts(orders);
    let user = orders.user.as_ref().map_or("0".into(), |u| format!("COALESCE(o.{}, 0)", u.q()));
    let cancelled = if cancel.is_some() { format!("COALESCE({status} = ?, 0)") } else { "0".into() };
    let sql = format!(
        "SELECT CAST(o.{p} AS CHAR), CAST({user} AS UNSIGNED), CAST({units} AS SIGNED), \
                COALESCE(CAST({status} AS CHAR), 'NULL'), CAST(COALESCE({status} IN ({live}), 0) AS SIGNED), \
                CAST({cancelled} AS SIGNED) \
         FROM {t} o{join} WHERE o.{id} = ?{lock}",
        p = orders.product.q(),
        id = order_id.q(),
        t = orders.table.q(),
        live = vec!["?"; orders.live.len()].join(","),
        lock = hold.clause(),
    );
    let mut query =
        super::db::bind_statuses(sqlx::query_as::<_, (Option<String>, u64, i64, String, i64, i64)>(&sql), &orders.live);
    if let Some(c) = cancel {
        query = bind_status_as(query, &c.status);
    }
    let step = match hold {
        Hold::Nothing => "read the order a line names",
        Hold::Rows => "cancel an order (hold its row first)",
    };
    let row = query.bind(order_no).fetch_optional(exec).await.map_err(sale_db(step))?;
    Ok(row.map(|(product, user_id, qty, status, live, cancelled)| SaleRow {
        product: product.unwrap_or_default(),
        user_id,
        qty,
        status,
        live: live != 0,
        cancelled: cancelled != 0,
    }))
}

/// A product's initial stock as a reading of the sale finds it, and what it is in words (no
/// comma: a line's detail quotes it): the file's number, the stock table's column, the recorded
/// `baseline` (the state database's, given here), or, with none recorded (or a `NULL` column),
/// the sale's own ledger: what is left plus `live_units` (what its live orders hold). `None` for
/// a sale with no stock table, whose initial stock is in Redis only.
pub async fn initial_stock<'c, E: sqlx::Executor<'c, Database = MySql>>(
    exec: E,
    file: &AdapterFile,
    baseline: Option<i64>,
    product: &ProductId,
    live_units: i64,
) -> Result<Option<(i64, String)>, AdapterError> {
    let Some(stock) = &file.stock else { return Ok(None) };
    match (&stock.initial, baseline) {
        (Initial::Fixed(n), _) => return Ok(Some((*n, "the initial stock the adapter file gives".into()))),
        (Initial::Baseline, Some(b)) => return Ok(Some((b, "the recorded baseline".into()))),
        _ => {}
    }
    let reserved = stock.reserved.as_ref().map_or("0".into(), |r| format!("s.{}", r.q()));
    let column = match &stock.initial {
        Initial::Column(c) => format!("CAST(s.{} AS SIGNED)", c.q()),
        _ => "CAST(NULL AS SIGNED)".into(),
    };
    let sql = format!(
        "SELECT CAST(s.{r} AS SIGNED) - CAST({reserved} AS SIGNED), {column} FROM {t} s WHERE s.{p} = ?",
        r = stock.remaining.q(),
        t = stock.table.q(),
        p = stock.product.q(),
    );
    let row: Option<(Option<i64>, Option<i64>)> = sqlx::query_as(&sql)
        .bind(product)
        .fetch_optional(exec)
        .await
        .map_err(sale_db("read the product's initial stock"))?;
    let (available, column) = row.ok_or_else(|| AdapterError::UnknownProduct(product.clone()))?;
    Ok(Some(match (&stock.initial, column) {
        (Initial::Column(c), Some(units)) => {
            (units, format!("the initial stock in {}.{}", stock.table.as_str(), c.as_str()))
        }
        _ => (
            available.unwrap_or(0) + live_units,
            "the sale's own ledger: what is left plus what live orders hold; no baseline recorded".into(),
        ),
    }))
}

/// Sets the live order `order_no` to the declared cancel status in `tx` (a conditional
/// `UPDATE`: only from a live status) and reads its row back there: the status the sale's row
/// holds now, and whether it is the cancel status. The sale's own triggers and column types
/// have had their say by then; committing is the caller's, once the row confirms it. Returning
/// the unit to the sale's stock is the sale's own business (its cancel path), not Stockguard's.
pub async fn cancel_in(
    tx: &mut MySqlConnection,
    orders: &OrdersSection,
    cancel: &Cancel,
    order_no: &str,
) -> Result<(String, bool), AdapterError> {
    let Some(order_id) = &orders.order_id else {
        return Err(AdapterError::Refused("[compensation] cancel needs [orders] order_id".into()));
    };
    let sql = format!(
        "UPDATE {t} SET {s} = ? WHERE {id} = ? AND {s} IN ({live})",
        t = orders.table.q(),
        s = orders.status.q(),
        id = order_id.q(),
        live = vec!["?"; orders.live.len()].join(","),
    );
    let mut query = bind_status(sqlx::query(&sql), &cancel.status).bind(order_no);
    for s in &orders.live {
        query = bind_status(query, s);
    }
    query.execute(&mut *tx).await.map_err(sale_db("cancel an order (UPDATE its status)"))?;
    let sql = format!(
        "SELECT COALESCE(CAST({s} AS CHAR), 'NULL'), CAST(COALESCE({s} = ?, 0) AS SIGNED) FROM {t} WHERE {id} = ?",
        t = orders.table.q(),
        s = orders.status.q(),
        id = order_id.q()
    );
    let back: Option<(String, i64)> = bind_status_as(sqlx::query_as(&sql), &cancel.status)
        .bind(order_no)
        .fetch_optional(&mut *tx)
        .await
        .map_err(sale_db("read a cancelled order back"))?;
    Ok(match back {
        Some((status, is_cancel)) => (status, is_cancel != 0),
        None => ("gone".into(), false),
    })
}

/// The declared cancel status as the sale's `CAST(... AS CHAR)` gives it, for a line's detail.
pub fn cancel_code(cancel: &Cancel) -> String {
    code(&cancel.status)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::adapter::AdapterFile;

    /// A sale with no stock table: its products listed, a counter in Redis, orders by id.
    const SALE: &str = r#"
        [sale]
        name = "tickets"
        products = [7]
        [redis]
        stock = "tickets:${id}"
        [orders]
        table = "ticket_order"
        product = "ticket_id"
        status = "state"
        live = [1, 2, 3, 5]
        order_id = "id"
    "#;

    fn parse(text: &str) -> Result<AdapterFile, String> {
        AdapterFile::parse(text, Path::new("sale.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_file_without_a_compensation_section_writes_nothing_in_the_sale() {
        assert_eq!(parse(SALE).unwrap().compensation.cancel, None);
    }

    #[test]
    fn a_declared_cancel_keeps_the_sales_own_code() {
        let file = parse(&format!("{SALE}\n[compensation]\ncancel = {{ status = 4 }}\n")).unwrap();
        assert_eq!(file.compensation.cancel, Some(Cancel { status: StatusValue::Int(4) }));
    }

    #[test]
    fn a_cancel_to_a_live_status_or_without_an_order_id_is_refused() {
        let live = parse(&format!("{SALE}\n[compensation]\ncancel = {{ status = 2 }}\n")).unwrap_err();
        assert!(live.contains("cancel status 2 is a live status"), "{live}");
        let no_id =
            parse(&format!("{}\n[compensation]\ncancel = {{ status = 4 }}\n", SALE.replace("order_id = \"id\"", "")))
                .unwrap_err();
        assert!(no_id.contains("needs [orders] order_id"), "{no_id}");
    }
}
