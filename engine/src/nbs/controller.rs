//! Controller `nbs`: at each arrival, departure or capacity change (`controlled/`), the jobs'
//! shares for now are the first slot of seed 004's optimisation over the next `horizon_slots`
//! slots of `slot_s` (`problem.rs`): each job's requirement is its work left (CPU x seconds,
//! from the recorded run times), its priority and deadline come from the scenario's side
//! tables, its rate is capped by its demand (what its tasks request), the capacity is the
//! cell's online CPU in every slot. A hard deadline already passed, or that cannot be met,
//! bargains as soft (`problem.rs`); a solve that fails falls back to shares by priority
//! (water-filled), counted.

use serde::{Deserialize, Serialize};

use super::problem::{Job, Problem, solve};
use super::utility::Deadline;
use crate::controlled::{Controlled, Controller, Jobs, fill};
use crate::greedy::FirstFit;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};
use ingest::scenario::side::Deadline as SideDeadline;

/// The settings of controller `nbs`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NbsConfig {
    /// Slot length of the optimisation, seconds (the seed's "time slot"; chosen: 10 s).
    pub slot_s: f64,
    /// Slots in the horizon t_ref (chosen: 30, so 5 minutes at 10 s).
    pub horizon_slots: u32,
    /// Soft deadlines' decay per second, mu (chosen: 0.1).
    pub mu: f64,
    /// Weight of the earliness tie-break among (nearly) equal bargains (`Problem::earliness`;
    /// chosen: 1e-3; 0 is the seed's objective alone). It moves seed 004's Figs. 4 and 6
    /// (with slack before every deadline, it is what serves high priorities first).
    pub earliness: f64,
}

impl Default for NbsConfig {
    fn default() -> Self {
        NbsConfig {
            slot_s: 10.0,
            horizon_slots: 30,
            mu: 0.1,
            earliness: 1e-3,
        }
    }
}

impl crate::policies::PolicySpec for NbsConfig {
    type Policy = Controlled<Nbs, FirstFit>;

    const ABOUT: &'static str = "controller + placer (seed 004): shares maximising the Nash bargaining product of the jobs' deadline-aware utilities over a horizon (Clarabel), re-solved at each arrival, departure or capacity change; first-fit places within the shares";

    fn validate(&self, _run: &crate::RunConfig) -> Result<(), String> {
        if !(self.slot_s.is_finite() && self.slot_s > 0.0) {
            return Err(format!("slot_s must be positive, got {}", self.slot_s));
        }
        if !(1..=1_000).contains(&self.horizon_slots) {
            return Err(format!(
                "horizon_slots must be 1..=1,000, got {}",
                self.horizon_slots
            ));
        }
        if !(self.mu.is_finite() && self.mu >= 0.0) {
            return Err(format!("mu must be finite and >= 0, got {}", self.mu));
        }
        if !(self.earliness.is_finite() && (0.0..=1.0).contains(&self.earliness)) {
            return Err(format!("earliness must be 0..=1, got {}", self.earliness));
        }
        Ok(())
    }

    fn build(
        &self,
        run: &crate::RunConfig,
        trace_dir: &std::path::Path,
    ) -> crate::Result<Self::Policy> {
        Controlled::of_trace(Nbs::new(*self), run, trace_dir)
    }
}

/// The NBS controller (module doc), with its solve statistics.
#[derive(Debug, Clone, Default)]
pub struct Nbs {
    config: NbsConfig,
    /// Solves, failed solves, and their total wall time in seconds.
    stats: (u64, u64, f64),
}

impl Nbs {
    /// The controller with `config`.
    pub fn new(config: NbsConfig) -> Nbs {
        Nbs {
            config,
            stats: (0, 0, 0.0),
        }
    }

    /// (solves, failed solves, total solver seconds) so far.
    pub fn stats(&self) -> (u64, u64, f64) {
        self.stats
    }

    /// The problem for `jobs` at `now_us` with `capacity_cpu`.
    pub fn problem(&self, jobs: &Jobs, capacity_cpu: u64, now_us: i64) -> Problem {
        let c = self.config;
        let demand = jobs.demand();
        let horizon_s = c.slot_s * c.horizon_slots as f64;
        let relative = |t: i64| (t - now_us) as f64 / 1e6;
        Problem {
            slot_s: c.slot_s,
            capacity: vec![capacity_cpu as f64; c.horizon_slots as usize],
            mu: c.mu,
            earliness: c.earliness,
            jobs: (0..jobs.len())
                .map(|r| Job {
                    // A job whose work is unknown (a run the trace does not end) counts as
                    // needing its demand over the whole horizon.
                    requirement: if jobs.work_cpu_s[r] > 0.0 {
                        jobs.work_cpu_s[r]
                    } else {
                        (demand[r] as f64 * horizon_s).max(1.0)
                    },
                    priority: jobs.priority[r].max(1e-9),
                    deadline: match jobs.deadline[r] {
                        SideDeadline::Hard(t) => Deadline::Hard(relative(t)),
                        SideDeadline::Soft(t) => Deadline::Soft(relative(t)),
                        SideDeadline::None => Deadline::None,
                    },
                    rate_cap: demand[r] as f64,
                })
                .collect(),
        }
    }
}

impl Controller for Nbs {
    const NAME: &'static str = "nbs";
    const NEEDS_FACTS: bool = true;

    fn allocate(&mut self, jobs: &mut Jobs, capacity_cpu: u64, now_us: i64) {
        if jobs.is_empty() {
            return;
        }
        let demand = jobs.demand();
        let problem = self.problem(jobs, capacity_cpu, now_us);
        self.stats.0 += 1;
        match solve(&problem) {
            Ok(a) => {
                self.stats.2 += a.solve_s;
                for (r, (share, want)) in jobs.share_cpu.iter_mut().zip(&demand).enumerate() {
                    // Rounded to the nearest unit: the solver's rates are within 1e-8 of the
                    // optimum, so a job's whole demand is not lost to 0.999999.
                    let rate = a.rate(r, 0).round().max(0.0) as u64;
                    *share = rate.min(*want);
                }
            }
            Err(_) => {
                self.stats.1 += 1;
                jobs.share_cpu = fill(&demand, &jobs.priority, capacity_cpu);
            }
        }
    }

    fn save_state(&self, w: &mut SectionWriter) {
        w.serde(&(self.stats.0, self.stats.1));
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        (self.stats.0, self.stats.1) = r.serde()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 100 CPU units, two jobs of equal work and demand 100 each, priorities 1 and 3,
    /// no deadlines, work beyond the horizon: the first slot is shared 25 / 75 (the KKT
    /// solution of max log y1 + 3 log y2). A hard deadline in 10 s for job 1 with work 800
    /// (80 units for 10 s) gives it 80 now.
    #[test]
    fn shares_are_the_first_slot_of_the_bargain() {
        let mut jobs = Jobs {
            job_id: vec![1, 2],
            running_cpu: vec![0, 0],
            pending_cpu: vec![100, 100],
            task_cpu: vec![1, 1],
            share_cpu: vec![0, 0],
            deadline: vec![SideDeadline::None, SideDeadline::None],
            priority: vec![1.0, 3.0],
            work_cpu_s: vec![1e6, 1e6],
        };
        // The seed's objective alone (the earliness tie-break would tilt the first slot
        // towards the higher priority per requirement).
        let mut nbs = Nbs::new(NbsConfig {
            earliness: 0.0,
            ..NbsConfig::default()
        });
        nbs.allocate(&mut jobs, 100, 0);
        assert_eq!(jobs.share_cpu, [25, 75]);
        jobs.deadline[0] = SideDeadline::Hard(10_000_000);
        jobs.work_cpu_s[0] = 800.0;
        nbs.allocate(&mut jobs, 100, 0);
        assert_eq!(jobs.share_cpu[0], 80);
        assert_eq!(nbs.stats().0, 2);
        assert_eq!(nbs.stats().1, 0);
    }
}
