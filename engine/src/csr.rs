//! Grouping by key in compressed-sparse-row form: a stable counting sort into buffers the caller
//! keeps, so that once they have grown a grouping allocates nothing. Used for the mailbox
//! (messages by receiver, every round) and MASB's running tasks by node (every tick).
//!
//! Invariant of the result: key `k`'s items are `out[offsets[k]..offsets[k + 1]]`, in the order
//! the items came. The items are counted per key in one pass; then, for [`Scatter::TwoThreads`],
//! the keys are split in two ranges holding about half of the items each, and each range's
//! items are written to their slots by a thread of its own (both threads read every key: worth
//! it for the mailbox's messages, whose receivers the executor keeps in a 4-byte column beside
//! them so that a message is read only by the thread that writes it; not for the running tasks,
//! where reading the task columns twice costs more than the writes saved).

use std::borrow::Borrow;

/// How [`group_by_key`] writes the items to their slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scatter {
    /// One pass on the calling thread.
    OneThread,
    /// Two passes, each writing the items of one range of keys, on two threads.
    TwoThreads,
}

/// Groups the `(key, item)` pairs `items()` yields by key into `offsets` (`keys + 1` entries)
/// and `out[..n]`, stably, and returns `n`; pairs whose key is `keys` or more are dropped.
/// `out` keeps its entries beyond `n` from larger groupings (so that writing never needs new
/// initialised slots once it has grown); `cursors` is a buffer. `items` is called up to four
/// times, from two threads, and must yield the same pairs every time. An item may be yielded
/// by reference (`R` = `&T`): it is then read only where it is written, not by the passes that
/// look at keys only.
pub fn group_by_key<T, R, I>(
    keys: usize,
    scatter_by: Scatter,
    items: impl Fn() -> I + Sync,
    offsets: &mut Vec<u32>,
    cursors: &mut Vec<u32>,
    out: &mut Vec<T>,
) -> usize
where
    T: Copy + Send + Sync,
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
    let scatter = |keys: std::ops::Range<usize>, slots: &mut [T], cursors: &mut [u32]| {
        let first_slot = cursors.first().map_or(0, |&c| c as usize);
        for (k, item) in items().filter(|(k, _)| keys.contains(k)) {
            let cursor = &mut cursors[k - keys.start];
            slots[*cursor as usize - first_slot] = *item.borrow();
            *cursor += 1;
        }
    };
    match scatter_by {
        Scatter::OneThread => scatter(0..keys, &mut out[..n], cursors),
        Scatter::TwoThreads => {
            // The keys from `split` on hold the second half of the items.
            let split = offsets.partition_point(|&o| (o as usize) < n / 2).min(keys);
            let (low_slots, high_slots) = out[..n].split_at_mut(offsets[split] as usize);
            let (low_cursors, high_cursors) = cursors.split_at_mut(split);
            rayon::join(
                || scatter(0..split, low_slots, low_cursors),
                || scatter(split..keys, high_slots, high_cursors),
            );
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against grouping by filtering: every key's items, in their order; out-of-range keys
    /// dropped; whatever the split falls on (all items under one key, none, the last key only);
    /// buffers reused from a larger grouping, whose leftover entries stay beyond `n`.
    #[test]
    fn groups_stably_by_key() {
        let mut r = ingest::rng::Rng::new(9, 0);
        let (mut offsets, mut cursors, mut out) = (vec![7; 50], vec![3; 9], vec![(0, 0); 80]);
        for case in 0..120 {
            let keys: usize = [0, 1, 5, 40][case % 4];
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
            let items = || pairs.iter().copied();
            let by = [Scatter::OneThread, Scatter::TwoThreads][case % 2];
            let n = group_by_key(keys, by, items, &mut offsets, &mut cursors, &mut out);
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
