//! Snapshots of a whole simulation at a tick boundary, for resuming crashed or time-limited runs
//! (SPEC 8): what triggers them ([`SnapshotConfig`]), where they live (`RUN/snapshots/
//! tick-<next tick>.snap`, the newest `keep` kept, listed, chosen and pruned by `run_dir.rs`) and
//! the identities a snapshot must match (the run's trace, [`trace_hash`]; its configuration,
//! `config::config_hash`).
//!
//! A snapshot holds: the cell's columns, the replay's read positions, ID maps and deferred
//! events, the policy's state (agents, in-flight messages, caches, queues), the metric
//! accumulator and the outputs' open rows (`output::OutputState`). Randomness is counter-based
//! per (agent, tick, round), so there is no RNG state to keep. The file format is in
//! [`format`](mod@format); the cell and replay sections in [`state`].

pub mod state;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::codec::{
    Header, SectionReader, SectionWriter, Snapshot, SnapshotError, SnapshotWriter, column, format,
    read_header,
};

use crate::error::Result;

/// Exit code of `cellsim run`/`resume` after a signal-triggered snapshot: "snapshotted, please
/// requeue" (EX_TEMPFAIL of sysexits.h). The sbatch template requeues on it.
pub const EXIT_SNAPSHOTTED: i32 = 75;

/// When snapshots are taken (always at a tick boundary; a signal also triggers one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SnapshotConfig {
    /// Every this many simulated minutes; 0 = never.
    pub every_sim_minutes: u32,
    /// Every this many wall-clock minutes; 0 = never.
    pub every_wall_minutes: f64,
    /// Snapshots kept (the newest).
    pub keep: u32,
}

impl Default for SnapshotConfig {
    fn default() -> Self {
        SnapshotConfig {
            every_sim_minutes: 0,
            every_wall_minutes: 10.0,
            keep: 3,
        }
    }
}

/// Hash of the ingested trace's identity, from its `ingest-summary.json`: for every table and
/// part, the input file's name and size and the rows, bad rows and time range read from it, and
/// whether bad rows were skipped. Not the ingest's wall time, the raw trace's path, the Parquet
/// files' sizes or the cellsim version: the same trace ingested again (after a scratch purge,
/// elsewhere, by another build) is the same trace.
pub fn trace_hash(trace_dir: &Path) -> Result<u64> {
    let summary = ingest::IngestSummary::load(trace_dir)?;
    let mut identity = format!("skip_bad_rows {}\n", summary.skip_bad_rows);
    for (table, t) in &summary.tables {
        for p in &t.parts {
            identity += &format!(
                "{table} {} {} {} {} {:?} {:?} {}\n",
                p.input, p.bytes_in, p.rows, p.bad_rows, p.min_time_us, p.max_time_us, p.merged
            );
        }
    }
    Ok(crate::codec::hash_bytes(identity.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ingest::{IngestOptions, Table};

    /// The real sample's parts ingested twice, from two places and at two times, are one trace
    /// (their summaries differ in the input path and the wall time); with another table they are
    /// another.
    #[test]
    fn a_trace_ingested_again_elsewhere_is_the_same_trace() {
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/gcd-sample");
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&sample, &elsewhere).unwrap();
        let ingested = |raw: &Path, out: &str, tables: Vec<Table>| {
            let out = dir.path().join(out);
            let options = IngestOptions {
                tables,
                ..IngestOptions::default()
            };
            ingest::ingest(raw, &out, &options, &Default::default()).unwrap();
            out
        };
        let a = ingested(&sample, "a", vec![Table::MachineEvents]);
        let b = ingested(&elsewhere, "b", vec![Table::MachineEvents]);
        let both = vec![Table::MachineEvents, Table::JobEvents];
        let c = ingested(&sample, "c", both);
        let summary = |d: &Path| std::fs::read(d.join(ingest::ingest::SUMMARY_FILE)).unwrap();
        assert_ne!(summary(&a), summary(&b));
        assert_eq!(trace_hash(&a).unwrap(), trace_hash(&b).unwrap());
        assert_ne!(trace_hash(&a).unwrap(), trace_hash(&c).unwrap());
    }
}
