//! A forked Redis history: two orders in the DB that one epoch numbered the same.
//!
//! In an intact history every reservation of an epoch has its own number (`sg:{P}:seq`). A
//! failover to a replica that lagged forks it: the promoted master issues again the numbers
//! the dead master had already given to orders that reached the DB (written through, or
//! persisted). The reading's own check ([`super::reading`]: numbers above what Redis has
//! issued) sees that only until the promoted master has passed the dead one's last number.
//! After that, a reading whose cut falls among the reissued numbers takes a dead order for
//! one reserved after its cut and expects Redis that much higher: a rewrite from it leaves
//! `REDIS_HIGH` behind. What remains in the DB is the fork itself: two orders of one number.
//!
//! The check scans the product's orders of the epoch on the reservation index: fine for a
//! rewrite, which is rare, and too much for every reading of a sampler.

use sqlx::MySqlPool;

/// Whether the DB holds two orders of `product` that `epoch` numbered the same.
pub async fn forked(pool: &MySqlPool, product: u64, epoch: u64) -> Result<bool, sqlx::Error> {
    let twice: Option<(u64,)> = sqlx::query_as(
        "SELECT reserve_seq FROM orders FORCE INDEX (idx_orders_reserve) \
         WHERE product_id = ? AND reserve_epoch = ? AND reserve_seq IS NOT NULL \
         GROUP BY reserve_seq HAVING COUNT(*) > 1 LIMIT 1",
    )
    .bind(product)
    .bind(epoch)
    .fetch_optional(pool)
    .await?;
    Ok(twice.is_some())
}
