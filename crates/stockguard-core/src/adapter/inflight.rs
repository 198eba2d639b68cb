//! The in-flight side of an adapter reading: the orders a buyer was answered for that are not
//! DB rows yet, where the sale keeps them.
//!
//! - A Redis stream read by a consumer group: the entries not yet delivered (after the
//!   group's last-delivered id) and those delivered but not acknowledged (its pending list),
//!   each with its product and, when the sale writes one, its order id. Reads only: no
//!   `XREADGROUP`, no `XACK`, the group's cursor untouched.
//! - A RabbitMQ queue ([`super::rabbit`]): its messages ready, by a passive declare, and those
//!   its consumers hold unacknowledged, by the management API when the file names it. Its
//!   messages cannot be read without taking them, so they are in flight but not attributable
//!   to a product; what consumers hold cannot be seen at all without the management API.
//! - A BullMQ queue: the jobs waiting, paused, active, prioritized, delayed or waiting for
//!   children, with each job's `data`, read in one Lua script so that a job a worker moves
//!   from one list to another (or to completed) is seen exactly once; each job's product and
//!   order id are fields of its JSON `data`. Reads only.
//! - A table of pending rows in the sale's database: read by [`super::db`] in the snapshot of
//!   the orders, not here.
//!
//! Each source reads at most `[sale] max_inflight` entries; a backlog past it is a
//! [`Beyond`], said with its depth: never cut short in silence.

use std::collections::HashMap;

use redis::Value;

use super::file::{AdapterFile, Inflight};
use super::missing::Missing;
use super::rabbit;
use super::AdapterError;
use crate::product_id::{IdKind, ProductId};
use crate::redis_link::Link;

/// One accepted order waiting in the in-flight source.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Waiting {
    pub order_id: Option<String>,
    pub units: i64,
}

/// What one pass found in flight.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InflightRead {
    /// Entries attributed to a product, sorted (so two passes compare).
    pub by_product: HashMap<ProductId, Vec<Waiting>>,
    /// Units waiting that name no product (a queue whose messages cannot be read, an entry
    /// without the product field).
    pub unattributed: i64,
    /// What consumers hold unacknowledged, where a source can hold messages out of sight.
    pub held: Held,
    /// Backlogs past the bound, not read.
    pub beyond: Vec<Beyond>,
}

/// Messages a queue's consumers hold unacknowledged: in no queue depth and in no row yet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Held {
    /// The source holds nothing out of sight (a stream's pending list is read; a queue with
    /// no consumer holds nothing).
    #[default]
    Nothing,
    /// Held messages, by the RabbitMQ management API (figures that may be older than the pass:
    /// see [`super::rabbit`]).
    Seen(i64),
    /// The queue has consumers and no management API is named: what they hold cannot be seen.
    Unseen { consumers: i64 },
    /// The queue has consumers and the management API does not describe it yet.
    NotYet { consumers: i64 },
}

/// A backlog past `[sale] max_inflight`: the entries of one source not read, so not attributed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Beyond {
    /// The product whose source it is (a stream of its own), or `None` for a source every
    /// product shares.
    pub product: Option<ProductId>,
    /// The source's whole depth, read and not (`None`: the server does not say).
    pub depth: Option<i64>,
    /// The bound it passed.
    pub bound: i64,
}

impl InflightRead {
    /// Everything waiting that this pass knows of (a backlog past the bound by its depth where
    /// known; messages held out of sight are not known).
    pub fn depth(&self) -> i64 {
        let read: i64 = self.by_product.values().flatten().map(|w| w.units).sum();
        let beyond: i64 = self.beyond.iter().map(|b| b.depth.unwrap_or(b.bound) - b.bound).sum();
        let held = match self.held {
            Held::Seen(n) => n,
            _ => 0,
        };
        self.unattributed + read + beyond + held
    }

    /// The backlog past the bound that `product`'s reading depends on, if any.
    pub fn beyond_for(&self, product: &ProductId) -> Option<Beyond> {
        self.beyond.iter().find(|b| b.product.as_ref().is_none_or(|p| p == product)).cloned()
    }
}

/// Reads the file's in-flight source once (for a table source, nothing: it is read in the
/// DB's snapshot).
pub async fn read<C: Link>(
    file: &AdapterFile,
    redis: Option<&C>,
    ids: &[ProductId],
) -> Result<InflightRead, AdapterError> {
    let bound = file.sale.max_inflight();
    // An entry's product field, read as the sale's ids are (text stays text).
    let kind = IdKind::of(ids);
    match &file.inflight {
        Inflight::None => Ok(InflightRead::default()),
        Inflight::RedisStream { stream, group, product_field, order_id_field } => {
            let redis = redis.expect("checked by AdapterFile::parse: a stream needs [redis]");
            let keys: Vec<(Option<ProductId>, String)> = if stream.per_product() {
                ids.iter().map(|id| (Some(id.clone()), stream.key(id))).collect()
            } else {
                vec![(None, stream.as_str().to_string())]
            };
            let mut read = InflightRead::default();
            for (owner, key) in keys {
                // A stream every product shares must exist: one that does not shows nothing in
                // flight, and a drift read then is no drift (a product's own stream may not
                // exist before its first order).
                let entries = match stream_waiting(redis, &key, group, bound).await? {
                    None if owner.is_none() => return Err(AdapterError::Missing(Missing::Stream { stream: key })),
                    None => StreamWaiting { fields: Vec::new(), beyond: None },
                    Some(entries) => entries,
                };
                if let Some(depth) = entries.beyond {
                    read.beyond.push(Beyond { product: owner.clone(), depth, bound: bound as i64 });
                }
                for fields in &entries.fields {
                    let product =
                        fields.get(product_field).and_then(|p| ProductId::read_as(p, kind)).or_else(|| owner.clone());
                    let order_id = order_id_field.as_ref().and_then(|f| fields.get(f)).cloned();
                    match product {
                        Some(p) => read.by_product.entry(p).or_default().push(Waiting { order_id, units: 1 }),
                        None => read.unattributed += 1,
                    }
                }
            }
            for list in read.by_product.values_mut() {
                list.sort();
            }
            Ok(read)
        }
        Inflight::Rabbitmq { url, queue, management_url, .. } => {
            let look = rabbit::look(url, queue, management_url.as_deref()).await?;
            let held = match look.held {
                rabbit::HeldFigure::Count(n) => Held::Seen(n),
                _ if look.consumers == 0 => Held::Nothing,
                rabbit::HeldFigure::NotYet => Held::NotYet { consumers: look.consumers },
                rabbit::HeldFigure::NotNamed => Held::Unseen { consumers: look.consumers },
            };
            Ok(InflightRead { unattributed: look.ready, held, ..Default::default() })
        }
        Inflight::Bullmq { queue, prefix, product_field, order_id_field } => {
            let redis = redis.expect("checked by AdapterFile::parse: a BullMQ queue needs [redis]");
            let jobs = bullmq_jobs(redis, prefix, queue, bound).await?;
            let mut read = InflightRead::default();
            if jobs.total > jobs.data.len() as i64 {
                read.beyond.push(Beyond { product: None, depth: Some(jobs.total), bound: bound as i64 });
            }
            for data in &jobs.data {
                let fields = data.as_deref().and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok());
                let field = |name: &str| fields.as_ref().and_then(|f| f.get(name)).and_then(json_text);
                let order_id = order_id_field.as_deref().and_then(field);
                match field(product_field).and_then(|p| ProductId::read_as(&p, kind)) {
                    Some(p) => read.by_product.entry(p).or_default().push(Waiting { order_id, units: 1 }),
                    None => read.unattributed += 1,
                }
            }
            for list in read.by_product.values_mut() {
                list.sort();
            }
            Ok(read)
        }
        // Read with the orders, in one snapshot of the sale's database (`db::read_snapshot`).
        Inflight::Table { .. } => Ok(InflightRead::default()),
    }
}

/// A JSON scalar as text (a product or order id may be written as a number or a string).
fn json_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The lists and sorted sets of a BullMQ queue whose jobs are not finished: the lists first.
const BULLMQ_LISTS: [&str; 3] = ["wait", "paused", "active"];
const BULLMQ_SETS: [&str; 3] = ["prioritized", "delayed", "waiting-children"];

/// Every unfinished job's id, then each one's `data` (nil for a job whose hash is gone), in
/// one step: BullMQ moves a job between these keys in scripts of its own, so a reading in
/// several commands could see a job twice or not at all. Returns the number of jobs first;
/// only the first `ARGV[2]` are read.
const BULLMQ_READ: &str = r"
local ids = {}
for i = 1, 3 do
  for _, id in ipairs(redis.call('LRANGE', KEYS[i], 0, -1)) do ids[#ids + 1] = id end
end
for i = 4, #KEYS do
  for _, id in ipairs(redis.call('ZRANGE', KEYS[i], 0, -1)) do ids[#ids + 1] = id end
end
local out = { #ids }
for i = 1, math.min(#ids, tonumber(ARGV[2])) do
  out[#out + 1] = redis.call('HGET', ARGV[1] .. ids[i], 'data') or false
end
return out";

/// What one read of a BullMQ queue found.
struct BullmqJobs {
    /// Each job's `data` (None: its hash is gone, or has no data), the first `bound` only.
    data: Vec<Option<String>>,
    /// Every unfinished job, read or not.
    total: i64,
}

async fn bullmq_jobs<C: Link>(redis: &C, prefix: &str, queue: &str, bound: usize) -> Result<BullmqJobs, AdapterError> {
    let base = format!("{prefix}:{queue}:");
    let script = redis::Script::new(BULLMQ_READ);
    let mut script = script.prepare_invoke();
    for name in BULLMQ_LISTS.iter().chain(&BULLMQ_SETS) {
        script.key(format!("{base}{name}"));
    }
    script.arg(&base).arg(bound);
    let reply: Vec<Value> = script
        .invoke_async(&mut redis.clone())
        .await
        .map_err(|source| AdapterError::Redis { step: "read the BullMQ queue's jobs", source })?;
    let mut reply = reply.into_iter();
    let total: i64 = reply
        .next()
        .map(|v| redis::from_redis_value(&v))
        .transpose()
        .map_err(|source| AdapterError::Redis { step: "read the BullMQ queue's job count", source })?
        .unwrap_or(0);
    let data: Vec<Option<String>> = reply
        .map(|v| redis::from_redis_value(&v))
        .collect::<Result<_, _>>()
        .map_err(|source| AdapterError::Redis { step: "read the BullMQ jobs' data", source })?;
    Ok(BullmqJobs { total, data })
}

/// Whether the queue has any of its keys (a queue BullMQ never wrote has none; its `meta`
/// hash or `id` counter exist once a job was added).
pub async fn bullmq_exists<C: Link>(redis: &C, prefix: &str, queue: &str) -> Result<bool, AdapterError> {
    let base = format!("{prefix}:{queue}:");
    let keys: Vec<String> = ["id", "meta"].iter().chain(&BULLMQ_LISTS).map(|k| format!("{base}{k}")).collect();
    let mut found = 0i64;
    for key in keys {
        let n: i64 = redis::cmd("EXISTS")
            .arg(key)
            .query_async(&mut redis.clone())
            .await
            .map_err(|source| AdapterError::Redis { step: "find the BullMQ queue", source })?;
        found += n;
    }
    Ok(found > 0)
}

/// The stream's groups and the pending list of one (at most `ARGV[2]` entries), read at one
/// instant. A missing group answers an empty pending list (the caller names it missing).
static GROUP_AND_PENDING: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
local pending = {}
for _, g in ipairs(groups) do
  for i = 1, #g, 2 do
    if g[i] == 'name' and g[i + 1] == ARGV[1] then
      pending = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', tonumber(ARGV[2]))
    end
  end
end
return { groups, pending }",
    )
});

/// One entry of `XPENDING`'s extended form: id, consumer, idle ms, deliveries.
type PendingEntry = (String, String, u64, u64);

/// What one stream holds that its group has not acknowledged.
struct StreamWaiting {
    /// Each entry's fields: pending first, then undelivered, at most the bound.
    fields: Vec<HashMap<String, String>>,
    /// Set when the stream holds more than the bound: its whole depth (pending and
    /// undelivered), or `None` when the server does not say how many are undelivered.
    beyond: Option<Option<i64>>,
}

/// The entries of one stream that the group has not acknowledged: pending (delivered, not
/// acknowledged) and undelivered (after the group's last-delivered id), at most `bound` of
/// them; the depth past it is counted, not dropped. `None` when the stream does not exist.
async fn stream_waiting<C: Link>(
    redis: &C,
    key: &str,
    group: &str,
    bound: usize,
) -> Result<Option<StreamWaiting>, AdapterError> {
    let step = |step: &'static str| move |source| AdapterError::Redis { step, source };
    let mut conn = redis.clone();
    let exists: bool = redis::cmd("EXISTS").arg(key).query_async(&mut conn).await.map_err(step("find the stream"))?;
    if !exists {
        return Ok(None);
    }
    // The group's cursor and counts and its pending list in one step: an XACK or an
    // XREADGROUP between two commands would make them disagree (a pending count above the
    // list read, or an entry both pending and after the cursor).
    let (groups, pending): (Vec<HashMap<String, Value>>, Vec<PendingEntry>) = GROUP_AND_PENDING
        .key(key)
        .arg(group)
        .arg(bound)
        .invoke_async(&mut conn)
        .await
        .map_err(step("read the stream's group and pending entries"))?;
    let Some(info) = groups
        .iter()
        .find(|g| g.get("name").and_then(|v| redis::from_redis_value::<String>(v).ok()).as_deref() == Some(group))
    else {
        return Err(AdapterError::Missing(Missing::Group { stream: key.to_string(), group: group.to_string() }));
    };
    let last: String = info
        .get("last-delivered-id")
        .map(redis::from_redis_value)
        .transpose()
        .map_err(step("read the group's last-delivered id"))?
        .unwrap_or_else(|| "0-0".into());
    // Redis 7 says how many entries the group has not been delivered (`lag`; nil when it
    // cannot tell, absent before 7).
    let lag: Option<i64> = info.get("lag").and_then(|v| redis::from_redis_value(v).ok());
    let pending_count: i64 = info
        .get("pending")
        .map(redis::from_redis_value)
        .transpose()
        .map_err(step("read the group's pending count"))?
        .unwrap_or(0);
    let room = bound.saturating_sub(pending.len());
    // One more than there is room for: whether undelivered entries lie past the bound.
    let undelivered: Vec<(String, HashMap<String, String>)> = redis::cmd("XRANGE")
        .arg(key)
        .arg(format!("({last}"))
        .arg("+")
        .arg("COUNT")
        .arg(room + 1)
        .query_async(&mut conn)
        .await
        .map_err(step("read the undelivered entries"))?;
    let past_room = undelivered.len() > room;
    let beyond = (pending_count > pending.len() as i64 || past_room).then(|| match (lag, past_room) {
        (Some(lag), _) => Some(pending_count + lag),
        (None, false) => Some(pending_count + undelivered.len() as i64),
        (None, true) => None,
    });
    let mut out: Vec<HashMap<String, String>> = Vec::with_capacity(pending.len() + room.min(undelivered.len()));
    if !pending.is_empty() {
        let mut pipe = redis::pipe();
        for (id, ..) in &pending {
            pipe.cmd("XRANGE").arg(key).arg(id).arg(id);
        }
        let entries: Vec<Vec<(String, HashMap<String, String>)>> =
            pipe.query_async(&mut conn).await.map_err(step("read the pending entries' fields"))?;
        // An entry deleted while pending (XDEL) names nothing: it is counted without a product.
        for found in entries {
            out.push(found.into_iter().next().map(|(_, f)| f).unwrap_or_default());
        }
    }
    out.extend(undelivered.into_iter().take(room).map(|(_, f)| f));
    Ok(Some(StreamWaiting { fields: out, beyond }))
}
