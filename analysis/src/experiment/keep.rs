//! An experiment that stops and goes on (issue 56 item 4): every point (a case and a seed) is
//! kept in `DIR/points/<key>.json` once measured, and a stop request (SIGTERM, SIGUSR1, SIGINT:
//! SLURM's warning before the time limit) lets the points under way finish but starts no other.
//! The same command again into the same `DIR` measures only the points not kept; once every point
//! is there the results are written and `DIR/points/` removed.
//!
//! Invariant: a point's file is written whole or not at all (written, then renamed), and holds
//! the rows of exactly that point, so a kept point is what measuring it again would give (the
//! experiments are deterministic in their seeds).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{AnalysisError, Result};

/// Directory of the kept points in an experiment's output directory.
pub const POINTS_DIR: &str = "points";

/// Where an experiment keeps its points, and the flag that stops it.
#[derive(Debug, Clone, Default)]
pub struct Keep {
    /// `DIR/points`; none: nothing kept (tests, library callers).
    dir: Option<PathBuf>,
    /// Set by a signal: start no other point.
    stop: Arc<AtomicBool>,
}

impl Keep {
    /// Keeps points in `out/points` (created), stopping when `stop` is set.
    pub fn in_dir(out: &Path, stop: Arc<AtomicBool>) -> Result<Keep> {
        let dir = out.join(POINTS_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| AnalysisError::Write {
            path: dir.clone(),
            source,
        })?;
        Ok(Keep {
            dir: Some(dir),
            stop,
        })
    }

    /// The points kept so far.
    pub fn kept(&self) -> usize {
        let Some(dir) = &self.dir else { return 0 };
        std::fs::read_dir(dir).map_or(0, |entries| {
            let names = entries.filter_map(|e| e.ok()).map(|e| e.file_name());
            names
                .filter(|n| n.to_string_lossy().ends_with(".json"))
                .count()
        })
    }

    /// Removes the kept points (the experiment's results are written).
    pub fn finish(&self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{key}.json")))
    }

    fn load<R: DeserializeOwned>(&self, key: &str) -> Option<R> {
        let text = std::fs::read_to_string(self.path(key)?).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn store<R: Serialize>(&self, key: &str, rows: &R) -> Result<()> {
        let Some(path) = self.path(key) else {
            return Ok(());
        };
        ingest::ingest::write_json_atomically(&path, rows).map_err(|e| AnalysisError::Write {
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        })
    }
}

/// `measure` of every item not kept in `keep` (the kept ones read back), on `threads` threads,
/// in item order; [`AnalysisError::Stopped`] when a stop request left items unmeasured (those
/// measured are kept). `key` names an item's file, unique among the items.
pub fn measure_all<T: Sync, R: Send + Serialize + DeserializeOwned>(
    items: &[T],
    threads: usize,
    keep: &Keep,
    key: impl Fn(&T) -> String + Sync,
    measure: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let skipped = AtomicUsize::new(0);
    let results = super::spread(items, threads, |item| {
        let key = key(item);
        if let Some(kept) = keep.load(&key) {
            return Ok::<_, AnalysisError>(Some(kept));
        }
        if keep.stop.load(Ordering::Relaxed) {
            skipped.fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        }
        let rows = measure(item)?;
        keep.store(&key, &rows)?;
        Ok(Some(rows))
    });
    let mut out = Vec::with_capacity(items.len());
    for r in results {
        if let Some(rows) = r? {
            out.push(rows);
        }
    }
    match skipped.into_inner() {
        0 => Ok(out),
        left => Err(AnalysisError::Stopped {
            done: items.len() - left,
            total: items.len(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stop after three items keeps those three and measures none after; the same items again
    /// measure only the rest, and give what one uninterrupted pass gives.
    #[test]
    fn a_stopped_pass_keeps_its_points_and_the_next_finishes_them() {
        let dir = tempfile::tempdir().unwrap();
        let items: Vec<u64> = (0..10).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let keep = Keep::in_dir(dir.path(), stop.clone()).unwrap();
        let measured = AtomicUsize::new(0);
        let measure = |&i: &u64| {
            if measured.fetch_add(1, Ordering::Relaxed) + 1 == 3 {
                stop.store(true, Ordering::Relaxed);
            }
            Ok(vec![i * i, i + 1])
        };
        let key = |i: &u64| format!("item-{i}");
        let first = measure_all(&items, 1, &keep, key, measure);
        assert!(
            matches!(first, Err(AnalysisError::Stopped { done: 3, total: 10 })),
            "{first:?}"
        );
        assert_eq!(keep.kept(), 3);
        stop.store(false, Ordering::Relaxed);
        let again = AtomicUsize::new(0);
        let rows = measure_all(&items, 2, &keep, key, |&i: &u64| {
            again.fetch_add(1, Ordering::Relaxed);
            Ok(vec![i * i, i + 1])
        })
        .unwrap();
        assert_eq!(again.into_inner(), 7);
        let whole: Vec<Vec<u64>> = items.iter().map(|&i| vec![i * i, i + 1]).collect();
        assert_eq!(rows, whole);
        keep.finish();
        assert!(!dir.path().join(POINTS_DIR).exists());
    }
}
