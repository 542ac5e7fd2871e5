//! Each job's priority and deadline (seed 004's P_i, deadline type and deadline), for the
//! deadline-aware controllers and the `jobs/` table's latency. A scenario's side tables give
//! them (`ingest::scenario::side`). A GCD trace has none, so the run's `[deadlines]` model draws
//! them ([`DeadlineModel`]):
//!
//! - **type**: hard for `hard_pct` % of the jobs, soft for `soft_pct` %, none for the rest, by a
//!   hash of the model's `seed` and the job ID (the same jobs for every policy and run seed);
//! - **deadline**: the job's first submission (from the trace window's start for a job of its
//!   t = 0 state) plus `slack` x its critical path, the longest recorded run of its tasks (a GCD
//!   job's tasks are independent, so with room for all at once it ends when its longest does);
//!   a job with a run the trace does not end has no deadline;
//! - **priority**: 1 + the trace priority of its first submission (0-11: free 1-2, batch 3-9,
//!   production 10-12), so a production job bargains with up to 12 times a free one's weight.
//!
//! Invariant: [`JobTerms::Model`]'s rows are sorted by job ID, one per job submitted in the
//! trace; looked up by binary search.

use std::path::Path;
use std::sync::Arc;

use ingest::Table;
use ingest::codes::{TRACE_START_US, task_event};
use ingest::columns::{i64s, u8s, u64s};
use ingest::dataset::Dataset;
use ingest::rng::hash_keys;
use ingest::scenario::side::{Deadline, SideTables};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};
use crate::run_times::RunTimes;

/// The `[deadlines]` model for a trace without side tables (module doc). Off by default
/// (every job without a deadline, priority from the trace).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeadlineModel {
    /// Percent of jobs with a hard deadline.
    pub hard_pct: f64,
    /// Percent of jobs with a soft deadline (the rest have none).
    pub soft_pct: f64,
    /// Deadline = first submission + `slack` x critical path (chosen default 3).
    pub slack: f64,
    /// Seed of the type draws (kept apart from the run's, so every run draws the same).
    pub seed: u64,
}

impl Default for DeadlineModel {
    fn default() -> Self {
        DeadlineModel {
            hard_pct: 0.0,
            soft_pct: 0.0,
            slack: 3.0,
            seed: 1,
        }
    }
}

impl DeadlineModel {
    /// Why the settings cannot work, if they cannot.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let pct = |v: f64| v.is_finite() && (0.0..=100.0).contains(&v);
        if !(pct(self.hard_pct) && pct(self.soft_pct) && self.hard_pct + self.soft_pct <= 100.0) {
            return Err(format!(
                "deadlines: hard_pct and soft_pct must be 0-100 and sum to at most 100, got {} and {}",
                self.hard_pct, self.soft_pct
            ));
        }
        if !(self.slack.is_finite() && self.slack >= 1.0) {
            return Err(format!(
                "deadlines: slack must be at least 1 (a deadline no earlier than the critical path), got {}",
                self.slack
            ));
        }
        Ok(())
    }

    /// True when the model gives some jobs a deadline.
    pub fn is_on(&self) -> bool {
        self.hard_pct + self.soft_pct > 0.0
    }

    /// The type of job `job_id`'s deadline, due at `at_us`.
    pub fn deadline(&self, job_id: u64, at_us: i64) -> Deadline {
        let draw = (hash_keys(self.seed, &[0xdead, job_id]) >> 11) as f64 / (1u64 << 53) as f64;
        let pct = draw * 100.0;
        if pct < self.hard_pct {
            Deadline::Hard(at_us)
        } else if pct < self.hard_pct + self.soft_pct {
            Deadline::Soft(at_us)
        } else {
            Deadline::None
        }
    }
}

/// Where a run's job priorities and deadlines come from (module doc).
#[derive(Debug, Clone, Default)]
pub enum JobTerms {
    /// Neither: priority 1, no deadline.
    #[default]
    Unset,
    /// A scenario's side tables.
    Side(Arc<SideTables>),
    /// The trace's priorities and the deadline model: (job ID, priority, deadline) by job ID.
    Model(Arc<Vec<(u64, f64, Deadline)>>),
}

impl JobTerms {
    /// The terms of a run with `model` of the trace in `dir`: its side tables when it has them
    /// (a model switched on as well is refused: the scenario fixes the deadlines), else the
    /// model's over its task events when switched on, else none. The model needs the trace's
    /// run times: `run_times` when the caller has them, else read here.
    pub fn of_trace(
        model: &DeadlineModel,
        dir: &Path,
        run_times: Option<&RunTimes>,
    ) -> Result<JobTerms> {
        if let Some(side) = SideTables::read(dir)? {
            if model.is_on() {
                return Err(EngineError::Config {
                    path: dir.to_path_buf(),
                    problem: "[deadlines] draws deadlines for a trace without them, but this trace is a scenario whose side tables already give them; remove [deadlines]".into(),
                });
            }
            return Ok(JobTerms::Side(Arc::new(side)));
        }
        if !model.is_on() {
            return Ok(JobTerms::Unset);
        }
        let Some(events) = Dataset::open(dir, Table::TaskEvents)? else {
            return Ok(JobTerms::Unset);
        };
        let mut first: FxHashMap<u64, (i64, u8)> = FxHashMap::default();
        for batch in events.batches(&["time", "job_id", "event_type", "priority"])? {
            let b = batch?;
            let (time, job, kind, priority) = (i64s(&b, 0), u64s(&b, 1), u8s(&b, 2), u8s(&b, 3));
            for r in 0..b.num_rows() {
                if kind[r] == task_event::SUBMIT {
                    first.entry(job[r]).or_insert((time[r], priority[r]));
                }
            }
        }
        let read;
        let run_times = match run_times {
            Some(r) => r,
            None => {
                read = RunTimes::of_trace(dir)?;
                &read
            }
        };
        Ok(JobTerms::Model(Arc::new(model_rows(
            model, first, run_times,
        ))))
    }

    /// Job `job_id`'s priority and deadline.
    pub fn job(&self, job_id: u64) -> (f64, Deadline) {
        match self {
            JobTerms::Unset => (1.0, Deadline::None),
            JobTerms::Side(side) => side.job(job_id),
            JobTerms::Model(rows) => match rows.binary_search_by_key(&job_id, |r| r.0) {
                Ok(k) => (rows[k].1, rows[k].2),
                Err(_) => (1.0, Deadline::None),
            },
        }
    }
}

/// The model's rows from each job's first SUBMIT (job, (time, trace priority)) and the
/// recorded run times.
fn model_rows(
    model: &DeadlineModel,
    first: FxHashMap<u64, (i64, u8)>,
    run_times: &RunTimes,
) -> Vec<(u64, f64, Deadline)> {
    let mut submits: Vec<(u64, i64, u8)> = first.into_iter().map(|(j, (t, p))| (j, t, p)).collect();
    submits.sort_unstable_by_key(|s| s.0);
    let longest = run_times.longest_per_job();
    submits
        .into_iter()
        .map(|(job, at, priority)| {
            let path = longest
                .binary_search_by_key(&job, |l| l.0)
                .map_or(RunTimes::UNKNOWN, |k| longest[k].1);
            let deadline = if path == RunTimes::UNKNOWN {
                Deadline::None
            } else {
                let due = at.max(TRACE_START_US) + (model.slack * path as f64).round() as i64;
                model.deadline(job, due)
            };
            (job, 1.0 + priority as f64, deadline)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ingest::codes::task_event::{FINISH, SCHEDULE, SUBMIT};

    /// By hand: job 1 submitted at the window's start + 10 s with priority 9, tasks running 20
    /// and 50 s: critical path 50 s, deadline at + 10 + 3 x 50 = + 160 s, priority 10. Job 2
    /// runs past the trace's end: no deadline. With every job hard, job 1 is hard.
    #[test]
    fn deadline_is_submission_plus_slack_times_critical_path() {
        let s = TRACE_START_US;
        let events = [
            (s + 10_000_000, (1, 0), SUBMIT),
            (s + 10_000_000, (1, 1), SUBMIT),
            (s + 11_000_000, (1, 0), SCHEDULE),
            (s + 11_000_000, (1, 1), SCHEDULE),
            (s + 31_000_000, (1, 0), FINISH),
            (s + 61_000_000, (1, 1), FINISH),
            (s, (2, 0), SUBMIT),
            (s, (2, 0), SCHEDULE),
        ];
        let run_times = RunTimes::of_rows(events);
        let submits = [(1, (s + 10_000_000, 9)), (2, (s, 0))]
            .into_iter()
            .collect();
        let model = DeadlineModel {
            hard_pct: 100.0,
            ..DeadlineModel::default()
        };
        let rows = model_rows(&model, submits, &run_times);
        assert_eq!(
            rows,
            [
                (1, 10.0, Deadline::Hard(s + 160_000_000)),
                (2, 1.0, Deadline::None)
            ]
        );
    }

    /// The type shares hold over many jobs (within 1 % of 100,000), and the draw is the same
    /// for a job whatever else is drawn.
    #[test]
    fn types_are_drawn_in_the_configured_shares() {
        let model = DeadlineModel {
            hard_pct: 20.0,
            soft_pct: 30.0,
            ..DeadlineModel::default()
        };
        let (mut hard, mut soft) = (0, 0);
        for job in 0..100_000u64 {
            match model.deadline(job, 0) {
                Deadline::Hard(_) => hard += 1,
                Deadline::Soft(_) => soft += 1,
                Deadline::None => {}
            }
        }
        assert!((19_000..21_000).contains(&hard), "{hard}");
        assert!((29_000..31_000).contains(&soft), "{soft}");
        assert_eq!(model.deadline(77, 5), model.deadline(77, 5));
    }

    #[test]
    fn bad_settings_are_refused() {
        let bad = [(60.0, 50.0, 3.0), (-1.0, 0.0, 3.0), (10.0, 10.0, 0.5)];
        for (hard_pct, soft_pct, slack) in bad {
            let m = DeadlineModel {
                hard_pct,
                soft_pct,
                slack,
                seed: 1,
            };
            assert!(m.validate().is_err(), "{m:?}");
        }
        assert!(DeadlineModel::default().validate().is_ok());
    }
}
