//! When a node can start a task, knowing when everything on it ends: a pure function of the
//! node's free amounts now, the releases to come and the time before which the task may not
//! start, tested against a search over every candidate time.
//!
//! The amounts are those of the greedy fit rule (`greedy::fit`): CPU and memory in use, and the
//! production CPU and memory requests, which only a production task needs room in. The node's
//! queue is FIFO: a task joins behind those already waiting there, so it may not start before
//! the last of them, by which time they have all started; `free_now` counts them as taken
//! already, and free room only grows from then on (each release adds its amounts back).

pub use crate::greedy::fit::Amounts;
use crate::greedy::fit::covers;

/// What a task running or waiting on the node gives back when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release {
    /// When, microseconds ([`crate::run_times::RunTimes::UNKNOWN`]: never known to end).
    pub end_us: i64,
    /// What it frees.
    pub amounts: Amounts,
}

/// The first time at or after `not_before_us` at which the node has `want` free, given its
/// `free_now` (after the tasks waiting on it) and the `releases` to come; `None` when only
/// releases never known to end would make room. Sorts `releases`.
pub fn earliest_start(
    free_now: Amounts,
    want: Amounts,
    not_before_us: i64,
    releases: &mut [Release],
) -> Option<i64> {
    let mut free = free_now;
    if covers(&free, &want) {
        return Some(not_before_us);
    }
    releases.sort_unstable();
    for r in releases.iter() {
        if r.end_us == crate::run_times::RunTimes::UNKNOWN {
            return None;
        }
        for (f, a) in free.iter_mut().zip(&r.amounts) {
            *f += a;
        }
        if covers(&free, &want) {
            return Some(r.end_us.max(not_before_us));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_times::RunTimes;
    use ingest::rng::Rng;

    /// By hand: 2 CPUs free of 8, a task of 5 CPUs; tasks ending at 30 (2 CPUs) and 10 (2 CPUs)
    /// make 6 free at 30. Not before 40: 40. A release never known to end does not count.
    #[test]
    fn the_release_that_makes_room() {
        let rel = |end_us, cpu| Release {
            end_us,
            amounts: [cpu, 0, 0, 0],
        };
        let want = [5, 0, 0, 0];
        let mut releases = [rel(30, 2), rel(10, 2)];
        assert_eq!(
            earliest_start([2, 0, 0, 0], want, 0, &mut releases),
            Some(30)
        );
        assert_eq!(
            earliest_start([2, 0, 0, 0], want, 40, &mut releases),
            Some(40)
        );
        assert_eq!(
            earliest_start([5, 0, 0, 0], want, 7, &mut releases),
            Some(7)
        );
        let mut never = [rel(10, 2), rel(RunTimes::UNKNOWN, 8)];
        assert_eq!(earliest_start([2, 0, 0, 0], want, 0, &mut never), None);
    }

    /// On random nodes, the answer is the least candidate time (the bound or a release's end)
    /// at which the free amounts, summed by hand, cover the task.
    #[test]
    fn agrees_with_a_search_over_every_candidate_time() {
        let mut r = Rng::new(3, 0);
        for case in 0..2_000 {
            let n = r.below(6) as usize;
            let mut releases: Vec<Release> = (0..n)
                .map(|_| Release {
                    end_us: if r.below(8) == 0 {
                        RunTimes::UNKNOWN
                    } else {
                        r.below(100) as i64
                    },
                    amounts: [0; 4].map(|_| r.below(5) as i64),
                })
                .collect();
            let free_now = [0; 4].map(|_| r.below(6) as i64 - 2);
            let want = [0; 4].map(|_| r.below(8) as i64);
            let not_before = r.below(60) as i64;
            let free_at = |t: i64| {
                let mut f = free_now;
                for rel in releases
                    .iter()
                    .filter(|x| x.end_us <= t && x.end_us != RunTimes::UNKNOWN)
                {
                    for (free, amount) in f.iter_mut().zip(rel.amounts) {
                        *free += amount;
                    }
                }
                f
            };
            let mut times: Vec<i64> = releases
                .iter()
                .filter(|x| x.end_us != RunTimes::UNKNOWN)
                .map(|x| x.end_us.max(not_before))
                .chain([not_before])
                .collect();
            times.sort_unstable();
            let expected = times.into_iter().find(|&t| covers(&free_at(t), &want));
            let got = earliest_start(free_now, want, not_before, &mut releases);
            assert_eq!(got, expected, "case {case}");
        }
    }
}
