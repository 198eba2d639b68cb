//! One drawing routine for every back end: a line per product, broken where the stock key
//! was missing (no drift to show), a zero line, and a legend of product ids.

use plotters::prelude::*;

use super::{ChartError, ChartLabels};
use crate::product_id::ProductId;
use crate::recon::sampler::HistoryPoint;

pub(crate) fn draw_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> ChartError {
    ChartError::Draw { reason: e.to_string() }
}

/// Runs of (seconds before the last point, drift) with no gap.
type Runs = Vec<Vec<(f64, i64)>>;

/// Each product's runs of known drift as (seconds before the last point, drift) pairs.
fn segments(points: &[HistoryPoint], product: &ProductId) -> Runs {
    let Some(last) = points.last() else { return Vec::new() };
    let mut runs = vec![Vec::new()];
    for point in points {
        let x = (point.at - last.at).num_milliseconds() as f64 / 1000.0;
        match point.drift.iter().find(|(id, _)| id == product).and_then(|(_, d)| *d) {
            Some(d) => runs.last_mut().expect("never empty").push((x, d)),
            None if !runs.last().expect("never empty").is_empty() => runs.push(Vec::new()),
            None => {}
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

pub(super) fn drift<DB>(
    backend: DB,
    points: &[HistoryPoint],
    products: &[ProductId],
    labels: &ChartLabels,
) -> Result<(), ChartError>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let series: Vec<(&ProductId, Runs)> = products.iter().map(|p| (p, segments(points, p))).collect();
    let all = series.iter().flat_map(|(_, runs)| runs.iter().flatten());
    let (mut x0, mut y0, mut y1) = (-60.0f64, -1i64, 1i64);
    for &(x, y) in all {
        x0 = x0.min(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    // A little head room so a flat line is not drawn on the frame.
    let pad = ((y1 - y0) / 10).max(1);

    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&labels.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(x0..0.0, (y0 - pad)..(y1 + pad))
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc(&labels.x_axis)
        .y_desc(&labels.y_axis)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(draw_err)?;
    chart.draw_series(LineSeries::new([(x0, 0), (0.0, 0)], BLACK.mix(0.4))).map_err(draw_err)?;
    for (i, (product, runs)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        for (j, run) in runs.iter().enumerate() {
            let drawn =
                chart.draw_series(LineSeries::new(run.iter().copied(), color.stroke_width(2))).map_err(draw_err)?;
            if j == 0 {
                drawn
                    .label(product.to_string())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
            }
        }
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft, 12)?;
    root.present().map_err(draw_err)
}

/// The legend of every chart Stockguard draws: a framed, see-through box of series names.
pub(crate) fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
    font_size: u32,
) -> Result<(), ChartError>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.5))
        .label_font(("sans-serif", font_size))
        .draw()
        .map_err(draw_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, Utc};

    #[test]
    fn a_missing_key_breaks_the_line_into_two_runs() {
        let t0 = Utc::now();
        let drifts = [Some(3), Some(3), None, Some(0)];
        let points: Vec<HistoryPoint> = drifts
            .iter()
            .enumerate()
            .map(|(i, d)| HistoryPoint {
                at: t0 + Duration::seconds(i as i64),
                drift: vec![(7.into(), *d), (8.into(), Some(1))],
            })
            .collect();
        assert_eq!(segments(&points, &7.into()), vec![vec![(-3.0, 3), (-2.0, 3)], vec![(0.0, 0)]]);
        assert_eq!(segments(&points, &8.into()).len(), 1);
        assert!(segments(&points, &9.into()).is_empty(), "a product never read has no line");
    }
}
