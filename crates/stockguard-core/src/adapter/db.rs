//! The DB side of an adapter reading: per product, in one statement (one snapshot), what is
//! left, what unpaid orders hold, the initial stock when a column keeps it, and the units of
//! the orders in the live and the reserving statuses. SELECT only; every name comes from the
//! file as a back-quoted [`super::ident::Ident`], every status as a bound value.

use std::collections::{HashMap, HashSet};

use sqlx::mysql::MySqlArguments;
use sqlx::query::QueryAs;
use sqlx::{MySql, MySqlPool};

use super::file::{AdapterFile, Initial, OrdersSection, StatusValue};
use super::AdapterError;

/// One product's row of the statement.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DbRow {
    pub name: String,
    pub remaining: i64,
    /// Units unpaid orders hold (two-phase lock; 0 without a reserved column).
    pub reserved: i64,
    /// The initial stock, when a column keeps it.
    pub initial: Option<i64>,
    /// Units of orders in a live status.
    pub live: i64,
    /// Units of orders in a reserving status.
    pub reserving: i64,
    /// Order rows of any status (a row inserted or removed between two passes shows here).
    pub rows: i64,
}

/// `.map_err(db("step"))`: a failure of the sale's database at the named step.
pub(super) fn db(step: &'static str) -> impl Fn(sqlx::Error) -> AdapterError {
    move |source| AdapterError::Db { step, source }
}

/// The sale's products: the stock table's, else the file's list.
pub async fn product_ids(pool: Option<&MySqlPool>, file: &AdapterFile) -> Result<Vec<u64>, AdapterError> {
    let (Some(stock), Some(pool)) = (&file.stock, pool) else {
        let mut ids = file.sale.products.clone();
        ids.sort_unstable();
        ids.dedup();
        return Ok(ids);
    };
    let sql = format!("SELECT CAST({p} AS UNSIGNED) FROM {t} ORDER BY {p}", p = stock.product.q(), t = stock.table.q());
    let ids: Vec<(u64,)> = sqlx::query_as(&sql).fetch_all(pool).await.map_err(db("list the products"))?;
    Ok(ids.into_iter().map(|(id,)| id).collect())
}

/// `CASE WHEN <status> IN (?, ...) THEN <units> ELSE 0 END`, or `0` for no statuses.
fn units_in(statuses: &[StatusValue], status: &str, units: &str) -> String {
    if statuses.is_empty() {
        "0".into()
    } else {
        format!("CASE WHEN {status} IN ({}) THEN {units} ELSE 0 END", vec!["?"; statuses.len()].join(","))
    }
}

pub(super) fn bind_statuses<'q, O>(
    mut query: QueryAs<'q, MySql, O, MySqlArguments>,
    statuses: &'q [StatusValue],
) -> QueryAs<'q, MySql, O, MySqlArguments> {
    for s in statuses {
        query = match s {
            StatusValue::Int(i) => query.bind(*i),
            StatusValue::Text(t) => query.bind(t.as_str()),
        };
    }
    query
}

/// The orders sub-select: units in live and reserving statuses and the row count, per product.
fn orders_part(orders: &OrdersSection, id_list: &str) -> String {
    let status = match &orders.join {
        Some(_) => format!("j.{}", orders.status.q()),
        None => format!("o.{}", orders.status.q()),
    };
    let units = match (&orders.quantity_column, orders.quantity) {
        (Some(c), _) => format!("o.{}", c.q()),
        (None, q) => q.unwrap_or(1).to_string(),
    };
    let join = orders
        .join
        .as_ref()
        .map(|j| format!(" JOIN {} j ON j.{} = o.{}", j.table.q(), j.key.q(), j.on.q()))
        .unwrap_or_default();
    format!(
        "SELECT o.{p} AS p, SUM({live}) AS live, SUM({reserving}) AS reserving, COUNT(*) AS n \
         FROM {t} o{join} WHERE o.{p} IN ({id_list}) GROUP BY o.{p}",
        p = orders.product.q(),
        t = orders.table.q(),
        live = units_in(&orders.live, &status, &units),
        reserving = units_in(&orders.reserving, &status, &units),
    )
}

type Row = (u64, String, i64, i64, Option<i64>, i64, i64, i64);

/// One statement over the given products.
pub async fn read_rows(pool: &MySqlPool, file: &AdapterFile, ids: &[u64]) -> Result<HashMap<u64, DbRow>, AdapterError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    // Ids are integers we hold: inlining them is safe.
    let id_list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let (orders_sql, statuses): (String, Vec<StatusValue>) = match &file.orders {
        Some(orders) => {
            let mut binds = orders.live.clone();
            binds.extend(orders.reserving.iter().cloned());
            (orders_part(orders, &id_list), binds)
        }
        None => ("SELECT 0 AS p, 0 AS live, 0 AS reserving, 0 AS n FROM DUAL WHERE FALSE".into(), Vec::new()),
    };
    let sql = match &file.stock {
        Some(stock) => {
            let name = stock.name.as_ref().map_or("''".into(), |n| format!("CAST(s.{} AS CHAR)", n.q()));
            let reserved = stock.reserved.as_ref().map_or("0".into(), |r| format!("s.{}", r.q()));
            let initial = match &stock.initial {
                Initial::Column(c) => format!("CAST(s.{} AS SIGNED)", c.q()),
                _ => "CAST(NULL AS SIGNED)".into(),
            };
            format!(
                "SELECT CAST(s.{p} AS UNSIGNED), {name}, CAST(s.{r} AS SIGNED), CAST({reserved} AS SIGNED), {initial}, \
                        CAST(COALESCE(o.live, 0) AS SIGNED), CAST(COALESCE(o.reserving, 0) AS SIGNED), \
                        CAST(COALESCE(o.n, 0) AS SIGNED) \
                 FROM {t} s LEFT JOIN ({orders_sql}) o ON o.p = s.{p} WHERE s.{p} IN ({id_list})",
                p = stock.product.q(),
                r = stock.remaining.q(),
                t = stock.table.q(),
            )
        }
        None => format!(
            "SELECT CAST(o.p AS UNSIGNED), '', CAST(0 AS SIGNED), CAST(0 AS SIGNED), CAST(NULL AS SIGNED), \
                    CAST(o.live AS SIGNED), CAST(o.reserving AS SIGNED), CAST(o.n AS SIGNED) FROM ({orders_sql}) o"
        ),
    };
    let query = bind_statuses(sqlx::query_as::<_, Row>(&sql), &statuses);
    let rows = query.fetch_all(pool).await.map_err(db("read stock and orders"))?;
    Ok(rows
        .into_iter()
        .map(|(id, name, remaining, reserved, initial, live, reserving, rows)| {
            (id, DbRow { name, remaining, reserved, initial, live, reserving, rows })
        })
        .collect())
}

/// Which of these order ids are rows already (an in-flight entry whose row exists is counted
/// once, in the DB).
pub async fn orders_present(
    pool: &MySqlPool,
    orders: &OrdersSection,
    order_ids: &[&str],
) -> Result<HashSet<String>, AdapterError> {
    let Some(column) = &orders.order_id else { return Ok(HashSet::new()) };
    let mut found = HashSet::new();
    for chunk in order_ids.chunks(5_000) {
        let sql = format!(
            "SELECT CAST({c} AS CHAR) FROM {t} WHERE {c} IN ({})",
            vec!["?"; chunk.len()].join(","),
            c = column.q(),
            t = orders.table.q()
        );
        let mut query = sqlx::query_as::<_, (String,)>(&sql);
        for id in chunk {
            query = query.bind(*id);
        }
        let rows = query.fetch_all(pool).await.map_err(db("find in-flight orders among the rows"))?;
        found.extend(rows.into_iter().map(|(id,)| id));
    }
    Ok(found)
}

/// Orders per status value as the sale stores them (for `adapter check`: a status label that
/// lies shows in its counts).
pub async fn counts_per_status(pool: &MySqlPool, orders: &OrdersSection) -> Result<Vec<(String, i64)>, AdapterError> {
    let (status, from) = match &orders.join {
        Some(j) => (
            format!("j.{}", orders.status.q()),
            format!("{} o JOIN {} j ON j.{} = o.{}", orders.table.q(), j.table.q(), j.key.q(), j.on.q()),
        ),
        None => (format!("o.{}", orders.status.q()), format!("{} o", orders.table.q())),
    };
    let sql = format!("SELECT CAST({status} AS CHAR), COUNT(*) FROM {from} GROUP BY {status} ORDER BY {status}");
    let rows: Vec<(Option<String>, i64)> =
        sqlx::query_as(&sql).fetch_all(pool).await.map_err(db("count orders per status"))?;
    Ok(rows.into_iter().map(|(s, n)| (s.unwrap_or_else(|| "NULL".into()), n)).collect())
}

/// Each bucket's units left in the sale's per-bucket table, `product -> bucket -> units`.
pub async fn bucket_rows(
    pool: &MySqlPool,
    table: &super::file::BucketTable<'_>,
    ids: &[u64],
) -> Result<HashMap<u64, std::collections::BTreeMap<u64, i64>>, AdapterError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let id_list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let sql = format!(
        "SELECT CAST({p} AS UNSIGNED), CAST({b} AS UNSIGNED), CAST({a} AS SIGNED) FROM {t} WHERE {p} IN ({id_list})",
        p = table.product.q(),
        b = table.bucket.q(),
        a = table.available.q(),
        t = table.table.q()
    );
    let rows: Vec<(u64, u64, i64)> = sqlx::query_as(&sql).fetch_all(pool).await.map_err(db("read the buckets"))?;
    let mut out: HashMap<u64, std::collections::BTreeMap<u64, i64>> = HashMap::new();
    for (p, b, a) in rows {
        out.entry(p).or_default().insert(b, a);
    }
    Ok(out)
}
