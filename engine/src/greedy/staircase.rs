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
//! Invariant: the blocks' pairs, in order, are one (free CPU, free memory) per online node of
//! the cell as of the last [`Staircase::rebuild`] and the updates since, sorted; no block is
//! empty; `mem_max[k]` of a block is the most free memory among its `pairs[k..]`, and
//! `above[b]` the most among the blocks after `b`. Free amounts are negative on a node over its
//! capacity.

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
}

impl Default for Staircase {
    fn default() -> Self {
        Staircase {
            blocks: Vec::new(),
            above: Vec::new(),
            block: BLOCK,
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
        let online = (0..nodes.len()).filter(|&n| nodes.online()[n]);
        let mut pairs: Vec<(i64, i64)> = online.map(|n| free_pair(nodes, n)).collect();
        pairs.sort_unstable();
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

    /// An online node's free amounts went from `before` to `after` (a placement: less free).
    pub fn update(&mut self, before: (i64, i64), after: (i64, i64)) {
        let found = self.block_of(before).and_then(|b| {
            let at = self.blocks[b].pairs.binary_search(&before).ok()?;
            Some((b, at))
        });
        let Some((old, at)) = found else {
            debug_assert!(false, "a node's pair is in the staircase");
            return;
        };
        self.blocks[old].pairs.remove(at);
        let mut touched = old;
        if self.blocks[old].pairs.is_empty() {
            self.blocks.remove(old);
            self.above.remove(old);
        } else {
            self.blocks[old].refresh();
        }
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
        block.refresh();
        touched = touched.max(new);
        if self.blocks[new].pairs.len() > 2 * self.block {
            let half = self.blocks[new].pairs.split_off(self.block);
            self.blocks[new].refresh();
            self.blocks.insert(new + 1, Block::of(&half));
            self.above.insert(new + 1, i64::MIN);
            touched = touched.max(new + 1);
        }
        self.refresh_above(touched + 1);
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

    /// On random cells, a need fits some node (by the fit rule, production requests aside)
    /// exactly when the staircase says it may; after nodes take more, the updated staircase is
    /// the rebuilt one.
    #[test]
    fn the_staircase_is_a_scan_of_cpu_and_memory() {
        let mut r = ingest::rng::Rng::new(9, 0);
        for _ in 0..300 {
            let mut nodes = Nodes::default();
            let count = r.below(40) as usize;
            for m in 0..count {
                nodes.push(m as u64);
                let cap = (50 + r.below(50) as u32, 50 + r.below(50) as u32);
                let used = (r.below(110) as u32, r.below(110) as u32);
                nodes.set_for_test(m, r.below(8) > 0, cap, used, (0, 0));
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
                        let before = free_pair(&nodes, n);
                        let cap = (nodes.cpu_cap()[n], nodes.mem_cap()[n]);
                        let used = (
                            nodes.cpu_used()[n] + r.below(30) as u32,
                            nodes.mem_used()[n] + r.below(30) as u32,
                        );
                        nodes.set_for_test(n, true, cap, used, (0, 0));
                        stairs.update(before, free_pair(&nodes, n));
                        let mut rebuilt = Staircase::default();
                        rebuilt.rebuild(&nodes);
                        assert_eq!(stairs.pairs(), rebuilt.pairs());
                        assert!(
                            (stairs.blocks.iter())
                                .all(|b| !b.pairs.is_empty() && b.pairs.len() <= 2 * block),
                            "blocks are split and dropped"
                        );
                    }
                }
                let need = Need {
                    cpu: r.below(60) as u32,
                    mem: r.below(60) as u32,
                    cpu_req: 0,
                    mem_req: 0,
                    production: false,
                };
                let scan = (0..count).any(|n| fits(&nodes, n, &need));
                assert_eq!(stairs.may_fit(&need), scan, "{need:?}");
            }
        }
    }
}
