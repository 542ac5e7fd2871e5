//! A hand-written miniature trace (3 machines, 6 tasks, every machine and task event type)
//! replayed by borg-replay with one-minute ticks, checked tick by tick against state worked out
//! by hand from the rows below.

mod common;

use engine::sim_time::SimDuration;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt32Type, UInt64Type};
use common::*;
use engine::RunConfig;

const MACHINES: &str = "\
0,1,0,p,0.5,0.5
0,2,0,p,1,1
700000000,3,0,p,0.25,0.25
750000000,2,2,p,1,0.5
800000000,1,1,p,0.5,0.5
";

// time,missing,job,index,machine,event,user,class,priority,cpu,mem,disk,different-machines
const TASKS: &str = "\
0,,10,0,1,0,u,2,9,0.2,0.1,0,0
0,,10,0,1,1,u,2,9,0.2,0.1,0,0
0,,10,1,,0,u,0,2,0.1,0.3,0,0
0,,10,1,2,1,u,0,2,0.1,0.3,0,0
0,,11,0,,0,u,0,0,0.05,0.05,0,0
0,,12,0,,0,u,2,10,0.3,0.2,0,0
650000000,,11,0,2,1,u,0,0,0.05,0.05,0,0
710000000,,12,0,3,1,u,2,10,0.3,0.2,0,0
730000000,,10,1,2,8,u,0,2,0.15,0.3,0,0
740000000,,11,0,2,2,u,0,0,,,,
745000000,,11,0,,0,u,0,0,0.05,0.05,0,0
746000000,,11,0,,7,u,0,0,0.04,0.05,0,0
790000000,,11,0,1,1,u,0,0,0.04,0.05,0,0
810000000,,10,0,1,2,u,2,9,,,,
850000000,,10,1,2,4,u,0,2,,,,
860000000,,12,0,3,3,u,2,10,,,,
870000000,,11,0,,5,u,0,0,,,,
880000000,,13,0,,0,u,0,0,0.01,0.01,0,0
885000000,,13,0,4,1,u,0,0,0.01,0.01,0,0
950000000,,13,0,,6,u,0,0,,,,
";

const USAGE: &str = "600000000,900000000,10,1,2,0.05,0.2,0.3,0,0,0.2,0,0,0.1,0,1,0.01,1,0,0.05\n";
const ATTRIBUTES: &str = "0,1,a,5,0\n0,2,a,7,0\n700000000,2,a,,1\n";
const CONSTRAINTS: &str = "0,12,0,2,a,7\n";

/// Expected state at the end of each tick, worked out by hand:
/// (online, running, pending, idle, overloaded, pa, rus breaches, skipped placements,
///  cpu used / capacity, memory requested / capacity).
type Expected = (u32, u64, u64, u32, u32, u32, u32, u64, f64, f64);

const EXPECTED: [Expected; 6] = [
    // t0 (..660 s): m1 {10/0 .2/.1}, m2 {10/1 use .05/.2 req .1/.3, 11/0 .05/.05}; 12/0 pending.
    // cpu used (.2+.05+.05)/1.5 = .2; mem requested (.1+.3+.05)/1.5 = .3.
    (2, 3, 1, 0, 0, 2, 0, 0, 0.2, 0.3),
    // t1: m3 (.25/.25) added; 12/0 (production .3/.2) on m3: usage and RUS over capacity.
    // cpu used (.2+.1+.3)/1.75; mem requested (.1+.35+.2)/1.75.
    (3, 4, 0, 0, 1, 2, 1, 0, 0.6 / 1.75, 0.65 / 1.75),
    // t2: m2 memory 1 -> .5; 10/1 cpu request .15 (usage stays from task_usage); 11/0 evicted,
    // resubmitted and updated while pending (.04/.05). cpu used (.2+.05+.3)/1.75, mem req (.1+.3+.2)/1.25.
    (3, 3, 1, 0, 1, 2, 1, 0, 0.55 / 1.75, 0.6 / 1.25),
    // t3: m1 removed (10/0 displaced, then evicted); 11/0's SCHEDULE on m1 is skipped (m1 offline).
    // cpu used (.05+.3)/1.25, mem req (.3+.2)/.75.
    (2, 2, 1, 0, 1, 1, 1, 1, 0.35 / 1.25, 0.5 / 0.75),
    // t4: 10/1 FINISH, 12/0 FAIL, 11/0 KILL; 13/0 submitted and scheduled on unknown machine 4.
    (2, 0, 1, 2, 0, 0, 0, 1, 0.0, 0.0),
    // t5: 13/0 LOST.
    (2, 0, 0, 2, 0, 0, 0, 0, 0.0, 0.0),
];

/// The miniature trace (its task_usage when `with_usage`) written to `root/trace` and ingested
/// into `root/parquet`, which it returns.
fn miniature(root: &std::path::Path, with_usage: bool) -> std::path::PathBuf {
    let trace = root.join("trace");
    write_table(&trace, "machine_events", MACHINES);
    write_table(&trace, "task_events", TASKS);
    if with_usage {
        write_table(&trace, "task_usage", USAGE);
    }
    write_table(&trace, "machine_attributes", ATTRIBUTES);
    write_table(&trace, "task_constraints", CONSTRAINTS);
    let parquet = root.join("parquet");
    ingest_dir(&trace, &parquet);
    parquet
}

#[test]
fn miniature_trace_tick_by_tick() {
    let root = tempfile::tempdir().unwrap();
    let parquet = miniature(root.path(), true);
    let run = root.path().join("run");
    // Worked by hand with a task's request as its usage until its first sample (only 10/1 has
    // one): `[usage] source = "requests"`; the default's model share is tested on its own.
    let config = RunConfig {
        nodes_every: SimDuration::from_secs(2 * 60),
        usage: engine::usage_model::UsageModel {
            source: engine::usage_model::UsageSource::Requests,
            ..Default::default()
        },
        ..RunConfig::default()
    };
    let summary = run_borg(&config, &parquet, &run);

    assert_eq!(
        summary.ticks, 6,
        "last event at 950 s: ticks end at 660, 720, ..., 960 s"
    );
    let ticks = read_parquet(&run.join("ticks"));
    assert_eq!(ticks.num_rows(), 6);
    let col = |name: &str| ticks.column(ticks.schema().index_of(name).unwrap()).clone();
    let u32s = |name: &str| col(name).as_primitive::<UInt32Type>().values().to_vec();
    let u64s = |name: &str| col(name).as_primitive::<UInt64Type>().values().to_vec();
    let f64s = |name: &str| col(name).as_primitive::<Float64Type>().values().to_vec();
    let (online, running, pending) = (
        u32s("nodes_online"),
        u64s("tasks_running"),
        u64s("tasks_pending"),
    );
    let (idle, overloaded, pa) = (u32s("idle"), u32s("overloaded"), u32s("pa"));
    // The policy's counters are `counters/` columns, tick by tick beside `ticks/`.
    let counters = read_parquet(&run.join("counters"));
    let skipped = counters
        .column(counters.schema().index_of("placements_skipped").unwrap())
        .as_primitive::<UInt64Type>()
        .values()
        .to_vec();
    let rus = u32s("rus_breaches");
    let (cpu_used, mem_req) = (f64s("cpu_used_ratio"), f64s("mem_requested_ratio"));
    for (t, e) in EXPECTED.iter().enumerate() {
        let got = (
            online[t],
            running[t],
            pending[t],
            idle[t],
            overloaded[t],
            pa[t],
            rus[t],
            skipped[t],
        );
        assert_eq!(got, (e.0, e.1, e.2, e.3, e.4, e.5, e.6, e.7), "tick {t}");
        assert!(
            (cpu_used[t] - e.8).abs() < 1e-9,
            "tick {t}: cpu used {} vs {}",
            cpu_used[t],
            e.8
        );
        assert!(
            (mem_req[t] - e.9).abs() < 1e-9,
            "tick {t}: mem requested {} vs {}",
            mem_req[t],
            e.9
        );
    }
    assert!(
        u32s("sta")
            .iter()
            .chain(&u32s("ta"))
            .chain(&u32s("da"))
            .all(|n| *n == 0)
    );
    assert_eq!(
        col("time_us")
            .as_primitive::<arrow_array::types::Int64Type>()
            .value(0),
        660_000_000
    );

    // nodes/ every 2 ticks: ticks 0, 2, 4 with 2, 3, 2 online nodes.
    let nodes = read_parquet(&run.join("nodes"));
    assert_eq!(nodes.num_rows(), 7);
    assert_eq!(summary.replay.unknown_machines, 1);
    assert_eq!(summary.replay.unknown_machine_placements, 1);
    assert_eq!(summary.totals.counters["placements_skipped"], 2.0);
    assert!(summary.replay.usage_from_trace);
    assert_eq!(summary.averages.classes["overloaded"], 3.0 / 6.0);
    assert!(run.join("summary.json").exists() && !run.join("samples.jsonl.partial").exists());
}

/// Borg-replay, recording what each tick's events say per job and per machine.
#[derive(Default)]
struct Recorder {
    inner: engine::borg::BorgReplay,
    /// Per tick: (job, arrivals, departures) and (machine ID, online, CPU capacity units).
    log: std::sync::Arc<std::sync::Mutex<Vec<TickLog>>>,
}

type TickLog = (Vec<(u64, u32, u32)>, Vec<(u64, bool, u32)>);

impl engine::policy::Policy for Recorder {
    type Msg = ();
    type Agent = ();
    type Action = ();

    fn name(&self) -> &'static str {
        "recorder"
    }

    fn replays_placements(&self) -> bool {
        true
    }

    fn begin_tick(
        &mut self,
        cell: &mut engine::cell::Cell,
        at: (engine::ids::Tick, i64),
        events: &engine::replay::TickEvents,
        agents: &mut Vec<()>,
        inject: &mut Vec<engine::policy::Envelope<()>>,
        counters: &mut engine::policy::PolicyCounters,
    ) {
        let machines = events.machine_changes.iter();
        let machines = machines
            .map(|m| (cell.nodes.machine_id()[m.node.index()], m.online, m.cpu_cap))
            .collect();
        let entry = (events.by_job(cell), machines);
        self.log.lock().unwrap().push(entry);
        self.inner
            .begin_tick(cell, at, events, agents, inject, counters);
    }
}

/// Each tick's events per job (arrivals = tasks submitted, departures = tasks ended) and per
/// machine (added, resized, removed), worked out by hand from the rows above.
#[test]
fn tick_events_per_job_and_machine() {
    let root = tempfile::tempdir().unwrap();
    let trace = root.path().join("trace");
    write_table(&trace, "machine_events", MACHINES);
    write_table(&trace, "task_events", TASKS);
    let parquet = root.path().join("parquet");
    ingest_dir(&trace, &parquet);
    let recorder = Recorder::default();
    let log = recorder.log.clone();
    let run = root.path().join("run");
    run_with(&RunConfig::default(), &parquet, &run, recorder);
    let log = log.lock().unwrap();
    let unit = |v: f32| engine::units::to_units(v);
    let expected: [TickLog; 6] = [
        // Machines 1 and 2 added; jobs 10 (two tasks), 11 and 12 submitted.
        (
            vec![(10, 2, 0), (11, 1, 0), (12, 1, 0)],
            vec![(1, true, unit(0.5)), (2, true, unit(1.0))],
        ),
        // Machine 3 added.
        (vec![], vec![(3, true, unit(0.25))]),
        // Machine 2's memory halved; 11/0 evicted and submitted again.
        (vec![(11, 1, 1)], vec![(2, true, unit(1.0))]),
        // Machine 1 removed; 10/0 (displaced from it) evicted.
        (vec![(10, 0, 1)], vec![(1, false, unit(0.5))]),
        // 10/1 finishes, 12/0 fails, 11/0 is killed; 13/0 submitted.
        (vec![(10, 0, 1), (11, 0, 1), (12, 0, 1), (13, 1, 0)], vec![]),
        // 13/0 lost.
        (vec![(13, 0, 1)], vec![]),
    ];
    assert_eq!(log.len(), expected.len());
    for (t, (got, want)) in log.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "tick {t}");
    }
}

/// The same trace without task_usage: tasks use the usage model's share of their requests,
/// here its band shares (`UsageModel::band_shares`: CPU 0.485 for priorities 0-1, 0.335 for
/// 2-8, 0.37 for 9-11; memory 0.7), following request updates. Worked by hand from the rows above:
/// - t0: 10/0 (priority 9, .2/.1) on m1; 10/1 (2, .1/.3) and 11/0 (0, .05/.05) on m2; capacity
///   1.5 CPU and memory: CPU used (.2 x .37 + .1 x .335 + .05 x .485) / 1.5 = .13175 / 1.5,
///   memory (.1 + .3 + .05) x .7 / 1.5.
/// - t1: m3 (.25) and 12/0 (10, .3/.2) on it: CPU + .3 x .37 = .24275 over 1.75; memory + .2 x .7.
/// - t2: 10/1's request rises to .15 CPU (its usage to .15 x .335), 11/0 evicted: CPU .074 +
///   .05025 + .111 over 1.75; memory .07 + .21 + .14 over 1.25 (m2 down to .5).
#[test]
fn without_task_usage_tasks_use_the_models_share_of_their_requests() {
    let root = tempfile::tempdir().unwrap();
    let parquet = miniature(root.path(), false);
    let run = root.path().join("run");
    let summary = run_borg(&band_shares(), &parquet, &run);
    assert!(!summary.replay.usage_from_trace && summary.replay.usage_model);
    let expected = [
        (0.13175 / 1.5, 0.45 * 0.7 / 1.5),
        (0.24275 / 1.75, 0.65 * 0.7 / 1.75),
        (
            (0.074 + 0.05025 + 0.111) / 1.75,
            (0.1 + 0.3 + 0.2) * 0.7 / 1.25,
        ),
    ];
    assert_used(&run, &expected);
}

/// The same trace with its task_usage, under the band shares: a task without a sample yet
/// uses the model's share of its request; 10/1, sampled from 600 s, uses its measurement
/// (.05 CPU, .2 memory). Worked by hand:
/// - t0: 10/0 (priority 9, .2/.1): .074 / .07; 11/0 (0, .05/.05): .02425 / .035; 10/1: .05 / .2;
///   capacity 1.5.
/// - t1: + 12/0 (10, .3/.2) on m3: .111 / .14; capacity 1.75.
#[test]
fn with_task_usage_tasks_use_the_models_share_until_their_first_sample() {
    let root = tempfile::tempdir().unwrap();
    let parquet = miniature(root.path(), true);
    let run = root.path().join("run");
    let summary = run_borg(&band_shares(), &parquet, &run);
    assert!(summary.replay.usage_from_trace && summary.replay.usage_model);
    let expected = [
        ((0.074 + 0.02425 + 0.05) / 1.5, (0.07 + 0.035 + 0.2) / 1.5),
        (
            (0.074 + 0.02425 + 0.05 + 0.111) / 1.75,
            (0.07 + 0.035 + 0.2 + 0.14) / 1.75,
        ),
    ];
    assert_used(&run, &expected);
}

/// The default config but the usage model, the band shares (worked by hand above).
fn band_shares() -> RunConfig {
    RunConfig {
        usage: engine::usage_model::UsageModel::band_shares(),
        ..RunConfig::default()
    }
}

/// The run's CPU and memory used, as shares of capacity, tick by tick from the first, are
/// `expected` (within 1e-6).
fn assert_used(run: &std::path::Path, expected: &[(f64, f64)]) {
    let ticks = read_parquet(&run.join("ticks"));
    let f64s = |name: &str| {
        let c = ticks.column(ticks.schema().index_of(name).unwrap());
        c.as_primitive::<Float64Type>().values().to_vec()
    };
    let (cpu_used, mem_used) = (f64s("cpu_used_ratio"), f64s("mem_used_ratio"));
    for (t, &(cpu, mem)) in expected.iter().enumerate() {
        assert!(
            (cpu_used[t] - cpu).abs() < 1e-6,
            "tick {t}: CPU {} vs {cpu}",
            cpu_used[t]
        );
        assert!(
            (mem_used[t] - mem).abs() < 1e-6,
            "tick {t}: memory {} vs {mem}",
            mem_used[t]
        );
    }
}
