//! Whether any node has a given CPU and memory free together: the online nodes' free amounts
//! (as the fit rule charges them, `fit.rs`) sorted, with the most free memory among the nodes
//! with at least each amount of free CPU. Kept exact through a pass's placements
//! ([`Staircase::update`]), so a task no node can take is answered in O(log nodes).
//!
//! The room index (`room.rs`) bounds each subtree by the most CPU and the most memory any of
//! its nodes has free, which may be two different nodes: for a task no node can take, yet
//! within both maxima, a search visits much of the cell to find nothing. On a cell whose
//! requests are full (12.5k nodes fitting by requests, tens of thousands of tasks waiting),
//! such searches were most of first-fit's time.
//!
//! The pairs are kept in sorted blocks of at most [`BLOCK`] * 2 (each with the most free memory
//! at or above each of its pairs, and the blocks with the most above each block), so that a
//! placement's update moves O(sqrt nodes) values: one sorted vector over the 100k nodes of an 8x
//! cell moved ~1.6 MB per placement, and first-fit's first tick there (placing ~1M tasks) took
//! 16 s.
//!
//! Across passes it is brought up to date node by node ([`Staircase::refresh`]) from the nodes
//! the cell touched since the last pass (every one on a generated cell, whose usage rows touch
//! most nodes each tick, but only those whose free pair changed move: ~300 of 12.5k, where
//! sorting all of them each tick was 3 % of first-fit's time).
//!
//! Invariant: the blocks' pairs, in order, are one (free CPU, free memory) per online node of
//! the cell as of the last [`Staircase::rebuild`] and the updates since, sorted, and `pairs_of`
//! says which pair each node has there; no block is empty; `mem_max[k]` of a block is the most
//! free memory among its `pairs[k..]`, and `above[b]` the most among the blocks after `b`. Free
//! amounts are negative on a node over its capacity.

use super::fit::{Need, free_amounts};
use crate::cell::Nodes;

/// Pairs per block at a rebuild (a block splits at twice as many).
pub const BLOCK: usize = 256;

/// A sorted run of the pairs.
#[derive(Debug, Clone, Default)]
struct Block {
    pairs: Vec<(i64, i64)>,
    mem_max: Vec<i64>,
}

impl Block {
    fn of(pairs: &[(i64, i64)]) -> Block {
        let mut block = Block {
            pairs: pairs.to_vec(),
            mem_max: vec![0; pairs.len()],
        };
        block.refresh();
        block
    }

    /// Recomputes `mem_max`.
    fn refresh(&mut self) {
        self.mem_max.resize(self.pairs.len(), 0);
        let mut above = i64::MIN;
        for k in (0..self.pairs.len()).rev() {
            above = above.max(self.pairs[k].1);
            self.mem_max[k] = above;
        }
    }

    /// `mem_max` after `pair` was inserted at `k` (or, `None`, the pair at `k` removed): only
    /// the entries up to `k` can change, and from the first that does not, none before it does.
    fn follow(&mut self, k: usize, pair: Option<(i64, i64)>) {
        match pair {
            Some(_) => self.mem_max.insert(k, i64::MIN),
            None => {
                self.mem_max.remove(k);
            }
        }
        let mut above = self.mem_max.get(k + usize::from(pair.is_some())).copied();
        let end = if pair.is_some() { k + 1 } else { k };
        for j in (0..end).rev() {
            let now = self.pairs[j].1.max(above.unwrap_or(i64::MIN));
            if j < k && self.mem_max[j] == now {
                break;
            }
            self.mem_max[j] = now;
            above = Some(now);
        }
    }

    /// The most free memory in the block.
    fn most(&self) -> i64 {
        self.mem_max.first().copied().unwrap_or(i64::MIN)
    }

    fn last(&self) -> (i64, i64) {
        *self.pairs.last().expect("no block is empty")
    }
}

/// The staircase of the online nodes' free (CPU, memory) (module doc).
#[derive(Debug, Clone)]
pub struct Staircase {
    blocks: Vec<Block>,
    /// Per block: the most free memory in the blocks after it.
    above: Vec<i64>,
    /// Pairs per block at a rebuild ([`BLOCK`]; smaller in tests).
    block: usize,
    /// Per node: its pair in the blocks (`None`: offline).
    pairs_of: Vec<Option<(i64, i64)>>,
    /// Whether the blocks followed every change to the nodes since the last rebuild (a pass
    /// that does not keep them exact clears it: [`Staircase::forget`]).
    exact: bool,
    /// Scratch: the nodes whose pairs moved (node, pair now).
    moved: Vec<(usize, Option<(i64, i64)>)>,
}

impl Default for Staircase {
    fn default() -> Self {
        Staircase {
            blocks: Vec::new(),
            above: Vec::new(),
            block: BLOCK,
            pairs_of: Vec::new(),
            exact: false,
            moved: Vec::new(),
        }
    }
}

/// Node `n`'s free (CPU, memory) as the fit rule charges them (the first two of
/// [`free_amounts`]).
pub fn free_pair(nodes: &Nodes, n: usize) -> (i64, i64) {
    let [cpu, mem, ..] = free_amounts(nodes, n);
    (cpu, mem)
}

impl Staircase {
    /// Rebuilds it from the nodes.
    pub fn rebuild(&mut self, nodes: &Nodes) {
        self.pairs_of.clear();
        (self.pairs_of).extend((0..nodes.len()).map(|n| Self::pair_now(nodes, n)));
        let mut pairs: Vec<(i64, i64)> = self.pairs_of.iter().flatten().copied().collect();
        pairs.sort_unstable();
        self.exact = true;
        self.blocks.clear();
        self.blocks.extend(pairs.chunks(self.block).map(Block::of));
        self.above.clear();
        self.above.resize(self.blocks.len(), i64::MIN);
        self.refresh_above(self.blocks.len());
    }

    /// Recomputes `above` for the blocks before `top` (exclusive), from the last down.
    fn refresh_above(&mut self, top: usize) {
        let top = top.min(self.blocks.len());
        self.above.resize(self.blocks.len(), i64::MIN);
        let mut above = match top {
            t if t < self.blocks.len() => self.above[t].max(self.blocks[t].most()),
            _ => i64::MIN,
        };
        for b in (0..top).rev() {
            self.above[b] = above;
            above = above.max(self.blocks[b].most());
        }
    }

    /// The block holding pairs from `pair` on: the first whose last pair is not below it (the
    /// last block when every pair is below it); `None` when there are no blocks.
    fn block_of(&self, pair: (i64, i64)) -> Option<usize> {
        let b = self.blocks.partition_point(|block| block.last() < pair);
        (!self.blocks.is_empty()).then(|| b.min(self.blocks.len() - 1))
    }

    /// Node `n`'s pair in the staircase: its free pair if online.
    fn pair_now(nodes: &Nodes, n: usize) -> Option<(i64, i64)> {
        nodes.online()[n].then(|| free_pair(nodes, n))
    }

    /// The staircase no longer follows the nodes: the next [`Staircase::refresh`] rebuilds it.
    pub fn forget(&mut self) {
        self.exact = false;
    }

    /// Brings it up to date with the nodes, of which only `touched` (each once) changed since
    /// it was last exact: those whose pairs moved move, unless so many did (or nodes were
    /// added, or it was not exact) that a rebuild is cheaper.
    pub fn refresh(&mut self, nodes: &Nodes, touched: &[u32]) {
        if !self.exact || self.pairs_of.len() != nodes.len() {
            return self.rebuild(nodes);
        }
        let mut moved = std::mem::take(&mut self.moved);
        moved.clear();
        for &n in touched {
            let (n, now) = (n as usize, Self::pair_now(nodes, n as usize));
            if now != self.pairs_of[n] {
                moved.push((n, now));
            }
        }
        match moved.len() > nodes.len() / 16 {
            true => self.rebuild(nodes),
            false => moved.iter().for_each(|&(n, now)| self.set(n, now)),
        }
        self.moved = moved;
    }

    /// Online node `n`'s free amounts are now `after` (a placement: less free).
    pub fn update(&mut self, n: usize, after: (i64, i64)) {
        self.set(n, Some(after));
    }

    /// Node `n`'s pair is now `now` (`None`: offline).
    fn set(&mut self, n: usize, now: Option<(i64, i64)>) {
        let before = std::mem::replace(&mut self.pairs_of[n], now);
        let removed = before.and_then(|pair| self.remove(pair));
        let added = now.map(|pair| self.insert(pair));
        if let Some(top) = removed.max(added) {
            self.refresh_above(top + 1);
        }
    }

    /// Takes `pair` out; returns the highest block index whose values changed.
    fn remove(&mut self, pair: (i64, i64)) -> Option<usize> {
        let found = self.block_of(pair).and_then(|b| {
            let at = self.blocks[b].pairs.binary_search(&pair).ok()?;
            Some((b, at))
        });
        let Some((old, at)) = found else {
            debug_assert!(false, "a node's pair is in the staircase");
            return None;
        };
        self.blocks[old].pairs.remove(at);
        if self.blocks[old].pairs.is_empty() {
            self.blocks.remove(old);
            self.above.remove(old);
        } else {
            self.blocks[old].follow(at, None);
        }
        Some(old)
    }

    /// Puts `pair` in; returns the highest block index whose values changed.
    fn insert(&mut self, after: (i64, i64)) -> usize {
        let new = match self.block_of(after) {
            Some(b) => b,
            None => {
                self.blocks.push(Block::default());
                self.above.push(i64::MIN);
                0
            }
        };
        let block = &mut self.blocks[new];
        let k = block.pairs.partition_point(|p| *p < after);
        block.pairs.insert(k, after);
        block.follow(k, Some(after));
        let mut touched = new;
        if self.blocks[new].pairs.len() > 2 * self.block {
            let half = self.blocks[new].pairs.split_off(self.block);
            self.blocks[new].refresh();
            self.blocks.insert(new + 1, Block::of(&half));
            self.above.insert(new + 1, i64::MIN);
            touched = touched.max(new + 1);
        }
        touched
    }

    /// Whether some online node has at least `need`'s CPU and memory free.
    pub fn may_fit(&self, need: &Need) -> bool {
        let (cpu, mem) = (need.cpu as i64, need.mem as i64);
        let b = self.blocks.partition_point(|block| block.last().0 < cpu);
        let Some(block) = self.blocks.get(b) else {
            return false;
        };
        let k = block.pairs.partition_point(|p| p.0 < cpu);
        block.mem_max[k].max(self.above[b]) >= mem
    }

    /// Whether every block's `mem_max` and `above` are what recomputing them gives (tests).
    #[cfg(test)]
    fn maxima_hold(&self) -> bool {
        let blocks_hold = self.blocks.iter().all(|b| {
            let mut again = b.clone();
            again.refresh();
            again.mem_max == b.mem_max
        });
        let mut again = self.clone();
        again.refresh_above(again.blocks.len());
        blocks_hold && again.above == self.above
    }

    /// Every pair, in order (tests).
    #[cfg(test)]
    fn pairs(&self) -> Vec<(i64, i64)> {
        self.blocks
            .iter()
            .flat_map(|b| b.pairs.iter().copied())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::fit::fits;
    use super::*;
    use ingest::rng::Rng;

    /// On random cells, a need fits some node (by the fit rule, production requests aside)
    /// exactly when the staircase says it may; after nodes take more, the updated staircase is
    /// the rebuilt one.
    #[test]
    fn the_staircase_is_a_scan_of_cpu_and_memory() {
        let mut r = Rng::new(9, 0);
        for _ in 0..300 {
            let mut nodes = Nodes::default();
            let count = r.below(40) as usize;
            for m in 0..count {
                nodes.push(m as u64);
                random_node(&mut nodes, m, &mut r);
            }
            // Blocks of 1 to 4 pairs, so that blocks split and empty.
            let block = 1 + r.below(4) as usize;
            let mut stairs = Staircase {
                block,
                ..Staircase::default()
            };
            stairs.rebuild(&nodes);
            for _ in 0..30 {
                // A node's use grows (a placement) and the staircase follows it.
                if count > 0 && r.below(2) == 0 {
                    let n = r.below(count as u64) as usize;
                    if nodes.online()[n] {
                        let cap = (nodes.cpu_cap()[n], nodes.mem_cap()[n]);
                        let used = (
                            nodes.cpu_used()[n] + r.below(30) as u32,
                            nodes.mem_used()[n] + r.below(30) as u32,
                        );
                        nodes.set_for_test(n, true, cap, used, (0, 0));
                        stairs.update(n, free_pair(&nodes, n));
                        assert!(
                            (stairs.blocks.iter())
                                .all(|b| !b.pairs.is_empty() && b.pairs.len() <= 2 * block),
                            "blocks are split and dropped"
                        );
                    }
                }
                assert_follows(&stairs, &nodes, &mut r);
            }
        }
    }

    /// Between passes, nodes come and go and their use rises and falls; refreshed from the
    /// touched nodes (with some untouched ones listed too, as the cell lists every node a
    /// usage row touched), the staircase is the rebuilt one, whether it moved pairs or rebuilt.
    #[test]
    fn a_refresh_from_the_touched_nodes_is_a_rebuild() {
        let mut r = Rng::new(11, 0);
        for _ in 0..200 {
            let mut nodes = Nodes::default();
            let count = 1 + r.below(60) as usize;
            for m in 0..count {
                nodes.push(m as u64);
                random_node(&mut nodes, m, &mut r);
            }
            let mut stairs = Staircase {
                block: 1 + r.below(4) as usize,
                ..Staircase::default()
            };
            stairs.rebuild(&nodes);
            for _ in 0..10 {
                let mut touched: Vec<u32> = Vec::new();
                for _ in 0..r.below(6) {
                    let n = r.below(count as u64) as usize;
                    if !touched.contains(&(n as u32)) {
                        random_node(&mut nodes, n, &mut r);
                        touched.push(n as u32);
                    }
                }
                let listed = r.below(count as u64) as u32;
                if !touched.contains(&listed) {
                    touched.push(listed); // touched, not changed
                }
                stairs.refresh(&nodes, &touched);
                for _ in 0..5 {
                    assert_follows(&stairs, &nodes, &mut r);
                }
            }
        }
    }

    /// Node `m` made random: online 7 times in 8, capacities 50-99, use 0-109 (some over).
    fn random_node(nodes: &mut Nodes, m: usize, r: &mut Rng) {
        let cap = (50 + r.below(50) as u32, 50 + r.below(50) as u32);
        let used = (r.below(110) as u32, r.below(110) as u32);
        nodes.set_for_test(m, r.below(8) > 0, cap, used, (0, 0));
    }

    /// `stairs` is what a rebuild from `nodes` gives, maxima and all, and answers a random need
    /// as a scan over the nodes does.
    fn assert_follows(stairs: &Staircase, nodes: &Nodes, r: &mut Rng) {
        let mut rebuilt = Staircase::default();
        rebuilt.rebuild(nodes);
        assert_eq!(stairs.pairs(), rebuilt.pairs());
        assert!(stairs.maxima_hold());
        let need = Need {
            cpu: r.below(60) as u32,
            mem: r.below(60) as u32,
            cpu_req: 0,
            mem_req: 0,
            production: false,
        };
        let scan = (0..nodes.len()).any(|n| fits(nodes, n, &need));
        assert_eq!(stairs.may_fit(&need), scan, "{need:?}");
    }
}
