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
//! Invariant: `pairs` holds one (free CPU, free memory) per online node of the cell as of the
//! last [`Staircase::rebuild`] and the updates since, sorted; `mem_max[k]` is the most free
//! memory among `pairs[k..]`. Free amounts are negative on a node over its capacity.

use super::fit::{Need, free_amounts};
use crate::cell::Nodes;

/// The staircase of the online nodes' free (CPU, memory) (module doc).
#[derive(Debug, Clone, Default)]
pub struct Staircase {
    pairs: Vec<(i64, i64)>,
    mem_max: Vec<i64>,
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
        self.pairs.clear();
        let online = (0..nodes.len()).filter(|&n| nodes.online()[n]);
        self.pairs.extend(online.map(|n| free_pair(nodes, n)));
        self.pairs.sort_unstable();
        self.mem_max.clear();
        self.mem_max.resize(self.pairs.len(), 0);
        self.refresh_from(self.pairs.len(), 0);
    }

    /// Recomputes `mem_max` from index `top` (exclusive) down; below `settled` it stops at the
    /// first value that does not change (the pairs below it did not).
    fn refresh_from(&mut self, top: usize, settled: usize) {
        let mut above = self.mem_max.get(top).copied().unwrap_or(i64::MIN);
        for k in (0..top).rev() {
            let value = self.pairs[k].1.max(above);
            if k < settled && self.mem_max[k] == value {
                return;
            }
            self.mem_max[k] = value;
            above = value;
        }
    }

    /// An online node's free amounts went from `before` to `after` (a placement: less free).
    pub fn update(&mut self, before: (i64, i64), after: (i64, i64)) {
        let Ok(old) = self.pairs.binary_search(&before) else {
            debug_assert!(false, "a node's pair is in the staircase");
            return;
        };
        self.pairs.remove(old);
        let new = self.pairs.partition_point(|p| *p < after);
        self.pairs.insert(new, after);
        self.refresh_from(old.max(new) + 1, old.min(new));
    }

    /// Whether some online node has at least `need`'s CPU and memory free.
    pub fn may_fit(&self, need: &Need) -> bool {
        let k = self.pairs.partition_point(|p| p.0 < need.cpu as i64);
        self.mem_max.get(k).is_some_and(|&m| m >= need.mem as i64)
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
            let mut stairs = Staircase::default();
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
                        assert_eq!(
                            (&stairs.pairs, &stairs.mem_max),
                            (&rebuilt.pairs, &rebuilt.mem_max)
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
