//! `cellsim experiment nbs-hard | nbs-priority | nbs-jobs` as a library.

use analysis::experiment::keep::Keep;
use analysis::experiment::nbs::{self, Experiment, JobRow};

fn mean_latency(rows: &[JobRow], policy: &str, keep: impl Fn(&JobRow) -> bool) -> f64 {
    let l: Vec<f64> = rows
        .iter()
        .filter(|r| r.policy == policy && keep(r))
        .map(|r| r.latency_s.unwrap())
        .collect();
    l.iter().sum::<f64>() / l.len() as f64
}

/// Seed 004's Fig. 3 (`nbs-hard`) on 2 seeds: a row per job, policy and seed; NBS meets every
/// hard deadline; the same rows with 1 and 2 threads; the outputs written.
#[test]
fn nbs_hard_meets_every_hard_deadline_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let rows1 = nbs::run(
        Experiment::Hard,
        (2, 0),
        (1, &Keep::default()),
        &dir.path().join("w1"),
        &|_| {},
    )
    .unwrap();
    let rows2 = nbs::run(
        Experiment::Hard,
        (2, 0),
        (2, &Keep::default()),
        &dir.path().join("w2"),
        &|_| {},
    )
    .unwrap();
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
    nbs::write_outputs(Experiment::Hard, &rows1, 2, &out).unwrap();
    for f in [
        "results.parquet",
        "results.md",
        "latency.svg",
        "latency.png",
        "fig2.png",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
}

/// Seed 004's Fig. 4 (`nbs-priority`) on 2 seeds: the priorities are the chosen 300 ... 30,
/// every job is due at 65 s and finishes before it (50 s of work on 6 slots). Under the seed's
/// objective alone (the default) NBS does not serve the jobs of priority 100 or more first (the
/// paper's claim (b) does not follow from eqs. 3-6: with this slack every schedule finishing
/// by 65 s is an optimal bargain, `problem.rs`'s worked case): their mean latency is behind
/// each baseline's.
#[test]
fn nbs_alone_does_not_serve_high_priorities_first() {
    let dir = tempfile::tempdir().unwrap();
    let rows = nbs::run(
        Experiment::Priority,
        (2, 0),
        (2, &Keep::default()),
        &dir.path().join("w"),
        &|_| {},
    )
    .unwrap();
    assert_eq!(rows.len(), 4 * 10 * 2);
    let mut priorities: Vec<f64> = rows.iter().take(10).map(|r| r.priority).collect();
    priorities.sort_by(|a, b| b.total_cmp(a));
    assert_eq!(priorities[..4], [300.0, 200.0, 100.0, 90.0]);
    assert!(rows.iter().all(|r| r.latency_s.unwrap() < 0.0));
    let high = |r: &JobRow| r.priority >= 100.0;
    let nbs_high = mean_latency(&rows, "nbs", high);
    for policy in ["equal-share", "random-share", "edf"] {
        assert!(nbs_high > mean_latency(&rows, policy, high), "{policy}");
    }
}

/// Seed 004's Figs. 5-6 (`nbs-jobs`) on 1 seed: 2-10 jobs of each scenario under each policy,
/// NBS meets every hard deadline, and the outputs are written.
#[test]
fn nbs_jobs_runs_two_to_ten_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let rows = nbs::run(
        Experiment::Jobs,
        (1, 0),
        (2, &Keep::default()),
        &dir.path().join("w"),
        &|_| {},
    )
    .unwrap();
    let jobs: u32 = (2..=10).sum();
    assert_eq!(rows.len(), (4 * 2 * jobs) as usize);
    assert!(
        rows.iter()
            .filter(|r| r.policy == "nbs" && r.hard == Some(true))
            .all(|r| r.latency_s.unwrap() <= 0.0)
    );
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    nbs::write_outputs(Experiment::Jobs, &rows, 1, &out).unwrap();
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(md.contains("| nbs |") && md.contains("-62.8"), "{md}");
}

/// `nbs-hard --reduce-tasks 1` on 2 seeds: each job is 3 maps then a reduce, so none finishes
/// before 20 s (a map wave and a reduce); the rows and `results.parquet` carry the count,
/// `results.md` says the paper's jobs are map-only and names every hard deadline NBS missed.
#[test]
fn nbs_hard_with_reduce_tasks_reports_its_misses() {
    let dir = tempfile::tempdir().unwrap();
    let rows = nbs::run(
        Experiment::Hard,
        (2, 1),
        (2, &Keep::default()),
        &dir.path().join("w"),
        &|_| {},
    )
    .unwrap();
    assert_eq!(rows.len(), 4 * 10 * 2);
    assert!(
        rows.iter()
            .all(|r| r.reduce_tasks == 1 && r.makespan_s >= 20.0)
    );
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    nbs::write_outputs(Experiment::Hard, &rows, 2, &out).unwrap();
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(
        md.contains("`--reduce-tasks 1`") && md.contains("map tasks only"),
        "{md}"
    );
    for r in rows
        .iter()
        .filter(|r| r.policy == "nbs" && r.hard == Some(true))
    {
        if r.latency_s.unwrap() > 0.0 {
            assert!(
                md.contains(&format!("seed {} job {} (", r.seed, r.job_id)),
                "{md}"
            );
        }
    }
    let without = nbs::run(
        Experiment::Hard,
        (2, 0),
        (2, &Keep::default()),
        &dir.path().join("w0"),
        &|_| {},
    )
    .unwrap();
    let mean = |rows: &[JobRow]| rows.iter().map(|r| r.makespan_s).sum::<f64>() / rows.len() as f64;
    assert!(mean(&rows) > mean(&without) + 5.0);
}
