//! The rewrite lock: `SET sg:lock:rewrite:{P} <token> NX PX <ttl>`, released by
//! compare-and-delete so a holder whose lock expired cannot delete its successor's.
//!
//! [`acquire_many`] and [`release_many`] do the same for many products in one pipeline (one
//! per hash slot on a cluster: the lock key carries the product's tag `{P}`).

use std::sync::LazyLock;

use redis::Script;

use crate::keys::Keys;
use crate::redis_link::{idempotent_script_per_item, per_item, slot, Link};

static RELEASE_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(RELEASE));

const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// A held lock (until released or expired).
#[derive(Debug, Clone)]
pub struct LockGuard {
    pub key: String,
    pub token: String,
}

/// Takes the lock, or `None` when another holder has it.
pub async fn acquire<C>(
    redis: &mut C,
    keys: &Keys,
    product_id: u64,
    ttl_ms: u64,
) -> redis::RedisResult<Option<LockGuard>>
where
    C: redis::aio::ConnectionLike + Send,
{
    let key = keys.rewrite_lock(product_id);
    let token = new_token();
    let ok: Option<String> =
        redis::cmd("SET").arg(&key).arg(&token).arg("NX").arg("PX").arg(ttl_ms).query_async(redis).await?;
    Ok(ok.map(|_| LockGuard { key, token }))
}

/// Releases the lock if it is still ours; returns whether it was.
pub async fn release<C>(redis: &mut C, guard: &LockGuard) -> redis::RedisResult<bool>
where
    C: redis::aio::ConnectionLike + Send,
{
    let deleted: i64 = RELEASE_SCRIPT.key(&guard.key).arg(&guard.token).invoke_async(redis).await?;
    Ok(deleted == 1)
}

/// A random lock token (also the key of a batch of rewrites).
pub fn new_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// Takes the locks of many products, each `(product, ttl in ms)`, in one pipeline per slot;
/// in the same order, `None` for a product whose lock another holder has (or that appears
/// twice: its second lock is busy).
pub async fn acquire_many<C: Link>(
    redis: &C,
    keys: &Keys,
    products: &[(u64, u64)],
) -> redis::RedisResult<Vec<Option<LockGuard>>> {
    let wanted: Vec<(LockGuard, u64)> = products
        .iter()
        .map(|&(p, ttl_ms)| (LockGuard { key: keys.rewrite_lock(p), token: new_token() }, ttl_ms))
        .collect();
    let replies = per_item(
        redis,
        &wanted,
        |(guard, _)| slot(guard.key.as_bytes()),
        |pipe, (guard, ttl_ms)| {
            pipe.cmd("SET").arg(&guard.key).arg(&guard.token).arg("NX").arg("PX").arg(*ttl_ms);
        },
    )
    .await?;
    // `SET ... NX` answers OK when it set the key and nil when the key was there.
    Ok(wanted
        .into_iter()
        .zip(replies)
        .map(|((guard, _), reply)| (reply.first() != Some(&redis::Value::Nil) && !reply.is_empty()).then_some(guard))
        .collect())
}

/// Releases many locks, each only if it is still ours; returns, in order, whether it was.
pub async fn release_many<C: Link>(redis: &C, guards: &[&LockGuard]) -> redis::RedisResult<Vec<bool>> {
    let replies = idempotent_script_per_item(
        redis,
        guards,
        |guard| slot(guard.key.as_bytes()),
        &RELEASE_SCRIPT,
        |guard| {
            let mut call = RELEASE_SCRIPT.key(&guard.key);
            call.arg(&guard.token);
            call
        },
    )
    .await?;
    replies.iter().map(|r| redis::from_redis_value::<i64>(r).map(|deleted| deleted == 1)).collect()
}
