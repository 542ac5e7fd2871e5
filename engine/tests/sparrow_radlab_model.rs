//! Radlab mode (issue 59) against an independent model: a plain discrete-event simulator of
//! the Sparrow authors' protocol written here, one event at a time in (time, creation) order as
//! their `simulation_cancellation.py` runs it (probe -> worker queue, FIFO; a free slot sends
//! getTask; the scheduler answers with the job's next unlaunched task or a no-op; the slot is
//! held from the request until the task ends or the no-op returns). Fed the probe targets
//! cellsim drew (read from its delivery record), the model must give every task the same start
//! time to the microsecond, at loads from light to overloaded and with 1 to 3 probes per task.
//! The cell is driven tick by tick as the engine's replay does: submissions at their own
//! microsecond, ends applied at the start of their tick and reported with their own time.

use std::collections::{BTreeMap, VecDeque};

use engine::cell::Cell;
use engine::ids::{TaskIdx, Tick};
use engine::policy::{Policy, PolicyCounters};
use engine::queue_outputs::QueueOutputs;
use engine::replay::{EndedTask, TickEvents};
use engine::sim_time::SimDuration;
use engine::sparrow::{Msg, Peer, Sparrow, SparrowConfig};
use engine::units::to_units;
use ingest::codes::TRACE_START_US;
use ingest::rng::Rng;

const TICK_US: i64 = 10_000;
const DELAY_US: i64 = 500;
const WORKERS: u32 = 10;
/// Slots per worker: nodes of 1.0 CPU, tasks of 0.25.
const SLOTS: u32 = 4;

/// A job of one or more tasks: submitted at `submit_us` (after the trace's start), each task
/// running `run_us`.
#[derive(Debug, Clone, Copy)]
struct Job {
    submit_us: i64,
    tasks: u32,
    run_us: i64,
}

/// `jobs` jobs arriving as a Poisson process at `load` of the cell's slots, run times of
/// 0.5-1.5 s, 1 to `max_tasks` tasks each, all at odd microseconds (no two events coincide).
fn workload(seed: u64, jobs: usize, load: f64, max_tasks: u32) -> Vec<Job> {
    let mut rng = Rng::new(seed, 0);
    let mean_tasks = f64::from(1 + max_tasks) / 2.0;
    let gap_us = 1e6 * mean_tasks / (load * f64::from(WORKERS * SLOTS));
    let mut at = 0.0;
    (0..jobs)
        .map(|_| {
            at += rng.exp(gap_us);
            Job {
                submit_us: at as i64 | 1,
                tasks: 1 + rng.below(u64::from(max_tasks)) as u32,
                run_us: (500_000 + rng.below(1_000_000) as i64) | 1,
            }
        })
        .collect()
}

/// Each (job, task index)'s start time, microseconds.
type Starts = BTreeMap<(u64, u32), i64>;

/// Cellsim's radlab Sparrow over `jobs`: each (job, task index)'s start time, and each job's
/// probe targets (worker numbers) in the order they were delivered.
fn cellsim(jobs: &[Job], probes: f64) -> (Starts, Vec<Vec<u32>>) {
    let mut cell = Cell::default();
    for n in 0..WORKERS {
        cell.add_machine(100 + u64::from(n), to_units(1.0), to_units(1.0));
    }
    let config = SparrowConfig {
        probe_ratio: probes,
        net_delay: SimDuration::from_us(DELAY_US),
        ..SparrowConfig::radlab()
    };
    let mut sparrow = Sparrow::new(config, QueueOutputs::default());
    sparrow.record_deliveries();
    let (mut agents, mut counters) = (Vec::<Peer>::new(), PolicyCounters::default());
    let mut starts = BTreeMap::new();
    let mut targets = vec![Vec::new(); jobs.len()];
    // Running tasks: (end, placement order, task slot); ends at one time in placement order,
    // as the replay's deferred queue applies them.
    let mut running: Vec<(i64, usize, TaskIdx)> = Vec::new();
    let mut started = Vec::new();
    let (mut next, mut tick) = (0, 0u32);
    while starts.len() < jobs.iter().map(|j| j.tasks as usize).sum::<usize>() {
        let from_us = TRACE_START_US + i64::from(tick) * TICK_US;
        let end_us = from_us + TICK_US;
        let mut events = TickEvents::default();
        running.sort_unstable();
        while let Some(&(end, _, t)) = running.first().filter(|r| r.0 < end_us) {
            events.ended.push(EndedTask::of(&cell, t, end));
            cell.end(t);
            running.remove(0);
        }
        while next < jobs.len() && TRACE_START_US + jobs[next].submit_us < end_us {
            for index in 0..jobs[next].tasks {
                let submit = TRACE_START_US + jobs[next].submit_us;
                let t = cell.tasks.alloc(next as u64, index, 0, submit);
                cell.set_request(t, to_units(0.25), to_units(0.1));
                events.submitted.push(t);
            }
            next += 1;
        }
        sparrow.begin_tick(
            &mut cell,
            (Tick(tick), end_us),
            &events,
            &mut agents,
            &mut Vec::new(),
            &mut counters,
        );
        cell.take_started(&mut started);
        for &t in &started {
            let (job, index) = (
                cell.tasks.job_id()[t.index()],
                cell.tasks.task_index()[t.index()],
            );
            let start = cell.tasks.start_us()[t.index()];
            starts.insert((job, index), start - TRACE_START_US);
            running.push((start + jobs[job as usize].run_us, starts.len(), t));
        }
        for d in sparrow.take_deliveries() {
            if let Msg::Probe { task, .. } = d.msg {
                let job = cell.tasks.job_id()[task.index()] as usize;
                targets[job].push(d.to - 1);
            }
        }
        cell.check().unwrap();
        tick += 1;
        assert!(tick < 1_000_000, "cellsim never started every task");
    }
    (starts, targets)
}

/// What happens in the model.
#[derive(Debug, Clone, Copy)]
enum Event {
    Probe { worker: u32, job: usize },
    GetTask { worker: u32, job: usize },
    Launch { job: usize, index: u32 },
    Noop { worker: u32 },
    End { worker: u32 },
}

/// The independent model's state.
struct Model<'a> {
    jobs: &'a [Job],
    /// (time, creation order, event) not yet run.
    events: Vec<(i64, u64, Event)>,
    created: u64,
    free: Vec<u32>,
    queue: Vec<VecDeque<usize>>,
    launched: Vec<u32>,
    worker_of: BTreeMap<(usize, u32), u32>,
    starts: BTreeMap<(u64, u32), i64>,
}

impl Model<'_> {
    fn push(&mut self, at: i64, e: Event) {
        self.events.push((at, self.created, e));
        self.created += 1;
    }

    /// Worker `w` asks for the job of each probe it has a slot for, in queue order.
    fn try_queue(&mut self, w: u32, now: i64) {
        while self.free[w as usize] > 0 {
            let Some(job) = self.queue[w as usize].pop_front() else {
                break;
            };
            self.free[w as usize] -= 1;
            self.push(now + DELAY_US, Event::GetTask { worker: w, job });
        }
    }

    fn run(&mut self, now: i64, event: Event) {
        match event {
            Event::Probe { worker, job } => {
                self.queue[worker as usize].push_back(job);
                self.try_queue(worker, now);
            }
            Event::GetTask { worker, job } => {
                if self.launched[job] < self.jobs[job].tasks {
                    let index = self.launched[job];
                    self.launched[job] += 1;
                    self.worker_of.insert((job, index), worker);
                    self.push(now + DELAY_US, Event::Launch { job, index });
                } else {
                    self.push(now + DELAY_US, Event::Noop { worker });
                }
            }
            Event::Launch { job, index } => {
                self.starts.insert((job as u64, index), now);
                let worker = self.worker_of[&(job, index)];
                self.push(now + self.jobs[job].run_us, Event::End { worker });
            }
            Event::Noop { worker } | Event::End { worker } => {
                self.free[worker as usize] += 1;
                self.try_queue(worker, now);
            }
        }
    }
}

/// The independent model (module doc): every task's start time, given each job's probe targets.
fn model(jobs: &[Job], targets: &[Vec<u32>]) -> BTreeMap<(u64, u32), i64> {
    let mut m = Model {
        jobs,
        events: Vec::new(),
        created: 0,
        free: vec![SLOTS; WORKERS as usize],
        queue: vec![VecDeque::new(); WORKERS as usize],
        launched: vec![0; jobs.len()],
        worker_of: BTreeMap::new(),
        starts: BTreeMap::new(),
    };
    for (job, j) in jobs.iter().enumerate() {
        for &worker in &targets[job] {
            m.push(j.submit_us + DELAY_US, Event::Probe { worker, job });
        }
    }
    while let Some(k) = (0..m.events.len()).min_by_key(|&k| (m.events[k].0, m.events[k].1)) {
        let (now, _, event) = m.events.swap_remove(k);
        m.run(now, event);
    }
    m.starts
}

/// Every task starts when the model says, for 1-3 probes per task at 50 %, 90 % and 120 % of
/// the slots (queues grow without bound at the last), jobs of 1-3 tasks; the floor of an
/// unqueued task is 3 delays.
#[test]
fn radlab_mode_starts_every_task_when_the_independent_model_does() {
    for (seed, load, probes, max_tasks) in [
        (1, 0.5, 1.0, 1),
        (2, 0.9, 1.0, 1),
        (3, 0.9, 2.0, 1),
        (4, 1.2, 2.0, 3),
        (5, 0.9, 3.0, 2),
        (6, 0.5, 1.5, 3),
    ] {
        let jobs = workload(seed, 400, load, max_tasks);
        let (ours, targets) = cellsim(&jobs, probes);
        for (job, t) in targets.iter().enumerate() {
            let want = (probes * f64::from(jobs[job].tasks)).ceil() as usize;
            assert_eq!(t.len(), want.min(WORKERS as usize), "job {job}'s probes");
            let mut distinct = t.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), t.len(), "job {job} probes a worker twice");
        }
        let theirs = model(&jobs, &targets);
        assert_eq!(ours.len(), theirs.len(), "seed {seed}");
        let mut differ: Vec<_> = ours
            .iter()
            .filter(|(k, v)| theirs.get(k) != Some(v))
            .map(|(k, v)| (*k, *v, theirs.get(k).copied()))
            .collect();
        differ.sort_by_key(|d| d.1.min(d.2.unwrap_or(i64::MAX)));
        differ.truncate(5);
        assert!(
            differ.is_empty(),
            "seed {seed}: (task, ours, model): {differ:?}"
        );
        let floor = (ours.iter())
            .map(|(&(job, _), &start)| start - jobs[job as usize].submit_us)
            .min();
        assert_eq!(floor, Some(3 * DELAY_US), "seed {seed}");
        let waited = ours
            .iter()
            .filter(|&(&(job, _), &start)| start - jobs[job as usize].submit_us > 3 * DELAY_US)
            .count();
        if load >= 0.9 {
            assert!(waited > 40, "seed {seed}: only {waited} tasks queued");
        }
    }
}
