//! `stockguard adapter check`: every table, column, key and queue the file names exists and
//! answers, with the orders counted per status (so that a status label that lies, say every
//! real sale stored as "invalid", is seen) and a sample of each key template. Reads only.
//! What is not there is typed ([`Missing`]): the CLI prints its line, the attach form says it
//! in the field that names it.

use std::collections::BTreeSet;

use serde::Serialize;
use sqlx::MySqlPool;

use super::db;
use super::file::{AdapterFile, Inflight, RedisForm};
use super::ident::Ident;
use super::inflight;
use super::missing::Missing;
use super::rabbit;
use super::AdapterError;
use crate::redis_link::Link;

/// What the check found. `problems` is empty when everything named exists.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    pub sale: String,
    pub products: usize,
    /// Orders per status value as stored, with what the file makes of it.
    pub statuses: Vec<StatusCount>,
    /// A sampled key of each template, with its value.
    pub keys: Vec<KeySample>,
    /// What waits in the in-flight source now.
    pub in_flight: Option<i64>,
    /// What is not there, typed.
    pub missing: Vec<Missing>,
    /// Each of `missing`, said in English.
    pub problems: Vec<String>,
    /// What the file allows but leaves the console partly blind to (the check still passes).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StatusCount {
    pub status: String,
    pub orders: i64,
    /// `live`, `released`, `reserving` (and live), or `unlisted` (the file names it nowhere).
    pub meaning: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KeySample {
    pub template: String,
    pub key: String,
    /// The key's value as Redis prints it; `None` when the key does not exist.
    pub value: Option<String>,
}

/// The columns of each table the file names, `table -> [column]`.
fn named_columns(file: &AdapterFile) -> Vec<(&Ident, Vec<&Ident>)> {
    let mut out = Vec::new();
    if let Some(s) = &file.stock {
        let mut cols = vec![&s.product, &s.remaining];
        cols.extend(s.reserved.iter().chain(s.name.iter()));
        if let super::file::Initial::Column(c) = &s.initial {
            cols.push(c);
        }
        out.push((&s.table, cols));
    }
    if let Some(o) = &file.orders {
        let mut cols = vec![&o.product];
        cols.extend(o.quantity_column.iter().chain(o.order_id.iter()));
        match &o.join {
            Some(j) => {
                cols.push(&j.on);
                let mut parent = vec![&j.key, &o.status];
                parent.extend(o.created.iter().chain(o.user.iter()));
                out.push((&o.table, cols));
                out.push((&j.table, parent));
            }
            None => {
                cols.push(&o.status);
                cols.extend(o.created.iter().chain(o.user.iter()));
                out.push((&o.table, cols));
            }
        }
    }
    if let Some(t) = file.redis.as_ref().and_then(|r| r.buckets.as_ref()).and_then(|b| b.db_table()) {
        out.push((t.table, vec![t.product, t.bucket, t.available]));
    }
    if let Inflight::Table { table, product_column, order_id_column, pending } = &file.inflight {
        let mut cols = vec![product_column];
        cols.extend(order_id_column.iter().chain(pending.iter().map(|p| &p.column)));
        out.push((table, cols));
    }
    out
}

async fn table_problems(pool: &MySqlPool, file: &AdapterFile) -> Result<Vec<Missing>, AdapterError> {
    let mut problems = Vec::new();
    for (table, columns) in named_columns(file) {
        let found: Vec<(String,)> = sqlx::query_as(
            "SELECT CAST(COLUMN_NAME AS CHAR) FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
        )
        .bind(table.as_str())
        .fetch_all(pool)
        .await
        .map_err(|source| AdapterError::Db { step: "read the schema", source })?;
        if found.is_empty() {
            problems.push(Missing::Table { table: table.to_string() });
            continue;
        }
        let have: BTreeSet<String> = found.into_iter().map(|(c,)| c.to_lowercase()).collect();
        for c in columns {
            if !have.contains(&c.as_str().to_lowercase()) {
                problems.push(Missing::Column { table: table.to_string(), column: c.to_string() });
            }
        }
    }
    Ok(problems)
}

/// Checks everything the file names.
pub async fn check<C: Link>(
    file: &AdapterFile,
    sale_db: Option<&MySqlPool>,
    redis: Option<&C>,
) -> Result<CheckReport, AdapterError> {
    let mut report = CheckReport { sale: file.sale.name.clone(), ..Default::default() };
    look(file, sale_db, redis, &mut report).await?;
    // What `adapter init` left for a person: the file reads, but wrong, until it is settled.
    report.missing.extend(file.undecided.iter().map(|u| Missing::Undecided { line: u.line, what: u.what.clone() }));
    // Each problem names the line of the file to fix (an UNDECIDED one says its own).
    report.problems = report
        .missing
        .iter()
        .map(|m| match (m, file.lines.of_missing(m)) {
            (Missing::Undecided { .. }, _) | (_, None) => m.to_string(),
            (_, Some(line)) => format!("line {line}: {m}"),
        })
        .collect();
    Ok(report)
}

async fn look<C: Link>(
    file: &AdapterFile,
    sale_db: Option<&MySqlPool>,
    redis: Option<&C>,
    report: &mut CheckReport,
) -> Result<(), AdapterError> {
    if let Some(pool) = sale_db {
        report.missing = table_problems(pool, file).await?;
    } else if file.stock.is_some() || file.orders.is_some() {
        report.missing.push(Missing::NoSaleDb);
    }
    if !report.missing.is_empty() {
        return Ok(());
    }
    let ids = db::product_ids(sale_db, file).await?;
    report.products = ids.len();
    if ids.is_empty() {
        report.missing.push(Missing::NoProducts);
    }
    if let (Some(pool), Some(orders)) = (sale_db, &file.orders) {
        for (status, n) in db::counts_per_status(pool, orders).await? {
            let is = |list: &[super::file::StatusValue]| list.iter().any(|v| v.to_string().trim_matches('"') == status);
            let meaning = if is(&orders.reserving) {
                "reserving"
            } else if is(&orders.live) {
                "live"
            } else if is(&orders.released) {
                "released"
            } else {
                "unlisted"
            };
            report.statuses.push(StatusCount { status, orders: n, meaning });
        }
    }
    if let Some(section) = &file.redis {
        let Some(redis) = redis else {
            report.missing.push(Missing::NoSaleRedis);
            return Ok(());
        };
        let sample = ids.iter().take(3).cloned().collect::<Vec<_>>();
        let mut conn = redis.clone();
        let templates: Vec<(String, Vec<String>)> = match section.form() {
            RedisForm::Counter(t) => vec![(t.as_str().into(), sample.iter().map(|id| t.key(id)).collect())],
            RedisForm::Hash(h) => vec![(h.key.as_str().into(), sample.iter().map(|id| h.key.key(id)).collect())],
            RedisForm::Buckets(b) => vec![
                (b.count.as_str().into(), sample.iter().map(|id| b.count.key(id)).collect()),
                (b.key.as_str().into(), sample.iter().map(|id| b.key.bucket_key(id, 0)).collect()),
            ],
        };
        for (template, keys) in templates {
            let mut found = false;
            for key in keys {
                let kind: String = redis::cmd("TYPE")
                    .arg(&key)
                    .query_async(&mut conn)
                    .await
                    .map_err(|source| AdapterError::Redis { step: "sample a key", source })?;
                let value = match kind.as_str() {
                    "none" => None,
                    "string" => {
                        redis::cmd("GET").arg(&key).query_async::<Option<String>>(&mut conn).await.ok().flatten()
                    }
                    "hash" => redis::cmd("HGETALL")
                        .arg(&key)
                        .query_async::<Vec<(String, String)>>(&mut conn)
                        .await
                        .ok()
                        .map(|kv| kv.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")),
                    other => Some(format!("({other})")),
                };
                found |= value.is_some();
                report.keys.push(KeySample { template: template.clone(), key, value });
            }
            if !found && !sample.is_empty() {
                report.missing.push(Missing::KeyTemplate { template, products: sample.clone() });
            }
        }
    }
    match &file.inflight {
        Inflight::None => report.in_flight = Some(0),
        Inflight::RedisStream { stream, .. } if !stream.per_product() && redis.is_some() => {
            let mut conn = redis.expect("checked").clone();
            let exists: bool = redis::cmd("EXISTS")
                .arg(stream.as_str())
                .query_async(&mut conn)
                .await
                .map_err(|source| AdapterError::Redis { step: "find the stream", source })?;
            if !exists {
                report.missing.push(Missing::Stream { stream: stream.as_str().to_string() });
            } else if let Some(wrong) = stream_fields(&mut conn, file).await? {
                report.missing.push(wrong);
            } else {
                match inflight::read(file, redis, &ids).await {
                    Ok(read) => report.in_flight = Some(read.depth()),
                    Err(AdapterError::Missing(m)) => report.missing.push(m),
                    Err(e) => return Err(e),
                }
            }
        }
        Inflight::RedisStream { .. } => match inflight::read(file, redis, &ids).await {
            Ok(read) => report.in_flight = Some(read.depth()),
            Err(AdapterError::Missing(m)) => report.missing.push(m),
            Err(e) => return Err(e),
        },
        Inflight::Bullmq { queue, prefix, .. } => match redis {
            Some(r) if !inflight::bullmq_exists(r, prefix, queue).await? => {
                report.missing.push(Missing::BullmqQueue { prefix: prefix.clone(), queue: queue.clone() })
            }
            _ => report.in_flight = Some(inflight::read(file, redis, &ids).await?.depth()),
        },
        Inflight::Table { .. } => {
            if let Some(pool) = sale_db {
                report.in_flight =
                    Some(db::read_snapshot(pool, file, db::Products::Only(&ids)).await?.inflight.depth());
            }
        }
        Inflight::Rabbitmq { url, queue, management_url, .. } => {
            match rabbit::look(url, queue, management_url.as_deref()).await {
                Ok(look) => {
                    let held = match look.held {
                        rabbit::HeldFigure::Count(n) => n,
                        _ => 0,
                    };
                    report.in_flight = Some(look.ready + held);
                    if management_url.is_none() {
                        report.warnings.push(format!(
                            "[inflight] names no management_url: the messages the queue's consumers hold \
                             unacknowledged ({} consumer(s) now) cannot be seen, so no drift on this sale is a \
                             verdict and no repair adds units; name the RabbitMQ management API \
                             (management_url = \"http://user:pass@host:15672\")",
                            look.consumers
                        ));
                    }
                }
                Err(AdapterError::Missing(m)) => report.missing.push(m),
                Err(AdapterError::Amqp { step, source }) => report.missing.push(Missing::RabbitUnreachable {
                    url: crate::profile::redact(url),
                    detail: format!("cannot {step}: {source}"),
                }),
                Err(AdapterError::Management { url, detail }) => {
                    report.missing.push(Missing::RabbitUnreachable { url, detail })
                }
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// The shared stream's latest entry against the fields the file names: the first one it does
/// not carry, exactly as spelled (`None` when it carries them, or holds no entry to look at).
async fn stream_fields<C: Link>(conn: &mut C, file: &AdapterFile) -> Result<Option<Missing>, AdapterError> {
    let Inflight::RedisStream { stream, product_field, order_id_field, .. } = &file.inflight else {
        return Ok(None);
    };
    let latest: Vec<(String, Vec<(String, String)>)> = redis::cmd("XREVRANGE")
        .arg(stream.as_str())
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query_async(conn)
        .await
        .map_err(|source| AdapterError::Redis { step: "read the stream's latest entry", source })?;
    let Some((_, fields)) = latest.into_iter().next() else {
        return Ok(None);
    };
    let found: Vec<String> = fields.into_iter().map(|(name, _)| name).collect();
    let named =
        std::iter::once(("product_field", product_field)).chain(order_id_field.iter().map(|f| ("order_id_field", f)));
    for (key, field) in named {
        if !found.iter().any(|n| n == field) {
            return Ok(Some(Missing::StreamField {
                stream: stream.as_str().to_string(),
                key: key.to_string(),
                field: field.clone(),
                found,
            }));
        }
    }
    Ok(None)
}
