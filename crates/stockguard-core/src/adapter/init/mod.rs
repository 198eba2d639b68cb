//! `stockguard adapter init`: a proposed adapter file for a sale, read from its schema (column
//! names and their comments, such as `库存`), its orders counted per status, and a `SCAN`
//! sample of its Redis. Reads only. What it could not decide is marked `UNDECIDED` in the file
//! and listed beside it, for a person to settle before `adapter check`.
//!
//! - [`schema`]: which table is stock and which orders, from names and comments (pure);
//! - [`keys`]: which key template holds the stock, from the sample (pure);
//! - [`render`]: the proposal as an adapter file, commented;
//! - [`form`]: the proposal as a form a person edits field by field (the desktop's "Attach a
//!   sale"); [`to_file`]: the adapter file it stands for, or the fields that cannot be one;
//! - [`fields`]: each field of such a form checked against the sale (`adapter check`), what
//!   is missing said in the field that names it.

pub mod fields;
pub mod form;
pub mod keys;
mod render;
mod rule_fields;
pub mod schema;
mod to_file;

use std::collections::BTreeSet;

use redis::Value;
use serde::Serialize;
use sqlx::MySqlPool;

use super::db::db;
use super::file::{OrdersSection, StatusValue};
use super::ident::Ident;
use super::{AdapterError, AdapterFile};
use crate::redis_link::{per_item, slot, RedisLink};

/// How far `init` looks.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The sale's name in the state database; the database's name when not given.
    pub name: Option<String>,
    /// `SCAN MATCH` pattern for the sample (`*`: every key).
    pub keys: String,
    /// At most this many keys are sampled.
    pub scan_limit: usize,
}

/// A proposed adapter file and what it could not decide.
#[derive(Debug, Clone, Serialize)]
pub struct Proposal {
    /// The adapter file, commented.
    pub text: String,
    /// What a person must settle (also marked `UNDECIDED` in the text).
    pub undecided: Vec<String>,
    /// Orders per status value as stored.
    pub statuses: Vec<(String, i64)>,
    pub keys_sampled: usize,
    /// The proposal parses as an adapter file as it stands.
    pub parses: bool,
}

/// What the stream of accepted orders looks like, from its group and its newest entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamGuess {
    pub stream: String,
    pub group: Option<String>,
    pub product_field: Option<String>,
    pub order_id_field: Option<String>,
}

const PRODUCT_WORDS: &[&str] = &["voucher", "goods", "product", "item", "sku", "ticket"];
const ORDER_ID_FIELDS: &[&str] = &["id", "orderId", "order_id", "orderNo", "order_no"];

/// What `init` read of a sale: its guesses, before they are written as a file
/// ([`propose`]) or shown as a form ([`form::ProposalForm::from_guesses`]).
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The sale's name: the one given, else the database's.
    pub name: String,
    pub schema: schema::SchemaGuess,
    /// Orders per status value as stored.
    pub statuses: Vec<(String, i64)>,
    pub keys: keys::KeysGuess,
    pub stream: Option<StreamGuess>,
    pub keys_sampled: usize,
    /// What a person must settle.
    pub undecided: Vec<String>,
}

/// Reads the sale's schema, its orders per status and a sample of its keys. Reads only.
pub async fn gather(
    sale_db: Option<&MySqlPool>,
    redis: Option<&RedisLink>,
    opts: &InitOptions,
) -> Result<Gathered, AdapterError> {
    let mut undecided = Vec::new();
    let (mut schema, mut statuses, mut known, mut database) = (schema::SchemaGuess::default(), vec![], vec![], None);
    if let Some(pool) = sale_db {
        schema = schema::guess(&read_schema(pool).await?);
        undecided.append(&mut schema.undecided);
        if let Some(stock) = &schema.stock {
            let sql = format!(
                "SELECT CAST({p} AS UNSIGNED) FROM {t} ORDER BY {p} LIMIT 200",
                p = quoted(&stock.product)?,
                t = quoted(&stock.table)?
            );
            let ids: Vec<(u64,)> = sqlx::query_as(&sql).fetch_all(pool).await.map_err(db("list the products"))?;
            known = ids.into_iter().map(|(id,)| id).collect();
        }
        if let Some(o) = &schema.orders {
            statuses = super::db::counts_per_status(pool, &orders_section(o)?).await?;
        }
        database = sqlx::query_scalar::<_, Option<String>>("SELECT DATABASE()")
            .fetch_one(pool)
            .await
            .map_err(db("name the database"))?;
    }
    let (mut keys, mut stream, mut keys_sampled) = (keys::KeysGuess::default(), None, 0);
    if let Some(redis) = redis {
        let sample = sample_keys(redis, opts).await?;
        keys_sampled = sample.len();
        keys = keys::guess(&sample, &known);
        undecided.append(&mut keys.undecided);
        if let Some(name) = keys.streams.first() {
            stream = Some(read_stream(redis, name, &known, &keys.ids).await?);
        }
    }
    let name = opts.name.clone().or(database).unwrap_or_else(|| "sale".into());
    Ok(Gathered { name, schema, statuses, keys, stream, keys_sampled, undecided })
}

/// Reads the sale and proposes its adapter file.
pub async fn propose(
    sale_db: Option<&MySqlPool>,
    redis: Option<&RedisLink>,
    opts: &InitOptions,
) -> Result<Proposal, AdapterError> {
    let Gathered { name, schema, statuses, keys, stream, keys_sampled, mut undecided } =
        gather(sale_db, redis, opts).await?;
    let text = render::file(
        &render::Parts { name: &name, schema: &schema, statuses: &statuses, keys: &keys, stream: stream.as_ref() },
        &mut undecided,
    );
    let parses = match AdapterFile::parse(&text, std::path::Path::new("the proposal")) {
        Ok(_) => true,
        Err(e) => {
            undecided.push(format!("as it stands the proposal is not yet an adapter file: {e}"));
            false
        }
    };
    Ok(Proposal { text, undecided, statuses, keys_sampled, parses })
}

fn quoted(name: &str) -> Result<String, AdapterError> {
    Ident::new(name).map(|i| i.q()).map_err(AdapterError::Refused)
}

fn orders_section(o: &schema::OrdersGuess) -> Result<OrdersSection, AdapterError> {
    let id = |n: &str| Ident::new(n).map_err(AdapterError::Refused);
    Ok(OrdersSection {
        table: id(&o.table)?,
        product: id(&o.product)?,
        quantity: None,
        quantity_column: None,
        status: id(&o.status)?,
        live: Vec::<StatusValue>::new(),
        released: vec![],
        reserving: vec![],
        order_id: None,
        created: None,
        user: None,
        join: match &o.join {
            Some((table, on, key)) => Some(super::file::Join { table: id(table)?, on: id(on)?, key: id(key)? }),
            None => None,
        },
    })
}

async fn read_schema(pool: &MySqlPool) -> Result<Vec<schema::Table>, AdapterError> {
    let rows: Vec<(String, String, String, i64, String)> = sqlx::query_as(
        "SELECT CAST(TABLE_NAME AS CHAR), CAST(COLUMN_NAME AS CHAR), CAST(DATA_TYPE AS CHAR), \
         CAST(COLUMN_KEY = 'PRI' AS SIGNED), CAST(COLUMN_COMMENT AS CHAR) \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION",
    )
    .fetch_all(pool)
    .await
    .map_err(db("read the schema"))?;
    let mut tables: Vec<schema::Table> = Vec::new();
    for (table, name, data_type, primary, comment) in rows {
        if tables.last().is_none_or(|t| t.name != table) {
            tables.push(schema::Table { name: table, columns: vec![] });
        }
        let column = schema::Column { name, data_type, primary: primary == 1, comment };
        tables.last_mut().expect("pushed").columns.push(column);
    }
    Ok(tables)
}

/// `SCAN`s the server (every seed node of a cluster) for up to `scan_limit` keys, then reads
/// each one's type and, for a string, its value, for a hash, its field names.
async fn sample_keys(redis: &RedisLink, opts: &InitOptions) -> Result<Vec<keys::SampledKey>, AdapterError> {
    let scan = |source| AdapterError::Redis { step: "scan the keys", source };
    let mut names = BTreeSet::new();
    match redis {
        RedisLink::Single(..) => scan_node(&mut redis.clone(), opts, &mut names).await.map_err(scan)?,
        RedisLink::Cluster(_) => {
            for info in redis.seeds() {
                let client = redis::Client::open(info).map_err(scan)?;
                let mut node = client.get_multiplexed_async_connection().await.map_err(scan)?;
                scan_node(&mut node, opts, &mut names).await.map_err(scan)?;
            }
        }
    }
    let names: Vec<String> = names.into_iter().take(opts.scan_limit).collect();
    let read = |source| AdapterError::Redis { step: "sample the keys", source };
    let kinds = per_item(
        redis,
        &names,
        |k| slot(k.as_bytes()),
        |pipe, k| {
            pipe.cmd("TYPE").arg(k);
        },
    )
    .await
    .map_err(read)?;
    let kinds: Vec<String> = kinds
        .into_iter()
        .map(|mut v| redis::from_redis_value::<String>(&v.pop().unwrap_or(Value::Nil)).unwrap_or_default())
        .collect();
    let details = per_item(
        redis,
        &names.iter().zip(&kinds).collect::<Vec<_>>(),
        |(k, _)| slot(k.as_bytes()),
        |pipe, (k, kind)| match kind.as_str() {
            "string" => {
                pipe.get(*k);
            }
            "hash" => {
                pipe.cmd("HKEYS").arg(*k);
            }
            _ => {
                pipe.cmd("EXISTS").arg(*k);
            }
        },
    )
    .await
    .map_err(read)?;
    Ok(names
        .into_iter()
        .zip(kinds)
        .zip(details)
        .map(|((key, kind), mut reply)| {
            let reply = reply.pop().unwrap_or(Value::Nil);
            let value = (kind == "string").then(|| redis::from_redis_value::<String>(&reply).ok()).flatten();
            let fields = if kind == "hash" { redis::from_redis_value(&reply).unwrap_or_default() } else { vec![] };
            keys::SampledKey { key, kind, value, fields }
        })
        .collect())
}

/// `SCAN`s one server until it is done or `scan_limit` keys are known.
async fn scan_node<C: redis::aio::ConnectionLike>(
    conn: &mut C,
    opts: &InitOptions,
    names: &mut BTreeSet<String>,
) -> redis::RedisResult<()> {
    let mut cursor = 0u64;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&opts.keys)
            .arg("COUNT")
            .arg(1000)
            .query_async(conn)
            .await?;
        names.extend(batch);
        cursor = next;
        if cursor == 0 || names.len() >= opts.scan_limit {
            return Ok(());
        }
    }
}

/// The stream's first consumer group and, from its newest entry, which field names the
/// product (a value among the products, a name that says so) and which the order.
async fn read_stream(
    redis: &RedisLink,
    stream: &str,
    known: &[u64],
    from_keys: &BTreeSet<u64>,
) -> Result<StreamGuess, AdapterError> {
    let err = |source| AdapterError::Redis { step: "read the stream", source };
    let mut conn = redis.clone();
    let groups: Vec<std::collections::HashMap<String, Value>> =
        redis::cmd("XINFO").arg("GROUPS").arg(stream).query_async(&mut conn).await.map_err(err)?;
    let group = groups.first().and_then(|g| g.get("name")).and_then(|v| redis::from_redis_value::<String>(v).ok());
    let newest: Vec<(String, Vec<(String, String)>)> = redis::cmd("XREVRANGE")
        .arg(stream)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query_async(&mut conn)
        .await
        .map_err(err)?;
    let fields = newest.into_iter().next().map(|(_, f)| f).unwrap_or_default();
    let is_product = |v: &str| v.parse::<u64>().is_ok_and(|id| known.contains(&id) || from_keys.contains(&id));
    let named = |f: &str| PRODUCT_WORDS.iter().any(|w| f.to_lowercase().contains(w));
    let product_field = fields
        .iter()
        .find(|(f, v)| named(f) && is_product(v))
        .or_else(|| fields.iter().find(|(f, _)| named(f)))
        .map(|(f, _)| f.clone());
    let order_id_field = ORDER_ID_FIELDS.iter().find(|n| fields.iter().any(|(f, _)| f == *n)).map(|n| n.to_string());
    Ok(StreamGuess { stream: stream.to_string(), group, product_field, order_id_field })
}
