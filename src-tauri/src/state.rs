//! The app's connection: opened from a profile (or the environment overrides, or the local
//! `sandbox` profile) when the window asks, replaced when the user connects to another one.
//! While connected, the drift sampler runs and its ticks are forwarded to the window; a drill
//! run the window started or opened is watched (one at a time) through the database.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use sqlx::MySqlPool;
use stockguard_core::connect::{connect_replica, Connections};
use stockguard_core::drills::launch;
use stockguard_core::profile::resolve_for_process;
use stockguard_core::recon::sampler::{self, History, SamplerConfig};
use tauri::async_runtime::JoinHandle;
use tokio::sync::{broadcast, watch, RwLock};

use crate::drill_feed;
use crate::error::DesktopError;

/// The `stockguard` binary that runs drills: `STOCKGUARD_BIN`, else the one beside this app
/// (`cargo build` puts both in `target/<profile>/`; the packages install both side by side).
pub fn drill_runner() -> Result<PathBuf, DesktopError> {
    let app = std::env::current_exe()
        .map_err(|e| DesktopError::Runner(format!("cannot find this app's binary: {e}").into()))?;
    Ok(launch::runner_binary(std::env::var_os(launch::BIN_VAR), &app)?)
}

/// One open connection and the sampler watching it. Dropping it stops the sampler.
pub struct Live {
    pub conns: Connections,
    /// The profile's read replica, for the ledger check.
    pub replica: Option<MySqlPool>,
    pub history: Arc<Mutex<History>>,
    stop: watch::Sender<bool>,
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

pub struct AppState {
    /// `--profile NAME` from the command line, used by the first automatic connect.
    pub start_profile: Option<String>,
    live: RwLock<Option<Arc<Live>>>,
    /// The drill run the window watches (`drill_feed`): one at a time, replaced by the next.
    drill_watch: Mutex<Option<JoinHandle<()>>>,
}

/// `--profile NAME` or `--profile=NAME` from the command line.
pub fn profile_from_args(args: impl Iterator<Item = String>) -> Option<String> {
    let args: Vec<String> = args.collect();
    args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--profile=")
            .map(str::to_string)
            .or_else(|| (a == "--profile").then(|| args.get(i + 1).cloned()).flatten())
    })
}

/// What the sampler hands the forwarder: its ticks and its reading errors.
pub struct Feeds {
    pub ticks: broadcast::Receiver<Arc<sampler::Tick>>,
    pub errors: broadcast::Receiver<String>,
}

impl AppState {
    pub fn new(start_profile: Option<String>) -> Self {
        Self { start_profile, live: RwLock::new(None), drill_watch: Mutex::new(None) }
    }

    /// Watches `run_id` from now on, instead of the run watched before.
    pub fn watch_drill(&self, app: tauri::AppHandle, pool: MySqlPool, run_id: u64) {
        let feed = drill_feed::spawn(app, pool, run_id);
        if let Some(previous) = self.drill_watch.lock().expect("drill watch lock").replace(feed) {
            previous.abort();
        }
    }

    /// The open connection.
    pub async fn live(&self) -> Result<Arc<Live>, DesktopError> {
        self.live.read().await.clone().ok_or(DesktopError::NotConnected)
    }

    /// Opens `profile` (resolved as the CLI would), starts its sampler and replaces the
    /// previous connection, whose sampler stops.
    pub async fn connect(&self, profile: Option<&str>) -> Result<(Arc<Live>, Feeds), DesktopError> {
        let opened = self.open(profile).await;
        match &opened {
            Ok((live, _)) => tracing::info!(
                profile = live.conns.settings.profile_name.as_deref().unwrap_or("(environment overrides)"),
                environment = %live.conns.settings.environment,
                key_prefix = %live.conns.settings.key_prefix,
                "connected"
            ),
            Err(e) => tracing::warn!(profile = profile.unwrap_or("(default)"), error = %e, "cannot connect"),
        }
        opened
    }

    async fn open(&self, profile: Option<&str>) -> Result<(Arc<Live>, Feeds), DesktopError> {
        let settings = resolve_for_process(profile).await?;
        let conns = Connections::open(settings).await?;
        let replica = connect_replica(&conns.settings).await?;
        // A point of 5,000 products is 120 KB. Ten minutes at full rate (72 MB), then one point
        // in 20 (22 MB an hour more), where the default hour at full rate would hold 430 MB.
        let config = SamplerConfig { recent_capacity: 600, archive_every: 20, ..SamplerConfig::default() };
        let history = Arc::new(Mutex::new(History::new(config.recent_capacity, config.archive_every)));
        let (stop, stopped) = watch::channel(false);
        let (ticks, tick_rx) = broadcast::channel(4);
        let (errors, error_rx) = broadcast::channel(16);
        tokio::spawn(sampler::run(conns.clone(), config, ticks, errors, history.clone(), stopped));
        let live = Arc::new(Live { conns, replica, history, stop });
        *self.live.write().await = Some(live.clone());
        Ok((live, Feeds { ticks: tick_rx, errors: error_rx }))
    }
}
