//! An exact reading of many products: Redis first (one atomic script per product,
//! pipelined), then one DB statement, then Redis again (the sequence numbers of the releases
//! it found, and each product's sequence now).
//!
//! The Redis script takes the product's cut: its stock, its in-flight hash, its sequence
//! number `S` (`sg:{P}:seq`, incremented by every reservation and every applied release) and
//! its epoch `E` (`sg:{P}:epoch`, the Redis history `S` counts in; a rebuild starts a new
//! one). The reading is exact as of that instant, whatever happens between the Redis read and
//! the DB read, because the DB statement (one statement: one consistent snapshot) is
//! corrected back to the cut:
//!
//! - in-flight entries whose order already reached the DB are not counted twice;
//! - orders reserved after the cut (epoch `E`, `reserve_seq > S`) that already reached the
//!   DB are added back to the DB stock (they were not yet deducted in Redis at the cut);
//! - releases count as pending unless Redis applied them at a sequence `<= S`.
//!
//! So `expected_redis = db_stock + reserved_after_cut - inflight_pending - pending_release`
//! is what Redis should have held at the cut, and any drift is real.
//!
//! That correction holds only while Redis and the DB describe one history. When Redis goes
//! back in time (restart without persistence, flush, eviction, failover to a replica that
//! lagged), `S` is below numbers the DB already holds, and "after the cut" would take every
//! one of them for a sale Redis has not made yet: the reading would expect Redis as high as
//! its stale stock and call it OK. So the reading checks its cut against the DB: in an
//! intact history, every order in the DB snapshot was reserved before Redis was read the
//! second time, so the DB holds no number of epoch `E` above that second sequence `S2`, and
//! no epoch newer than `E`. If it does, the status is [`DriftStatus::HistoryLost`] and no
//! after-cut correction is applied; the rewrite then rebuilds the product under a new epoch
//! (`crate::rewrite`). A missing stock key takes no correction either: nothing is reserved
//! without it.
//!
//! The drift never needs `live_orders_qty`; only the ledger statuses (`OVERSOLD`,
//! `LEDGER_MISMATCH`) do, and summing live orders is most of a reading's DB cost on a big
//! sale. So a reading can take [`LedgerGaps`] from an earlier full reading instead: the gap
//! `initial - db_stock - live` does not move with sales or closes (each moves stock and live
//! orders by the same units), so `live = initial - db_stock - gap` until the ledger itself
//! breaks, which the next full reading shows. The sampler takes a full reading every few
//! seconds and light ones in between; such readings say `live_derived: true`.

use std::collections::HashMap;
use std::sync::LazyLock;

use redis::Script;
use serde::{Deserialize, Serialize};
use sqlx::MySqlPool;

use super::status::DriftStatus;
use crate::drills;
use crate::keys::Keys;
use crate::product_id::ProductId;
use crate::redis_link::{idempotent_script_per_item, per_product, product_slot, Link};

/// One product's stock, everywhere it is. JSON field names are stable (`docs/json.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Reading {
    /// A number for our own sale; over an adapter, the sale's own id (a number or text).
    pub product_id: ProductId,
    pub name: String,
    pub initial_stock: i64,
    pub db_stock: i64,
    pub live_orders_qty: i64,
    pub inflight_pending: i64,
    pub pending_release: i64,
    /// Units of orders reserved after the Redis cut that were already in the DB when it was
    /// read: the correction that makes the reading exact under traffic.
    pub reserved_after_cut: i64,
    /// `None` when the stock key is absent.
    pub redis_stock: Option<i64>,
    pub expected_redis: i64,
    /// `None` when the stock key is absent, or (over an adapter) while the product is
    /// `UNSETTLED`.
    pub drift: Option<i64>,
    pub status: DriftStatus,
    /// The product's sequence number at the Redis cut.
    pub cut_seq: u64,
    /// The Redis epoch at the cut (0: none set; see the module docs).
    #[serde(default)]
    pub cut_epoch: u64,
    /// Redis went back in time (it has no record of reservations the DB holds): the cut
    /// cannot be trusted and took no after-cut correction. The status says `HISTORY_LOST`
    /// unless a DB-side incident outranks it.
    #[serde(default)]
    pub history_lost: bool,
    /// True when `live_orders_qty` comes from the last full reading's ledger gap rather than
    /// from summing live orders now (see the module docs).
    #[serde(default)]
    pub live_derived: bool,
    /// True when the drift is a verdict. Our own reading is exact (always true); a reading
    /// over an adapter is settled once two passes agree (`crate::adapter`).
    #[serde(default = "settled_by_default")]
    pub settled: bool,
    /// Orders accepted and not yet rows: our own reading's in-flight entries not yet in the DB;
    /// over an adapter, what waits in its in-flight source for this product (or the whole
    /// queue's depth when its messages name no product).
    #[serde(default)]
    pub in_flight: i64,
}

fn settled_by_default() -> bool {
    true
}

impl Reading {
    /// How far the ledger's identity is off: `initial - db_stock - live`, zero when it adds
    /// up (not zero: `LEDGER_MISMATCH`, unless an oversell outranks it). The figure
    /// [`LedgerGaps`] keeps.
    pub fn ledger_gap(&self) -> i64 {
        self.initial_stock - self.db_stock - self.live_orders_qty
    }

    /// This reading with its Redis history taken as lost ([`super::fork`]): no after-cut
    /// correction, status `HISTORY_LOST`. Its expected value then counts every order the DB
    /// holds, those reserved after the cut included, so it is never above what Redis should
    /// hold: a rewrite from it may leave Redis low, never high.
    pub fn with_history_lost(mut self) -> Self {
        self.expected_redis -= self.reserved_after_cut;
        self.reserved_after_cut = 0;
        self.history_lost = true;
        self.status = DriftStatus::classify(
            self.initial_stock,
            self.db_stock,
            self.live_orders_qty,
            self.redis_stock,
            self.expected_redis,
            true,
        );
        self.drift = self.redis_stock.map(|r| r - self.expected_redis);
        self
    }
}

#[cfg(test)]
impl Reading {
    /// A settled `OK` reading of `product_id` (tests): `initial` units, `live` of them held by
    /// live orders, the rest in the DB and in Redis.
    pub(crate) fn exact(product_id: impl Into<ProductId>, initial: i64, live: i64) -> Self {
        Reading {
            product_id: product_id.into(),
            name: String::new(),
            initial_stock: initial,
            db_stock: initial - live,
            live_orders_qty: live,
            inflight_pending: 0,
            pending_release: 0,
            reserved_after_cut: 0,
            redis_stock: Some(initial - live),
            expected_redis: initial - live,
            drift: Some(0),
            status: DriftStatus::Ok,
            cut_seq: 0,
            cut_epoch: 0,
            history_lost: false,
            live_derived: false,
            settled: true,
            in_flight: 0,
        }
    }
}

/// Per product, `initial - db_stock - live` as of a full reading.
#[derive(Debug, Clone, Default)]
pub struct LedgerGaps {
    gaps: HashMap<ProductId, i64>,
}

impl LedgerGaps {
    /// The gaps of the products a full reading covered (derived readings are skipped).
    pub fn from_readings(readings: &[Reading]) -> Self {
        let gaps =
            readings.iter().filter(|r| !r.live_derived).map(|r| (r.product_id.clone(), r.ledger_gap())).collect();
        Self { gaps }
    }

    /// True when every product in `ids` has a gap.
    pub fn covers(&self, ids: &[u64]) -> bool {
        ids.iter().all(|id| self.gaps.contains_key(&ProductId::Num(*id)))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReconError {
    #[error("reading the DB failed: {0}")]
    Db(#[from] sqlx::Error),
    #[error("reading Redis failed: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("no product {0} in this sale")]
    UnknownProduct(u64),
}

/// The product ids of the sale, in id order: its own, and those of a drill rig while its
/// run is alive (RUNNING, its runner's heartbeat younger than [`drills::runs::STALE_AFTER`]).
/// A finished or dead run's products are off sale: no engine sells them, and the sale's
/// reading no longer shows them.
pub async fn product_ids(pool: &MySqlPool) -> Result<Vec<u64>, ReconError> {
    let ids: Vec<(u64,)> = sqlx::query_as(
        "SELECT product_id FROM inventory WHERE rig IS NULL OR rig IN \
         (SELECT id FROM drill_runs WHERE status = 'RUNNING' AND heartbeat_at >= NOW(3) - INTERVAL ? MICROSECOND) \
         ORDER BY product_id",
    )
    .bind(drills::runs::STALE_AFTER.as_micros() as u64)
    .fetch_all(pool)
    .await?;
    Ok(ids.into_iter().map(|(id,)| id).collect())
}

struct Cut {
    stock: Option<i64>,
    seq: u64,
    epoch: u64,
    inflight: Vec<(String, i64)>,
}

/// The cut script, hashed once. It is sent by SHA; only when the server does not know it
/// (first use, or after `SCRIPT FLUSH`) is it loaded, so a reading costs no `SCRIPT LOAD`.
static CUT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("cut.lua")));

async fn redis_cuts<C: Link>(redis: &C, keys: &Keys, ids: &[u64]) -> Result<Vec<Cut>, ReconError> {
    // One pipeline (one per slot on a cluster); each product's cut is one atomic script, so
    // splitting the products by slot changes nothing about any product's cut. The script only
    // reads, so sending it again after a NOSCRIPT is harmless.
    let replies = idempotent_script_per_item(
        redis,
        ids,
        |&id| product_slot(id),
        &CUT,
        |&id| {
            let mut call = CUT.key(keys.stock(id));
            call.key(keys.seq(id)).key(keys.inflight(id)).key(keys.epoch(id));
            call
        },
    )
    .await?;
    replies
        .iter()
        .map(|reply| {
            let (exists, stock, seq, flat, epoch): (i64, i64, u64, Vec<String>, u64) = redis::from_redis_value(reply)?;
            Ok(Cut {
                stock: (exists == 1).then_some(stock),
                seq,
                epoch,
                inflight: flat.chunks(2).map(|kv| (kv[0].clone(), kv[1].parse().unwrap_or(0))).collect(),
            })
        })
        .collect()
}

/// One product's row of the DB statement.
#[derive(Clone)]
struct DbProduct {
    name: String,
    initial: i64,
    stock: i64,
    live: i64,
    /// Units of orders of the cut's epoch numbered above the cut.
    after_cut: i64,
    /// The highest reservation number of the cut's epoch the DB holds (0: none).
    max_seq: u64,
    /// The newest epoch of any order the DB holds (0: none).
    max_epoch: u64,
}

/// What the one DB statement returns, by row kind.
#[derive(Default)]
struct DbSide {
    products: HashMap<u64, DbProduct>,
    /// in-flight order numbers found in the DB
    in_db: HashMap<String, i64>,
    /// product -> releases not done, or done within the last minute: (order_no, qty)
    releases: HashMap<u64, Vec<(String, i64)>>,
}

async fn db_side(pool: &MySqlPool, ids: &[u64], cuts: &[Cut], with_live: bool) -> Result<DbSide, ReconError> {
    // Ids and cuts are integers we hold, so inlining them is safe; order numbers are bound.
    let id_list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let cut_table = ids
        .iter()
        .zip(cuts)
        .map(|(id, c)| format!("SELECT {id} AS product_id, {} AS cut, {} AS epoch", c.seq, c.epoch))
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let inflight: Vec<&str> = cuts.iter().flat_map(|c| c.inflight.iter().map(|(no, _)| no.as_str())).collect();
    let inflight_part = if inflight.is_empty() {
        String::new()
    } else {
        format!(
            " UNION ALL SELECT 'F', o.product_id, o.order_no, CAST(o.buy_count AS SIGNED), 0, 0, 0, 0, 0 \
              FROM orders o WHERE o.order_no IN ({})",
            vec!["?"; inflight.len()].join(",")
        )
    };
    let live = if with_live {
        "CAST(COALESCE((SELECT SUM(o.buy_count) FROM orders o FORCE INDEX (idx_orders_recon) \
                        WHERE o.product_id = i.product_id AND o.status IN ('WAIT_PAY','PAID')), 0) AS SIGNED)"
    } else {
        "CAST(0 AS SIGNED)"
    };
    let sql = format!(
        "SELECT 'P' AS kind, i.product_id, i.name, CAST(i.initial_stock AS SIGNED), CAST(i.stock AS SIGNED), \
                {live}, \
                CAST(COALESCE((SELECT SUM(o.buy_count) FROM orders o FORCE INDEX (idx_orders_reserve) \
                               WHERE o.product_id = i.product_id AND o.reserve_epoch = c.epoch \
                               AND o.reserve_seq > c.cut), 0) AS SIGNED), \
                CAST(COALESCE((SELECT MAX(o.reserve_seq) FROM orders o FORCE INDEX (idx_orders_reserve) \
                               WHERE o.product_id = i.product_id AND o.reserve_epoch = c.epoch), 0) AS SIGNED), \
                CAST(COALESCE((SELECT MAX(o.reserve_epoch) FROM orders o FORCE INDEX (idx_orders_reserve) \
                               WHERE o.product_id = i.product_id), 0) AS SIGNED) \
         FROM inventory i JOIN ({cut_table}) c ON c.product_id = i.product_id \
         UNION ALL SELECT 'R', x.product_id, x.order_no, CAST(x.qty AS SIGNED), 0, 0, 0, 0, 0 FROM outbox x \
                   WHERE x.status = 'PENDING' AND x.product_id IN ({id_list}) \
         UNION ALL SELECT 'R', x.product_id, x.order_no, CAST(x.qty AS SIGNED), 0, 0, 0, 0, 0 FROM outbox x \
                   WHERE x.status = 'DONE' AND x.done_at >= NOW(3) - INTERVAL 60 SECOND AND x.product_id IN ({id_list})\
         {inflight_part}"
    );
    let mut query = sqlx::query_as::<_, (String, u64, String, i64, i64, i64, i64, i64, i64)>(&sql);
    for no in &inflight {
        query = query.bind(*no);
    }
    let mut side = DbSide::default();
    for (kind, product, text, a, b, c, d, e, f) in query.fetch_all(pool).await? {
        match kind.as_str() {
            "P" => {
                let p = DbProduct {
                    name: text,
                    initial: a,
                    stock: b,
                    live: c,
                    after_cut: d,
                    max_seq: e.max(0) as u64,
                    max_epoch: f.max(0) as u64,
                };
                side.products.insert(product, p);
            }
            "R" => side.releases.entry(product).or_default().push((text, a)),
            _ => {
                side.in_db.insert(text, a);
            }
        }
    }
    Ok(side)
}

/// What Redis says once the DB was read: which releases it applied at or before each
/// product's cut, and each product's `(seq, epoch)` now (for the history check).
struct AfterDb {
    applied: HashMap<String, bool>,
    now: Vec<(u64, u64)>,
}

async fn after_db<C: Link>(
    redis: &C,
    keys: &Keys,
    ids: &[u64],
    cuts: &[Cut],
    side: &DbSide,
) -> Result<AfterDb, ReconError> {
    let replies = per_product(redis, ids, |pipe, id| {
        pipe.get(keys.seq(id)).get(keys.epoch(id));
        if let Some(releases) = side.releases.get(&id) {
            let nos: Vec<&str> = releases.iter().map(|(no, _)| no.as_str()).collect();
            pipe.cmd("HMGET").arg(keys.released(id)).arg(&nos);
        }
    })
    .await?;
    let mut now = Vec::with_capacity(ids.len());
    let mut applied = HashMap::new();
    for ((id, cut), replies) in ids.iter().zip(cuts).zip(replies) {
        let mut replies = replies.into_iter();
        let seq: Option<u64> = redis::from_redis_value(&replies.next().unwrap_or(redis::Value::Nil))?;
        let epoch: Option<u64> = redis::from_redis_value(&replies.next().unwrap_or(redis::Value::Nil))?;
        now.push((seq.unwrap_or(0), epoch.unwrap_or(0)));
        if let Some(releases) = side.releases.get(id) {
            let seqs: Vec<Option<u64>> = redis::from_redis_value(&replies.next().unwrap_or(redis::Value::Nil))?;
            for ((no, _), seq) in releases.iter().zip(seqs) {
                applied.insert(no.clone(), seq.is_some_and(|s| s <= cut.seq));
            }
        }
    }
    Ok(AfterDb { applied, now })
}

/// True when the DB holds reservations the cut's Redis history has no record of issuing: a
/// number of the cut's epoch above what Redis has issued by now (`now`, read after the DB),
/// or an order of a newer epoch. Redis went back in time; the cut cannot be trusted. When a
/// rebuild moved the epoch between the two Redis reads, the reading is of the replaced
/// history and the check has nothing to compare with.
fn history_lost(cut: &Cut, db: &DbProduct, now: (u64, u64)) -> bool {
    let (seq_now, epoch_now) = now;
    epoch_now == cut.epoch && (db.max_epoch > cut.epoch || db.max_seq > seq_now.max(cut.seq))
}

/// Reads the given products (all of the sale's when `only` is empty), most severe first,
/// summing their live orders.
pub async fn read_products<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    only: &[u64],
) -> Result<Vec<Reading>, ReconError>
where
    C: Link,
{
    Ok(read_products_timed(pool, redis, keys, only, None).await?.0)
}

/// Like [`read_products`], but live orders come from `gaps` (a full reading's ledger gaps)
/// when they cover every product, which spares the DB the sums. Falls back to a full
/// reading otherwise.
pub async fn read_products_light<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    only: &[u64],
    gaps: &LedgerGaps,
) -> Result<Vec<Reading>, ReconError>
where
    C: Link,
{
    Ok(read_products_timed(pool, redis, keys, only, Some(gaps)).await?.0)
}

/// Where a reading's time went (for `stockguard bench recon`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTimings {
    /// The Redis cuts and the released-sequence lookups.
    pub redis_ms: f64,
    /// The one DB statement.
    pub db_ms: f64,
}

/// A reading with its timings (for `stockguard bench recon`); `gaps` as in
/// [`read_products_light`].
pub async fn read_products_timed<C>(
    pool: &MySqlPool,
    redis: &mut C,
    keys: &Keys,
    only: &[u64],
    gaps: Option<&LedgerGaps>,
) -> Result<(Vec<Reading>, ReadTimings), ReconError>
where
    C: Link,
{
    let ids = if only.is_empty() { product_ids(pool).await? } else { only.to_vec() };
    if ids.is_empty() {
        return Ok((Vec::new(), ReadTimings::default()));
    }
    let gaps = gaps.filter(|g| g.covers(&ids));
    let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1000.0;
    let t = std::time::Instant::now();
    let cuts = redis_cuts(&*redis, keys, &ids).await?;
    let mut timings = ReadTimings { redis_ms: ms(t), db_ms: 0.0 };
    let t = std::time::Instant::now();
    let side = db_side(pool, &ids, &cuts, gaps.is_none()).await?;
    timings.db_ms = ms(t);
    let t = std::time::Instant::now();
    let AfterDb { applied, now } = after_db(&*redis, keys, &ids, &cuts, &side).await?;
    timings.redis_ms += ms(t);

    let mut readings = Vec::with_capacity(ids.len());
    for ((id, cut), now) in ids.iter().zip(&cuts).zip(now) {
        let Some(db) = side.products.get(id).cloned() else {
            return Err(ReconError::UnknownProduct(*id));
        };
        let lost = history_lost(cut, &db, now);
        let DbProduct { name, initial, stock, live: summed, .. } = db;
        // Nothing is reserved without a stock key, and a lost history's numbers are not
        // this cut's: neither takes the after-cut correction (module docs).
        let after_cut = if lost || cut.stock.is_none() { 0 } else { db.after_cut };
        let live = match gaps {
            Some(g) => initial - stock - g.gaps[&ProductId::Num(*id)],
            None => summed,
        };
        let inflight_pending: i64 =
            cut.inflight.iter().filter(|(no, _)| !side.in_db.contains_key(no)).map(|(_, q)| q).sum();
        let pending_release: i64 = side
            .releases
            .get(id)
            .map(|rs| rs.iter().filter(|(no, _)| !applied.get(no).copied().unwrap_or(false)).map(|(_, q)| q).sum())
            .unwrap_or(0);
        let expected_redis = stock + after_cut - inflight_pending - pending_release;
        readings.push(Reading {
            product_id: (*id).into(),
            status: DriftStatus::classify(initial, stock, live, cut.stock, expected_redis, lost),
            name,
            initial_stock: initial,
            db_stock: stock,
            live_orders_qty: live,
            inflight_pending,
            pending_release,
            reserved_after_cut: after_cut,
            redis_stock: cut.stock,
            expected_redis,
            drift: cut.stock.map(|r| r - expected_redis),
            cut_seq: cut.seq,
            cut_epoch: cut.epoch,
            history_lost: lost,
            live_derived: gaps.is_some(),
            settled: true,
            in_flight: inflight_pending,
        });
    }
    readings.sort_by(|a, b| {
        b.status
            .severity()
            .cmp(&a.status.severity())
            .then(b.drift.unwrap_or(0).abs().cmp(&a.drift.unwrap_or(0).abs()))
            .then(a.product_id.cmp(&b.product_id))
    });
    Ok((readings, timings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(seq: u64, epoch: u64) -> Cut {
        Cut { stock: Some(10), seq, epoch, inflight: Vec::new() }
    }

    fn db(max_seq: u64, max_epoch: u64) -> DbProduct {
        DbProduct { name: String::new(), initial: 10, stock: 10, live: 0, after_cut: 0, max_seq, max_epoch }
    }

    #[test]
    fn numbers_issued_after_the_cut_and_before_the_second_read_are_not_a_lost_history() {
        assert!(!history_lost(&cut(5, 3), &db(8, 3), (8, 3)));
        assert!(!history_lost(&cut(5, 3), &db(0, 0), (5, 3)), "an empty DB");
    }

    #[test]
    fn a_db_number_redis_has_not_issued_yet_is_a_lost_history() {
        assert!(history_lost(&cut(5, 3), &db(8, 3), (6, 3)));
    }

    #[test]
    fn an_order_of_a_newer_epoch_than_redis_has_is_a_lost_history() {
        assert!(history_lost(&cut(50, 3), &db(2, 4), (50, 3)));
    }

    #[test]
    fn a_reading_that_straddles_a_rebuild_does_not_judge_the_history() {
        assert!(!history_lost(&cut(5, 3), &db(2, 9), (1, 9)));
    }

    #[test]
    fn a_history_taken_as_lost_drops_the_after_cut_correction_and_is_never_ok() {
        // Three units in the DB numbered above the cut, taken as reserved after it: OK.
        let corrected =
            Reading { reserved_after_cut: 3, expected_redis: 13, redis_stock: Some(13), ..Reading::exact(1, 20, 10) };
        let lost = corrected.with_history_lost();
        assert_eq!((lost.expected_redis, lost.reserved_after_cut), (10, 0), "what the DB holds, nothing added back");
        assert_eq!((lost.drift, lost.status, lost.history_lost), (Some(3), DriftStatus::HistoryLost, true));
    }
}
