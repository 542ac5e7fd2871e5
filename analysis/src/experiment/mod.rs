//! `cellsim experiment NAME --out DIR`: a seed's experiment as a grid of runs. An experiment
//! names its points (a scenario's settings, such as the load), its configurations (a policy
//! with its settings) and the run settings; every point and seed is generated, ingested and run
//! under every configuration through the same path as `cellsim run`, and each run is measured
//! from its `tasks/` table: one [`ResultRow`] per configuration, point and seed.
//!
//! Outputs (`output.rs`): `DIR/results.parquet` (the rows), `DIR/results.md` (mean and 99th
//! percentile queue time per configuration and point, averaged over seeds with the seeds' range,
//! and the seed's reported shapes checked against ours) and `DIR/queue-times.svg` (mean and p99
//! against the point's x, one line per configuration). Runs go to `DIR/work/` and are removed once
//! measured; the outputs are written last, each atomically, so a DIR with `results.md` is
//! complete.
//!
//! Determinism: the rows depend only on the experiment, its options and the seeds, never on the
//! threads (each run is single-threaded and runs are spread over the threads, rows sorted).

pub mod federation;
mod federation_paper;
pub mod keep;
pub mod nbs;
mod nbs_report;
mod output;
mod panels;
pub mod sparrow;

use std::path::{Path, PathBuf};

use engine::{PolicyConfig, RunConfig, RunProgress};
use ingest::scenario::{Arrivals, ScenarioConfig};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{AnalysisError, Result};
use crate::parts::for_each_batch;

pub use output::{markdown, write_outputs};

/// The experiments, by name, with a line each.
pub const NAMES: &[(&str, &str)] = &[
    (
        "sparrow-load",
        "seed 002 Figs. 1-2: base Sparrow with 1-4 probes, Random Walk, Greedy and Gradient Search and omniscient on 50 nodes, load 10-95 %",
    ),
    (
        "sparrow-random",
        "seed 002 section II.C: the same configurations on heterogeneous nodes, 500 tasks every 0.5 s, 6-50 nodes",
    ),
    (
        "federation-jobs",
        "seed 003 Figs. 4-5, Tables 3-4: PSE-1/PSE-2 makespan and flowtime vs jobs, LLTF/FLTF/LTIR x PSO/ACO/BE/GA, with and without priorities",
    ),
    (
        "nbs-hard",
        "seed 004 Fig. 3: its Hadoop cell (10 jobs, a third or more with hard deadlines) under NBS, Equal, Random and EDF; hard-deadline latencies",
    ),
    (
        "nbs-priority",
        "seed 004 Fig. 4: the same cell, 10 soft jobs due at 65 s with priorities 300 down to 30; high-priority latencies",
    ),
    (
        "nbs-jobs",
        "seed 004 Figs. 5-6: the same cell with 2-10 jobs; hard-deadline latency, and the latency of jobs of priority above 50 (priorities drawn in 2-256)",
    ),
    (
        "federation-hosts",
        "seed 003 Figs. 6-7: 10-100 hosts per datacenter (100-1,000 VMs), LLTF x PSO/ACO/BE/GA, 10,000 PSE-1 and 12,000 PSE-2 jobs",
    ),
];

/// What the user chose.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Seeds 1..=seeds.
    pub seeds: u64,
    /// How tasks arrive.
    pub arrivals: Arrivals,
    /// One-way network delay, milliseconds.
    pub net_delay_ms: f64,
    /// Threads (0: all cores).
    pub threads: usize,
    /// Whose random numbers draw the arrivals and the `radlab-d*` rows' probe targets
    /// (`sparrow-load`).
    pub draws: ingest::scenario::Draws,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seeds: 5,
            arrivals: Arrivals::Even,
            net_delay_ms: 0.5,
            threads: 0,
            draws: ingest::scenario::Draws::Own,
        }
    }
}

/// A point of an experiment: a scenario and where it lies on the x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The x value (load %, nodes).
    pub x: f64,
    /// Simulated hours to run (every task arrived and ended).
    pub hours: f64,
    /// The scenario (its seed is replaced by each run's).
    pub scenario: ScenarioConfig,
}

/// A configuration compared: a policy with its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Configuration {
    /// Its name in the results.
    pub name: String,
    /// Probes per task (0 where the policy sends none).
    pub probes: u32,
    /// The policy.
    pub policy: PolicyConfig,
    /// Its own tick instead of the experiment's (for a policy whose results do not depend on
    /// the tick, `Policy::exact_time`: fewer ticks, the same numbers).
    pub tick: Option<engine::sim_time::SimDuration>,
}

/// An experiment: its points, configurations and run settings.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// Its name.
    pub name: String,
    /// What the x axis is.
    pub x_label: String,
    /// The points, in x order.
    pub points: Vec<Point>,
    /// The configurations, in the order lines are drawn.
    pub configurations: Vec<Configuration>,
    /// The run settings (policy replaced by each configuration's, seed by each run's).
    pub run: RunConfig,
    /// What the seed reports, and how ours compares (`results.md`).
    pub paper: fn(&Summary) -> String,
}

/// One run measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResultRow {
    /// The configuration's name.
    pub configuration: String,
    /// Its probes per task.
    pub probes: u32,
    /// The point's x.
    pub x: f64,
    /// The scenario's offered load, percent of the cell's CPU.
    pub load_pct: f64,
    /// Nodes in the cell.
    pub nodes: u32,
    /// The seed.
    pub seed: u64,
    /// Tasks that ran (rows of `tasks/` with a start).
    pub tasks: u64,
    /// Tasks that never started within the run.
    pub unstarted: u64,
    /// Mean queue time, ms (start - submit).
    pub mean_queue_ms: f64,
    /// Median queue time, ms.
    pub p50_queue_ms: f64,
    /// 99th percentile queue time (`percentile.rs`), ms.
    pub p99_queue_ms: f64,
    /// From the first submission to the last end, s.
    pub makespan_s: f64,
    /// Messages the policy sent (all kinds).
    pub messages: u64,
}

/// The results of an experiment.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The experiment's name.
    pub name: String,
    /// The x axis.
    pub x_label: String,
    /// The options it ran with.
    pub options: Options,
    /// Configuration names, in order.
    pub configurations: Vec<String>,
    /// The rows, by configuration (in order), x, seed.
    pub rows: Vec<ResultRow>,
}

/// Mean, min and max over seeds of one measure, per configuration and x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// Mean over seeds.
    pub mean: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Summary {
    /// The x values, in order.
    pub fn xs(&self) -> Vec<f64> {
        let mut xs: Vec<f64> = self.rows.iter().map(|r| r.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs
    }

    /// `measure` of `configuration` at `x` over the seeds; `None` without rows.
    pub fn band(
        &self,
        configuration: &str,
        x: f64,
        measure: impl Fn(&ResultRow) -> f64,
    ) -> Option<Band> {
        let values: Vec<f64> = self
            .rows
            .iter()
            .filter(|r| r.configuration == configuration && r.x == x)
            .map(measure)
            .collect();
        if values.is_empty() {
            return None;
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Band { mean, min, max })
    }

    /// The mean over seeds of `measure`, 0 without rows.
    pub fn mean(&self, configuration: &str, x: f64, measure: impl Fn(&ResultRow) -> f64) -> f64 {
        self.band(configuration, x, measure).map_or(0.0, |b| b.mean)
    }
}

/// The experiment `name` with `options`; an error listing the names for an unknown one.
pub fn experiment(name: &str, options: &Options) -> Result<Experiment> {
    if !(options.net_delay_ms.is_finite() && (0.0..=1_000.0).contains(&options.net_delay_ms)) {
        return Err(AnalysisError::Experiment(format!(
            "--net-delay-ms must be 0-1000, got {}",
            options.net_delay_ms
        )));
    }
    if options.seeds == 0 {
        return Err(AnalysisError::Experiment(
            "--seeds must be at least 1".into(),
        ));
    }
    match name {
        "sparrow-load" => Ok(sparrow::load(options)),
        "sparrow-random" => Ok(sparrow::random(options)),
        other => {
            let names: Vec<&str> = NAMES.iter().map(|n| n.0).collect();
            Err(AnalysisError::Experiment(format!(
                "unknown experiment {other:?}; the experiments are {}",
                names.join(", ")
            )))
        }
    }
}

/// Queue-time statistics of a run's `tasks/` table: (tasks started, never started, mean, p50,
/// p99 in ms, makespan s).
fn measure_tasks(run: &Path) -> Result<(u64, u64, f64, f64, f64, f64)> {
    use arrow_array::Array;
    use arrow_array::types::Int64Type;
    let mut queue = Vec::new();
    let mut unstarted = 0u64;
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    for_each_batch(run, "tasks", |part| {
        let q = part.column::<Int64Type>("queue_us")?;
        let submit = part.column::<Int64Type>("submit_us")?;
        let end = part.column::<Int64Type>("end_us")?;
        for r in 0..q.len() {
            first = first.min(submit.value(r));
            last = last.max(end.value(r));
            if q.is_null(r) {
                unstarted += 1;
            } else {
                queue.push(q.value(r));
            }
        }
        Ok(())
    })?;
    queue.sort_unstable();
    let ms = |us: i64| us as f64 / 1e3;
    let queue_ms: Vec<f64> = queue.iter().map(|&v| ms(v)).collect();
    let rank = |p: f64| match queue_ms.is_empty() {
        true => 0.0,
        false => crate::percentile::of_sorted(&queue_ms, p),
    };
    let mean = if queue.is_empty() {
        0.0
    } else {
        queue.iter().map(|&v| ms(v)).sum::<f64>() / queue.len() as f64
    };
    let makespan = if last >= first {
        (last - first) as f64 / 1e6
    } else {
        0.0
    };
    Ok((
        queue.len() as u64,
        unstarted,
        mean,
        rank(0.5),
        rank(0.99),
        makespan,
    ))
}

/// The offered load of a scenario, percent of its CPU: CPU-seconds asked for over the CPU the
/// cell offers while the tasks arrive.
pub fn offered_load_pct(scenario: &ScenarioConfig) -> Result<f64> {
    let w = scenario.workload()?;
    let work: f64 = w.tasks.iter().map(|t| t.cpu * t.run_us as f64).sum();
    let cpus: f64 = w.machines.iter().map(|m| m.cpus).sum();
    let n = w.tasks.len() as f64;
    let span = w.tasks.last().map_or(0, |t| t.submit_us) as f64 * n / (n - 1.0).max(1.0);
    Ok(if span > 0.0 && cpus > 0.0 {
        100.0 * work / (cpus * span)
    } else {
        0.0
    })
}

/// One point and seed: generated, ingested, run under every configuration, measured.
fn run_point(
    experiment: &Experiment,
    point: &Point,
    seed: u64,
    work: &Path,
) -> Result<Vec<ResultRow>> {
    let dir = work.join(format!("x{}-seed{seed}", point.x));
    let raw = dir.join("raw");
    let trace = dir.join("trace");
    let _ = std::fs::remove_dir_all(&dir);
    let scenario = ScenarioConfig {
        seed,
        ..point.scenario.clone()
    };
    ingest::scenario::generate_scenario(&raw, &scenario)?;
    let progress = ingest::Progress::default();
    ingest::ingest(&raw, &trace, &Default::default(), &progress)?;
    let load_pct = offered_load_pct(&scenario)?;
    let nodes = scenario.workload()?.machines.len() as u32;
    let mut rows = Vec::new();
    for (k, c) in experiment.configurations.iter().enumerate() {
        let out = dir.join(format!("run{k}"));
        let config = RunConfig {
            policy: c.policy.clone(),
            seed,
            threads: 1,
            hours: Some(point.hours),
            tick: c.tick.unwrap_or(experiment.run.tick),
            ..experiment.run.clone()
        };
        let outcome = engine::run_configured(&config, &trace, &out, &RunProgress::default(), None)
            .map_err(|e| AnalysisError::Experiment(format!("{} at {}: {e}", c.name, point.x)))?;
        let summary = outcome
            .complete()
            .ok_or_else(|| AnalysisError::Experiment(format!("{} stopped early", c.name)))?;
        let (tasks, unstarted, mean, p50, p99, makespan) = measure_tasks(&out)?;
        rows.push(ResultRow {
            configuration: c.name.clone(),
            probes: c.probes,
            x: point.x,
            load_pct,
            nodes,
            seed,
            tasks,
            unstarted,
            mean_queue_ms: mean,
            p50_queue_ms: p50,
            p99_queue_ms: p99,
            makespan_s: makespan,
            messages: summary.totals.messages.values().sum(),
        });
        let _ = std::fs::remove_dir_all(&out);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(rows)
}

/// `f` of every item, on `threads` plain threads (0: all cores) pulling items in turn, in item
/// order. Plain threads with 64 MB stacks, not a rayon pool: a worker waiting for a run's own
/// pool would steal the next item onto its stack.
pub(crate) fn spread<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(items.len().max(1));
    let worker = || {
        let mut mine = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(k) else {
                return mine;
            };
            mine.push((k, f(item)));
        }
    };
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                std::thread::Builder::new()
                    .stack_size(64 << 20)
                    .spawn_scoped(scope, worker)
                    .expect("a thread starts")
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("an experiment thread does not panic"))
            .collect()
    });
    results.sort_by_key(|r| r.0);
    results.into_iter().map(|r| r.1).collect()
}

/// Runs `experiment` into `out` (created), calling `progress` with a line per point and seed
/// done; returns the results (the outputs are written by [`write_outputs`]).
pub fn run_experiment(
    experiment: &Experiment,
    options: &Options,
    (out, keep): (&Path, &keep::Keep),
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Summary> {
    let work: PathBuf = out.join("work");
    std::fs::create_dir_all(&work).map_err(|source| AnalysisError::Write {
        path: work.clone(),
        source,
    })?;
    let jobs: Vec<(&Point, u64)> = experiment
        .points
        .iter()
        .flat_map(|p| (1..=options.seeds).map(move |s| (p, s)))
        .collect();
    let total = jobs.len();
    let done = AtomicUsize::new(keep.kept());
    let key = |&(point, seed): &(&Point, u64)| format!("x{}-seed{seed}", point.x);
    let results = keep::measure_all(&jobs, options.threads, keep, key, |&(point, seed)| {
        let result = run_point(experiment, point, seed, &work);
        if let Ok(rows) = &result {
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            let brief: Vec<String> = rows
                .iter()
                .map(|r| format!("{} {:.1}", r.configuration, r.mean_queue_ms))
                .collect();
            progress(&format!(
                "[{n}/{total}] {} = {} seed {seed}: mean queue ms {}",
                experiment.x_label,
                point.x,
                brief.join(", ")
            ));
        }
        result
    });
    let _ = std::fs::remove_dir_all(&work);
    let mut rows: Vec<ResultRow> = results?.into_iter().flatten().collect();
    let order = |name: &str| {
        experiment
            .configurations
            .iter()
            .position(|c| c.name == name)
    };
    rows.sort_by(|a, b| {
        (order(&a.configuration), a.x, a.seed)
            .partial_cmp(&(order(&b.configuration), b.x, b.seed))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(Summary {
        name: experiment.name.clone(),
        x_label: experiment.x_label.clone(),
        options: options.clone(),
        configurations: experiment
            .configurations
            .iter()
            .map(|c| c.name.clone())
            .collect(),
        rows,
    })
}
