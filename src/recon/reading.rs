//! An exact reading of many products: Redis first (one atomic script per product,
//! pipelined), then one DB statement, then the sequence numbers of the releases it found.
//!
//! The Redis script takes the product's cut: its stock, its in-flight hash and its sequence
//! number `S` (`sg:{P}:seq`, incremented by every reservation and every applied release).
//! The reading is exact as of that instant, whatever happens between the Redis read and the
//! DB read, because the DB statement (one statement: one consistent snapshot) is corrected
//! back to the cut:
//!
//! - in-flight entries whose order already reached the DB are not counted twice;
//! - orders reserved after the cut (`reserve_seq > S`) that already reached the DB are added
//!   back to the DB stock (they were not yet deducted in Redis at the cut);
//! - releases count as pending unless Redis applied them at a sequence `<= S`.
//!
//! So `expected_redis = db_stock + reserved_after_cut - inflight_pending - pending_release`
//! is what Redis should have held at the cut, and any drift is real.
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
use crate::keys::Keys;

/// One product's stock, everywhere it is. JSON field names are stable (`docs/json.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Reading {
    pub product_id: u64,
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
    /// `None` when the stock key is absent.
    pub drift: Option<i64>,
    pub status: DriftStatus,
    /// The product's sequence number at the Redis cut.
    pub cut_seq: u64,
    /// True when `live_orders_qty` comes from the last full reading's ledger gap rather than
    /// from summing live orders now (see the module docs).
    #[serde(default)]
    pub live_derived: bool,
}

/// Per product, `initial - db_stock - live` as of a full reading.
#[derive(Debug, Clone, Default)]
pub struct LedgerGaps {
    gaps: HashMap<u64, i64>,
}

impl LedgerGaps {
    /// The gaps of the products a full reading covered (derived readings are skipped).
    pub fn from_readings(readings: &[Reading]) -> Self {
        let gaps = readings
            .iter()
            .filter(|r| !r.live_derived)
            .map(|r| (r.product_id, r.initial_stock - r.db_stock - r.live_orders_qty))
            .collect();
        Self { gaps }
    }

    /// True when every product in `ids` has a gap.
    pub fn covers(&self, ids: &[u64]) -> bool {
        ids.iter().all(|id| self.gaps.contains_key(id))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReconError {
    #[error("reading the DB failed: {0}")]
    Db(#[from] sqlx::Error),
    #[error("reading Redis failed: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("unknown product {0}")]
    UnknownProduct(u64),
}

/// The product ids of the sale, in id order.
pub async fn product_ids(pool: &MySqlPool) -> Result<Vec<u64>, ReconError> {
    let ids: Vec<(u64,)> =
        sqlx::query_as("SELECT product_id FROM inventory ORDER BY product_id").fetch_all(pool).await?;
    Ok(ids.into_iter().map(|(id,)| id).collect())
}

struct Cut {
    stock: Option<i64>,
    seq: u64,
    inflight: Vec<(String, i64)>,
}

/// The cut script, hashed once. It is sent by SHA; only when the server does not know it
/// (first use, or after `SCRIPT FLUSH`) is it loaded, so a reading costs no `SCRIPT LOAD`.
static CUT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("cut.lua")));

async fn redis_cuts<C>(redis: &mut C, keys: &Keys, ids: &[u64]) -> Result<Vec<Cut>, ReconError>
where
    C: redis::aio::ConnectionLike + Send,
{
    let pipeline = |load: bool| {
        let mut pipe = redis::pipe();
        if load {
            pipe.load_script(&CUT).ignore();
        }
        for &id in ids {
            pipe.invoke_script(CUT.key(keys.stock(id)).key(keys.seq(id)).key(keys.inflight(id)));
        }
        pipe
    };
    let raw: Vec<(i64, i64, u64, Vec<String>)> = match pipeline(false).query_async(redis).await {
        Err(e) if e.kind() == redis::ErrorKind::NoScriptError => pipeline(true).query_async(redis).await?,
        other => other?,
    };
    Ok(raw
        .into_iter()
        .map(|(exists, stock, seq, flat)| Cut {
            stock: (exists == 1).then_some(stock),
            seq,
            inflight: flat.chunks(2).map(|kv| (kv[0].clone(), kv[1].parse().unwrap_or(0))).collect(),
        })
        .collect())
}

/// What the one DB statement returns, by row kind.
#[derive(Default)]
struct DbSide {
    /// product -> (name, initial, stock, live, reserved_after_cut)
    products: HashMap<u64, (String, i64, i64, i64, i64)>,
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
        .map(|(id, c)| format!("SELECT {id} AS product_id, {} AS cut", c.seq))
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let inflight: Vec<&str> = cuts.iter().flat_map(|c| c.inflight.iter().map(|(no, _)| no.as_str())).collect();
    let inflight_part = if inflight.is_empty() {
        String::new()
    } else {
        format!(
            " UNION ALL SELECT 'F', o.product_id, o.order_no, CAST(o.buy_count AS SIGNED), 0, 0, 0 \
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
                CAST(COALESCE((SELECT SUM(o.buy_count) FROM orders o FORCE INDEX (idx_orders_reserve_seq) \
                               WHERE o.product_id = i.product_id AND o.reserve_seq > c.cut), 0) AS SIGNED) \
         FROM inventory i JOIN ({cut_table}) c ON c.product_id = i.product_id \
         UNION ALL SELECT 'R', x.product_id, x.order_no, CAST(x.qty AS SIGNED), 0, 0, 0 FROM outbox x \
                   WHERE x.status = 'PENDING' AND x.product_id IN ({id_list}) \
         UNION ALL SELECT 'R', x.product_id, x.order_no, CAST(x.qty AS SIGNED), 0, 0, 0 FROM outbox x \
                   WHERE x.status = 'DONE' AND x.done_at >= NOW(3) - INTERVAL 60 SECOND AND x.product_id IN ({id_list})\
         {inflight_part}"
    );
    let mut query = sqlx::query_as::<_, (String, u64, String, i64, i64, i64, i64)>(&sql);
    for no in &inflight {
        query = query.bind(*no);
    }
    let mut side = DbSide::default();
    for (kind, product, text, a, b, c, d) in query.fetch_all(pool).await? {
        match kind.as_str() {
            "P" => {
                side.products.insert(product, (text, a, b, c, d));
            }
            "R" => side.releases.entry(product).or_default().push((text, a)),
            _ => {
                side.in_db.insert(text, a);
            }
        }
    }
    Ok(side)
}

/// Which releases Redis applied at or before each product's cut.
async fn applied_before_cut<C>(
    redis: &mut C,
    keys: &Keys,
    ids: &[u64],
    cuts: &[Cut],
    side: &DbSide,
) -> Result<HashMap<String, bool>, ReconError>
where
    C: redis::aio::ConnectionLike + Send,
{
    let mut asked = Vec::new();
    let mut pipe = redis::pipe();
    for (id, cut) in ids.iter().zip(cuts) {
        if let Some(releases) = side.releases.get(id) {
            let nos: Vec<&str> = releases.iter().map(|(no, _)| no.as_str()).collect();
            pipe.cmd("HMGET").arg(keys.released(*id)).arg(&nos);
            asked.push((cut.seq, nos));
        }
    }
    let mut applied = HashMap::new();
    if asked.is_empty() {
        return Ok(applied);
    }
    let replies: Vec<Vec<Option<u64>>> = pipe.query_async(redis).await?;
    for ((cut, nos), seqs) in asked.into_iter().zip(replies) {
        for (no, seq) in nos.into_iter().zip(seqs) {
            applied.insert(no.to_string(), seq.is_some_and(|s| s <= cut));
        }
    }
    Ok(applied)
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
    C: redis::aio::ConnectionLike + Send,
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
    C: redis::aio::ConnectionLike + Send,
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
    C: redis::aio::ConnectionLike + Send,
{
    let ids = if only.is_empty() { product_ids(pool).await? } else { only.to_vec() };
    if ids.is_empty() {
        return Ok((Vec::new(), ReadTimings::default()));
    }
    let gaps = gaps.filter(|g| g.covers(&ids));
    let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1000.0;
    let t = std::time::Instant::now();
    let cuts = redis_cuts(redis, keys, &ids).await?;
    let mut timings = ReadTimings { redis_ms: ms(t), db_ms: 0.0 };
    let t = std::time::Instant::now();
    let side = db_side(pool, &ids, &cuts, gaps.is_none()).await?;
    timings.db_ms = ms(t);
    let t = std::time::Instant::now();
    let applied = applied_before_cut(redis, keys, &ids, &cuts, &side).await?;
    timings.redis_ms += ms(t);

    let mut readings = Vec::with_capacity(ids.len());
    for (id, cut) in ids.iter().zip(&cuts) {
        let Some((name, initial, stock, summed, after_cut)) = side.products.get(id).cloned() else {
            return Err(ReconError::UnknownProduct(*id));
        };
        let live = match gaps {
            Some(g) => initial - stock - g.gaps[id],
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
            product_id: *id,
            status: DriftStatus::classify(initial, stock, live, cut.stock, expected_redis),
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
            live_derived: gaps.is_some(),
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
