//! The Redis side of an adapter reading: each product's stock as the sale keeps it (a string
//! counter, a hash of total and sold, or buckets), read in pipelines (one per hash slot on a
//! cluster). Reads only.

use std::collections::HashMap;

use redis::Value;

use super::file::{Negative, RedisForm, RedisSection};
use crate::product_id::ProductId;
use crate::redis_link::{per_item, slot, Link};

/// One product's stock in Redis, as read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RedisStock {
    /// Units left as Redis says (a clamped counter reads 0); `None` when a key is missing.
    pub units: Option<i64>,
    /// What a negative counter went below zero by (rejected tries, not drift).
    pub excess: i64,
    /// Each bucket's units, for a bucket sale (`None`: that bucket's key is missing).
    pub buckets: Vec<Option<i64>>,
    /// A hash sale's total and sold.
    pub total: Option<i64>,
    pub sold: Option<i64>,
    /// A key (or hash field) of the product that holds what is not a whole number, and what
    /// it holds: the product reads `KEY_UNREADABLE`, the others read on.
    pub unreadable: Option<Unreadable>,
}

/// A stock key that holds what is not a whole number.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Unreadable {
    /// The key (and `.field` for a hash field).
    pub key: String,
    /// What it holds, as text (at most 64 characters).
    pub value: String,
}

/// One GET or HMGET, keyed for its slot.
struct Read {
    key: String,
    fields: Vec<String>,
}

async fn read_keys<C: Link>(redis: &C, reads: &[Read]) -> redis::RedisResult<Vec<Value>> {
    let replies = per_item(
        redis,
        reads,
        |r| slot(r.key.as_bytes()),
        |pipe, r| {
            if r.fields.is_empty() {
                pipe.get(&r.key);
            } else {
                pipe.cmd("HMGET").arg(&r.key).arg(&r.fields);
            }
        },
    )
    .await?;
    Ok(replies.into_iter().map(|mut v| v.pop().unwrap_or(Value::Nil)).collect())
}

fn int(v: &Value) -> redis::RedisResult<Option<i64>> {
    redis::from_redis_value(v)
}

/// A counter's value: `Ok(None)` when the key is missing, `Err` with what it holds when that is
/// not a stock count, a whole number within [`super::MAX_UNITS`] (one product's problem, not
/// the reading's).
fn counter(v: &Value) -> Result<Option<i64>, String> {
    match int(v) {
        Ok(Some(n)) if n.unsigned_abs() > super::MAX_UNITS as u64 => Err(n.to_string()),
        Ok(units) => Ok(units),
        Err(_) => {
            let text: Option<String> = redis::from_redis_value(v).ok();
            let mut text = text.unwrap_or_else(|| format!("{v:?}"));
            if text.chars().count() > 64 {
                text = text.chars().take(63).chain(['…']).collect();
            }
            Err(text)
        }
    }
}

/// Reads every product's stock.
pub async fn read_stock<C: Link>(
    redis: &C,
    section: &RedisSection,
    ids: &[ProductId],
) -> redis::RedisResult<HashMap<ProductId, RedisStock>> {
    let clamp = section.negative == Some(Negative::Clamp);
    let mut out = HashMap::with_capacity(ids.len());
    match section.form() {
        RedisForm::Counter(t) => {
            let reads: Vec<Read> = ids.iter().map(|id| Read { key: t.key(id), fields: Vec::new() }).collect();
            for ((id, v), read) in ids.iter().zip(read_keys(redis, &reads).await?).zip(&reads) {
                let id = id.clone();
                let raw = match counter(&v) {
                    Ok(raw) => raw,
                    Err(value) => {
                        let unreadable = Some(Unreadable { key: read.key.clone(), value });
                        out.insert(id, RedisStock { unreadable, ..Default::default() });
                        continue;
                    }
                };
                let (units, excess) = match raw {
                    Some(r) if r < 0 && clamp => (Some(0), -r),
                    other => (other, 0),
                };
                out.insert(id, RedisStock { units, excess, ..Default::default() });
            }
        }
        RedisForm::Hash(h) => {
            let fields = vec![h.total.clone(), h.sold.clone()];
            let reads: Vec<Read> = ids.iter().map(|id| Read { key: h.key.key(id), fields: fields.clone() }).collect();
            for ((id, v), read) in ids.iter().zip(read_keys(redis, &reads).await?).zip(&reads) {
                let id = id.clone();
                let fields: Vec<Value> = redis::from_redis_value(&v)?;
                let mut pair = [None, None];
                let mut unreadable = None;
                for (n, field) in fields.iter().take(2).enumerate() {
                    match counter(field) {
                        Ok(units) => pair[n] = units,
                        Err(value) => {
                            unreadable
                                .get_or_insert(Unreadable { key: format!("{}.{}", read.key, read.fields[n]), value });
                        }
                    }
                }
                if unreadable.is_some() {
                    out.insert(id, RedisStock { unreadable, ..Default::default() });
                    continue;
                }
                let [total, sold] = pair;
                let units = total.map(|t| t - sold.unwrap_or(0));
                out.insert(id, RedisStock { units, total, sold, ..Default::default() });
            }
        }
        RedisForm::Buckets(b) => {
            let counts: Vec<Read> = ids.iter().map(|id| Read { key: b.count.key(id), fields: Vec::new() }).collect();
            let counts = read_keys(redis, &counts).await?;
            let mut reads = Vec::new();
            let mut owners = Vec::new();
            for (id, v) in ids.iter().zip(&counts) {
                let n = int(v)?.unwrap_or(0).max(0) as u64;
                for bucket in 0..n {
                    reads.push(Read { key: b.key.bucket_key(id, bucket), fields: Vec::new() });
                    owners.push(id.clone());
                }
                out.insert(id.clone(), RedisStock::default());
            }
            for ((id, v), read) in owners.into_iter().zip(read_keys(redis, &reads).await?).zip(&reads) {
                let stock = out.get_mut(&id).expect("inserted above");
                match counter(&v) {
                    Ok(units) => stock.buckets.push(units),
                    Err(value) => {
                        stock.buckets.push(None);
                        stock.unreadable.get_or_insert(Unreadable { key: read.key.clone(), value });
                    }
                }
            }
            for stock in out.values_mut() {
                let complete = !stock.buckets.is_empty() && stock.buckets.iter().all(Option::is_some);
                stock.units = complete.then(|| stock.buckets.iter().flatten().sum());
            }
        }
    }
    Ok(out)
}
