//! Errors that say what happened (issue 56 item 3): each case below once gave a message about
//! something else, or none.

mod common;

use std::path::Path;

use common::*;

fn resume_of(run: &Path) -> std::process::Output {
    cellsim(&["resume", &run.display().to_string()])
}

/// A finished run of first-fit over half an hour, in `dir/name`.
fn finished(dir: &Path, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let out = dir.join(name);
    let mut args = run_args("first-fit", &out);
    args.extend(["--hours", "0.5"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    let done = cellsim(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(done.status.success(), "{}", text(&done.stderr));
    out
}

/// A `--trace` run stopped before it wrote its config (only its log's start line): resume says
/// so and gives the command, not "while its synthetic cell was being made".
#[test]
fn a_trace_run_stopped_before_its_config_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("early");
    std::fs::create_dir_all(&run).unwrap();
    let command = format!(
        "cellsim run --trace {} --policy masb --out {}",
        trace().display(),
        run.display()
    );
    std::fs::write(
        run.join("cellsim.log"),
        format!("2026-11-27T10:00:00Z started: {command} (build 0.1.0, pid 1, host vm)\n"),
    )
    .unwrap();
    let out = resume_of(&run);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("while its trace was being checked") && stderr.contains(&command),
        "{stderr}"
    );
    assert!(!stderr.contains("synthetic"), "{stderr}");
}

/// A run whose `run.toml` was deleted: resume names the missing config (it once said the
/// directory was no run at all).
#[test]
fn a_run_without_its_config_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished(dir.path(), "r", &["--snapshot-every-sim-minutes", "10"]);
    std::fs::remove_file(run.join("summary.json")).unwrap();
    std::fs::remove_file(run.join("run.toml")).unwrap();
    let out = resume_of(&run);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("holds a run's outputs (snapshots) but not its run.toml"),
        "{stderr}"
    );
}

/// A finished run whose `ticks/` was deleted is not "complete" in `status`.
#[test]
fn status_names_outputs_lost_after_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished(dir.path(), "r", &[]);
    let status = |run: &Path| text(&cellsim(&["status", &run.display().to_string()]).stdout);
    assert!(status(&run).contains("complete  "), "{}", status(&run));
    std::fs::remove_dir_all(run.join("ticks")).unwrap();
    let shown = status(&run);
    assert!(
        shown.contains("complete, but ticks/ lost: outputs gone since it finished"),
        "{shown}"
    );
}

/// A directory named like a snapshot is no snapshot: a resume goes on from the real one (it
/// once failed with "No such device"); a snapshot temporary left by a kill is removed when the
/// run resumes.
#[test]
fn a_directory_named_like_a_snapshot_and_stale_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished(dir.path(), "r", &["--snapshot-every-sim-minutes", "10"]);
    std::fs::remove_file(run.join("summary.json")).unwrap();
    let snaps = run.join("snapshots");
    std::fs::create_dir(snaps.join("tick-99999999.snap")).unwrap();
    std::fs::write(snaps.join("tick-99999998.snap.tmp"), b"CELLSNAP half").unwrap();
    let out = resume_of(&run);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("resuming from"), "{stderr}");
    assert!(!snaps.join("tick-99999998.snap.tmp").exists());
    assert!(run.join("summary.json").exists());
}

/// A Python scheduler's run from the command line fails at once, saying where it runs, and
/// makes nothing (it once generated the synthetic cell first).
#[test]
fn a_python_policy_from_the_command_line_says_where_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("py");
    let out = cellsim(&[
        "run",
        "--policy",
        "python",
        "--out",
        &run.display().to_string(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("policy: kind = \"python\" (class \"\") runs only from the Python package"),
        "{stderr}"
    );
    assert!(!run.exists(), "nothing made");
    assert!(!stderr.contains("synthetic"), "{stderr}");
}
