//! Whether a product's Redis history may sell on its own word: before Redis answers ACCEPTED
//! for a product, the engine proves that its Redis has issued every reservation the DB holds.
//!
//! A failover to a replica that lacked reservations (written through to the DB, then lost
//! with the master) leaves Redis with units the DB has already sold. Until a rewrite rebuilds
//! the product from the DB, an order Redis answers on its own (vouched for by a replica of the
//! promoted master, or answered at once where there is none) may be refused by the DB later:
//! a buyer told ACCEPTED, then FAILED (issue 54). The proof is the reading's own
//! (`stockguard_core::recon`): the DB holds no reservation number of Redis's epoch above the
//! number Redis has issued, and no newer epoch. It is read DB first, then Redis, so a
//! reservation made in between (an intact history moving on) never reads as lost.
//!
//! A product is checked on its first order, and again after any master link of the replica
//! gate connected afresh (a break, a new master: [`super::replicas::ReplicaGate::changes`]),
//! on the very connection the order then reserves on. While its history is lost, every new
//! reservation of it is written to the DB before its buyer is answered
//! ([`super::write_through`], after the stream's backlog). It stays lost for as long as Redis
//! stays in that epoch (the numbers issued after the failover are numbers the DB already
//! holds, so catching up proves nothing), for every engine: the first to find it marks
//! `sg:{P}:lost` with the epoch. The check is read again at most every
//! [`RECHECK_LOST_EVERY`], and once the guided rewrite has started a new epoch the product
//! sells on Redis's word again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use sqlx::MySqlPool;
use stockguard_core::keys::Keys;
use tokio::time::Instant;

/// How often a product whose history is lost is checked again.
pub const RECHECK_LOST_EVERY: Duration = Duration::from_secs(1);

/// How long a check that could not be made (the DB or Redis failed or was slow) stands: the
/// product's orders are written to the DB meanwhile, and one check, not one per order, tries
/// again.
const RECHECK_UNKNOWN_EVERY: Duration = Duration::from_millis(250);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    Whole,
    /// Lost in this Redis epoch.
    Lost(u64),
    /// The check could not be made.
    Unknown,
}

#[derive(Debug, Clone, Copy)]
struct Checked {
    known: Known,
    /// The gate's change count the check was made under.
    change: u64,
    at: Instant,
}

impl Checked {
    fn fresh(&self, change: u64) -> bool {
        self.change == change
            && match self.known {
                Known::Whole => true,
                Known::Lost(_) => self.at.elapsed() < RECHECK_LOST_EVERY,
                Known::Unknown => self.at.elapsed() < RECHECK_UNKNOWN_EVERY,
            }
    }
}

/// The products' histories as this engine last checked them.
#[derive(Default)]
pub struct Histories {
    known: RwLock<HashMap<u64, Checked>>,
    /// One check at a time per product: a thousand first orders make one check.
    checking: Mutex<HashMap<u64, Arc<tokio::sync::Mutex<()>>>>,
}

impl Histories {
    /// Whether `product_id`'s Redis history, read through `redis` (the connection the order
    /// is about to reserve on), is whole, checked under the gate's change count `change`. A
    /// check that cannot be made within `patience` (the DB or Redis fails or is slow) says no
    /// for a moment: the orders are written to the DB before their answer meanwhile.
    pub async fn whole<C>(
        &self,
        pool: &MySqlPool,
        redis: &mut C,
        keys: &Keys,
        product_id: u64,
        change: u64,
        patience: Duration,
    ) -> bool
    where
        C: redis::aio::ConnectionLike + Send,
    {
        if let Some(known) = self.known(product_id).filter(|c| c.fresh(change)) {
            return known.known == Known::Whole;
        }
        let lock = {
            let mut checking = self.checking.lock().unwrap_or_else(|e| e.into_inner());
            checking.entry(product_id).or_default().clone()
        };
        let _one = lock.lock().await;
        if let Some(known) = self.known(product_id).filter(|c| c.fresh(change)) {
            return known.known == Known::Whole;
        }
        let was_lost_in = match self.known(product_id).map(|c| c.known) {
            Some(Known::Lost(epoch)) => Some(epoch),
            _ => None,
        };
        let checked = tokio::time::timeout(patience, check(pool, redis, keys, product_id, was_lost_in)).await;
        let known = match checked {
            Ok(Ok(Verdict::Whole)) => Known::Whole,
            Ok(Ok(Verdict::Lost { db, redis })) => {
                if was_lost_in.is_none() {
                    tracing::warn!(
                        product_id,
                        db_epoch = db.0,
                        db_seq = db.1,
                        redis_epoch = redis.0,
                        redis_seq = redis.1,
                        "Redis has not issued reservations the DB holds (a failover lost them): \
                         this product's orders are written to the DB before they are answered, \
                         until a rewrite rebuilds it"
                    );
                }
                Known::Lost(redis.0)
            }
            Ok(Err(e)) => {
                tracing::warn!(product_id, error = %e, "the product's Redis history cannot be checked: its orders are written to the DB before they are answered");
                Known::Unknown
            }
            Err(_) => {
                tracing::warn!(product_id, ?patience, "the product's Redis history was not checked in time: its orders are written to the DB before they are answered");
                Known::Unknown
            }
        };
        if was_lost_in.is_some() && known == Known::Whole {
            tracing::info!(product_id, "the product's Redis history was rebuilt: Redis answers its orders again");
        }
        self.known
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(product_id, Checked { known, change, at: Instant::now() });
        known == Known::Whole
    }

    /// The products this engine last found lost, with the Redis epoch they were lost in
    /// (ascending by product): their orders are written to the DB before they are answered
    /// until a rewrite rebuilds them. `GET /health` says it.
    pub fn lost(&self) -> Vec<(u64, u64)> {
        let known = self.known.read().unwrap_or_else(|e| e.into_inner());
        let mut lost: Vec<(u64, u64)> = known
            .iter()
            .filter_map(|(product, c)| match c.known {
                Known::Lost(epoch) => Some((*product, epoch)),
                _ => None,
            })
            .collect();
        lost.sort_unstable();
        lost
    }

    fn known(&self, product_id: u64) -> Option<Checked> {
        self.known.read().unwrap_or_else(|e| e.into_inner()).get(&product_id).copied()
    }
}

/// What a check found: (epoch, number) of the DB's newest reservation and of Redis.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Whole,
    Lost { db: (u64, u64), redis: (u64, u64) },
}

/// Why a check could not be made.
#[derive(Debug, thiserror::Error)]
enum CheckError {
    #[error("reading the DB's newest reservation number: {0}")]
    Db(#[from] sqlx::Error),
    #[error("reading Redis's reservation number and epoch (MGET): {0}")]
    Redis(#[from] redis::RedisError),
}

/// Checks the product's history; `lost_in` is the epoch an earlier check found lost.
async fn check<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    product_id: u64,
    lost_in: Option<u64>,
) -> Result<Verdict, CheckError>
where
    C: redis::aio::ConnectionLike + Send,
{
    // The DB first: a number Redis issues after this read cannot make the check fail.
    let (db_epoch, db_seq): (Option<i64>, i64) = sqlx::query_as(
        "SELECT CAST(e.epoch AS SIGNED), \
                CAST(COALESCE((SELECT MAX(o.reserve_seq) FROM orders o \
                               WHERE o.product_id = ? AND o.reserve_epoch = e.epoch), 0) AS SIGNED) \
         FROM (SELECT MAX(reserve_epoch) AS epoch FROM orders WHERE product_id = ? AND reserve_seq IS NOT NULL) e",
    )
    .bind(product_id)
    .bind(product_id)
    .fetch_one(pool)
    .await?;
    let (seq, epoch, marked): (Option<u64>, Option<u64>, Option<u64>) = redis::cmd("MGET")
        .arg(keys.seq(product_id))
        .arg(keys.epoch(product_id))
        .arg(keys.lost(product_id))
        .query_async(redis)
        .await?;
    let db = (db_epoch.unwrap_or(0).max(0) as u64, db_seq.max(0) as u64);
    let now = (epoch.unwrap_or(0), seq.unwrap_or(0));
    // What this engine found, or any engine marked in Redis: an engine started after the
    // failover, once the promoted master issued past the DB's highest number, would find
    // nothing amiss on its own.
    let remembered = lost_in.filter(|e| *e == now.0).or(marked.filter(|e| *e == now.0));
    let verdict = judge(db_epoch.is_some(), db, now, remembered);
    if matches!(verdict, Verdict::Lost { .. }) && marked != Some(now.0) {
        // For every engine: the rebuild's new epoch makes the mark stale by itself. The mark
        // is for the others; this engine's verdict stands without it, so an account that may
        // not SET it (or a write that fails) costs the mark, never the verdict.
        let marking: redis::RedisResult<()> =
            redis::cmd("SET").arg(keys.lost(product_id)).arg(now.0).query_async(redis).await;
        if let Err(e) = marking {
            tracing::warn!(
                product_id,
                epoch = now.0,
                error = %e,
                "a lost history could not be marked in Redis (sg:{{P}}:lost): other engines find it on their own check only"
            );
        }
    }
    Ok(verdict)
}

/// Lost when the DB holds a newer epoch than Redis's, or a number of Redis's epoch above
/// what Redis has issued; and, once found lost, for as long as Redis stays in that epoch:
/// the numbers a lost history issues after the failover are numbers the DB already holds,
/// so Redis catching up with the DB's highest proves nothing. Only a rebuild (a new epoch)
/// makes it whole again.
fn judge(db_has_orders: bool, db: (u64, u64), redis: (u64, u64), lost_in: Option<u64>) -> Verdict {
    let behind = db_has_orders && (db.0 > redis.0 || (db.0 == redis.0 && db.1 > redis.1));
    if behind || lost_in == Some(redis.0) {
        Verdict::Lost { db, redis }
    } else {
        Verdict::Whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_that_issued_every_number_the_db_holds_is_whole() {
        assert_eq!(judge(true, (3, 8), (3, 8), None), Verdict::Whole);
        assert_eq!(judge(true, (3, 8), (3, 12), None), Verdict::Whole, "numbers issued since the DB was read");
        assert_eq!(judge(true, (3, 80), (4, 0), None), Verdict::Whole, "a rewrite started a new epoch");
        assert_eq!(judge(false, (0, 0), (0, 0), None), Verdict::Whole, "no order yet");
    }

    #[test]
    fn a_number_or_an_epoch_redis_never_issued_is_a_lost_history() {
        assert!(matches!(judge(true, (3, 9), (3, 8), None), Verdict::Lost { .. }), "a replica that lacked number 9");
        assert!(matches!(judge(true, (4, 1), (3, 50), None), Verdict::Lost { .. }), "an epoch Redis went back from");
        assert!(matches!(judge(true, (0, 5), (0, 0), None), Verdict::Lost { .. }), "Redis lost its numbers");
    }

    #[test]
    fn a_lost_history_stays_lost_until_a_rebuild_starts_a_new_epoch() {
        // Found lost at number 8 of 9; the promoted replica then issued 9, 10 and 11 again.
        assert!(matches!(judge(true, (3, 11), (3, 11), Some(3)), Verdict::Lost { .. }), "caught up, still lost");
        assert!(matches!(judge(true, (3, 11), (3, 40), Some(3)), Verdict::Lost { .. }), "past it, still lost");
        assert_eq!(judge(true, (3, 11), (4, 0), Some(3)), Verdict::Whole, "the rewrite's new epoch");
    }
}
