//! The report's five charts, drawn with `plotters` as SVG text for the HTML page: load,
//! latency, drift, backlog, engine modes, all on one x axis (seconds since the load started)
//! and each with every fault window shaded, so cause and effect line up down the page.

use plotters::prelude::*;

use super::series::{steps, LoadPoint, ModePoint, TickPoint};
use super::words::Words;
use super::ReportView;
use crate::chart::draw::{draw_err, legend};
use crate::chart::{font, ChartError};

/// The fill of a shaded fault window, as the SVG writes it (a reader of the page, or a test,
/// can find the windows by it).
pub const FAULT_FILL: &str = "#F4A261";
const FAULT_SHADE: RGBColor = RGBColor(0xF4, 0xA2, 0x61);
const SIZE: (u32, u32) = (880, 280);

const GREEN: RGBColor = RGBColor(42, 157, 143);
const SLATE: RGBColor = RGBColor(110, 120, 150);
const RED: RGBColor = RGBColor(200, 40, 40);
const BLUE: RGBColor = RGBColor(38, 100, 180);
const PURPLE: RGBColor = RGBColor(130, 60, 170);

struct Line<'a> {
    name: &'a str,
    color: RGBColor,
    points: Vec<(f64, f64)>,
}

struct Chart<'a> {
    title: &'a str,
    y_label: &'a str,
    lines: Vec<Line<'a>>,
}

/// One chart of the page: its title and its SVG (or why it could not be drawn).
pub(super) struct Drawn {
    pub title: &'static str,
    pub svg: Result<String, ChartError>,
}

/// Every chart of the report, in the order the page shows them.
pub(super) fn all(view: &ReportView, words: &'static Words) -> Vec<Drawn> {
    let s = &view.series;
    let line = |name, color, points: Vec<(f64, f64)>| Line { name, color, points };
    let load = |figure: fn(&LoadPoint) -> f64| s.load.iter().map(|p| (p.at_s, figure(p))).collect();
    let ticks = |figure: fn(&TickPoint) -> f64| s.ticks.iter().map(|t| (t.at_s, figure(t))).collect();
    let mode = |count: fn(&ModePoint) -> u32| steps(&s.mode, view.span_s.1, count);
    let charts = [
        (
            words.throughput,
            words.per_second,
            vec![
                line(words.accepted, GREEN, load(|p| p.accepted as f64)),
                line(words.refused, SLATE, load(|p| p.refused as f64)),
                line(words.errors, RED, load(|p| p.errors as f64)),
            ],
        ),
        (words.latency, words.ms, vec![line("p50", BLUE, load(|p| p.p50_ms)), line("p99", PURPLE, load(|p| p.p99_ms))]),
        (
            words.drift_title,
            words.units,
            vec![
                line(words.drift, BLUE, ticks(|t| t.drift as f64)),
                line(words.drift_max_abs, RED, ticks(|t| t.drift_max_abs as f64)),
            ],
        ),
        (
            words.backlog_title,
            words.units,
            vec![
                line(words.backlog, PURPLE, ticks(|t| t.backlog as f64)),
                line(words.inflight, GREEN, ticks(|t| t.inflight as f64)),
            ],
        ),
        (
            words.mode_title,
            words.engines,
            vec![line(words.redis_path, RED, mode(|p| p.redis_path)), line(words.db_path, BLUE, mode(|p| p.db_path))],
        ),
    ];
    let charts = charts.map(|(title, y_label, lines)| Chart { title, y_label, lines });
    charts.into_iter().map(|chart| Drawn { title: chart.title, svg: svg(&chart, view, words) }).collect()
}

/// The y range of a chart: every point and 0, with head room so a flat line is not drawn on
/// the frame.
fn y_range(lines: &[Line]) -> (f64, f64) {
    let ys = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (lo, hi) = ys.fold((0.0f64, 0.0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let pad = ((hi - lo) * 0.08).max(0.5);
    (lo - if lo < 0.0 { pad } else { 0.0 }, hi + pad)
}

fn svg(chart: &Chart, view: &ReportView, words: &Words) -> Result<String, ChartError> {
    font::register();
    let mut out = String::new();
    draw(SVGBackend::with_string(&mut out, SIZE), chart, view, words)?;
    Ok(out)
}

fn draw<DB>(backend: DB, chart: &Chart, view: &ReportView, words: &Words) -> Result<(), ChartError>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let (x0, x1) = view.span_s;
    let (y0, y1) = y_range(&chart.lines);
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    let mut plot = ChartBuilder::on(&root)
        .caption(chart.title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(56)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(draw_err)?;
    plot.configure_mesh()
        .x_desc(words.x_axis)
        .y_desc(chart.y_label)
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(draw_err)?;

    if !view.fault_windows.is_empty() {
        let shade = FAULT_SHADE.mix(0.35).filled();
        // A one-off fault (a failover, a deadline moved) still shows as a sliver.
        let sliver = (x1 - x0) / 200.0;
        let rects = view
            .fault_windows
            .iter()
            .map(|w| Rectangle::new([(w.start_s, y0), (w.end_s.max(w.start_s + sliver), y1)], shade));
        plot.draw_series(rects)
            .map_err(draw_err)?
            .label(words.fault_window)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], shade));
    }
    for line in &chart.lines {
        let style = line.color.stroke_width(2);
        plot.draw_series(LineSeries::new(line.points.iter().copied(), style))
            .map_err(draw_err)?
            .label(line.name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
    }
    legend(&mut plot, SeriesLabelPosition::UpperRight, 11)?;
    root.present().map_err(draw_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fault_fill_named_for_readers_is_the_colour_drawn() {
        let RGBColor(r, g, b) = FAULT_SHADE;
        assert_eq!(FAULT_FILL, format!("#{r:02X}{g:02X}{b:02X}"));
    }
}
