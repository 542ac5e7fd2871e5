//! The generator describes the real trace (issue 57 item 4): a generated cell of the real cell's
//! size over the real sample's span, and the real 8.5 h (`../shared/gcd-8h`), both through
//! `cellsim stats`, figure by figure within each figure's stated tolerance
//! (`analysis::stats::compare`): the t = 0 state by priority band, requests over time, the new
//! work's rate, bands and job sizes, run times, how runs end and the tasks waiting. The figures
//! were computed independently from the real files with pandas
//! (`bench-results/generator-2026-11-27/workload.py`); the real ones are pinned here against
//! that count.

use std::path::Path;
use std::sync::OnceLock;

use analysis::stats::{Tolerance, TraceStats, compare, trace_stats};
use ingest::synth::{GenConfig, GenProgress, generate};
use ingest::{IngestOptions, Progress, Table};

fn ingest_events(trace: &Path, out: &Path) {
    let options = IngestOptions {
        tables: vec![Table::MachineEvents, Table::JobEvents, Table::TaskEvents],
        ..IngestOptions::default()
    };
    ingest::ingest(trace, out, &options, &Progress::default()).unwrap();
}

/// The real 8.5 h's statistics, read once for the tests of this file.
fn real() -> &'static TraceStats {
    static REAL: OnceLock<TraceStats> = OnceLock::new();
    REAL.get_or_init(|| {
        let root = tempfile::tempdir().unwrap();
        let gcd_8h = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/gcd-8h");
        ingest_events(&gcd_8h, root.path());
        trace_stats(root.path()).unwrap()
    })
}

/// The statistics of a generated cell of the real cell's size over the real span (seed 1),
/// with the held jobs (the default) or without, made in `root`.
fn generated_12_5k(root: &Path, held_jobs: bool) -> TraceStats {
    let trace = root.join("generated-csv");
    let config = GenConfig {
        machines: 12_583,
        hours: 8.5,
        seed: 1,
        part_hours: 8.5,
        held_jobs,
    };
    generate(&trace, &config, &GenProgress::default()).unwrap();
    let generated_dir = root.join("generated");
    ingest_events(&trace, &generated_dir);
    trace_stats(&generated_dir).unwrap()
}

#[test]
fn a_generated_cell_has_the_real_cells_workload() {
    let real = real();
    // The real figures as pandas counts them (workload.py on the same files): 132,982 tasks
    // running at t = 0 on 12,477 machines, 54,611 of them gratis, 22,318 middle, 56,053
    // production; production requests 73.2 % of the CPU.
    let t0 = &real.task_samples[0];
    assert_eq!(t0.running, 132_982);
    assert_eq!(t0.band_running, [54_611, 22_318, 56_053]);
    assert_eq!(real.capacity[0].machines, 12_477);
    assert!((t0.band_cpu_requested[2] / real.capacity[0].cpu - 0.732).abs() < 0.001);

    let root = tempfile::tempdir().unwrap();
    let generated = generated_12_5k(root.path(), true);
    let rows = compare(&generated, real);
    let outside: Vec<String> = rows
        .iter()
        .filter(|r| !r.within())
        .map(|r| format!("{}: real {:?}, generated {:?}", r.name, r.real, r.generated))
        .collect();
    assert!(outside.is_empty(), "{outside:#?}");
    assert_eq!(rows.len(), 29);
    let text = analysis::stats::render_comparison(&rows, real.span_h, generated.span_h);
    assert!(text.contains("29 of 29 figures within tolerance"), "{text}");
}

/// The held jobs (set on the real cell's waiting jobs at t = 0) are what puts the real cell's
/// waiting work in a generated one: over the hours, compared, not set, 11.5k tasks against the
/// real 11.6k (`bench-results/held-jobs-2026-12-03.md`). Without them (`gen --no-held-jobs`, the
/// generator before) the cell's jobs wait minutes, the waiting tasks are ~150 and the one
/// figure outside; every other figure is within with and without them.
#[test]
fn without_the_held_jobs_the_waiting_work_is_the_one_figure_outside() {
    let real = real();
    let root = tempfile::tempdir().unwrap();
    let rows = compare(&generated_12_5k(root.path(), false), real);
    let outside: Vec<&str> = rows
        .iter()
        .filter(|r| !r.within())
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(outside, ["pending"]);
    let pending = rows.iter().find(|r| r.name == "pending").unwrap();
    assert!(
        pending.generated.unwrap() < 0.05 * pending.real.unwrap(),
        "{pending:?}"
    );
}

/// A comparison fails where it should: the same cell against itself is within every tolerance,
/// and a cell with half the machines' worth of new work per machine (the real trace against a
/// cell whose work is counted twice as fast) is not.
#[test]
fn the_tolerances_can_fail() {
    let real = real();
    let same = compare(real, real);
    assert!(same.iter().all(|r| r.within()), "{same:#?}");
    let mut faster = real.clone();
    faster.span_h /= 2.0;
    let rows = compare(&faster, real);
    let outside: Vec<&str> = rows
        .iter()
        .filter(|r| !r.within())
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(outside, ["new_tasks_per_hour", "runs_started_per_hour"]);
    let relative = rows
        .iter()
        .find(|r| r.name == "new_tasks_per_hour")
        .unwrap();
    assert_eq!(relative.tolerance, Tolerance::Relative(0.15));
}
