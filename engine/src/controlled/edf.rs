//! Seed 004's "Earliest-Deadline-First (EDF) scheduling, in which jobs are processed in
//! increasing order of their deadlines": each job in deadline order takes its whole demand
//! while capacity lasts; jobs without a deadline come last, in job ID order.

use ingest::scenario::side::Deadline;

use super::{Controller, Jobs};

/// The EDF controller (module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct Edf;

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
            jobs.share_cpu[r] = demand[r].min(left);
            left -= jobs.share_cpu[r];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 100 units; job 3 (deadline 20 s) first with its 70, job 1 (deadline 50 s) the
    /// 30 left of its 50, job 2 (no deadline) nothing.
    #[test]
    fn earliest_deadline_takes_its_demand_first() {
        let mut jobs = Jobs {
            job_id: vec![1, 2, 3],
            running_cpu: vec![0, 10, 20],
            pending_cpu: vec![50, 10, 50],
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
        };
        Edf.allocate(&mut jobs, 100, 0);
        assert_eq!(jobs.share_cpu, [30, 0, 70]);
    }
}
