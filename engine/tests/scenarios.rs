//! The seeds' scenarios replay through the same path as a GCD cell (issue 32 item 6): written by
//! `ingest::scenario`, ingested (side tables copied), run by the queueing baselines at a 100 ms
//! tick, deterministic across threads and across a snapshot and resume.

mod common;

use std::path::Path;

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use common::{
    deterministic_outputs, ingest_dir, read_parquet, resume_from, run_policy,
    threads_and_resume_agree,
};
use engine::{PolicyConfig, RunConfig};
use ingest::scenario::side::{Deadline, SideTables};
use ingest::scenario::{ScenarioConfig, generate_scenario};

/// Sparrow's load scenario at `load_pct`, ingested into `root/pq-<load>`.
fn scenario(root: &Path, name: &str, load_pct: u32) -> std::path::PathBuf {
    let raw = root.join(format!("raw-{name}-{load_pct}"));
    let config = ScenarioConfig {
        name: name.into(),
        load_pct,
        ..ScenarioConfig::default()
    };
    generate_scenario(&raw, &config).unwrap();
    let pq = root.join(format!("pq-{name}-{load_pct}"));
    ingest_dir(&raw, &pq);
    pq
}

fn config(kind: &str, threads: usize) -> RunConfig {
    let mut config = RunConfig {
        policy: PolicyConfig::default_of(kind).unwrap(),
        tick: "100ms".parse().unwrap(),
        rounds_per_tick: 1,
        nodes_every: "1min".parse().unwrap(),
        part: "1min".parse().unwrap(),
        // The 1,000 tasks arrive over 125 s at 80 % and run 10 s each.
        hours: Some(150.0 / 3600.0),
        threads,
        check_invariants: true,
        ..RunConfig::default()
    };
    config.snapshot.every_sim_minutes = 1;
    config
}

/// At 50 % load the 200 two-CPU slots always have room: omniscient and first-fit start every
/// task in the tick it arrives (queueing time at most the 100 ms tick: a task starts at the end
/// of the tick its arrival falls in).
#[test]
fn at_half_load_no_task_waits_longer_than_a_tick() {
    let root = tempfile::tempdir().unwrap();
    let pq = scenario(root.path(), "sparrow-load", 50);
    for kind in ["omniscient", "first-fit"] {
        let run = root.path().join(format!("run-{kind}"));
        run_policy(&config(kind, 2), &pq, &run);
        let tasks = read_parquet(&run.join("tasks"));
        assert_eq!(tasks.num_rows(), 1_000, "{kind}");
        let col = |name: &str| {
            let i = tasks.schema().index_of(name).unwrap();
            tasks.column(i).as_primitive::<Int64Type>().clone()
        };
        let (queue, start, end) = (col("queue_us"), col("start_us"), col("end_us"));
        for r in 0..tasks.num_rows() {
            let (q, s, e) = (queue.value(r), start.value(r), end.value(r));
            assert!(
                (0..=100_000).contains(&q),
                "{kind} row {r}: queue {q} start {s} end {e}"
            );
            // The run starts at the end of its arrival tick, as the trace's own SCHEDULE does
            // in the replay, and ends at the recorded FINISH: 10 s less the wait.
            let run_us = end.value(r) - start.value(r);
            assert_eq!(run_us, 10_000_000 - queue.value(r), "{kind} row {r}");
        }
    }
}

/// The side tables come through the ingest; an overloaded scenario gives the same bytes with 1
/// and 2 threads and across a snapshot and resume, for omniscient and first-fit.
#[test]
fn scenarios_are_deterministic_across_threads_and_resume() {
    let root = tempfile::tempdir().unwrap();
    let pq = scenario(root.path(), "sparrow-random", 80);
    let side = SideTables::read(&pq).unwrap().unwrap();
    assert_eq!(side.task_key.len(), 500);
    assert!(side.deadline.iter().all(|d| *d == Deadline::None));
    for kind in ["omniscient", "first-fit"] {
        // Until every task has run (the 500 arrive over 269 s: longer than `config`'s hours).
        let mut until_done = RunConfig {
            hours: None,
            ..config(kind, 2)
        };
        until_done.snapshot.keep = 10; // the snapshot at tick 600 is kept

        threads_and_resume_agree(root.path(), &pq, (kind, &until_done), 600);
    }
}

/// A broken side table stops the ingest with its file and line, before any table is written.
#[test]
fn a_broken_side_table_is_refused_by_the_ingest() {
    let root = tempfile::tempdir().unwrap();
    let raw = root.path().join("raw");
    let config = ScenarioConfig {
        name: "nbs-hadoop".into(),
        ..ScenarioConfig::default()
    };
    generate_scenario(&raw, &config).unwrap();
    let tasks = raw.join("scenario/tasks.csv");
    let text = std::fs::read_to_string(&tasks).unwrap();
    std::fs::write(&tasks, text.replacen(",hard,", ",firm,", 1)).unwrap();
    let out = root.path().join("pq");
    let e = ingest::ingest(&raw, &out, &Default::default(), &Default::default()).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("tasks.csv:2: column 4 (deadline_kind)"), "{e}");
    assert!(!out.join("task_events").exists());
}

/// Seed 004's Hadoop cell under first-fit: 6 map slots, ten jobs of three 10 s map tasks
/// submitted at once, queued in job order: jobs 1 and 2 run in the first wave, 3 and 4 in the
/// second, ..., so job k finishes 10 s x ceil(k / 2) after submission. `jobs/` has one row per
/// job with that makespan, and its deadline and latency (end - deadline) from the side tables.
#[test]
fn jobs_rows_carry_makespan_deadline_and_latency() {
    let root = tempfile::tempdir().unwrap();
    let pq = scenario(root.path(), "nbs-hadoop", 80);
    let side = SideTables::read(&pq).unwrap().unwrap();
    let run = root.path().join("run");
    let mut config = config("first-fit", 2);
    config.hours = Some(90.0 / 3600.0);
    run_policy(&config, &pq, &run);
    let jobs = read_parquet(&run.join("jobs"));
    assert_eq!(jobs.num_rows(), 10);
    let col = |name: &str| {
        let i = jobs.schema().index_of(name).unwrap();
        jobs.column(i).as_primitive::<Int64Type>().clone()
    };
    let id = jobs.column(jobs.schema().index_of("job_id").unwrap());
    let id = id.as_primitive::<arrow_array::types::UInt64Type>();
    let (makespan, deadline, latency) = (col("makespan_us"), col("deadline_us"), col("latency_us"));
    let (submit, end) = (col("submit_us"), col("end_us"));
    for r in 0..10 {
        let k = id.value(r);
        assert_eq!(
            makespan.value(r),
            10_000_000 * k.div_ceil(2) as i64,
            "job {k}"
        );
        let expected = side.deadline[side.task(k, 0).unwrap()].at_us();
        assert_eq!(deadline.is_null(r), expected.is_none(), "job {k}");
        if let Some(d) = expected {
            assert_eq!(deadline.value(r), d);
            assert_eq!(latency.value(r), end.value(r) - d);
        }
        assert_eq!(end.value(r) - submit.value(r), makespan.value(r));
    }
}

/// Sparrow's run settings: 10 ms ticks of 20 rounds, one round per 0.5 ms network delay.
fn sparrow_config(policy: engine::sparrow::SparrowConfig, threads: usize) -> RunConfig {
    RunConfig {
        policy: PolicyConfig::Sparrow(policy),
        tick: "10ms".parse().unwrap(),
        rounds_per_tick: 20,
        ..config("first-fit", threads)
    }
}

/// `scenario` generated into `root/raw` and ingested into `root/pq` (returned).
fn scenario_cell(root: &Path, scenario: &ScenarioConfig) -> std::path::PathBuf {
    let raw = root.join("raw");
    generate_scenario(&raw, scenario).unwrap();
    let pq = root.join("pq");
    ingest_dir(&raw, &pq);
    pq
}

/// The (job ID, queue time, run time) of `run`'s tasks, microseconds, by job ID.
fn queue_times(run: &Path) -> Vec<(u64, i64, i64)> {
    let tasks = read_parquet(&run.join("tasks"));
    let column = |name: &str| tasks.column(tasks.schema().index_of(name).unwrap()).clone();
    let job = column("job_id");
    let job = job.as_primitive::<arrow_array::types::UInt64Type>();
    let [queue, start, end] = ["queue_us", "start_us", "end_us"].map(column);
    let [queue, start, end] = [&queue, &start, &end].map(|c| c.as_primitive::<Int64Type>());
    let mut out: Vec<(u64, i64, i64)> = (0..tasks.num_rows())
        .map(|r| (job.value(r), queue.value(r), end.value(r) - start.value(r)))
        .collect();
    out.sort_unstable();
    out
}

/// Worked by hand: 20 tasks of the load scenario at 1 % load arrive 5 s apart and run 10 s, so
/// at most two run at once and every probed worker has room. Base Sparrow then starts each
/// task exactly 3 network delays after its arrival (probe, confirmation request, assignment:
/// 1.5 ms at 0.5 ms; 3 ms at 1 ms; 0 with no delay), at ticks of 10 ms or 1 s alike (messages
/// are exact in time); so does radlab mode (probe, getTask, its answer); with self-assignment
/// the master runs it as it arrives (0). Every task runs exactly its 10 s.
#[test]
fn sparrow_queue_times_on_an_idle_cell_are_its_message_delays() {
    use engine::sim_time::SimDuration;
    use engine::sparrow::SparrowConfig;
    let root = tempfile::tempdir().unwrap();
    let pq = scenario_cell(
        root.path(),
        &ScenarioConfig {
            load_pct: 1,
            tasks: Some(20),
            ..ScenarioConfig::default()
        },
    );
    let delay = |us: i64| SimDuration::from_us(us);
    let cases = [
        ("base", SparrowConfig::default(), "10ms", 1_500),
        ("base-1s-ticks", SparrowConfig::default(), "1s", 1_500),
        (
            "base-1ms",
            SparrowConfig {
                net_delay: delay(1_000),
                ..Default::default()
            },
            "10ms",
            3_000,
        ),
        (
            "base-0ms",
            SparrowConfig {
                net_delay: delay(0),
                ..Default::default()
            },
            "10ms",
            0,
        ),
        ("radlab", SparrowConfig::radlab(), "100ms", 1_500),
        (
            "self-assignment",
            SparrowConfig {
                self_assignment: true,
                ..Default::default()
            },
            "10ms",
            0,
        ),
    ];
    for (name, policy, tick, expected_us) in cases {
        let run = root.path().join(name);
        let mut config = sparrow_config(policy, 2);
        config.tick = tick.parse().unwrap();
        config.hours = Some(120.0 / 3600.0);
        run_policy(&config, &pq, &run);
        let queue = queue_times(&run);
        assert_eq!(queue.len(), 20, "{name}");
        assert!(
            queue
                .iter()
                .all(|&(_, q, run)| q == expected_us && run == 10_000_000),
            "{name}: {queue:?}"
        );
    }
}

/// Sparrow's numbers do not depend on the tick (issue 59): 300 tasks of the load scenario at
/// 90 % give every task the same queue and run time at ticks of 10 ms, 100 ms and 1 s, for
/// base Sparrow with 1 probe, radlab mode and Random Walk (its gossip views exchanged by
/// messages).
#[test]
fn sparrow_gives_every_task_the_same_times_at_any_tick() {
    use engine::sparrow::SparrowConfig;
    let root = tempfile::tempdir().unwrap();
    let pq = scenario_cell(
        root.path(),
        &ScenarioConfig {
            load_pct: 90,
            tasks: Some(300),
            ..ScenarioConfig::default()
        },
    );
    let policies = [
        SparrowConfig {
            probe_ratio: 1.0,
            ..Default::default()
        },
        SparrowConfig::radlab(),
        SparrowConfig::random_walk(),
    ];
    for (k, policy) in policies.into_iter().enumerate() {
        let times: Vec<Vec<(u64, i64, i64)>> = ["10ms", "100ms", "1s"]
            .iter()
            .map(|tick| {
                let run = root.path().join(format!("run-{k}-{tick}"));
                let mut config = sparrow_config(policy.clone(), 1);
                config.tick = tick.parse().unwrap();
                config.hours = Some(200.0 / 3600.0);
                run_policy(&config, &pq, &run);
                queue_times(&run)
            })
            .collect();
        assert_eq!(times[0].len(), 300);
        let queued = times[0].iter().filter(|t| t.1 > 1_500).count();
        assert!(queued > 30, "{k}: only {queued} tasks queued");
        assert_eq!(times[0], times[1], "{k}: 10 ms and 100 ms ticks");
        assert_eq!(times[0], times[2], "{k}: 10 ms and 1 s ticks");
    }
}

/// Sparrow and its variants on an overloaded random scenario (8 heterogeneous nodes) give the
/// same bytes with 1 and 2 threads and across a snapshot and resume at 10 ms ticks, and every
/// task runs. With a 25 ms network delay and exchanges every 40 ms, every view exchange
/// outlives the tick it was sent in, so the snapshot holds exchanges in flight (their entries
/// wait beside the messages, `sparrow/exchanges.rs`).
#[test]
fn sparrow_is_deterministic_across_threads_and_resume_at_sub_second_ticks() {
    let root = tempfile::tempdir().unwrap();
    let pq = scenario_cell(
        root.path(),
        &ScenarioConfig {
            name: "sparrow-random".into(),
            nodes: Some(8),
            tasks: Some(200),
            ..ScenarioConfig::default()
        },
    );
    use engine::sparrow::SparrowConfig as S;
    let ms = |ms: i64| engine::sim_time::SimDuration::from_us(ms * 1_000);
    let slow_net = S {
        net_delay: ms(25),
        gossip_period: ms(40),
        ..S::gradient_search()
    };
    let variants = [
        ("base", S::default()),
        ("gradient", S::gradient_search()),
        ("gradient-25ms", slow_net),
    ];
    for (name, policy) in variants {
        let mut outputs = Vec::new();
        let config = |threads| {
            let mut c = sparrow_config(policy.clone(), threads);
            c.hours = Some(200.0 / 3600.0);
            c
        };
        for threads in [1, 2] {
            let run = root.path().join(format!("run-{name}-{threads}"));
            run_policy(&config(threads), &pq, &run);
            outputs.push(deterministic_outputs(&run));
        }
        assert!(outputs[0] == outputs[1], "{name}: 1 and 2 threads");
        let run = root.path().join(format!("run-{name}-2"));
        assert_eq!(queue_times(&run).len(), 200, "{name}");
        resume_from(&config(2), &pq, &run, 6_000);
        assert!(deterministic_outputs(&run) == outputs[0], "{name}: resumed");
    }
}

/// Under the Sparrow authors' draws (`draws = "radlab-poisson"`) a run resumed from a snapshot
/// taken while jobs still arrive gives the same bytes as the run straight through: the one
/// scheduler's draws are saved (as the jobs drawn) and drawn on from there. 400 tasks at 20 %
/// load arrive over ~100 s; the snapshot at 60 s falls among them; 1 probe, so tasks queue
/// and the targets decide their start times.
#[test]
fn sparrow_radlab_draws_resume_where_they_stopped() {
    let root = tempfile::tempdir().unwrap();
    let pq = scenario_cell(
        root.path(),
        &ScenarioConfig {
            load_pct: 20,
            tasks: Some(400),
            arrivals: ingest::scenario::Arrivals::Poisson,
            draws: ingest::scenario::Draws::Radlab,
            ..ScenarioConfig::default()
        },
    );
    use engine::sparrow::{ProbeDraws, SparrowConfig as S};
    let mut config = sparrow_config(
        S {
            probe_ratio: 1.0,
            draws: ProbeDraws::RadlabPoisson,
            ..S::radlab()
        },
        2,
    );
    config.hours = Some(150.0 / 3600.0);
    let run = root.path().join("run");
    run_policy(&config, &pq, &run);
    let straight = deterministic_outputs(&run);
    let times = queue_times(&run);
    assert_eq!(times.len(), 400);
    assert!(times.iter().any(|t| t.1 > 1_500), "some task queued");
    resume_from(&config, &pq, &run, 6_000);
    assert!(deterministic_outputs(&run) == straight, "resumed");
}

/// Seed 002's failure detector on a scenario's failure list: 10 of the 50 nodes are removed
/// 20 s into a 30 %-load run. Only the peers that subscribed a failed node (held its probes or
/// place-holders) hear of it, each once: fewer `dead` messages than the 10 x 40 of telling every
/// live peer; the tasks running there wait at least the 3 s timeout before they run again (their
/// queue time counts from their submission: at least the 3 s from the failure); every job still
/// completes.
#[test]
fn sparrow_runs_every_task_through_a_scenarios_node_failures() {
    let root = tempfile::tempdir().unwrap();
    let pq = scenario_cell(
        root.path(),
        &ScenarioConfig {
            load_pct: 30,
            tasks: Some(300),
            failures: (0..10).map(|m| (m, 20.0)).collect(),
            ..ScenarioConfig::default()
        },
    );
    let run = root.path().join("run");
    let mut config = sparrow_config(engine::sparrow::SparrowConfig::default(), 2);
    config.hours = Some(120.0 / 3600.0);
    let summary = run_policy(&config, &pq, &run);
    let dead = summary.totals.messages["dead"];
    assert!(dead > 0 && dead < 10 * 40, "{dead}");
    let jobs = read_parquet(&run.join("jobs"));
    assert_eq!(jobs.num_rows(), 300, "every job completes");
    let queue = queue_times(&run);
    let rerun = queue.iter().filter(|q| q.1 >= 3_000_000).count();
    assert!(
        rerun >= 1,
        "tasks displaced by the failures wait for the detector"
    );
}

/// Seed 004's Hadoop cell, seed 3's draw, with `reduce_tasks` per job, ingested into
/// `root/pq`.
fn hadoop_cell(root: &Path, reduce_tasks: u32) -> std::path::PathBuf {
    let raw = root.join("raw");
    let draw = ScenarioConfig {
        name: "nbs-hadoop".into(),
        seed: 3,
        reduce_tasks,
        ..ScenarioConfig::default()
    };
    generate_scenario(&raw, &draw).unwrap();
    let pq = root.join("pq");
    ingest_dir(&raw, &pq);
    pq
}

/// A controller's run on the Hadoop cell: 1 s ticks for `seconds`.
fn controller_config(kind: &str, threads: usize, seconds: f64) -> RunConfig {
    let mut c = config(kind, threads);
    c.tick = "1s".parse().unwrap();
    c.hours = Some(seconds / 3600.0);
    c
}

/// Seed 004's controllers on its Hadoop cell (1 s ticks, 3 simulated minutes): every job
/// completes under each; NBS meets every hard deadline (the scenario's are feasible: EDF meets
/// them too), which the Equal share does not; NBS and Random give the same bytes with 1 and 2
/// threads and across a snapshot and resume.
#[test]
fn deadline_aware_controllers_on_the_hadoop_cell() {
    let root = tempfile::tempdir().unwrap();
    // Seed 3's draw: 4 hard deadlines that EDF can meet and the Equal share misses.
    let pq = hadoop_cell(root.path(), 0);
    let controller = |kind: &str, threads| controller_config(kind, threads, 180.0);
    let hard_latencies = |run: &Path| -> Vec<i64> {
        let jobs = read_parquet(&run.join("jobs"));
        assert_eq!(jobs.num_rows(), 10, "{}", run.display());
        let hard = jobs.column(jobs.schema().index_of("deadline_hard").unwrap());
        let hard = hard.as_boolean();
        let latency = jobs.column(jobs.schema().index_of("latency_us").unwrap());
        let latency = latency.as_primitive::<Int64Type>();
        (0..jobs.num_rows())
            .filter(|&r| !hard.is_null(r) && hard.value(r))
            .map(|r| latency.value(r))
            .collect()
    };
    let mut worst = std::collections::BTreeMap::new();
    for kind in ["nbs", "edf", "equal-share", "random-share"] {
        let run = root.path().join(format!("run-{kind}"));
        run_policy(&controller(kind, 2), &pq, &run);
        let latencies = hard_latencies(&run);
        assert_eq!(latencies.len(), 4, "{kind}");
        worst.insert(kind, *latencies.iter().max().unwrap());
    }
    assert!(worst["nbs"] <= 0, "{worst:?}");
    assert!(worst["edf"] <= 0, "{worst:?}");
    assert!(worst["equal-share"] > 0, "{worst:?}");
    for kind in ["nbs", "random-share"] {
        threads_and_resume_agree(root.path(), &pq, (kind, &controller(kind, 2)), 60);
    }
}

/// Seed 004's Hadoop cell with one reduce task per job (`--reduce-tasks 1`, 10 s): under
/// first-fit and each controller, every reduce task starts no earlier than the end of its job's
/// last map task (read from `tasks/`) and runs its 10 s, so each job ends at least 20 s after
/// submission; the policies that would not hold reduce tasks back refuse the trace, naming its
/// `tasks.csv`;
/// NBS and Equal give the same bytes with 1 and 2 threads and across a snapshot and resume.
#[test]
fn reduce_tasks_start_after_their_jobs_maps() {
    let root = tempfile::tempdir().unwrap();
    let pq = hadoop_cell(root.path(), 1);
    let controller = |kind: &str, threads| controller_config(kind, threads, 240.0);
    for kind in ["first-fit", "nbs", "edf", "equal-share", "random-share"] {
        let run = root.path().join(format!("run-{kind}"));
        run_policy(&controller(kind, 2), &pq, &run);
        let tasks = read_parquet(&run.join("tasks"));
        assert_eq!(tasks.num_rows(), 40, "{kind}");
        let job = tasks
            .column(0)
            .as_primitive::<arrow_array::types::UInt64Type>();
        let index = tasks
            .column(1)
            .as_primitive::<arrow_array::types::UInt32Type>();
        let col = |name: &str| {
            let i = tasks.schema().index_of(name).unwrap();
            tasks.column(i).as_primitive::<Int64Type>().clone()
        };
        let (start, end) = (col("start_us"), col("end_us"));
        for j in 1..=10u64 {
            let rows: Vec<usize> = (0..40).filter(|&r| job.value(r) == j).collect();
            let last_map_end = (rows.iter().filter(|&&r| index.value(r) < 3))
                .map(|&r| end.value(r))
                .max()
                .unwrap();
            let reduce = *rows.iter().find(|&&r| index.value(r) == 3).unwrap();
            // `start_us` is the end of the tick that placed the task; its 10 s run counts
            // from the tick's start (1 s earlier), so that tick must begin after the maps end.
            let placed_us = start.value(reduce) - 1_000_000;
            assert!(
                placed_us >= last_map_end,
                "{kind} job {j}: reduce placed at {placed_us} before its maps end at {last_map_end}"
            );
            assert_eq!(end.value(reduce) - placed_us, 10_000_000, "{kind}");
        }
        let jobs = read_parquet(&run.join("jobs"));
        let makespan = jobs.column(jobs.schema().index_of("makespan_us").unwrap());
        let makespan = makespan.as_primitive::<Int64Type>();
        assert_eq!(jobs.num_rows(), 10, "{kind}");
        assert!((0..10).all(|r| makespan.value(r) >= 20_000_000), "{kind}");
    }
    for kind in ["masb", "sparrow", "omniscient", "borg-replay"] {
        let run = root.path().join(format!("refused-{kind}"));
        let e = engine::run_configured(
            &controller(kind, 1),
            &pq,
            &run,
            &engine::RunProgress::default(),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("scenario/tasks.csv") && e.contains("reduce tasks"),
            "{kind}: {e}"
        );
        assert!(!run.join("tasks").exists(), "{kind}");
    }
    for kind in ["nbs", "equal-share"] {
        threads_and_resume_agree(root.path(), &pq, (kind, &controller(kind, 2)), 60);
    }
}
