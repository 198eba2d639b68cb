//! The Redis side of an adapter reading: each product's stock as the sale keeps it (a string
//! counter, a hash of total and sold, or buckets), read in pipelines (one per hash slot on a
//! cluster). Reads only.

use std::collections::HashMap;

use redis::Value;

use super::file::{Negative, RedisForm, RedisSection};
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

/// Reads every product's stock.
pub async fn read_stock<C: Link>(
    redis: &C,
    section: &RedisSection,
    ids: &[u64],
) -> redis::RedisResult<HashMap<u64, RedisStock>> {
    let clamp = section.negative == Some(Negative::Clamp);
    let mut out = HashMap::with_capacity(ids.len());
    match section.form() {
        RedisForm::Counter(t) => {
            let reads: Vec<Read> = ids.iter().map(|&id| Read { key: t.key(id), fields: Vec::new() }).collect();
            for (&id, v) in ids.iter().zip(read_keys(redis, &reads).await?) {
                let raw = int(&v)?;
                let (units, excess) = match raw {
                    Some(r) if r < 0 && clamp => (Some(0), -r),
                    other => (other, 0),
                };
                out.insert(id, RedisStock { units, excess, ..Default::default() });
            }
        }
        RedisForm::Hash(h) => {
            let fields = vec![h.total.clone(), h.sold.clone()];
            let reads: Vec<Read> = ids.iter().map(|&id| Read { key: h.key.key(id), fields: fields.clone() }).collect();
            for (&id, v) in ids.iter().zip(read_keys(redis, &reads).await?) {
                let pair: Vec<Option<i64>> = redis::from_redis_value(&v)?;
                let (total, sold) = (pair.first().copied().flatten(), pair.get(1).copied().flatten());
                let units = total.map(|t| t - sold.unwrap_or(0));
                out.insert(id, RedisStock { units, total, sold, ..Default::default() });
            }
        }
        RedisForm::Buckets(b) => {
            let counts: Vec<Read> = ids.iter().map(|&id| Read { key: b.count.key(id), fields: Vec::new() }).collect();
            let counts = read_keys(redis, &counts).await?;
            let mut reads = Vec::new();
            let mut owners = Vec::new();
            for (&id, v) in ids.iter().zip(&counts) {
                let n = int(v)?.unwrap_or(0).max(0) as u64;
                for bucket in 0..n {
                    reads.push(Read { key: b.key.bucket_key(id, bucket), fields: Vec::new() });
                    owners.push(id);
                }
                out.insert(id, RedisStock::default());
            }
            for (id, v) in owners.into_iter().zip(read_keys(redis, &reads).await?) {
                let units = int(&v)?;
                out.get_mut(&id).expect("inserted above").buckets.push(units);
            }
            for stock in out.values_mut() {
                let complete = !stock.buckets.is_empty() && stock.buckets.iter().all(Option::is_some);
                stock.units = complete.then(|| stock.buckets.iter().flatten().sum());
            }
        }
    }
    Ok(out)
}
