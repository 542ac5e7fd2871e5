//! What a deadline-aware controller is told about the jobs (seed 004: each job's requirement
//! D_i, priority P_i and deadline): the run's [`JobTerms`] give deadlines and priorities (a
//! scenario's side tables, or the `[deadlines]` model on a GCD trace), the trace's recorded run
//! times the work left ([`RunTimes`], as omniscient is told them).

use rayon::prelude::*;

use super::Jobs;
use crate::cell::{Cell, TaskState};
use crate::deadlines::JobTerms;
use crate::phases::Gate;
use crate::run_times::RunTimes;

/// Tasks per rayon job at least in [`JobFacts::fill`]'s lookups.
const TASKS_PER_CHUNK: usize = 4096;

/// What one task adds to its job's row (`row`): a held reduce task's run time (s), or CPU
/// units x seconds of work left.
enum Part {
    None,
    Reduce(usize, f64),
    Work(usize, f64),
}

/// The jobs' deadlines, priorities and run times of a trace.
#[derive(Debug, Clone, Default)]
pub struct JobFacts {
    terms: JobTerms,
    run_times: RunTimes,
}

impl JobFacts {
    /// The facts given directly (tests, embedding).
    pub fn new(terms: JobTerms, run_times: RunTimes) -> JobFacts {
        JobFacts { terms, run_times }
    }

    /// Sets every row's deadline and priority and, with `work`, its work left at `now_us`: CPU
    /// units x seconds of its pending tasks' run times and its running tasks' remaining times (0
    /// for a run time the trace does not end), and the reduce phase still to come (the longest
    /// run of the reduce tasks `gate` holds back). The work takes a pass over every task with a
    /// run-time lookup each, so a controller asks for it only when it will use it.
    pub fn fill(&self, cell: &Cell, (jobs, gate): (&mut Jobs, &Gate), now_us: i64, work: bool) {
        for r in 0..jobs.len() {
            (jobs.priority[r], jobs.deadline[r]) = self.terms.job(jobs.job_id[r]);
        }
        jobs.work_cpu_s.iter_mut().for_each(|w| *w = 0.0);
        jobs.reduce_s.iter_mut().for_each(|w| *w = 0.0);
        if !work {
            return;
        }
        // The lookups (two binary searches a task) on rayon; the sums in task order, as one
        // thread would make them.
        let tasks = &cell.tasks;
        let jobs_ro: &Jobs = jobs;
        let parts: Vec<Part> = crate::parallel_time::region(|| {
            (0..tasks.len())
                .into_par_iter()
                .with_min_len(TASKS_PER_CHUNK)
                .map(|i| {
                    let running = match tasks.state()[i] {
                        TaskState::Running => true,
                        TaskState::Pending => false,
                        TaskState::Free => return Part::None,
                    };
                    let Some(r) = jobs_ro.row(tasks.job_id()[i]) else {
                        return Part::None;
                    };
                    let run_us = self.run_times.of(tasks.job_id()[i], tasks.task_index()[i]);
                    if run_us == RunTimes::UNKNOWN {
                        return Part::None;
                    }
                    if !running && gate.holds(tasks.job_id()[i], tasks.task_index()[i]) {
                        return Part::Reduce(r, run_us as f64 / 1e6);
                    }
                    let left_us = if running {
                        (run_us - (now_us - tasks.start_us()[i])).max(0)
                    } else {
                        run_us
                    };
                    Part::Work(r, tasks.cpu_req()[i] as f64 * left_us as f64 / 1e6)
                })
                .collect()
        });
        for part in parts {
            match part {
                Part::None => {}
                Part::Reduce(r, s) => jobs.reduce_s[r] = jobs.reduce_s[r].max(s),
                Part::Work(r, cpu_s) => jobs.work_cpu_s[r] += cpu_s,
            }
        }
    }
}
