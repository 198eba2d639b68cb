//! The reservation backlog of a sale: messages on the products' streams not yet persisted
//! (undelivered, or delivered and not acknowledged) and the units still in flight. Part of
//! the contract (the stream and its `persist` group, [`crate::keys`]), read by the console's
//! health strip and by the engine's `/metrics`.
//!
//! A product whose stream is missing (a Redis that lost its data, a product never sold) must
//! not blind the reading of the others: a Redis pipeline fails whole on one error, so the
//! streams are first asked whether they exist, and only those that do are asked for their
//! groups. A stream that lost its `persist` group counts every entry as backlog (the
//! consumers recreate the group and read it from the start).

use redis::Value;

use crate::keys::{Keys, PERSIST_GROUP};
use crate::redis_link::{per_product, Link};

/// The backlog summed over the products asked about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Messages not yet persisted: the `persist` group's pending entries plus its lag (or
    /// the whole stream when the group is missing).
    pub messages: i64,
    /// Units reserved in Redis and not yet in the DB.
    pub inflight_units: i64,
    /// Products whose stream does not exist.
    pub missing_streams: Vec<u64>,
}

/// Reads the backlog of `products` in at most three round trips (one more per stream that
/// vanished between the first two).
pub async fn sample<C: Link>(redis: &mut C, keys: &Keys, products: &[u64]) -> redis::RedisResult<Backlog> {
    let mut backlog = Backlog::default();
    if products.is_empty() {
        return Ok(backlog);
    }
    let replies = per_product(&*redis, products, |pipe, p| {
        pipe.exists(keys.orders_stream(p)).hvals(keys.inflight(p));
    })
    .await?;
    let mut present = Vec::with_capacity(products.len());
    for (&p, pair) in products.iter().zip(&replies) {
        let exists: bool = redis::from_redis_value(&pair[0])?;
        let qtys: Vec<i64> = redis::from_redis_value(&pair[1])?;
        backlog.inflight_units += qtys.iter().sum::<i64>();
        if exists {
            present.push(p);
        } else {
            backlog.missing_streams.push(p);
        }
    }
    for (p, messages) in stream_backlogs(redis, keys, &present).await? {
        match messages {
            Some(n) => backlog.messages += n,
            None => backlog.missing_streams.push(p),
        }
    }
    backlog.missing_streams.sort_unstable();
    Ok(backlog)
}

/// Each stream's backlog; `None` for one that vanished since it was seen.
async fn stream_backlogs<C: Link>(
    redis: &mut C,
    keys: &Keys,
    products: &[u64],
) -> redis::RedisResult<Vec<(u64, Option<i64>)>> {
    // Per stream: its groups, and its length (the backlog when the group is missing).
    let ask = |pipe: &mut redis::Pipeline, p: u64| {
        pipe.cmd("XINFO").arg("GROUPS").arg(keys.orders_stream(p)).xlen(keys.orders_stream(p));
    };
    let replies = match per_product(&*redis, products, ask).await {
        Ok(replies) => replies,
        // A stream deleted since it was seen fails the whole pipeline: ask one at a time.
        Err(e) if e.kind() == redis::ErrorKind::ResponseError => {
            let mut out = Vec::with_capacity(products.len());
            for &p in products {
                let mut pipe = redis::pipe();
                ask(&mut pipe, p);
                let one: redis::RedisResult<Vec<Value>> = pipe.query_async(redis).await;
                match one {
                    Ok(pair) => out.push((p, Some(group_backlog(&pair[0], &pair[1])?))),
                    Err(e) if e.kind() == redis::ErrorKind::ResponseError => out.push((p, None)),
                    Err(e) => return Err(e),
                }
            }
            return Ok(out);
        }
        Err(e) => return Err(e),
    };
    products.iter().zip(&replies).map(|(&p, pair)| Ok((p, Some(group_backlog(&pair[0], &pair[1])?)))).collect()
}

/// The `persist` group's pending entries plus its lag, from an `XINFO GROUPS` reply; the
/// stream's length when the group is missing.
fn group_backlog(groups: &Value, xlen: &Value) -> redis::RedisResult<i64> {
    let groups: Vec<std::collections::HashMap<String, Value>> = redis::from_redis_value(groups)?;
    let persist = groups.iter().find(|g| {
        g.get("name").and_then(|v| redis::from_redis_value::<String>(v).ok()).as_deref() == Some(PERSIST_GROUP)
    });
    Ok(match persist {
        Some(g) => {
            let num = |k: &str| g.get(k).and_then(|v| redis::from_redis_value::<i64>(v).ok()).unwrap_or(0);
            num("pending") + num("lag")
        }
        None => redis::from_redis_value(xlen)?,
    })
}
