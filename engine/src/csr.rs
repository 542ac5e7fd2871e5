//! Grouping by key in compressed-sparse-row form: a stable counting sort into buffers the caller
//! keeps, so that once they have grown a grouping allocates nothing. Used for the mailbox
//! (messages by receiver, every round) and MASB's running tasks by node (every tick).
//!
//! Invariant of the result: key `k`'s items are `out[offsets[k]..offsets[k + 1]]`, in the order
//! the items came. The items come in ordered parts (a round's chunk outputs; ranges of tasks).
//! On one thread: counted per key in one pass, then written to their slots in a second. On more,
//! the parts are split into one run of consecutive parts per thread ([`Grouping`] keeps their
//! buffers), each run grouped on its own in parallel, then the offsets summed and the runs'
//! items copied into place in parallel over blocks of keys (a block's slots are one slice of
//! `out`, so every write is to a slot only that block owns). A key's items are its runs' items
//! in run order, so the result is the same for any number of threads.

use std::borrow::Borrow;
use std::ops::Range;

use rayon::prelude::*;

use crate::parallel_time::region;
use crate::surge::release_surge;

/// Keys per parallel work item when summing offsets and copying the runs' items into place.
const KEYS_PER_BLOCK: usize = 8192;

/// The buffers a grouping keeps between calls: the cursors of the one-thread pass, and per run
/// of parts its own offsets and items.
#[derive(Debug, Clone)]
pub struct Grouping<T> {
    cursors: Vec<u32>,
    runs: Vec<(Vec<u32>, Vec<u32>, Vec<T>)>,
}

impl<T> Grouping<T> {
    /// Gives back the room the runs' item buffers kept from a surge ([`release_surge`] over
    /// `min_bytes`), each keeping room for its share of the `used` items.
    pub fn release_surge(&mut self, used: usize, min_bytes: usize) {
        let share = used.div_ceil(self.runs.len().max(1));
        for (_, _, items) in &mut self.runs {
            release_surge(items, share, min_bytes);
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
        // The pool's one thread: the run a pool of more would split.
        let all = || (0..parts).flat_map(&items);
        return region(|| group_one_run(keys, all, offsets, &mut grouping.cursors, out));
    }
    let run_parts = |r: usize| r * parts / runs..(r + 1) * parts / runs;
    let buffers = &mut grouping.runs;
    buffers.resize_with(runs, Default::default);
    region(|| {
        (buffers[..runs].par_iter_mut().enumerate()).for_each(|(r, (offsets, cursors, out))| {
            let pairs = || run_parts(r).flat_map(&items);
            group_one_run(keys, pairs, offsets, cursors, out);
        })
    });
    let buffers = &buffers[..runs];
    let n = sum_offsets(keys, buffers, offsets);
    if out.len() < n {
        let first = buffers.iter().find_map(|(_, _, items)| items.first());
        out.resize(n, *first.expect("n > 0 items"));
    }
    // Each block of keys owns the slots from its first key's offset to the next block's.
    let mut blocks = Vec::with_capacity(keys.div_ceil(KEYS_PER_BLOCK));
    let mut rest = &mut out[..n];
    for first in (0..keys).step_by(KEYS_PER_BLOCK) {
        let block = first..(first + KEYS_PER_BLOCK).min(keys);
        let len = (offsets[block.end] - offsets[block.start]) as usize;
        let (slots, after) = std::mem::take(&mut rest).split_at_mut(len);
        rest = after;
        blocks.push((block, slots));
    }
    region(|| {
        blocks.into_par_iter().for_each(|(block, slots)| {
            let mut at = 0;
            for k in block {
                for (run_offsets, _, items) in buffers {
                    let run = &items[run_offsets[k] as usize..run_offsets[k + 1] as usize];
                    slots[at..at + run.len()].copy_from_slice(run);
                    at += run.len();
                }
            }
        })
    });
    n
}

/// `offsets` from the runs' own: key `k` starts after every item of the keys before it, in
/// parallel over blocks of keys (each block's counts summed, then the blocks' totals carried).
fn sum_offsets<T: Sync>(
    keys: usize,
    runs: &[(Vec<u32>, Vec<u32>, Vec<T>)],
    offsets: &mut Vec<u32>,
) -> usize {
    offsets.clear();
    offsets.resize(keys + 1, 0);
    let count = |k: usize| -> u32 { runs.iter().map(|(o, _, _)| o[k + 1] - o[k]).sum() };
    let block_of =
        |b: usize| -> Range<usize> { b * KEYS_PER_BLOCK..keys.min((b + 1) * KEYS_PER_BLOCK) };
    // offsets[k + 1] holds the count of the keys of k's block up to k, then the carried total.
    let totals: Vec<u32> = region(|| {
        (offsets[1..].par_chunks_mut(KEYS_PER_BLOCK).enumerate())
            .map(|(b, ends)| {
                let mut total = 0;
                for (end, k) in ends.iter_mut().zip(block_of(b)) {
                    total += count(k);
                    *end = total;
                }
                total
            })
            .collect()
    });
    let mut carried = Vec::with_capacity(totals.len());
    let mut before = 0;
    for total in totals {
        carried.push(before);
        before += total;
    }
    region(|| {
        (offsets[1..].par_chunks_mut(KEYS_PER_BLOCK).zip(carried))
            .for_each(|(ends, before)| ends.iter_mut().for_each(|e| *e += before))
    });
    before as usize
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
        let pools: Vec<rayon::ThreadPool> = [1, 2, 5]
            .map(|t| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .unwrap()
            })
            .into();
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
