//! The `--plot` SVG: cost against stream size on log-log axes, one panel per operation and one
//! line per target and case. A flat line is a cost independent of the stream's size (window
//! reads, appends); a line of slope one is a cost proportional to it (a trim removing a fixed
//! share of the stream frees a number of nodes proportional to its size).
//!
//! The panels share the whole canvas (one panel takes all of it; an odd last one takes its
//! row). A series has a colour and a marker shape of its own, so lines stay apart in grey
//! print; each panel's legend is drawn in a box sized from its labels, inside the plot frame.

use std::path::Path;

use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

/// Marker shapes, taken in turn by a panel's series (with the palette's colours).
const MARKERS: usize = 6;
/// A marker's half width, in pixels.
const MARKER_PX: i32 = 4;
/// Legend text size, and a line of it (pixels).
const LEGEND_FONT_PX: u32 = 12;
const LEGEND_LINE_PX: i32 = 17;
/// An upper bound of a legend character's width at [`LEGEND_FONT_PX`] (sans-serif averages
/// about 0.55 of the size; digits and capitals run wider), so the box holds its text.
const LEGEND_CHAR_PX: f64 = 0.62 * LEGEND_FONT_PX as f64;
/// The legend box's distance from the frame, and its text's from the box.
const LEGEND_INSET_PX: i32 = 10;
const LEGEND_PAD_PX: i32 = 6;
/// The sample in front of each legend label: a line with the marker on it.
const LEGEND_SAMPLE_PX: i32 = 26;

/// Draws marker `shape` (of [`MARKERS`]) centred on `at`.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    shape: usize,
    color: RGBAColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (filled, line) = (color.filled(), color.stroke_width(2));
    let m = MARKER_PX;
    match shape % MARKERS {
        0 => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), m, filled))),
        1 => area.draw(&(EmptyElement::at(at) + TriangleMarker::new((0, 0), m + 1, filled))),
        2 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-m, -m), (m, m)], filled))),
        3 => area.draw(&(EmptyElement::at(at) + Cross::new((0, 0), m, line))),
        4 => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), m, line))),
        _ => area.draw(
            &(EmptyElement::at(at)
                + Polygon::new(
                    vec![(0, -m - 1), (m + 1, 0), (0, m + 1), (-m - 1, 0)],
                    filled,
                )),
        ),
    }
}

/// The areas of `n` panels on `root`: two per row (one when there is one panel), an odd last
/// panel across its row, so that together they cover the canvas.
fn panel_areas<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    n: usize,
) -> Vec<DrawingArea<DB, plotters::coord::Shift>> {
    let cols = if n <= 1 { 1 } else { 2 };
    let rows = n.div_ceil(cols).max(1);
    let mut areas = Vec::with_capacity(n);
    for (r, row) in root.split_evenly((rows, 1)).into_iter().enumerate() {
        let in_row = n.saturating_sub(r * cols).clamp(1, cols);
        areas.extend(row.split_evenly((1, in_row)));
    }
    areas
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
    let areas = panel_areas(&root, panels.len());
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
                .map_err(|e| fail(&e))?;
            for &p in &series.points {
                draw_marker(chart.plotting_area(), p, i, color).map_err(|e| fail(&e))?;
            }
        }
        let frame = chart.plotting_area().strip_coord_spec();
        let (w, h) = frame.dim_in_pixel();
        let corner = (w as i32 - 1, h as i32 - 1);
        frame
            .draw(&Rectangle::new([(0, 0), corner], BLACK.stroke_width(1)))
            .map_err(|e| fail(&e))?;
        draw_legend(&frame, &panel.series).map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

/// The legend box's corners for `labels` inside a frame of `frame_px`, in the frame's pixels:
/// at its upper left, wide enough for the longest label, never past the frame.
fn legend_box(labels: &[&str], frame_px: (u32, u32)) -> ((i32, i32), (i32, i32)) {
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let text_px = (longest as f64 * LEGEND_CHAR_PX).ceil() as i32;
    let width = 2 * LEGEND_PAD_PX + LEGEND_SAMPLE_PX + LEGEND_PAD_PX + text_px;
    let height = 2 * LEGEND_PAD_PX + LEGEND_LINE_PX * labels.len() as i32;
    let (fw, fh) = (frame_px.0 as i32, frame_px.1 as i32);
    let x0 = LEGEND_INSET_PX;
    let y0 = LEGEND_INSET_PX;
    let x1 = (x0 + width).min(fw - LEGEND_INSET_PX).max(x0);
    let y1 = (y0 + height).min(fh - LEGEND_INSET_PX).max(y0);
    ((x0, y0), (x1, y1))
}

/// Each series' sample (its line and marker) and label, in a box inside the plot frame.
fn draw_legend<DB: DrawingBackend>(
    frame: &DrawingArea<DB, plotters::coord::Shift>,
    series: &[Series],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    if series.is_empty() {
        return Ok(());
    }
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    let ((x0, y0), (x1, y1)) = legend_box(&labels, frame.dim_in_pixel());
    frame.draw(&Rectangle::new(
        [(x0, y0), (x1, y1)],
        WHITE.mix(0.9).filled(),
    ))?;
    frame.draw(&Rectangle::new([(x0, y0), (x1, y1)], BLACK.stroke_width(1)))?;
    let font = ("sans-serif", LEGEND_FONT_PX)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, label) in labels.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let y = y0 + LEGEND_PAD_PX + LEGEND_LINE_PX * i as i32 + LEGEND_LINE_PX / 2;
        let x = x0 + LEGEND_PAD_PX;
        frame.draw(&PathElement::new(
            vec![(x, y), (x + LEGEND_SAMPLE_PX, y)],
            color.stroke_width(2),
        ))?;
        draw_marker(frame, (x + LEGEND_SAMPLE_PX / 2, y), i, color)?;
        frame.draw(&Text::new(
            label.to_string(),
            (x + LEGEND_SAMPLE_PX + LEGEND_PAD_PX, y),
            font.clone(),
        ))?;
    }
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

    /// `name`'s attribute `attr` as a number.
    fn number(node: &roxmltree::Node<'_, '_>, attr: &str) -> f64 {
        node.attribute(attr)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no numeric {attr} on {node:?}"))
    }

    #[test]
    fn one_panel_fills_the_canvas_with_a_marker_per_series_and_its_legend_in_a_box() {
        let mut report = Report::default();
        for entries in [1000, 10_000, 100_000] {
            for (t, cost) in [
                ("embedded", 5.0),
                ("redis://127.0.0.1:6379", 50.0),
                ("c", 9.0),
            ] {
                report.window.push(window(t, entries, cost));
            }
        }
        let path = std::env::temp_dir().join(format!("echomq-plot-one-{}.svg", std::process::id()));
        draw(&report, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        if std::env::var_os("ECHOMQ_KEEP_PLOT").is_none() {
            let _ = std::fs::remove_file(&path);
        }
        let doc = roxmltree::Document::parse(&text).unwrap();
        let rects: Vec<_> = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "rect")
            .collect();
        // The frames: the plot's (the widest) spans most of the canvas, not its left half;
        // the legend's (the narrowest) is inside it.
        let mut frames: Vec<_> = rects
            .iter()
            .filter(|r| {
                r.attribute("fill") == Some("none") && r.attribute("stroke") == Some("#000000")
            })
            .collect();
        frames.sort_by(|a, b| number(a, "width").total_cmp(&number(b, "width")));
        assert_eq!(frames.len(), 2, "one plot frame and one legend box");
        let (legend, plot) = (frames[0], frames[1]);
        let (px, py) = (number(plot, "x"), number(plot, "y"));
        let (pw, ph) = (number(plot, "width"), number(plot, "height"));
        assert!(pw > 0.75 * f64::from(SIZE.0), "the plot is {pw} wide");
        assert!(ph > 0.75 * f64::from(SIZE.1), "the plot is {ph} high");
        // One marker shape per series: circles, triangles (polygons) and squares (rects).
        let count = |tag: &str| {
            doc.descendants()
                .filter(|n| n.tag_name().name() == tag)
                .count()
        };
        // Each series: a marker on each of its three points and one on its legend sample.
        assert_eq!(count("circle"), 4, "the first series' circles");
        assert_eq!(count("polygon"), 4, "the second series' triangles");
        let squares = rects
            .iter()
            .filter(|r| number(r, "width") == f64::from(2 * MARKER_PX))
            .count();
        assert_eq!(squares, 4, "the third series' squares");
        // Each legend label sits inside the legend box, itself inside the plot.
        let (bx, by) = (number(legend, "x"), number(legend, "y"));
        let (bw, bh) = (number(legend, "width"), number(legend, "height"));
        for label in ["embedded 5min", "redis://127.0.0.1:6379 5min", "c 5min"] {
            let node = doc
                .descendants()
                .find(|n| n.tag_name().name() == "text" && n.text().map(str::trim) == Some(label))
                .unwrap_or_else(|| panic!("no legend text {label}"));
            let (x, y) = (number(&node, "x"), number(&node, "y"));
            let right = x + label.len() as f64 * LEGEND_CHAR_PX;
            assert!(
                bx < x && right <= bx + bw && by < y && y < by + bh,
                "{label} at ({x}, {y}) to {right} outside the box {bx},{by} {bw}x{bh}"
            );
        }
        assert!(
            px < bx && bx + bw < px + pw && py < by && by + bh < py + ph,
            "the legend box leaves the plot"
        );
    }

    #[test]
    fn panels_cover_the_canvas_whatever_their_number() {
        let mut svg = String::new();
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        for n in 1..=4 {
            let areas = panel_areas(&root, n);
            assert_eq!(areas.len(), n);
            let covered: u32 = areas
                .iter()
                .map(|a| {
                    let (w, h) = a.dim_in_pixel();
                    w * h
                })
                .sum();
            assert_eq!(covered, SIZE.0 * SIZE.1, "{n} panels");
        }
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
