//! The live board's drift chart. The board itself is fed by the `board-tick` event
//! (`board_feed.rs`), never by a command.

use stockguard_core::chart::{self, ChartLabels};
use stockguard_core::ProductId;
use tauri::State;

use crate::error::DesktopError;
use crate::state::AppState;

/// The drift of `products` over the sampler's history, as SVG.
#[tauri::command(rename_all = "snake_case")]
pub async fn drift_chart(
    state: State<'_, AppState>,
    products: Vec<ProductId>,
    labels: ChartLabels,
    width: u32,
    height: u32,
) -> Result<String, DesktopError> {
    let points = state.live().await?.history.lock().expect("history lock").of_products(&products);
    Ok(chart::drift_svg(&points, &products, &labels, (width, height))?)
}

/// The same chart as a PNG at `path` (none: the default path); returns where it went.
/// Labels default to English: the font embedded for PNGs has no CJK glyphs.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_drift_png(
    state: State<'_, AppState>,
    products: Vec<ProductId>,
    labels: Option<ChartLabels>,
    path: Option<String>,
) -> Result<String, DesktopError> {
    let labels = labels.unwrap_or_default();
    let points = state.live().await?.history.lock().expect("history lock").of_products(&products);
    let path = match path.map(|p| p.trim().to_string()).filter(|p| !p.is_empty()) {
        Some(p) => std::path::PathBuf::from(p),
        None => chart::default_png_path(&products, chrono::Utc::now()),
    };
    chart::drift_png(&points, &products, &labels, (1200, 600), &path)?;
    Ok(path.display().to_string())
}
