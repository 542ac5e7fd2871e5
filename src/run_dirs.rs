//! Which run directories the paths given to `status` and `report` name: a run directory names
//! itself; a directory that is no run but holds runs (a sweep's `SWEEP_DIR` of `run-<i>`) names
//! those, in natural order (`run-2` before `run-10`, where a shell's `run-*` puts `run-10`
//! first). A run directory is one with a `run.toml` or a `cellsim.log` (a run that stopped
//! before writing its config has the latter).

use std::path::{Path, PathBuf};

use engine::run::CONFIG_FILE;

use crate::run_log::LOG_FILE;

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

fn is_run(dir: &Path) -> bool {
    dir.join(CONFIG_FILE).exists() || dir.join(LOG_FILE).exists()
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

#[cfg(test)]
mod tests {
    use super::*;

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
