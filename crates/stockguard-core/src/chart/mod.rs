//! Drift-over-time charts drawn with `plotters` from the sampler's history: SVG text for a
//! window to show, PNG files for a report. No front end here: callers pass the points and
//! the labels (already translated) and get a string or a file.
//!
//! - [`draw`]: the one drawing routine, generic over the plotters back end.
//! - [`font`]: the embedded font the PNG back end renders text with (WenQuanYi Micro Hei: Latin and CJK).

pub(crate) mod draw;
pub(crate) mod font;

use std::path::Path;

use plotters::prelude::{BitMapBackend, SVGBackend};
use serde::{Deserialize, Serialize};

use crate::product_id::ProductId;
use crate::recon::sampler::HistoryPoint;

/// The texts on a chart, given by the caller in the user's language.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChartLabels {
    pub title: String,
    pub x_axis: String,
    pub y_axis: String,
}

impl Default for ChartLabels {
    fn default() -> Self {
        Self {
            title: "Drift over time".into(),
            x_axis: "seconds before the last reading".into(),
            y_axis: "drift (units)".into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("no product chosen: pick at least one product to chart")]
    NoProducts,
    #[error("the chart size {width}x{height} is not drawable (use 200x120 to 4000x3000)")]
    BadSize { width: u32, height: u32 },
    #[error("drawing the chart failed: {reason}")]
    Draw { reason: String },
    #[error("cannot write the chart to {path}: {reason}")]
    Write { path: String, reason: String },
}

fn check(products: &[ProductId], size: (u32, u32)) -> Result<(), ChartError> {
    if products.is_empty() {
        return Err(ChartError::NoProducts);
    }
    if !(200..=4000).contains(&size.0) || !(120..=3000).contains(&size.1) {
        return Err(ChartError::BadSize { width: size.0, height: size.1 });
    }
    Ok(())
}

/// The drift of `products` over the history, as an SVG document.
pub fn drift_svg(
    points: &[HistoryPoint],
    products: &[ProductId],
    labels: &ChartLabels,
    size: (u32, u32),
) -> Result<String, ChartError> {
    check(products, size)?;
    font::register();
    let mut svg = String::new();
    draw::drift(SVGBackend::with_string(&mut svg, size), points, products, labels)?;
    Ok(svg)
}

/// The same chart as a PNG file at `path` (its folder is created if missing).
pub fn drift_png(
    points: &[HistoryPoint],
    products: &[ProductId],
    labels: &ChartLabels,
    size: (u32, u32),
    path: &Path,
) -> Result<(), ChartError> {
    check(products, size)?;
    font::register();
    let write_err = |reason: String| ChartError::Write { path: path.display().to_string(), reason };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| write_err(e.to_string()))?;
    }
    draw::drift(BitMapBackend::new(path, size), points, products, labels).map_err(|e| match e {
        ChartError::Draw { reason } => write_err(reason),
        other => other,
    })
}

/// Where a PNG goes when the user does not pick a file: the user's pictures (or home)
/// folder, named by product and time.
pub fn default_png_path(products: &[ProductId], now: chrono::DateTime<chrono::Utc>) -> std::path::PathBuf {
    let dir = dirs::picture_dir().or_else(dirs::home_dir).unwrap_or_else(|| ".".into());
    let ids = products.iter().take(4).map(ToString::to_string).collect::<Vec<_>>().join("-");
    dir.join(format!("stockguard-drift-{ids}-{}.png", now.format("%Y%m%d-%H%M%S")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    const SIZE: (u32, u32) = (600, 300);

    /// The chart drawn into memory as the PNG export draws it: RGB rows.
    fn raster(title: &str) -> Vec<u8> {
        font::register();
        let at = Utc::now();
        let points = [
            HistoryPoint { at: at - chrono::Duration::seconds(30), drift: vec![(1.into(), Some(0))] },
            HistoryPoint { at, drift: vec![(1.into(), Some(3))] },
        ];
        let labels = ChartLabels { title: title.into(), x_axis: "秒".into(), y_axis: "偏差".into() };
        let mut buffer = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
        draw::drift(BitMapBackend::with_buffer(&mut buffer, SIZE), &points, &[1.into()], &labels).unwrap();
        buffer
    }

    /// The title's band (the caption is drawn above the plot, within the top 40 rows).
    fn title_band(rgb: &[u8]) -> &[u8] {
        &rgb[..(SIZE.0 * 40 * 3) as usize]
    }

    fn ink(band: &[u8]) -> usize {
        band.chunks(3).filter(|px| px.iter().any(|&c| c < 128)).count()
    }

    #[test]
    fn a_chinese_title_is_drawn_with_its_own_glyphs_not_boxes_or_nothing() {
        let drift = raster("偏差趋势");
        let alarm = raster("库存告警");
        // Ink where the title goes, beyond what an untitled chart has there: the glyphs exist.
        let (titled, untitled) = (ink(title_band(&drift)), ink(title_band(&raster(""))));
        assert!(titled > untitled + 100, "the Chinese title added {} dark pixels", titled - untitled);
        // Two titles of as many characters differ: real glyphs, not one `.notdef` box each
        // (a font without CJK, like the DejaVu Sans Mono embedded before, fails here).
        assert!(title_band(&drift) != title_band(&alarm), "two Chinese titles drew the same pixels");
    }
}
