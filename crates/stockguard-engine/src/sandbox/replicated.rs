//! A private Redis server with one replica on loopback, the system's `redis-server`, data
//! under `<dir>/redis-replicated/`: what `bench engine` measures the replica gate's price on.
//!
//! [`Replicated::stall`] stops the replica (SIGSTOP). Its master keeps the link open and goes
//! on sending, but no acknowledgement comes back, so every `WAIT` runs out its timeout: a
//! replica that is alive but stuck, the case a vouching engine pays for most.
//! [`Replicated::resume`] continues it and waits until it has caught up.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use nix::sys::signal::Signal;

use super::process::{self, find_binary};
use super::state::StartedServer;
use super::{io_err, SandboxError};

/// How long the replica may take to sync, or to catch up after a stall.
const SYNC_SECS: u64 = 20;

/// A master and its replica, both ours.
#[derive(Debug, Clone)]
pub struct Replicated {
    pub master: StartedServer,
    pub replica: StartedServer,
}

/// Starts a fresh master and its replica under `dir/redis-replicated/` (what an earlier pair
/// left there is removed) and waits until the replica is in sync.
pub async fn start(dir: &Path) -> Result<Replicated, SandboxError> {
    let binary = find_binary("redis-server").ok_or(SandboxError::BinaryMissing("redis-server"))?;
    let root = std::path::absolute(dir.join("redis-replicated")).map_err(io_err(dir))?;
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(io_err(&root))?;
    }
    // A replica's first sync starts at once (by default the master waits 5 s for more).
    let master = server(&binary, &root.join("master"), &["--repl-diskless-sync-delay", "0"]).await?;
    let follow = format!("127.0.0.1 {}", master.port);
    let replica = match server(&binary, &root.join("replica"), &["--replicaof", &follow]).await {
        Ok(replica) => replica,
        Err(e) => {
            process::stop(&master).await?;
            return Err(e);
        }
    };
    let pair = Replicated { master, replica };
    if let Err(e) = pair.wait_caught_up().await {
        pair.stop().await?;
        return Err(e);
    }
    Ok(pair)
}

async fn server(binary: &Path, data_dir: &Path, extra: &[&str]) -> Result<StartedServer, SandboxError> {
    std::fs::create_dir_all(data_dir).map_err(io_err(data_dir))?;
    let log = data_dir.join("redis.log");
    let (pid, ports) = process::spawn_listening("redis-server (replicated)", &log, 1, SYNC_SECS, |ports| {
        let mut cmd = Command::new(binary);
        cmd.args(["--bind", "127.0.0.1", "--port", &ports[0].to_string(), "--save", "", "--appendonly", "no"])
            .args(extra)
            .args(["--daemonize", "no"])
            .arg("--dir")
            .arg(data_dir);
        cmd
    })
    .await?;
    Ok(StartedServer { pid, port: ports[0], data_dir: data_dir.to_path_buf(), log })
}

impl Replicated {
    /// The URL an engine or a profile takes: the master's.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.master.port)
    }

    /// Stops the replica (SIGSTOP): from now on no `WAIT` is acknowledged.
    pub fn stall(&self) -> Result<(), SandboxError> {
        signal(&self.replica, Signal::SIGSTOP)
    }

    /// Continues a stalled replica (SIGCONT) and waits until it has everything its master had
    /// when this was called.
    pub async fn resume(&self) -> Result<(), SandboxError> {
        signal(&self.replica, Signal::SIGCONT)?;
        self.wait_caught_up().await
    }

    /// Stops both (a stalled replica is continued first, or it would not see SIGTERM).
    pub async fn stop(&self) -> Result<bool, SandboxError> {
        if process::is_ours(&self.replica) {
            signal(&self.replica, Signal::SIGCONT)?;
        }
        let replica = process::stop(&self.replica).await?;
        Ok(process::stop(&self.master).await? | replica)
    }

    /// Waits until the master sees its replica online at the replication offset the master
    /// had when this was called.
    async fn wait_caught_up(&self) -> Result<(), SandboxError> {
        let not_ready = |reason: String| SandboxError::StartFailed {
            what: "the replicated Redis's replica",
            reason,
            log: self.replica.log.display().to_string(),
        };
        let client = redis::Client::open(self.url()).map_err(|e| not_ready(e.to_string()))?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(SYNC_SECS);
        let mut target = None;
        let mut last = String::from("not asked yet");
        while tokio::time::Instant::now() < deadline {
            match replication(&client).await {
                Ok((master_offset, replica_offset)) => {
                    let target = *target.get_or_insert(master_offset);
                    match replica_offset {
                        Some(at) if at >= target => return Ok(()),
                        Some(at) => last = format!("the replica is at offset {at} of {target}"),
                        None => last = "the master has no replica online".into(),
                    }
                }
                Err(e) => last = e.to_string(),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(not_ready(format!("not caught up within {SYNC_SECS} s: {last}")))
    }
}

/// The master's replication offset, and its online replica's (`slave0:...,state=online,offset=N`).
async fn replication(client: &redis::Client) -> redis::RedisResult<(u64, Option<u64>)> {
    let mut conn = client.get_multiplexed_async_connection().await?;
    let info: String = redis::cmd("INFO").arg("replication").query_async(&mut conn).await?;
    let field = |line: &str, name: &str| {
        line.split([',', ':']).find_map(|kv| kv.strip_prefix(name)?.strip_prefix('=')).map(str::to_string)
    };
    let master = info.lines().find_map(|l| l.trim().strip_prefix("master_repl_offset:")?.parse().ok()).unwrap_or(0);
    let replica = info
        .lines()
        .filter(|l| l.starts_with("slave0:"))
        .find(|l| field(l, "state").as_deref() == Some("online"))
        .and_then(|l| field(l, "offset")?.trim().parse().ok());
    Ok((master, replica))
}

pub(crate) fn signal(server: &StartedServer, signal: Signal) -> Result<(), SandboxError> {
    if !process::is_ours(server) {
        return Err(SandboxError::Signal { pid: server.pid, signal: signal.as_str(), reason: "not running".into() });
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(server.pid as i32), signal).map_err(|e| SandboxError::Signal {
        pid: server.pid,
        signal: signal.as_str(),
        reason: e.to_string(),
    })
}
