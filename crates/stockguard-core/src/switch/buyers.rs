//! Per-user counts rebuilt from the DB (step of the guided exit): orders sold through the DB
//! path never touched Redis's `buyers` hash, so without this a buyer who bought in DB mode
//! could buy again past the per-user limit once Redis is back.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use redis::Script;
use sqlx::MySqlPool;

use super::SwitchError;
use crate::keys::Keys;

static BUYERS: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("buyers.lua")));

/// Users per script call: one call per chunk keeps each call short for Redis.
const CHUNK: usize = 500;

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
    redis: &mut crate::redis_link::RedisLink,
    keys: &Keys,
    product_id: u64,
) -> Result<usize, SwitchError> {
    let mut users: BTreeMap<u64, UserCount> = BTreeMap::new();
    // Both reads from one snapshot. The closer and the relay keep running during the exit:
    // an order closed between two independent reads would be counted live by the first and
    // as a pending release by the second (twice: the buyer is refused below their limit),
    // and a release the relay finished in between would be missed. The isolation level is
    // set explicitly because only REPEATABLE READ keeps one snapshot for a transaction (many
    // MySQL 8 sites default to READ COMMITTED, a snapshot per statement); WITH CONSISTENT
    // SNAPSHOT takes it at once, READ ONLY says it writes nothing.
    let mut tx = pool
        .begin_with(
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
        )
        .await?;
    let live: Vec<(u64, i64)> = sqlx::query_as(
        "SELECT user_id, CAST(SUM(buy_count) AS SIGNED) FROM orders \
         WHERE product_id = ? AND status IN ('WAIT_PAY', 'PAID') GROUP BY user_id",
    )
    .bind(product_id)
    .fetch_all(&mut *tx)
    .await?;
    for (user, units) in live {
        users.entry(user).or_default().live = units;
    }
    let pending: Vec<(u64, String, i64)> = sqlx::query_as(
        "SELECT o.user_id, x.order_no, CAST(x.qty AS SIGNED) FROM outbox x JOIN orders o ON o.order_no = x.order_no \
         WHERE x.status = 'PENDING' AND x.product_id = ?",
    )
    .bind(product_id)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    for (user, order_no, qty) in pending {
        users.entry(user).or_default().pending.push((order_no, qty));
    }
    let entries: Vec<_> = users.into_iter().collect();
    let mut written = 0;
    let mut first = true;
    // An empty product still needs its stale hash cleared: one call with no users.
    let chunks: Vec<&[(u64, UserCount)]> = if entries.is_empty() { vec![&[]] } else { entries.chunks(CHUNK).collect() };
    for chunk in chunks {
        let mut call = BUYERS.key(keys.buyers(product_id));
        call.key(keys.released(product_id)).arg(if first { "reset" } else { "keep" });
        for (user, count) in chunk {
            call.arg(user).arg(count.live).arg(count.pending.len());
            for (order_no, qty) in &count.pending {
                call.arg(order_no).arg(qty);
            }
        }
        let n: usize = call.invoke_async(redis).await?;
        written += n;
        first = false;
    }
    Ok(written)
}
