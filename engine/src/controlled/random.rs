//! Seed 004's "Random scheduling in which each job is allocated a random share of the cluster
//! resources": at each allocation every job draws a weight uniformly in (0, 1] and the cell's
//! CPU is water-filled by those weights up to each job's demand ([`super::fill`]). The draws
//! come from the run's seed and the allocation's time, so a run is reproducible.

use ingest::rng::{Rng, hash_keys};

use super::{Controller, Jobs, fill};

/// The Random controller (module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomShare {
    seed: u64,
}

impl RandomShare {
    /// The controller drawing from the run's `seed`.
    pub fn new(seed: u64) -> RandomShare {
        RandomShare { seed }
    }
}

impl Controller for RandomShare {
    const NAME: &'static str = "random-share";

    fn allocate(&mut self, jobs: &mut Jobs, capacity_cpu: u64, now_us: i64) {
        let mut rng = Rng::new(hash_keys(self.seed, &[0x5a4e, now_us as u64]), 0);
        let weights: Vec<f64> = (0..jobs.len()).map(|_| 1.0 - rng.f64()).collect();
        jobs.share_cpu = fill(&jobs.demand(), &weights, capacity_cpu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shares are work-conserving (the capacity is used while demand lasts), within demand,
    /// reproducible for a seed and time, and differ between times.
    #[test]
    fn random_shares_fill_the_cell_within_demand() {
        let jobs = || Jobs {
            job_id: vec![1, 2, 3],
            running_cpu: vec![0; 3],
            pending_cpu: vec![100, 100, 10],
            share_cpu: vec![0; 3],
            ..Jobs::default()
        };
        let mut a = jobs();
        RandomShare::new(7).allocate(&mut a, 120, 0);
        assert!(a.share_cpu.iter().zip(a.demand()).all(|(s, d)| *s <= d));
        let used: u64 = a.share_cpu.iter().sum();
        assert!((118..=120).contains(&used), "{:?}", a.share_cpu);
        let mut b = jobs();
        RandomShare::new(7).allocate(&mut b, 120, 0);
        assert_eq!(a.share_cpu, b.share_cpu);
        let differ = (1..20).any(|t| {
            let mut c = jobs();
            RandomShare::new(7).allocate(&mut c, 120, t * 1_000_000);
            c.share_cpu != a.share_cpu
        });
        assert!(differ);
    }
}
