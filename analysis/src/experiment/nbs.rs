//! Seed 004's Hadoop experiments (section IV) as `cellsim experiment nbs-hard | nbs-priority |
//! nbs-jobs`: its cell of 3 machines with 2 map slots each and identical jobs of three 10 s map
//! tasks (another time with `--map-task-s`) submitted at once (`cellsim gen --scenario
//! nbs-hadoop`, `nbs-priority`, `nbs-priority-random`), every seed's draw run under NBS, Equal,
//! Random and EDF, NBS with each option seed 004 does not write ([`NBS_OPTIONS`]) and EDF one
//! job at a time ([`BASELINE_OPTIONS`]) (1 s ticks, first-fit placing within the shares in
//! whole map slots), each job's latency (completion - deadline) read from the run's `jobs/`
//! table and its priority from the scenario's side tables.
//!
//! - `nbs-hard` (Fig. 3): 10 jobs, a third or more with hard deadlines, priorities 1.
//! - `nbs-priority` (Fig. 4): 10 jobs, all soft at 65 s, priorities 300 down to 30.
//! - `nbs-jobs` (Figs. 5-6): 2 to 10 jobs, as Fig. 3 (hard-deadline latency) and with
//!   priorities drawn in 2-256 (latency of the jobs above 50).
//!
//! Outputs (`nbs_report.rs`): `results.parquet` (one row per job, policy, scenario, job count and
//! seed), figures as SVG and PNG with the paper's values as crosses and, last, `results.md` with
//! the paper's numbers beside ours.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::Array;
use arrow_array::types::{Int64Type, UInt64Type};
use engine::{PolicyConfig, RunConfig, RunProgress};
use ingest::scenario::ScenarioConfig;
use ingest::scenario::side::SideTables;

use crate::error::{AnalysisError, Result};
use crate::parts::for_each_batch;

pub use super::nbs_report::{markdown, write_outputs};

/// The controllers compared, in the paper's order (`nbs`: eqs. 3-6 as written).
pub const POLICIES: [&str; 4] = ["nbs", "equal-share", "random-share", "edf"];

/// NBS with the options seed 004 does not write (issue 60), run beside it so that each one's
/// effect shows: the rate cap (a job's tasks bound its rate in the bargain), both caps (also
/// its total by its requirement: the model before issue 60), and both caps with the earliness
/// tie-break (the model before that).
pub const NBS_OPTIONS: [&str; 3] = ["nbs-rate-cap", "nbs-both-caps", "nbs-both-caps-tiebreak"];

/// Baselines with an option seed 004 does not settle, run beside the four, each with the index
/// in [`POLICIES`] of the baseline it varies (whose paper values it is compared with):
/// `edf-one-job`, EDF serving one job at a time (the earliest-deadline job holds every map slot,
/// `engine/src/controlled/edf.rs`; the seed's plug-in sets each job's slot count, and the seed
/// does not say whether its EDF gave the slots a job could not use to the next job).
pub const BASELINE_OPTIONS: [(&str, usize); 1] = [("edf-one-job", 3)];

/// Every policy an experiment runs: [`POLICIES`], [`NBS_OPTIONS`], then [`BASELINE_OPTIONS`].
pub fn all_policies() -> impl Iterator<Item = &'static str> {
    (POLICIES.into_iter().chain(NBS_OPTIONS)).chain(BASELINE_OPTIONS.map(|o| o.0))
}

/// The run configuration of a policy of [`all_policies`].
pub fn policy_config(name: &str) -> PolicyConfig {
    let nbs = |rate_cap, requirement_cap, earliness| {
        PolicyConfig::Nbs(engine::nbs::NbsConfig {
            rate_cap,
            requirement_cap,
            earliness,
            ..Default::default()
        })
    };
    match name {
        "nbs-rate-cap" => nbs(true, false, 0.0),
        "nbs-both-caps" => nbs(true, true, 0.0),
        "nbs-both-caps-tiebreak" => nbs(true, true, 1e-3),
        "edf-one-job" => PolicyConfig::Edf(engine::controlled::EdfConfig { one_job: true }),
        _ => PolicyConfig::default_of(name).expect("a registered policy"),
    }
}

/// One of seed 004's experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Experiment {
    /// Fig. 3: hard-deadline latencies, 10 jobs.
    Hard,
    /// Fig. 4: high-priority latencies, 10 soft jobs with priorities 300 to 30.
    Priority,
    /// Figs. 5-6: 2 to 10 jobs.
    Jobs,
}

impl Experiment {
    /// The experiment called `name`.
    pub fn of_name(name: &str) -> Option<Experiment> {
        match name {
            "nbs-hard" => Some(Experiment::Hard),
            "nbs-priority" => Some(Experiment::Priority),
            "nbs-jobs" => Some(Experiment::Jobs),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::Hard => "nbs-hard",
            Experiment::Priority => "nbs-priority",
            Experiment::Jobs => "nbs-jobs",
        }
    }

    /// Its cases: (scenario, jobs), each run for every seed and policy.
    pub fn cases(self) -> Vec<(&'static str, u32)> {
        match self {
            Experiment::Hard => vec![("nbs-hadoop", 10)],
            Experiment::Priority => vec![("nbs-priority", 10)],
            Experiment::Jobs => (2..=10)
                .flat_map(|n| [("nbs-hadoop", n), ("nbs-priority-random", n)])
                .collect(),
        }
    }
}

/// A policy's or scenario's name (an alias, so that serde's derive does not take the field for
/// a string borrowed from its input: `known_name` reads it).
pub type Name = &'static str;

/// Reads a policy's or scenario's name back as the `'static` name it was written from.
fn known_name<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Name, D::Error> {
    let name = <String as serde::Deserialize>::deserialize(d)?;
    let scenarios = [Experiment::Hard, Experiment::Priority, Experiment::Jobs]
        .into_iter()
        .flat_map(|e| e.cases().into_iter().map(|c| c.0));
    all_policies()
        .chain(scenarios)
        .find(|&known| known == name)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown name {name:?}")))
}

/// One job of one run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobRow {
    /// The policy.
    #[serde(deserialize_with = "known_name")]
    pub policy: Name,
    /// The scenario.
    #[serde(deserialize_with = "known_name")]
    pub scenario: Name,
    /// Jobs in the run.
    pub jobs: u32,
    /// The seed (the scenario's draw).
    pub seed: u64,
    /// Reduce tasks per job after its map tasks (0: the seed's jobs, map tasks only).
    pub reduce_tasks: u32,
    /// Run time of each map task, s (`ingest::scenario::MAP_S` unless set).
    pub map_task_s: u32,
    /// The job.
    pub job_id: u64,
    /// Its priority.
    pub priority: f64,
    /// Its deadline kind: Some(true) hard, Some(false) soft, None none.
    pub hard: Option<bool>,
    /// Completion - deadline, s (None without a deadline, or unfinished).
    pub latency_s: Option<f64>,
    /// Completion - submission, s.
    pub makespan_s: f64,
}

/// Runs `experiment`'s cases for seeds 1..=`seeds`, with `reduce_tasks` reduce tasks per job
/// after its maps and map tasks of `map_task_s` (None: the scenarios' default), under every
/// policy in `work` (removed after), on `threads`.
pub fn run(
    experiment: Experiment,
    (seeds, reduce_tasks, map_task_s): (u64, u32, Option<u32>),
    (threads, keep): (usize, &super::keep::Keep),
    work: &Path,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Vec<JobRow>> {
    let items: Vec<((&'static str, u32), u64)> = (experiment.cases().into_iter())
        .flat_map(|case| (1..=seeds).map(move |seed| (case, seed)))
        .collect();
    let done = AtomicUsize::new(keep.kept());
    let key = |&((scenario, jobs), seed): &((&str, u32), u64)| format!("{scenario}-{jobs}-{seed}");
    let rows = super::keep::measure_all(&items, threads, keep, key, |item| {
        let &((scenario, jobs), seed) = item;
        let shape = (reduce_tasks, map_task_s);
        let rows = run_case((scenario, jobs, shape), seed, &work.join(key(item)));
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(&format!(
            "[{n}/{}] {scenario}, {jobs} jobs, seed {seed} done",
            items.len()
        ));
        rows
    });
    let _ = std::fs::remove_dir_all(work);
    Ok(rows?.into_iter().flatten().collect())
}

fn run_case(
    (scenario, jobs, (reduce_tasks, map_task_s)): (&'static str, u32, (u32, Option<u32>)),
    seed: u64,
    dir: &Path,
) -> Result<Vec<JobRow>> {
    let _ = std::fs::remove_dir_all(dir);
    let (raw, trace) = (dir.join("raw"), dir.join("trace"));
    let config = ScenarioConfig {
        name: scenario.into(),
        seed,
        tasks: Some(jobs),
        reduce_tasks,
        map_task_s,
        ..ScenarioConfig::default()
    };
    ingest::scenario::generate_scenario(&raw, &config)?;
    ingest::ingest(
        &raw,
        &trace,
        &Default::default(),
        &ingest::Progress::default(),
    )?;
    let side = SideTables::read(&trace)?;
    let priority = |job: u64| side.as_ref().map_or(1.0, |s| s.job(job).0);
    let mut rows = Vec::new();
    for policy in all_policies() {
        let out = dir.join(policy);
        let config = RunConfig {
            policy: policy_config(policy),
            seed,
            threads: 1,
            tick: engine::sim_time::SimDuration::from_secs(1),
            rounds_per_tick: 1,
            nodes_every: engine::sim_time::SimDuration::from_secs(60),
            part: engine::sim_time::SimDuration::from_secs(600),
            hours: Some(600.0 / 3600.0),
            ..RunConfig::default()
        };
        engine::run_configured(&config, &trace, &out, &RunProgress::default(), None).map_err(
            |e| AnalysisError::Experiment(format!("{policy} on {scenario} seed {seed}: {e}")),
        )?;
        for_each_batch(&out, "jobs", |part| {
            let id = part.column::<UInt64Type>("job_id")?;
            let latency = part.column::<Int64Type>("latency_us")?;
            let makespan = part.column::<Int64Type>("makespan_us")?;
            let hard = part.booleans("deadline_hard")?;
            for r in 0..part.batch.num_rows() {
                rows.push(JobRow {
                    policy,
                    scenario,
                    jobs,
                    seed,
                    reduce_tasks,
                    map_task_s: map_task_s.unwrap_or(ingest::scenario::MAP_S),
                    job_id: id.value(r),
                    priority: priority(id.value(r)),
                    hard: (!hard.is_null(r)).then(|| hard.value(r)),
                    latency_s: (!latency.is_null(r)).then(|| latency.value(r) as f64 / 1e6),
                    makespan_s: makespan.value(r) as f64 / 1e6,
                });
            }
            Ok(())
        })?;
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(rows)
}
