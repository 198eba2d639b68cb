//! The app's connection: opened from a profile (or the environment overrides, or the local
//! `sandbox` profile) when the window asks, replaced when the user connects to another one.
//! While connected, the drift sampler runs and its ticks are forwarded to the window; a drill
//! run the window started or opened is watched (one at a time) through the database.
//!
//! A profile that names an adapter file opens a sale Stockguard did not build ([`Sale::Adapter`]):
//! its sampler reads over the adapter and sends the same ticks, so the board, the alerts and the
//! compensation step work on it; a screen that needs our own tables says why it cannot
//! ([`Live::ours`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use sqlx::MySqlPool;
use stockguard_core::adapter::{self, AdapterError, AdapterFile, AdapterReading, OpenedSale};
use stockguard_core::alerts::acks;
use stockguard_core::connect::{connect_replica, Connections};
use stockguard_core::drills::launch;
use stockguard_core::profile::{resolve_for_process, resolve_for_process_without_mysql, ConnectionSettings};
use stockguard_core::recon::sampler::{self, History, SamplerConfig};
use tauri::async_runtime::JoinHandle;
use tokio::sync::{broadcast, watch, RwLock};

use crate::drill_feed;
use crate::error::{DesktopError, OnlyOurs};

/// The `stockguard` binary that runs drills: `STOCKGUARD_BIN`, else the one beside this app
/// (`cargo build` puts both in `target/<profile>/`; the packages install both side by side).
pub fn drill_runner() -> Result<PathBuf, DesktopError> {
    let app = std::env::current_exe()
        .map_err(|e| DesktopError::Runner(format!("cannot find this app's binary: {e}").into()))?;
    Ok(launch::runner_binary(std::env::var_os(launch::BIN_VAR), &app)?)
}

/// One open connection and the sampler watching it. Dropping it stops the sampler.
pub struct Live {
    /// The profile (or overrides) it was opened with.
    pub settings: ConnectionSettings,
    pub sale: Sale,
    pub history: Arc<Mutex<History>>,
    stop: watch::Sender<bool>,
}

/// What kind of sale is open. One per app: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Sale {
    /// A sale our engine runs: our tables, keys and streams.
    Ours {
        conns: Connections,
        /// The profile's read replica, for the ledger check.
        replica: Option<MySqlPool>,
    },
    /// A sale Stockguard did not build, read over its adapter file (`adapter` in the profile).
    Adapter {
        sale: Arc<OpenedSale>,
        /// The newest reading's adapter figures (lost orders among them), set before its tick.
        latest: watch::Receiver<Arc<Vec<AdapterReading>>>,
    },
}

impl Live {
    /// Our own sale's connections, or why `screen` cannot work on a sale over an adapter.
    pub fn ours(&self, screen: OnlyOurs) -> Result<&Connections, DesktopError> {
        match &self.sale {
            Sale::Ours { conns, .. } => Ok(conns),
            Sale::Adapter { sale, .. } => Err(DesktopError::not_over_adapter(screen, &sale.file.sale.name)),
        }
    }

    /// The sale over its adapter, when that is what is open.
    pub fn adapter(&self) -> Option<&Arc<OpenedSale>> {
        match &self.sale {
            Sale::Adapter { sale, .. } => Some(sale),
            Sale::Ours { .. } => None,
        }
    }

    /// Where Stockguard keeps its own records of this sale (audit, compensation cases,
    /// acknowledgements): our sale's database, or an adapter sale's state database.
    pub fn records(&self) -> Result<&MySqlPool, DesktopError> {
        match &self.sale {
            Sale::Ours { conns, .. } => Ok(&conns.mysql),
            Sale::Adapter { sale, .. } => Ok(sale.state()?),
        }
    }

    /// Where the acknowledgements of this sale's alerts are kept (none: an adapter sale
    /// without a state database).
    pub fn alert_acks(&self) -> Option<acks::Desk<'_>> {
        match &self.sale {
            Sale::Ours { conns, .. } => Some(acks::Desk::ours(conns)),
            Sale::Adapter { sale, .. } => {
                sale.state.as_ref().map(|state| acks::Desk::adapter(state, &self.settings, &sale.file.sale.name))
            }
        }
    }
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
                profile = live.settings.profile_name.as_deref().unwrap_or("(environment overrides)"),
                environment = %live.settings.environment,
                key_prefix = %live.settings.key_prefix,
                adapter = ?live.settings.adapter,
                "connected"
            ),
            Err(e) => tracing::warn!(profile = profile.unwrap_or("(default)"), error = %e, "cannot connect"),
        }
        opened
    }

    async fn open(&self, profile: Option<&str>) -> Result<(Arc<Live>, Feeds), DesktopError> {
        // The profile says whether it is a sale over an adapter, and a counters-only adapter
        // sale has no MySQL URL: resolve without one first.
        let first = resolve_for_process_without_mysql(profile).await?;
        let (stop, stopped) = watch::channel(false);
        let (ticks, tick_rx) = broadcast::channel(4);
        let (errors, error_rx) = broadcast::channel(16);
        let live = match first.adapter.clone() {
            Some(path) => {
                let file = AdapterFile::load(&path).map_err(AdapterError::from)?;
                let settings = if adapter::open::needs_db(&file) { resolve_for_process(profile).await? } else { first };
                let sale = Arc::new(OpenedSale::connect(file, &settings, None).await?);
                // A reading over an adapter is two passes a second apart: a point a tick.
                let config = SamplerConfig { recent_capacity: 600, archive_every: 20, ..SamplerConfig::default() };
                let history = Arc::new(Mutex::new(History::new(config.recent_capacity, config.archive_every)));
                let (latest, latest_rx) = watch::channel(Arc::new(Vec::new()));
                let out = adapter::sampler::Outlets { ticks, latest, errors, history: history.clone() };
                tokio::spawn(adapter::sampler::run(sale.clone(), config, out, stopped));
                Live { settings, sale: Sale::Adapter { sale, latest: latest_rx }, history, stop }
            }
            None => {
                let settings = resolve_for_process(profile).await?;
                let conns = Connections::open(settings.clone()).await?;
                let replica = connect_replica(&conns.settings).await?;
                // A point of 5,000 products is 120 KB. Ten minutes at full rate (72 MB), then one
                // point in 20 (22 MB an hour more), where the default hour at full rate would
                // hold 430 MB.
                let config = SamplerConfig { recent_capacity: 600, archive_every: 20, ..SamplerConfig::default() };
                let history = Arc::new(Mutex::new(History::new(config.recent_capacity, config.archive_every)));
                tokio::spawn(sampler::run(conns.clone(), config, ticks, errors, history.clone(), stopped));
                Live { settings, sale: Sale::Ours { conns, replica }, history, stop }
            }
        };
        let live = Arc::new(live);
        *self.live.write().await = Some(live.clone());
        Ok((live, Feeds { ticks: tick_rx, errors: error_rx }))
    }
}
