//! An experiment's outputs: `results.parquet` (one row per configuration, point and seed),
//! `queue-times.svg` (mean and p99 against x, one line per configuration, means over seeds on a
//! log scale) and `results.md` (the tables, with the seeds' range, and the seed's shapes) written
//! last. Each file is written atomically.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array};
use arrow_schema::{Field, Schema};
use plotters::prelude::*;

use super::{Experiment, ResultRow, Summary};
use crate::error::{AnalysisError, Result};

/// The results table's name in DIR.
pub const RESULTS_PARQUET: &str = "results.parquet";
/// The figure's name in DIR.
pub const FIGURE: &str = "queue-times.svg";
/// The Markdown report's name in DIR.
pub const RESULTS_MD: &str = "results.md";

pub(super) fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    ingest::atomic_file::write_atomically(path, |out| out.write_all(bytes)).map_err(|e| {
        AnalysisError::Write {
            path: e.path,
            source: e.source,
        }
    })
}

/// The rows as one Arrow batch.
fn batch(name: &str, rows: &[ResultRow]) -> RecordBatch {
    let f64s = |f: fn(&ResultRow) -> f64| -> ArrayRef {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f)))
    };
    let u64s = |f: fn(&ResultRow) -> u64| -> ArrayRef {
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(f)))
    };
    let u32s = |f: fn(&ResultRow) -> u32| -> ArrayRef {
        Arc::new(UInt32Array::from_iter_values(rows.iter().map(f)))
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "experiment",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| name))),
        ),
        (
            "configuration",
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.configuration.as_str()),
            )),
        ),
        ("probes", u32s(|r| r.probes)),
        ("x", f64s(|r| r.x)),
        ("load_pct", f64s(|r| r.load_pct)),
        ("nodes", u32s(|r| r.nodes)),
        ("seed", u64s(|r| r.seed)),
        ("tasks", u64s(|r| r.tasks)),
        ("unstarted", u64s(|r| r.unstarted)),
        ("mean_queue_ms", f64s(|r| r.mean_queue_ms)),
        ("p50_queue_ms", f64s(|r| r.p50_queue_ms)),
        ("p99_queue_ms", f64s(|r| r.p99_queue_ms)),
        ("makespan_s", f64s(|r| r.makespan_s)),
        ("messages", u64s(|r| r.messages)),
    ];
    batch_of(columns, &[])
}

/// One Arrow batch of named columns of equal length, those named in `nullable` declared so.
pub(super) fn batch_of(columns: Vec<(&str, ArrayRef)>, nullable: &[&str]) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), nullable.contains(n)))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).expect("columns of equal length")
}

pub(super) fn parquet_bytes(batch: &RecordBatch) -> std::result::Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, batch.schema(), None)
        .map_err(|e| e.to_string())?;
    writer.write(batch).map_err(|e| e.to_string())?;
    writer.close().map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// "mean (min-max)" over seeds, or the mean alone for one seed.
fn cell(s: &Summary, c: &str, x: f64, m: Measure) -> String {
    match s.band(c, x, m) {
        None => "-".into(),
        Some(b) if s.options.seeds == 1 || b.min == b.max => format!("{:.1}", b.mean),
        Some(b) => format!("{:.1} ({:.1}-{:.1})", b.mean, b.min, b.max),
    }
}

fn table(s: &Summary, title: &str, m: Measure) -> String {
    let xs = s.xs();
    let mut out = format!("### {title}\n\n| configuration |");
    for x in &xs {
        out += &format!(" {} = {x} |", s.x_label);
    }
    out += "\n|---|";
    out += &"---:|".repeat(xs.len());
    out += "\n";
    for c in &s.configurations {
        out += &format!("| {c} |");
        for &x in &xs {
            out += &format!(" {} |", cell(s, c, x, m));
        }
        out += "\n";
    }
    out
}

/// The Markdown report.
pub fn markdown(experiment: &Experiment, s: &Summary) -> String {
    let o = &s.options;
    let mut out = format!(
        "# Experiment {}\n\n{} seeds (1-{}), {:?} arrivals{}, network delay {} ms one way; {} runs. Queue time = start on a worker - arrival at the scheduler, network delays included. Each cell is the mean over seeds, with the seeds' range in brackets.\n\n",
        s.name,
        o.seeds,
        o.seeds,
        o.arrivals,
        match o.draws {
            ingest::scenario::Draws::Own => "",
            ingest::scenario::Draws::Radlab =>
                " drawn with the Sparrow authors' simulator's random numbers for each seed, as are the radlab rows' probe targets (those rows are its own results, run for run)",
        },
        o.net_delay_ms,
        s.rows.len()
    );
    let unstarted: u64 = s.rows.iter().map(|r| r.unstarted).sum();
    if unstarted > 0 {
        out += &format!(
            "**{unstarted} tasks never started within their runs** (counted in `unstarted`, left out of the queue times).\n\n"
        );
    }
    out += &table(s, "Mean queue time (ms)", |r| r.mean_queue_ms);
    out += "\n";
    out += &table(s, "99th percentile queue time (ms)", |r| r.p99_queue_ms);
    out += "\n";
    out += &table(s, "Offered load (% of the cell's CPU)", |r| r.load_pct);
    out += "\n## Against seed 002\n\n";
    out += &(experiment.paper)(s);
    out
}

pub(super) const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(30, 30, 30),
];

/// A measure of a run drawn or tabulated.
type Measure = fn(&ResultRow) -> f64;

/// The queue-times figure: mean and p99 against x, one line per configuration (means over
/// seeds), on log axes.
fn queue_panels(s: &Summary) -> Vec<super::panels::Panel> {
    let measures: [(&str, Measure); 2] = [
        ("mean queue time (ms)", |r| r.mean_queue_ms),
        ("99th percentile queue time (ms)", |r| r.p99_queue_ms),
    ];
    measures
        .into_iter()
        .map(|(label, m)| super::panels::Panel {
            title: format!("{}: {label}", s.name),
            x_label: s.x_label.clone(),
            y_label: label.into(),
            lines: s
                .configurations
                .iter()
                .map(|c| super::panels::Line {
                    name: c.clone(),
                    points: s
                        .xs()
                        .iter()
                        .filter_map(|&x| s.band(c, x, m).map(|b| (x, b.mean)))
                        .collect(),
                })
                .collect(),
            marks: Vec::new(),
            log_y: true,
        })
        .collect()
}

/// Writes `DIR/results.parquet`, `DIR/queue-times.svg` (and `.png`) and, last,
/// `DIR/results.md`.
pub fn write_outputs(experiment: &Experiment, s: &Summary, dir: &Path) -> Result<()> {
    let failed = |path: &str, problem: String| AnalysisError::Figure {
        path: dir.join(path),
        problem,
    };
    let bytes = parquet_bytes(&batch(&s.name, &s.rows)).map_err(|e| failed(RESULTS_PARQUET, e))?;
    write_file(&dir.join(RESULTS_PARQUET), &bytes)?;
    let stem = FIGURE.trim_end_matches(".svg");
    super::panels::write(dir, stem, ((1, 2), (550, 460)), &queue_panels(s))?;
    write_file(&dir.join(RESULTS_MD), markdown(experiment, s).as_bytes())
}
