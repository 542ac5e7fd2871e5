//! Seed 004's "Fair or Equal scheduling, in which each job is allocated the same share of
//! cluster resources": the cell's CPU divided equally among the active jobs, by progressive
//! filling (max-min fairness): a job that needs less than an equal share (its running and
//! pending requests) gets what it needs, and what it leaves is shared equally by the others.
//! With every job needing more than an equal share, each gets capacity / jobs.

use super::{Controller, Jobs};

/// The Equal controller (module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct Equal;

impl Controller for Equal {
    const NAME: &'static str = "equal-share";

    fn allocate(&mut self, jobs: &mut Jobs, capacity_cpu: u64, _now_us: i64) {
        let demand: Vec<u64> = (0..jobs.len())
            .map(|r| jobs.running_cpu[r] + jobs.pending_cpu[r])
            .collect();
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by_key(|&r| (demand[r], r));
        let mut left = capacity_cpu;
        for (k, &r) in order.iter().enumerate() {
            let equal = left / (order.len() - k) as u64;
            let share = demand[r].min(equal);
            jobs.share_cpu[r] = share;
            left -= share;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(demands: &[u64]) -> Jobs {
        Jobs {
            job_id: (0..demands.len() as u64).collect(),
            running_cpu: vec![0; demands.len()],
            pending_cpu: demands.to_vec(),
            share_cpu: vec![0; demands.len()],
        }
    }

    /// By hand: 120 units among demands 10, 100, 100: the first needs 10, the others split
    /// the 110 left (55 each). Demands 80 and 80 of 100: 50 each.
    #[test]
    fn progressive_filling() {
        let mut j = jobs(&[100, 10, 100]);
        Equal.allocate(&mut j, 120, 0);
        assert_eq!(j.share_cpu, [55, 10, 55]);
        let mut j = jobs(&[80, 80]);
        Equal.allocate(&mut j, 100, 0);
        assert_eq!(j.share_cpu, [50, 50]);
        let mut j = jobs(&[]);
        Equal.allocate(&mut j, 100, 0);
        assert!(j.share_cpu.is_empty());
    }
}
