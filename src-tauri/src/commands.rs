//! Commands the window may invoke. Each parses, calls the core, maps the error.

use serde::Serialize;
use stockguard::recon::{read_products, Reading};
use tauri::State;

use crate::error::DesktopError;
use crate::state::AppState;

/// What the banner shows: which sale, which kind of environment, as whom.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionInfo {
    pub profile: Option<String>,
    pub environment: String,
    pub role: String,
    pub read_only: bool,
    pub mysql: String,
    pub redis: String,
    pub key_prefix: String,
}

#[tauri::command]
pub async fn connection_info(state: State<'_, AppState>) -> Result<ConnectionInfo, DesktopError> {
    let s = &state.connections().await?.settings;
    Ok(ConnectionInfo {
        profile: s.profile_name.clone(),
        environment: s.environment.to_string(),
        role: s.role.to_string(),
        read_only: s.read_only,
        mysql: s.mysql_display(),
        redis: s.redis_display(),
        key_prefix: s.key_prefix.clone(),
    })
}

/// Every product with where its stock is, most severe first.
#[tauri::command]
pub async fn list_products(state: State<'_, AppState>) -> Result<Vec<Reading>, DesktopError> {
    let conns = state.connections().await?;
    let mut redis = conns.redis.clone();
    Ok(read_products(&conns.mysql, &mut redis, &conns.keys, &[]).await?)
}
