//! Seed 004 on a GCD-like cell (issue 36 item 5): the `[deadlines]` model gives every job a
//! priority and a hard, soft or no deadline; NBS bargains per class with a coarser cadence; the
//! run is deterministic across threads and a snapshot and resume, and its `jobs/` table carries
//! both deadline types.

mod common;

use std::path::Path;

use arrow_array::{Array, BooleanArray, Float64Array, UInt32Array, UInt64Array};
use common::*;
use engine::RunConfig;

/// The run's config. It places by usage (`fit`), the rule it was written for: fitting by
/// requests (the default since issue 57) one of this cell's solves stops with Clarabel's
/// InsufficientProgress, relaxed or not, and the controller falls back to filling by priority
/// (counted in `nbs_failed_solves`; left to issue 60, seed 004's own terms).
fn config(policy: &str) -> RunConfig {
    let text = format!(
        "hours = 1.0\nfit = \"usage\"\nnodes_every = \"30min\"\n[snapshot]\nevery_sim_minutes = 20\n[policy]\n{policy}\n[deadlines]\nhard_pct = 30.0\nsoft_pct = 30.0\nslack = 2.0\n"
    );
    RunConfig::from_toml(&text, Path::new("test.toml")).unwrap()
}

#[test]
fn nbs_on_a_generated_cell_with_drawn_deadlines() {
    let root = tempfile::tempdir().unwrap();
    let parquet = generated_cell(root.path(), 150, 1.0, 9);
    let nbs = config(
        "kind = \"nbs\"\nslot_s = 60.0\nhorizon_slots = 10\nmin_resolve_s = 300.0\nclasses_above_jobs = 8",
    );
    let summaries = threads_and_resume_agree(root.path(), &parquet, ("nbs", &nbs), 20);
    let counters = &summaries[0].totals.counters;
    let (solves, failed) = (counters["nbs_solves"], counters["nbs_failed_solves"]);
    // At most one solve per 300 s of the hour's 60 one-minute ticks, and at least one.
    assert!((1.0..=13.0).contains(&solves), "{solves}");
    assert_eq!(failed, 0.0);
    let jobs = read_parquet(&root.path().join("run-nbs-1").join("jobs"));
    let hard = jobs
        .column_by_name("deadline_hard")
        .unwrap()
        .as_any()
        .downcast_ref::<BooleanArray>()
        .unwrap()
        .clone();
    let (mut with_hard, mut with_soft) = (0, 0);
    for r in 0..hard.len() {
        if !hard.is_null(r) {
            if hard.value(r) {
                with_hard += 1;
            } else {
                with_soft += 1;
            }
        }
    }
    assert!(with_hard > 0 && with_soft > 0, "{with_hard} {with_soft}");
    // Classes in use: fewer bargainers per solve than the jobs the hour ended.
    let per_solve = counters["nbs_bargainers"] / solves;
    assert!(
        per_solve >= 1.0 && per_solve < jobs.num_rows() as f64,
        "{per_solve} of {}",
        jobs.num_rows()
    );
    // The same deadlines for another policy (the model draws by job ID, not by policy).
    let edf = root.path().join("run-edf");
    run_policy(&config("kind = \"edf\""), &parquet, &edf);
    let edf_jobs = read_parquet(&edf.join("jobs"));
    assert!(edf_jobs.num_rows() > 0);
}

/// Seed 004's micro-clusters (issue 60 item 3) on the same cell: 4 clusters, new jobs sent by
/// price (quoted with the job, or published) and, price-blind, by a draw; deterministic across
/// threads and a snapshot and resume; every cluster allocates within its capacity, its price
/// never negative (0 while it has no jobs), and quotes asked only by price: one per cluster per
/// new job with the job, one per new job published.
#[test]
fn nbs_on_micro_clusters() {
    let root = tempfile::tempdir().unwrap();
    let parquet = generated_cell(root.path(), 150, 1.0, 9);
    let mut new_jobs = None;
    for (choice, quote) in [
        ("price", "with-job"),
        ("price", "published"),
        ("random", "with-job"),
    ] {
        let name = format!("clusters-{choice}-{quote}");
        let config = config(&format!(
            "kind = \"nbs\"\nslot_s = 60.0\nhorizon_slots = 10\nmin_resolve_s = 300.0\nclasses_above_jobs = 8\nsolver = \"structured\"\nclusters = 4\ncluster_choice = \"{choice}\"\ncluster_quote = \"{quote}\""
        ));
        threads_and_resume_agree(root.path(), &parquet, (&name, &config), 20);
        let table = read_parquet(&root.path().join(format!("run-{name}-1")).join("clusters"));
        // Every column as f64 (null: None), whatever its integer type.
        let f64s = |name: &str| -> Vec<Option<f64>> {
            let c = table.column_by_name(name).unwrap().as_any();
            let n = table.num_rows();
            if let Some(a) = c.downcast_ref::<UInt32Array>() {
                (0..n).map(|i| Some(f64::from(a.value(i)))).collect()
            } else if let Some(a) = c.downcast_ref::<UInt64Array>() {
                (0..n).map(|i| Some(a.value(i) as f64)).collect()
            } else {
                let a = c.downcast_ref::<Float64Array>().unwrap();
                (0..n)
                    .map(|i| (!a.is_null(i)).then(|| a.value(i)))
                    .collect()
            }
        };
        let (cluster, capacity, jobs) = (f64s("cluster"), f64s("capacity_cpu"), f64s("jobs"));
        let (share, price, quotes) = (f64s("share_cpu"), f64s("price"), f64s("quotes"));
        assert!(table.num_rows() >= 4, "{}", table.num_rows());
        let mut seen = [false; 4];
        for r in 0..table.num_rows() {
            seen[cluster[r].unwrap() as usize] = true;
            assert!(share[r].unwrap() <= capacity[r].unwrap(), "row {r}");
            assert!(price[r].is_none_or(|p| p >= 0.0), "row {r}: {:?}", price[r]);
            if jobs[r].unwrap() == 0.0 {
                assert_eq!(
                    price[r],
                    Some(0.0),
                    "row {r}: an empty cluster is not congested"
                );
            }
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
        let asked: f64 = quotes.iter().flatten().sum();
        match (choice, quote) {
            ("price", "with-job") => {
                assert!(asked >= 4.0 && asked % 4.0 == 0.0, "{asked}");
                new_jobs = Some(asked / 4.0);
            }
            // About the same jobs arrive whatever their clusters, one quote each (a job all of
            // whose tasks ended and that comes back is new again, so not exactly).
            ("price", _) => {
                let n = new_jobs.unwrap();
                assert!(asked > 0.0 && (asked - n).abs() <= 0.05 * n, "{asked} {n}");
            }
            _ => assert_eq!(asked, 0.0),
        }
    }
}

/// `[deadlines]` on a scenario, whose side tables already give deadlines, is refused.
#[test]
fn deadlines_on_a_scenario_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let raw = root.path().join("raw");
    let scenario = ingest::scenario::ScenarioConfig {
        name: "nbs-hadoop".into(),
        ..Default::default()
    };
    ingest::scenario::generate_scenario(&raw, &scenario).unwrap();
    let parquet = root.path().join("parquet");
    ingest_dir(&raw, &parquet);
    let e = engine::run_configured(
        &config("kind = \"edf\""),
        &parquet,
        &root.path().join("run"),
        &engine::RunProgress::default(),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("side tables already give them"), "{e}");
}
