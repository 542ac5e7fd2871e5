//! A run's wall-clock profile from its `timing/` parts: the median milliseconds per tick, whole
//! and by phase (trace apply, policy, metrics, output), and the mean whole tick, over the ticks
//! after the first (which places the whole initial cell and is reported on its own), or over the
//! ticks from a given one on (a window resumed from a snapshot, as `scripts/ab.sh` compares builds
//! on). The mean counts what the median leaves out: ticks that recur slower, such as those where
//! the trace's five-minute usage rows arrive, one tick in five.
//!
//! Over the same ticks, the split of each phase into the time its data-parallel sweeps took and
//! the rest, which ran on one thread ([`PhaseSplit`], from the `*_parallel_ms` columns; absent
//! for runs written before they existed): at one thread, the one-thread share is Amdahl's serial
//! fraction, which bounds what more threads can give.

use std::path::Path;

use arrow_array::types::{Float64Type, UInt32Type};

use crate::error::{AnalysisError, Result};
use crate::parts::for_each_batch;
use engine::output::PARALLEL_COLUMNS;

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
    /// Ticks read (all of them, whatever the window).
    pub ticks: usize,
    /// The first tick's whole time.
    pub first_tick_ms: f64,
    /// Medians over the later ticks (or those of the window), in [`PHASES`] order.
    pub medians: [f64; 5],
    /// The mean whole tick over the same ticks.
    pub mean_ms: f64,
    /// Snapshots written (ticks with a snapshot time recorded).
    pub snapshots: usize,
    /// Their median write time, ms.
    pub snapshot_ms: f64,
    /// Each phase's time split into one-thread and parallel time, over the same ticks; `None`
    /// when a part lacks the parallel columns.
    pub split: Option<PhaseSplit>,
}

/// The phases' total and parallel milliseconds, summed over a window of ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseSplit {
    /// Ticks summed.
    pub ticks: usize,
    /// The whole ticks' time.
    pub wall_ms: f64,
    /// Each phase's time (apply, policy, metrics, output).
    pub phase_ms: [f64; 4],
    /// Of each phase's time, what its data-parallel sweeps took.
    pub parallel_ms: [f64; 4],
}

impl PhaseSplit {
    /// The share of the ticks' time outside the parallel sweeps (between phases included).
    pub fn one_thread_share(&self) -> f64 {
        let parallel: f64 = self.parallel_ms.iter().sum();
        match self.wall_ms > 0.0 {
            true => ((self.wall_ms - parallel) / self.wall_ms).clamp(0.0, 1.0),
            false => 0.0,
        }
    }

    /// Amdahl's law: the speed-up over one thread that `threads` threads allow when the
    /// one-thread share is `serial` (the share measured in a run at one thread).
    pub fn amdahl(serial: f64, threads: u32) -> f64 {
        1.0 / (serial + (1.0 - serial) / f64::from(threads.max(1)))
    }
}

fn median(v: Vec<f64>) -> f64 {
    match v.is_empty() {
        true => 0.0,
        false => crate::percentile::of(v, 0.5),
    }
}

/// Reads `RUN/timing/*.parquet`; the medians are over the ticks after the run's first, or, with
/// `from_tick`, over those from that tick on (still without the run's first); an error when
/// there are none.
pub fn phase_medians(run: &Path, from_tick: Option<u32>) -> Result<PhaseMedians> {
    let mut columns: [Vec<f64>; 5] = Default::default();
    let mut ticks = Vec::new();
    let mut snapshot_ms = Vec::new();
    let mut parallel: [Vec<f64>; 4] = Default::default();
    let mut every_part_split = true;
    for_each_batch(run, "timing", |part| {
        ticks.extend_from_slice(part.column::<UInt32Type>("tick")?.values());
        for (k, name) in PHASES.iter().enumerate() {
            columns[k].extend_from_slice(part.column::<Float64Type>(name)?.values());
        }
        for (k, name) in PARALLEL_COLUMNS.iter().enumerate() {
            match part.optional_column::<Float64Type>(name)? {
                Some(values) => parallel[k].extend_from_slice(values.values()),
                None => every_part_split = false,
            }
        }
        if let Some(values) = part.optional_column::<Float64Type>("snapshot_ms")? {
            snapshot_ms.extend(values.values().iter().copied().filter(|&v| v > 0.0));
        }
        Ok(())
    })?;
    let first_tick_ms = columns[0].first().copied().unwrap_or(0.0);
    let from = from_tick.unwrap_or(0);
    let in_window = |row: usize| row > 0 && ticks.get(row).is_some_and(|&t| t >= from);
    let window = |c: &[f64]| -> Vec<f64> {
        let rows = c.iter().enumerate().filter(|&(row, _)| in_window(row));
        rows.map(|(_, &ms)| ms).collect()
    };
    let walls = window(&columns[0]);
    if walls.is_empty() {
        return Err(AnalysisError::EmptyWindow {
            path: run.join("timing"),
            from,
            last: ticks.iter().copied().max().unwrap_or(0),
        });
    }
    let mean_ms = walls.iter().sum::<f64>() / walls.len().max(1) as f64;
    let sum = |c: &[f64]| window(c).iter().sum::<f64>();
    let split = every_part_split.then(|| PhaseSplit {
        ticks: walls.len(),
        wall_ms: walls.iter().sum(),
        phase_ms: std::array::from_fn(|k| sum(&columns[k + 1])),
        parallel_ms: std::array::from_fn(|k| sum(&parallel[k])),
    });
    let medians = columns.map(|c| median(window(&c)));
    Ok(PhaseMedians {
        ticks: ticks.len(),
        first_tick_ms,
        medians,
        mean_ms,
        snapshots: snapshot_ms.len(),
        snapshot_ms: median(snapshot_ms),
        split,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's timing over ticks 0-5 (the first placing the cell), then resumed at tick 3: the
    /// medians over all ticks after the first, and over the window from tick 3 on.
    #[test]
    fn medians_over_the_run_or_a_window() {
        use std::sync::Arc;

        use arrow_array::{Float64Array, RecordBatch, UInt32Array};
        use arrow_schema::{DataType, Field, Schema};

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("timing")).unwrap();
        let mut fields = vec![Field::new("tick", DataType::UInt32, false)];
        for name in PHASES.iter().chain(&["snapshot_ms"]) {
            fields.push(Field::new(*name, DataType::Float64, false));
        }
        let schema = Arc::new(Schema::new(fields));
        // Two parts: ticks 0-2 before the snapshot, 3-5 after the resume.
        let walls = [[100.0, 10.0, 12.0], [30.0, 20.0, 25.0]];
        for (part, wall) in walls.iter().enumerate() {
            let ticks = UInt32Array::from_iter_values((0..3).map(|t| t + 3 * part as u32));
            let mut columns: Vec<arrow_array::ArrayRef> = vec![Arc::new(ticks)];
            for k in 0..PHASES.len() + 1 {
                let scale = if k == 0 { 1.0 } else { 0.5 };
                let snapshot = k == PHASES.len();
                columns.push(Arc::new(Float64Array::from_iter_values(
                    wall.iter().map(|w| if snapshot { 0.0 } else { w * scale }),
                )));
            }
            let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
            let path = dir.path().join(format!("timing/part-{part}.parquet"));
            crate::parts::write_part(&path, &batch);
        }
        let all = phase_medians(dir.path(), None).unwrap();
        assert_eq!((all.ticks, all.first_tick_ms), (6, 100.0));
        // Ticks 1-5: 10, 12, 30, 20, 25.
        assert_eq!(all.medians[0], 20.0);
        assert_eq!(all.medians[1], 10.0);
        assert_eq!(all.mean_ms, 97.0 / 5.0);
        let window = phase_medians(dir.path(), Some(3)).unwrap();
        // Ticks 3-5: 30, 20, 25.
        assert_eq!(
            (
                window.ticks,
                window.medians[0],
                window.medians[2],
                window.mean_ms
            ),
            (6, 25.0, 12.5, 25.0)
        );
        assert_eq!(
            phase_medians(dir.path(), Some(0)).unwrap().medians,
            all.medians
        );
        // A window past the run's last tick holds nothing to time: an error naming both.
        let empty = phase_medians(dir.path(), Some(6)).unwrap_err().to_string();
        assert!(
            empty.contains("from tick 6 on") && empty.contains("ticks are 0 to 5"),
            "{empty}"
        );
    }

    /// The split over the ticks after the first, hand-summed: walls 10 + 20, of which 1 + 2
    /// (apply) and 3 + 4 (policy) in parallel sweeps, so 20 of 30 ms ran on one thread; a part
    /// without the parallel columns (an older run) leaves the split out.
    #[test]
    fn split_of_one_thread_and_parallel_time() {
        use std::sync::Arc;

        use arrow_array::{ArrayRef, Float64Array, RecordBatch, UInt32Array};
        use arrow_schema::{DataType, Field, Schema};

        let write = |dir: &Path, part: usize, parallel: bool| {
            let wall = [100.0, 10.0, 20.0];
            let mut fields = vec![Field::new("tick", DataType::UInt32, false)];
            let mut columns: Vec<ArrayRef> = vec![Arc::new(UInt32Array::from(vec![0, 1, 2]))];
            let mut add = |name: &str, values: [f64; 3]| {
                fields.push(Field::new(name, DataType::Float64, false));
                columns.push(Arc::new(Float64Array::from(values.to_vec())));
            };
            add("wall_ms", wall);
            for (k, name) in PHASES[1..].iter().enumerate() {
                let share = [0.5, 0.4, 0.05, 0.05][k];
                add(name, wall.map(|w| w * share));
            }
            if parallel {
                let values = [[50.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0; 3], [0.0; 3]];
                for (name, v) in PARALLEL_COLUMNS.iter().zip(values) {
                    add(name, v);
                }
            }
            let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
            std::fs::create_dir_all(dir.join("timing")).unwrap();
            let path = dir.join(format!("timing/part-{part}.parquet"));
            crate::parts::write_part(&path, &batch);
        };
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 0, true);
        let split = phase_medians(dir.path(), None).unwrap().split.unwrap();
        assert_eq!(split.ticks, 2);
        assert_eq!(split.wall_ms, 30.0);
        assert_eq!(split.phase_ms, [15.0, 12.0, 1.5, 1.5]);
        assert_eq!(split.parallel_ms, [3.0, 7.0, 0.0, 0.0]);
        assert!((split.one_thread_share() - 20.0 / 30.0).abs() < 1e-12);
        // Half serial: 8 threads give 1 / (0.5 + 0.5 / 8) = 16 / 9; none serial: 8.
        assert!((PhaseSplit::amdahl(0.5, 8) - 16.0 / 9.0).abs() < 1e-12);
        assert_eq!(PhaseSplit::amdahl(0.0, 8), 8.0);
        let old = tempfile::tempdir().unwrap();
        write(old.path(), 0, false);
        assert!(phase_medians(old.path(), None).unwrap().split.is_none());
        write(dir.path(), 1, false);
        assert!(phase_medians(dir.path(), None).unwrap().split.is_none());
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(vec![]), 0.0);
    }
}
