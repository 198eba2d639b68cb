//! Rate limits: per user in Redis (shared by every instance), and global per instance (a
//! token bucket in memory, `governor`). Both are off when configured as 0.

use std::num::NonZeroU32;
use std::sync::Arc;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use redis::Script;

use stockguard_core::keys::Keys;

#[derive(Clone)]
pub struct Limits {
    global: Option<Arc<DefaultDirectRateLimiter>>,
    per_user_per_sec: u32,
    script: Arc<Script>,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("global", &self.global.is_some())
            .field("per_user_per_sec", &self.per_user_per_sec)
            .finish()
    }
}

impl Limits {
    /// `global_per_sec`: requests per second this instance admits (0 = no limit);
    /// `per_user_per_sec`: requests per second one user may make across instances (0 = none).
    pub fn new(global_per_sec: u32, per_user_per_sec: u32) -> Self {
        let global = NonZeroU32::new(global_per_sec).map(|r| Arc::new(RateLimiter::direct(Quota::per_second(r))));
        Self { global, per_user_per_sec, script: Arc::new(Script::new(include_str!("rate.lua"))) }
    }

    /// True when a per-user rate is set (each order then costs a Redis call for it).
    pub fn limits_users(&self) -> bool {
        self.per_user_per_sec != 0
    }

    /// The instance-wide bucket: no I/O.
    pub fn admit_global(&self) -> bool {
        self.global.as_ref().is_none_or(|l| l.check().is_ok())
    }

    /// The per-user window in Redis.
    pub async fn admit_user<C>(&self, conn: &mut C, keys: &Keys, user_id: u64) -> redis::RedisResult<bool>
    where
        C: redis::aio::ConnectionLike + Send,
    {
        if self.per_user_per_sec == 0 {
            return Ok(true);
        }
        let second = chrono::Utc::now().timestamp();
        let key = format!("{}:rl:{{u{}}}:{}", keys.prefix(), user_id, second);
        let allowed: i64 = self.script.key(key).arg(self.per_user_per_sec).invoke_async(conn).await?;
        Ok(allowed == 1)
    }
}
