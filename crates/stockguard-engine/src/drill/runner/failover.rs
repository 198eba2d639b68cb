//! The failover drill's own Redis: a master and a replica the runner starts (the profile's
//! Redis is never killed), every engine's link and the runner's own reaching the master
//! through proxies. The fault cuts the replica off its master (so it stops receiving the
//! master's deductions), lets the master go on selling, then kills the master and moves every
//! link to the replica, as a Sentinel or a cloud failover would after a partition: Redis comes
//! back with stock too high and its latest reservations gone, as the reference article warns.
//!
//! The replica is cut off, not stopped: a stopped replica (SIGSTOP) still has in its socket
//! buffer whatever the master sent before dying, and reads it when continued, so how much it
//! lacks would depend on buffer sizes, and a short drill would lose nothing to repair.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use super::process::{dies_with_runner, server_port};
use super::RunnerError;
use crate::sandbox::process::find_binary;

pub struct PrivateRedis {
    master: Option<Child>,
    replica: Child,
    pub master_port: u16,
    pub replica_port: u16,
}

fn server(binary: &Path, port: u16, dir: &Path, extra: &[String]) -> Result<Child, RunnerError> {
    let log = std::fs::File::create(dir.join(format!("redis-{port}.log"))).map_err(RunnerError::Io)?;
    let mut cmd = Command::new(binary);
    cmd.args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", "", "--appendonly", "no"])
        .args(["--dir", &dir.to_string_lossy()])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(RunnerError::Io)?)
        .stderr(log)
        .kill_on_drop(true);
    dies_with_runner(&mut cmd);
    cmd.spawn().map_err(RunnerError::Io)
}

async fn client(port: u16) -> Result<redis::aio::MultiplexedConnection, RunnerError> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?;
    Ok(client.get_multiplexed_async_connection().await?)
}

impl PrivateRedis {
    /// Starts both and waits until the replica is in sync.
    pub async fn start(dir: &Path) -> Result<Self, RunnerError> {
        let binary = find_binary("redis-server").ok_or_else(|| {
            RunnerError::Rig("redis-server is not installed: the failover drill starts its own".into())
        })?;
        let (master_port, replica_port) = (server_port()?, server_port()?);
        let master = server(&binary, master_port, dir, &[])?;
        let replica = server(&binary, replica_port, dir, &["--replicaof".into(), format!("127.0.0.1 {master_port}")])?;
        let redis = Self { master: Some(master), replica, master_port, replica_port };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(mut replica) = client(replica_port).await {
                let info: String =
                    redis::cmd("INFO").arg("replication").query_async(&mut replica).await.unwrap_or_default();
                if info.contains("master_link_status:up") {
                    return Ok(redis);
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(RunnerError::Rig("the failover drill's replica did not sync within 20 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The replica stops following its master (`REPLICAOF NO ONE`): from now on it lags, and
    /// nothing the master writes reaches it. Nobody writes to it until the failover.
    pub async fn lag(&self) -> Result<(), RunnerError> {
        let mut replica = client(self.replica_port).await?;
        let _: () = redis::cmd("REPLICAOF").arg("NO").arg("ONE").query_async(&mut replica).await?;
        Ok(())
    }

    /// The master dies (SIGKILL); the lagging replica takes its place. Answers the new
    /// master's address.
    pub async fn fail_over(&mut self) -> Result<String, RunnerError> {
        if let Some(mut master) = self.master.take() {
            let _ = master.kill().await;
        }
        Ok(format!("127.0.0.1:{}", self.replica_port))
    }

    pub fn master_addr(&self) -> String {
        format!("127.0.0.1:{}", self.master_port)
    }

    /// Both stopped.
    pub async fn stop(&mut self) {
        let _ = self.replica.kill().await;
        if let Some(mut master) = self.master.take() {
            let _ = master.kill().await;
        }
    }
}
