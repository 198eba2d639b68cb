//! The sale's side of compensation over an adapter: the live orders of a product as the sale
//! stores them (newest first: by the file's `created`, then its `order_id`), and the one write
//! Stockguard ever makes in the sale's own database: an order set to the sale's own cancelled
//! status, when the file declares it (`[compensation] cancel = { status = ... }`,
//! [`super::file::CompensationSection`]) and the account may write it. Without a declared
//! cancel an approved case ends in its export, for the team's own systems.
//!
//! The case itself (the state database, four eyes) is `crate::compensation::over_adapter`.

use chrono::NaiveDateTime;
use sqlx::MySqlPool;

use super::file::{Cancel, OrdersSection, StatusValue};
use super::AdapterError;

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
    product: u64,
) -> Result<Vec<SaleOrder>, AdapterError> {
    let Some(order_id) = &orders.order_id else {
        return Err(AdapterError::Refused(
            "the adapter file names no [orders] order_id: a compensation case lists orders by the sale's own ids"
                .into(),
        ));
    };
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
    let user = orders.user.as_ref().map_or("0".into(), |u| format!("COALESCE(o.{}, 0)", u.q()));
    let (created, order_by) = match &orders.created {
        Some(c) => (format!("CAST(o.{} AS DATETIME(3))", c.q()), format!("o.{} DESC, o.{} DESC", c.q(), order_id.q())),
        None => ("CAST(NULL AS DATETIME(3))".into(), format!("o.{} DESC", order_id.q())),
    };
    let sql = format!(
        "SELECT CAST(o.{id} AS CHAR), CAST({user} AS UNSIGNED), CAST({units} AS SIGNED), {created}, \
                CAST({status} AS CHAR) \
         FROM {t} o{join} WHERE o.{p} = ? AND {status} IN ({live}) ORDER BY {order_by}",
        id = order_id.q(),
        t = orders.table.q(),
        p = orders.product.q(),
        live = vec!["?"; orders.live.len()].join(","),
    );
    let query = sqlx::query_as::<_, (String, u64, i64, Option<NaiveDateTime>, Option<String>)>(&sql).bind(product);
    let rows = super::db::bind_statuses(query, &orders.live)
        .fetch_all(pool)
        .await
        .map_err(super::db::db("read the product's live orders"))?;
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

/// What cancelling an order in the sale did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cancelled {
    /// This run set the sale's cancelled status.
    Now,
    /// The order was in the cancelled status already (an earlier run, or the sale's own path).
    Already,
    /// The order is in another status that is not live: nothing was done.
    NotLive(String),
    /// No such order in the sale.
    Gone,
}

/// Sets a live order to the sale's cancelled status: a conditional `UPDATE` whose affected
/// rows decide, so a retry or a second executor changes nothing. Returning the unit to the
/// sale's stock is the sale's own business (its cancel path), not Stockguard's.
pub async fn cancel_order(
    pool: &MySqlPool,
    orders: &OrdersSection,
    cancel: &Cancel,
    order_no: &str,
) -> Result<Cancelled, AdapterError> {
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
    let done = query.execute(pool).await.map_err(super::db::db("cancel an order (UPDATE its status)"))?;
    if done.rows_affected() == 1 {
        return Ok(Cancelled::Now);
    }
    let sql = format!(
        "SELECT CAST({s} AS CHAR) FROM {t} WHERE {id} = ?",
        t = orders.table.q(),
        s = orders.status.q(),
        id = order_id.q()
    );
    let now: Option<Option<String>> = sqlx::query_scalar(&sql)
        .bind(order_no)
        .fetch_optional(pool)
        .await
        .map_err(super::db::db("read a cancelled order's status"))?;
    Ok(match now {
        None => Cancelled::Gone,
        Some(s) if s.as_deref() == Some(code(&cancel.status).as_str()) => Cancelled::Already,
        Some(s) => Cancelled::NotLive(s.unwrap_or_else(|| "NULL".into())),
    })
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
