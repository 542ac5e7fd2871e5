//! Shares in whole tasks. A controller's shares are rates (CPU units); seed 004's Hadoop
//! plug-in "controls the number of map slots allocated to each job", so a share is applied as a
//! whole number of its job's tasks: each job keeps the tasks its share holds whole, and the
//! capacity left goes a task at a time to the jobs with the largest fractions of a task left
//! over (largest-remainder rounding), never past a job's demand or the capacity. Equal fractions
//! go by row, i.e. job ID, which is submission order: the earlier job first, as Hadoop's
//! schedulers order jobs of equal standing (the fair scheduler's comparator falls back to start
//! time, FIFO by definition). That is an order with a meaning, not an index artifact (issue 55):
//! a job's row is not where it happens to sit in a cell. Without it a share smaller than one task would starve its job, or (run a task
//! anyway) make every controller's small shares alike.
//!
//! Invariant: every share is a multiple of its job's task size (`task_cpu`), at most its demand
//! rounded up to a task, and the shares sum to at most the capacity or to what the controller
//! gave, whichever is larger.

use super::Jobs;

/// Rounds `jobs`' shares to whole tasks within `capacity_cpu` (module doc).
pub fn whole_tasks(jobs: &mut Jobs, capacity_cpu: u64) {
    let demand = jobs.demand();
    let mut left = capacity_cpu;
    let mut fractions: Vec<(f64, usize)> = Vec::new();
    for r in 0..jobs.len() {
        let task = jobs.task_cpu[r].max(1);
        let share = jobs.share_cpu[r];
        let whole = share / task * task;
        jobs.share_cpu[r] = whole;
        left = left.saturating_sub(whole);
        if share > whole {
            fractions.push(((share - whole) as f64 / task as f64, r));
        }
    }
    fractions.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, r) in fractions {
        let task = jobs.task_cpu[r].max(1);
        if task <= left && jobs.share_cpu[r] < demand[r] {
            jobs.share_cpu[r] += task;
            left -= task;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(shares: &[u64], task: u64, demand: u64) -> Jobs {
        let n = shares.len();
        Jobs {
            job_id: (1..=n as u64).collect(),
            running_cpu: vec![0; n],
            pending_cpu: vec![demand; n],
            share_cpu: shares.to_vec(),
            task_cpu: vec![task; n],
            ..Jobs::default()
        }
    }

    /// By hand, seed 004's Hadoop cell: 6 map slots of 10 units, 10 jobs of 3 tasks. Equal
    /// shares of 6 units each (0.6 of a task): no job holds a whole task, all have the same
    /// fraction, so the first six by job ID get one slot each and the others none.
    #[test]
    fn equal_fractions_go_by_job_id() {
        let mut j = jobs(&[6; 10], 10, 30);
        whole_tasks(&mut j, 60);
        assert_eq!(j.share_cpu, [10, 10, 10, 10, 10, 10, 0, 0, 0, 0]);
    }

    /// By hand: shares 25, 17, 18 of 60 with tasks of 10: whole 20, 10, 10 (40), 20 left; the
    /// fractions 0.5, 0.7, 0.8 give the 20 to jobs 3 and 2 (25 -> 20, 17 -> 20, 18 -> 20). With
    /// job 3 wanting only 10, its fraction is skipped and job 1 gets the task.
    #[test]
    fn largest_remainders_within_capacity_and_demand() {
        let mut j = jobs(&[25, 17, 18], 10, 30);
        whole_tasks(&mut j, 60);
        assert_eq!(j.share_cpu, [20, 20, 20]);
        let mut j = jobs(&[25, 17, 18], 10, 30);
        j.pending_cpu[2] = 10;
        whole_tasks(&mut j, 60);
        assert_eq!(j.share_cpu, [30, 20, 10]);
    }

    /// Exhaustively over small cases: shares are whole tasks, sum within the capacity, never
    /// more than a task above the controller's share, and use the capacity while some job with a
    /// fraction still wants a task that fits.
    #[test]
    fn invariants_on_small_cases() {
        for capacity in 0..=40u64 {
            for a in 0..=capacity.min(30) {
                for b in 0..=(capacity - a).min(30) {
                    let mut j = jobs(&[a, b], 10, 30);
                    whole_tasks(&mut j, capacity);
                    let s = &j.share_cpu;
                    assert!(s.iter().all(|x| x % 10 == 0), "{a} {b} {capacity}: {s:?}");
                    assert!(s[0] + s[1] <= capacity, "{a} {b} {capacity}: {s:?}");
                    assert!(s[0] < a + 10 && s[1] < b + 10);
                    let left = capacity - s[0] - s[1];
                    let unmet = (a % 10 > 0 && s[0] < a) || (b % 10 > 0 && s[1] < b);
                    assert!(!(unmet && left >= 10), "{a} {b} {capacity}: {s:?}");
                }
            }
        }
    }
}
