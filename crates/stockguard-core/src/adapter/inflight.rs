//! The in-flight side of an adapter reading: the orders a buyer was answered for that are not
//! DB rows yet, where the sale keeps them.
//!
//! - A Redis stream read by a consumer group: the entries not yet delivered (after the
//!   group's last-delivered id) and those delivered but not acknowledged (its pending list),
//!   each with its product and, when the sale writes one, its order id. Reads only: no
//!   `XREADGROUP`, no `XACK`, the group's cursor untouched.
//! - A RabbitMQ queue: its depth by a passive declare. Its messages cannot be read without
//!   taking them, so they are in flight but not attributable to a product; and messages a
//!   consumer holds unacknowledged are not counted by AMQP at all (the reading's two passes
//!   see the rows they become).
//! - A BullMQ queue: the jobs waiting, paused, active, prioritized, delayed or waiting for
//!   children, with each job's `data`, read in one Lua script so that a job a worker moves
//!   from one list to another (or to completed) is seen exactly once; each job's product and
//!   order id are fields of its JSON `data`. Reads only.
//! - A table of pending rows in the sale's database: read by [`super::db`] in the snapshot of
//!   the orders, not here.

use std::collections::HashMap;

use redis::Value;

use super::file::Inflight;
use super::missing::Missing;
use super::AdapterError;
use crate::redis_link::Link;

/// Entries read past in one pass; a longer backlog is reported as not attributable.
pub(super) const MAX_ENTRIES: usize = 100_000;

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
    pub by_product: HashMap<u64, Vec<Waiting>>,
    /// Units waiting that name no product (a queue whose messages cannot be read, an entry
    /// without the product field, a backlog beyond what one pass reads).
    pub unattributed: i64,
}

impl InflightRead {
    /// Everything waiting.
    pub fn depth(&self) -> i64 {
        self.unattributed + self.by_product.values().flatten().map(|w| w.units).sum::<i64>()
    }
}

/// Reads the in-flight source once.
pub async fn read<C: Link>(inflight: &Inflight, redis: Option<&C>, ids: &[u64]) -> Result<InflightRead, AdapterError> {
    match inflight {
        Inflight::None => Ok(InflightRead::default()),
        Inflight::RedisStream { stream, group, product_field, order_id_field } => {
            let redis = redis.expect("checked by AdapterFile::parse: a stream needs [redis]");
            let keys: Vec<(Option<u64>, String)> = if stream.per_product() {
                ids.iter().map(|&id| (Some(id), stream.key(id))).collect()
            } else {
                vec![(None, stream.as_str().to_string())]
            };
            let mut read = InflightRead::default();
            for (owner, key) in keys {
                let entries = stream_waiting(redis, &key, group).await?;
                for fields in &entries {
                    let product = fields.get(product_field).and_then(|p| p.parse::<u64>().ok()).or(owner);
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
        Inflight::Rabbitmq { url, queue, .. } => {
            let depth = rabbitmq_depth(url, queue).await?;
            Ok(InflightRead { by_product: HashMap::new(), unattributed: depth as i64 })
        }
        Inflight::Bullmq { queue, prefix, product_field, order_id_field } => {
            let redis = redis.expect("checked by AdapterFile::parse: a BullMQ queue needs [redis]");
            let jobs = bullmq_jobs(redis, prefix, queue).await?;
            let mut read = InflightRead { unattributed: jobs.beyond, ..Default::default() };
            for data in &jobs.data {
                let fields = data.as_deref().and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok());
                let field = |name: &str| fields.as_ref().and_then(|f| f.get(name)).and_then(json_text);
                let order_id = order_id_field.as_deref().and_then(field);
                match field(product_field).and_then(|p| p.parse::<u64>().ok()) {
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
    /// Each job's `data` (None: its hash is gone, or has no data).
    data: Vec<Option<String>>,
    /// Jobs beyond what one pass reads.
    beyond: i64,
}

async fn bullmq_jobs<C: Link>(redis: &C, prefix: &str, queue: &str) -> Result<BullmqJobs, AdapterError> {
    let base = format!("{prefix}:{queue}:");
    let script = redis::Script::new(BULLMQ_READ);
    let mut script = script.prepare_invoke();
    for name in BULLMQ_LISTS.iter().chain(&BULLMQ_SETS) {
        script.key(format!("{base}{name}"));
    }
    script.arg(&base).arg(MAX_ENTRIES);
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
    Ok(BullmqJobs { beyond: total - data.len() as i64, data })
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

/// The entries of one stream that the group has not acknowledged: pending and undelivered.
async fn stream_waiting<C: Link>(
    redis: &C,
    key: &str,
    group: &str,
) -> Result<Vec<HashMap<String, String>>, AdapterError> {
    let step = |step: &'static str| move |source| AdapterError::Redis { step, source };
    let mut conn = redis.clone();
    let exists: bool = redis::cmd("EXISTS").arg(key).query_async(&mut conn).await.map_err(step("find the stream"))?;
    if !exists {
        return Ok(Vec::new());
    }
    let groups: Vec<HashMap<String, Value>> = redis::cmd("XINFO")
        .arg("GROUPS")
        .arg(key)
        .query_async(&mut conn)
        .await
        .map_err(step("read the stream's groups"))?;
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
    let undelivered: Vec<(String, HashMap<String, String>)> = redis::cmd("XRANGE")
        .arg(key)
        .arg(format!("({last}"))
        .arg("+")
        .arg("COUNT")
        .arg(MAX_ENTRIES)
        .query_async(&mut conn)
        .await
        .map_err(step("read the undelivered entries"))?;
    let pending: Vec<(String, String, u64, u64)> = redis::cmd("XPENDING")
        .arg(key)
        .arg(group)
        .arg("-")
        .arg("+")
        .arg(MAX_ENTRIES)
        .query_async(&mut conn)
        .await
        .map_err(step("read the pending entries"))?;
    let mut out: Vec<HashMap<String, String>> = undelivered.into_iter().map(|(_, f)| f).collect();
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
    Ok(out)
}

/// The number of ready messages in a queue, by a passive declare (which creates nothing).
pub async fn rabbitmq_depth(url: &str, queue: &str) -> Result<u32, AdapterError> {
    use lapin::options::QueueDeclareOptions;
    use lapin::types::FieldTable;
    let step = |step: &'static str| move |source| AdapterError::Amqp { step, source };
    let conn = lapin::Connection::connect(url, lapin::ConnectionProperties::default())
        .await
        .map_err(step("connect to RabbitMQ"))?;
    let channel = conn.create_channel().await.map_err(step("open a channel"))?;
    let declared = channel
        .queue_declare(queue.into(), QueueDeclareOptions { passive: true, ..Default::default() }, FieldTable::default())
        .await;
    let _ = conn.close(200, "".into()).await;
    match declared {
        Ok(q) => Ok(q.message_count()),
        Err(e) if is_not_found(&e) => Err(AdapterError::Missing(Missing::RabbitQueue { queue: queue.to_string() })),
        Err(source) => Err(AdapterError::Amqp { step: "read the queue's depth", source }),
    }
}

/// The server's 404 (a passive declare of a queue that does not exist), by its kind.
fn is_not_found(e: &lapin::Error) -> bool {
    use lapin::protocol::{AMQPErrorKind, AMQPSoftError};
    matches!(e.kind(), lapin::ErrorKind::ProtocolError(p) if matches!(p.kind(), AMQPErrorKind::Soft(AMQPSoftError::NOTFOUND)))
}
