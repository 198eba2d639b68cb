//! The release relay: applies pending releases (outbox) to Redis, each at most once, then
//! marks them done. Safe to run on every instance at once and to repeat: the `released` set
//! makes the Redis side idempotent and the `status = 'PENDING'` guard the DB side.

use redis::Script;
use sqlx::MySqlPool;
use stockguard_core::step::{RedisStepFailed, Step as _, StepFailed};

use stockguard_core::keys::Keys;
use stockguard_core::switch::Home;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RelayOutcome {
    pub applied: usize,
    pub already_applied: usize,
    /// Left pending: the product's stock key is missing.
    pub waiting_for_key: usize,
}

/// A release that could not be applied, named by its step.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error(transparent)]
    Db(#[from] StepFailed),
    #[error(transparent)]
    Redis(#[from] RedisStepFailed),
}

pub struct Relay {
    script: Script,
}

impl Default for Relay {
    fn default() -> Self {
        Self { script: Script::new(include_str!("release.lua")) }
    }
}

impl Relay {
    /// Applies up to `limit` pending releases of `home`'s products, oldest first (a drill's
    /// rig may sell from a Redis of its own).
    pub async fn run_once<C>(
        &self,
        pool: &MySqlPool,
        home: Home,
        redis: &mut C,
        keys: &Keys,
        limit: u32,
    ) -> Result<RelayOutcome, RelayError>
    where
        C: redis::aio::ConnectionLike + Send,
    {
        let pending: Vec<(u64, u64, String, i32, u64)> = sqlx::query_as(
            "SELECT x.id, x.product_id, x.order_no, x.qty, o.user_id FROM outbox x \
             JOIN orders o ON o.order_no = x.order_no JOIN inventory i ON i.product_id = x.product_id \
             WHERE x.status = 'PENDING' AND i.rig <=> ? ORDER BY x.id LIMIT ?",
        )
        .bind(home.rig())
        .bind(limit)
        .fetch_all(pool)
        .await
        .step("reading the outbox's pending releases")?;
        let mut outcome = RelayOutcome::default();
        for (id, product_id, order_no, qty, user_id) in pending {
            let code: i64 = self
                .script
                .key(keys.released(product_id))
                .key(keys.stock(product_id))
                .key(keys.buyers(product_id))
                .key(keys.seq(product_id))
                .arg(&order_no)
                .arg(qty)
                .arg(user_id)
                .invoke_async(redis)
                .await
                .step("giving a released order's units back to Redis")?;
            match code {
                1 => outcome.applied += 1,
                0 => outcome.already_applied += 1,
                _ => {
                    outcome.waiting_for_key += 1;
                    continue;
                }
            }
            sqlx::query("UPDATE outbox SET status = 'DONE', done_at = CURRENT_TIMESTAMP(3), attempts = attempts + 1 WHERE id = ? AND status = 'PENDING'")
                .bind(id)
                .execute(pool)
                .await
                .step("marking the release done in the outbox")?;
        }
        Ok(outcome)
    }
}
