//! The burn-down drawn with `plotters`, as the drift chart is (`crate::chart`): SVG text for
//! the window, a PNG file for a report, the same routine for both, labels given by the
//! caller in the user's language.

use std::path::Path;

use plotters::prelude::*;

use super::burndown::BurnDown;
use crate::chart::draw::{draw_err, legend};
use crate::chart::{ChartError, ChartLabels};

/// The labels when the caller gives none.
pub fn default_labels() -> ChartLabels {
    ChartLabels {
        title: "Stock burn-down".into(),
        x_axis: "minutes since the first order".into(),
        y_axis: "units left".into(),
    }
}

fn check(size: (u32, u32)) -> Result<(), ChartError> {
    if !(200..=4000).contains(&size.0) || !(120..=3000).contains(&size.1) {
        return Err(ChartError::BadSize { width: size.0, height: size.1 });
    }
    Ok(())
}

/// (minutes since the start, units left) per point.
fn series(b: &BurnDown) -> Vec<(f64, i64)> {
    let Some(start) = b.points.first().map(|p| p.at) else { return Vec::new() };
    b.points.iter().map(|p| ((p.at - start).num_milliseconds() as f64 / 60_000.0, p.remaining)).collect()
}

fn draw<DB>(backend: DB, b: &BurnDown, labels: &ChartLabels, series_name: &str) -> Result<(), ChartError>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let points = series(b);
    let x1 = points.last().map_or(1.0, |p| p.0).max(1.0 / 60.0);
    let lowest = points.iter().map(|p| p.1).min().unwrap_or(0).min(0);
    let top = points.iter().map(|p| p.1).max().unwrap_or(0).max(b.initial_units).max(1);
    let pad = (top - lowest) / 20 + 1;

    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&labels.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x1, lowest..(top + pad))
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc(&labels.x_axis)
        .y_desc(&labels.y_axis)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(draw_err)?;
    // Initial stock and zero as reference lines; below zero is oversold.
    chart
        .draw_series(LineSeries::new([(0.0, b.initial_units), (x1, b.initial_units)], BLACK.mix(0.25)))
        .map_err(draw_err)?;
    chart.draw_series(LineSeries::new([(0.0, 0), (x1, 0)], RED.mix(0.5))).map_err(draw_err)?;
    let color = Palette99::pick(0).to_rgba();
    chart
        .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
        .map_err(draw_err)?
        .label(series_name.to_string())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
    legend(&mut chart, SeriesLabelPosition::UpperRight, 12)?;
    root.present().map_err(draw_err)
}

/// The burn-down as an SVG document; `series_name` names the line in the legend.
pub fn burndown_svg(
    b: &BurnDown,
    labels: &ChartLabels,
    series_name: &str,
    size: (u32, u32),
) -> Result<String, ChartError> {
    check(size)?;
    crate::chart::font::register();
    let mut svg = String::new();
    draw(SVGBackend::with_string(&mut svg, size), b, labels, series_name)?;
    Ok(svg)
}

/// The same chart as a PNG file at `path` (its folder is created if missing).
pub fn burndown_png(
    b: &BurnDown,
    labels: &ChartLabels,
    series_name: &str,
    size: (u32, u32),
    path: &Path,
) -> Result<(), ChartError> {
    check(size)?;
    crate::chart::font::register();
    let write_err = |reason: String| ChartError::Write { path: path.display().to_string(), reason };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| write_err(e.to_string()))?;
    }
    draw(BitMapBackend::new(path, size), b, labels, series_name).map_err(|e| match e {
        ChartError::Draw { reason } => write_err(reason),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overview::burndown::BurnPoint;

    fn burn() -> BurnDown {
        let t0 = chrono::NaiveDate::from_ymd_opt(2026, 12, 1).unwrap().and_hms_opt(20, 0, 0).unwrap();
        let points = (0..10)
            .map(|i| BurnPoint { at: t0 + chrono::Duration::seconds(30 * i), remaining: 100 - 10 * i, sold: 10 })
            .collect();
        BurnDown { product_id: None, initial_units: 100, bucket_secs: 30, points }
    }

    #[test]
    fn the_svg_burn_down_has_its_title_its_series_and_minutes_on_the_x_axis() {
        let svg = burndown_svg(&burn(), &default_labels(), "whole sale", (640, 320)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("Stock burn-down") && svg.contains("whole sale"));
        assert_eq!(series(&burn()).last(), Some(&(4.5, 10)));
    }

    #[test]
    fn a_burn_down_png_is_written_and_a_silly_size_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b").join("burn.png");
        burndown_png(&burn(), &default_labels(), "1016", (800, 400), &path).unwrap();
        assert_eq!(&std::fs::read(&path).unwrap()[..4], b"\x89PNG");
        assert!(matches!(burndown_svg(&burn(), &default_labels(), "x", (10, 10)), Err(ChartError::BadSize { .. })));
    }
}
