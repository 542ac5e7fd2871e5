//! First-fit by requests (`fit = "requests"`, the default; issue 57 item 5) against an
//! independent tick-level first-fit on small random cells, task by task: every task's start tick
//! and machine.
//!
//! The independent model is the textbook rule, written here from scratch: at each one-minute
//! tick, the runs due to end free their requests; the tasks submitted in the tick join the back
//! of the queue; then every queued task, in queue order, goes to the first machine (in the order
//! the machines were added) whose requested CPU and memory plus the task's stay within its
//! capacity, and runs its recorded number of ticks. The traces make that the whole story: every
//! event lies mid-tick, a task's SCHEDULE comes in its SUBMIT's tick (so cellsim never starts a
//! run before the trace did), and amounts are multiples of 1/32 (exact in cellsim's units).

mod common;

use std::fmt::Write as _;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt32Type, UInt64Type};
use common::*;
use engine::fit_by::FitBy;
use engine::sim_time::SimDuration;
use engine::{PolicyConfig, RunConfig};
use ingest::rng::Rng;

const TICK_US: i64 = 60_000_000;
/// The trace's clock starts 600 s before its first window (GCD's offset).
const START_US: i64 = 600_000_000;

struct Task {
    submit_tick: i64,
    ticks: i64,
    cpu: u32,
    mem: u32,
    priority: u8,
}

/// A random cell: machines' capacities and tasks in 32nds of the largest machine.
fn random_cell(seed: u64) -> (Vec<(u32, u32)>, Vec<Task>) {
    let mut r = Rng::new(seed, 57);
    let mut machines: Vec<(u32, u32)> = (0..1 + r.below(5))
        .map(|_| {
            let size = [8, 16, 32][r.below(3) as usize];
            (size, [8, 16, 32][r.below(3) as usize].min(size * 2))
        })
        .collect();
    machines.push((32, 32)); // the largest machine, last: every task fits somewhere
    let mut tasks: Vec<Task> = (0..20 + r.below(40))
        .map(|_| Task {
            submit_tick: r.below(25) as i64,
            ticks: 1 + r.below(8) as i64,
            cpu: 1 + r.below(12) as u32,
            mem: 1 + r.below(12) as u32,
            priority: [0, 2, 9, 11][r.below(4) as usize],
        })
        .collect();
    tasks.sort_by_key(|t| t.submit_tick);
    (machines, tasks)
}

/// The trace as GCD CSV: machines added at 0; task `k` is job `100 + k`, index 0.
fn write_trace(dir: &std::path::Path, machines: &[(u32, u32)], tasks: &[Task]) {
    let amount = |v: u32| format!("{}", f64::from(v) / 32.0);
    let mut rows = String::new();
    for (m, (cpu, mem)) in machines.iter().enumerate() {
        writeln!(rows, "0,{},0,p,{},{}", m + 1, amount(*cpu), amount(*mem)).unwrap();
    }
    write_table(dir, "machine_events", &rows);
    let at = |tick: i64| START_US + tick * TICK_US + TICK_US / 2;
    let mut events: Vec<(i64, usize, String)> = Vec::new();
    for (k, t) in tasks.iter().enumerate() {
        let row = |time: i64, event: u8| {
            format!(
                "{time},,{},0,{},{event},u,0,{},{},{},0,0",
                100 + k,
                if event == 0 {
                    String::new()
                } else {
                    "1".into()
                },
                t.priority,
                amount(t.cpu),
                amount(t.mem)
            )
        };
        events.push((at(t.submit_tick), 2 * k, row(at(t.submit_tick), 0)));
        events.push((at(t.submit_tick), 2 * k + 1, row(at(t.submit_tick) + 1, 1)));
        let end = at(t.submit_tick + t.ticks);
        events.push((end, 2 * tasks.len() + k, row(end, 4)));
    }
    events.sort_by_key(|(time, order, _)| (*time, *order));
    let rows: String = events.into_iter().map(|(_, _, r)| r + "\n").collect();
    write_table(dir, "task_events", &rows);
}

/// The independent first-fit: each task's (start tick, machine index).
fn first_fit(machines: &[(u32, u32)], tasks: &[Task], ticks: i64) -> Vec<Option<(i64, usize)>> {
    let mut used = vec![(0u32, 0u32); machines.len()];
    let mut placed: Vec<Option<(i64, usize)>> = vec![None; tasks.len()];
    let mut queue: Vec<usize> = Vec::new();
    for tick in 0..ticks {
        for (k, t) in tasks.iter().enumerate() {
            if let Some((start, m)) = placed[k]
                && start + t.ticks == tick
            {
                used[m].0 -= t.cpu;
                used[m].1 -= t.mem;
            }
        }
        queue.extend((0..tasks.len()).filter(|&k| tasks[k].submit_tick == tick));
        queue.retain(|&k| {
            let t = &tasks[k];
            let room =
                |m: usize| used[m].0 + t.cpu <= machines[m].0 && used[m].1 + t.mem <= machines[m].1;
            match (0..machines.len()).find(|&m| room(m)) {
                Some(m) => {
                    used[m].0 += t.cpu;
                    used[m].1 += t.mem;
                    placed[k] = Some((tick, m));
                    false
                }
                None => true,
            }
        });
    }
    placed
}

/// cellsim's first-fit under `fit`: each task's (start tick, machine index) from `tasks/`.
fn cellsim_first_fit(
    trace: &std::path::Path,
    out: &std::path::Path,
    ticks: i64,
    fit: FitBy,
    count: usize,
) -> Vec<Option<(i64, usize)>> {
    let config = RunConfig {
        policy: PolicyConfig::default_of("first-fit").unwrap(),
        tick: SimDuration::from_us(TICK_US),
        hours: Some(ticks as f64 / 60.0),
        past_trace_end: true,
        check_invariants: true,
        threads: 2,
        fit,
        ..RunConfig::default()
    };
    run_policy(&config, trace, out);
    let mut got = vec![None; count];
    for part in parts(&out.join("tasks")) {
        let batch = read_parquet(&part);
        let col = |name: &str| batch.column_by_name(name).unwrap().clone();
        let (job, start, machine) = (col("job_id"), col("start_us"), col("machine_id"));
        let (job, start, machine) = (
            job.as_primitive::<UInt64Type>(),
            start.as_primitive::<Int64Type>(),
            machine.as_primitive::<UInt64Type>(),
        );
        let index = col("task_index");
        let index = index.as_primitive::<UInt32Type>();
        for row in 0..batch.num_rows() {
            assert_eq!(index.value(row), 0);
            let k = job.value(row) as usize - 100;
            // A tick's placements carry its end's time stamp.
            let tick = (start.value(row) - START_US - 1) / TICK_US;
            got[k] = Some((tick, machine.value(row) as usize - 1));
        }
    }
    got
}

#[test]
fn first_fit_by_requests_matches_an_independent_first_fit_task_by_task() {
    let ticks = 120;
    let (mut waited, mut differs_by_usage) = (0, 0);
    for seed in 0..12 {
        let (machines, tasks) = random_cell(seed);
        let dir = tempfile::tempdir().unwrap();
        write_trace(&dir.path().join("trace"), &machines, &tasks);
        let parquet = dir.path().join("parquet");
        ingest_dir(&dir.path().join("trace"), &parquet);
        let expected = first_fit(&machines, &tasks, ticks);
        assert!(
            expected.iter().all(Option::is_some),
            "seed {seed}: all start"
        );
        let got = cellsim_first_fit(
            &parquet,
            &dir.path().join("req"),
            ticks,
            FitBy::Requests,
            tasks.len(),
        );
        for (k, (e, g)) in expected.iter().zip(&got).enumerate() {
            assert_eq!(
                g, e,
                "seed {seed}, task {k} (submitted tick {}, {} ticks, cpu {}, mem {}): cellsim's (start tick, machine) against the model's",
                tasks[k].submit_tick, tasks[k].ticks, tasks[k].cpu, tasks[k].mem
            );
        }
        waited += expected
            .iter()
            .zip(&tasks)
            .filter(|(e, t)| e.unwrap().0 > t.submit_tick)
            .count();
        // By usage (the usage model's shares of the requests) the same cell places otherwise.
        let by_usage = cellsim_first_fit(
            &parquet,
            &dir.path().join("use"),
            ticks,
            FitBy::Usage,
            tasks.len(),
        );
        differs_by_usage += usize::from(by_usage != got);
    }
    assert!(
        waited > 50,
        "tasks must queue for the rule to matter: {waited}"
    );
    assert!(
        differs_by_usage > 6,
        "the usage rule places differently: {differs_by_usage} of 12"
    );
}
