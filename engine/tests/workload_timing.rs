//! SPEC 5.5: a policy other than borg-replay replays the workload, each run lasting its recorded
//! run time counted from when the policy starts it. A stand-in policy places tasks by hand at
//! chosen ticks; the tick at which each run ends, and when its usage rows apply, are worked out
//! by hand below (ticks of 60 s; tick k covers [600 + 60k, 660 + 60k) s of trace time).

mod common;

use common::*;
use engine::cell::{Cell, TaskState};
use engine::ids::{NodeIdx, TaskIdx};
use engine::replay::Replay;
use engine::units::to_units;

const MACHINES: &str = "0,1,0,p,0.5,0.5\n";

// time,missing,job,index,machine,event,user,class,priority,cpu,mem,disk,different-machines
// Job 1 (A): scheduled in tick 0, started by the policy in tick 2 (120 s late), FINISH at 850 s
//   (tick 4 in the trace) -> due 970 s -> ends in tick 6; its usage row starting at 790 s
//   (tick 3) is due at 910 s -> applies in tick 5.
// Job 2 (B): scheduled at 610 s (tick 0, so measured from 660 s), FINISH at 750 s while the policy
//   still holds it pending: it runs 90 s from when the policy starts it (tick 4, 900 s) -> due
//   990 s -> ends in tick 6.
// Job 3 (C): scheduled and finished within tick 0: never seen running, ends at once.
// Job 4 (D): started by the policy in its SCHEDULE's tick: FINISH at 700 s ends it in tick 1.
const TASKS: &str = "\
0,,1,0,,0,u,0,0,0.1,0.1,0,0
0,,1,0,1,1,u,0,0,0.1,0.1,0,0
0,,2,0,,0,u,0,0,0.1,0.1,0,0
0,,3,0,,0,u,0,0,0.1,0.1,0,0
0,,4,0,,0,u,0,0,0.1,0.1,0,0
0,,4,0,1,1,u,0,0,0.1,0.1,0,0
610000000,,2,0,1,1,u,0,0,0.1,0.1,0,0
620000000,,3,0,1,1,u,0,0,0.1,0.1,0,0
640000000,,3,0,1,4,u,0,0,,,,
700000000,,4,0,1,4,u,0,0,,,,
750000000,,2,0,1,4,u,0,0,,,,
850000000,,1,0,1,4,u,0,0,,,,
";

// start,end,job,index,machine,cpu,mem,...
const USAGE: &str = "\
600000000,700000000,1,0,1,0.01,0.01,0,0,0,0,0,0,0,0,1,0,1,0,0
720000000,790000000,1,0,1,0.02,0.02,0,0,0,0,0,0,0,0,1,0,1,0,0
790000000,1000000000,1,0,1,0.03,0.03,0,0,0,0,0,0,0,0,1,0,1,0,0
";

fn slot(cell: &Cell, job: u64) -> Option<TaskIdx> {
    (0..cell.tasks.len())
        .find(|&i| cell.tasks.job_id()[i] == job && cell.tasks.state()[i] != TaskState::Free)
        .map(|i| TaskIdx(i as u32))
}

fn tick_end_us(k: i64) -> i64 {
    600_000_000 + (k + 1) * 60_000_000
}

/// Replays ticks 0..=6; `place` says which job the stand-in policy starts at which tick. Returns,
/// per tick, the running jobs (sorted) and job 1's CPU usage in 0.01 units (if it exists).
fn replay(workload_mode: bool, place: &[(i64, u64)]) -> Vec<(Vec<u64>, Option<u32>)> {
    let on_first: Vec<(i64, u64, NodeIdx)> =
        place.iter().map(|&(k, job)| (k, job, NodeIdx(0))).collect();
    replay_trace((MACHINES, TASKS, USAGE), workload_mode, 6, &on_first)
}

/// Replays ticks 0..=`last` of the trace `(machine_events, task_events, task_usage)`; the
/// stand-in policy starts job `j` on node `n` at tick `k` for each `(k, j, n)` of `place`.
fn replay_trace(
    (machines, tasks, usage): (&str, &str, &str),
    workload_mode: bool,
    last: i64,
    place: &[(i64, u64, NodeIdx)],
) -> Vec<(Vec<u64>, Option<u32>)> {
    let root = tempfile::tempdir().unwrap();
    let (trace, ingested) = (root.path().join("t"), root.path().join("i"));
    write_table(&trace, "machine_events", machines);
    write_table(&trace, "task_events", tasks);
    write_table(&trace, "task_usage", usage);
    ingest_dir(&trace, &ingested);
    let mut replay = Replay::open(&ingested).unwrap();
    replay.set_workload_mode(workload_mode);
    let mut cell = Cell::default();
    let mut seen = Vec::new();
    for k in 0..=last {
        let events = replay.advance(&mut cell, tick_end_us(k)).unwrap();
        if !workload_mode {
            for p in &events.placements {
                if cell.tasks.state()[p.task.index()] == TaskState::Pending {
                    cell.place(p.task, p.node, tick_end_us(k));
                }
            }
        }
        for &(at, job, node) in place {
            if at == k {
                let t = slot(&cell, job).expect("pending task to place");
                cell.place(t, node, tick_end_us(k));
            }
        }
        cell.check().unwrap();
        let mut running: Vec<u64> = (0..cell.tasks.len())
            .filter(|&i| cell.tasks.state()[i] == TaskState::Running)
            .map(|i| cell.tasks.job_id()[i])
            .collect();
        running.sort();
        let usage = slot(&cell, 1).map(|t| cell.tasks.usage()[t.index()].cpu() / to_units(0.01));
        seen.push((running, usage));
    }
    seen
}

#[test]
fn runs_are_shifted_to_when_the_policy_starts_them() {
    let seen = replay(true, &[(0, 4), (2, 1), (4, 2)]);
    let running: Vec<Vec<u64>> = seen.iter().map(|s| s.0.clone()).collect();
    assert_eq!(
        running,
        [
            vec![4],    // tick 0: C ended within the tick; D started
            vec![],     // tick 1: D's FINISH applies on time (no delay)
            vec![1],    // tick 2: A started, 120 s late
            vec![1],    // tick 3
            vec![1, 2], // tick 4: B started; A's FINISH (850 s) held back to 970 s
            vec![1, 2], // tick 5: B's end due at 990 s
            vec![],     // tick 6: both end
        ]
    );
    let usage: Vec<Option<u32>> = seen.iter().map(|s| s.1).collect();
    assert_eq!(
        usage,
        [
            Some(1), // the 600 s row applies while A is pending
            Some(1),
            Some(2), // the 720 s row, still pending: the usage A starts with
            Some(2), // the 790 s row arrived, due at 910 s
            Some(2),
            Some(3),
            None,
        ]
    );
}

#[test]
fn borg_replay_mode_keeps_the_recorded_times() {
    let seen = replay(false, &[]);
    let running: Vec<Vec<u64>> = seen.iter().map(|s| s.0.clone()).collect();
    assert_eq!(
        running,
        [
            vec![1, 2, 4], // C started and ended within tick 0
            vec![1, 2],    // D's FINISH at 700 s
            vec![1],       // B's FINISH at 750 s
            vec![1],
            vec![], // A's FINISH at 850 s
            vec![],
            vec![],
        ]
    );
    let usage: Vec<Option<u32>> = seen.iter().map(|s| s.1).collect();
    assert_eq!(
        usage,
        [Some(1), Some(1), Some(2), Some(3), None, None, None]
    );
}

// Machine 1 (node 0) is removed at 730 s (tick 2), machine 2 (node 1) stays. Job 1 is scheduled
// at 0 (the trace's first tick: its SCHEDULE counts from 660 s), FINISHes at 1,000 s, and has a
// usage row from 930 s (tick 5).
const MACHINES_REMOVED: &str = "0,1,0,p,0.5,0.5\n0,2,0,p,0.5,0.5\n730000000,1,1,,,\n";
const TASKS_REMOVED: &str = "\
0,,1,0,,0,u,0,0,0.1,0.1,0,0
0,,1,0,1,1,u,0,0,0.1,0.1,0,0
1000000000,,1,0,1,4,u,0,0,,,,
";
const USAGE_REMOVED: &str = "930000000,1200000000,1,0,1,0.05,0.05,0,0,0,0,0,0,0,0,1,0,1,0,0\n";

/// A displaced run restarts but its usage rows continue where they stopped
/// (`replay/events.rs`), worked out by hand: started on time at tick 0 (660 s, no delay),
/// displaced by the removal in tick 2 having reached trace time 780 s (120 s of work lost),
/// started again at tick 4 (900 s): its usage rows are 120 s late, the time it waited, so the
/// 930 s row applies at 1,050 s (tick 7); its FINISH comes its whole run later, 120 + 120 s
/// late, at 1,240 s (tick 10). Counted from its first start, the usage row would come at
/// 1,170 s (tick 9).
#[test]
fn a_displaced_run_restarts_and_its_usage_continues() {
    let place = [(0, 1, NodeIdx(0)), (4, 1, NodeIdx(1))];
    let tables = (MACHINES_REMOVED, TASKS_REMOVED, USAGE_REMOVED);
    let seen = replay_trace(tables, true, 10, &place);
    let running: Vec<bool> = seen.iter().map(|s| s.0 == [1]).collect();
    let expected = [
        true, true, false, false, true, true, true, true, true, true, false,
    ];
    assert_eq!(running, expected);
    let usage: Vec<Option<u32>> = seen.iter().map(|s| s.1).collect();
    assert_ne!(
        usage[6],
        Some(5),
        "the 930 s row is held back until 1,050 s"
    );
    assert_eq!(usage[7], Some(5));
    assert_eq!(usage[10], None, "ended");
}
