//! `cellsim stats`: the shape of an ingested trace (real or synthetic) in the figures SPEC 3.1
//! names, each with its target range, so a generated trace can be checked against the 2011 cell.
//!
//! Time averages are over samples taken every simulated hour from the start of the trace window
//! (600 s) to the last event; usage is resource-time from task_usage over the full hours covered,
//! divided by the capacity online at each hour's start.

mod compare;
pub mod constraints;
pub mod machines;
mod render;
pub mod tasks;
mod usage;

use std::path::Path;

use ingest::codes::{TRACE_START_US, task_event};
use serde::Serialize;

pub use compare::{Comparison, Tolerance, compare, render_comparison};
pub use constraints::ConstraintStats;
pub use machines::{Capacity, MixRow};
pub use render::render;
pub use tasks::{DURATION_BUCKETS, TaskSample};

use crate::error::Result;

/// Hourly sampling interval.
pub const SAMPLE_US: i64 = 3_600 * 1_000_000;

/// One figure, its value and the SPEC 3.1 range it should fall in.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Short name, e.g. `cpu_used_share`.
    pub name: &'static str,
    /// What it measures.
    pub what: &'static str,
    /// Measured value; `None` when the trace lacks the table it needs.
    pub value: Option<f64>,
    /// Lowest acceptable value.
    pub min: f64,
    /// Highest acceptable value.
    pub max: f64,
}

impl Check {
    /// True when measured and inside the range.
    pub fn ok(&self) -> bool {
        self.value.is_some_and(|v| v >= self.min && v <= self.max)
    }
}

/// Everything `cellsim stats` reports.
#[derive(Debug, Clone, Serialize)]
pub struct TraceStats {
    /// Distinct machines in machine_events.
    pub machines: u64,
    /// Machine shapes at first ADD.
    pub machine_mix: Vec<MixRow>,
    /// Machines whose first ADD lacks capacities.
    pub machines_unknown_shape: u64,
    /// Sample instants (us).
    pub sample_times_us: Vec<i64>,
    /// Online capacity per sample.
    pub capacity: Vec<Capacity>,
    /// Task state per sample.
    pub task_samples: Vec<TaskSample>,
    /// Used (CPU, memory) share of capacity per full hour, when task_usage exists.
    pub used_share_per_hour: Option<Vec<(f64, f64)>>,
    /// Tasks running after the t = 0 rows.
    pub running_at_start: u64,
    /// Distinct tasks and jobs in task_events.
    pub tasks: u64,
    /// Distinct jobs in task_events.
    pub jobs: u64,
    /// Distinct tasks per priority 0..11.
    pub tasks_by_priority: [u64; 12],
    /// Completed runs per duration bucket.
    pub duration_histogram: [u64; 6],
    /// Runs started in the window and measured (completed, or censored beyond 20 minutes).
    pub runs_measured: u64,
    /// Tasks first seen after the t = 0 rows, per band (gratis 0-1, middle 2-8, production).
    pub new_tasks_by_band: [u64; 3],
    /// Jobs first seen after the t = 0 rows.
    pub new_jobs: u64,
    /// Tasks first seen after the t = 0 rows in those jobs.
    pub new_jobs_tasks: u64,
    /// Of those jobs, jobs of a single task.
    pub new_single_task_jobs: u64,
    /// Runs started after the t = 0 rows.
    pub runs_started: u64,
    /// Runs ended after the t = 0 rows by EVICT, FAIL, FINISH, KILL, LOST.
    pub run_ends: [u64; 5],
    /// Machine events per type (ADD, REMOVE, UPDATE).
    pub machine_events: [u64; 3],
    /// Task events per type (SUBMIT .. UPDATE_RUNNING).
    pub task_events: [u64; 9],
    /// Constraint figures.
    pub constraints: ConstraintStats,
    /// The SPEC 3.1 figures with their ranges.
    pub checks: Vec<Check>,
    /// Hours from the window's start to the last event (the SPEC 3.1 targets are the month's).
    pub span_h: f64,
    /// The six tables that were not ingested (their figures are absent, not 0).
    pub tables_missing: Vec<String>,
}

/// Below this span the month's targets are not expected to hold (a day's cycle at least).
pub const SHORT_SPAN_H: f64 = 24.0;

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// Computes the statistics of the ingested trace in `dir`.
pub fn trace_stats(dir: &Path) -> Result<TraceStats> {
    let summary = ingest::IngestSummary::load(dir)?;
    let last = summary.last_event_us();
    let tables_missing: Vec<String> = ingest::Table::ALL
        .iter()
        .map(|t| t.name().to_string())
        .filter(|name| !summary.tables.contains_key(name))
        .collect();
    let hours = ((last - TRACE_START_US).max(0) / SAMPLE_US) as usize;
    let instants: Vec<i64> = (0..=hours)
        .map(|k| TRACE_START_US + k as i64 * SAMPLE_US)
        .collect();
    let m = machines::machine_facts(dir, &instants)?;
    let t = tasks::task_facts(dir, &instants)?;
    let usage = usage::usage_buckets(dir, TRACE_START_US, SAMPLE_US, hours)?;
    let machine_ids: Vec<u64> = {
        let mut ids: Vec<u64> = m.attributes.keys().copied().collect();
        ids.sort_unstable();
        ids
    };
    let constraints = constraints::constraint_stats(dir, &m.attributes, &machine_ids)?;

    let running_mean = mean(t.samples.iter().map(|s| s.running as f64));
    let machines_mean = mean(m.capacity.iter().map(|c| c.machines as f64));
    let share = |f: fn(&TaskSample) -> f64, cap: fn(&Capacity) -> f64| {
        mean(
            m.capacity
                .iter()
                .zip(&t.samples)
                .filter_map(|(c, s)| ratio(f(s), cap(c))),
        )
    };
    let cpu_req = share(|s| s.cpu_requested, |c| c.cpu);
    let mem_req = share(|s| s.mem_requested, |c| c.mem);
    let prod_cpu = share(|s| s.prod_cpu_requested, |c| c.cpu);
    let prod_mem_ratio = mean(
        t.samples
            .iter()
            .filter_map(TaskSample::prod_mem_request_ratio),
    );
    let used_per_hour: Option<Vec<(f64, f64)>> = usage.as_ref().map(|u| {
        u.iter()
            .zip(&m.capacity)
            .map(|((cpu_s, mem_s), c)| {
                let seconds = SAMPLE_US as f64 / 1e6;
                (
                    ratio(*cpu_s, c.cpu * seconds).unwrap_or(0.0),
                    ratio(*mem_s, c.mem * seconds).unwrap_or(0.0),
                )
            })
            .collect()
    });
    let cpu_used = used_per_hour
        .as_ref()
        .and_then(|u| mean(u.iter().map(|x| x.0)));
    let mem_used = used_per_hour
        .as_ref()
        .and_then(|u| mean(u.iter().map(|x| x.1)));
    let reference_total: f64 = m.mix.iter().map(|r| r.reference).sum();
    let mix_gap = m
        .mix
        .iter()
        .map(|r| (r.machines as f64 - r.reference).abs())
        .sum::<f64>();
    let terminal_kinds = [
        task_event::EVICT,
        task_event::FAIL,
        task_event::FINISH,
        task_event::KILL,
        task_event::LOST,
    ];
    let check = |name, what, value: Option<f64>, min, max| Check {
        name,
        what,
        value,
        min,
        max,
    };
    let checks = vec![
        check(
            "machine_mix_gap",
            "share of machines off the 2011 mix (scaled)",
            ratio(mix_gap, reference_total.max(1.0)),
            0.0,
            0.01,
        ),
        check(
            "running_per_12583",
            "running tasks per 12,583 machines (hourly mean)",
            running_mean
                .zip(machines_mean)
                .and_then(|(r, n)| ratio(r * 12_583.0, n)),
            110_000.0,
            150_000.0,
        ),
        check(
            "cpu_used_share",
            "CPU used / capacity (from task_usage)",
            cpu_used,
            0.40,
            0.50,
        ),
        check(
            "mem_used_share",
            "memory used / capacity (from task_usage)",
            mem_used,
            0.60,
            0.70,
        ),
        check(
            "cpu_request_over_use",
            "CPU requested / CPU used (well above 1)",
            cpu_req.zip(cpu_used).and_then(|(r, u)| ratio(r, u)),
            1.5,
            4.0,
        ),
        check(
            "mem_request_over_use",
            "memory requested / memory used (closer to 1; the real 8.5 h requests 93-98 % against Table 5's 62 % used)",
            mem_req.zip(mem_used).and_then(|(r, u)| ratio(r, u)),
            1.0,
            1.6,
        ),
        check(
            "long_run_share",
            "task runs longer than 20 min",
            ratio(t.runs_long as f64, t.runs_measured as f64),
            0.20,
            0.40,
        ),
        check(
            "long_resource_share",
            "CPU-request x time held by runs longer than 20 min (the real 8.5 h: 0.944; SPEC 3.1 said 0.55-0.80)",
            ratio(t.cpu_time_long, t.cpu_time_all),
            0.80,
            0.99,
        ),
        check(
            "production_cpu_share",
            "CPU requested by priority >= 9 / capacity",
            prod_cpu,
            0.70,
            0.85,
        ),
        check(
            "production_mem_request_ratio",
            "a running production task's memory request / another's (real sample at t = 0: 2.31)",
            prod_mem_ratio,
            1.8,
            3.0,
        ),
        check(
            "constrained_task_share",
            "tasks with constraints",
            ratio(constraints.constrained_tasks as f64, t.tasks as f64)
                .filter(|_| constraints.present),
            0.04,
            0.08,
        ),
        check(
            "restrictive_task_share",
            "tasks only a handful (<= 5) of machines satisfy",
            ratio(constraints.restrictive_tasks as f64, t.tasks as f64)
                .filter(|_| constraints.present),
            0.0003,
            0.003,
        ),
        check(
            "machine_event_kinds",
            "machine ADD / REMOVE / UPDATE kinds present",
            Some(m.events.iter().filter(|c| **c > 0).count() as f64),
            3.0,
            3.0,
        ),
        check(
            "terminal_event_kinds",
            "EVICT / FAIL / FINISH / KILL / LOST kinds present",
            Some(
                terminal_kinds
                    .iter()
                    .filter(|k| t.events[**k as usize] > 0)
                    .count() as f64,
            ),
            5.0,
            5.0,
        ),
    ];
    Ok(TraceStats {
        machines: m.machines,
        machine_mix: m.mix,
        machines_unknown_shape: m.unknown_shape,
        sample_times_us: instants,
        capacity: m.capacity,
        task_samples: t.samples.clone(),
        used_share_per_hour: used_per_hour,
        running_at_start: t.running_at_start,
        tasks: t.tasks,
        jobs: t.jobs,
        tasks_by_priority: t.tasks_by_priority,
        duration_histogram: t.duration_histogram,
        runs_measured: t.runs_measured,
        new_tasks_by_band: t.new_tasks_by_band,
        new_jobs: t.new_job_tasks.len() as u64,
        new_jobs_tasks: t.new_job_tasks.iter().map(|n| u64::from(*n)).sum(),
        new_single_task_jobs: t.new_job_tasks.iter().filter(|n| **n == 1).count() as u64,
        runs_started: t.runs_started,
        run_ends: t.run_ends,
        machine_events: m.events,
        task_events: t.events,
        constraints,
        checks,
        span_h: (last - TRACE_START_US).max(0) as f64 / 3.6e9,
        tables_missing,
    })
}
