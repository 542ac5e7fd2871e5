//! Bargaining per class, for cells with many jobs (a GCD cell has thousands active): jobs of the
//! same deadline type, deadline slot and priority form one class, which bargains as one job
//! whose requirement, rate cap and priority are its members' sums and whose deadline is its
//! earliest member's. The class's first-slot rate is then shared equally among its members,
//! each capped by what it can use in the slot (its rate cap, and its requirement over the slot),
//! what a capped member leaves going to the others (water-filling).
//!
//! Why it is the per-job bargain, nearly: P log(x / D) = P log x - P log D, so a member's
//! requirement only bounds what it can take; members of a class have the same priority P and
//! slot weights, so the per-job optimum gives the uncapped ones equal rates x, and
//! sum_i P log x_i = (n P) log(X / n), the class's term with its rate X up to a constant. It
//! differs where requirements bind across slots, and by the deadline slot: a class's deadline
//! is its earliest member's (conservative for hard deadlines, which the class must then meet
//! together), within one slot of each member's.
//!
//! Invariant: classes are ordered by (type, slot, priority); `class_of[i]` indexes them.

use super::problem::{Allocation, Job, Problem};
use super::utility::Deadline;

/// A problem's jobs grouped into classes.
#[derive(Debug, Clone, PartialEq)]
pub struct Classes {
    /// The problem of the classes (one job each).
    pub problem: Problem,
    /// Each original job's class.
    pub class_of: Vec<usize>,
}

/// The class key of `job` in `p`: (type, deadline slot, priority bits). The slot is clamped to
/// -1 (past) ... slots (beyond the horizon).
fn key(p: &Problem, job: &Job) -> (u8, i64, u64) {
    let slots = p.capacity.len() as i64;
    let slot = |d: f64| ((d / p.slot_s).floor() as i64).clamp(-1, slots);
    let (kind, slot) = match job.deadline {
        Deadline::Hard(d) => (0, slot(d)),
        Deadline::Soft(d) => (1, slot(d)),
        Deadline::None => (2, 0),
    };
    (kind, slot, job.priority.to_bits())
}

/// Groups `p`'s jobs into classes (module doc).
pub fn group(p: &Problem) -> Classes {
    let mut order: Vec<(usize, (u8, i64, u64))> = (p.jobs.iter().enumerate())
        .map(|(i, j)| (i, key(p, j)))
        .collect();
    order.sort_by_key(|o| (o.1, o.0));
    let mut class_of = vec![0; p.jobs.len()];
    let mut jobs: Vec<Job> = Vec::new();
    let mut last_key = None;
    for (i, k) in order {
        let j = p.jobs[i];
        if last_key != Some(k) {
            jobs.push(Job {
                requirement: 0.0,
                priority: 0.0,
                rate_cap: 0.0,
                ..j
            });
            last_key = Some(k);
        }
        let c = jobs.last_mut().expect("pushed above");
        c.requirement += j.requirement;
        c.priority += j.priority;
        c.rate_cap += j.rate_cap;
        c.deadline = match (c.deadline, j.deadline) {
            (Deadline::Hard(a), Deadline::Hard(b)) => Deadline::Hard(a.min(b)),
            (Deadline::Soft(a), Deadline::Soft(b)) => Deadline::Soft(a.min(b)),
            (d, _) => d,
        };
        class_of[i] = jobs.len() - 1;
    }
    Classes {
        problem: Problem { jobs, ..p.clone() },
        class_of,
    }
}

impl Classes {
    /// Each original job's rate in the first slot: its class's, water-filled equally over the
    /// members up to what each can use in the slot (module doc).
    pub fn first_slot_rates(&self, original: &Problem, a: &Allocation) -> Vec<f64> {
        let mut rates = vec![0.0; original.jobs.len()];
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); self.problem.jobs.len()];
        for (i, &c) in self.class_of.iter().enumerate() {
            members[c].push(i);
        }
        for (c, m) in members.iter().enumerate() {
            let mut left = a.rate(c, 0);
            let usable = |i: usize| {
                let j = &original.jobs[i];
                j.rate_cap.min(j.requirement / original.slot_s)
            };
            // Serve members in increasing usable rate: each takes an equal part of what is
            // left, or what it can use.
            let mut by_fill: Vec<usize> = m.clone();
            by_fill.sort_by(|&x, &y| usable(x).total_cmp(&usable(y)).then(x.cmp(&y)));
            for (k, i) in by_fill.iter().enumerate() {
                let fair = left / (by_fill.len() - k) as f64;
                rates[*i] = fair.min(usable(*i)).max(0.0);
                left -= rates[*i];
            }
        }
        rates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nbs::problem::solve;

    fn job(requirement: f64, priority: f64, deadline: Deadline, rate_cap: f64) -> Job {
        Job {
            requirement,
            priority,
            deadline,
            rate_cap,
        }
    }

    fn problem(jobs: Vec<Job>) -> Problem {
        Problem {
            slot_s: 1.0,
            capacity: vec![10.0; 10],
            mu: 0.1,
            earliness: 0.0,
            requirement_cap: true,
            jobs,
        }
    }

    /// By hand: two identical no-deadline jobs of priority 1 and one of priority 2 form two
    /// classes (priority 1 summed to 2, and 2); bargaining per class gives each class half of the
    /// 10 units (equal summed priorities), so the two members get 2.5 each and the third 5:
    /// what the per-job bargain gives (shares 1 : 1 : 2 of 10).
    #[test]
    fn identical_jobs_bargain_as_their_class() {
        let p = problem(vec![
            job(1e3, 1.0, Deadline::None, 10.0),
            job(1e3, 2.0, Deadline::None, 10.0),
            job(1e3, 1.0, Deadline::None, 10.0),
        ]);
        let c = group(&p);
        assert_eq!(c.problem.jobs.len(), 2);
        assert_eq!(c.class_of, [0, 1, 0]);
        assert_eq!(c.problem.jobs[0].priority, 2.0);
        assert_eq!(c.problem.jobs[0].requirement, 2e3);
        let a = solve(&c.problem).unwrap();
        let rates = c.first_slot_rates(&p, &a);
        let per_job = solve(&p).unwrap();
        for (i, r) in rates.iter().enumerate() {
            assert!((r - per_job.rate(i, 0)).abs() < 1e-4, "{rates:?}");
        }
        assert!((rates[0] - 2.5).abs() < 1e-4 && (rates[1] - 5.0).abs() < 1e-4);
    }

    /// Hard deadlines in the same slot form one class due at the earliest (3.2 and 3.9 s: slot
    /// 3, due 3.2); a member's rate cap binds and the rest goes to the other member.
    #[test]
    fn a_class_is_due_at_its_earliest_and_respects_caps() {
        let p = problem(vec![
            job(8.0, 1.0, Deadline::Hard(3.9), 1.0),
            job(8.0, 1.0, Deadline::Hard(3.2), 10.0),
            job(8.0, 1.0, Deadline::Hard(7.0), 10.0),
        ]);
        let c = group(&p);
        assert_eq!(c.class_of, [0, 0, 1]);
        assert_eq!(c.problem.jobs[0].deadline, Deadline::Hard(3.2));
        assert_eq!(c.problem.jobs[0].rate_cap, 11.0);
        let a = solve(&c.problem).unwrap();
        let rates = c.first_slot_rates(&p, &a);
        assert!(rates[0] <= 1.0 + 1e-9, "{rates:?}");
        let class_rate = a.rate(0, 0);
        assert!((rates[0] + rates[1] - class_rate).abs() < 1e-6, "{rates:?}");
    }

    /// By hand: one class of three no-deadline jobs sharing a first-slot rate of 9 (slot 1 s):
    /// a job needing 1 in all takes 1, a job capped at 2 takes 2, the third the 6 left; rates
    /// do not follow requirements (P log(x / D) is P log x less a constant).
    #[test]
    fn members_share_equally_up_to_what_they_can_use() {
        let p = problem(vec![
            job(1.0, 1.0, Deadline::None, 10.0),
            job(1e3, 1.0, Deadline::None, 2.0),
            job(1e3, 1.0, Deadline::None, 10.0),
        ]);
        let c = group(&p);
        assert_eq!(c.class_of, [0, 0, 0]);
        let a = Allocation {
            x: vec![9.0; 10],
            slots: 10,
            missed_hard: Vec::new(),
            left_out: Vec::new(),
            solve_s: 0.0,
            iterations: 0,
            solved_by: crate::nbs::Solver::Clarabel,
            price: Vec::new(),
        };
        assert_eq!(c.first_slot_rates(&p, &a), [1.0, 2.0, 6.0]);
    }
}
