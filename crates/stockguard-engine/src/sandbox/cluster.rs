//! A private Redis Cluster on loopback: three masters with one replica each, the system's
//! `redis-server`, data under `<sandbox>/redis-cluster/`. `redis-cli --cluster create` joins
//! them and assigns the slots; [`wait_healthy`] returns once every node says the cluster is
//! `ok` and every master has its replica.
//!
//! Tests start one of their own (`start` with a folder of theirs) to kill a master in.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::process::{self, find_binary};
use super::state::StartedServer;
use super::{io_err, SandboxError};

/// Masters in the sandbox cluster; each has one replica.
pub const MASTERS: usize = 3;

/// How long a node may be silent before the cluster fails it over. Short, so that a drill or
/// test sees the promotion within a few seconds (production clusters use 15 s).
pub const NODE_TIMEOUT_MS: u64 = 2000;

/// The six nodes, masters first (as `redis-cli --cluster create` pairs them).
#[derive(Debug, Clone)]
pub struct Cluster {
    pub nodes: Vec<StartedServer>,
}

impl Cluster {
    /// The seed list a profile or `STOCKGUARD_REDIS_URL` takes: every node.
    pub fn url(&self) -> String {
        self.nodes.iter().map(|n| format!("redis://127.0.0.1:{}/", n.port)).collect::<Vec<_>>().join(",")
    }
}

/// Starts six fresh nodes under `dir/redis-cluster/` (what an earlier cluster left there is
/// removed: its node tables name ports that are gone), creates the cluster and waits until it
/// is healthy.
pub async fn start(dir: &Path) -> Result<Cluster, SandboxError> {
    let server = find_binary("redis-server").ok_or(SandboxError::BinaryMissing("redis-server"))?;
    let cli = find_binary("redis-cli").ok_or(SandboxError::BinaryMissing("redis-cli"))?;
    let root = std::path::absolute(dir.join("redis-cluster")).map_err(io_err(dir))?;
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(io_err(&root))?;
    }
    let mut nodes = Vec::with_capacity(MASTERS * 2);
    for i in 0..MASTERS * 2 {
        let data_dir = root.join(format!("node-{i}"));
        std::fs::create_dir_all(&data_dir).map_err(io_err(&data_dir))?;
        let log = data_dir.join("redis.log");
        // The cluster bus needs a port of its own; `cluster-port` names it (by default it is
        // the client port + 10000, which can be past 65535 for an ephemeral port).
        let (pid, ports) = process::spawn_listening("redis-server (cluster node)", &log, 2, 20, |ports| {
            let (port, bus) = (ports[0], ports[1]);
            let mut cmd = Command::new(&server);
            cmd.args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", "", "--appendonly", "no"])
                .args(["--cluster-enabled", "yes", "--cluster-port", &bus.to_string()])
                .args(["--cluster-node-timeout", &NODE_TIMEOUT_MS.to_string()])
                // A replica's first sync starts at once (the default waits 5 s for more replicas).
                .args(["--repl-diskless-sync-delay", "0"])
                .args(["--cluster-config-file", "nodes.conf", "--daemonize", "no"])
                .arg("--dir")
                .arg(&data_dir);
            cmd
        })
        .await?;
        nodes.push(StartedServer { pid, port: ports[0], data_dir, log });
    }
    let cluster = Cluster { nodes };
    let log = root.join("create.log");
    let out = Command::new(cli)
        .arg("--cluster")
        .arg("create")
        .args(cluster.nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)))
        .args(["--cluster-replicas", "1", "--cluster-yes"])
        .output()
        .map_err(|e| SandboxError::StartFailed {
            what: "redis-cli --cluster create",
            reason: e.to_string(),
            log: log.display().to_string(),
        })?;
    std::fs::write(&log, [&out.stdout[..], &out.stderr[..]].concat()).map_err(io_err(&log))?;
    if !out.status.success() {
        stop(&cluster).await?;
        return Err(SandboxError::StartFailed {
            what: "redis-cli --cluster create",
            reason: format!("exit status {}", out.status),
            log: log.display().to_string(),
        });
    }
    wait_healthy(&cluster, Duration::from_secs(30)).await?;
    Ok(cluster)
}

/// True when every node of an earlier `start` is still the process we started.
pub fn is_ours(cluster: &Cluster) -> bool {
    !cluster.nodes.is_empty() && cluster.nodes.iter().all(process::is_ours)
}

/// Waits until every node reports `cluster_state:ok` with all 16384 slots served and sees
/// [`MASTERS`] replicas, [`MASTERS`] masters each have a connected replica, and every
/// replica has finished syncing.
pub async fn wait_healthy(cluster: &Cluster, timeout: Duration) -> Result<(), SandboxError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last = String::new();
    while tokio::time::Instant::now() < deadline {
        match health(cluster).await {
            Ok(None) => return Ok(()),
            Ok(Some(why)) => last = why,
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(SandboxError::StartFailed {
        what: "Redis Cluster",
        reason: format!("not healthy within {} s: {last}", timeout.as_secs()),
        log: cluster.nodes.first().map(|n| n.log.display().to_string()).unwrap_or_default(),
    })
}

/// `None` when healthy, else what is not yet.
async fn health(cluster: &Cluster) -> redis::RedisResult<Option<String>> {
    let mut masters_with_replica = 0;
    for node in cluster.nodes.iter().filter(|n| process::is_alive(n.pid)) {
        let client = redis::Client::open(format!("redis://127.0.0.1:{}/", node.port))?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        let info: String = redis::cmd("CLUSTER").arg("INFO").query_async(&mut conn).await?;
        if !info.contains("cluster_state:ok") || !info.contains("cluster_slots_ok:16384") {
            return Ok(Some(format!("node {} says: {}", node.port, info.lines().next().unwrap_or(""))));
        }
        // Every node must also see every replica (gossip takes a moment to spread).
        let table: String = redis::cmd("CLUSTER").arg("NODES").query_async(&mut conn).await?;
        let replicas = table.lines().filter(|l| l.split(' ').nth(2).is_some_and(|f| f.contains("slave"))).count();
        if replicas < MASTERS {
            return Ok(Some(format!("node {} sees {replicas} of {MASTERS} replicas", node.port)));
        }
        let replication: String = redis::cmd("INFO").arg("replication").query_async(&mut conn).await?;
        if replication.contains("role:master") && !replication.contains("connected_slaves:0") {
            masters_with_replica += 1;
        }
        // A replica that has not finished its first sync has nothing to take over with: the
        // cluster would refuse to promote it.
        if replication.contains("role:slave") && !replication.contains("master_link_status:up") {
            return Ok(Some(format!("replica {} has not synced with its master yet", node.port)));
        }
    }
    Ok((masters_with_replica < MASTERS).then(|| format!("{masters_with_replica} of {MASTERS} masters have a replica")))
}

/// Stops a replica (SIGSTOP), as a replica that stalls: its master's `WAIT`s run out their
/// timeout while the cluster goes on serving (a replica marked failing takes no slot with it).
/// The node is found by its role now, as a failover can swap roles.
pub async fn stall_a_replica(cluster: &Cluster) -> Result<&StartedServer, SandboxError> {
    for node in cluster.nodes.iter().filter(|n| process::is_alive(n.pid)) {
        let role = async {
            let client = redis::Client::open(format!("redis://127.0.0.1:{}/", node.port))?;
            let mut conn = client.get_multiplexed_async_connection().await?;
            redis::cmd("INFO").arg("replication").query_async::<String>(&mut conn).await
        };
        if role.await.is_ok_and(|info| info.contains("role:slave")) {
            super::replicated::signal(node, nix::sys::signal::Signal::SIGSTOP)?;
            return Ok(node);
        }
    }
    Err(SandboxError::StartFailed {
        what: "Redis Cluster",
        reason: "no replica to stall".into(),
        log: cluster.nodes.first().map(|n| n.log.display().to_string()).unwrap_or_default(),
    })
}

/// Continues a replica [`stall_a_replica`] stopped and waits until the cluster is healthy
/// again (the replica synced with its master).
pub async fn resume_replica(cluster: &Cluster, node: &StartedServer) -> Result<(), SandboxError> {
    super::replicated::signal(node, nix::sys::signal::Signal::SIGCONT)?;
    wait_healthy(cluster, Duration::from_secs(60)).await
}

/// Stops every node we started; true when any was running.
pub async fn stop(cluster: &Cluster) -> Result<bool, SandboxError> {
    let mut any = false;
    for node in &cluster.nodes {
        any |= process::stop(node).await?;
    }
    Ok(any)
}
