//! `cellsim experiment` as a library: a trimmed sparrow-load grid (2 loads, 200 tasks, 2 seeds)
//! gives one row per configuration, point and seed, the same rows with 1 and 2 threads, and
//! writes its three outputs; bad settings are refused with what is wrong.

use analysis::experiment::keep::Keep;
use analysis::experiment::{Options, experiment, run_experiment, write_outputs};
use arrow_array::RecordBatch;
use ingest::scenario::{Arrivals, Draws};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn trimmed(options: &Options) -> analysis::experiment::Experiment {
    let mut e = experiment("sparrow-load", options).unwrap();
    e.points.retain(|p| p.x == 50.0 || p.x == 90.0);
    for p in &mut e.points {
        p.scenario.tasks = Some(200);
        p.hours = 60.0 / 3600.0;
    }
    e
}

fn read(path: &std::path::Path) -> RecordBatch {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    reader.next().unwrap().unwrap()
}

#[test]
fn a_trimmed_sparrow_grid_is_deterministic_and_complete() {
    let mut rows = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    for threads in [1, 2] {
        let options = Options {
            seeds: 2,
            threads,
            ..Options::default()
        };
        let e = trimmed(&options);
        let out = dir.path().join(format!("t{threads}"));
        std::fs::create_dir_all(&out).unwrap();
        let s = run_experiment(&e, &options, (&out, &Keep::default()), &|_| {}).unwrap();
        write_outputs(&e, &s, &out).unwrap();
        assert!(!out.join("work").exists(), "runs are removed once measured");
        rows.push(s.rows.clone());
        let table = read(&out.join("results.parquet"));
        assert_eq!(table.num_rows(), 2 * 14 * 2);
        let md = std::fs::read_to_string(out.join("results.md")).unwrap();
        assert!(md.contains("### Mean queue time (ms)") && md.contains("## Against seed 002"));
        let svg = std::fs::read_to_string(out.join("queue-times.svg")).unwrap();
        let png = std::fs::read(out.join("queue-times.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        for c in &s.configurations {
            assert!(svg.contains(c.as_str()), "{c} in the legend");
            assert!(md.contains(&format!("| {c} |")), "{c} in the table");
        }
        // Every task ran; base and radlab Sparrow's floor is 3 network delays (1.5 ms);
        // omniscient waits least at every point.
        for r in &s.rows {
            assert_eq!((r.tasks, r.unstarted), (200, 0), "{r:?}");
            if r.configuration.starts_with("base") || r.configuration.starts_with("radlab") {
                assert!(r.mean_queue_ms >= 1.5, "{r:?}");
            }
            let o = s.mean("omniscient", r.x, |r| r.mean_queue_ms);
            assert!(o <= r.mean_queue_ms, "{r:?} vs omniscient {o}");
        }
    }
    assert_eq!(rows[0], rows[1]);
}

#[test]
fn bad_experiment_settings_are_refused() {
    let e = experiment("sparow-load", &Options::default()).unwrap_err();
    assert!(
        e.to_string().contains("sparrow-load, sparrow-random"),
        "{e}"
    );
    let zero = Options {
        seeds: 0,
        ..Options::default()
    };
    assert!(
        experiment("sparrow-load", &zero)
            .unwrap_err()
            .to_string()
            .contains("--seeds")
    );
    let delay = Options {
        net_delay_ms: f64::NAN,
        ..Options::default()
    };
    let e = experiment("sparrow-load", &delay).unwrap_err();
    assert!(e.to_string().contains("--net-delay-ms"), "{e}");
}

/// The Sparrow authors' simulator's committed output: (load %, probes, seed, mean ms, p99 ms)
/// of each run with `arrivals`, from `file` under `bench-results/` (`peer.jsonl`'s fields).
fn peer_runs(file: &str, arrivals: &str) -> Vec<(f64, u64, u64, f64, f64)> {
    let path = format!("{}/../bench-results/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    (text.lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["arrivals"] == arrivals)
        .map(|v| {
            let number = |k: &str| v[k].as_f64().unwrap();
            let count = |k: &str| v[k].as_u64().unwrap();
            let load_pct = (number("load") * 100.0).round();
            (
                load_pct,
                count("probes"),
                count("seed"),
                number("mean_ms"),
                number("p99_ms"),
            )
        })
        .collect()
}

/// With the Sparrow authors' random numbers (`--draws radlab`), the radlab rows are the
/// authors' simulator's own results, run for run: every mean and p99 queue time within 1 us of
/// what their code (`radlab/sparrow` `simulation_cancellation.py`, run as the bench files
/// `bench-results/sparrow-radlab-2026-11-28.md` and `sparrow-radlab-draws-2026-11-30.md` say)
/// printed for the same seed, load, probes and arrivals, at loads below and above 50 %: under
/// Poisson arrivals its own output (`peer.jsonl`); under even ones its run in integer
/// microseconds (`peer-even-us.jsonl`: in float ms its sums break exact ties by rounding), where
/// at 95 % with 2 probes seed 1 turns on two tasks ending at one instant, heard in the order
/// they were placed.
#[test]
fn radlab_draws_give_the_authors_simulators_results_run_for_run() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            Arrivals::Poisson,
            "sparrow-radlab-2026-11-28/peer.jsonl",
            [20.0, 50.0, 90.0],
        ),
        (
            Arrivals::Even,
            "sparrow-radlab-draws-2026-11-30/peer-even-us.jsonl",
            [20.0, 50.0, 95.0],
        ),
    ];
    for (arrivals, file, loads) in cases {
        let name = format!("{arrivals:?}").to_lowercase();
        let peer = peer_runs(file, &name);
        let options = Options {
            seeds: 2,
            arrivals,
            draws: Draws::Radlab,
            ..Options::default()
        };
        let mut e = experiment("sparrow-load", &options).unwrap();
        e.points.retain(|p| loads.contains(&p.x));
        e.configurations.retain(|c| c.name.starts_with("radlab"));
        let out = dir.path().join(&name);
        std::fs::create_dir_all(&out).unwrap();
        let s = run_experiment(&e, &options, (&out, &Keep::default()), &|_| {}).unwrap();
        assert_eq!(s.rows.len(), 3 * 4 * 2);
        for r in &s.rows {
            let key = (r.x, r.probes as u64, r.seed);
            let &(_, _, _, mean, p99) = (peer.iter())
                .find(|p| (p.0, p.1, p.2) == key)
                .unwrap_or_else(|| panic!("the peer ran {r:?}"));
            assert!((r.mean_queue_ms - mean).abs() < 1e-3, "{r:?} vs {mean}");
            assert!((r.p99_queue_ms - p99).abs() < 1e-3, "{r:?} vs {p99}");
        }
    }
}
