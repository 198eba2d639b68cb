//! Connecting, and what the environment banner shows.

use serde::Serialize;
use tauri::{AppHandle, Manager as _, State};

use crate::alert_desk::AlertDesk;
use crate::board_feed;
use crate::error::DesktopError;
use crate::state::AppState;
use stockguard_core::sale::Capability;
use stockguard_core::sale::Sale;

/// What the banner shows: which sale, which kind of environment, as whom.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct ConnectionInfo {
    pub profile: Option<String>,
    pub environment: stockguard_core::profile::EnvironmentKind,
    pub role: stockguard_core::profile::Role,
    pub read_only: bool,
    pub mysql: String,
    pub redis: String,
    pub key_prefix: String,
    pub has_replica: bool,
    /// The sale's name when it is read over its adapter file (a sale Stockguard did not build).
    pub adapter_sale: Option<String>,
    /// Things the user should know about this connection (e.g. where a password came from).
    pub notices: Vec<stockguard_core::profile::Notice>,
}

/// What the connected accounts may do, as MySQL and Redis say (never a raw server error: a
/// refusal is a reason, what the servers will not tell is unknown). The window disables the
/// actions refused and says why.
#[tauri::command(rename_all = "snake_case")]
pub async fn connection_rights(state: State<'_, AppState>) -> Result<stockguard_core::roles::Rights, DesktopError> {
    let live = state.live().await?;
    let conns = live.ours(Capability::Rights)?;
    stockguard_core::roles::effective_rights(conns).await.map_err(|e| DesktopError::Query(e.to_string().into()))
}

#[tauri::command(rename_all = "snake_case")]
pub async fn connection_info(state: State<'_, AppState>) -> Result<ConnectionInfo, DesktopError> {
    let live = state.live().await?;
    let s = &live.settings;
    Ok(ConnectionInfo {
        profile: s.profile_name.clone(),
        environment: s.environment,
        role: s.role,
        read_only: s.read_only,
        mysql: s.mysql_display(),
        redis: s.redis_display(),
        key_prefix: s.key_prefix.clone(),
        has_replica: live.sale.replica().is_some(),
        adapter_sale: live.adapter().map(|sale| sale.file.sale.name.clone()),
        notices: s.notices.clone(),
    })
}

/// Connects to `profile` (none: the `--profile` the app started with, the environment
/// overrides or the local sandbox) and starts streaming the board and the overview.
#[tauri::command(rename_all = "snake_case")]
pub async fn connect(
    app: AppHandle,
    state: State<'_, AppState>,
    profile: Option<String>,
) -> Result<ConnectionInfo, DesktopError> {
    let chosen = profile.or_else(|| state.start_profile.clone());
    let (live, feeds) = state.connect(chosen.as_deref()).await?;
    app.state::<AlertDesk>().reset();
    match (&live.sale, &live.latest) {
        (Sale::Ours(o), _) => super::overview::spawn_feed(app.clone(), o.conns.clone(), feeds.ticks.resubscribe()),
        (Sale::Adapter(a), Some(latest)) => super::overview::spawn_over_adapter_feed(
            app.clone(),
            a.sale.clone(),
            latest.clone(),
            feeds.ticks.resubscribe(),
        ),
        (Sale::Adapter(_), None) => unreachable!("a sale over an adapter is opened with its latest reading"),
    }
    board_feed::spawn(app, std::sync::Arc::downgrade(&live), feeds);
    connection_info(state).await
}
