//! A figure of line panels in a grid (one line per series, optional marked points such as a
//! paper's published values), written as SVG and PNG side by side, each atomically.

use std::path::Path;

use plotters::prelude::*;

use super::output::{COLOURS, write_file};
use crate::error::{AnalysisError, Result};

/// A series drawn as a line with dots.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Its legend entry.
    pub name: String,
    /// (x, y), in x order.
    pub points: Vec<(f64, f64)>,
}

/// One panel.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Panel {
    /// Its title.
    pub title: String,
    /// The x axis.
    pub x_label: String,
    /// The y axis.
    pub y_label: String,
    /// Its lines (colours by index).
    pub lines: Vec<Line>,
    /// Points drawn as crosses in the colour of line `.0` (a paper's values).
    pub marks: Vec<(usize, f64, f64)>,
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    grid: (usize, usize),
    panels: &[Panel],
) -> std::result::Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let areas = root.split_evenly(grid);
    for (area, p) in areas.iter().zip(panels) {
        let xs = p.lines.iter().flat_map(|l| l.points.iter().map(|q| q.0));
        let ys = p
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|q| q.1))
            .chain(p.marks.iter().map(|m| m.2));
        let (x_lo, x_hi) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        let y_hi = ys.fold(0.0f64, f64::max);
        let (x_lo, x_hi) = if x_lo < x_hi {
            (x_lo, x_hi)
        } else {
            (0.0, 1.0)
        };
        let title = if p.marks.is_empty() {
            p.title.clone()
        } else {
            format!("{} (crosses: the paper)", p.title)
        };
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 14))
            .margin(8)
            .x_label_area_size(32)
            .y_label_area_size(64)
            .build_cartesian_2d(x_lo..x_hi, 0.0..(y_hi * 1.1).max(1e-9))
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_labels(6)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_desc(p.x_label.as_str())
            .y_desc(p.y_label.as_str())
            .draw()
            .map_err(|e| e.to_string())?;
        for (k, line) in p.lines.iter().enumerate() {
            let colour = COLOURS[k % COLOURS.len()];
            chart
                .draw_series(LineSeries::new(line.points.clone(), colour.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(line.name.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour));
            chart
                .draw_series(
                    line.points
                        .iter()
                        .map(|&q| Circle::new(q, 3, colour.filled())),
                )
                .map_err(|e| e.to_string())?;
        }
        chart
            .draw_series(p.marks.iter().map(|&(k, x, y)| {
                Cross::new((x, y), 7, COLOURS[k % COLOURS.len()].stroke_width(2))
            }))
            .map_err(|e| e.to_string())?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

/// Writes `dir/stem.svg` and `dir/stem.png`: `panels` in a grid of (rows, columns).
pub fn write(dir: &Path, stem: &str, grid: (usize, usize), panels: &[Panel]) -> Result<()> {
    let size = (420 * grid.1 as u32, 340 * grid.0 as u32);
    let failed = |ext: &str, problem: String| AnalysisError::Figure {
        path: dir.join(format!("{stem}.{ext}")),
        problem,
    };
    crate::figure::register_font().map_err(|e| failed("svg", e))?;
    let mut svg = String::new();
    draw(
        SVGBackend::with_string(&mut svg, size).into_drawing_area(),
        grid,
        panels,
    )
    .map_err(|e| failed("svg", e))?;
    write_file(&dir.join(format!("{stem}.svg")), svg.as_bytes())?;
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    draw(
        BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area(),
        grid,
        panels,
    )
    .map_err(|e| failed("png", e))?;
    let png = crate::figure::encode_png(&rgb, size).map_err(|e| failed("png", e))?;
    write_file(&dir.join(format!("{stem}.png")), &png)
}
