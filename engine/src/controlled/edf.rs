//! Seed 004's "Earliest-Deadline-First (EDF) scheduling, in which jobs are processed in
//! increasing order of their deadlines": each job in deadline order takes its whole demand
//! while capacity lasts; jobs without a deadline come last, in job ID order.
//!
//! With [`Edf::one_job`] (an option, `[policy] one_job = true`) the jobs are processed one at a
//! time, as a one-machine EDF: the earliest-deadline job with demand gets the whole cell as its
//! share, held until the next allocation (an arrival or departure), and every other job none,
//! even where the first leaves slots free. The seed's Hadoop plug-in "controls the number of
//! map slots allocated to each job"; the seed does not say whether its EDF handed the slots a
//! job could not use to the next job (the default) or not (this option).

use ingest::scenario::side::Deadline;

use super::{Controller, Jobs};

/// The EDF controller (module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct Edf {
    /// Serve one job at a time (module doc); false: each job up to its demand while capacity
    /// lasts.
    pub one_job: bool,
}

impl Controller for Edf {
    const NAME: &'static str = "edf";
    const NEEDS_FACTS: bool = true;

    fn allocate(&mut self, jobs: &mut Jobs, capacity_cpu: u64, _now_us: i64) {
        let demand = jobs.demand();
        let deadline = |r: usize| match jobs.deadline[r] {
            Deadline::Hard(t) | Deadline::Soft(t) => t,
            Deadline::None => i64::MAX,
        };
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by_key(|&r| (deadline(r), jobs.job_id[r]));
        let mut left = capacity_cpu;
        for r in order {
            jobs.share_cpu[r] = match self.one_job {
                false => demand[r].min(left),
                true if demand[r] > 0 => left,
                true => 0,
            };
            left -= jobs.share_cpu[r];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs 1-3 due at 50 s (soft), never and 20 s (hard), with tasks of 10 units running and
    /// pending as given.
    fn three_jobs(running_cpu: [u64; 3], pending_cpu: [u64; 3]) -> Jobs {
        Jobs {
            job_id: vec![1, 2, 3],
            running_cpu: running_cpu.to_vec(),
            pending_cpu: pending_cpu.to_vec(),
            task_cpu: vec![10; 3],
            share_cpu: vec![0; 3],
            deadline: vec![
                Deadline::Soft(50_000_000),
                Deadline::None,
                Deadline::Hard(20_000_000),
            ],
            priority: vec![1.0; 3],
            work_cpu_s: vec![0.0; 3],
            reduce_s: vec![0.0; 3],
            ..Jobs::default()
        }
    }

    /// By hand: 100 units; job 3 (deadline 20 s) first with its 70, job 1 (deadline 50 s) the
    /// 30 left of its 50, job 2 (no deadline) nothing.
    #[test]
    fn earliest_deadline_takes_its_demand_first() {
        let mut jobs = three_jobs([0, 10, 20], [50, 10, 50]);
        Edf::default().allocate(&mut jobs, 100, 0);
        assert_eq!(jobs.share_cpu, [30, 0, 70]);
        // One job at a time: job 3 holds all 100 though it asks for 70.
        Edf { one_job: true }.allocate(&mut jobs, 100, 0);
        assert_eq!(jobs.share_cpu, [0, 0, 100]);
    }

    /// By hand: one job at a time skips a job with nothing to run (job 3, deadline 20 s, all
    /// its tasks done) and gives the cell to the next by deadline, job 1.
    #[test]
    fn one_job_at_a_time_skips_jobs_without_demand() {
        let mut jobs = three_jobs([0, 10, 0], [50, 10, 0]);
        Edf { one_job: true }.allocate(&mut jobs, 100, 0);
        assert_eq!(jobs.share_cpu, [100, 0, 0]);
    }
}
