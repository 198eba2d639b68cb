//! The `persist` consumers: read each product's stream in the `persist` group, reclaim
//! messages a crashed consumer left pending, and hand batches to [`persist_batch`].
//!
//! Each product's stream is read with its own command, so that on Redis Cluster every
//! command stays on the product's slot.

use std::time::Duration;

use redis::streams::{StreamAutoClaimOptions, StreamId, StreamReadOptions, StreamReadReply};
use sqlx::MySqlPool;

use super::persist::{persist_batch, BatchOutcome, PersistError, StreamMessage};
use crate::keys::{Keys, PERSIST_GROUP};
use crate::reservation::ReservationMessage;

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
    let created: redis::RedisResult<()> = redis::Cmd::xgroup_create_mkstream(keys.orders_stream(product_id), PERSIST_GROUP, "0")
        .query_async(redis)
        .await;
    match created {
        Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
        other => other,
    }
}

fn parse(entries: Vec<StreamId>) -> Vec<StreamMessage> {
    entries
        .into_iter()
        .filter_map(|e| match ReservationMessage::from_fields(&e.map) {
            Some(body) => Some(StreamMessage { id: e.id, body }),
            None => {
                // Left pending, not acknowledged: nothing is thrown away unseen.
                tracing::error!(id = %e.id, "malformed reservation message left pending");
                None
            }
        })
        .collect()
}

/// Messages pending with a consumer for at least `min_idle`, now ours.
pub async fn reclaim<C>(redis: &mut C, keys: &Keys, product_id: u64, cfg: &ConsumerConfig) -> redis::RedisResult<Vec<StreamMessage>>
where
    C: redis::aio::ConnectionLike + Send,
{
    let reply: redis::streams::StreamAutoClaimReply = redis::Cmd::xautoclaim_options(
            keys.orders_stream(product_id),
            PERSIST_GROUP,
            &cfg.name,
            cfg.claim_min_idle.as_millis() as u64,
            "0-0",
            StreamAutoClaimOptions::default().count(cfg.batch_size),
        )
        .query_async(redis)
        .await?;
    Ok(parse(reply.claimed))
}

/// New messages for this consumer (not blocking).
pub async fn read_new<C>(redis: &mut C, keys: &Keys, product_id: u64, cfg: &ConsumerConfig) -> redis::RedisResult<Vec<StreamMessage>>
where
    C: redis::aio::ConnectionLike + Send,
{
    let opts = StreamReadOptions::default().group(PERSIST_GROUP, &cfg.name).count(cfg.batch_size);
    let reply: StreamReadReply = redis::Cmd::xread_options(&[keys.orders_stream(product_id)], &[">"], &opts)
        .query_async(redis)
        .await?;
    Ok(parse(reply.keys.into_iter().flat_map(|k| k.ids).collect()))
}

/// One pass over the products: reclaim, read, persist. Returns what it did.
pub async fn run_once<C>(pool: &MySqlPool, redis: &mut C, keys: &Keys, products: &[u64], cfg: &ConsumerConfig) -> Result<BatchOutcome, PersistError>
where
    C: redis::aio::ConnectionLike + Send,
{
    let mut total = BatchOutcome::default();
    for &p in products {
        for batch in [reclaim(redis, keys, p, cfg).await?, read_new(redis, keys, p, cfg).await?] {
            let o = persist_batch(pool, redis, keys, p, &batch, cfg.payment_timeout).await?;
            total.persisted.extend(o.persisted);
            total.duplicates.extend(o.duplicates);
            total.failed.extend(o.failed);
            total.fell_back |= o.fell_back;
        }
    }
    Ok(total)
}
