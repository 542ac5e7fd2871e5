//! The task side of trace statistics: replays task_events in time order, tracking each task's
//! state and requests, and samples running/pending counts and requested resources at each sample
//! instant; measures run durations; counts tasks per priority and events per type.
//!
//! Memory: one entry per task seen (distinct (job, index) pairs), about 40 bytes each.

use std::collections::{HashMap, HashSet};

use ingest::codes::{PRODUCTION_PRIORITY, priority_band, task_event};
use ingest::{Dataset, Table};
use serde::Serialize;

use crate::error::Result;
use ingest::columns::{f32_at, i64s, u8s, u32s, u64s};

/// Runs longer than this are "long" (SPEC 3.1: 20 minutes).
pub const LONG_RUN_US: i64 = 20 * 60 * 1_000_000;

/// Task state at one sample instant.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct TaskSample {
    /// Tasks running.
    pub running: u64,
    /// Tasks submitted and not running.
    pub pending: u64,
    /// CPU requested by running tasks.
    pub cpu_requested: f64,
    /// Memory requested by running tasks.
    pub mem_requested: f64,
    /// Running production tasks.
    pub prod_running: u64,
    /// CPU requested by running production tasks.
    pub prod_cpu_requested: f64,
    /// Memory requested by running production tasks.
    pub prod_mem_requested: f64,
    /// CPU requested by running tasks, per priority 0..11.
    pub cpu_by_priority: [f64; 12],
    /// Running tasks per priority band (gratis 0-1, middle 2-8, production 9-11).
    pub band_running: [u64; 3],
    /// CPU requested by running tasks per band.
    pub band_cpu_requested: [f64; 3],
    /// Memory requested by running tasks per band.
    pub band_mem_requested: [f64; 3],
}

/// Run-time histogram bucket upper bounds (seconds) and labels.
pub const DURATION_BUCKETS: [(i64, &str); 6] = [
    (60, "< 1 min"),
    (300, "1-5 min"),
    (1_200, "5-20 min"),
    (3_600, "20-60 min"),
    (21_600, "1-6 h"),
    (i64::MAX, ">= 6 h"),
];

/// What the task tables say.
#[derive(Debug, Default)]
pub struct TaskFacts {
    /// State at each sample instant.
    pub samples: Vec<TaskSample>,
    /// Tasks running after the t = 0 rows.
    pub running_at_start: u64,
    /// Distinct (job, task index).
    pub tasks: u64,
    /// Distinct jobs in task_events.
    pub jobs: u64,
    /// Distinct tasks per priority (priority of their first row).
    pub tasks_by_priority: [u64; 12],
    /// Events per type 0..8.
    pub events: [u64; 9],
    /// Runs that started in the trace window and ended or outlasted 20 minutes.
    pub runs_measured: u64,
    /// Of those, runs longer than 20 minutes.
    pub runs_long: u64,
    /// CPU-request x run time of measured runs (normalised CPU x seconds).
    pub cpu_time_all: f64,
    /// Same for long runs.
    pub cpu_time_long: f64,
    /// Measured runs per duration bucket (completed runs only).
    pub duration_histogram: [u64; 6],
    /// Runs still running at the end (censored), counted as long when already > 20 minutes.
    pub runs_censored: u64,
    /// Tasks first seen after the t = 0 rows (new work), per band.
    pub new_tasks_by_band: [u64; 3],
    /// New tasks per job first seen after the t = 0 rows.
    pub new_job_tasks: Vec<u32>,
    /// Runs started after the t = 0 rows (SCHEDULEs of tasks not running).
    pub runs_started: u64,
    /// Runs ended after the t = 0 rows, per terminal event: EVICT, FAIL, FINISH, KILL, LOST.
    pub run_ends: [u64; 5],
    /// Last event time.
    pub last_time_us: i64,
}

#[derive(Clone, Copy)]
struct Task {
    running: bool,
    alive: bool,
    priority: u8,
    start_us: i64,
    cpu: f64,
    mem: f64,
}

fn add(s: &mut TaskSample, t: &Task, sign: f64) {
    s.running = (s.running as i64 + sign as i64) as u64;
    s.cpu_requested += sign * t.cpu;
    s.mem_requested += sign * t.mem;
    s.cpu_by_priority[t.priority as usize] += sign * t.cpu;
    let b = priority_band(t.priority);
    s.band_running[b] = (s.band_running[b] as i64 + sign as i64) as u64;
    s.band_cpu_requested[b] += sign * t.cpu;
    s.band_mem_requested[b] += sign * t.mem;
    if t.priority >= PRODUCTION_PRIORITY {
        s.prod_running = (s.prod_running as i64 + sign as i64) as u64;
        s.prod_cpu_requested += sign * t.cpu;
        s.prod_mem_requested += sign * t.mem;
    }
}

impl TaskSample {
    /// A running production task's mean memory request over another's, when both run.
    pub fn prod_mem_request_ratio(&self) -> Option<f64> {
        let others = self.running.checked_sub(self.prod_running)?;
        if self.prod_running == 0 || others == 0 {
            return None;
        }
        let prod_mean = self.prod_mem_requested / self.prod_running as f64;
        let others_mean = (self.mem_requested - self.prod_mem_requested) / others as f64;
        (others_mean > 0.0).then(|| prod_mean / others_mean)
    }
}

impl TaskFacts {
    fn record_run(&mut self, t: &Task, end_us: i64, completed: bool) {
        if t.start_us <= 0 {
            return; // started before the trace window: its run time is unknown
        }
        let run_us = end_us - t.start_us;
        let long = run_us > LONG_RUN_US;
        if !completed && !long {
            return;
        }
        self.runs_measured += 1;
        let cpu_time = t.cpu * run_us as f64 / 1e6;
        self.cpu_time_all += cpu_time;
        if long {
            self.runs_long += 1;
            self.cpu_time_long += cpu_time;
        }
        if completed {
            let bucket = DURATION_BUCKETS
                .iter()
                .position(|(s, _)| run_us < s.saturating_mul(1_000_000))
                .unwrap_or(5);
            self.duration_histogram[bucket] += 1;
        } else {
            self.runs_censored += 1;
        }
    }
}

/// Replays task_events, sampling state just before the first event after each of `instants`.
pub fn task_facts(dir: &std::path::Path, instants: &[i64]) -> Result<TaskFacts> {
    let mut facts = TaskFacts::default();
    let Some(ds) = Dataset::open(dir, Table::TaskEvents)? else {
        facts.samples = vec![TaskSample::default(); instants.len()];
        return Ok(facts);
    };
    let mut tasks: HashMap<(u64, u32), Task> = HashMap::new();
    let mut jobs: HashSet<u64> = HashSet::new();
    let mut new_jobs: HashMap<u64, u32> = HashMap::new();
    let mut now = TaskSample::default();
    let mut next = 0;
    let mut start_done = false;
    let columns = [
        "time",
        "job_id",
        "task_index",
        "event_type",
        "priority",
        "cpu_request",
        "memory_request",
    ];
    for batch in ds.batches(&columns)? {
        let b = batch?;
        let (time, job, index, kind, prio) = (
            i64s(&b, 0),
            u64s(&b, 1),
            u32s(&b, 2),
            u8s(&b, 3),
            u8s(&b, 4),
        );
        for row in 0..b.num_rows() {
            let t_us = time[row];
            if !start_done && t_us > 0 {
                facts.running_at_start = now.running;
                start_done = true;
            }
            while next < instants.len() && t_us > instants[next] {
                facts.samples.push(now);
                next += 1;
            }
            facts.last_time_us = facts.last_time_us.max(t_us);
            let kind = kind[row];
            facts.events[kind as usize] += 1;
            if jobs.insert(job[row]) && t_us > 0 {
                new_jobs.insert(job[row], 0);
            }
            let key = (job[row], index[row]);
            let task = tasks.entry(key).or_insert_with(|| {
                facts.tasks += 1;
                facts.tasks_by_priority[prio[row] as usize] += 1;
                if t_us > 0 {
                    facts.new_tasks_by_band[priority_band(prio[row])] += 1;
                    if let Some(count) = new_jobs.get_mut(&job[row]) {
                        *count += 1;
                    }
                }
                Task {
                    running: false,
                    alive: false,
                    priority: prio[row],
                    start_us: 0,
                    cpu: 0.0,
                    mem: 0.0,
                }
            });
            let was = *task;
            if task.running {
                add(&mut now, &was, -1.0);
            } else if task.alive {
                now.pending -= 1;
            }
            if let Some(c) = f32_at(&b, 5, row) {
                task.cpu = c as f64;
            }
            if let Some(m) = f32_at(&b, 6, row) {
                task.mem = m as f64;
            }
            task.priority = prio[row];
            match kind {
                task_event::SUBMIT => {
                    task.alive = true;
                    task.running = was.running;
                }
                task_event::SCHEDULE => {
                    if !was.running {
                        task.start_us = t_us;
                        facts.runs_started += u64::from(t_us > 0);
                    }
                    task.alive = true;
                    task.running = true;
                }
                k if task_event::is_terminal(k) => {
                    task.alive = false;
                    task.running = false;
                }
                _ => {}
            }
            let after = *task;
            if after.running {
                add(&mut now, &after, 1.0);
            } else if after.alive {
                now.pending += 1;
            }
            if was.running && !after.running {
                facts.record_run(&was, t_us, true);
                if t_us > 0 {
                    facts.run_ends[(kind - task_event::EVICT) as usize] += 1;
                }
            }
        }
    }
    if !start_done {
        facts.running_at_start = now.running;
    }
    while facts.samples.len() < instants.len() {
        facts.samples.push(now);
    }
    let end = facts.last_time_us;
    let still: Vec<Task> = tasks.values().filter(|t| t.running).copied().collect();
    for t in still {
        facts.record_run(&t, end, false);
    }
    facts.jobs = jobs.len() as u64;
    facts.new_job_tasks = new_jobs.into_values().collect();
    facts.new_job_tasks.sort_unstable();
    Ok(facts)
}
