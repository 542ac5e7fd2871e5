//! Issue 62 item 2: `timing/` splits each phase into the time its data-parallel sweeps took and
//! the rest. The sweeps run inside their phase, so a phase's parallel part never exceeds it; a
//! MASB run's policy phase (its agents stepped in parallel sweeps every round) has one, and
//! first-fit, whose placement is one thread's walk over the queue, has none in its policy phase.

mod common;

use std::path::Path;

use arrow_array::Float64Array;
use common::*;
use engine::RunConfig;
use engine::output::PARALLEL_COLUMNS;

/// Column `name` of `timing/`.
fn column(run: &Path, name: &str) -> Vec<f64> {
    let batch = read_parquet(&run.join("timing"));
    let values = batch.column_by_name(name).unwrap();
    let values = values.as_any().downcast_ref::<Float64Array>().unwrap();
    values.values().to_vec()
}

#[test]
fn parallel_time_lies_within_its_phase() {
    let root = tempfile::tempdir().unwrap();
    let trace = generated_cell(root.path(), 120, 1.0, 4);
    for (policy, policy_sweeps) in [("masb", true), ("first-fit", false)] {
        let text = format!("hours = 1.0\nthreads = 2\n[policy]\nkind = \"{policy}\"\n");
        let config = RunConfig::from_toml(&text, Path::new("test.toml")).unwrap();
        let out = root.path().join(policy);
        run_policy(&config, &trace, &out);
        let phases = ["apply_ms", "policy_ms", "metrics_ms", "output_ms"];
        for (phase, parallel) in phases.iter().zip(PARALLEL_COLUMNS) {
            let (whole, part) = (column(&out, phase), column(&out, parallel));
            assert_eq!(whole.len(), 60, "{policy}: a row a tick");
            for (tick, (w, p)) in whole.iter().zip(&part).enumerate() {
                assert!(
                    (0.0..=*w).contains(p),
                    "{policy} tick {tick}: {parallel} {p} of {phase} {w}"
                );
            }
        }
        let policy_parallel: f64 = column(&out, "policy_parallel_ms").iter().sum();
        assert_eq!(policy_parallel > 0.0, policy_sweeps, "{policy}");
        // The first tick classifies every node in a parallel sweep (later ticks only the
        // nodes that changed, on one thread).
        assert!(column(&out, "metrics_parallel_ms")[0] > 0.0, "{policy}");
    }
}
