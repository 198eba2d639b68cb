//! Idempotency entries rebuilt from the DB (a step of the guided exit): orders sold through
//! the DB path never reached Redis's `idem` hash, so without this a buyer retrying such a
//! request after the exit would get a second order number from Redis (ACCEPTED, later FAILED
//! by the DB's unique key) instead of the first.

use crate::redis_link::RedisLink;
use sqlx::MySqlPool;

use super::SwitchError;
use crate::keys::Keys;

/// Fields per pipeline: one round trip each, short for Redis.
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
    let orders: Vec<(u64, Vec<u8>, String)> = sqlx::query_as(
        "SELECT user_id, idempotency_key, order_no FROM orders \
         WHERE product_id = ? AND source = 'DB' AND idempotency_key IS NOT NULL",
    )
    .bind(product_id)
    .fetch_all(pool)
    .await?;
    let key = keys.idempotency(product_id);
    for chunk in orders.chunks(CHUNK) {
        let mut pipe = redis::pipe();
        for (user_id, idempotency_key, order_no) in chunk {
            // The same field the reserve step writes: `<user_id>:<key bytes>`. The DB's unique
            // key (user, product, key) holds for both paths, so the DB's order is the answer.
            let mut field = format!("{user_id}:").into_bytes();
            field.extend_from_slice(idempotency_key);
            pipe.hset(&key, field, order_no).ignore();
        }
        pipe.query_async::<()>(redis).await?;
    }
    Ok(orders.len())
}
