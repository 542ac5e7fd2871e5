//! A run's identity: a random ID drawn when the run starts, recorded in its `run.toml` (`[run]`)
//! and in the header of every snapshot it writes, so that a resume never continues from a
//! snapshot copied from another run of the same configuration and trace (its outputs before the
//! snapshot are not this run's). Also the trace as the user gave it (relative or absolute), which
//! `summary.json` reports; `trace` in `run.toml` holds it made absolute for resuming from
//! anywhere.
//!
//! Invariant: an ID is never 0 (0 in a snapshot header means "no run identity", which only
//! tests that drive the engine without a run directory's record write).

use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The `[run]` table of a run's `run.toml`, written by cellsim when the run starts. A config a
/// user writes may hold `[run] strict = true` alone (the same as `[watchdog] strict` and
/// `--strict`); the ID and trace are cellsim's to fill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    /// The run's random ID, 16 hex digits.
    #[serde(default)]
    pub id: String,
    /// The trace as given when the run started.
    #[serde(default)]
    pub trace: PathBuf,
    /// A stall or work left undone exits non-zero (`watchdog.rs`); merged into
    /// `[watchdog] strict` when the run starts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
}

impl RunRecord {
    /// A new run's record, with a fresh random ID.
    pub fn new(trace_as_given: &Path) -> RunRecord {
        RunRecord {
            id: format!("{:016x}", fresh_id()),
            trace: trace_as_given.to_path_buf(),
            strict: false,
        }
    }

    /// The ID as written in snapshot headers; 0 when the recorded ID is not 16 hex digits (a
    /// hand-edited `run.toml`), which matches no snapshot of a run that had one.
    pub fn id_u64(&self) -> u64 {
        match self.id.len() {
            16 => u64::from_str_radix(&self.id, 16).unwrap_or(0),
            _ => 0,
        }
    }
}

/// A random non-zero u64: the standard library's per-process random hash keys (from the OS),
/// mixed with the time and the process ID.
fn fresh_id() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.finish().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_hex_and_read_back() {
        let ids: Vec<RunRecord> = (0..64).map(|_| RunRecord::new(Path::new("t"))).collect();
        for r in &ids {
            assert_eq!(r.id.len(), 16);
            assert_eq!(format!("{:016x}", r.id_u64()), r.id);
            assert_ne!(r.id_u64(), 0);
        }
        let mut sorted: Vec<&str> = ids.iter().map(|r| r.id.as_str()).collect();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        let edited = RunRecord {
            id: "not-an-id".into(),
            trace: "t".into(),
            strict: false,
        };
        assert_eq!(edited.id_u64(), 0);
    }
}
