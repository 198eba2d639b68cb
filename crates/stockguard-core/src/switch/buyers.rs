//! Per-user counts rebuilt from the DB (step of the guided exit): orders sold through the DB
//! path never touched Redis's `buyers` hash, so without this a buyer who bought in DB mode
//! could buy again past the per-user limit once Redis is back.
//!
//! [`rebuild_many`] does it for many products in one pass: one snapshot holding two queries
//! (`GROUP BY product_id, user_id`, and the releases still pending), then one pipeline of
//! script calls (one per hash slot on a cluster), a call per product and chunk of users.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use redis::Script;
use sqlx::MySqlPool;

use super::SwitchError;
use crate::keys::Keys;
use crate::redis_link::{idempotent_script_per_item, product_slot, RedisLink};
use crate::step::Step as _;

static BUYERS: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("buyers.lua")));

/// Users per script call: one call per chunk keeps each call short for Redis.
const CHUNK: usize = 500;

/// One script call: the product, whether it resets the hash (its first chunk), the users.
type Call<'a> = (u64, bool, &'a [(u64, UserCount)]);

#[derive(Default)]
struct UserCount {
    live: i64,
    pending: Vec<(String, i64)>,
}

/// Rewrites the product's `buyers` hash from the DB. Must run while nothing reserves the
/// product in Redis (the guided exit holds it paused) and nothing is in flight. Returns the
/// number of users written.
pub async fn rebuild(
    pool: &MySqlPool,
    redis: &mut RedisLink,
    keys: &Keys,
    product_id: u64,
) -> Result<usize, SwitchError> {
    Ok(rebuild_many(pool, redis, keys, &[product_id]).await?[0])
}

/// [`rebuild`] for many products at once; returns the users written per product, in order.
pub async fn rebuild_many(
    pool: &MySqlPool,
    redis: &RedisLink,
    keys: &Keys,
    products: &[u64],
) -> Result<Vec<usize>, SwitchError> {
    if products.is_empty() {
        return Ok(Vec::new());
    }
    // Product ids are integers we hold: inlined.
    let id_list = products.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let mut users: BTreeMap<(u64, u64), UserCount> = BTreeMap::new();
    // Both reads from one snapshot. The closer and the relay keep running during the exit:
    // an order closed between two independent reads would be counted live by the first and
    // as a pending release by the second (twice: the buyer is refused below their limit),
    // and a release the relay finished in between would be missed. The isolation level is
    // set explicitly because only REPEATABLE READ keeps one snapshot for a transaction (many
    // MySQL 8 sites default to READ COMMITTED, a snapshot per statement); WITH CONSISTENT
    // SNAPSHOT takes it at once, READ ONLY says it writes nothing.
    let mut tx = crate::tx::begin_with(
        pool,
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
    )
    .await
    .step("taking a consistent snapshot (rebuild many)")?;
    let live: Vec<(u64, u64, i64)> = sqlx::query_as(&format!(
        "SELECT product_id, user_id, CAST(SUM(buy_count) AS SIGNED) FROM orders \
         WHERE product_id IN ({id_list}) AND status IN ('WAIT_PAY', 'PAID') GROUP BY product_id, user_id"
    ))
    .fetch_all(&mut *tx)
    .await
    .step("reading orders (rebuild many)")?;
    for (product, user, units) in live {
        users.entry((product, user)).or_default().live = units;
    }
    let pending: Vec<(u64, u64, String, i64)> = sqlx::query_as(&format!(
        "SELECT x.product_id, o.user_id, x.order_no, CAST(x.qty AS SIGNED) FROM outbox x \
         JOIN orders o ON o.order_no = x.order_no WHERE x.status = 'PENDING' AND x.product_id IN ({id_list})"
    ))
    .fetch_all(&mut *tx)
    .await
    .step("reading outbox (rebuild many)")?;
    tx.commit().await.step("committing (rebuild many)")?;
    for (product, user, order_no, qty) in pending {
        users.entry((product, user)).or_default().pending.push((order_no, qty));
    }
    let mut by_product: BTreeMap<u64, Vec<(u64, UserCount)>> = BTreeMap::new();
    for ((product, user), count) in users {
        by_product.entry(product).or_default().push((user, count));
    }
    // One call per product and chunk of users; the first resets the hash, so a product with
    // no buyers still has its stale hash cleared (one call with no users).
    let mut calls: Vec<Call> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for &p in products {
        if !seen.insert(p) {
            continue;
        }
        match by_product.get(&p) {
            Some(entries) => {
                calls.extend(entries.chunks(CHUNK).enumerate().map(|(i, chunk)| (p, i == 0, chunk)));
            }
            None => calls.push((p, true, &[])),
        }
    }
    // A product's calls share its slot, hence one pipeline, in order; sent again as a whole
    // (NOSCRIPT) they leave the same hash: the first resets it.
    let replies = idempotent_script_per_item(
        redis,
        &calls,
        |(p, _, _)| product_slot(*p),
        &BUYERS,
        |(p, first, chunk)| {
            let mut call = BUYERS.key(keys.buyers(*p));
            call.key(keys.released(*p)).arg(if *first { "reset" } else { "keep" });
            for (user, count) in chunk.iter() {
                call.arg(user).arg(count.live).arg(count.pending.len());
                for (order_no, qty) in &count.pending {
                    call.arg(order_no).arg(qty);
                }
            }
            call
        },
    )
    .await?;
    let mut written: BTreeMap<u64, usize> = BTreeMap::new();
    for ((p, _, _), reply) in calls.iter().zip(&replies) {
        *written.entry(*p).or_default() += redis::from_redis_value::<usize>(reply)?;
    }
    Ok(products.iter().map(|p| written.get(p).copied().unwrap_or(0)).collect())
}
