//! `cellsim gen`: a synthetic trace in the exact GCD 2011 CSV.gz layout, seeded and deterministic.
//!
//! The cell follows the 2011 machine mix ([`cell`]); the workload follows the calibrated model in
//! [`model`], simulated by `sim` after a warm-up so that the t = 0 snapshot is in steady state, and
//! placed by a simple hybrid best/worst-fit scheduler whose decisions are recorded as SCHEDULE
//! events with machine IDs. Output: all six tables as `part-NNNNN-of-MMMMM.csv.gz` (machine tables
//! in one part, the others one part per `part_hours`), plus `gen-summary.json`. The trace is
//! written to `OUT.partial` and renamed to `OUT` when complete. Memory: proportional to the cell's
//! running tasks, independent of `hours`.

pub mod cell;
pub(crate) mod csvgz;
pub mod model;
mod sim;
mod writers;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::codes::TRACE_START_US;
use crate::error::{IngestError, Result};
use crate::tables::Table;

/// Settings of one generated trace.
#[derive(Debug, Clone, Serialize)]
pub struct GenConfig {
    /// Machines in the cell (50 to 12,583 x 8).
    pub machines: u32,
    /// Simulated hours after the t = 0 snapshot.
    pub hours: f64,
    /// Random seed.
    pub seed: u64,
    /// Hours of trace per part file of the time-sharded tables.
    pub part_hours: f64,
    /// Adds the jobs the real cell's scheduler holds waiting for hours ([`model::HELD_JOBS`]);
    /// `cellsim gen` and `run`'s synthetic cell make them, `gen --no-held-jobs` leaves them out.
    pub held_jobs: bool,
}

/// Largest cell: 8x the 2011 cell.
pub const MAX_MACHINES: u32 = cell::REAL_CELL_MACHINES * 8;

impl GenConfig {
    /// Checks ranges; returns the number of parts of the time-sharded tables.
    pub fn validate(&self) -> Result<u32> {
        if !(50..=MAX_MACHINES).contains(&self.machines) {
            return Err(IngestError::Config(format!(
                "machines must be 50..={MAX_MACHINES}, got {}",
                self.machines
            )));
        }
        if !(self.hours > 0.0 && self.hours <= 24.0 * 31.0) {
            return Err(IngestError::Config(format!(
                "hours must be in (0, 744], got {}",
                self.hours
            )));
        }
        if !(self.part_hours.is_finite() && self.part_hours > 0.0) {
            // Infinite part hours gave 0 parts and a new file for every row.
            return Err(IngestError::Config(format!(
                "part hours must be positive and finite, got {}",
                self.part_hours
            )));
        }
        let parts = (self.hours / self.part_hours).ceil();
        if parts > 99_999.0 {
            return Err(IngestError::Config(format!(
                "{parts} parts is more than the layout's 99,999"
            )));
        }
        Ok(parts as u32)
    }

    /// Simulated microseconds the generation goes through: the warm-up and the trace window.
    pub fn simulated_us(&self) -> u64 {
        (model::WARMUP_S as f64 * 1e6 + self.hours * 3600e6) as u64
    }
}

/// The content of `gen-summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct GenSummary {
    /// cellsim version.
    pub version: String,
    /// Which calibration of the workload model made the trace ([`model::MODEL`]).
    pub model: String,
    /// The settings.
    pub config: GenConfig,
    /// Rows per table.
    pub rows: std::collections::BTreeMap<String, u64>,
    /// Part files per time-sharded table.
    pub parts: u32,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// Name of the summary written into the trace directory.
pub const SUMMARY_FILE: &str = "gen-summary.json";

/// Simulated microseconds done, for progress display, and a flag to stop early.
#[derive(Debug, Default)]
pub struct GenProgress {
    /// Simulated microseconds done so far, the warm-up's included (of
    /// [`GenConfig::simulated_us`]).
    pub simulated_us: AtomicU64,
    /// Set (by a signal handler, say) to stop: [`generate`] then returns
    /// [`IngestError::Stopped`] within ten simulated minutes, leaving nothing behind.
    pub stop: Arc<AtomicBool>,
}

fn partial_path(out_dir: &Path) -> PathBuf {
    let mut name = out_dir.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    out_dir.with_file_name(name)
}

/// Checks that `out_dir` does not exist or is empty (removing it then) and clears a leftover
/// `OUT.partial`; returns the partial directory to write in and rename when complete.
pub(crate) fn prepare_out_dir(out_dir: &Path) -> Result<PathBuf> {
    if out_dir.exists() {
        let mut entries = std::fs::read_dir(out_dir).map_err(IngestError::io(out_dir))?;
        if entries.next().is_some() {
            return Err(IngestError::Config(format!(
                "{} exists and is not empty; give a new directory",
                out_dir.display()
            )));
        }
        std::fs::remove_dir(out_dir).map_err(IngestError::io(out_dir))?;
    }
    let partial = partial_path(out_dir);
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(IngestError::io(&partial))?;
    }
    Ok(partial)
}

/// Writes the trace to `out_dir`, which must not exist or be empty.
pub fn generate(out_dir: &Path, config: &GenConfig, progress: &GenProgress) -> Result<GenSummary> {
    let started = Instant::now();
    let parts = config.validate()?;
    let partial = prepare_out_dir(out_dir)?;
    let hours_us = (config.hours * 3600e6) as i64;
    let part_len_us = (config.part_hours * 3600e6) as i64;
    let cell = cell::Cell::new(config.machines, config.seed);
    let users = model::users(config.machines as usize);
    let out = writers::Writers::new(&partial, parts, part_len_us, users, config.seed)?;
    let mut sim = sim::Sim::new(&cell, config.seed, TRACE_START_US + hours_us, out);
    sim.held_jobs = config.held_jobs;
    let report = |now_us: i64| {
        let done = (now_us - model::WARMUP_START_US).max(0) as u64;
        progress.simulated_us.store(done, Ordering::Relaxed);
        crate::ingest::check_stop(&progress.stop)
    };
    let result = sim.run(&report);
    let out = sim.into_writers();
    let rows = out.rows;
    let finished = result.and_then(|()| out.finish());
    if let Err(e) = finished {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e);
    }
    progress
        .simulated_us
        .store(config.simulated_us(), Ordering::Relaxed);
    let summary = GenSummary {
        version: env!("CARGO_PKG_VERSION").to_string(),
        model: model::MODEL.to_string(),
        config: config.clone(),
        rows: Table::ALL
            .iter()
            .zip(rows)
            .map(|(t, r)| (t.name().to_string(), r))
            .collect(),
        parts,
        seconds: started.elapsed().as_secs_f64(),
    };
    crate::ingest::write_json_atomically(&partial.join(SUMMARY_FILE), &summary)?;
    std::fs::rename(&partial, out_dir).map_err(IngestError::io(out_dir))?;
    Ok(summary)
}
