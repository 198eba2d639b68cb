//! The `persist` consumers: read each product's stream in the `persist` group, reclaim
//! messages a crashed consumer left pending, and hand batches to [`persist_batch`].
//!
//! New messages of many products are read with one `XREADGROUP` over up to
//! [`STREAMS_PER_READ`] streams, so an idle sale of thousands of products costs a few
//! commands per pass, not thousands. On Redis Cluster such a read must stay within one hash
//! slot, so the streams are grouped by slot first and the groups read [`READS_AT_ONCE`] at a
//! time.
//! Reclaiming (`XAUTOCLAIM`) is per product and runs less often.

use std::time::Duration;

use redis::streams::{StreamAutoClaimOptions, StreamReadOptions};
use redis::Value;
use sqlx::MySqlPool;

use super::persist::{persist_batch, BatchOutcome, PersistError, StreamMessage};
use futures_util::{StreamExt as _, TryStreamExt as _};
use stockguard_core::keys::{Keys, PERSIST_GROUP};
use stockguard_core::redis_link::{group_by_slot, Link};
use stockguard_core::reservation::ReservationMessage;
use stockguard_core::step::Step as _;

#[derive(Debug, Clone)]
pub struct ConsumerConfig {
    /// This consumer's name in the group (unique per engine instance and worker).
    pub name: String,
    pub batch_size: usize,
    /// A message pending this long with another consumer is taken over.
    pub claim_min_idle: Duration,
    pub payment_timeout: Duration,
}

/// Creates the `persist` group of a product's stream (reading from its start) if missing.
pub async fn ensure_group<C>(redis: &mut C, keys: &Keys, product_id: u64) -> redis::RedisResult<()>
where
    C: redis::aio::ConnectionLike + Send,
{
    let created: redis::RedisResult<()> =
        redis::Cmd::xgroup_create_mkstream(keys.orders_stream(product_id), PERSIST_GROUP, "0").query_async(redis).await;
    match created {
        Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
        other => other,
    }
}

/// True when Redis answered that the stream or its group does not exist (`NOGROUP`): a
/// Redis restarted without its data, or failed over to a replica without the group, brings
/// the stream back (with the next reservation) but not its group.
fn is_no_group(e: &redis::RedisError) -> bool {
    e.code() == Some("NOGROUP")
}

/// Runs a group command; on `NOGROUP` recreates the groups of `products` and runs it once
/// more, so the consumers keep going without an engine restart. A recreated group reads its
/// stream from the start: the stream holds only messages not yet persisted (persisted ones
/// are deleted), and persisting is idempotent.
async fn with_groups<C>(redis: &mut C, keys: &Keys, products: &[u64], cmd: &redis::Cmd) -> redis::RedisResult<Value>
where
    C: redis::aio::ConnectionLike + Send,
{
    match cmd.query_async(redis).await {
        Err(e) if is_no_group(&e) => {
            tracing::warn!(streams = products.len(), "consumer group missing (Redis lost it); recreating");
            for &p in products {
                ensure_group(redis, keys, p).await?;
            }
            cmd.query_async(redis).await
        }
        other => other,
    }
}

/// An `XREADGROUP` reply, walked in place: `(stream key, messages)`. The consumers read
/// up to a batch of 200 entries per stream each pass; without a map of owned strings per
/// entry (`StreamReadReply`) the engine spends about 1 us less CPU per order (24.3 against
/// 23.0 us, `scripts/cpu-per-order.sh`).
fn parse_read_reply(reply: Value) -> Vec<(Vec<u8>, Vec<StreamMessage>)> {
    let streams: Vec<(Value, Value)> = match reply {
        // RESP2: [[key, entries], ...]; RESP3: {key: entries}; nil when nothing is new.
        Value::Array(items) => items
            .into_iter()
            .filter_map(|s| match s {
                Value::Array(pair) => <[Value; 2]>::try_from(pair).ok().map(|[k, e]| (k, e)),
                _ => None,
            })
            .collect(),
        Value::Map(pairs) => pairs,
        _ => Vec::new(),
    };
    streams
        .into_iter()
        .filter_map(|(key, entries)| match (key, entries) {
            (Value::BulkString(key), Value::Array(entries)) => {
                Some((key, entries.iter().filter_map(parse_entry).collect()))
            }
            _ => None,
        })
        .collect()
}

fn bulk_pair<'a>(k: &'a Value, v: &'a Value) -> Option<(&'a [u8], &'a [u8])> {
    match (k, v) {
        (Value::BulkString(k), Value::BulkString(v)) => Some((k.as_slice(), v.as_slice())),
        _ => None,
    }
}

/// One `[id, [field, value, ...]]` entry; `None` (logged, left pending) when malformed.
pub(super) fn parse_entry(entry: &Value) -> Option<StreamMessage> {
    let (id, fields) = match entry {
        Value::Array(parts) => match parts.as_slice() {
            [Value::BulkString(id), fields] => (String::from_utf8_lossy(id).into_owned(), fields),
            _ => {
                tracing::error!(?entry, "malformed stream entry left pending");
                return None;
            }
        },
        _ => return None,
    };
    let body = match fields {
        Value::Array(f) => ReservationMessage::from_pairs(f.chunks_exact(2).filter_map(|kv| bulk_pair(&kv[0], &kv[1]))),
        Value::Map(f) => ReservationMessage::from_pairs(f.iter().filter_map(|(k, v)| bulk_pair(k, v))),
        // A pending entry deleted from the stream reads back as nil.
        _ => None,
    };
    match body {
        Some(body) => Some(StreamMessage { id, body }),
        None => {
            // Left pending, not acknowledged: nothing is thrown away unseen.
            tracing::error!(%id, "malformed reservation message left pending");
            None
        }
    }
}

/// Messages pending with a consumer for at least `min_idle`, now ours.
pub async fn reclaim<C>(
    redis: &mut C,
    keys: &Keys,
    product_id: u64,
    cfg: &ConsumerConfig,
) -> redis::RedisResult<Vec<StreamMessage>>
where
    C: redis::aio::ConnectionLike + Send,
{
    // `[next start id, [entry, ...], [deleted id, ...]]`: the entries are shaped as in an
    // `XREADGROUP` reply.
    let claim = redis::Cmd::xautoclaim_options(
        keys.orders_stream(product_id),
        PERSIST_GROUP,
        &cfg.name,
        cfg.claim_min_idle.as_millis() as u64,
        "0-0",
        StreamAutoClaimOptions::default().count(cfg.batch_size),
    );
    let reply = with_groups(redis, keys, &[product_id], &claim).await?;
    Ok(match reply {
        Value::Array(parts) => match parts.get(1) {
            Some(Value::Array(entries)) => entries.iter().filter_map(parse_entry).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    })
}

/// New messages of one product for this consumer (not blocking).
pub async fn read_new<C>(
    redis: &mut C,
    keys: &Keys,
    product_id: u64,
    cfg: &ConsumerConfig,
) -> redis::RedisResult<Vec<StreamMessage>>
where
    C: Link,
{
    Ok(read_new_many(redis, keys, &[product_id], cfg).await?.into_iter().flat_map(|(_, m)| m).collect())
}

/// Streams read by one `XREADGROUP` at most.
pub const STREAMS_PER_READ: usize = 256;

/// New messages of many products in one command per [`STREAMS_PER_READ`] products.
pub async fn read_new_many<C>(
    redis: &mut C,
    keys: &Keys,
    products: &[u64],
    cfg: &ConsumerConfig,
) -> redis::RedisResult<Vec<(u64, Vec<StreamMessage>)>>
where
    C: Link,
{
    read_many(redis, keys, products, cfg, ">").await
}

/// Persists this consumer's own pending messages, until none is left. Persisting is
/// idempotent (a message whose order is already in the DB is just acknowledged), so running
/// this after a failure or a restart never writes twice.
pub async fn recover_own<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    products: &[u64],
    cfg: &ConsumerConfig,
) -> Result<BatchOutcome, PersistError>
where
    C: Link,
{
    let mut total = BatchOutcome::default();
    loop {
        // "0": messages already delivered to this consumer and not acknowledged (its own
        // pending list), e.g. because Redis went away between a commit and its XACK.
        let batches =
            read_many(redis, keys, products, cfg, "0").await.step("reading this consumer's own pending messages")?;
        if batches.iter().all(|(_, m)| m.is_empty()) {
            return Ok(total);
        }
        for (p, batch) in batches {
            if !batch.is_empty() {
                add(&mut total, persist_batch(pool, redis, keys, p, &batch, cfg.payment_timeout).await?);
            }
        }
    }
}

async fn read_many<C>(
    redis: &mut C,
    keys: &Keys,
    products: &[u64],
    cfg: &ConsumerConfig,
    from: &str,
) -> redis::RedisResult<Vec<(u64, Vec<StreamMessage>)>>
where
    C: Link,
{
    let chunks: Vec<Vec<u64>> = group_by_slot(&*redis, products)
        .iter()
        .flat_map(|group| group.chunks(STREAMS_PER_READ).map(<[u64]>::to_vec))
        .collect();
    let reads = chunks.into_iter().map(|chunk| {
        let mut redis = redis.clone();
        async move {
            let streams: Vec<String> = chunk.iter().map(|&p| keys.orders_stream(p)).collect();
            let ids = vec![from; chunk.len()];
            let opts = StreamReadOptions::default().group(PERSIST_GROUP, &cfg.name).count(cfg.batch_size);
            let read = redis::Cmd::xread_options(&streams, &ids, &opts);
            let reply = with_groups(&mut redis, keys, &chunk, &read).await?;
            let mut out = Vec::new();
            for (key, messages) in parse_read_reply(reply) {
                if let Some(i) = streams.iter().position(|s| s.as_bytes() == key.as_slice()) {
                    out.push((chunk[i], messages));
                }
            }
            Ok::<_, redis::RedisError>(out)
        }
    });
    let read: Vec<_> = futures_util::stream::iter(reads).buffered(READS_AT_ONCE).try_collect().await?;
    Ok(read.into_iter().flatten().collect())
}

/// Reads in flight at once on a cluster (one per slot group); a single server gets one read
/// per [`STREAMS_PER_READ`] products.
pub const READS_AT_ONCE: usize = 32;

fn add(total: &mut BatchOutcome, o: BatchOutcome) {
    total.persisted.extend(o.persisted);
    total.duplicates.extend(o.duplicates);
    total.failed.extend(o.failed);
    total.clashed.extend(o.clashed);
    total.fell_back |= o.fell_back;
}

/// One pass: optionally reclaim idle messages of every product, then read and persist new
/// ones. Returns what it did.
pub async fn run_pass<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    products: &[u64],
    cfg: &ConsumerConfig,
    reclaim_idle: bool,
) -> Result<BatchOutcome, PersistError>
where
    C: Link,
{
    let mut total = BatchOutcome::default();
    if reclaim_idle {
        for &p in products {
            let batch = reclaim(redis, keys, p, cfg).await.step("reclaiming messages idle past their time")?;
            add(&mut total, persist_batch(pool, redis, keys, p, &batch, cfg.payment_timeout).await?);
        }
    }
    for (p, batch) in read_new_many(redis, keys, products, cfg).await.step("reading new messages")? {
        add(&mut total, persist_batch(pool, redis, keys, p, &batch, cfg.payment_timeout).await?);
    }
    Ok(total)
}

/// One pass that also reclaims: what tests and benchmarks call.
pub async fn run_once<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    products: &[u64],
    cfg: &ConsumerConfig,
) -> Result<BatchOutcome, PersistError>
where
    C: Link,
{
    run_pass(pool, redis, keys, products, cfg, true).await
}
