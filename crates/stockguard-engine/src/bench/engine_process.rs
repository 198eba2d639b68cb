//! An engine in its own process for the benchmarks that drive one through HTTP (`engine`,
//! [`super::vouching`], [`super::cluster`]): started on a free port with the connection's
//! settings, waited for until healthy, stopped with SIGINT.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use secrecy::ExposeSecret as _;

use super::BenchError;
use stockguard_core::connect::Connections;

/// An engine in its own process (as in production), stopped with SIGINT by [`Self::stop`] and
/// killed if dropped unstopped.
pub(super) struct EngineProcess {
    child: tokio::process::Child,
    pub(super) url: String,
}

impl EngineProcess {
    pub(super) async fn start(exe: &Path, conns: &Connections) -> Result<Self, BenchError> {
        Self::start_with(exe, conns, &[]).await
    }

    /// [`Self::start`] with more `engine serve` flags.
    pub(super) async fn start_with(exe: &Path, conns: &Connections, flags: &[&str]) -> Result<Self, BenchError> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| BenchError::Engine(e.to_string()))?
            .port();
        let child = tokio::process::Command::new(exe)
            .args(["engine", "serve", "--listen", &format!("127.0.0.1:{port}"), "--per-user-rate", "0"])
            .args(flags)
            .env_remove("STOCKGUARD_PROFILE")
            .env("STOCKGUARD_MYSQL_URL", conns.settings.mysql_url.expose_secret())
            .env("STOCKGUARD_REDIS_URL", conns.settings.redis_url.expose_secret())
            .env("STOCKGUARD_KEY_PREFIX", conns.keys.prefix())
            .env("STOCKGUARD_ENVIRONMENT", conns.settings.environment.as_str())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| BenchError::Engine(e.to_string()))?;
        let url = format!("http://127.0.0.1:{port}");
        let me = Self { child, url };
        for _ in 0..100 {
            if reqwest::get(format!("{}/health", me.url)).await.is_ok_and(|r| r.status().is_success()) {
                return Ok(me);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(BenchError::Engine("did not become healthy within 10 s".into()))
    }

    pub(super) async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGINT);
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}
