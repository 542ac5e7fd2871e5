//! `cellsim experiment` under SLURM (issue 56 item 4): SIGTERM, SIGUSR1 or SIGINT stop it with
//! exit code 75, keeping the points measured; the same command again into the same directory
//! measures only the rest and writes the results an uninterrupted experiment writes; another
//! command into it is refused.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;

fn experiment_args(out: &Path, seeds: &str) -> Vec<String> {
    let out = out.display().to_string();
    [
        "experiment",
        "nbs-jobs",
        "--seeds",
        seeds,
        "--threads",
        "1",
        "--out",
        &out,
    ]
    .map(String::from)
    .to_vec()
}

fn kept(out: &Path) -> usize {
    std::fs::read_dir(out.join("points")).map_or(0, |d| d.count())
}

#[test]
fn a_signalled_experiment_exits_75_and_the_same_command_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    let args = experiment_args(&whole, "2");
    let out = cellsim(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!whole.join("points").exists() && !whole.join("work").exists());
    let expected = std::fs::read_to_string(whole.join("results.md")).unwrap();

    for (k, signal_name) in ["TERM", "USR1", "INT"].iter().enumerate() {
        let stopped = dir.path().join(format!("stopped-{k}"));
        let args = experiment_args(&stopped, "2");
        let strs: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = spawn(&strs);
        assert!(wait_until(Duration::from_secs(120), || kept(&stopped) >= 2));
        signal(child.id(), signal_name);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(75), "{signal_name}");
        let at_stop = kept(&stopped);
        assert!(at_stop >= 2 && !stopped.join("results.md").exists());
        assert!(
            !stopped.join("work").exists(),
            "{signal_name}: no partial runs left"
        );

        let other = experiment_args(&stopped, "3");
        let refused = cellsim(&other.iter().map(String::as_str).collect::<Vec<_>>());
        let stderr = text(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("holds another experiment"), "{stderr}");

        let again = cellsim(&strs);
        let stderr = text(&again.stderr);
        assert!(again.status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("{at_stop} points already measured")),
            "{stderr}"
        );
        let results = std::fs::read_to_string(stopped.join("results.md")).unwrap();
        assert_eq!(results, expected, "{signal_name}");
        assert!(!stopped.join("points").exists());

        let finished = cellsim(&strs);
        assert_eq!(finished.status.code(), Some(1));
        assert!(text(&finished.stderr).contains("holds a finished experiment"));
    }
}
