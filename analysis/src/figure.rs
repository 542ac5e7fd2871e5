//! The allocation-score distribution over time (seed 000, Figures 8 and 9): for each run, the
//! number of nodes of each allocation class (STA, TA, PA, DA, idle, overloaded) against trace
//! time, read from `RUN/ticks/`, one panel per run stacked on a shared time axis, written as SVG
//! or PNG (chosen by the file's extension) with an embedded font, so that it draws the same on
//! a cluster node without fonts.
//!
//! A month is ~43,000 ticks; each line is drawn through at most [`POINTS_PER_PANEL`] points,
//! each the mean of consecutive ticks (the paper's figures average too). The file is written
//! whole or not at all.

use std::path::Path;
use std::sync::OnceLock;

use arrow_array::types::{Int64Type, UInt32Type};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{AnalysisError, Result};
use crate::parts::for_each_batch;

/// The classes drawn, in legend order: their `ticks/` column and line colour.
pub const CLASSES: [(&str, RGBColor); 6] = [
    ("sta", RGBColor(178, 24, 43)),
    ("ta", RGBColor(239, 138, 98)),
    ("pa", RGBColor(27, 120, 55)),
    ("da", RGBColor(33, 102, 172)),
    ("idle", RGBColor(150, 150, 150)),
    ("overloaded", RGBColor(118, 42, 131)),
];

/// Points per line at most (one per pixel column of the plot area, about).
pub const POINTS_PER_PANEL: usize = 1000;

/// Width of the figure and height of one run's panel, pixels.
const WIDTH_PX: u32 = 1100;
const PANEL_HEIGHT_PX: u32 = 340;
/// Room right of the plot for the legend, pixels.
const LEGEND_WIDTH_PX: u32 = 140;

/// One run's class counts over time, averaged into points.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassSeries {
    /// Trace time of each point, hours: the mean of its ticks' times.
    pub time_h: Vec<f64>,
    /// Mean nodes of each class at each point, in [`CLASSES`] order.
    pub nodes: [Vec<f64>; 6],
}

/// The image formats written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureFormat {
    /// Scalable vector graphics (`.svg`).
    Svg,
    /// A bitmap (`.png`).
    Png,
}

impl FigureFormat {
    /// The format named by `path`'s extension, or an error naming the path.
    pub fn of(path: &Path) -> Result<FigureFormat> {
        let extension = path.extension().and_then(|e| e.to_str());
        match extension.map(str::to_ascii_lowercase).as_deref() {
            Some("svg") => Ok(FigureFormat::Svg),
            Some("png") => Ok(FigureFormat::Png),
            _ => Err(AnalysisError::FigureFormat {
                path: path.to_path_buf(),
            }),
        }
    }
}

/// Reads `RUN/ticks/` into at most `max_points` points: consecutive ticks in groups of
/// `ceil(ticks / max_points)`, each point their mean. An error when the run has no ticks.
pub fn class_series(run: &Path, max_points: usize) -> Result<ClassSeries> {
    let mut time_us = Vec::new();
    let mut counts: [Vec<u32>; 6] = Default::default();
    for_each_batch(run, "ticks", |part| {
        time_us.extend_from_slice(part.column::<Int64Type>("time_us")?.values());
        for ((name, _), column) in CLASSES.iter().zip(&mut counts) {
            column.extend_from_slice(part.column::<UInt32Type>(name)?.values());
        }
        Ok(())
    })?;
    if time_us.is_empty() {
        return Err(AnalysisError::NoTicks {
            path: run.join("ticks"),
        });
    }
    let group = time_us.len().div_ceil(max_points.max(1));
    let mean = |values: &mut dyn Iterator<Item = f64>| {
        let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
        sum / n as f64
    };
    let time_h = time_us
        .chunks(group)
        .map(|c| mean(&mut c.iter().map(|&t| t as f64 / 3.6e9)))
        .collect();
    let nodes = counts.map(|column| {
        let groups = column.chunks(group);
        groups
            .map(|c| mean(&mut c.iter().map(|&n| f64::from(n))))
            .collect()
    });
    Ok(ClassSeries { time_h, nodes })
}

/// Draws the panels of `runs` (titled by `names`) into `path`, SVG or PNG by its extension,
/// atomically.
pub fn write_figure(path: &Path, names: &[String], runs: &[ClassSeries]) -> Result<()> {
    let format = FigureFormat::of(path)?;
    let failed = |problem: String| AnalysisError::Figure {
        path: path.to_path_buf(),
        problem,
    };
    register_font().map_err(failed)?;
    let size = (WIDTH_PX, PANEL_HEIGHT_PX * runs.len().max(1) as u32);
    let bytes = match format {
        FigureFormat::Svg => {
            let mut svg = String::new();
            draw(
                SVGBackend::with_string(&mut svg, size).into_drawing_area(),
                names,
                runs,
            )
            .map_err(failed)?;
            svg.into_bytes()
        }
        FigureFormat::Png => {
            let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
            draw(
                BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area(),
                names,
                runs,
            )
            .map_err(failed)?;
            encode_png(&rgb, size).map_err(|e| failed(e.to_string()))?
        }
    };
    ingest::atomic_file::write_atomically(path, |out| out.write_all(&bytes)).map_err(|e| {
        AnalysisError::Write {
            path: e.path,
            source: e.source,
        }
    })
}

/// Registers the embedded DejaVu Sans as plotters' "sans-serif", once.
pub(crate) fn register_font() -> std::result::Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
            .is_ok()
    });
    ok.then_some(())
        .ok_or_else(|| "the embedded font does not load".to_string())
}

pub(crate) fn encode_png(
    rgb: &[u8],
    (width, height): (u32, u32),
) -> std::result::Result<Vec<u8>, String> {
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .and_then(|mut w| w.write_image_data(rgb))
        .map_err(|e| e.to_string())?;
    Ok(png)
}

/// The time axis: hours for up to three days, days beyond.
fn time_axis(runs: &[ClassSeries]) -> (f64, f64, f64, &'static str) {
    let times = runs.iter().flat_map(|r| r.time_h.iter().copied());
    let (lo, hi) = times.fold((f64::MAX, f64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (0.0, 1.0) };
    let hi = if hi > lo { hi } else { lo + 1.0 };
    if hi - lo > 72.0 {
        (24.0, lo / 24.0, hi / 24.0, "trace time (days)")
    } else {
        (1.0, lo, hi, "trace time (hours)")
    }
}

/// The top of every panel's y-axis: 5 % above the most nodes any class of any run reaches (at
/// least 1), so that the panels share one scale and runs compare at a glance.
fn y_axis_top(runs: &[ClassSeries]) -> f64 {
    let counts = runs.iter().flat_map(|r| r.nodes.iter().flatten());
    counts.copied().fold(1.0, f64::max) * 1.05
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    names: &[String],
    runs: &[ClassSeries],
) -> std::result::Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let (hours_per_unit, x_lo, x_hi, x_desc) = time_axis(runs);
    let y_hi = y_axis_top(runs);
    let panels = root.split_evenly((runs.len().max(1), 1));
    for ((panel, name), run) in panels.iter().zip(names).zip(runs) {
        let (plot, legend) = panel.split_horizontally(WIDTH_PX - LEGEND_WIDTH_PX);
        let mut chart = ChartBuilder::on(&plot)
            .caption(name, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(x_lo..x_hi, 0.0..y_hi)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("nodes per allocation class")
            .y_label_formatter(&|n| format!("{n:.0}"))
            .light_line_style(WHITE)
            .draw()
            .map_err(err)?;
        for (row, ((class, colour), nodes)) in CLASSES.iter().zip(&run.nodes).enumerate() {
            let style = colour.stroke_width(if *class == "overloaded" { 2 } else { 1 });
            let points = run.time_h.iter().map(|t| t / hours_per_unit);
            let series = LineSeries::new(points.zip(nodes.iter().copied()), style);
            chart.draw_series(series).map_err(err)?;
            // The legend, right of the plot: a stroke and the class's name per row.
            let y = 48 + 20 * row as i32;
            legend
                .draw(&PathElement::new([(4, y), (26, y)], style))
                .map_err(err)?;
            let label = Text::new(class.to_uppercase(), (32, y - 7), ("sans-serif", 13));
            legend.draw(&label).map_err(err)?;
        }
    }
    root.present().map_err(err)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, UInt32Array};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// Writes `RUN/ticks/part-<first>.parquet` holding `rows` of (time s, class counts in
    /// [`CLASSES`] order), with only the columns the figure reads.
    fn write_part(run: &Path, first_tick: u32, rows: &[(i64, [u32; 6])]) {
        let mut fields = vec![Field::new("time_us", DataType::Int64, false)];
        let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| r.0 * 1_000_000),
        ))];
        for (k, (name, _)) in CLASSES.iter().enumerate() {
            fields.push(Field::new(*name, DataType::UInt32, false));
            let counts = rows.iter().map(|r| r.1[k]);
            columns.push(Arc::new(UInt32Array::from_iter_values(counts)));
        }
        let schema = Arc::new(Schema::new(fields));
        let batch = RecordBatch::try_new(schema, columns).unwrap();
        std::fs::create_dir_all(run.join("ticks")).unwrap();
        let path = run.join(format!("ticks/part-{first_tick:08}.parquet"));
        crate::parts::write_part(&path, &batch);
    }

    /// Five one-minute ticks from trace minute 10, PA rising 1..5 nodes, ten idle, five
    /// overloaded in the last; in two parts, the later one written first.
    fn five_ticks(run: &Path) {
        let tick =
            |minute: i64, pa: u32, overloaded: u32| (minute * 60, [0, 0, pa, 0, 10, overloaded]);
        write_part(run, 3, &[tick(13, 4, 0), tick(14, 5, 5)]);
        write_part(run, 0, &[tick(10, 1, 0), tick(11, 2, 0), tick(12, 3, 0)]);
    }

    #[test]
    fn ticks_are_averaged_in_consecutive_groups() {
        let run = tempfile::tempdir().unwrap();
        five_ticks(run.path());
        // Five ticks into at most two points: groups of three and two.
        let two = class_series(run.path(), 2).unwrap();
        let close = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| (a - b).abs() < 1e-12)
        };
        assert!(
            close(&two.time_h, &[11.0 / 60.0, 13.5 / 60.0]),
            "{:?}",
            two.time_h
        );
        assert_eq!(two.nodes[2], [2.0, 4.5], "PA");
        assert_eq!(two.nodes[4], [10.0, 10.0], "idle");
        assert_eq!(two.nodes[5], [0.0, 2.5], "overloaded");
        // Three points: groups of two, two and one.
        assert_eq!(
            class_series(run.path(), 3).unwrap().nodes[2],
            [1.5, 3.5, 5.0]
        );
        // Room for every tick: the ticks themselves, in tick order across the parts.
        let all = class_series(run.path(), 1000).unwrap();
        assert_eq!(all.nodes[2], [1.0, 2.0, 3.0, 4.0, 5.0]);
        let minutes = [10.0, 11.0, 12.0, 13.0, 14.0];
        assert!(close(&all.time_h, &minutes.map(|m| m / 60.0)));
    }

    /// The points of each polyline of `colour` in `svg`, as (x, y) pixels.
    fn polylines(svg: &str, colour: RGBColor) -> Vec<Vec<(i32, i32)>> {
        let stroke = format!(
            "stroke=\"#{:02X}{:02X}{:02X}\"",
            colour.0, colour.1, colour.2
        );
        svg.split("<polyline")
            .skip(1)
            .filter(|element| element.split('>').next().unwrap().contains(&stroke))
            .map(|element| {
                let points = element.split("points=\"").nth(1).unwrap();
                let points = points.split('"').next().unwrap().split_whitespace();
                let pair = |p: &str| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                };
                points.map(pair).collect()
            })
            .collect()
    }

    #[test]
    fn one_panel_per_run_with_a_line_per_class() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        five_ticks(a.path());
        five_ticks(b.path());
        let runs = [a.path(), b.path()].map(|r| class_series(r, 3).unwrap());
        let names = ["run-a".to_string(), "run-b".to_string()];
        let out = tempfile::tempdir().unwrap();
        let svg_path = out.path().join("classes.svg");
        write_figure(&svg_path, &names, &runs).unwrap();
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        assert!(svg.contains(">\nrun-a\n</text>") && svg.contains(">\nrun-b\n</text>"));
        assert_eq!(
            svg.matches(">\nnodes per allocation class\n</text>")
                .count(),
            2
        );
        for (class, colour) in CLASSES {
            // Per panel: the class's line through the three points, and its legend stroke.
            let lines = polylines(&svg, colour);
            let data: Vec<_> = lines.iter().filter(|l| l.len() == 3).collect();
            assert_eq!((lines.len(), data.len()), (4, 2), "{class}");
            let label = format!(">\n{}\n</text>", class.to_uppercase());
            assert_eq!(
                svg.matches(&label).count(),
                2,
                "{class}'s legend in each panel"
            );
        }
        // PA rises (smaller y is higher), in the upper panel and then in the lower one.
        let pa = polylines(&svg, CLASSES[2].1);
        let pa: Vec<_> = pa.iter().filter(|l| l.len() == 3).collect();
        for line in &pa {
            assert!(line[0].1 > line[1].1 && line[1].1 > line[2].1, "{line:?}");
            assert!(line[0].0 < line[1].0 && line[1].0 < line[2].0, "{line:?}");
        }
        let panel = PANEL_HEIGHT_PX as i32;
        assert!(pa[0].iter().all(|p| p.1 < panel) && pa[1].iter().all(|p| p.1 > panel));
        // Both panels share the time axis: the same x for the same time.
        assert_eq!(
            pa[0].iter().map(|p| p.0).collect::<Vec<_>>(),
            pa[1].iter().map(|p| p.0).collect::<Vec<_>>()
        );

        // The same figure as a PNG: two panels' height, PA's colour drawn in each.
        let png_path = out.path().join("classes.png");
        write_figure(&png_path, &names, &runs).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(
            std::fs::File::open(&png_path).unwrap(),
        ));
        let mut reader = decoder.read_info().unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut rgb).unwrap();
        assert_eq!((frame.width, frame.height), (WIDTH_PX, 2 * PANEL_HEIGHT_PX));
        let row_bytes = WIDTH_PX as usize * 3;
        let green = CLASSES[2].1;
        let pa_pixels = |rows: std::ops::Range<usize>| {
            rgb[rows.start * row_bytes..rows.end * row_bytes]
                .chunks(3)
                .filter(|p| *p == [green.0, green.1, green.2])
                .count()
        };
        let panel = PANEL_HEIGHT_PX as usize;
        assert!(pa_pixels(0..panel) > 20 && pa_pixels(panel..2 * panel) > 20);
    }

    /// The panels share one y-axis: a run whose idle nodes reach 100 does not stretch its PA
    /// line against the other run's, which tops out at 10 nodes. The same PA counts sit at the
    /// same height within each panel, and the top is 5 % above the larger run's 100.
    #[test]
    fn the_panels_share_their_y_axis() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        five_ticks(a.path());
        let rows: Vec<_> = (10..15)
            .map(|m| (m * 60, [0, 0, m as u32 - 9, 0, 100, 0]))
            .collect();
        write_part(b.path(), 0, &rows);
        let runs = [a.path(), b.path()].map(|r| class_series(r, 1000).unwrap());
        assert!((y_axis_top(&runs) - 105.0).abs() < 1e-9);
        assert!((y_axis_top(&runs[..1]) - 10.5).abs() < 1e-9);
        let names = ["run-a".to_string(), "run-b".to_string()];
        let out = tempfile::tempdir().unwrap();
        let svg_path = out.path().join("classes.svg");
        write_figure(&svg_path, &names, &runs).unwrap();
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        let pa = polylines(&svg, CLASSES[2].1);
        let pa: Vec<_> = pa.iter().filter(|l| l.len() == 5).collect();
        assert_eq!(pa.len(), 2);
        let panel = PANEL_HEIGHT_PX as i32;
        let lower: Vec<_> = pa[1].iter().map(|p| (p.0, p.1 - panel)).collect();
        assert_eq!(pa[0], &lower, "PA 1..5 at the same heights in both panels");
    }

    /// Hours up to three days of trace time, days beyond; an empty or one-point run still gets
    /// a range to draw.
    #[test]
    fn the_time_axis_is_in_hours_or_days() {
        let run = |time_h: Vec<f64>| ClassSeries {
            time_h,
            nodes: Default::default(),
        };
        let day = [run(vec![0.5, 24.0])];
        assert_eq!(time_axis(&day), (1.0, 0.5, 24.0, "trace time (hours)"));
        let month = [run(vec![12.0, 30.0]), run(vec![24.0 * 30.0])];
        assert_eq!(time_axis(&month), (24.0, 0.5, 30.0, "trace time (days)"));
        assert_eq!(
            time_axis(&[run(vec![2.0])]).1..time_axis(&[run(vec![2.0])]).2,
            2.0..3.0
        );
        assert_eq!(
            time_axis(&[run(vec![])]),
            (1.0, 0.0, 1.0, "trace time (hours)")
        );
    }

    #[test]
    fn bad_paths_and_parts_are_named() {
        let run = tempfile::tempdir().unwrap();
        let err = class_series(run.path(), 10).unwrap_err().to_string();
        assert!(
            err.contains("ticks") && err.contains("is this a finished"),
            "{err}"
        );
        std::fs::create_dir(run.path().join("ticks")).unwrap();
        let err = class_series(run.path(), 10).unwrap_err().to_string();
        assert!(err.ends_with("ticks holds no ticks to draw"), "{err}");
        // A part without a class column: the part and the column named.
        std::fs::write(run.path().join("ticks/part-00000000.parquet"), b"PAR1").unwrap();
        let err = class_series(run.path(), 10).unwrap_err().to_string();
        assert!(
            err.contains("part-00000000.parquet: not a readable cellsim output part"),
            "{err}"
        );
        let series = [ClassSeries {
            time_h: vec![0.0],
            nodes: Default::default(),
        }];
        let names = ["r".to_string()];
        let err = write_figure(&run.path().join("f.jpg"), &names, &series).unwrap_err();
        assert!(
            err.to_string()
                .contains("f.jpg: a figure is written as .svg or .png")
        );
        // A directory that does not exist: the error names the file, nothing is left.
        let missing = run.path().join("no/such/f.svg");
        let err = write_figure(&missing, &names, &series)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no/such/f.svg.tmp"), "{err}");
        assert!(!run.path().join("no").exists());
    }
}
