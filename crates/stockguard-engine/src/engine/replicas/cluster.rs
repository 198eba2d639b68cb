//! The replica gate on a Redis Cluster: a [`Node`] of our own per master, found by the
//! product's slot in the node table the gate reads itself, so one group `WAIT` per master
//! vouches for what was answered on that master and a lagging replica delays only its own
//! master's orders.
//!
//! The table is read again (from the masters the gate knows, then the seeds, whichever
//! answers first) when a call on a master fails or is redirected (`MOVED`), at most every
//! [`REREAD_EVERY`]: after a failover the promoted replica takes the dead master's slots.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use redis::ConnectionInfo;
use tokio::time::Instant;

use super::node::Node;
use super::topology::Topology;

/// How often the node table may be read again.
pub const REREAD_EVERY: Duration = Duration::from_millis(200);
/// How long one node may take to hand over its table.
const READ_TIMEOUT: Duration = Duration::from_millis(500);

pub struct ClusterNodes {
    seeds: Vec<ConnectionInfo>,
    replicas: usize,
    timeout: Duration,
    topology: ArcSwap<Topology>,
    nodes: std::sync::Mutex<HashMap<(String, u16), Arc<Node>>>,
    /// When the table was last read; held while it is read, so one caller reads it.
    read_at: tokio::sync::Mutex<Option<Instant>>,
    /// The gate's count of master changes, which each node adds to.
    changes: Arc<AtomicU64>,
}

impl ClusterNodes {
    pub fn new(seeds: Vec<ConnectionInfo>, replicas: usize, timeout: Duration, changes: Arc<AtomicU64>) -> Self {
        Self {
            changes,
            seeds,
            replicas,
            timeout,
            topology: ArcSwap::default(),
            nodes: std::sync::Mutex::default(),
            read_at: tokio::sync::Mutex::new(None),
        }
    }

    /// The master serving `slot`, reading the table first when no master is known to.
    pub async fn owner(&self, slot: u16) -> redis::RedisResult<Arc<Node>> {
        if self.topology.load().owner(slot).is_none() {
            self.reread().await;
        }
        let topology = self.topology.load();
        let master = topology.owner(slot).ok_or_else(|| {
            redis::RedisError::from((redis::ErrorKind::ClusterDown, "no live master serves the slot", slot.to_string()))
        })?;
        self.node(&master.host, master.port)
    }

    fn node(&self, host: &str, port: u16) -> redis::RedisResult<Arc<Node>> {
        let mut nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(node) = nodes.get(&(host.to_string(), port)) {
            return Ok(node.clone());
        }
        let node = Arc::new(Node::start(self.reach(host, port), self.replicas, self.timeout, self.changes.clone())?);
        nodes.insert((host.to_string(), port), node.clone());
        Ok(node)
    }

    /// How to reach `host:port`: the first seed's credentials and database, that address.
    fn reach(&self, host: &str, port: u16) -> ConnectionInfo {
        super::reach(&self.seeds[0], host, port)
    }

    /// Reads the node table again, unless it was read within [`REREAD_EVERY`]. Nodes no
    /// longer masters are dropped (their `WAIT` tasks end).
    pub async fn reread(&self) {
        let mut read_at = self.read_at.lock().await;
        if read_at.is_some_and(|t| t.elapsed() < REREAD_EVERY) {
            return;
        }
        *read_at = Some(Instant::now());
        let known = self.topology.load().masters.iter().map(|m| self.reach(&m.host, m.port)).collect::<Vec<_>>();
        for info in known.into_iter().chain(self.seeds.iter().cloned()) {
            let Some(table) = read_table(info).await else { continue };
            let topology = Topology::parse(&table);
            if topology.masters.is_empty() {
                continue;
            }
            let live: Vec<(String, u16)> = topology.masters.iter().map(|m| (m.host.clone(), m.port)).collect();
            self.nodes.lock().unwrap_or_else(|e| e.into_inner()).retain(|address, _| live.contains(address));
            self.topology.store(Arc::new(topology));
            return;
        }
        tracing::warn!("replica gate: no cluster node handed over its node table; trying again later");
    }
}

async fn read_table(info: ConnectionInfo) -> Option<String> {
    let read = async {
        let client = redis::Client::open(info).ok()?;
        let config = redis::AsyncConnectionConfig::new().set_connection_timeout(READ_TIMEOUT);
        let mut conn = client.get_multiplexed_async_connection_with_config(&config).await.ok()?;
        redis::cmd("CLUSTER").arg("NODES").query_async::<String>(&mut conn).await.ok()
    };
    tokio::time::timeout(READ_TIMEOUT * 2, read).await.ok().flatten()
}
