//! A per-tick index of where unconstrained new tasks can fit in a broker's cache, so that
//! initial allocation need not score the 200 scanned nodes of every pending task one by one
//! (SPEC 6, `select::initial_candidates`). The policy builds one over the shared cache for all
//! brokers at the start of a tick; a broker that reads reports of its own then builds its own.
//!
//! The scan of a task visits, from a random cache offset, the first `initial_candidates` entries
//! that are fresh and whose node is online (the window); SIAS is positive only on those whose
//! headroom `max_use * cap - load` takes the task (load: the node's usage or requested totals,
//! `sias_node_load`). The index holds the prefix counts of fresh-and-online entries, where each
//! offset's window ends (one sweep at build time), and, per CPU-headroom threshold, the
//! positions at or above it with a coarse step index into them; a task looks only at the
//! positions of the highest threshold below its CPU request that lie in its window.
//! Constrained tasks read the same index to tell fresh-and-online entries and surely-short
//! headroom apart (`select::scan`). The index also holds every entry's load as shares of its
//! capacity ([`LoadShare`]), so that scoring a window needs no division. Scores, their order and
//! the random draws are exactly those of the plain scan (tested against it).

use rayon::prelude::*;

use super::MasbConfig;
use super::select::CacheEntry;
use crate::csr::carried;
use crate::ids::NodeIdx;
use crate::parallel_time::region;

/// CPU headroom thresholds of the position lists (normalised CPU).
const THRESHOLDS: [f64; 10] = [0.0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6];

/// Slack under a task's request when choosing a list: far above rounding error, so that every
/// node SIAS could score above 0 is in the list.
const SLACK: f64 = 1e-9;

/// Positions per step of the coarse index into each list.
const STEP: usize = 64;

/// Cache positions per parallel block of [`FitIndex::rebuild`] (a few in unit tests, so that
/// their caches span blocks).
#[cfg(not(test))]
const POSITIONS_PER_BLOCK: usize = 8192;
#[cfg(test)]
const POSITIONS_PER_BLOCK: usize = 16;

/// An entry's load (the one SIAS reads, `sias_node_load`) as shares of its capacity, and the
/// share one normalised unit makes: the load after a placement is `cpu + cpu_req * per_cpu`,
/// within a few roundings of the exact `(load + cpu_req) / cap`, without a division. An entry
/// that is not fresh and online, or has no capacity, has infinite shares: never in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadShare {
    /// CPU load / CPU capacity.
    pub cpu: f64,
    /// Memory load / memory capacity.
    pub mem: f64,
    /// 1 / CPU capacity.
    pub per_cpu: f64,
    /// 1 / memory capacity.
    pub per_mem: f64,
}

impl LoadShare {
    /// Never in.
    const NONE: LoadShare = LoadShare {
        cpu: f64::INFINITY,
        mem: f64::INFINITY,
        per_cpu: 0.0,
        per_mem: 0.0,
    };
}

/// The index over one broker's cache at one moment.
#[derive(Debug, Clone, Default)]
pub struct FitIndex {
    /// `ok_before[p]`: fresh-and-online entries among positions `0..p` (length n + 1).
    ok_before: Vec<u32>,
    /// Per threshold, the fresh-and-online positions with CPU headroom at or above it.
    lists: Vec<Vec<u32>>,
    /// Per position, the thresholds its CPU headroom meets (it is in `lists[k]` for `k` below).
    levels: Vec<u8>,
    /// Per position, the entry's load as shares of its capacity.
    shares: Vec<LoadShare>,
    /// Per threshold, `steps[k][j]`: entries of `lists[k]` below position `j * STEP` (so that
    /// finding a position in a list searches at most one step).
    steps: Vec<Vec<u32>>,
    /// Per offset, where the window of `initial_candidates` fresh-and-online entries from it
    /// ends, and whether it wraps.
    ends: Vec<(u32, bool)>,
    /// Scratch: per block of the rebuild, its positions of each list.
    block_lists: Vec<Vec<Vec<u32>>>,
}

/// The list holding every node SIAS could score above 0 for a task requesting `cpu`: the highest
/// threshold under the request (less a slack far above rounding error).
fn list_for(cpu: f64) -> usize {
    THRESHOLDS
        .iter()
        .rposition(|&t| t <= cpu - SLACK)
        .unwrap_or(0)
}

/// One block of [`FitIndex::rebuild`]'s positions, from `first` on: each entry's level and
/// share, the block's running count of fresh-and-online entries (to be carried), and its
/// positions of each list; returns the block's count.
fn index_block(
    entries: &[CacheEntry],
    (first, levels, shares, ok_before, lists): BlockOut<'_>,
    (now_s, ttl, config, online): (f64, f64, &MasbConfig, &(dyn Fn(NodeIdx) -> bool + Sync)),
) -> u32 {
    lists.iter_mut().for_each(Vec::clear);
    levels.fill(0);
    shares.fill(LoadShare::NONE);
    let mut count = 0u32;
    for (local, e) in entries.iter().enumerate() {
        if now_s - e.reported_s <= ttl && online(e.node) {
            count += 1;
            let load = e.sias_load(config.sias_node_load);
            if e.cpu_cap > 0.0 && e.mem_cap > 0.0 {
                shares[local] = LoadShare {
                    cpu: load.cpu / e.cpu_cap,
                    mem: load.mem / e.mem_cap,
                    per_cpu: 1.0 / e.cpu_cap,
                    per_mem: 1.0 / e.mem_cap,
                };
            }
            let room = config.max_use * e.cpu_cap - load.cpu;
            for (k, &t) in THRESHOLDS.iter().enumerate() {
                if room < t {
                    break;
                }
                lists[k].push((first + local) as u32);
                levels[local] = k as u8 + 1;
            }
        }
        ok_before[local] = count;
    }
    count
}

/// A block's first position and its slices of the index's columns, and its lists.
type BlockOut<'a> = (
    usize,
    &'a mut [u8],
    &'a mut [LoadShare],
    &'a mut [u32],
    &'a mut Vec<Vec<u32>>,
);

impl FitIndex {
    /// Rebuilds the index over `cache` at `now_s`; `online` says whether a node is online. The
    /// positions' levels, shares and list entries are made in parallel blocks of
    /// [`POSITIONS_PER_BLOCK`] (each block's counts of fresh-and-online entries carried into the
    /// next's), the lists' step indexes one list per job.
    pub fn rebuild(
        &mut self,
        cache: &[CacheEntry],
        now_s: f64,
        config: &MasbConfig,
        online: &(dyn Fn(NodeIdx) -> bool + Sync),
    ) {
        let ttl = config.cache_ttl_s as f64;
        let n = cache.len();
        // Sized only: every block resets its own positions (`index_block`), on its thread.
        self.ok_before.resize(n + 1, 0);
        self.ok_before[0] = 0;
        self.levels.resize(n, 0);
        self.shares.resize(n, LoadShare::NONE);
        // Per block: its fresh-and-online count, and its positions of each list.
        let block_count = n.div_ceil(POSITIONS_PER_BLOCK);
        let blocks = &mut self.block_lists;
        blocks.resize_with(block_count, || vec![Vec::new(); THRESHOLDS.len()]);
        let blocks = &mut blocks[..block_count];
        let counts: Vec<u32> = region(|| {
            (cache.par_chunks(POSITIONS_PER_BLOCK))
                .zip(self.levels.par_chunks_mut(POSITIONS_PER_BLOCK))
                .zip(self.shares.par_chunks_mut(POSITIONS_PER_BLOCK))
                .zip(self.ok_before[1..].par_chunks_mut(POSITIONS_PER_BLOCK))
                .zip(blocks.par_iter_mut())
                .enumerate()
                .map(|(b, ((((entries, levels), shares), ok_before), lists))| {
                    let block = (b * POSITIONS_PER_BLOCK, levels, shares, ok_before, lists);
                    index_block(entries, block, (now_s, ttl, config, online))
                })
                .collect()
        });
        let blocks = &*blocks;
        let (carried, count) = carried(&counts);
        region(|| {
            (self.ok_before[1..]
                .par_chunks_mut(POSITIONS_PER_BLOCK)
                .zip(carried))
            .for_each(|(ok_before, before)| ok_before.iter_mut().for_each(|c| *c += before))
        });
        self.lists.resize_with(THRESHOLDS.len(), Vec::new);
        self.steps.resize_with(THRESHOLDS.len(), Vec::new);
        region(|| {
            (self
                .lists
                .par_iter_mut()
                .zip(self.steps.par_iter_mut())
                .enumerate())
            .for_each(|(k, (list, steps))| {
                list.clear();
                for lists in blocks {
                    list.extend_from_slice(&lists[k]);
                }
                steps.clear();
                let mut below = 0;
                for j in 0..=n.div_ceil(STEP) {
                    while below < list.len() && (list[below] as usize) < j * STEP {
                        below += 1;
                    }
                    steps.push(below as u32);
                }
            })
        });
        let limit = config.initial_candidates as usize;
        self.ends.clear();
        let total = count as usize;
        // As the offset grows, so does the rank the window ends at: one sweep per case.
        let (mut plain, mut wrapped) = (0, 0);
        for offset in 0..n {
            let first = self.ok_before[offset] as usize;
            let end = if limit >= total {
                (offset as u32, true) // the whole ring
            } else if first + limit <= total {
                let rank = first + limit;
                while (self.ok_before[plain] as usize) < rank {
                    plain += 1;
                }
                (plain as u32, false)
            } else {
                let rank = first + limit - total;
                while (self.ok_before[wrapped] as usize) < rank {
                    wrapped += 1;
                }
                (wrapped as u32, true)
            };
            self.ends.push(end);
        }
    }

    /// Whether the entry at position `p` was fresh and its node online when the index was
    /// built.
    pub fn is_ok(&self, p: usize) -> bool {
        self.ok_before.get(p + 1) > self.ok_before.get(p)
    }

    /// Every entry's load as shares of its capacity, by position.
    pub fn shares(&self) -> &[LoadShare] {
        &self.shares
    }

    /// Whether the entry at position `p` may score above 0 for a task requesting `cpu` (false
    /// only when its CPU headroom is surely short: the test of [`FitIndex::window`]).
    pub fn may_fit(&self, p: usize, cpu: f64) -> bool {
        self.levels
            .get(p)
            .is_some_and(|&l| l as usize > list_for(cpu))
    }

    /// Entries of list `k` below position `p`.
    fn below(&self, k: usize, p: usize) -> usize {
        let steps = &self.steps[k];
        let j = (p / STEP).min(steps.len() - 1);
        let (lo, hi) = (
            steps[j] as usize,
            steps[(j + 1).min(steps.len() - 1)] as usize,
        );
        lo + self.lists[k][lo..hi].partition_point(|&q| (q as usize) < p)
    }

    /// The positions that may score above 0 for a task requesting `cpu`, among the first
    /// `initial_candidates` (of the config the index was built with) fresh-and-online entries
    /// from `offset` (wrapping), in scan order: the first slice, then the second.
    pub fn window(&self, offset: usize, cpu: f64) -> (&[u32], &[u32]) {
        let Some(&(end, wraps)) = self.ends.get(offset) else {
            return (&[], &[]); // an empty cache
        };
        let k = list_for(cpu);
        let list = &self.lists[k];
        let start = self.below(k, offset);
        let stop = self.below(k, end as usize);
        if wraps {
            (&list[start..], &list[..stop.min(start)])
        } else {
            (&list[start..stop.max(start)], &[])
        }
    }
}

#[cfg(test)]
mod tests {
    use ingest::rng::Rng;

    use super::*;
    use crate::masb::select::{CacheView, Demand, ScoreScratch, initial_candidates, initial_top};
    use crate::masb::{ScoreReading, SiasNodeLoad};

    /// The indexed window gives exactly the plain scan's candidates (scores, order) and leaves
    /// the random stream where the scan leaves it, over random caches (stale entries, offline
    /// nodes, tight and roomy nodes, small and large limits) and task sizes around every
    /// threshold; so do constrained tasks scanned over matching positions with the index's
    /// fresh-and-online and headroom tests.
    #[test]
    fn the_index_agrees_with_the_plain_scan() {
        let mut r = Rng::new(7, 0);
        let (mut found, mut none) = (0, 0);
        for case in 0..300 {
            let n = 1 + r.below(120) as usize;
            let cache: Vec<CacheEntry> = (0..n)
                .map(|i| {
                    let cpu_cap = [0.25, 0.5, 1.0][r.below(3) as usize];
                    let mem_cap = [0.25, 0.5, 1.0][r.below(3) as usize];
                    CacheEntry {
                        node: NodeIdx(i as u32),
                        cpu_cap,
                        mem_cap,
                        cpu_req: cpu_cap * r.below(1_000) as f64 / 1_000.0,
                        mem_req: mem_cap * r.below(1_000) as f64 / 1_000.0,
                        cpu_used: cpu_cap * r.below(1_000) as f64 / 1_000.0,
                        mem_used: mem_cap * r.below(1_000) as f64 / 1_000.0,
                        reported_s: if r.below(10) == 0 { -1e9 } else { 100.0 },
                    }
                })
                .collect();
            let offline: Vec<bool> = (0..n).map(|_| r.below(8) == 0).collect();
            let online = |x: NodeIdx| !offline[x.index()];
            let online_flags: Vec<bool> = offline.iter().map(|o| !o).collect();
            let config = MasbConfig {
                initial_candidates: [1, 5, 40, 200][case % 4],
                sias_node_load: [SiasNodeLoad::Requested, SiasNodeLoad::Used][case / 4 % 2],
                score_reading: [ScoreReading::Free, ScoreReading::Used][case / 8 % 2],
                ..MasbConfig::default()
            };
            let mut fit = FitIndex::default();
            fit.rebuild(&cache, 120.0, &config, &online);
            for _ in 0..20 {
                let cpu = [0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.45][r.below(8) as usize]
                    * (0.9 + 0.2 * r.below(100) as f64 / 100.0);
                let task = Demand {
                    cpu_req: cpu,
                    mem_req: 0.02 * r.below(10) as f64,
                    cpu_use: 0.0,
                    mem_use: 0.0,
                };
                let seed = r.below(1 << 40);
                // The plain scan and `view` give the same candidates and leave the random
                // stream alike; the plain scan's are returned.
                let agree = |view: CacheView<'_>, matches: &dyn Fn(NodeIdx) -> bool, what: &str| {
                    let (mut a, mut b) = (Rng::new(seed, 1), Rng::new(seed, 1));
                    let all = CacheView::all(&cache);
                    let plain = initial_candidates(all, &task, 120.0, &config, &mut a, matches);
                    let indexed = initial_candidates(view, &task, 120.0, &config, &mut b, matches);
                    assert_eq!(plain, indexed, "{what}, case {case}, task {task:?}");
                    assert_eq!(
                        a.below(1 << 50),
                        b.below(1 << 50),
                        "{what}: same random stream"
                    );
                    plain
                };
                let view = CacheView {
                    fit: Some(&fit),
                    ..CacheView::all(&cache)
                };
                let plain = agree(view, &online, "fit index");
                // Raising only the best exponents to the power gives the same first `top`.
                let top = [1, 3, 10][r.below(3) as usize];
                let (mut scratch, mut best) = (ScoreScratch::default(), Vec::new());
                for v in [CacheView::all(&cache), view] {
                    let mut c = Rng::new(seed, 1);
                    let at = (120.0, &config);
                    initial_top(v, &task, at, &mut c, &online, top, &mut scratch, &mut best);
                    assert_eq!(
                        best,
                        plain[..plain.len().min(top)],
                        "case {case}, top {top}"
                    );
                    let mut d = Rng::new(seed, 1);
                    initial_candidates(v, &task, 120.0, &config, &mut d, &online);
                    assert_eq!(c.below(1 << 50), d.below(1 << 50), "same random stream");
                }
                // A constrained task: the memo's matching positions, with the index telling
                // fresh-and-online entries and short headroom apart, against the plain scan.
                let meets = |x: NodeIdx| !(x.0 as u64 * 7 + seed).is_multiple_of(3);
                let both = |x: NodeIdx| online(x) && meets(x);
                let matching: Vec<u32> = (0..n as u32).filter(|&x| meets(NodeIdx(x))).collect();
                let view = CacheView {
                    matching: Some((&matching, &online_flags)),
                    ok: Some(&fit),
                    ..CacheView::all(&cache)
                };
                agree(view, &both, "constrained");
                if plain.is_empty() {
                    none += 1;
                } else {
                    found += 1;
                }
            }
        }
        assert!(
            found > 1_000 && none > 500,
            "both outcomes: {found} / {none}"
        );
    }
}
