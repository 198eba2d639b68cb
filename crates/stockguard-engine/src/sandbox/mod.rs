//! The sandbox: a local sale to try everything on.
//!
//! - [`cluster`]: a private Redis Cluster (three masters, three replicas) on loopback.
//! - [`process`]: starting and stopping private `mariadbd` / `redis-server` processes.
//! - [`replicated`]: a private Redis server with one replica, which can be stalled (SIGSTOP).
//! - [`state`]: what `up` started, recorded under the sandbox folder so `down` stops only that.
//! - [`up`] / [`down`]: bring the sandbox up (reusing reachable servers) and down.
//! - [`seed`]: a demo sale with every order state and one product in each drift status.
//! - [`demo`]: the demo's live traffic, sized so that `make demo` keeps selling as long as it runs.

pub mod cluster;
pub mod demo;
pub mod process;
pub mod replicated;
pub mod seed;
pub mod state;
pub mod up;

pub use demo::{DemoTraffic, DEMO_TRAFFIC};
pub use seed::{seed, SeedReport, DEMO_PRODUCTS};
pub use up::{down, up, DownReport, UpOptions, UpReport};

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("`{0}` was not found; install it (`make deps` installs MariaDB and Redis on Debian/Ubuntu)")]
    BinaryMissing(&'static str),
    #[error("cannot start {what}: {reason} (log: {log})")]
    StartFailed { what: &'static str, reason: String, log: String },
    #[error("{what} did not become ready within {secs} s (log: {log})")]
    NotReady { what: &'static str, secs: u64, log: String },
    #[error("sandbox folder {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("sandbox state file {path} is not valid: {reason}")]
    State { path: String, reason: String },
    #[error("MySQL at {url} is reachable but refused us: {reason}")]
    MysqlRefused { url: String, reason: String },
    #[error(transparent)]
    Connect(#[from] stockguard_core::connect::ConnectError),
    #[error(transparent)]
    Profile(#[from] stockguard_core::profile::ProfileError),
    #[error("seeding refused: the connection is to a {0} environment; the demo sale is only loaded into a sandbox")]
    NotSandbox(stockguard_core::profile::EnvironmentKind),
    #[error("seeding failed in the DB: {0}")]
    SeedDb(#[from] sqlx::Error),
    #[error("seeding failed in Redis: {0}")]
    SeedRedis(#[from] redis::RedisError),
    #[error("cannot stop process {pid}: {reason}")]
    Stop { pid: u32, reason: String },
    #[error("cannot send {signal} to process {pid}: {reason}")]
    Signal { pid: u32, signal: &'static str, reason: String },
    #[error(
        "the {what} URL {url} holds a password; the sandbox writes its URLs to plain files (`.sandbox/env`, the \
         `sandbox` profile) and keeps no secrets: use a server without a password, or a profile whose password \
         is in the keychain (`stockguard profile add`)"
    )]
    PasswordInUrl { what: &'static str, url: String },
}

/// The sandbox folder: `$STOCKGUARD_SANDBOX_DIR`, else `.sandbox` in the current directory.
pub fn default_dir() -> PathBuf {
    std::env::var_os("STOCKGUARD_SANDBOX_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(".sandbox"))
}

pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> SandboxError + '_ {
    move |source| SandboxError::Io { path: path.display().to_string(), source }
}
