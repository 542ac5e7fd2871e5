//! A run's wall-clock profile from its `timing/` parts: the median milliseconds per tick, whole
//! and by phase (trace apply, policy, metrics, output), over the ticks after the first (which
//! places the whole initial cell and is reported on its own).

use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::{AnalysisError, Result};

/// Phases in `timing/` column order.
pub const PHASES: [&str; 5] = [
    "wall_ms",
    "apply_ms",
    "policy_ms",
    "metrics_ms",
    "output_ms",
];

/// Median milliseconds per tick by phase.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseMedians {
    /// Ticks read.
    pub ticks: usize,
    /// The first tick's whole time.
    pub first_tick_ms: f64,
    /// Medians over the later ticks, in [`PHASES`] order.
    pub medians: [f64; 5],
    /// Snapshots written (ticks with a snapshot time recorded).
    pub snapshots: usize,
    /// Their median write time, ms.
    pub snapshot_ms: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Reads `RUN/timing/*.parquet`.
pub fn phase_medians(run: &Path) -> Result<PhaseMedians> {
    let dir = run.join("timing");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|source| AnalysisError::NotARun {
            path: dir.clone(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    let mut columns: [Vec<f64>; 5] = Default::default();
    let mut snapshot_ms = Vec::new();
    for f in files {
        let bad = |problem: String| AnalysisError::BadRunSummary {
            path: f.clone(),
            problem,
        };
        let file = File::open(&f).map_err(|source| AnalysisError::NotARun {
            path: f.clone(),
            source,
        })?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|e| bad(e.to_string()))?;
        for batch in reader {
            let batch = batch.map_err(|e| bad(e.to_string()))?;
            for (k, name) in PHASES.iter().enumerate() {
                let i = batch
                    .schema()
                    .index_of(name)
                    .map_err(|_| bad(format!("no column {name}")))?;
                let values = batch.column(i).as_primitive::<Float64Type>().values();
                columns[k].extend_from_slice(values);
            }
            if let Ok(i) = batch.schema().index_of("snapshot_ms") {
                let values = batch.column(i).as_primitive::<Float64Type>().values();
                snapshot_ms.extend(values.iter().copied().filter(|&v| v > 0.0));
            }
        }
    }
    let ticks = columns[0].len();
    let first_tick_ms = columns[0].first().copied().unwrap_or(0.0);
    let medians = columns.map(|c| median(c.into_iter().skip(1).collect()));
    Ok(PhaseMedians {
        ticks,
        first_tick_ms,
        medians,
        snapshots: snapshot_ms.len(),
        snapshot_ms: median(snapshot_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(vec![]), 0.0);
    }
}
