//! The DB side of an adapter reading: per product, in one statement (one snapshot), what is
//! left, what unpaid orders hold, the initial stock when a column keeps it, and the units of
//! the orders in the live and the reserving statuses. SELECT only; every name comes from the
//! file as a back-quoted [`super::ident::Ident`], every status as a bound value. A sale whose
//! accepted orders wait in a table of its own (`[inflight] source = "table"`) is read in one
//! transaction, so the pending rows, the orders and the stock are one snapshot.

use std::collections::{HashMap, HashSet};

use sqlx::mysql::MySqlArguments;
use sqlx::query::QueryAs;
use sqlx::{Connection as _, Executor as _, MySql, MySqlConnection, MySqlPool};

use super::file::{AdapterFile, Inflight, Initial, OrdersSection, Pending, StatusValue};
use super::ident::Ident;
use super::inflight::{Beyond, InflightRead, Waiting};
use super::AdapterError;
use crate::product_id::{IdKind, ProductId};

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

/// The sale's products: the stock table's (of the kind its product column holds:
/// [`id_kind`]), else the file's list; in id order.
pub async fn product_ids(pool: Option<&MySqlPool>, file: &AdapterFile) -> Result<Vec<ProductId>, AdapterError> {
    let (Some(stock), Some(pool)) = (&file.stock, pool) else {
        let mut ids = file.sale.products.clone();
        ids.sort_unstable();
        ids.dedup();
        return Ok(ids);
    };
    let kind = id_kind(pool, file).await?;
    // As text, then read as the column's kind: a cast to a number would turn 'SKU-A' into 0
    // (with a warning), and every such product would read as product 0 with another's figures.
    let sql = format!("SELECT CAST({p} AS CHAR) FROM {t}", p = stock.product.q(), t = stock.table.q());
    let ids: Vec<(Option<String>,)> = sqlx::query_as(&sql).fetch_all(pool).await.map_err(db("list the products"))?;
    let mut ids = ids
        .into_iter()
        .map(|(id,)| {
            let text = id.unwrap_or_else(|| "NULL".into());
            ProductId::read_as(&text, kind).ok_or_else(|| {
                AdapterError::Refused(format!(
                    "{}.{} holds the product id {text:?}, not a whole number (the column is an integer column); \
                     nothing was read",
                    stock.table.as_str(),
                    stock.product.as_str()
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    ids.sort_unstable();
    Ok(ids)
}

/// Ids as a person typed them, as the sale's own ([`ProductId::as_kind`]): `17` of a sale keyed
/// by text is `"17"`; text typed for a sale keyed by numbers is no product of it.
pub async fn as_sales(
    pool: Option<&MySqlPool>,
    file: &AdapterFile,
    ids: &[ProductId],
) -> Result<Vec<ProductId>, AdapterError> {
    let kind = match pool {
        Some(pool) => id_kind(pool, file).await?,
        None => IdKind::of(&file.sale.products),
    };
    ids.iter().map(|id| id.as_kind(kind).ok_or_else(|| AdapterError::UnknownProduct(id.clone()))).collect()
}

/// The kind of the sale's product ids, from its stock table's product column (the sale's
/// schema, `information_schema`): an integer column (or a `DECIMAL` of no scale) holds
/// numbers, a `CHAR` or `VARCHAR` column text. Any other (binary strings, BLOB and TEXT, a
/// `DECIMAL` with a scale, dates...) is refused in one line naming the column and its type,
/// before anything is read. A sale without a stock table: its file's list says.
pub async fn id_kind(pool: &MySqlPool, file: &AdapterFile) -> Result<IdKind, AdapterError> {
    let Some(stock) = &file.stock else { return Ok(IdKind::of(&file.sale.products)) };
    let column: Option<(String, String, Option<i64>)> = sqlx::query_as(
        "SELECT CAST(DATA_TYPE AS CHAR), CAST(COLUMN_TYPE AS CHAR), CAST(NUMERIC_SCALE AS SIGNED) \
         FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ?",
    )
    .bind(stock.table.as_str())
    .bind(stock.product.as_str())
    .fetch_optional(pool)
    .await
    .map_err(db("read the product column's type"))?;
    // A column the schema does not show: the listing's own statement says what is missing.
    let Some((data_type, column_type, scale)) = column else { return Ok(IdKind::Num) };
    match data_type.to_ascii_lowercase().as_str() {
        "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint" => Ok(IdKind::Num),
        "decimal" | "numeric" if scale.unwrap_or(0) == 0 => Ok(IdKind::Num),
        "char" | "varchar" => Ok(IdKind::Text),
        _ => Err(AdapterError::Refused(format!(
            "{}.{} is a {column_type} column: product ids are read from an integer or a CHAR/VARCHAR column only; \
             nothing was read",
            stock.table.as_str(),
            stock.product.as_str()
        ))),
    }
}

/// A list of ids for `IN (...)`: numbers inlined (integers we hold: safe, and the plan of a
/// long list stays the one it was), text as `?` each with the ids to bind ([`bind_ids`]).
fn id_list(ids: &[ProductId]) -> (String, &[ProductId]) {
    if ids.iter().all(|id| id.as_num().is_some()) {
        (ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(","), &[])
    } else {
        (vec!["?"; ids.len()].join(","), ids)
    }
}

fn bind_ids<'q, O>(
    mut query: QueryAs<'q, MySql, O, MySqlArguments>,
    ids: &'q [ProductId],
) -> QueryAs<'q, MySql, O, MySqlArguments> {
    for id in ids {
        query = query.bind(id);
    }
    query
}

/// The ids of a statement's rows (each read as text) back as the ids asked for; a row of a
/// product not asked for (one added since the listing) is left out.
struct IdsByText<'a>(HashMap<String, &'a ProductId>);

impl<'a> IdsByText<'a> {
    fn new(ids: &'a [ProductId]) -> Self {
        Self(ids.iter().map(|id| (id.to_string(), id)).collect())
    }

    fn get(&self, text: &str) -> Option<ProductId> {
        self.0.get(text).map(|id| (*id).clone())
    }
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

/// The orders sub-select: units in live and reserving statuses and the row count, per product
/// (of the listed products, or of all).
fn orders_part(orders: &OrdersSection, id_list: Option<&str>) -> String {
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
         FROM {t} o{join}{filter} GROUP BY o.{p}",
        p = orders.product.q(),
        t = orders.table.q(),
        live = units_in(&orders.live, &status, &units),
        reserving = units_in(&orders.reserving, &status, &units),
        filter = id_list.map(|l| format!(" WHERE o.{} IN ({l})", orders.product.q())).unwrap_or_default(),
    )
}

type Row = (Option<String>, String, i64, i64, Option<i64>, i64, i64, i64);

/// The products a statement reads.
#[derive(Debug, Clone, Copy)]
pub enum Products<'a> {
    /// Every product of the stock table (these, as listed from it): the statement then matches
    /// no list of ids against every order row (at 5,000 products, about 36 ms a pass instead of
    /// about 100 in `bench adapter`).
    Every(&'a [ProductId]),
    /// Only these.
    Only(&'a [ProductId]),
}

impl<'a> Products<'a> {
    pub fn ids(self) -> &'a [ProductId] {
        match self {
            Self::Every(ids) | Self::Only(ids) => ids,
        }
    }
}

/// One statement over the given products (on a pool, or on one connection's transaction).
pub async fn read_rows<'c, E: sqlx::Executor<'c, Database = MySql>>(
    pool: E,
    file: &AdapterFile,
    products: Products<'_>,
) -> Result<HashMap<ProductId, DbRow>, AdapterError> {
    let ids = products.ids();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    // Every product of a stock table needs no list: the ids were listed from that table (one
    // added since is read and left out).
    let every = matches!(products, Products::Every(_)) && file.stock.is_some();
    let (id_list, id_binds) = id_list(ids);
    let mut listed: Vec<&[ProductId]> = Vec::new();
    let (orders_sql, statuses): (String, Vec<StatusValue>) = match &file.orders {
        Some(orders) => {
            let mut binds = orders.live.clone();
            binds.extend(orders.reserving.iter().cloned());
            if !every {
                listed.push(id_binds);
            }
            (orders_part(orders, (!every).then_some(id_list.as_str())), binds)
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
                "SELECT CAST(s.{p} AS CHAR), {name}, CAST(s.{r} AS SIGNED), CAST({reserved} AS SIGNED), {initial}, \
                        CAST(COALESCE(o.live, 0) AS SIGNED), CAST(COALESCE(o.reserving, 0) AS SIGNED), \
                        CAST(COALESCE(o.n, 0) AS SIGNED) \
                 FROM {t} s LEFT JOIN ({orders_sql}) o ON o.p = s.{p}{filter}",
                p = stock.product.q(),
                r = stock.remaining.q(),
                t = stock.table.q(),
                filter = if every {
                    String::new()
                } else {
                    listed.push(id_binds);
                    format!(" WHERE s.{} IN ({id_list})", stock.product.q())
                },
            )
        }
        None => format!(
            "SELECT CAST(o.p AS CHAR), '', CAST(0 AS SIGNED), CAST(0 AS SIGNED), CAST(NULL AS SIGNED), \
                    CAST(o.live AS SIGNED), CAST(o.reserving AS SIGNED), CAST(o.n AS SIGNED) FROM ({orders_sql}) o"
        ),
    };
    let mut query = bind_statuses(sqlx::query_as::<_, Row>(&sql), &statuses);
    for binds in listed {
        query = bind_ids(query, binds);
    }
    let rows = query.fetch_all(pool).await.map_err(db("read stock and orders"))?;
    let asked = IdsByText::new(ids);
    rows.into_iter()
        .filter_map(|(id, name, remaining, reserved, initial, live, reserving, rows)| {
            let id = asked.get(id.as_deref()?)?;
            let row = DbRow { name, remaining, reserved, initial, live, reserving, rows };
            Some(within_bounds(file, &id, &row).map(|()| (id, row)))
        })
        .collect()
}

/// Refuses a row whose figures no stock can hold ([`super::MAX_UNITS`]), naming the product,
/// where the figure is and its value: an absurd oversell must not wrap into an `OK`.
fn within_bounds(file: &AdapterFile, id: &ProductId, row: &DbRow) -> Result<(), AdapterError> {
    let stock = file.stock.as_ref();
    let at = |column: Option<&Ident>, what: &str| match (stock, column) {
        (Some(s), Some(c)) => format!("{}.{}", s.table.as_str(), c.as_str()),
        _ => what.to_string(),
    };
    let initial_column = stock.and_then(|s| match &s.initial {
        Initial::Column(c) => Some(c),
        _ => None,
    });
    let figures = [
        (at(stock.map(|s| &s.remaining), "the remaining stock"), Some(row.remaining)),
        (at(stock.and_then(|s| s.reserved.as_ref()), "the reserved stock"), Some(row.reserved)),
        (at(initial_column, "the initial stock"), row.initial),
        ("the units of its live orders".to_string(), Some(row.live)),
        ("the units of its reserving orders".to_string(), Some(row.reserving)),
    ];
    for (what, value) in figures {
        if let Some(v) = value.filter(|v| v.unsigned_abs() > super::MAX_UNITS as u64) {
            return Err(AdapterError::Refused(format!(
                "product {id}: {what} is {v}, beyond any stock ({} units at most): no reading is taken from a \
                 figure that cannot be right; correct that row",
                super::MAX_UNITS
            )));
        }
    }
    Ok(())
}

/// The stock statement and, when in-flight entries name their orders, the lookup of those
/// orders among the rows, in one REPEATABLE READ snapshot: an order written with its stock in
/// one transaction is seen on both sides or on neither, however many statements the lookup
/// takes. With nothing to look up, the one statement is its own snapshot.
pub async fn read_with_lookup(
    pool: &MySqlPool,
    file: &AdapterFile,
    products: Products<'_>,
    waiting: &[&str],
) -> Result<(HashMap<ProductId, DbRow>, HashSet<String>), AdapterError> {
    let orders = match &file.orders {
        Some(orders) if orders.order_id.is_some() && !waiting.is_empty() => orders,
        _ => return Ok((read_rows(pool, file, products).await?, HashSet::new())),
    };
    let mut conn = pool.acquire().await.map_err(db("take a connection"))?;
    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").await.map_err(db("ask for one snapshot"))?;
    let mut tx = conn.begin().await.map_err(db("begin the snapshot"))?;
    let rows = read_rows(&mut *tx, file, products).await?;
    let in_db = orders_present_on(&mut tx, orders, waiting).await?;
    tx.rollback().await.map_err(db("end the snapshot"))?;
    Ok((rows, in_db))
}

/// Which of these order ids are rows already, on a connection of the pool.
pub async fn orders_present(
    pool: &MySqlPool,
    orders: &OrdersSection,
    order_ids: &[&str],
) -> Result<HashSet<String>, AdapterError> {
    let mut conn = pool.acquire().await.map_err(db("take a connection"))?;
    orders_present_on(&mut conn, orders, order_ids).await
}

/// Which of these order ids are rows already (an in-flight entry whose row exists is counted
/// once, in the DB), 5,000 ids a statement.
async fn orders_present_on(
    conn: &mut MySqlConnection,
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
        let rows = query.fetch_all(&mut *conn).await.map_err(db("find in-flight orders among the rows"))?;
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
    ids: &[ProductId],
) -> Result<HashMap<ProductId, std::collections::BTreeMap<u64, i64>>, AdapterError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let (id_list, id_binds) = id_list(ids);
    let sql = format!(
        "SELECT CAST({p} AS CHAR), CAST({b} AS UNSIGNED), CAST({a} AS SIGNED) FROM {t} WHERE {p} IN ({id_list})",
        p = table.product.q(),
        b = table.bucket.q(),
        a = table.available.q(),
        t = table.table.q()
    );
    let rows: Vec<(String, u64, i64)> =
        bind_ids(sqlx::query_as(&sql), id_binds).fetch_all(pool).await.map_err(db("read the buckets"))?;
    let asked = IdsByText::new(ids);
    let mut out: HashMap<ProductId, std::collections::BTreeMap<u64, i64>> = HashMap::new();
    for (p, b, a) in rows {
        if let Some(p) = asked.get(&p) {
            out.entry(p).or_default().insert(b, a);
        }
    }
    Ok(out)
}

/// What one snapshot of a sale whose in-flight source is a table of its own holds: the rows
/// of the stock statement, the pending rows per product, and which of their order ids are
/// orders already.
pub struct Snapshot {
    pub rows: HashMap<ProductId, DbRow>,
    pub inflight: InflightRead,
    pub in_db: HashSet<String>,
}

/// Reads the pending rows, the stock and orders statement and the pending orders' rows in one
/// REPEATABLE READ transaction (one snapshot: an order written and its pending row marked
/// between two statements is seen on one side only). SELECT only; the transaction is rolled
/// back.
pub async fn read_snapshot(
    pool: &MySqlPool,
    file: &AdapterFile,
    products: Products<'_>,
) -> Result<Snapshot, AdapterError> {
    let ids = products.ids();
    let Inflight::Table { table, product_column, order_id_column, pending } = &file.inflight else {
        unreachable!("read_snapshot is for a table in-flight source")
    };
    let mut conn = pool.acquire().await.map_err(db("take a connection"))?;
    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").await.map_err(db("ask for one snapshot"))?;
    let mut tx = conn.begin().await.map_err(db("begin the snapshot"))?;
    let bound = file.sale.max_inflight();
    let inflight =
        pending_rows(&mut tx, table, product_column, order_id_column.as_ref(), pending.as_ref(), ids, bound).await?;
    let rows = read_rows(&mut *tx, file, products).await?;
    let waiting: Vec<&str> = inflight.by_product.values().flatten().filter_map(|w| w.order_id.as_deref()).collect();
    let in_db = match &file.orders {
        Some(orders) if !waiting.is_empty() => orders_present_on(&mut tx, orders, &waiting).await?,
        _ => HashSet::new(),
    };
    tx.rollback().await.map_err(db("end the snapshot"))?;
    Ok(Snapshot { rows, inflight, in_db })
}

/// The pending rows of the in-flight table for these products, one unit each.
async fn pending_rows(
    conn: &mut MySqlConnection,
    table: &Ident,
    product: &Ident,
    order_id: Option<&Ident>,
    pending: Option<&Pending>,
    ids: &[ProductId],
    bound: usize,
) -> Result<InflightRead, AdapterError> {
    let mut read = InflightRead::default();
    if ids.is_empty() {
        return Ok(read);
    }
    let (id_list, id_binds) = id_list(ids);
    let order = order_id.map_or("CAST(NULL AS CHAR)".into(), |c| format!("CAST({} AS CHAR)", c.q()));
    let (condition, statuses) = match pending {
        Some(p) => (format!(" AND {} IN ({})", p.column.q(), vec!["?"; p.values.len()].join(",")), &p.values[..]),
        None => (String::new(), &[][..]),
    };
    let from = format!("FROM {} WHERE {} IN ({id_list}){condition}", table.q(), product.q());
    let sql = format!("SELECT CAST({} AS CHAR), {order} {from} LIMIT {}", product.q(), bound + 1);
    let rows: Vec<(String, Option<String>)> = bind_statuses(bind_ids(sqlx::query_as(&sql), id_binds), statuses)
        .fetch_all(&mut *conn)
        .await
        .map_err(db("read the pending rows"))?;
    if rows.len() > bound {
        let count = format!("SELECT COUNT(*) {from}");
        let (n,): (i64,) = bind_statuses(bind_ids(sqlx::query_as(&count), id_binds), statuses)
            .fetch_one(&mut *conn)
            .await
            .map_err(db("count the pending rows"))?;
        read.beyond.push(Beyond { product: None, depth: Some(n), bound: bound as i64 });
        return Ok(read);
    }
    let asked = IdsByText::new(ids);
    for (p, order_id) in rows {
        if let Some(p) = asked.get(&p) {
            read.by_product.entry(p).or_default().push(Waiting { order_id, units: 1 });
        }
    }
    for list in read.by_product.values_mut() {
        list.sort();
    }
    Ok(read)
}
