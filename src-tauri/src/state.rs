//! The app's connection: opened from a profile (or the environment overrides, or the local
//! `sandbox` profile) when the window asks, replaced when the user connects to another one.
//! While connected, the drift sampler runs and its ticks are forwarded to the window; a drill
//! run the window started or opened is watched (one at a time) through the database.
//!
//! The sale is the core's one [`Sale`], opened the core's one way: a profile that names an
//! adapter file opens a sale Stockguard did not build, whose sampler reads over the adapter
//! and sends the same ticks, so the board, the alerts and the compensation step work on it; a
//! screen that needs our own tables says why it cannot, in the core's words ([`Live::ours`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use sqlx::MySqlPool;
use stockguard_core::adapter::{self, AdapterReading, OpenedSale};
use stockguard_core::alerts::acks;
use stockguard_core::connect::Connections;
use stockguard_core::drills::launch;
use stockguard_core::profile::ConnectionSettings;
use stockguard_core::recon::sampler::{self, History, SamplerConfig};
use stockguard_core::sale::{Capability, OpenRequest, Sale};
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
    /// The profile (or overrides) it was opened with.
    pub settings: ConnectionSettings,
    /// The sale, our own or one over its adapter: the core's one `Sale`, asked what it can do.
    pub sale: Sale,
    /// Over an adapter: the newest reading's adapter figures (lost orders among them), set
    /// before its tick.
    pub latest: Option<watch::Receiver<Arc<Vec<AdapterReading>>>>,
    pub history: Arc<Mutex<History>>,
    stop: watch::Sender<bool>,
}

impl Live {
    /// Our own sale's connections for `capability`, or why this sale cannot do it (the
    /// core's table, in the CLI's words).
    pub fn ours(&self, capability: Capability) -> Result<&Connections, DesktopError> {
        Ok(self.sale.ours(capability)?)
    }

    /// The sale over its adapter, when that is what is open.
    pub fn adapter(&self) -> Option<&Arc<OpenedSale>> {
        self.sale.adapter()
    }

    /// Where Stockguard keeps its own records of this sale (audit, compensation cases,
    /// acknowledgements): our sale's database, or an adapter sale's state database.
    pub fn records(&self) -> Result<&MySqlPool, DesktopError> {
        Ok(self.sale.records()?)
    }

    /// Where the acknowledgements of this sale's alerts are kept (none: an adapter sale
    /// without a state database).
    pub fn alert_acks(&self) -> Option<acks::Desk<'_>> {
        self.sale.alert_acks()
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
        // The core's one way to open a sale: the profile says whether it is one over an adapter.
        let sale =
            stockguard_core::sale::open(&OpenRequest { profile, replica: true, ..OpenRequest::default() }).await?;
        let settings = sale.settings().clone();
        let (stop, stopped) = watch::channel(false);
        let (ticks, tick_rx) = broadcast::channel(4);
        let (errors, error_rx) = broadcast::channel(16);
        // A point of 5,000 products is 120 KB. Ten minutes at full rate (72 MB), then one point
        // in 20 (22 MB an hour more), where the default hour at full rate would hold 430 MB. Over
        // an adapter a reading is two passes a second apart: a point a tick.
        let config = SamplerConfig { recent_capacity: 600, archive_every: 20, ..SamplerConfig::default() };
        let history = Arc::new(Mutex::new(History::new(config.recent_capacity, config.archive_every)));
        let latest = match &sale {
            Sale::Adapter(a) => {
                let (latest, latest_rx) = watch::channel(Arc::new(Vec::new()));
                let out = adapter::sampler::Outlets { ticks, latest, errors, history: history.clone() };
                tokio::spawn(adapter::sampler::run(a.sale.clone(), config, out, stopped));
                Some(latest_rx)
            }
            Sale::Ours(o) => {
                tokio::spawn(sampler::run(o.conns.clone(), config, ticks, errors, history.clone(), stopped));
                None
            }
        };
        let live = Live { settings, sale, latest, history, stop };
        let live = Arc::new(live);
        *self.live.write().await = Some(live.clone());
        Ok((live, Feeds { ticks: tick_rx, errors: error_rx }))
    }
}
