//! Who a Sparrow scheduler talks to, as pure functions tested alone: the consistent-hash ring
//! that names a job's task master (seed 002 step 1), the uniform choice of `d` distinct probe
//! targets (the Sparrow paper's random sampling), and the softmax next-hop choice over a cached
//! view (seed 002 improvement 3: temperature 100 is a random walk, a low one greedy).
//!
//! Invariants: `Ring::points` is sorted by position; every sample is distinct and never holds
//! the excluded node.

use ingest::rng::{Rng, hash_keys};

/// A consistent-hash ring over the online nodes: each node at `vnodes` pseudo-random positions;
/// a key belongs to the first node at or after its hash, wrapping around. Removing a node moves
/// only its own keys (to the next node on the ring).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ring {
    /// (position, node index), sorted.
    points: Vec<(u64, u32)>,
}

/// The ring's seed (positions depend on the machine IDs only, not on the run's seed: the same
/// cell maps jobs to the same masters under every seed).
const RING_SEED: u64 = 0x5ba7_70e1;

impl Ring {
    /// The ring of `nodes` (index, machine ID), `vnodes` positions each.
    pub fn new(nodes: impl Iterator<Item = (u32, u64)>, vnodes: u32) -> Ring {
        let mut points: Vec<(u64, u32)> = nodes
            .flat_map(|(n, machine)| {
                (0..vnodes.max(1)).map(move |v| (hash_keys(RING_SEED, &[machine, v as u64]), n))
            })
            .collect();
        points.sort_unstable();
        Ring { points }
    }

    /// The node owning `key` (a job ID); `None` on an empty ring.
    pub fn owner(&self, key: u64) -> Option<u32> {
        if self.points.is_empty() {
            return None;
        }
        let h = hash_keys(RING_SEED ^ 0x6a0b, &[key]);
        let at = self.points.partition_point(|p| p.0 < h);
        Some(self.points[at % self.points.len()].1)
    }
}

/// `count` distinct members of `pool` (sorted ascending, as the policy's online nodes are) drawn
/// uniformly, never `exclude` (fewer when the pool has fewer others), in draw order.
pub fn distinct_uniform(rng: &mut Rng, pool: &[u32], exclude: u32, count: usize) -> Vec<u32> {
    debug_assert!(pool.is_sorted());
    // A binary search: a linear one over 12.5k nodes, once per gossip exchange of every peer,
    // was a quarter of a Random Walk run's time.
    let others = pool.len() - usize::from(pool.binary_search(&exclude).is_ok());
    let want = count.min(others);
    let mut out = Vec::with_capacity(want);
    if want * 2 > others {
        // Most of the pool: a partial Fisher-Yates shuffle of its other members.
        let rest: Vec<u32> = pool.iter().copied().filter(|&n| n != exclude).collect();
        return rng.first_shuffled(rest, want);
    }
    // Which nodes were drawn: a scan of `out` for a few, a bit per node for a large job's batch
    // (its thousands of probes made the scan quadratic).
    let mut drawn = if want > 64 {
        vec![0u64; pool.last().map_or(0, |&n| n as usize / 64 + 1)]
    } else {
        Vec::new()
    };
    while out.len() < want {
        let n = pool[rng.below(pool.len() as u64) as usize];
        let new = if drawn.is_empty() {
            !out.contains(&n)
        } else {
            let (word, bit) = (n as usize / 64, 1u64 << (n % 64));
            let new = drawn[word] & bit == 0;
            drawn[word] |= bit;
            new
        };
        if n != exclude && new {
            out.push(n);
        }
    }
    out
}

/// Up to `count` distinct members of `pool` that `accept` takes, never `exclude`: drawn
/// uniformly (up to 8 draws per member wanted), then, if too few were found, the rest of the
/// pool scanned from a random place (so a member any node accepts is always found).
pub fn distinct_accepted(
    rng: &mut Rng,
    pool: &[u32],
    exclude: u32,
    count: usize,
    accept: impl Fn(u32) -> bool,
) -> Vec<u32> {
    let mut out = Vec::with_capacity(count);
    if pool.is_empty() {
        return out;
    }
    for _ in 0..8 * count {
        if out.len() == count {
            return out;
        }
        let n = pool[rng.below(pool.len() as u64) as usize];
        if n != exclude && !out.contains(&n) && accept(n) {
            out.push(n);
        }
    }
    let from = rng.below(pool.len() as u64) as usize;
    for k in 0..pool.len() {
        if out.len() == count {
            break;
        }
        let n = pool[(from + k) % pool.len()];
        if n != exclude && !out.contains(&n) && accept(n) {
            out.push(n);
        }
    }
    out
}

/// The probe targets of a job's `tasks` tasks at probe ratio `ratio`: batch sampling draws
/// ceil(ratio x tasks) distinct workers for the whole job (target k carries task k mod tasks);
/// per-task sampling draws ceil(ratio) distinct workers for each task independently (two tasks
/// may probe the same worker). Returns (task position in the job, worker) pairs; `pool` sorted
/// ascending.
pub fn probe_targets(
    rng: &mut Rng,
    pool: &[u32],
    exclude: u32,
    (tasks, ratio, batch): (usize, f64, bool),
) -> Vec<(usize, u32)> {
    if tasks == 0 {
        return Vec::new();
    }
    if batch {
        let count = (ratio * tasks as f64).ceil().max(1.0) as usize;
        let workers = distinct_uniform(rng, pool, exclude, count);
        return workers
            .into_iter()
            .enumerate()
            .map(|(k, w)| (k % tasks, w))
            .collect();
    }
    let per_task = ratio.ceil().max(1.0) as usize;
    (0..tasks)
        .flat_map(|t| {
            distinct_uniform(rng, pool, exclude, per_task)
                .into_iter()
                .map(move |w| (t, w))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Index into `scores` drawn by softmax at `temperature`: P(i) proportional to
/// exp(scores\[i\] / temperature) (shifted by the maximum, so large scores cannot overflow).
/// `None` for an empty slice.
pub fn softmax_pick(rng: &mut Rng, scores: &[f64], temperature: f64) -> Option<usize> {
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if scores.is_empty() {
        return None;
    }
    let t = temperature.max(1e-9);
    Some(rng.weighted_by(scores.len(), |i| ((scores[i] - max) / t).exp()))
}

/// `count` distinct indices into `scores`, each drawn by [`softmax_pick`] among those not drawn
/// yet.
pub fn softmax_distinct(
    rng: &mut Rng,
    scores: &[f64],
    temperature: f64,
    count: usize,
) -> Vec<usize> {
    let mut left: Vec<usize> = (0..scores.len()).collect();
    let mut out = Vec::with_capacity(count.min(left.len()));
    while out.len() < count && !left.is_empty() {
        let sub: Vec<f64> = left.iter().map(|&i| scores[i]).collect();
        let k = softmax_pick(rng, &sub, temperature).unwrap_or(0);
        out.push(left.swap_remove(k));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Removing a node moves exactly the keys it owned; every other key keeps its owner.
    #[test]
    fn the_ring_moves_only_the_removed_nodes_keys() {
        let all = Ring::new((0..20).map(|n| (n, 1_000 + n as u64)), 16);
        let less = Ring::new(
            (0..20).filter(|&n| n != 7).map(|n| (n, 1_000 + n as u64)),
            16,
        );
        let mut moved = 0;
        for key in 0..5_000u64 {
            let (a, b) = (all.owner(key).unwrap(), less.owner(key).unwrap());
            if a == 7 {
                assert_ne!(b, 7);
                moved += 1;
            } else {
                assert_eq!(a, b, "key {key}");
            }
        }
        // About 1/20 of the keys were node 7's.
        assert!((150..400).contains(&moved), "{moved}");
        assert_eq!(Ring::default().owner(1), None);
    }

    /// Seed 002's batch sampling against per-task sampling, worked by hand: 4 workers of which
    /// 2 (A, B) are free; a job of 2 tasks at probe ratio 2. Batch sampling probes all 4, so
    /// both free workers are always probed. Per-task sampling probes 2 of 4 per task: A is
    /// missed by both tasks with probability (1/2)^2 = 1/4, B likewise, both with (1/6)^2, so
    /// both are probed with 1 - 1/4 - 1/4 + 1/36 = 19/36.
    #[test]
    fn batch_sampling_always_reaches_both_free_workers_per_task_sampling_19_in_36() {
        let pool = [0, 1, 2, 3];
        let (free_a, free_b, master) = (0, 1, 99);
        let mut rng = Rng::new(42, 0);
        let trials = 20_000;
        let mut hits = [0u32; 2];
        for (b, batch) in [true, false].into_iter().enumerate() {
            for _ in 0..trials {
                let targets = probe_targets(&mut rng, &pool, master, (2, 2.0, batch));
                assert_eq!(targets.len(), 4);
                let has = |w| targets.iter().any(|&(_, x)| x == w);
                if has(free_a) && has(free_b) {
                    hits[b] += 1;
                }
            }
        }
        assert_eq!(hits[0], trials);
        let share = hits[1] as f64 / trials as f64;
        assert!((share - 19.0 / 36.0).abs() < 0.015, "{share}");
    }

    /// Only accepted members, distinct, found even when one in a thousand is accepted.
    #[test]
    fn accepted_samples_find_rare_members() {
        let pool: Vec<u32> = (0..1_000).collect();
        let mut rng = Rng::new(5, 0);
        let rare = distinct_accepted(&mut rng, &pool, 0, 2, |n| n == 777);
        assert_eq!(rare, [777]);
        let even = distinct_accepted(&mut rng, &pool, 4, 10, |n| n % 2 == 0);
        assert_eq!(even.len(), 10);
        assert!(even.iter().all(|n| n % 2 == 0 && *n != 4));
        let mut sorted = even.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 10);
        assert!(distinct_accepted(&mut rng, &[], 0, 3, |_| true).is_empty());
    }

    #[test]
    fn uniform_samples_are_distinct_and_exclude_the_sender() {
        let pool: Vec<u32> = (0..10).collect();
        let mut rng = Rng::new(1, 0);
        for count in [0, 1, 3, 8, 9, 12] {
            let s = distinct_uniform(&mut rng, &pool, 4, count);
            assert_eq!(s.len(), count.min(9));
            assert!(!s.contains(&4));
            let mut sorted = s.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), s.len());
        }
    }

    /// A large batch (the bit-per-node branch) draws exactly what scanning the draws so far
    /// would: the same members in the same order, on a pool with gaps.
    #[test]
    fn large_batches_draw_what_a_scan_would() {
        fn scan(rng: &mut Rng, pool: &[u32], exclude: u32, want: usize) -> Vec<u32> {
            let mut out = Vec::new();
            while out.len() < want {
                let n = pool[rng.below(pool.len() as u64) as usize];
                if n != exclude && !out.contains(&n) {
                    out.push(n);
                }
            }
            out
        }
        let pool: Vec<u32> = (0..3_000).filter(|n| n % 3 != 1).collect();
        for (seed, count) in [(1, 65), (2, 300), (3, 900)] {
            let got = distinct_uniform(&mut Rng::new(seed, 0), &pool, 6, count);
            assert_eq!(
                got,
                scan(&mut Rng::new(seed, 0), &pool, 6, count),
                "{count}"
            );
        }
    }

    /// Temperature 100 over scores 0..8 (free CPUs) is nearly uniform: each of two nodes with 0
    /// and 8 free is drawn with odds e^(8/100) = 1.083; at temperature 1 the odds are e^8.
    #[test]
    fn softmax_temperature_moves_from_random_walk_to_greedy() {
        let scores = [0.0, 8.0];
        let mut rng = Rng::new(3, 0);
        let n = 40_000;
        let share = |rng: &mut Rng, t: f64| {
            let picks = (0..n).filter(|_| softmax_pick(rng, &scores, t) == Some(1));
            picks.count() as f64 / n as f64
        };
        let warm = share(&mut rng, 100.0);
        let expected = 1.0 / (1.0 + (-0.08f64).exp());
        assert!((warm - expected).abs() < 0.01, "{warm} vs {expected}");
        let cold = share(&mut rng, 1.0);
        assert!(cold > 0.999, "{cold}");
        assert_eq!(softmax_pick(&mut rng, &[], 1.0), None);
        let d = softmax_distinct(&mut rng, &[1.0, 2.0, 3.0], 1.0, 5);
        assert_eq!(d.len(), 3);
    }
}
