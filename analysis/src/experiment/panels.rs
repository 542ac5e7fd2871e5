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
    /// A log-scaled y axis (from 0.8 x the smallest positive value to 1.25 x the largest).
    pub log_y: bool,
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
        let (x_lo, x_hi) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        let x = if x_lo < x_hi { x_lo..x_hi } else { 0.0..1.0 };
        let ys = p
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|q| q.1))
            .chain(p.marks.iter().map(|m| m.2));
        if p.log_y {
            let positive = ys.filter(|y| *y > 0.0);
            let (lo, hi) = positive.fold((f64::MAX, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
            let (lo, hi) = if lo <= hi {
                (lo * 0.8, hi * 1.25)
            } else {
                (0.1, 10.0)
            };
            plot(area, p, x, (lo..hi).log_scale(), lo)?;
        } else {
            let (lo, hi) = ys.fold((0.0f64, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
            plot(area, p, x, lo * 1.1..(hi * 1.1).max(1e-9), f64::MIN)?;
        }
    }
    root.present().map_err(|e| e.to_string())
}

/// One panel on `area`, with `y` as its y axis (linear or log); values below `floor` are drawn
/// at it (a log axis has no 0).
fn plot<DB: DrawingBackend, Y>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Panel,
    x: std::ops::Range<f64>,
    y: Y,
    floor: f64,
) -> std::result::Result<(), String>
where
    Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
    Y::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
{
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
        .build_cartesian_2d(x, y)
        .map_err(|e| e.to_string())?;
    let whole = |v: &f64| format!("{v:.0}");
    // Two decimals at most, trailing zeros dropped: 14444, 0.25, 1.
    let tidy = |v: &f64| {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(6)
        .x_label_formatter(&whole)
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str());
    if !p.log_y {
        mesh.y_label_formatter(&tidy);
    }
    mesh.draw().map_err(|e| e.to_string())?;
    for (k, line) in p.lines.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let points: Vec<(f64, f64)> = line
            .points
            .iter()
            .map(|&(x, y)| (x, y.max(floor)))
            .collect();
        // Past the palette, lines are dashed (the colours come round again).
        let style = colour.stroke_width(2);
        let drawn = if k < COLOURS.len() {
            chart.draw_series(LineSeries::new(points.clone(), style))
        } else {
            chart.draw_series(DashedLineSeries::new(points.clone(), 6, 4, style))
        };
        let dashed = k >= COLOURS.len();
        drawn
            .map_err(|e| e.to_string())?
            .label(line.name.as_str())
            .legend(move |(x, y)| {
                let (end, start) = if dashed { (6, 12) } else { (18, 18) };
                EmptyElement::at((x, y))
                    + PathElement::new([(0, 0), (end, 0)], colour)
                    + PathElement::new([(start, 0), (18, 0)], colour)
            });
        chart
            .draw_series(points.iter().map(|&q| Circle::new(q, 3, colour.filled())))
            .map_err(|e| e.to_string())?;
    }
    chart
        .draw_series(
            p.marks.iter().map(|&(k, x, y)| {
                Cross::new((x, y), 7, COLOURS[k % COLOURS.len()].stroke_width(2))
            }),
        )
        .map_err(|e| e.to_string())?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| e.to_string())
}

/// Writes `dir/stem.svg` and `dir/stem.png`: `panels` in a grid of (rows, columns), each
/// panel `panel_size` pixels.
pub fn write(
    dir: &Path,
    stem: &str,
    (grid, panel_size): ((usize, usize), (u32, u32)),
    panels: &[Panel],
) -> Result<()> {
    let size = (panel_size.0 * grid.1 as u32, panel_size.1 * grid.0 as u32);
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
