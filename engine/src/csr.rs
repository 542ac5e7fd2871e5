//! Grouping by key in compressed-sparse-row form: a stable counting sort into buffers the caller
//! keeps, so that once they have grown a grouping allocates nothing. Used for MASB's running tasks
//! by node (every tick); the mailbox groups its messages by receiver the same way, on two threads
//! (`executor.rs`).
//!
//! Invariant of the result: key `k`'s items are `out[offsets[k]..offsets[k + 1]]`, in the order
//! the items came.

/// Groups the `(key, item)` pairs `items()` yields by key into `offsets` (`keys + 1` entries)
/// and `out`, stably; pairs whose key is `keys` or more are dropped. `items` is called twice and
/// must yield the same pairs both times.
pub fn group_by_key<T, I>(
    keys: usize,
    items: impl Fn() -> I,
    offsets: &mut Vec<u32>,
    out: &mut Vec<T>,
) where
    T: Copy + Default,
    I: Iterator<Item = (usize, T)>,
{
    offsets.clear();
    offsets.resize(keys + 1, 0);
    for (k, _) in items() {
        if k < keys {
            offsets[k + 1] += 1;
        }
    }
    for k in 0..keys {
        offsets[k + 1] += offsets[k];
    }
    out.clear();
    out.resize(offsets[keys] as usize, T::default());
    // `offsets[k]` serves as key k's next slot, then is restored by a shift.
    for (k, item) in items() {
        if k < keys {
            let slot = &mut offsets[k];
            out[*slot as usize] = item;
            *slot += 1;
        }
    }
    for k in (1..=keys).rev() {
        offsets[k] = offsets[k - 1];
    }
    offsets[0] = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against grouping by filtering: every key's items, in their order; out-of-range keys
    /// dropped; buffers reused from a larger grouping.
    #[test]
    fn groups_stably_by_key() {
        let mut r = ingest::rng::Rng::new(9, 0);
        let (mut offsets, mut out) = (vec![7; 50], vec![(0, 0); 80]);
        for keys in [0, 1, 5, 40] {
            let pairs: Vec<(usize, (usize, u32))> = (0..r.below(200) as u32)
                .map(|i| {
                    let k = r.below(keys as u64 + 2) as usize;
                    (k, (k, i))
                })
                .collect();
            group_by_key(keys, || pairs.iter().copied(), &mut offsets, &mut out);
            assert_eq!(offsets.len(), keys + 1);
            for k in 0..keys {
                let expected: Vec<(usize, u32)> =
                    pairs.iter().filter(|p| p.0 == k).map(|p| p.1).collect();
                let range = offsets[k] as usize..offsets[k + 1] as usize;
                assert_eq!(out[range], expected[..], "keys {keys}, key {k}");
            }
            assert_eq!(out.len(), pairs.iter().filter(|p| p.0 < keys).count());
        }
    }
}
