//! Drift charts: SVG for the window, PNG files for reports.

use chrono::{Duration, Utc};
use stockguard_core::chart::{drift_png, drift_svg, ChartError, ChartLabels};
use stockguard_core::recon::sampler::HistoryPoint;

fn history() -> Vec<HistoryPoint> {
    let t0 = Utc::now();
    (0..30)
        .map(|i| HistoryPoint {
            at: t0 + Duration::seconds(i),
            drift: vec![(1016.into(), Some(if i < 20 { 7 } else { 0 })), (1017.into(), Some(-5))],
        })
        .collect()
}

#[test]
fn the_svg_chart_names_each_chosen_product_and_the_translated_title() {
    let labels = ChartLabels { title: "偏差趋势".into(), ..ChartLabels::default() };
    let svg = drift_svg(&history(), &[1016.into(), 1017.into()], &labels, (640, 320)).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    assert!(svg.contains("偏差趋势"));
    assert!(svg.contains("\n1016\n</text>") && svg.contains("\n1017\n</text>"), "legend names both products: {svg}");
    assert!(svg.matches("<polyline").count() >= 3, "a line per product plus the zero line");
}

#[test]
fn the_png_export_writes_a_png_file_creating_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("charts").join("drift.png");
    drift_png(&history(), &[1016.into()], &ChartLabels::default(), (800, 400), &path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn a_chart_without_products_is_refused_with_what_to_do() {
    let err = drift_svg(&history(), &[], &ChartLabels::default(), (640, 320)).unwrap_err();
    assert!(matches!(err, ChartError::NoProducts));
    assert!(err.to_string().contains("pick at least one product"));
}

#[test]
fn an_empty_history_still_draws_axes() {
    let svg = drift_svg(&[], &[1016.into()], &ChartLabels::default(), (640, 320)).unwrap();
    assert!(svg.contains("Drift over time"));
}
