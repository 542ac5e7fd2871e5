//! The bargain in the units both solvers work in (`problem.rs`'s Clarabel program and
//! `interior.rs`'s structured interior point): capacities in units of the largest, each job's
//! rates in units of its own rate cap (or of that capacity when uncapped), so the solvers see
//! numbers near 1 even where a job can use a ten-thousandth of the cell; the slots' weights;
//! which jobs take part; what each job's y_i is normalised by. Invariant: built from the
//! problem alone (and the hard jobs relaxed to soft), so both solvers solve the same program.

use super::problem::Problem;
use super::utility::{Deadline, slot_weight};

/// The program's data (module doc); per-job vectors are indexed by the problem's job index,
/// per-rate ones at `i * slots + t`.
pub(super) struct Units {
    /// Slots in the horizon.
    pub slots: usize,
    /// The largest capacity (capacity rows are in its units).
    pub scale: f64,
    /// Each job's rate unit.
    pub unit: Vec<f64>,
    /// The weight of job i's resource in slot t (below 1e-9, 0).
    pub weight: Vec<f64>,
    /// The requirement bargained with (capped at what the horizon can give, but for hard jobs).
    pub requirement: Vec<f64>,
    /// What y_i is normalised by.
    pub norm: Vec<f64>,
    /// Whether job i takes part (some slot gives it value and it can use something).
    pub live: Vec<bool>,
    /// Whether job i bargains with a hard deadline (y_i >= 1).
    pub hard: Vec<bool>,
    /// Its priority over the largest.
    pub priority: Vec<f64>,
    /// The largest priority (the objective's scale: a capacity row's multiplier in the
    /// problem's units is `top / scale` times the solvers').
    pub top: f64,
}

/// The deadline job `i` bargains with (a relaxed hard one as soft).
fn bargaining_deadline(p: &Problem, i: usize, relaxed: &[usize]) -> Deadline {
    match p.jobs[i].deadline {
        Deadline::Hard(d) if relaxed.contains(&i) => Deadline::Soft(d),
        d => d,
    }
}

impl Units {
    /// `p` with the hard jobs in `relaxed` bargaining as soft ones.
    pub fn new(p: &Problem, relaxed: &[usize]) -> Units {
        let (n, slots) = (p.jobs.len(), p.capacity.len());
        let scale = p.capacity.iter().copied().fold(0.0, f64::max).max(1e-12);
        let unit: Vec<f64> = (p.jobs.iter())
            .map(|j| match j.rate_cap {
                c if c.is_finite() && c > 0.0 => c.min(scale),
                _ => scale,
            })
            .collect();
        let deadline: Vec<Deadline> = (0..n).map(|i| bargaining_deadline(p, i, relaxed)).collect();
        // A slot weight below 1e-9 (a soft deadline long past: e^-21) counts as 0: resource
        // there is worth nothing to the bargain, and such coefficients stall the solver.
        let weight: Vec<f64> = (0..n * slots)
            .map(|k| {
                let t = k % slots;
                let w = slot_weight(
                    deadline[k / slots],
                    p.mu,
                    t as f64 * p.slot_s,
                    (t + 1) as f64 * p.slot_s,
                );
                if w < 1e-9 { 0.0 } else { w }
            })
            .collect();
        // A requirement no schedule within the horizon can reach (more than the job's rate cap,
        // or the largest capacity, for the whole horizon) does not bind, and P log(y) with it
        // differs from P log(y) with the most the horizon can give only by a constant:
        // bargaining with that instead leaves the optimum as it is and keeps the solver's
        // numbers near 1 (GCD jobs need from 1 to 1e9 units). A hard deadline keeps its
        // requirement.
        let horizon_s = slots as f64 * p.slot_s;
        let hard: Vec<bool> = deadline
            .iter()
            .map(|d| matches!(d, Deadline::Hard(_)))
            .collect();
        let requirement: Vec<f64> = (p.jobs.iter().enumerate())
            .map(|(i, j)| match hard[i] {
                true => j.requirement,
                false => j.requirement.min(j.rate_cap.min(scale) * horizon_s),
            })
            .collect();
        // What y_i is normalised by in the cone: D_i; without the requirement cap, a job
        // without a hard deadline's D_i only moves log(y_i) by a constant, so the most the
        // horizon can give it stands in (the optimum is the same, the numbers stay near 1).
        let norm: Vec<f64> = (p.jobs.iter().enumerate())
            .map(|(i, j)| match hard[i] {
                true => j.requirement,
                false if !p.requirement_cap => j.rate_cap.min(scale) * horizon_s,
                false => requirement[i],
            })
            .collect();
        // A job no slot with capacity gives value to (a deadline already past, a cell with no
        // capacity before it), or that can use nothing (a rate cap of 0: tasks requesting no
        // CPU), takes no part: log(0) has no optimum.
        let live: Vec<bool> = (0..n)
            .map(|i| {
                p.jobs[i].rate_cap > 0.0
                    && (0..slots).any(|t| weight[i * slots + t] > 0.0 && p.capacity[t] > 0.0)
            })
            .collect();
        // Priorities over the largest (the optimum does not change with the objective's
        // scale): classes of thousands of jobs sum to priorities 1e5 times a lone job's.
        let top = (p.jobs.iter())
            .map(|j| j.priority)
            .fold(0.0, f64::max)
            .max(1e-300);
        let priority = p.jobs.iter().map(|j| j.priority / top).collect();

        Units {
            slots,
            scale,
            unit,
            weight,
            requirement,
            norm,
            live,
            hard,
            priority,
            top,
        }
    }

    /// The capacity rows' multipliers in `p`'s units (`Allocation::price`) from the solvers'
    /// (`z`, one per slot; a slot without capacity is priced 0).
    pub fn prices(&self, p: &Problem, z: impl IntoIterator<Item = f64>) -> Vec<f64> {
        let per_unit = self.top / self.scale;
        (z.into_iter().zip(&p.capacity))
            .map(|(z, &c)| if c > 0.0 { z.max(0.0) * per_unit } else { 0.0 })
            .collect()
    }

    /// Job i's y_i coefficient on its (scaled) rate in slot t: y_i = sum_t a x.
    pub fn y_coefficient(&self, p: &Problem, i: usize, t: usize) -> f64 {
        self.weight[i * self.slots + t] * p.slot_s * self.unit[i] / self.norm[i]
    }

    /// Job i's earliness gain on its (scaled) rate in slot t (maximised; 0 without the
    /// tie-break).
    pub fn earliness_gain(&self, p: &Problem, i: usize, t: usize) -> f64 {
        let early = 1.0 - (t as f64 + 0.5) / self.slots as f64;
        p.earliness * self.priority[i] * early * p.slot_s * self.unit[i] / self.requirement[i]
    }
}
