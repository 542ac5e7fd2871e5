//! MapReduce phases (seed 004's Hadoop jobs): a scenario's side tables may mark a job's last
//! tasks as reduce tasks ([`ingest::scenario::side::Phase`]), which may start only once every
//! map task of the job has ended. The replay submits them with the job (as Hadoop creates a
//! job's reduce tasks with it); a policy that honours phases holds them back with a [`Gate`]
//! rebuilt each tick: the greedy placers and the controllers over them do (`greedy/`,
//! `controlled/`), every other policy refuses a trace with reduce tasks
//! ([`crate::policy::PolicySpec::HONOURS_PHASES`]).
//!
//! Invariants: [`Phases`] rows are sorted by job ID, one per job with reduce tasks, with the
//! task index its reduce tasks start from (the side tables keep a job's reduce tasks after its
//! maps); a [`Gate`] lists, by job ID, the jobs of those with a map task pending or running.

use std::path::{Path, PathBuf};

use crate::cell::{Cell, TaskState};
use crate::deadlines::JobTerms;
use crate::error::{EngineError, Result};

/// The jobs with reduce tasks, each with the task index its reduce tasks start from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Phases {
    reduce_from: Vec<(u64, u32)>,
}

impl Phases {
    /// The phases of a run's job terms (none but a scenario's side tables give any).
    pub fn of_terms(terms: &JobTerms) -> Phases {
        match terms {
            JobTerms::Side(side) => Phases {
                reduce_from: side.reduce_starts(),
            },
            _ => Phases::default(),
        }
    }

    /// The phases given directly (tests): (job, first reduce task index), sorted by job.
    #[cfg(test)]
    pub(crate) fn new(reduce_from: Vec<(u64, u32)>) -> Phases {
        Phases { reduce_from }
    }

    /// True when no job has reduce tasks.
    pub fn is_empty(&self) -> bool {
        self.reduce_from.is_empty()
    }

    /// This tick's gate: the jobs with reduce tasks whose maps have not all ended.
    pub fn gate(&self, cell: &Cell) -> Gate {
        if self.is_empty() {
            return Gate::default();
        }
        let tasks = &cell.tasks;
        let mut open: Vec<(u64, u32)> = (0..tasks.len())
            .filter(|&i| tasks.state()[i] != TaskState::Free)
            .filter_map(|i| {
                let job = tasks.job_id()[i];
                let k = self.reduce_from.binary_search_by_key(&job, |r| r.0).ok()?;
                let from = self.reduce_from[k].1;
                (tasks.task_index()[i] < from).then_some((job, from))
            })
            .collect();
        open.sort_unstable();
        open.dedup();
        Gate { held_from: open }
    }
}

/// The jobs whose reduce tasks wait for their maps this tick (module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gate {
    /// (job, first reduce task index), by job ID.
    held_from: Vec<(u64, u32)>,
}

impl Gate {
    /// True when task `task_index` of job `job_id` is a reduce task whose job still has a map
    /// task pending or running.
    pub fn holds(&self, job_id: u64, task_index: u32) -> bool {
        !self.held_from.is_empty()
            && self
                .held_from
                .binary_search_by_key(&job_id, |h| h.0)
                .is_ok_and(|k| task_index >= self.held_from[k].1)
    }
}

/// Refuses `trace_dir` for `policy` when the trace has reduce tasks and the policy does not hold
/// them back (it would run them with their maps: a silently wrong result).
pub fn refuse_reduce_tasks(policy: &str, trace_dir: &Path) -> Result<()> {
    let Some(side) = ingest::scenario::side::SideTables::read(trace_dir)? else {
        return Ok(());
    };
    if !side.has_reduce_tasks() {
        return Ok(());
    }
    let path: PathBuf = trace_dir
        .join(ingest::scenario::side::DIR)
        .join(ingest::scenario::side::FILES[0]);
    Err(EngineError::Config {
        path,
        problem: format!(
            "this scenario's jobs have reduce tasks, which must wait for their map tasks, and policy {policy} does not hold them back; run it with first-fit, best-fit, random, equal-share, random-share, edf or nbs, or generate the scenario without --reduce-tasks"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: job 1 has maps 0-1 and a reduce from 2, job 2 maps 0-2 and reduces from 3,
    /// job 3 no reduce. While map 1 of job 1 runs, its reduce 2 is held; job 2's maps have all
    /// ended, so its reduces are not; job 3 is never held.
    #[test]
    fn reduces_wait_for_their_jobs_maps() {
        let phases = Phases::new(vec![(1, 2), (2, 3)]);
        let mut cell = Cell::with_machines(1, 100, 100);
        let mut task = |job: u64, i: u32| {
            let t = cell.tasks.alloc(job, i, 0, 0);
            cell.set_request(t, 10, 1);
            t
        };
        task(1, 1);
        task(1, 2);
        task(2, 3);
        task(2, 4);
        task(3, 0);
        let gate = phases.gate(&cell);
        assert!(gate.holds(1, 2));
        assert!(!gate.holds(1, 1));
        assert!(!gate.holds(2, 3) && !gate.holds(2, 4));
        assert!(!gate.holds(3, 0) && !gate.holds(3, 5));
        assert_eq!(Phases::default().gate(&cell), Gate::default());
    }
}
