//! Snapshots of a whole simulation at a tick boundary, for resuming crashed or time-limited runs
//! (SPEC 8): what triggers them ([`SnapshotConfig`]), where they live (`RUN/snapshots/
//! tick-<next tick>.snap`, the newest `keep` kept), which one a resume picks ([`choose`]) and
//! the identities a snapshot must match (the run's configuration and trace).
//!
//! A snapshot holds: the cell's columns, the replay's read positions, ID maps and deferred
//! events, the policy's state (agents, in-flight messages, caches, queues), the metric
//! accumulator and the outputs' open rows (`output::OutputState`). Randomness is counter-based
//! per (agent, tick, round), so there is no RNG state to keep. The file format is in
//! [`format`](mod@format); the cell and replay sections in [`state`].

pub mod format;
pub mod state;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use format::{Header, SectionReader, SectionWriter, Snapshot, SnapshotError, SnapshotWriter};

use crate::config::RunConfig;
use crate::error::{EngineError, Result};

/// Exit code of `cellsim run`/`resume` after a signal-triggered snapshot: "snapshotted, please
/// requeue" (EX_TEMPFAIL of sysexits.h). The sbatch template requeues on it.
pub const EXIT_SNAPSHOTTED: i32 = 75;

/// Directory of the snapshots in a run directory.
pub const SNAPSHOT_DIR: &str = "snapshots";

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

/// File name of the snapshot taken before `next_tick`.
pub fn file_name(next_tick: u64) -> String {
    format!("tick-{next_tick:08}.snap")
}

/// The tick a snapshot file continues at, from its name ([`file_name`]'s inverse); `None` for
/// a name of another form.
pub fn tick_of(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("tick-")?
        .strip_suffix(".snap")?
        .parse()
        .ok()
}

fn hash_bytes(bytes: &[u8]) -> u64 {
    let words: Vec<u64> = bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect();
    ingest::rng::hash_keys(bytes.len() as u64, &words)
}

/// Hash of everything in `config` that determines the outputs: not the thread count, the trace
/// location (the trace is identified by [`trace_hash`]), invariant checking or the snapshot
/// triggers, which a resume may change.
pub fn config_hash(config: &RunConfig) -> u64 {
    let c = outputs_config(config);
    hash_bytes(toml::to_string(&c).expect("a config serialises").as_bytes())
}

/// `config` without what [`config_hash`] leaves out.
fn outputs_config(config: &RunConfig) -> RunConfig {
    RunConfig {
        threads: 0,
        trace: None,
        check_invariants: false,
        snapshot: SnapshotConfig::default(),
        ..config.clone()
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
    Ok(hash_bytes(identity.as_bytes()))
}

/// Snapshot files in `run_dir`, newest first.
pub fn list(run_dir: &Path) -> Result<Vec<PathBuf>> {
    let dir = run_dir.join(SNAPSHOT_DIR);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(EngineError::io(&dir))? {
        let path = entry.map_err(EngineError::io(&dir))?.path();
        if path.extension().is_some_and(|e| e == "snap") {
            files.push(path);
        }
    }
    files.sort();
    files.reverse();
    Ok(files)
}

/// The snapshot a resume continues from, and the newer ones it skipped with the reason.
pub struct Chosen {
    /// The newest usable snapshot; `None` when the run has none (it starts from the beginning).
    pub snapshot: Option<Snapshot>,
    /// Why each newer snapshot was skipped (each error names its file).
    pub skipped: Vec<SnapshotError>,
}

/// Picks the newest snapshot of `run_dir` that opens cleanly and matches `config` and the trace
/// in `trace_dir`. No snapshot at all is fine (a fresh start); snapshots that are all unusable
/// are an error listing why.
pub fn choose(run_dir: &Path, config: &RunConfig, trace_dir: &Path) -> Result<Chosen> {
    let (want_config, want_trace) = (config_hash(config), trace_hash(trace_dir)?);
    let mut skipped = Vec::new();
    for path in list(run_dir)? {
        let checked = Snapshot::open(&path).and_then(|snap| {
            let h = snap.header();
            let mismatch = |what: &str, changes: String| SnapshotError::Mismatch {
                path: path.clone(),
                problem: format!(
                    "taken with another {what} than this run's (the run's {what} must not change{changes})"
                ),
            };
            if h.config_hash != want_config {
                Err(mismatch("configuration", changes_since_start(run_dir, config)))
            } else if h.trace_hash != want_trace {
                Err(mismatch("trace", String::new()))
            } else {
                Ok(snap)
            }
        });
        match checked {
            Ok(snap) => {
                return Ok(Chosen {
                    snapshot: Some(snap),
                    skipped,
                });
            }
            Err(e) => skipped.push(e),
        }
    }
    if skipped.is_empty() {
        return Ok(Chosen {
            snapshot: None,
            skipped,
        });
    }
    Err(EngineError::NoUsableSnapshot {
        dir: run_dir.join(SNAPSHOT_DIR),
        reasons: grouped_reasons(&skipped),
    })
}

/// Why each of `skipped` was skipped, each reason once with the files it applies to (every
/// snapshot of a run resumed with another setting has the same one):
/// `tick-00000300.snap, tick-00000240.snap: taken with another configuration ...`.
fn grouped_reasons(skipped: &[SnapshotError]) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for why in skipped {
        let path = why.path();
        let text = why.to_string();
        let reason = text
            .strip_prefix(&format!("{}: ", path.display()))
            .unwrap_or(&text)
            .to_string();
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        match groups.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, names)) => names.push(name),
            None => groups.push((reason, vec![name])),
        }
    }
    let lines: Vec<String> = groups
        .iter()
        .map(|(reason, names)| format!("{}: {reason}", names.join(", ")))
        .collect();
    lines.join("; ")
}

/// What `config` changes from the configuration the run in `run_dir` started with (its
/// `run.toml`), as text for a mismatch message; empty when that cannot be told.
fn changes_since_start(run_dir: &Path, config: &RunConfig) -> String {
    let Ok(started) = RunConfig::from_file(&run_dir.join(crate::run::CONFIG_FILE)) else {
        return String::new();
    };
    let changes = outputs_config(config).changes_from(&outputs_config(&started));
    match changes.is_empty() {
        true => String::new(),
        false => format!(
            "; changed since it started: {}; `cellsim resume {}` continues it as it started",
            changes.join(", "),
            run_dir.display()
        ),
    }
}

/// Deletes all but the newest `keep` snapshots of `run_dir`, and temporary files left by a crash
/// during a write.
pub fn prune(run_dir: &Path, keep: u32) -> Result<()> {
    for old in list(run_dir)?.into_iter().skip(keep.max(1) as usize) {
        std::fs::remove_file(&old).map_err(EngineError::io(&old))?;
    }
    let dir = run_dir.join(SNAPSHOT_DIR);
    for entry in std::fs::read_dir(&dir).map_err(EngineError::io(&dir))? {
        let path = entry.map_err(EngineError::io(&dir))?.path();
        if path.extension().is_some_and(|e| e == "tmp") {
            std::fs::remove_file(&path).map_err(EngineError::io(&path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ingest::{IngestOptions, Table};

    /// A snapshot's name gives back its tick, in any directory; other names none.
    #[test]
    fn file_names_give_back_their_tick() {
        for tick in [0, 60, 12_345_678, 4_000_000_000] {
            let path = Path::new("run/snapshots").join(file_name(tick));
            assert_eq!(tick_of(&path), Some(tick));
        }
        for other in ["tick-00000060.snap.tmp", "tick-x.snap", "notes.txt"] {
            assert_eq!(tick_of(Path::new(other)), None, "{other}");
        }
    }

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
