//! An 8x smoke run: the shared 1,200-machine cell multiplied by 8 (9,600 machines, ~100k
//! tasks) under MASB for half an hour of simulated time. It completes, its peak resident memory
//! as the OS reports it (VmHWM, in summary.json) stays under a bound, and a run on two threads
//! stopped by SIGTERM and resumed writes the same bytes as one uninterrupted run on one thread.

mod common;

use std::time::Duration;

use common::*;

/// Peak RSS bound for this cell, MB (a 12.5k-machine MASB day peaks near 420 MB).
const RSS_BOUND_MB: f64 = 1_500.0;

fn args(out: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut a = run_args("masb", out);
    a.extend(["--multiply", "8", "--hours", "0.5"].map(String::from));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn multiply_8_completes_in_bounded_memory_and_resumes_identically() {
    let dir = tempfile::tempdir().unwrap();
    let straight = dir.path().join("straight");
    let a = args(
        &straight,
        &["--threads", "1", "--snapshot-every-wall-minutes", "0"],
    );
    let out = cellsim(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(straight.join("summary.json")).unwrap()).unwrap();
    let nodes = summary["averages"]["nodes_online"].as_f64().unwrap();
    assert!(
        (9_500.0..9_700.0).contains(&nodes),
        "8 x 1,200 machines: {nodes}"
    );
    let rss = summary["peak_rss_mb"]
        .as_f64()
        .expect("the OS reports VmHWM");
    assert!(rss < RSS_BOUND_MB, "peak RSS {rss} MB");

    let stopped = dir.path().join("stopped");
    let a = args(
        &stopped,
        &["--threads", "2", "--snapshot-every-sim-minutes", "10"],
    );
    let child = spawn(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(wait_until(Duration::from_secs(300), || !snapshots(
        &stopped
    )
    .is_empty()));
    signal(child.id(), "TERM");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(75), "{}", text(&out.stderr));
    let out = cellsim(&["resume", &stopped.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_outputs(&stopped, &straight);
}
