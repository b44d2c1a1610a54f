//! The `--plot` SVG: cost against stream size on log-log axes, one panel per operation and one
//! line per target and case. A flat line is a cost independent of the stream's size (window
//! reads, appends); a line of slope one is a cost proportional to it (a trim removing a fixed
//! share of the stream frees a number of nodes proportional to its size).

use std::path::Path;

use plotters::prelude::*;

use super::error::BenchError;
use super::results::Report;

/// Size of the drawing, in SVG pixels.
const SIZE: (u32, u32) = (1400, 1000);
/// The trims drawn: the 10% ones (the others are in the table and the JSON).
const TRIM_FRACTION_DRAWN: f64 = 0.10;

/// One line: a label and its points (stream size, cost).
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// `(entries, cost)` in increasing `entries`.
    pub points: Vec<(f64, f64)>,
}

/// One panel.
#[derive(Debug, Clone)]
pub struct Panel {
    /// Caption.
    pub title: String,
    /// Y axis text.
    pub unit: String,
    /// Lines.
    pub series: Vec<Series>,
}

fn push(series: &mut Vec<Series>, label: String, point: (f64, f64)) {
    match series.iter_mut().find(|s| s.label == label) {
        Some(s) => s.points.push(point),
        None => series.push(Series {
            label,
            points: vec![point],
        }),
    }
}

/// The panels of a report, empty ones left out.
pub fn panels(report: &Report) -> Vec<Panel> {
    let mut window = Vec::new();
    for r in report.window.iter().filter(|r| r.position == "tail") {
        push(
            &mut window,
            format!("{} {}", r.target, r.span),
            (r.entries as f64, r.p50_us),
        );
    }
    let mut trim = Vec::new();
    for r in &report.trim {
        if (r.fraction - TRIM_FRACTION_DRAWN).abs() < 1e-9 {
            push(
                &mut trim,
                format!("{} {}", r.target, r.strategy),
                (r.entries as f64, r.time_us),
            );
        }
    }
    // With several queues, one line per queue.
    let lane = |target: &str, queue: usize| {
        if report.config.queues > 1 {
            format!("{target} q{queue}")
        } else {
            target.to_string()
        }
    };
    let mut append = Vec::new();
    for r in &report.append {
        push(
            &mut append,
            format!("{} {}", lane(&r.target, r.queue), r.mode),
            (r.entries as f64, r.us_per_op),
        );
    }
    let mut consume = Vec::new();
    for r in &report.consume {
        push(
            &mut consume,
            format!("{} {}", lane(&r.target, r.queue), r.mode),
            (r.entries as f64, r.us_per_entry),
        );
    }
    [
        (
            "window read at the tail, p50 (1 s, 1 min, 5 min)",
            "us per read_window",
            window,
        ),
        (
            "XTRIM removing 10% of the stream (median)",
            "us per XTRIM",
            trim,
        ),
        ("XADD, plain and with MAXLEN ~ size", "us per XADD", append),
        (
            "append + StreamConsumer (XREADGROUP, no-op handler, XACK)",
            "us per entry",
            consume,
        ),
    ]
    .into_iter()
    .filter(|(_, _, s)| !s.is_empty())
    .map(|(title, unit, series)| Panel {
        title: title.to_string(),
        unit: unit.to_string(),
        series,
    })
    .collect()
}

/// A log axis range around `values` (positive), padded so points are not on the frame, with
/// `headroom` more decades above the data for every decade it spans (room for the legend).
fn log_range(values: impl Iterator<Item = f64>, headroom: f64) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return 1.0..10.0;
    }
    let decades = (hi / lo).log10().max(1.0);
    (lo / 2.0)..(hi * 2.0 * 10f64.powf(decades * headroom))
}

/// Axis labels: `1k`, `1M`; `0.5`, `20`, `3000`.
fn axis_label(v: &f64) -> String {
    if *v >= 1000.0 {
        super::table::human(*v)
    } else if *v >= 1.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Draws the report's panels to `path`.
pub fn draw(report: &Report, path: &Path) -> Result<(), BenchError> {
    let fail = |e: &dyn std::fmt::Display| BenchError::Output {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let panels = panels(report);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let rows = panels.len().div_ceil(2).max(1);
    let areas = root.split_evenly((rows, 2));
    for (area, panel) in areas.iter().zip(&panels) {
        let points = || panel.series.iter().flat_map(|s| s.points.iter());
        let x = log_range(points().map(|p| p.0), 0.0);
        // The legend sits above the lines: one line of legend per series needs room.
        let y = log_range(points().map(|p| p.1), 0.06 * panel.series.len() as f64);
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x.log_scale(), y.log_scale())
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&axis_label)
            .y_label_formatter(&axis_label)
            .x_desc("entries in the stream (log)")
            .y_desc(format!("{} (log)", panel.unit))
            .draw()
            .map_err(|e| fail(&e))?;
        for (i, series) in panel.series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    series.points.clone(),
                    color.stroke_width(2),
                ))
                .map_err(|e| fail(&e))?
                .label(series.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(
                    series
                        .points
                        .iter()
                        .map(|&p| Circle::new(p, 3, color.filled())),
                )
                .map_err(|e| fail(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 11))
            .draw()
            .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{TrimRow, WindowRow};

    fn window(target: &str, entries: u64, p50_us: f64) -> WindowRow {
        WindowRow {
            target: target.into(),
            entries,
            span: "5min".into(),
            position: "tail".into(),
            read_entries: 3000,
            p50_us,
            p99_us: p50_us * 2.0,
            entries_per_s: 1.0,
        }
    }

    #[test]
    fn one_line_per_target_and_case_in_size_order() {
        let mut report = Report::default();
        for entries in [1000, 10_000] {
            report.window.push(window("a", entries, 5.0));
            report.window.push(window("b", entries, 50.0));
            let mut middle = window("a", entries, 6.0);
            middle.position = "middle".into();
            report.window.push(middle);
        }
        report.trim.push(TrimRow {
            target: "a".into(),
            entries: 1000,
            strategy: "MAXLEN ~".into(),
            fraction: 0.5,
            requested: 500,
            removed: 420,
            left: 580,
            under_trim: 80,
            nodes_freed: 5,
            time_us: 3.0,
            ns_per_entry: Some(7.0),
        });
        let panels = panels(&report);
        // The 50% trim is not drawn, so its panel is left out.
        assert_eq!(panels.len(), 1);
        let labels: Vec<_> = panels[0].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["a 5min", "b 5min"]);
        assert_eq!(panels[0].series[0].points, [(1000.0, 5.0), (10_000.0, 5.0)]);
    }

    #[test]
    fn log_ranges_are_positive_and_never_empty() {
        assert_eq!(log_range([].into_iter(), 0.0), 1.0..10.0);
        assert_eq!(log_range([0.0, -1.0, f64::NAN].into_iter(), 0.0), 1.0..10.0);
        let r = log_range([100.0].into_iter(), 0.0);
        assert!(r.start > 0.0 && r.start < 100.0 && r.end > 100.0);
        let with_room = log_range([1.0, 1000.0].into_iter(), 0.5);
        assert!(
            with_room.end > 1000.0 * 2.0 * 10f64.powf(1.4),
            "{with_room:?}"
        );
    }

    #[test]
    fn the_drawing_is_an_svg_with_a_line_per_series() {
        let mut report = Report::default();
        for entries in [1000, 10_000, 100_000] {
            report.window.push(window("embedded", entries, 5.0));
        }
        let path = std::env::temp_dir().join(format!("echomq-plot-{}.svg", std::process::id()));
        draw(&report, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let doc = roxmltree::Document::parse(&text).unwrap();
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        assert!(text.contains("embedded 5min"));
        assert!(doc.descendants().any(|n| n.tag_name().name() == "polyline"));
    }
}
