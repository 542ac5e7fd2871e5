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
        let weights = vec![1.0; jobs.len()];
        jobs.share_cpu = fill(&jobs.demand(), &weights, capacity_cpu);
    }
}

/// Weighted progressive filling (water-filling): `capacity` shared in proportion to `weight`,
/// a job never getting more than its `demand`, what it leaves shared by the others. Jobs are
/// served in increasing order of demand per weight (ties by row), each taking
/// min(demand, left x weight / the weight not yet served), rounded down.
pub fn fill(demand: &[u64], weight: &[f64], capacity: u64) -> Vec<u64> {
    let mut order: Vec<usize> = (0..demand.len()).collect();
    order.sort_by(|&a, &b| {
        (demand[a] as f64 / weight[a])
            .total_cmp(&(demand[b] as f64 / weight[b]))
            .then(a.cmp(&b))
    });
    let mut shares = vec![0; demand.len()];
    let (mut left, mut weight_left) = (capacity, weight.iter().sum::<f64>());
    for r in order {
        let fair = if weight_left > 0.0 {
            (left as f64 * weight[r] / weight_left).floor() as u64
        } else {
            0
        };
        shares[r] = demand[r].min(fair).min(left);
        left -= shares[r];
        weight_left -= weight[r];
    }
    shares
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
            ..Jobs::default()
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

    /// By hand, weights 1 and 3: 100 units among demands 60 and 60: 25 and 75 by weight, but
    /// job 1 needs only 60, so job 0 gets the 40 left.
    #[test]
    fn weighted_filling() {
        assert_eq!(fill(&[60, 60], &[1.0, 3.0], 100), [40, 60]);
        assert_eq!(fill(&[100, 100], &[1.0, 3.0], 100), [25, 75]);
    }
}
