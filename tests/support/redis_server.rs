//! Private `redis-server` processes for fault tests: a server a test may kill, restart
//! (empty: nothing is kept on disk; or, for a durable one, with all it had), or pair with a
//! replica and fail over to, without touching the shared Redis other tests use.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `redis-server` on a free loopback port, killed when dropped.
pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
    replica_of: Option<u16>,
    /// Writes every command to its append-only file before answering (see [`Self::start_durable`]).
    durable: bool,
    /// Its own folder: a replica writes the snapshot it receives to disk, and a server
    /// started in a shared folder could load another's.
    dir: tempfile::TempDir,
}

impl RedisServer {
    /// A server that keeps nothing on disk: a restart comes back empty.
    pub async fn start() -> Self {
        Self::spawn_on_a_free_port(None, false).await
    }

    /// A server that syncs every write to its append-only file before answering: killed
    /// ([`Self::kill`]) and started again ([`Self::start_again`]), it has all it had, as a
    /// server configured for durability does after a crash.
    pub async fn start_durable() -> Self {
        Self::spawn_on_a_free_port(None, true).await
    }

    /// A replica of `master`, synchronised before this returns.
    pub async fn replica_of(master: &RedisServer) -> Self {
        let replica = Self::spawn_on_a_free_port(Some(master.port), false).await;
        replica.wait_synced().await;
        master.wait_replica_online(replica.port).await;
        replica
    }

    /// Waits until this master counts the replica on `port` as online: a replica says its
    /// link is up before the master has its first acknowledgement, and until then the master
    /// counts it for nothing (`WAIT`, `connected_slaves`'s state).
    async fn wait_replica_online(&self, port: u16) {
        let mut c = self.conn().await;
        let online = format!("port={port},state=online");
        for _ in 0..400 {
            let info: String = redis::cmd("INFO").arg("replication").query_async(&mut c).await.unwrap();
            if info.contains(&online) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the master on port {} never counted its replica on port {port} online within 10 s", self.port);
    }

    /// [`Self::spawn`] on a port nobody holds. A free port is only free until someone binds it:
    /// another test of the same run can be handed the same one and start its own server there
    /// first, and then ours fails to bind while theirs answers our PING. So the server that
    /// answers must be ours (its process id), or we try another port.
    async fn spawn_on_a_free_port(replica_of: Option<u16>, durable: bool) -> Self {
        for _ in 0..5 {
            let server = Self::spawn(super::free_port(), replica_of, durable, tempfile::tempdir().unwrap()).await;
            if server.answers_as_itself().await {
                return server;
            }
        }
        panic!("five free ports in a row were taken by other servers before ours could bind them");
    }

    /// Whether the server answering on our port is our child process.
    async fn answers_as_itself(&self) -> bool {
        let Some(child) = self.child.as_ref() else { return false };
        let info: String =
            redis::cmd("INFO").arg("server").query_async(&mut self.conn().await).await.unwrap_or_default();
        info.lines().find_map(|l| l.strip_prefix("process_id:")).and_then(|p| p.trim().parse::<u32>().ok())
            == Some(child.id())
    }

    async fn spawn(port: u16, replica_of: Option<u16>, durable: bool, dir: tempfile::TempDir) -> Self {
        // Nothing left from an earlier run of this server is loaded (a durable server's
        // append-only file is its data, and stays).
        let _ = std::fs::remove_file(dir.path().join("dump.rdb"));
        let mut cmd = Command::new("redis-server");
        cmd.args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", ""])
            .args(if durable {
                ["--appendonly", "yes", "--appendfsync", "always"].as_slice()
            } else {
                &["--appendonly", "no"]
            })
            .args(["--daemonize", "no"])
            .arg("--dir")
            .arg(dir.path());
        if let Some(master) = replica_of {
            cmd.args(["--replicaof", "127.0.0.1", &master.to_string()]);
        }
        let child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap_or_else(|e| {
            panic!("redis-server must be installed for fault tests (`make test` installs it): {e}")
        });
        let server = Self { port, child: Some(child), replica_of, durable, dir };
        server.wait_answering().await;
        server
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub async fn conn(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url()).unwrap().get_multiplexed_async_connection().await.unwrap()
    }

    async fn wait_answering(&self) {
        for _ in 0..200 {
            if let Ok(client) = redis::Client::open(self.url()) {
                if let Ok(mut c) = client.get_multiplexed_async_connection().await {
                    if redis::cmd("PING").query_async::<String>(&mut c).await.is_ok() {
                        return;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("redis-server on port {} did not answer within 5 s", self.port);
    }

    async fn wait_synced(&self) {
        let mut c = self.conn().await;
        for _ in 0..400 {
            let info: String = redis::cmd("INFO").arg("replication").query_async(&mut c).await.unwrap();
            if info.contains("master_link_status:up") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the replica on port {} did not sync within 10 s", self.port);
    }

    /// Kills the server (SIGKILL, as a crash) and starts it again on the same port: it comes
    /// back with no data.
    pub async fn restart_empty(&mut self) {
        self.kill();
        // The port is ours again once the old process is gone; a fresh folder holds no
        // data (a durable server's append-only file stays behind in the old one).
        let fresh = Self::spawn(self.port, self.replica_of, self.durable, tempfile::tempdir().unwrap()).await;
        assert!(fresh.answers_as_itself().await, "port {} was taken by another server while ours was down", self.port);
        *self = fresh;
    }

    /// Starts a killed server again on the same port and folder: a durable one comes back
    /// with its data.
    pub async fn start_again(&mut self) {
        assert!(self.child.is_none(), "start_again: the server on port {} is still running", self.port);
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap());
        *self = Self::spawn(self.port, self.replica_of, self.durable, dir).await;
        assert!(self.answers_as_itself().await, "port {} was taken by another server while ours was down", self.port);
    }

    /// Promotes a replica: it stops following its master and takes writes, with whatever it
    /// had received so far.
    pub async fn promote(&mut self) {
        let mut c = self.conn().await;
        let _: () = redis::cmd("REPLICAOF").arg("NO").arg("ONE").query_async(&mut c).await.unwrap();
        self.replica_of = None;
    }

    /// Waits until the master's writes so far reached `replicas` replicas.
    pub async fn wait_replicated(&self, replicas: u32) {
        let mut c = self.conn().await;
        let n: u32 = redis::cmd("WAIT").arg(replicas).arg(5000).query_async(&mut c).await.unwrap();
        assert_eq!(n, replicas, "the replica did not acknowledge the writes in time");
    }

    /// Stops the process (SIGSTOP): a replica stops receiving its master's writes.
    pub fn pause(&self) {
        self.signal(nix::sys::signal::Signal::SIGSTOP);
    }

    /// Continues a paused process (SIGCONT).
    pub fn resume(&self) {
        self.signal(nix::sys::signal::Signal::SIGCONT);
    }

    fn signal(&self, signal: nix::sys::signal::Signal) {
        let child = self.child.as_ref().expect("the server is running");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).expect("the signal is sent");
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // A stopped process takes SIGKILL too; continued first all the same, so nothing
        // waits on a frozen server meanwhile.
        if self.child.is_some() {
            self.resume();
        }
        self.kill();
    }
}
