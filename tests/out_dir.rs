//! A run deletes nothing it did not write (issue 56 item 1): a new run into a directory that
//! holds a user's file or another run's parts is refused, naming what is there, and the
//! directory is left as it was; a start of the same run again (killed before its first
//! snapshot) goes on; another policy into a killed run's directory is refused; a finished run
//! "resumed" under another configuration is refused, naming the keys that differ.

mod common;

use std::path::Path;

use common::*;

fn run(policy: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = run_args(policy, out);
    args.extend(["--hours", "0.5", "--snapshot-every-wall-minutes", "0"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    cellsim(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Every file under `dir` with its bytes, sorted by path.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                files.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn a_directory_holding_what_the_run_did_not_write_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("used");
    for (name, bytes) in [
        ("nodes/important.parquet", &b"a user's file"[..]),
        ("ticks/part-00000000.parquet", b"another run's part"),
        ("migrations/part-00000007.parquet", b"garbage"),
    ] {
        std::fs::create_dir_all(out.join(name).parent().unwrap()).unwrap();
        std::fs::write(out.join(name), bytes).unwrap();
    }
    let before = tree(&out);
    let refused = run("masb", &out, &[]);
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("holds what this run did not write"),
        "{stderr}"
    );
    for name in ["migrations/", "nodes/", "ticks/"] {
        assert!(stderr.contains(name), "{name}: {stderr}");
    }
    // Nothing deleted or changed; only the log of the refusal (and the lock) added.
    let after: Vec<_> = tree(&out)
        .into_iter()
        .filter(|(name, _)| name != "cellsim.log" && name != ".cellsim.lock")
        .collect();
    assert_eq!(after, before);
}

#[test]
fn a_killed_run_starts_again_but_another_policy_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let first = run("masb", &out, &[]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let finished = tree(&out);
    assert!(finished.iter().any(|(n, _)| n.starts_with("migrations/")));
    // As a run killed before its first snapshot leaves it: parts, no summary, no snapshot.
    std::fs::remove_file(out.join("summary.json")).unwrap();
    assert!(!out.join("snapshots").exists(), "no snapshot was asked for");

    let other = run("first-fit", &out, &[]);
    let stderr = text(&other.stderr);
    assert_eq!(other.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("migrations/"), "{stderr}");
    assert!(stderr.contains("policy.kind masb -> first-fit"), "{stderr}");
    assert!(out.join("migrations").read_dir().unwrap().next().is_some());

    let again = run("masb", &out, &[]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    let deterministic = |files: Vec<(String, Vec<u8>)>| -> Vec<(String, Vec<u8>)> {
        let keep = |n: &str| {
            ["migrations/", "nodes/", "ticks/"]
                .iter()
                .any(|t| n.starts_with(t))
        };
        files.into_iter().filter(|(n, _)| keep(n)).collect()
    };
    assert_eq!(deterministic(tree(&out)), deterministic(finished));
}

#[test]
fn a_finished_run_resumed_under_another_config_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let first = run("first-fit", &out, &[]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let same = run("first-fit", &out, &["--resume"]);
    assert!(same.status.success(), "{}", text(&same.stderr));
    assert!(text(&same.stdout).contains("nothing to resume"));
    let other = run("first-fit", &out, &["--resume", "--seed", "9"]);
    let stderr = text(&other.stderr);
    assert_eq!(other.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("under another configuration"), "{stderr}");
    assert!(stderr.contains("seed 1 -> 9"), "{stderr}");
}
