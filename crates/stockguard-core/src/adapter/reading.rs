//! A reading of a sale over its adapter: where every unit is, per product, with the statuses
//! of our own reading plus `UNSETTLED`.
//!
//! A sale we did not build gives us no sequence numbers to correct a reading back to one
//! instant, so a drift is a verdict only when it is *settled*: two passes (each: the Redis
//! stock and the in-flight source, then one DB statement), `[sale] settle_ms` apart (1 s by
//! default), that agree, for that product, on every figure, with the in-flight source
//! attributable (empty, or entries that name their product and order). Nothing of that
//! product moved from the first Redis read to the second DB read, so Redis, the queue and the
//! DB describe one moment. The pause matters: a unit the sale's own request took in Redis and
//! has not yet written anywhere we read (between its `DECR` and its row) is invisible to
//! both passes; a request that outlasts the pause can still be read as drift, which is why
//! the default is generous and the board confirms drift over two readings. Otherwise the product is
//! `UNSETTLED` with what waits in flight and why ([`Unsettled`]): never `OK`, never a drift verdict.
//!
//! The rule, in one place ([`judge`]): **a drift is a verdict only when everything that may be in
//! flight is seen and attributed.** Entries that name no product, a backlog past
//! `[sale] max_inflight`, messages a RabbitMQ consumer holds (seen by the management API) make the
//! product `UNSETTLED` whatever its figures; a queue whose consumers hold what cannot be seen (no
//! management API named) makes every drift `UNSETTLED` (a product whose figures agree is still
//! `OK`). The management API's figures can be two statistics intervals old, so on such a sale a
//! drift is a verdict only on figures read at least that long after the first pass began: a
//! reading that finds one sooner reads a third pass then ([`super::rabbit`]). A stream's entries are looked up
//! among the rows in the stock statement's own snapshot, and what was found is compared between
//! the passes too.
//!
//! The DB-side verdicts need no settling (one statement is one snapshot): `OVERSOLD` when
//! live orders exceed the initial stock, what is left is below zero, or a hash's sold exceeds
//! its total; `LEDGER_MISMATCH` when initial differs from what is left plus what live orders
//! hold, or the reserved column differs from the units of reserving orders.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use super::db::{self, DbRow, Products};
use super::file::{AdapterFile, Inflight, Initial};
use super::inflight::{self, Held, InflightRead};
use super::links::SaleLinks;
use super::lost::{self, LostInReading, LostOptions};
use super::redis_side::{self, RedisStock, Unreadable};
pub use super::unsettled::Unsettled;
use super::AdapterError;
use crate::product_id::ProductId;
use crate::recon::{DriftStatus, Reading};
use crate::redis_link::Link;

/// One product's reading over an adapter: the reading the console shows everywhere, and what
/// only an adapter sale has. JSON: the [`Reading`] fields, then these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdapterReading {
    #[serde(flatten)]
    pub reading: Reading,
    /// Units reserved by unpaid orders (two-phase lock), already taken from `db_stock`.
    pub reserved: i64,
    /// Units the reserving orders hold (what `reserved` should be).
    pub reserving_orders_qty: i64,
    /// Where the initial stock came from: `column`, `number`, `baseline`, or `none` (no
    /// baseline recorded yet: the ledger is not judged).
    pub initial_source: &'static str,
    /// What a negative counter went below zero by (rejected tries, not drift).
    pub redis_excess: i64,
    /// Each bucket's units, for a bucket sale.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub buckets: Vec<Option<i64>>,
    /// Each bucket's Redis units less its own row's, when the sale keeps per-bucket rows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bucket_drift: Vec<i64>,
    /// A hash sale's total and sold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis_total: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis_sold: Option<i64>,
    /// The product's order rows of any status (the count the DB statement takes anyway: the
    /// overview's orders and their rate come from it, with no statement of their own).
    pub order_rows: i64,
    /// Orders accepted, acknowledged by the sale's consumer and never a row (their unit
    /// stranded), within [`lost`]'s default bounds; `null` when the in-flight source keeps
    /// nothing it carried, so they cannot be known.
    pub lost: Option<LostInReading>,
    /// Why the product is `UNSETTLED` (`null` otherwise).
    pub unsettled: Option<Unsettled>,
    /// The stock key that holds what is not a whole number, and what it holds, when the product
    /// is `KEY_UNREADABLE` (`null` otherwise).
    pub unreadable: Option<Unreadable>,
}

/// What one pass saw.
struct Pass {
    redis: HashMap<ProductId, RedisStock>,
    inflight: InflightRead,
    db: HashMap<ProductId, DbRow>,
    /// In-flight order ids that are rows already.
    in_db: HashSet<String>,
    /// Each bucket's units in the sale's per-bucket table, when it has one.
    buckets: HashMap<ProductId, BTreeMap<u64, i64>>,
}

/// One pass: the Redis stock and the in-flight source, then the DB (the stock statement and
/// the in-flight ids looked up among the rows, in one snapshot; a table in-flight source is
/// read with them, in the same snapshot). The Redis stock and a stream are read side by side
/// (each entry is seen whole, so their order does not matter); a RabbitMQ queue after the
/// stock, so that the moment its management figures describe is not before the stock's.
async fn pass<C: Link>(
    file: &AdapterFile,
    links: &SaleLinks<'_, C>,
    products: Products<'_>,
) -> Result<Pass, AdapterError> {
    let ids = products.ids();
    let stock = async {
        match (&file.redis, links.redis) {
            (Some(section), Some(r)) => redis_side::read_stock(r, section, ids)
                .await
                .map_err(|source| AdapterError::Redis { step: "read the stock keys", source }),
            _ => Ok(HashMap::new()),
        }
    };
    let (redis, mut inflight) = if matches!(file.inflight, Inflight::Rabbitmq { .. }) {
        let redis = stock.await?;
        (redis, inflight::read(file, links.redis, ids).await?)
    } else {
        futures_util::try_join!(stock, inflight::read(file, links.redis, ids))?
    };
    let (db, in_db) = match links.db {
        Some(pool) if matches!(file.inflight, Inflight::Table { .. }) => {
            let snapshot = db::read_snapshot(pool, file, products).await?;
            inflight = snapshot.inflight;
            (snapshot.rows, snapshot.in_db)
        }
        Some(pool) if file.stock.is_some() || file.orders.is_some() => {
            let waiting: Vec<&str> =
                inflight.by_product.values().flatten().filter_map(|w| w.order_id.as_deref()).collect();
            db::read_with_lookup(pool, file, products, &waiting).await?
        }
        _ => (HashMap::new(), HashSet::new()),
    };
    let bucket_table = file.redis.as_ref().and_then(|r| r.buckets.as_ref()).and_then(|b| b.db_table());
    let buckets = match (bucket_table, links.db) {
        (Some(table), Some(pool)) => db::bucket_rows(pool, &table, ids).await?,
        _ => HashMap::new(),
    };
    Ok(Pass { redis, inflight, db, in_db, buckets })
}

/// How long after the first pass began a pass's held-message figures must be read to
/// describe a moment after it: on a RabbitMQ sale read through its management API, see
/// [`super::rabbit::figures_age`]; elsewhere any pass will do.
fn figures_age(file: &AdapterFile) -> Option<std::time::Duration> {
    match &file.inflight {
        Inflight::Rabbitmq { management_url: Some(_), stats_interval_ms, .. } => {
            Some(super::rabbit::figures_age(*stats_interval_ms))
        }
        _ => None,
    }
}

/// Reads the given products (all of the sale's when `only` is empty), most severe first.
/// `baselines` are the recorded initial stocks (for `initial = "baseline"`). A source the
/// file names that the sale lacks is refused in one line naming the file's line.
pub async fn read<C: Link>(
    file: &AdapterFile,
    links: &SaleLinks<'_, C>,
    baselines: &HashMap<ProductId, i64>,
    only: &[ProductId],
) -> Result<Vec<AdapterReading>, AdapterError> {
    read_unlocated(file, links, baselines, only).await.map_err(|e| file.locate(e))
}

async fn read_unlocated<C: Link>(
    file: &AdapterFile,
    links: &SaleLinks<'_, C>,
    baselines: &HashMap<ProductId, i64>,
    only: &[ProductId],
) -> Result<Vec<AdapterReading>, AdapterError> {
    let ids = if only.is_empty() {
        db::product_ids(links.db, file).await?
    } else {
        db::as_sales(links.db, file, only).await?
    };
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let products = if only.is_empty() { Products::Every(&ids) } else { Products::Only(&ids) };
    let started = tokio::time::Instant::now();
    let first = pass(file, links, products).await?;
    // The lost-orders scan (acknowledged entries without a row) depends on neither pass: it
    // runs beside the pause and the second pass, on connections of its own.
    let second = async {
        tokio::time::sleep(file.sale.settle()).await;
        let began = tokio::time::Instant::now();
        pass(file, links, products).await.map(|p| (p, began))
    };
    let bounds = LostOptions::default();
    let ((second, began), lost) = futures_util::try_join!(second, lost::scan(file, links, &ids, &bounds))?;
    let age = figures_age(file);
    let fresh = age.is_none_or(|age| began.duration_since(started) >= age);
    let lost = lost.per_product(&ids);
    let judged = |later: &Pass, fresh: bool| -> Result<Vec<AdapterReading>, AdapterError> {
        if file.stock.is_some() {
            if let Some(missing) = ids.iter().find(|id| !later.db.contains_key(id)) {
                return Err(AdapterError::UnknownProduct(missing.clone()));
            }
        }
        Ok(ids
            .iter()
            .map(|id| AdapterReading {
                lost: lost.as_ref().and_then(|m| m.get(id).cloned()),
                ..judge(file, id, &first, later, baselines.get(id).copied(), fresh)
            })
            .collect())
    };
    let mut readings = judged(&second, fresh)?;
    // A drift on figures that may predate the first pass: read again once they cannot (only a
    // drift waits this long; figures that agree need no such proof).
    if let Some(age) = age.filter(|_| readings.iter().any(|r| r.unsettled == Some(Unsettled::StatsStale))) {
        tokio::time::sleep_until(started + age).await;
        let third = pass(file, links, products).await?;
        readings = judged(&third, true)?;
    }
    readings.sort_by(|a, b| {
        let (a, b) = (&a.reading, &b.reading);
        b.status
            .severity()
            .cmp(&a.status.severity())
            .then(b.drift.unwrap_or(0).abs().cmp(&a.drift.unwrap_or(0).abs()))
            .then(a.product_id.cmp(&b.product_id))
    });
    Ok(readings)
}

/// The verdict on one product from two passes.
/// The verdict on one product from two passes; `fresh`: the second pass's held-message figures
/// describe a moment after the first pass began.
fn judge(
    file: &AdapterFile,
    id: &ProductId,
    first: &Pass,
    second: &Pass,
    baseline: Option<i64>,
    fresh: bool,
) -> AdapterReading {
    let row = second.db.get(id).cloned().unwrap_or_default();
    let stock = second.redis.get(id).cloned().unwrap_or_default();
    let has_stock_table = file.stock.is_some();
    let available = row.remaining - row.reserved;
    let (initial, initial_source) = match file.stock.as_ref().map(|s| &s.initial) {
        Some(Initial::Column(_)) => (row.initial, "column"),
        Some(Initial::Fixed(n)) => (Some(*n), "number"),
        Some(Initial::Baseline) => match baseline {
            Some(b) => (Some(b), "baseline"),
            None => (None, "none"),
        },
        None => (stock.total, if stock.total.is_some() { "redis_total" } else { "none" }),
    };

    // In flight, for this product: entries whose row exists are counted once, in the DB.
    let waiting = second.inflight.by_product.get(id).map(Vec::as_slice).unwrap_or_default();
    let pending = not_rows(second, id);
    let inflight_qty: i64 = pending.iter().map(|w| w.units).sum();
    let anonymous = if file.orders.is_some() { waiting.iter().filter(|w| w.order_id.is_none()).count() } else { 0 };
    let moved = first.db.get(id) != second.db.get(id)
        || first.buckets.get(id) != second.buckets.get(id)
        || first.redis.get(id) != second.redis.get(id)
        || first.inflight.by_product.get(id) != second.inflight.by_product.get(id)
        || not_rows(first, id) != pending;
    let held = |p: &Pass| match p.inflight.held {
        Held::Seen(n) if n > 0 => Some(Unsettled::Held { messages: n }),
        _ => None,
    };
    let beyond = second.inflight.beyond_for(id).or(first.inflight.beyond_for(id));
    let unattributed = second.inflight.unattributed.max(first.inflight.unattributed);
    // What may be in flight that this reading cannot attribute: no verdict, whatever the figures.
    let blind = if let Some(b) = &beyond {
        Some(Unsettled::Beyond { depth: b.depth, bound: b.bound })
    } else if unattributed > 0 {
        Some(Unsettled::Unattributed { units: unattributed })
    } else if anonymous > 0 {
        Some(Unsettled::Anonymous { entries: anonymous as i64 })
    } else {
        held(second).or_else(|| held(first))
    };
    let unsettled = blind.or(moved.then_some(Unsettled::Moved));
    // What consumers may hold out of sight: it shows as Redis low, so it keeps a drift from
    // being a verdict (figures that agree are still OK).
    let held_unseen = match (first.inflight.held, second.inflight.held) {
        (_, Held::Unseen { consumers }) | (Held::Unseen { consumers }, _) => Some(Unsettled::HeldUnseen { consumers }),
        (_, Held::NotYet { consumers }) | (Held::NotYet { consumers }, _) => Some(Unsettled::StatsNotYet { consumers }),
        (_, Held::Seen(_)) if !fresh => Some(Unsettled::StatsStale),
        _ => None,
    };
    let mut settled = unsettled.is_none();
    // What waits for this product: its entries and what names no product; past the bound, the
    // whole source's depth (at least the bound when the server does not say).
    let in_flight = match beyond {
        Some(b) => b.depth.unwrap_or(b.bound),
        None => {
            waiting.len() as i64
                + second.inflight.unattributed
                + match second.inflight.held {
                    Held::Seen(n) => n,
                    _ => 0,
                }
        }
    };

    let oversold = initial.is_some_and(|i| row.live > i)
        || (has_stock_table && available < 0)
        || matches!((stock.total, stock.sold), (Some(t), Some(s)) if s > t);
    let ledger_broken = (has_stock_table && initial.is_some_and(|i| i != available + row.live))
        || file.stock.as_ref().is_some_and(|s| s.reserved.is_some()) && row.reserved != row.reserving;
    let expected_redis = if has_stock_table { available - inflight_qty } else { stock.units.unwrap_or(0) };
    let mut unsettled = unsettled;
    if let (true, Some(why), Some(r)) = (settled, held_unseen, stock.units) {
        if has_stock_table && r != expected_redis {
            settled = false;
            unsettled = Some(why);
        }
    }
    // Each bucket against its own row (n-th Redis bucket, bucket number n), when the sale keeps
    // per-bucket rows: the total can agree while one bucket is high and another low.
    let bucket_drift: Vec<i64> = match second.buckets.get(id) {
        Some(rows) if settled => stock
            .buckets
            .iter()
            .enumerate()
            .map(|(n, units)| units.unwrap_or(0) - rows.get(&(n as u64)).copied().unwrap_or(0))
            .collect(),
        _ => Vec::new(),
    };
    let worst_bucket = bucket_drift.iter().copied().max_by_key(|d| (d.abs(), *d)).unwrap_or(0);
    let status = if oversold {
        DriftStatus::Oversold
    } else if ledger_broken {
        DriftStatus::LedgerMismatch
    } else if file.redis.is_none() {
        DriftStatus::Ok
    } else {
        match stock.units {
            None if stock.unreadable.is_some() => DriftStatus::KeyUnreadable,
            None => DriftStatus::KeyMissing,
            Some(_) if !has_stock_table => DriftStatus::Ok,
            Some(_) if !settled => DriftStatus::Unsettled,
            Some(r) if r > expected_redis => DriftStatus::RedisHigh,
            Some(r) if r < expected_redis => DriftStatus::RedisLow,
            Some(_) if bucket_drift.iter().any(|d| *d > 0) => DriftStatus::RedisHigh,
            Some(_) if bucket_drift.iter().any(|d| *d < 0) => DriftStatus::RedisLow,
            Some(_) => DriftStatus::Ok,
        }
    };
    // The total's drift; when the total agrees but a bucket does not, the worst bucket's.
    let drift = match (stock.units, has_stock_table, settled) {
        (Some(r), true, true) if r == expected_redis && worst_bucket != 0 => Some(worst_bucket),
        (Some(r), true, true) => Some(r - expected_redis),
        _ => None,
    };
    AdapterReading {
        reading: Reading {
            product_id: id.clone(),
            name: row.name.clone(),
            initial_stock: initial.unwrap_or(available + row.live),
            db_stock: available,
            live_orders_qty: row.live,
            inflight_pending: inflight_qty,
            pending_release: 0,
            reserved_after_cut: 0,
            redis_stock: stock.units,
            expected_redis,
            drift,
            status,
            cut_seq: 0,
            cut_epoch: 0,
            history_lost: false,
            live_derived: false,
            settled,
            in_flight,
        },
        reserved: row.reserved,
        reserving_orders_qty: row.reserving,
        initial_source,
        redis_excess: stock.excess,
        buckets: stock.buckets,
        bucket_drift,
        redis_total: stock.total,
        redis_sold: stock.sold,
        order_rows: row.rows,
        lost: None,
        unsettled: (status == DriftStatus::Unsettled).then_some(unsettled).flatten(),
        unreadable: (status == DriftStatus::KeyUnreadable).then_some(stock.unreadable).flatten(),
    }
}

/// The product's in-flight entries of a pass that are not rows yet (by that pass's snapshot).
fn not_rows<'p>(pass: &'p Pass, id: &ProductId) -> Vec<&'p inflight::Waiting> {
    let waiting = pass.inflight.by_product.get(id).map(Vec::as_slice).unwrap_or_default();
    waiting.iter().filter(|w| w.order_id.as_ref().is_none_or(|o| !pass.in_db.contains(o))).collect()
}

#[cfg(test)]
#[path = "reading_tests.rs"]
mod tests;
