//! Idempotency entries rebuilt from the DB (a step of the guided exit): orders sold through
//! the DB path never reached Redis's `idem` hash, so without this a buyer retrying such a
//! request after the exit would get a second order number from Redis (ACCEPTED, later FAILED
//! by the DB's unique key) instead of the first.
//!
//! [`rebuild_many`] does it for many products at once: one query, then one pipeline (one per
//! hash slot on a cluster) of `HSET`s, one per product and chunk of entries.

use std::collections::BTreeMap;

use sqlx::MySqlPool;

use super::SwitchError;
use crate::keys::Keys;
use crate::redis_link::{per_item, product_slot, RedisLink};
use crate::step::Step as _;

/// A field of the `idem` hash (`<user_id>:<key bytes>`) and its order number.
type Entry = (Vec<u8>, String);

/// Fields per `HSET`: short for Redis.
const CHUNK: usize = 1000;

/// Writes `user_id:idempotency_key -> order_no` into the product's `idem` hash for every order
/// the DB path sold (whatever its status now: a retry of a closed order is still that order).
/// Must run while the product is paused, so no DB-path order is added meanwhile. Returns the
/// number of entries written.
pub async fn rebuild(
    pool: &MySqlPool,
    redis: &mut RedisLink,
    keys: &Keys,
    product_id: u64,
) -> Result<usize, SwitchError> {
    Ok(rebuild_many(pool, redis, keys, &[product_id]).await?[0])
}

/// [`rebuild`] for many products at once; returns the entries written per product, in order.
pub async fn rebuild_many(
    pool: &MySqlPool,
    redis: &RedisLink,
    keys: &Keys,
    products: &[u64],
) -> Result<Vec<usize>, SwitchError> {
    if products.is_empty() {
        return Ok(Vec::new());
    }
    let id_list = products.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let orders: Vec<(u64, u64, Vec<u8>, String)> = sqlx::query_as(&format!(
        "SELECT product_id, user_id, idempotency_key, order_no FROM orders \
         WHERE product_id IN ({id_list}) AND source = 'DB' AND idempotency_key IS NOT NULL"
    ))
    .fetch_all(pool)
    .await
    .step("reading orders (rebuild many)")?;
    let mut by_product: BTreeMap<u64, Vec<Entry>> = BTreeMap::new();
    for (product, user_id, idempotency_key, order_no) in orders {
        // The same field the reserve step writes: `<user_id>:<key bytes>`. The DB's unique
        // key (user, product, key) holds for both paths, so the DB's order is the answer.
        let mut field = format!("{user_id}:").into_bytes();
        field.extend_from_slice(&idempotency_key);
        by_product.entry(product).or_default().push((field, order_no));
    }
    let writes: Vec<(u64, &[Entry])> =
        by_product.iter().flat_map(|(&p, entries)| entries.chunks(CHUNK).map(move |chunk| (p, chunk))).collect();
    per_item(
        redis,
        &writes,
        |(p, _)| product_slot(*p),
        |pipe, (p, chunk)| {
            let cmd = pipe.cmd("HSET").arg(keys.idempotency(*p));
            for (field, order_no) in chunk.iter() {
                cmd.arg(field).arg(order_no);
            }
        },
    )
    .await?;
    Ok(products.iter().map(|p| by_product.get(p).map_or(0, Vec::len)).collect())
}
