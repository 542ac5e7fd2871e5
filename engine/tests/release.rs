//! `release` (`engine/src/release.rs`): when a policy that places the workload itself may first
//! start a task. A hand-made trace, worked by hand: one machine of 0.5 / 0.5, ticks of 60 s
//! (tick k covers [600 + 60k, 660 + 60k) s of trace time), first-fit by requests; every task
//! requests 0.1 / 0.1, so any of them fits at any time.
//!
//! - job 1: submitted before the window, scheduled by the trace at 790 s (tick 3);
//! - job 2: submitted before the window, never scheduled by the trace (Borg left it waiting);
//! - job 3: submitted and scheduled before the window (running at its start).
//!
//! By `submit` first-fit starts all three in tick 0; by `trace-schedule` job 3 in tick 0, job 1
//! in tick 3, and job 2 never, and the watchdog reports no stall although job 2 fits all along
//! (the policy may not start it), and the run says it left one task waiting.

mod common;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use common::*;
use engine::release::Release;
use engine::{PolicyConfig, RunConfig};

const MACHINES: &str = "0,1,0,p,0.5,0.5\n";

// time,missing,job,index,machine,event,user,class,priority,cpu,mem,disk,different-machines
const TASKS: &str = "\
0,,1,0,,0,u,0,0,0.1,0.1,0,0
0,,2,0,,0,u,0,0,0.1,0.1,0,0
0,,3,0,,0,u,0,0,0.1,0.1,0,0
0,,3,0,1,1,u,0,0,0.1,0.1,0,0
790000000,,1,0,1,1,u,0,0,0.1,0.1,0,0
";

/// Per tick, (tasks running, tasks waiting) of a first-fit run under `release` over 130 ticks
/// (past the watchdog's stall span of 100 ticks), and the run's summary; resumed from its
/// snapshot at tick 2 (before job 1's SCHEDULE) to the same bytes.
fn run(release: Release) -> (Vec<(u64, u64)>, engine::RunSummary) {
    let root = tempfile::tempdir().unwrap();
    let (trace, ingested) = (root.path().join("t"), root.path().join("i"));
    write_table(&trace, "machine_events", MACHINES);
    write_table(&trace, "task_events", TASKS);
    ingest_dir(&trace, &ingested);
    let mut config = RunConfig {
        policy: PolicyConfig::default_of("first-fit").unwrap(),
        hours: Some(130.0 / 60.0),
        past_trace_end: true,
        release,
        check_invariants: true,
        ..RunConfig::default()
    };
    config.snapshot.every_sim_minutes = 2;
    config.snapshot.keep = 100;
    let out = root.path().join("run");
    let summary = run_policy(&config, &ingested, &out);
    let before = deterministic_outputs(&out);
    resume_from(&config, &ingested, &out, 2);
    assert!(
        deterministic_outputs(&out) == before,
        "{release:?}: resumed"
    );
    let ticks = read_parquet(&out.join("ticks"));
    let column = |name: &str| {
        ticks
            .column(ticks.schema().index_of(name).unwrap())
            .as_primitive::<UInt64Type>()
            .values()
            .to_vec()
    };
    let (running, waiting) = (column("tasks_running"), column("tasks_pending"));
    (running.into_iter().zip(waiting).collect(), summary)
}

#[test]
fn a_held_task_starts_when_the_trace_schedules_it_and_never_if_it_does_not() {
    let (ticks, summary) = run(Release::Submit);
    assert_eq!(ticks.len(), 130);
    assert!(ticks.iter().all(|&t| t == (3, 0)), "{:?}", &ticks[..5]);
    assert_eq!(summary.work_left.tasks_waiting, 0);

    let (ticks, summary) = run(Release::TraceSchedule);
    assert_eq!(ticks.len(), 130);
    assert_eq!(&ticks[..4], &[(1, 2), (1, 2), (1, 2), (2, 1)]);
    assert!(ticks[3..].iter().all(|&t| t == (2, 1)));
    assert_eq!(summary.work_left.tasks_waiting, 1);
    assert!(summary.stalls.is_empty(), "{:?}", summary.stalls);
    assert_eq!(summary.config.release, Release::TraceSchedule);
}

/// Borg's replay starts every task at its SCHEDULE whatever `release` says: the same bytes.
#[test]
fn borg_replay_ignores_release() {
    let root = tempfile::tempdir().unwrap();
    let (trace, ingested) = (root.path().join("t"), root.path().join("i"));
    write_table(&trace, "machine_events", MACHINES);
    write_table(&trace, "task_events", TASKS);
    ingest_dir(&trace, &ingested);
    let mut outputs = Vec::new();
    for release in [Release::Submit, Release::TraceSchedule] {
        let config = RunConfig {
            hours: Some(0.2),
            release,
            ..RunConfig::default()
        };
        let out = root.path().join(format!("run-{release:?}"));
        run_borg(&config, &ingested, &out);
        // The data; the files' metadata names each run's config, which differs.
        outputs.push(outputs_without_metadata(&out));
    }
    assert!(outputs[0] == outputs[1]);
}
