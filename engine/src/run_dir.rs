//! A run directory: the names of what it holds, which directories are runs (a sweep's
//! directory stands for the runs in it, in natural order), and its snapshots: listed newest
//! first, the one a resume continues from chosen, the old ones pruned. The one place these
//! names and rules live; `cellsim` (run, resume, status, report, the lock and the log) and the
//! analysis read them from here.
//!
//! ```text
//! RUN/run.toml            the configuration (what `cellsim resume` reads)
//! RUN/schema.json         what the policy declares (counters, tables)
//! RUN/summary.json        written last: the run finished
//! RUN/cellsim.log         one line per start, stop and end
//! RUN/.cellsim.lock       held while a process uses the directory
//! RUN/snapshots/tick-<next tick>.snap
//! RUN/<table>/part-*.parquet   ticks, nodes, migrations, timing, the policy's tables
//! ```

use std::path::{Path, PathBuf};

use crate::config::RunConfig;
use crate::error::{EngineError, Result};
use crate::output;
use crate::run_identity::RunRecord;
use crate::snapshot::{self, Snapshot, SnapshotError};

/// The run's configuration (what `cellsim resume` reads).
pub const CONFIG_FILE: &str = "run.toml";
/// A snapshot's `run` section: the metrics so far, the outputs' state, the wall seconds before
/// the snapshot, the builds that simulated the run and the watchdog.
pub(crate) type RunSection = (
    crate::summary::Accumulator,
    crate::output::OutputState,
    f64,
    Vec<crate::summary::BuildSpan>,
    crate::watchdog::Watchdog,
);

/// The summary, written last: its presence means the run finished.
pub const SUMMARY_FILE: &str = "summary.json";
/// What the run's policy declares (`output::schema`).
pub use crate::output::schema::SCHEMA_FILE;
/// The run's log.
pub const LOG_FILE: &str = "cellsim.log";
/// The lock file a process holds the directory with.
pub const LOCK_FILE: &str = ".cellsim.lock";
/// Directory of the snapshots.
pub const SNAPSHOT_DIR: &str = "snapshots";
/// Directory of a run's synthetic cell (a run without a trace makes one there).
pub const SYNTHETIC_DIR: &str = "synthetic";

/// Whether `dir` is a run directory: one with a `run.toml`, or a `cellsim.log` (a run that
/// stopped before writing its config has only the latter).
pub fn is_run(dir: &Path) -> bool {
    dir.join(CONFIG_FILE).exists() || dir.join(LOG_FILE).exists()
}

/// The run directories `paths` name, each with `true` when it was found inside a directory
/// given (not named itself). A path that is neither a run nor holds any is kept as given, for
/// the command to say what it is.
pub fn expand(paths: &[PathBuf]) -> Vec<(PathBuf, bool)> {
    let mut runs = Vec::new();
    for path in paths {
        let inside = runs_inside(path);
        match inside.is_empty() {
            true => runs.push((path.clone(), false)),
            false => runs.extend(inside.into_iter().map(|run| (run, true))),
        }
    }
    runs
}

/// The run directories directly inside `dir`, in natural order; none when `dir` is a run.
fn runs_inside(dir: &Path) -> Vec<PathBuf> {
    if is_run(dir) {
        return Vec::new();
    }
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|d| d.is_dir() && is_run(d))
        .collect();
    runs.sort_by_cached_key(|d| natural_key(&d.display().to_string()));
    runs
}

/// A name as a sort key whose digit runs compare as numbers: `run-2` < `run-10`.
fn natural_key(name: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut rest = name;
    while !rest.is_empty() {
        let text_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (text, after) = rest.split_at(text_len);
        let digits_len = after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len());
        let (digits, after) = after.split_at(digits_len);
        key.push((text.to_string(), digits.parse().unwrap_or(0)));
        rest = after;
    }
    key
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

/// Snapshot files in `run_dir`, newest first.
pub fn list(run_dir: &Path) -> Result<Vec<PathBuf>> {
    let dir = run_dir.join(SNAPSHOT_DIR);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(EngineError::io(&dir))? {
        let entry = entry.map_err(EngineError::io(&dir))?;
        let path = entry.path();
        // A directory so named is no snapshot (issue 56: opening one failed every resume with
        // "No such device"); a new run is refused where one lies (`check_fresh`).
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && path.extension().is_some_and(|e| e == "snap") {
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
    let (want_config, want_trace) = (
        crate::config::config_hash(config),
        snapshot::trace_hash(trace_dir)?,
    );
    let want_run = config.run.as_ref().map_or(0, RunRecord::id_u64);
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
            } else if h.run_id != want_run {
                Err(SnapshotError::Mismatch {
                    path: path.clone(),
                    problem: format!(
                        "written by another run (run ID {:016x}; this run's, in its {CONFIG_FILE}, is {want_run:016x}): a snapshot copied from elsewhere continues that run, not this one",
                        h.run_id
                    ),
                })
            } else {
                parts_intact(run_dir, &snap).map(|()| snap)
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

/// Checks that the output parts and samples `snap` counts are in `run_dir` as they were written.
fn parts_intact(run_dir: &Path, snap: &Snapshot) -> std::result::Result<(), SnapshotError> {
    let (_, outputs, _, _, _): RunSection = snap.section("run")?.serde()?;
    (output::check_parts(run_dir, &outputs.parts))
        .and_then(|()| output::check_samples(run_dir, outputs.samples_len, outputs.samples_crc32))
        .map_err(|problem| SnapshotError::Mismatch {
            path: snap.path().to_path_buf(),
            problem,
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

/// The keys in which `config` differs from the configuration the run in `run_dir` started with
/// (its `run.toml`), each as "key old -> new", counting only keys that change an output (not
/// threads, snapshots, the trace's place); none when they agree or `run.toml` cannot be read.
pub fn config_changes(run_dir: &Path, config: &RunConfig) -> Vec<String> {
    let Ok(started) = RunConfig::from_file(&run_dir.join(CONFIG_FILE)) else {
        return Vec::new();
    };
    crate::config::outputs_config(config).changes_from(&crate::config::outputs_config(&started))
}

/// [`config_changes`] as text for a mismatch message; empty when there are none.
fn changes_since_start(run_dir: &Path, config: &RunConfig) -> String {
    let changes = config_changes(run_dir, config);
    match changes.is_empty() {
        true => String::new(),
        false => format!(
            "; changed since it started: {}; `cellsim resume {}` continues it as it started",
            changes.join(", "),
            run_dir.display()
        ),
    }
}

/// Checks that a new run may write into `out_dir`, whose own tables are `tables` (the engine's
/// and its policy's): a new run clears the parts it finds in its tables, so it refuses a
/// directory holding anything it did not write (issue 56: a user's file, another run's parts).
/// Allowed, beside what cellsim keeps for any run there (the lock, the log, a synthetic cell,
/// snapshot temporaries): the leftovers of a start of this same run (its `run.toml` equal to
/// `config` in every key that changes an output; its schema, samples, partial parts, and table
/// directories holding only parts). Refused otherwise, naming what is there.
pub fn check_fresh(out_dir: &Path, config: &RunConfig, tables: &[&str]) -> Result<()> {
    const SHOWN: usize = 5;
    let names = |dir: &Path| -> Result<Vec<(String, bool)>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(EngineError::io(dir))? {
            let entry = entry.map_err(EngineError::io(dir))?;
            let is_dir = entry.file_type().map_err(EngineError::io(dir))?.is_dir();
            names.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
        }
        names.sort();
        Ok(names)
    };
    let kept_for_any = [LOCK_FILE, LOG_FILE, SYNTHETIC_DIR, SNAPSHOT_DIR];
    let mut found = Vec::new();
    for (name, is_dir) in names(out_dir)? {
        if name == SNAPSHOT_DIR && is_dir {
            // Non-empty of snapshots is refused before (`RunUnfinished`); temporaries are pruned.
            for (inner, _) in names(&out_dir.join(SNAPSHOT_DIR))? {
                if !inner.ends_with(".tmp") {
                    found.push((format!("{SNAPSHOT_DIR}/{inner}"), false));
                }
            }
        } else if !kept_for_any.contains(&name.as_str()) {
            found.push((name, is_dir));
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let started = RunConfig::from_file(&out_dir.join(CONFIG_FILE)).ok();
    let started = started.as_ref().map(crate::config::outputs_config);
    let same_run = started.as_ref() == Some(&crate::config::outputs_config(config));
    let mut foreign = Vec::new();
    for (name, is_dir) in found {
        let own = [
            CONFIG_FILE,
            SCHEMA_FILE,
            output::SAMPLES_FILE,
            output::SAMPLES_PARTIAL_FILE,
        ];
        let own_file = own.contains(&name.as_str());
        let own_dir = is_dir && (name == output::PARTIAL_DIR || tables.contains(&name.as_str()));
        if same_run && own_file {
            continue;
        }
        if same_run && own_dir {
            for (inner, inner_dir) in names(&out_dir.join(&name))? {
                let a_part = inner.starts_with("part-") && inner.ends_with(".parquet");
                if inner_dir || !(a_part || name == output::PARTIAL_DIR) {
                    foreign.push(format!("{name}/{inner}"));
                }
            }
            continue;
        }
        foreign.push(if is_dir { format!("{name}/") } else { name });
    }
    if foreign.is_empty() {
        return Ok(());
    }
    let more = foreign.len().saturating_sub(SHOWN);
    foreign.truncate(SHOWN);
    let mut holds = foreign.join(", ");
    if more > 0 {
        holds += &format!(" and {more} more");
    }
    let whose = match &started {
        Some(started) if !same_run => format!(
            " (another run's: its {CONFIG_FILE} differs: {})",
            crate::config::outputs_config(config)
                .changes_from(started)
                .join(", ")
        ),
        _ => String::new(),
    };
    Err(EngineError::NotOurs {
        path: out_dir.to_path_buf(),
        holds: holds + &whose,
    })
}

/// Deletes all but the newest `keep` snapshots of `run_dir`, and temporary files left by a crash
/// during a write.
pub fn prune(run_dir: &Path, keep: u32) -> Result<()> {
    for old in list(run_dir)?.into_iter().skip(keep.max(1) as usize) {
        std::fs::remove_file(&old).map_err(EngineError::io(&old))?;
    }
    remove_temporaries(run_dir)
}

/// Deletes the snapshot temporaries (`*.snap.tmp`) in `run_dir`: debris of a write cut short,
/// since only the process holding the run's lock writes one. Called when a run starts or resumes
/// (issue 56: one left by a kill during a write stayed until the next snapshot, or for good) and
/// after every snapshot.
pub fn remove_temporaries(run_dir: &Path) -> Result<()> {
    let dir = run_dir.join(SNAPSHOT_DIR);
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(&dir).map_err(EngineError::io(&dir))? {
        let entry = entry.map_err(EngineError::io(&dir))?;
        let path = entry.path();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && path.extension().is_some_and(|e| e == "tmp") {
            std::fs::remove_file(&path).map_err(EngineError::io(&path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Digit runs sort as numbers, the rest as text.
    #[test]
    fn natural_order() {
        let mut names = ["s/run-10", "s/run-2", "s/run-1", "s/b", "s/run-02x", "s/a"];
        names.sort_by_cached_key(|n| natural_key(n));
        assert_eq!(
            names,
            ["s/a", "s/b", "s/run-1", "s/run-2", "s/run-02x", "s/run-10"]
        );
    }

    /// A sweep's directory names its runs in natural order, marked as found; a run names
    /// itself; anything else is kept as given.
    #[test]
    fn sweeps_expand_to_their_runs() {
        let dir = tempfile::tempdir().unwrap();
        let sweep = dir.path().join("sweep");
        for (run, file) in [
            ("run-10", CONFIG_FILE),
            ("run-2", LOG_FILE),
            ("run-1", CONFIG_FILE),
        ] {
            std::fs::create_dir_all(sweep.join(run)).unwrap();
            std::fs::write(sweep.join(run).join(file), "").unwrap();
        }
        std::fs::create_dir_all(sweep.join("notes")).unwrap();
        let other = dir.path().join("missing");
        let runs = expand(&[sweep.join("run-10"), sweep.clone(), other.clone()]);
        let expected = vec![
            (sweep.join("run-10"), false),
            (sweep.join("run-1"), true),
            (sweep.join("run-2"), true),
            (sweep.join("run-10"), true),
            (other, false),
        ];
        assert_eq!(runs, expected);
    }
}
