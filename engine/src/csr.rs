//! Grouping by key in compressed-sparse-row form: a stable counting sort into buffers the caller
//! keeps, so that once they have grown a grouping allocates nothing. Used for the mailbox
//! (messages by receiver, every round) and MASB's running tasks by node (every tick).
//!
//! Invariant of the result: key `k`'s items are `out[offsets[k]..offsets[k + 1]]`, in the order
//! the items came. The items come in ordered parts (a round's chunk outputs; ranges of tasks).
//! On one thread: counted per key in one pass, then written to their slots in a second. On more,
//! in three parallel passes, none of which loops over keys per run: the parts are split into one
//! run of consecutive parts per thread, and each run sorts its `(key, item)` pairs by *block* of
//! [`KEYS_PER_BLOCK`] keys (a counting sort over a few dozen blocks); then each block counts its
//! keys' items over the runs' slices for it and sums them into `offsets`; the blocks' totals are
//! carried; then each block writes its items, run by run, into its own slice of `out` (a block's
//! slots are one slice, so every write is to a slot only that block owns). A key's items are its
//! runs' items in run order, so the result is the same for any number of threads.

use std::borrow::Borrow;

use rayon::prelude::*;

use crate::parallel_time::region;
use crate::surge::release_surge;

/// Keys per block of the parallel passes.
const KEYS_PER_BLOCK: usize = 4096;

/// One run's pairs sorted by block (the first `starts[blocks]` of them; entries beyond
/// are left from larger groupings), and where each block starts (`blocks + 1` entries).
#[derive(Debug, Clone)]
struct Run<T> {
    pairs: Vec<(u32, T)>,
    starts: Vec<u32>,
    /// Scratch: each block's next slot while sorting.
    cursors: Vec<u32>,
}

impl<T> Default for Run<T> {
    fn default() -> Self {
        Run {
            pairs: Vec::new(),
            starts: Vec::new(),
            cursors: Vec::new(),
        }
    }
}

/// The buffers a grouping keeps between calls: the cursors of the one-thread pass and of each
/// block, and each run's pairs.
#[derive(Debug, Clone)]
pub struct Grouping<T> {
    cursors: Vec<u32>,
    runs: Vec<Run<T>>,
}

impl<T> Grouping<T> {
    /// Gives back the room the runs' buffers kept from a surge ([`release_surge`] over
    /// `min_bytes`), each keeping room for its share of the `used` items.
    pub fn release_surge(&mut self, used: usize, min_bytes: usize) {
        let share = used.div_ceil(self.runs.len().max(1));
        for run in &mut self.runs {
            release_surge(&mut run.pairs, share, min_bytes);
        }
    }
}

impl<T> Default for Grouping<T> {
    fn default() -> Self {
        Grouping {
            cursors: Vec::new(),
            runs: Vec::new(),
        }
    }
}

/// Groups the `(key, item)` pairs of `parts` ordered parts (`items(p)` yields part `p`'s) by key
/// into `offsets` (`keys + 1` entries) and `out[..n]`, stably, and returns `n`; pairs whose key
/// is `keys` or more are dropped. `out` keeps its entries beyond `n` from larger groupings (so
/// that writing never needs new initialised slots once it has grown). `items` is called up to
/// three times per part, from any thread, and must yield the same pairs every time. An item may
/// be yielded by reference (`R` = `&T`): on one thread it is then read only where it is written,
/// not by the pass that counts keys.
pub fn group_by_key<T, R, I>(
    keys: usize,
    (parts, items): (usize, impl Fn(usize) -> I + Sync),
    offsets: &mut Vec<u32>,
    grouping: &mut Grouping<T>,
    out: &mut Vec<T>,
) -> usize
where
    T: Copy + Send + Sync,
    R: Borrow<T>,
    I: Iterator<Item = (usize, R)>,
{
    let runs = parts.min(rayon::current_num_threads()).max(1);
    if runs == 1 {
        // The pool's one thread: the work a pool of more would split.
        let all = || (0..parts).flat_map(&items);
        return region(|| group_one_run(keys, all, offsets, &mut grouping.cursors, out));
    }
    let blocks = keys.div_ceil(KEYS_PER_BLOCK);
    let Grouping {
        cursors,
        runs: buffers,
    } = grouping;
    buffers.resize_with(runs, Run::default);
    let buffers = &mut buffers[..runs];
    region(|| {
        (buffers.par_iter_mut().enumerate()).for_each(|(r, run)| {
            let pairs = || {
                let pairs = (r * parts / runs..(r + 1) * parts / runs).flat_map(&items);
                pairs.filter(|(k, _)| *k < keys)
            };
            run.sort_by_block(pairs, blocks);
        })
    });
    let buffers = &*buffers;
    // Each block's keys' counts, summed within the block: offsets[k + 1] before the carry.
    offsets.clear();
    offsets.resize(keys + 1, 0);
    let totals: Vec<u32> = region(|| {
        (offsets[1..].par_chunks_mut(KEYS_PER_BLOCK).enumerate())
            .map(|(b, ends)| {
                let first = b * KEYS_PER_BLOCK;
                for run in buffers {
                    for &(k, _) in run.block(b) {
                        ends[k as usize - first] += 1;
                    }
                }
                let mut total = 0;
                for end in ends.iter_mut() {
                    total += *end;
                    *end = total;
                }
                total
            })
            .collect()
    });
    let (carried, n) = carried(&totals);
    let n = n as usize;
    if out.len() < n {
        let first = buffers.iter().find_map(|run| run.pairs.first());
        out.resize(n, first.expect("n > 0 items").1);
    }
    // Each block owns the slots from its first key's offset to the next block's.
    let mut slices = Vec::with_capacity(blocks);
    let mut rest = &mut out[..n];
    for b in 0..blocks {
        let end = carried.get(b + 1).map_or(n, |&c| c as usize);
        let (slots, after) = std::mem::take(&mut rest).split_at_mut(end - carried[b] as usize);
        rest = after;
        slices.push(slots);
    }
    cursors.clear();
    cursors.resize(keys, 0);
    region(|| {
        (offsets[1..].par_chunks_mut(KEYS_PER_BLOCK))
            .zip(cursors.par_chunks_mut(KEYS_PER_BLOCK))
            .zip(slices)
            .zip(carried)
            .enumerate()
            .for_each(|(b, (((ends, cursors), slots), before))| {
                let first = b * KEYS_PER_BLOCK;
                // A key's cursor (within the block's slots) starts where the key before ends.
                let mut start = 0;
                for (end, cursor) in ends.iter_mut().zip(cursors.iter_mut()) {
                    *cursor = start;
                    start = *end;
                    *end += before;
                }
                for run in buffers {
                    for &(k, item) in run.block(b) {
                        let cursor = &mut cursors[k as usize - first];
                        slots[*cursor as usize] = item;
                        *cursor += 1;
                    }
                }
            })
    });
    n
}

impl<T: Copy> Run<T> {
    /// The pairs of block `b`.
    fn block(&self, b: usize) -> &[(u32, T)] {
        &self.pairs[self.starts[b] as usize..self.starts[b + 1] as usize]
    }

    /// Sorts `pairs` (keys below `blocks * KEYS_PER_BLOCK`) by block, stably, into this run (an
    /// item is read only where it is written, not by the pass that counts blocks).
    fn sort_by_block<R, I>(&mut self, pairs: impl Fn() -> I, blocks: usize)
    where
        R: Borrow<T>,
        I: Iterator<Item = (usize, R)>,
    {
        let Run {
            pairs: out,
            starts,
            cursors,
        } = self;
        starts.clear();
        starts.resize(blocks + 1, 0);
        for (k, _) in pairs() {
            starts[k / KEYS_PER_BLOCK + 1] += 1;
        }
        for b in 0..blocks {
            starts[b + 1] += starts[b];
        }
        let n = starts[blocks] as usize;
        cursors.clear();
        cursors.extend_from_slice(&starts[..blocks]);
        if out.len() < n {
            // Slots beyond the last grouping's (whose entries stay beyond `n` otherwise).
            let (k, item) = pairs().next().expect("n > 0 pairs");
            out.resize(n, (k as u32, *item.borrow()));
        }
        for (k, item) in pairs() {
            let cursor = &mut cursors[k / KEYS_PER_BLOCK];
            out[*cursor as usize] = (k as u32, *item.borrow());
            *cursor += 1;
        }
    }
}

/// Each block's start from the blocks' totals (the totals of the blocks before it), and the
/// sum of all: what a parallel pass over blocks adds to its block-local counts.
pub fn carried(totals: &[u32]) -> (Vec<u32>, u32) {
    let mut sum = 0;
    let starts = totals
        .iter()
        .map(|&total| {
            sum += total;
            sum - total
        })
        .collect();
    (starts, sum)
}

/// The one-thread grouping: keys counted in one pass over the pairs, items written in a second.
fn group_one_run<T, R, I>(
    keys: usize,
    items: impl Fn() -> I,
    offsets: &mut Vec<u32>,
    cursors: &mut Vec<u32>,
    out: &mut Vec<T>,
) -> usize
where
    T: Copy,
    R: Borrow<T>,
    I: Iterator<Item = (usize, R)>,
{
    offsets.clear();
    offsets.resize(keys + 1, 0);
    for (k, _) in items().filter(|(k, _)| *k < keys) {
        offsets[k + 1] += 1;
    }
    for k in 0..keys {
        offsets[k + 1] += offsets[k];
    }
    let n = offsets[keys] as usize;
    if out.len() < n {
        let (_, first) = items().find(|(k, _)| *k < keys).expect("n > 0 items");
        out.resize(n, *first.borrow());
    }
    cursors.clear();
    cursors.extend_from_slice(&offsets[..keys]);
    for (k, item) in items().filter(|(k, _)| *k < keys) {
        out[cursors[k] as usize] = *item.borrow();
        cursors[k] += 1;
    }
    n
}

/// Rayon pools of each of `threads` threads (for tests: a result must not depend on the count).
#[cfg(test)]
pub(crate) fn pools(threads: &[usize]) -> Vec<rayon::ThreadPool> {
    let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build();
    threads.iter().map(|&n| pool(n).unwrap()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against grouping by filtering: every key's items, in their order; out-of-range keys
    /// dropped; whatever the keys fall on (all items under one key, none, the last key only, keys
    /// over several blocks); items in 1 to 7 parts cut at random places (some empty), grouped on
    /// pools of 1, 2 and 5 threads (one run, or runs with a part or none each); buffers reused
    /// from a larger grouping, whose leftover entries stay beyond `n`.
    #[test]
    fn groups_stably_by_key() {
        let mut r = ingest::rng::Rng::new(9, 0);
        let pools = pools(&[1, 2, 5]);
        let mut grouping = Grouping::default();
        let (mut offsets, mut out) = (vec![7; 50], vec![(0, 0); 80]);
        for case in 0..240 {
            let keys: usize = [0, 1, 5, 40, 3 * KEYS_PER_BLOCK + 11][case % 5];
            let pairs: Vec<(usize, (usize, u32))> = (0..r.below(300) as u32)
                .map(|i| {
                    let k = match case % 3 {
                        0 => r.below(keys as u64 + 2) as usize,
                        1 => keys.saturating_sub(1),
                        _ => (r.below(2) * 3) as usize,
                    };
                    (k, (k, i))
                })
                .collect();
            let mut cuts: Vec<usize> = (0..r.below(7))
                .map(|_| r.below(pairs.len() as u64 + 1) as usize)
                .collect();
            cuts.extend([0, pairs.len()]);
            cuts.sort();
            let part = |p: usize| pairs[cuts[p]..cuts[p + 1]].iter().copied();
            let parts = (cuts.len() - 1, part);
            let n = pools[case % 3]
                .install(|| group_by_key(keys, parts, &mut offsets, &mut grouping, &mut out));
            assert_eq!(offsets.len(), keys + 1);
            let mut all = Vec::new();
            for k in 0..keys {
                let expected: Vec<(usize, u32)> =
                    pairs.iter().filter(|p| p.0 == k).map(|p| p.1).collect();
                let range = offsets[k] as usize..offsets[k + 1] as usize;
                assert_eq!(
                    out[range],
                    expected[..],
                    "case {case}, keys {keys}, key {k}"
                );
                all.extend(expected);
            }
            assert_eq!(n, all.len());
            assert_eq!(out[..n], all[..]);
        }
    }
}
