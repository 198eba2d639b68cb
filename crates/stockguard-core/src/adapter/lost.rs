//! Accepted but lost: orders a buyer was told were taken that never became a row, their unit
//! stranded (issue 29).
//!
//! Only a source that keeps what it carried can show them. A Redis stream keeps its entries
//! after `XACK` until it is trimmed: an entry the group has delivered (at or before its
//! last-delivered id) that is no longer in its pending list was acknowledged, and when the
//! order id it carries has no row in the orders table, the consumer let it go without writing
//! it (a swallowed error, a dropped "stock short"). Its unit left Redis and is nowhere: the
//! reading shows it as `REDIS_LOW`, and `lost` names the order.
//!
//! The scan is bounded: the newest `limit` delivered entries (10,000 by default) at or after
//! `since` (the stream's start by default), per stream. A reply that filled the limit says so
//! (`reached_limit`): older entries were not looked at. Reads only: `XINFO`, `XREVRANGE`,
//! `XPENDING` and one `SELECT` per 5,000 ids; the group's cursor untouched.
//!
//! A RabbitMQ queue forgets a message once it is acknowledged, and a sale with no in-flight
//! source keeps nothing between the answer and the row: for them lost orders *cannot be
//! known*, which is said, never shown as an empty list.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::file::{AdapterFile, Inflight};
use super::links::SaleLinks;
use super::missing::Missing;
use super::{db, AdapterError};
use crate::product_id::{IdKind, ProductId};
use crate::redis_link::Link;

/// How many delivered entries one scan reads at most, per stream, by default.
pub const DEFAULT_LIMIT: usize = 10_000;

/// The bounds of a scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostOptions {
    /// The oldest entry id looked at (`-`: the stream's start).
    pub since: String,
    /// The newest delivered entries read at most, per stream.
    pub limit: usize,
}

impl Default for LostOptions {
    fn default() -> Self {
        Self { since: "-".into(), limit: DEFAULT_LIMIT }
    }
}

/// One accepted order that never became a row.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LostOrder {
    pub product_id: ProductId,
    pub order_id: String,
    /// The stream entry that carried it.
    pub entry_id: String,
    pub stream: String,
}

/// What a scan found, or why nothing can be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LostScan {
    /// False when the source keeps nothing it carried (or its entries name no order): then
    /// `unknowable_because` says why and the rest is empty.
    pub knowable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknowable_because: Option<String>,
    /// Lost orders, by product then order id.
    pub orders: Vec<LostOrder>,
    /// Delivered entries read.
    pub scanned: usize,
    /// Of those, acknowledged (no longer pending).
    pub acknowledged: usize,
    /// Acknowledged entries without an order id or a product: they cannot be judged.
    pub unjudged: usize,
    pub since: String,
    pub limit: usize,
    /// A stream filled the limit: its older delivered entries were not looked at.
    pub reached_limit: bool,
}

/// One product's lost orders, as the reading carries them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LostInReading {
    pub count: usize,
    pub order_ids: Vec<String>,
}

impl LostScan {
    /// A scan that found nothing yet, within `opts`.
    fn empty(opts: &LostOptions) -> Self {
        Self {
            knowable: true,
            unknowable_because: None,
            orders: Vec::new(),
            scanned: 0,
            acknowledged: 0,
            unjudged: 0,
            since: opts.since.clone(),
            limit: opts.limit,
            reached_limit: false,
        }
    }

    fn unknowable(why: impl Into<String>, opts: &LostOptions) -> Self {
        Self { knowable: false, unknowable_because: Some(why.into()), ..Self::empty(opts) }
    }

    /// Each product's lost order ids (every product in `ids` present, empty when none was
    /// lost); `None` when lost orders cannot be known for this source.
    pub fn per_product(&self, ids: &[ProductId]) -> Option<HashMap<ProductId, LostInReading>> {
        if !self.knowable {
            return None;
        }
        let mut out: HashMap<ProductId, LostInReading> =
            ids.iter().map(|id| (id.clone(), LostInReading::default())).collect();
        for o in &self.orders {
            let entry = out.entry(o.product_id.clone()).or_default();
            entry.count += 1;
            entry.order_ids.push(o.order_id.clone());
        }
        Some(out)
    }
}

/// Why lost orders cannot be known for this file, or the stream's fields when they can.
fn stream_of(file: &AdapterFile) -> Result<(&super::template::Template, &str, &str, &str), String> {
    match &file.inflight {
        Inflight::None => Err("the adapter names no in-flight source ([inflight] source = \"none\"): \
                               nothing is kept between the answer and the row"
            .into()),
        Inflight::Rabbitmq { .. } => {
            Err("RabbitMQ keeps nothing of a message once it is acknowledged: what a consumer dropped is gone".into())
        }
        Inflight::Bullmq { .. } => Err("reading BullMQ's completed and failed jobs for lost orders is not built: \
                                        only a Redis stream's acknowledged entries are listed"
            .into()),
        Inflight::Table { .. } => Err("a request table's rows that ended without an order are not read for lost \
                                       orders: only a Redis stream's acknowledged entries are listed"
            .into()),
        Inflight::RedisStream { stream, group, product_field, order_id_field } => {
            let Some(order_field) = order_id_field else {
                return Err("the stream's entries carry no order id ([inflight] order_id_field)".into());
            };
            if file.orders.as_ref().is_none_or(|o| o.order_id.is_none()) {
                return Err("the adapter names no order id column ([orders] order_id) to look entries up by".into());
            }
            Ok((stream, group, product_field, order_field))
        }
    }
}

/// Lists the accepted-but-lost orders of the given products (see the module docs).
pub async fn scan<C: Link>(
    file: &AdapterFile,
    links: &SaleLinks<'_, C>,
    ids: &[ProductId],
    opts: &LostOptions,
) -> Result<LostScan, AdapterError> {
    if opts.since != "-" && !is_entry_id(&opts.since) {
        return Err(AdapterError::Refused(format!(
            "--since {:?} is not a stream entry id (`<ms>` or `<ms>-<seq>`, or `-` for the stream's start)",
            opts.since
        )));
    }
    if opts.limit == 0 {
        return Err(AdapterError::Refused("--limit must be at least 1".into()));
    }
    let (template, group, product_field, order_field) = match stream_of(file) {
        Ok(fields) => fields,
        Err(why) => return Ok(LostScan::unknowable(why, opts)),
    };
    let (Some(redis), Some(pool), Some(orders)) = (links.redis, links.db, &file.orders) else {
        return Ok(LostScan::unknowable("the sale's Redis and database are both needed to find lost orders", opts));
    };
    let keys: Vec<(Option<ProductId>, String)> = if template.per_product() {
        ids.iter().map(|id| (Some(id.clone()), template.key(id))).collect()
    } else {
        vec![(None, template.as_str().to_string())]
    };
    let wanted: HashSet<&ProductId> = ids.iter().collect();
    let kind = IdKind::of(ids);
    let mut out = LostScan::empty(opts);
    // (product, order id, entry id, stream) of every acknowledged entry that names both.
    let mut candidates: Vec<LostOrder> = Vec::new();
    for (owner, key) in keys {
        let acked = acknowledged_entries(redis, &key, group, opts).await?;
        out.scanned += acked.scanned;
        out.reached_limit |= acked.scanned >= opts.limit;
        out.acknowledged += acked.entries.len();
        for (entry_id, fields) in acked.entries {
            let product = fields.get(product_field).and_then(|p| ProductId::read_as(p, kind)).or_else(|| owner.clone());
            match (product, fields.get(order_field)) {
                (Some(p), Some(order)) if wanted.contains(&p) => {
                    candidates.push(LostOrder { product_id: p, order_id: order.clone(), entry_id, stream: key.clone() })
                }
                (Some(p), Some(_)) if !wanted.contains(&p) => {}
                _ => out.unjudged += 1,
            }
        }
    }
    let order_ids: Vec<&str> = candidates.iter().map(|c| c.order_id.as_str()).collect();
    let present = db::orders_present(pool, orders, &order_ids).await?;
    out.orders = candidates.into_iter().filter(|c| !present.contains(&c.order_id)).collect();
    out.orders.sort();
    Ok(out)
}

/// `<ms>` or `<ms>-<seq>`.
fn is_entry_id(id: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match id.split_once('-') {
        Some((ms, seq)) => digits(ms) && digits(seq),
        None => digits(id),
    }
}

struct Acknowledged {
    /// Delivered entries read (acknowledged or not).
    scanned: usize,
    entries: Vec<(String, HashMap<String, String>)>,
}

/// The newest delivered entries of one stream within the bounds, less those still pending.
async fn acknowledged_entries<C: Link>(
    redis: &C,
    key: &str,
    group: &str,
    opts: &LostOptions,
) -> Result<Acknowledged, AdapterError> {
    let step = |step: &'static str| move |source| AdapterError::Redis { step, source };
    let mut conn = redis.clone();
    let exists: bool = redis::cmd("EXISTS").arg(key).query_async(&mut conn).await.map_err(step("find the stream"))?;
    if !exists {
        return Ok(Acknowledged { scanned: 0, entries: Vec::new() });
    }
    let groups: Vec<HashMap<String, redis::Value>> = redis::cmd("XINFO")
        .arg("GROUPS")
        .arg(key)
        .query_async(&mut conn)
        .await
        .map_err(step("read the stream's groups"))?;
    let name_of =
        |g: &HashMap<String, redis::Value>| g.get("name").and_then(|v| redis::from_redis_value::<String>(v).ok());
    let Some(info) = groups.iter().find(|g| name_of(g).as_deref() == Some(group)) else {
        return Err(AdapterError::Missing(Missing::Group { stream: key.to_string(), group: group.to_string() }));
    };
    let last: String = match info.get("last-delivered-id") {
        Some(v) => redis::from_redis_value(v).map_err(step("read the group's last-delivered id"))?,
        None => "0-0".into(),
    };
    if last == "0-0" {
        return Ok(Acknowledged { scanned: 0, entries: Vec::new() });
    }
    let delivered: Vec<(String, HashMap<String, String>)> = redis::cmd("XREVRANGE")
        .arg(key)
        .arg(&last)
        .arg(&opts.since)
        .arg("COUNT")
        .arg(opts.limit)
        .query_async(&mut conn)
        .await
        .map_err(step("read the delivered entries"))?;
    let Some(oldest) = delivered.last().map(|(id, _)| id.clone()) else {
        return Ok(Acknowledged { scanned: 0, entries: Vec::new() });
    };
    // Pending entries in the same id range: at most one per entry read, and those deleted
    // while pending (XDEL), hence the margin.
    let pending: Vec<(String, String, u64, u64)> = redis::cmd("XPENDING")
        .arg(key)
        .arg(group)
        .arg(&oldest)
        .arg(&last)
        .arg(opts.limit.saturating_mul(2))
        .query_async(&mut conn)
        .await
        .map_err(step("read the pending entries"))?;
    let pending: HashSet<String> = pending.into_iter().map(|(id, ..)| id).collect();
    let scanned = delivered.len();
    let entries = delivered.into_iter().filter(|(id, _)| !pending.contains(id)).collect();
    Ok(Acknowledged { scanned, entries })
}

#[cfg(test)]
mod tests {
    use super::is_entry_id;

    #[test]
    fn an_entry_id_is_milliseconds_and_an_optional_sequence() {
        for ok in ["0", "1700000000000", "1700000000000-3"] {
            assert!(is_entry_id(ok), "{ok}");
        }
        for bad in ["", "-", "1-", "-1", "1-2-3", "abc", "1700000000000-x", "$"] {
            assert!(!is_entry_id(bad), "{bad}");
        }
    }
}
