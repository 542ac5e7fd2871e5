//! The trace's task IDs (job ID, task index) of the live tasks, mapped to their cell slots.
//!
//! A map over (job, index) pairs puts a job's tasks in unrelated buckets, so every lookup of
//! the millions a day (each usage row, task event and constraint row) is a cache miss in a
//! table of every live task. Here a job maps to a range of slots, one per task index, so the
//! tasks of one job (which the trace's rows bring together) share cache lines and the job
//! table is a small fraction of the task table. A job's range grows by doubling while it stays
//! dense (at most [`DENSE_FACTOR`] times its live tasks, or [`DENSE_MIN`]); an index beyond
//! that goes to a plain map, so a sparse or hostile index costs what the plain map did, never
//! a huge range. Ranges left behind are reclaimed when they outweigh the ones in use.
//!
//! Invariants: a key is held by at most one of the two (a range slot or the plain map); a
//! job's `live` counts its range's filled slots and a job with none holds no range. Where a
//! range sits in the arena changes only speed: every lookup, [`TaskIds::iter`]'s contents and
//! [`TaskIds::len`] depend on the inserts and removals alone.

use rustc_hash::FxHashMap;

use crate::ids::TaskIdx;

/// A job's range may hold this many times its live tasks ...
pub const DENSE_FACTOR: usize = 8;
/// ... or this many slots, whichever is more.
pub const DENSE_MIN: usize = 16;
/// Ranges are reclaimed only in an arena of more than this many slots, half of them abandoned.
const RECLAIM_MIN: usize = 1 << 16;

/// One job's range in the arena.
#[derive(Clone, Copy, Debug)]
pub struct JobRange {
    start: u32,
    cap: u32,
    live: u32,
}

/// The live tasks' IDs and slots (module doc).
#[derive(Debug, Default, Clone)]
pub struct TaskIds {
    jobs: FxHashMap<u64, JobRange>,
    slots: Vec<TaskIdx>,
    /// Arena slots no job's range covers.
    abandoned: usize,
    /// Keys whose index lies beyond what its job's range may densely hold.
    sparse: FxHashMap<(u64, u32), TaskIdx>,
    /// Keys mapped (in ranges and in the plain map).
    live: usize,
}

/// The last job a run of look-ups found ([`TaskIds::get_near`]): rows of one job come together
/// in the trace (85 % of the generated cell's usage rows follow a row of their job).
pub type JobCache = Option<(u64, JobRange)>;

impl TaskIds {
    /// The slot of task `(job, index)`, if live.
    #[inline]
    pub fn get(&self, key: &(u64, u32)) -> Option<TaskIdx> {
        self.get_near(key, &mut None)
    }

    /// [`TaskIds::get`] remembering in `cache` the job it found, so that the next look-up of
    /// the same job skips the job table (valid while the IDs do not change).
    #[inline]
    pub fn get_near(&self, &(job, index): &(u64, u32), cache: &mut JobCache) -> Option<TaskIdx> {
        let range = match *cache {
            Some((cached, r)) if cached == job => Some(r),
            _ => {
                let r = self.jobs.get(&job).copied();
                *cache = r.map(|r| (job, r));
                r
            }
        };
        if let Some(r) = range
            && index < r.cap
        {
            let t = self.slots[(r.start + index) as usize];
            if t.is_some() {
                return Some(t);
            }
        }
        if self.sparse.is_empty() {
            return None;
        }
        self.sparse.get(&(job, index)).copied()
    }

    /// Maps `(job, index)` to `t` (replacing what it mapped to).
    pub fn insert(&mut self, (job, index): (u64, u32), t: TaskIdx) {
        debug_assert!(t.is_some());
        let TaskIds {
            jobs,
            slots,
            abandoned,
            sparse,
            live,
        } = self;
        if let Some(held) = sparse.get_mut(&(job, index)) {
            *held = t;
            return;
        }
        let r = jobs.entry(job).or_insert(JobRange {
            start: 0,
            cap: 0,
            live: 0,
        });
        let i = index as usize;
        if i >= r.cap as usize {
            let limit = DENSE_MIN.max(DENSE_FACTOR * (r.live as usize + 1));
            let cap = (2 * r.cap as usize).max(i + 1).max(4).min(limit);
            if i >= cap || slots.len() + cap > u32::MAX as usize {
                if r.cap == 0 {
                    jobs.remove(&job);
                }
                sparse.insert((job, index), t);
                *live += 1;
                return;
            }
            // The range moves to the arena's end, `cap` slots long.
            let (old, start) = (r.start as usize..(r.start + r.cap) as usize, slots.len());
            slots.resize(start + cap, TaskIdx::NONE);
            slots.copy_within(old.clone(), start);
            slots[old].fill(TaskIdx::NONE);
            *abandoned += r.cap as usize;
            (r.start, r.cap) = (start as u32, cap as u32);
        }
        let slot = &mut slots[r.start as usize + i];
        if !slot.is_some() {
            *live += 1;
            r.live += 1;
        }
        *slot = t;
    }

    /// Unmaps `(job, index)`; returns its slot if it was live.
    pub fn remove(&mut self, &(job, index): &(u64, u32)) -> Option<TaskIdx> {
        if let Some(r) = self.jobs.get_mut(&job)
            && index < r.cap
        {
            let slot = &mut self.slots[(r.start + index) as usize];
            if slot.is_some() {
                let t = std::mem::replace(slot, TaskIdx::NONE);
                r.live -= 1;
                self.live -= 1;
                if r.live == 0 {
                    self.abandoned += r.cap as usize;
                    self.jobs.remove(&job);
                    self.reclaim();
                }
                return Some(t);
            }
        }
        let t = self.sparse.remove(&(job, index));
        self.live -= usize::from(t.is_some());
        t
    }

    /// How many keys are mapped.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Every mapping, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = ((u64, u32), TaskIdx)> + '_ {
        let dense = self.jobs.iter().flat_map(move |(&job, r)| {
            let range = &self.slots[r.start as usize..(r.start + r.cap) as usize];
            (0u32..)
                .zip(range)
                .filter(|(_, t)| t.is_some())
                .map(move |(index, &t)| ((job, index), t))
        });
        dense.chain(self.sparse.iter().map(|(&k, &t)| (k, t)))
    }

    /// Packs the ranges in use to the arena's start once abandoned slots outnumber them.
    fn reclaim(&mut self) {
        if self.slots.len() <= RECLAIM_MIN || 2 * self.abandoned <= self.slots.len() {
            return;
        }
        let mut packed = Vec::with_capacity(self.slots.len() - self.abandoned);
        for r in self.jobs.values_mut() {
            let start = packed.len();
            packed.extend_from_slice(&self.slots[r.start as usize..(r.start + r.cap) as usize]);
            r.start = start as u32;
        }
        self.slots = packed;
        self.abandoned = 0;
    }
}

impl FromIterator<((u64, u32), TaskIdx)> for TaskIds {
    fn from_iter<I: IntoIterator<Item = ((u64, u32), TaskIdx)>>(entries: I) -> TaskIds {
        let mut ids = TaskIds::default();
        for (key, t) in entries {
            ids.insert(key, t);
        }
        ids
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use ingest::rng::Rng;

    use super::*;

    /// Random inserts, replacements and removals over a few jobs, with dense, growing and
    /// sparse indices: every lookup, the length and the contents equal a plain map's after
    /// each step.
    #[test]
    fn behaves_as_a_plain_map() {
        let mut rng = Rng::new(7, 0);
        let (mut ids, mut plain) = (TaskIds::default(), HashMap::new());
        for step in 0..200_000u32 {
            let job = rng.below(40);
            let index = match rng.below(10) {
                0 => rng.below(1 << 30) as u32,
                1..=3 => rng.below(4_000) as u32,
                _ => rng.below(64) as u32,
            };
            let key = (job, index);
            if rng.below(3) == 0 {
                assert_eq!(ids.remove(&key), plain.remove(&key), "step {step}");
            } else {
                ids.insert(key, TaskIdx(step));
                plain.insert(key, TaskIdx(step));
            }
            let probe = (rng.below(40), rng.below(100) as u32);
            assert_eq!(ids.get(&probe), plain.get(&probe).copied(), "step {step}");
            assert_eq!(ids.get(&key), plain.get(&key).copied(), "step {step}");
            assert_eq!(ids.len(), plain.len());
            if step % 1_000 == 0 {
                // Runs of look-ups sharing a job cache (jobs repeating, as the trace's rows do)
                // find what the plain map holds.
                let mut cache = None;
                for _ in 0..200 {
                    let probe = (rng.below(3), rng.below(4_100) as u32);
                    let found = ids.get_near(&probe, &mut cache);
                    assert_eq!(found, plain.get(&probe).copied(), "step {step}");
                }
            }
            if step % 20_000 == 0 {
                let mut all: Vec<_> = ids.iter().collect();
                all.sort_unstable();
                let mut expected: Vec<_> = plain.iter().map(|(&k, &t)| (k, t)).collect();
                expected.sort_unstable();
                assert_eq!(all, expected, "step {step}");
            }
        }
        assert!(!ids.sparse.is_empty(), "the test reaches the plain map");
    }

    /// Jobs come and go (a million tasks over the run, a few thousand live): the arena stays
    /// within twice the reclaim threshold instead of growing with every job seen.
    #[test]
    fn ranges_of_finished_jobs_are_reclaimed() {
        let mut ids = TaskIds::default();
        for job in 0..100_000u64 {
            for i in 0..10 {
                ids.insert((job, i), TaskIdx(i));
            }
            if job >= 300 {
                for i in 0..10 {
                    assert_eq!(ids.remove(&(job - 300, i)), Some(TaskIdx(i)));
                }
            }
            assert!(
                ids.slots.len() <= 2 * RECLAIM_MIN,
                "job {job}: {}",
                ids.slots.len()
            );
        }
        assert_eq!(ids.len(), 3_000);
        assert_eq!(ids.get(&(99_999, 9)), Some(TaskIdx(9)));
        assert_eq!(ids.get(&(99_699, 9)), None);
    }

    /// A job's tasks 0, 1, 2, ... share one range that doubles; a lone task far out goes to the
    /// plain map rather than a range of a billion slots.
    #[test]
    fn dense_jobs_share_a_range_and_a_far_index_does_not_grow_it() {
        let mut ids = TaskIds::default();
        for i in 0..100 {
            ids.insert((5, i), TaskIdx(i));
        }
        assert_eq!(ids.jobs[&5].cap, 128);
        assert!(ids.sparse.is_empty());
        ids.insert((5, 1_000_000_000), TaskIdx(7));
        ids.insert((6, 3_000_000), TaskIdx(8));
        assert_eq!(ids.sparse.len(), 2);
        assert!(ids.slots.len() < 1_000, "{}", ids.slots.len());
        assert_eq!(ids.get(&(5, 1_000_000_000)), Some(TaskIdx(7)));
        assert_eq!(ids.get(&(6, 3_000_000)), Some(TaskIdx(8)));
        assert_eq!(ids.get(&(6, 0)), None);
        assert_eq!(ids.len(), 102);
    }
}
