//! The rewrite lock: `SET sg:lock:rewrite:{P} <token> NX PX <ttl>`, released by
//! compare-and-delete so a holder whose lock expired cannot delete its successor's.

use redis::Script;

use crate::keys::Keys;

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
    let token = format!("{:032x}", rand::random::<u128>());
    let ok: Option<String> =
        redis::cmd("SET").arg(&key).arg(&token).arg("NX").arg("PX").arg(ttl_ms).query_async(redis).await?;
    Ok(ok.map(|_| LockGuard { key, token }))
}

/// Releases the lock if it is still ours; returns whether it was.
pub async fn release<C>(redis: &mut C, guard: &LockGuard) -> redis::RedisResult<bool>
where
    C: redis::aio::ConnectionLike + Send,
{
    let deleted: i64 = Script::new(RELEASE).key(&guard.key).arg(&guard.token).invoke_async(redis).await?;
    Ok(deleted == 1)
}
