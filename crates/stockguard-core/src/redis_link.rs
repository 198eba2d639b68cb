//! One Redis link for the whole code base, whether the sale's Redis is one server or a Redis
//! Cluster.
//!
//! A Redis URL holding a comma-separated list of seed nodes
//! (`redis://127.0.0.1:7000,redis://127.0.0.1:7001`) means a cluster; one URL means a single
//! server. [`RedisLink`] is a `redis-rs` connection either way (the reconnecting
//! `ConnectionManager`, or the cluster client's connection, which follows `MOVED`/`ASK` and
//! topology changes by itself), so the rest of the code does not care which.
//!
//! The one thing a cluster asks of callers: a pipeline (and a script, and a multi-key
//! command) must stay within one hash slot. Every product's keys carry the hash tag `{P}`, so
//! one product's commands always may; [`per_product`] splits a many-product pipeline by slot
//! and runs the parts at once. That slot arithmetic ([`slot`]) is the only cluster logic of
//! our own; routing and redirects are the `redis` crate's.
//!
//! One gap we fill: the `redis` crate's cluster connection (0.32) learns a new topology from
//! `MOVED` answers, and a dead master answers nothing. After a failover it keeps reconnecting
//! to the dead node's address. So a cluster link that sees its connection refused, dropped or
//! timed out opens a fresh cluster connection from the seed nodes in the background (at most
//! every [`RECONNECT_EVERY`]), which reads the current topology, promoted replica included,
//! from whichever node answers; the failed call is reported as failed, as on one server.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, ConnectionInfo, Pipeline, RedisFuture, RedisResult, Script, ScriptInvocation, Value};

/// A link to the sale's Redis: one server or a cluster.
#[derive(Clone)]
pub enum RedisLink {
    /// The server's connection, and how to reach the server (for a connection of one's own).
    Single(ConnectionManager, Arc<ConnectionInfo>),
    Cluster(Arc<ClusterLink>),
}

/// A cluster connection that starts over from the seed nodes when its nodes stop answering.
pub struct ClusterLink {
    client: redis::cluster::ClusterClient,
    current: ArcSwap<ClusterConnection>,
    /// How to reach the seed nodes, for connections of one's own to a node.
    seeds: Vec<ConnectionInfo>,
    /// When the last fresh connection was asked for.
    reconnected: Mutex<Option<Instant>>,
}

/// How often a cluster link may start over from its seeds.
pub const RECONNECT_EVERY: Duration = Duration::from_millis(500);

impl ClusterLink {
    fn connection(&self) -> ClusterConnection {
        (**self.current.load()).clone()
    }

    /// After a failure that says a node is gone: a fresh connection, in the background.
    fn node_failed(self: &Arc<Self>, err: &redis::RedisError) {
        let gone = err.is_connection_dropped()
            || err.is_connection_refusal()
            || err.is_timeout()
            || err.is_io_error()
            || err.kind() == redis::ErrorKind::ClusterConnectionNotFound;
        if !gone {
            return;
        }
        {
            let mut last = self.reconnected.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|t| t.elapsed() < RECONNECT_EVERY) {
                return;
            }
            *last = Some(Instant::now());
        }
        let link = self.clone();
        tokio::spawn(async move {
            match link.client.get_async_connection().await {
                Ok(fresh) => {
                    tracing::info!("cluster link: reconnected from the seed nodes (topology re-read)");
                    link.current.store(Arc::new(fresh));
                }
                Err(e) => tracing::warn!(error = %e, "cluster link: no seed node answered; trying again later"),
            }
        });
    }
}

/// How long to wait to connect and for an answer.
#[derive(Debug, Clone, Copy)]
pub struct LinkTimeouts {
    pub connect: Duration,
    pub response: Duration,
}

/// The seed nodes of a Redis URL: one for a single server, several for a cluster.
pub fn seeds(url: &str) -> Vec<&str> {
    url.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// True when the URL names a cluster (more than one seed node).
pub fn is_cluster_url(url: &str) -> bool {
    seeds(url).len() > 1
}

impl RedisLink {
    /// Connects to the server or cluster `url` names. A cluster connection reads the
    /// topology from the first seed that answers.
    pub async fn open(url: &str, timeouts: LinkTimeouts) -> RedisResult<Self> {
        Self::open_with_tls(url, timeouts, None).await
    }

    /// [`Self::open`] over TLS with a pinned CA and a client certificate (`rediss://` seeds;
    /// [`crate::tls::redis_certificates`]). `None`: a `rediss://` URL trusts the system's
    /// roots. The certificates go with every connection the link and its users open: each
    /// cluster node's, and the [`seeds`](Self::seeds) the engine opens its own from.
    pub async fn open_with_tls(
        url: &str,
        timeouts: LinkTimeouts,
        certs: Option<&redis::TlsCertificates>,
    ) -> RedisResult<Self> {
        let nodes = seeds(url);
        if nodes.iter().any(|n| n.starts_with("rediss://")) {
            crate::crypto_provider::install();
        }
        let client_of = |node: &str| match certs {
            Some(certs) => redis::Client::build_with_tls(node, certs.clone()),
            None => redis::Client::open(node),
        };
        if nodes.len() > 1 {
            let seeds = nodes
                .iter()
                .map(|n| Ok(client_of(n)?.get_connection_info().clone()))
                .collect::<RedisResult<Vec<_>>>()?;
            let mut builder = redis::cluster::ClusterClientBuilder::new(nodes)
                .connection_timeout(timeouts.connect)
                .response_timeout(timeouts.response)
                // A failover takes the cluster a few seconds (node timeout plus election);
                // requests retry through it instead of failing at once.
                .retries(6);
            if let Some(certs) = certs {
                builder = builder.certs(certs.clone());
            }
            let client = builder.build()?;
            let first = client.get_async_connection().await?;
            Ok(Self::Cluster(Arc::new(ClusterLink {
                client,
                current: ArcSwap::from_pointee(first),
                seeds,
                reconnected: Mutex::new(None),
            })))
        } else {
            let client = client_of(url)?;
            let info = Arc::new(client.get_connection_info().clone());
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(timeouts.connect)
                .set_response_timeout(timeouts.response)
                .set_number_of_retries(1);
            Ok(Self::Single(client.get_connection_manager_with_config(config).await?, info))
        }
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self, Self::Cluster(_))
    }

    /// How to reach the server, or the cluster's seed nodes: for a connection of one's own
    /// (the engine's replica gate keeps one per master, for its `WAIT`s).
    pub fn seeds(&self) -> Vec<ConnectionInfo> {
        match self {
            Self::Single(_, info) => vec![(**info).clone()],
            Self::Cluster(link) => link.seeds.clone(),
        }
    }
}

impl ConnectionLike for RedisLink {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(c, _) => c.req_packed_command(cmd),
            Self::Cluster(link) => Box::pin(async move {
                let result = link.connection().req_packed_command(cmd).await;
                if let Err(e) = &result {
                    link.node_failed(e);
                }
                result
            }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(c, _) => c.req_packed_commands(pipeline, offset, count),
            Self::Cluster(link) => Box::pin(async move {
                let result = link.connection().req_packed_commands(pipeline, offset, count).await;
                if let Err(e) = &result {
                    link.node_failed(e);
                }
                result
            }),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(c, _) => c.get_db(),
            Self::Cluster(_) => 0,
        }
    }
}

/// A connection that knows whether a pipeline must stay within one slot. Plain single-server
/// connections (tests and drills open them to their own servers) never need to split.
pub trait Link: ConnectionLike + Clone + Send + Sync + 'static {
    fn spans_one_slot_per_pipeline(&self) -> bool;
}

impl Link for RedisLink {
    fn spans_one_slot_per_pipeline(&self) -> bool {
        self.is_cluster()
    }
}

impl Link for ConnectionManager {
    fn spans_one_slot_per_pipeline(&self) -> bool {
        false
    }
}

impl Link for MultiplexedConnection {
    fn spans_one_slot_per_pipeline(&self) -> bool {
        false
    }
}

/// The cluster hash slot of a key: CRC16 (XMODEM) of its hash tag (the part between the first
/// `{` and the next `}`, when not empty), else of the whole key, modulo 16384.
pub fn slot(key: &[u8]) -> u16 {
    let tagged = key
        .iter()
        .position(|&b| b == b'{')
        .and_then(|open| {
            let rest = &key[open + 1..];
            rest.iter().position(|&b| b == b'}').filter(|&len| len > 0).map(|len| &rest[..len])
        })
        .unwrap_or(key);
    crc16::State::<crc16::XMODEM>::calculate(tagged) % 16384
}

/// The slot every key of `product_id` lives on (they all carry the tag `{P}`).
pub fn product_slot(product_id: u64) -> u16 {
    slot(format!("{{{product_id}}}").as_bytes())
}

/// Runs `build(pipe, item)` for every item in one pipeline on a single server, or in one
/// pipeline per hash slot, all at once, on a cluster; returns each item's replies (one per
/// command it added), in the items' order. `slot_of` names an item's slot. Commands added by
/// `build` must not be `ignore()`d: the replies are split by command count.
pub async fn per_item<C, T>(
    redis: &C,
    items: &[T],
    slot_of: impl Fn(&T) -> u16,
    build: impl Fn(&mut Pipeline, &T),
) -> RedisResult<Vec<Vec<Value>>>
where
    C: Link,
{
    let groups: Vec<Vec<usize>> = if redis.spans_one_slot_per_pipeline() {
        let mut by_slot: BTreeMap<u16, Vec<usize>> = BTreeMap::new();
        for (i, item) in items.iter().enumerate() {
            by_slot.entry(slot_of(item)).or_default().push(i);
        }
        by_slot.into_values().collect()
    } else {
        vec![(0..items.len()).collect()]
    };
    let mut out: Vec<Vec<Value>> = vec![Vec::new(); items.len()];
    let runs = groups.into_iter().filter(|g| !g.is_empty()).map(|group| {
        let mut pipe = redis::pipe();
        let mut counts = Vec::with_capacity(group.len());
        for &i in &group {
            let before = pipe.len();
            build(&mut pipe, &items[i]);
            counts.push(pipe.len() - before);
        }
        let mut redis = redis.clone();
        async move {
            let replies: Vec<Value> = if pipe.is_empty() { Vec::new() } else { pipe.query_async(&mut redis).await? };
            Ok::<_, redis::RedisError>((group, counts, replies))
        }
    });
    for result in futures_util::future::join_all(runs).await {
        let (group, counts, replies) = result?;
        let mut replies = replies.into_iter();
        for (i, n) in group.into_iter().zip(counts) {
            out[i] = replies.by_ref().take(n).collect();
        }
    }
    Ok(out)
}

/// The products grouped so that each group may share one multi-key command or pipeline: one
/// group on a single server, one per hash slot on a cluster.
pub fn group_by_slot<C: Link>(redis: &C, products: &[u64]) -> Vec<Vec<u64>> {
    if !redis.spans_one_slot_per_pipeline() {
        return if products.is_empty() { Vec::new() } else { vec![products.to_vec()] };
    }
    let mut by_slot: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    for &p in products {
        by_slot.entry(product_slot(p)).or_default().push(p);
    }
    by_slot.into_values().collect()
}

/// [`per_item`] over product ids, each on its product's slot.
pub async fn per_product<C: Link>(
    redis: &C,
    products: &[u64],
    build: impl Fn(&mut Pipeline, u64),
) -> RedisResult<Vec<Vec<Value>>> {
    per_item(redis, products, |&p| product_slot(p), |pipe, &p| build(pipe, p)).await
}

/// One call of `script` per item through [`per_item`], for a script that may run twice with
/// the same arguments (a claim, a compare-and-delete, a rewrite of a hash from the DB). It is
/// sent by SHA; when a server does not know it (first use, a restart, `SCRIPT FLUSH`) it is
/// loaded within the same pipelines and every call is sent again, so on a cluster the parts
/// whose server knew it run twice: hence idempotent scripts only. Returns each item's reply.
pub async fn idempotent_script_per_item<'s, C: Link, T>(
    redis: &C,
    items: &[T],
    slot_of: impl Fn(&T) -> u16,
    script: &'s Script,
    call: impl Fn(&T) -> ScriptInvocation<'s>,
) -> RedisResult<Vec<Value>> {
    match script_calls(redis, items, &slot_of, script, &call, false).await {
        Err(e) if e.kind() == redis::ErrorKind::NoScriptError => {
            script_calls(redis, items, &slot_of, script, &call, true).await
        }
        other => other,
    }
}

/// One call of `script` per item through [`per_item`], for a script that must never run twice
/// (a write by `INCRBY`): it is loaded before it is called, once on a single server, and in
/// each item's own pipeline on a cluster (where the pipelines go to several servers), and a
/// `NOSCRIPT` is an error, never a reason to send the calls again.
pub async fn script_once_per_item<'s, C: Link, T>(
    redis: &C,
    items: &[T],
    slot_of: impl Fn(&T) -> u16,
    script: &'s Script,
    call: impl Fn(&T) -> ScriptInvocation<'s>,
) -> RedisResult<Vec<Value>> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let cluster = redis.spans_one_slot_per_pipeline();
    if !cluster {
        script.prepare_invoke().load_async(&mut redis.clone()).await?;
    }
    script_calls(redis, items, &slot_of, script, &call, cluster).await
}

/// The calls, each preceded by a `SCRIPT LOAD` when `load`; each item's call's reply.
async fn script_calls<'s, C: Link, T>(
    redis: &C,
    items: &[T],
    slot_of: &impl Fn(&T) -> u16,
    script: &'s Script,
    call: &impl Fn(&T) -> ScriptInvocation<'s>,
    load: bool,
) -> RedisResult<Vec<Value>> {
    let replies = per_item(redis, items, slot_of, |pipe, item| {
        if load {
            pipe.load_script(script);
        }
        pipe.invoke_script(&call(item));
    })
    .await?;
    // The reply of a SCRIPT LOAD (the SHA) comes first; the call's is last.
    Ok(replies.into_iter().map(|r| r.into_iter().last().unwrap_or(Value::Nil)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comma_separated_url_is_a_cluster_and_one_url_is_not() {
        assert!(is_cluster_url("redis://127.0.0.1:7000,redis://127.0.0.1:7001"));
        assert_eq!(seeds("redis://a:1, redis://b:2,"), vec!["redis://a:1", "redis://b:2"]);
        assert!(!is_cluster_url("redis://127.0.0.1:6379/"));
    }

    #[test]
    fn slots_follow_the_cluster_specification() {
        // The examples of the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(slot(b"123456789"), 12739);
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"{user1000}.following"), slot(b"{user1000}.followers"));
        assert_ne!(slot(b"foo{}{bar}"), slot(b"bar"), "an empty tag hashes the whole key");
        assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
    }

    #[test]
    fn every_key_of_a_product_is_on_the_products_slot() {
        let keys = crate::keys::Keys::new("sg");
        for key in keys.all_for_product(42) {
            assert_eq!(slot(key.as_bytes()), product_slot(42), "{key}");
        }
    }
}
