//! `cellsim experiment nbs-hard` as a library.

/// Seed 004's Fig. 3 (`nbs-hard`) on 2 seeds: a row per job, policy and seed; NBS meets every
/// hard deadline; the same rows with 1 and 2 threads; the outputs written.
#[test]
fn nbs_hard_meets_every_hard_deadline_and_is_deterministic() {
    use analysis::experiment::nbs;
    let dir = tempfile::tempdir().unwrap();
    let rows1 = nbs::run(2, 1, &dir.path().join("w1"), &|_| {}).unwrap();
    let rows2 = nbs::run(2, 2, &dir.path().join("w2"), &|_| {}).unwrap();
    assert_eq!(rows1, rows2);
    assert_eq!(rows1.len(), 4 * 10 * 2);
    let nbs_hard: Vec<f64> = rows1
        .iter()
        .filter(|r| r.policy == "nbs" && r.hard == Some(true))
        .map(|r| r.latency_s.unwrap())
        .collect();
    assert!(nbs_hard.len() >= 2 * 4);
    assert!(nbs_hard.iter().all(|&l| l <= 0.0), "{nbs_hard:?}");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    nbs::write_outputs(&rows1, 2, &out).unwrap();
    for f in [
        "results.parquet",
        "results.md",
        "latency.svg",
        "latency.png",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
}
