//! The live board's one-shot reading and its drift chart. The live stream itself is the
//! `board-tick` event (`board_feed.rs`).

use stockguard::chart::{self, ChartLabels};
use stockguard::recon::{read_products, Reading};
use tauri::State;

use crate::error::DesktopError;
use crate::state::AppState;

/// Every product with where its stock is, most severe first.
#[tauri::command]
pub async fn list_products(state: State<'_, AppState>) -> Result<Vec<Reading>, DesktopError> {
    let live = state.live().await?;
    let mut redis = live.conns.redis.clone();
    Ok(read_products(&live.conns.mysql, &mut redis, &live.conns.keys, &[]).await?)
}

/// The drift of `products` over the sampler's history, as SVG.
#[tauri::command]
pub async fn drift_chart(
    state: State<'_, AppState>,
    products: Vec<u64>,
    labels: ChartLabels,
    width: u32,
    height: u32,
) -> Result<String, DesktopError> {
    let points = state.live().await?.history.lock().expect("history lock").all();
    Ok(chart::drift_svg(&points, &products, &labels, (width, height))?)
}

/// The same chart as a PNG at `path` (none: the default path); returns where it went.
#[tauri::command]
pub async fn export_drift_png(
    state: State<'_, AppState>,
    products: Vec<u64>,
    labels: ChartLabels,
    path: Option<String>,
) -> Result<String, DesktopError> {
    let points = state.live().await?.history.lock().expect("history lock").all();
    let path = match path.map(|p| p.trim().to_string()).filter(|p| !p.is_empty()) {
        Some(p) => std::path::PathBuf::from(p),
        None => chart::default_png_path(&products, chrono::Utc::now()),
    };
    chart::drift_png(&points, &products, &labels, (1200, 600), &path)?;
    Ok(path.display().to_string())
}
