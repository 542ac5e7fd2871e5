//! The greedy placers' index of room on the nodes: a segment tree over node indices holding, per
//! subtree, the most room any of its nodes has in each of the four amounts the fit rule reads
//! ([`super::fit`]: CPU and memory as the rule charges them, production CPU and memory
//! requests), and in a fifth, the lesser of a node's CPU and memory room. The per-amount maxima
//! of a subtree may come from different nodes (one with CPU to spare, another with memory), so
//! on a full cell they let a search into many subtrees where no node has both; a node with room
//! for a need has at least the lesser of its CPU and memory in both, so the fifth amount's
//! maximum shuts most of those (first-fit on the generated 12.5k cell: 238 tree nodes visited per
//! search -> 32). A search visits
//! only subtrees that might hold a node with room, in index order, and checks each leaf it
//! reaches with the fit rule itself: the tree is a bound, never the rule, so it cannot change a
//! placement, only skip nodes that cannot take the task.
//!
//! Invariants: `room[size + n]` is node `n`'s [`room_of`], `room[i]` the component-wise maximum
//! of its two children, for the cell as of the last [`RoomIndex::rebuild`] and the
//! [`RoomIndex::update`]s since. Rebuilt (O(nodes)) or refreshed from the nodes touched since
//! (O(log nodes) each) at each pass; updated after each placement (O(log nodes)).

use super::fit::Need;
use crate::cell::Nodes;

/// A node's room in (CPU, memory as the rule charges them, production CPU, production memory,
/// the lesser of the first two), each one more than the amount free (0 for an offline node), so
/// that a need of 0 still requires an online node.
type Room = [u32; 5];

/// Node `n`'s room.
fn room_of(nodes: &Nodes, n: usize) -> Room {
    if !nodes.online()[n] {
        return [0; 5];
    }
    let free = |used: u32, cap: u32| cap.saturating_sub(used).saturating_add(1);
    let (cpu, mem) = super::fit::charged(nodes, n);
    let (cpu, mem) = (free(cpu, nodes.cpu_cap()[n]), free(mem, nodes.mem_cap()[n]));
    [
        cpu,
        mem,
        free(nodes.prod_cpu_req()[n], nodes.cpu_cap()[n]),
        free(nodes.prod_mem_req()[n], nodes.mem_cap()[n]),
        cpu.min(mem),
    ]
}

/// What a node needs to have room for `need` (an upper bound of the fit rule).
fn wanted(need: &Need) -> Room {
    let prod = |v: u32| if need.production { v } else { 0 };
    let (cpu, mem) = (need.cpu.saturating_add(1), need.mem.saturating_add(1));
    [
        cpu,
        mem,
        prod(need.cpu_req).saturating_add(1),
        prod(need.mem_req).saturating_add(1),
        cpu.min(mem),
    ]
}

fn covers(room: &Room, want: &Room) -> bool {
    room.iter().zip(want).all(|(r, w)| r >= w)
}

/// The segment tree (module doc).
#[derive(Debug, Clone, Default)]
pub struct RoomIndex {
    /// Leaves from `size`; `size` a power of two at least the node count.
    room: Vec<Room>,
    size: usize,
    nodes: usize,
}

impl RoomIndex {
    /// Rebuilds the tree from the cell's nodes.
    pub fn rebuild(&mut self, nodes: &Nodes) {
        self.nodes = nodes.len();
        self.size = self.nodes.next_power_of_two().max(1);
        self.room.clear();
        self.room.resize(2 * self.size, [0; 5]);
        for n in 0..self.nodes {
            self.room[self.size + n] = room_of(nodes, n);
        }
        for i in (1..self.size).rev() {
            self.room[i] = max(&self.room[2 * i], &self.room[2 * i + 1]);
        }
    }

    /// Brings the tree up to date from `touched`, the nodes whose room may have changed since
    /// it was last built or refreshed (each once): updated one by one, or rebuilt when they are
    /// many or nodes came or went.
    pub fn refresh(&mut self, nodes: &Nodes, touched: &[u32]) {
        if self.nodes != nodes.len() || self.room.is_empty() || touched.len() > nodes.len() / 8 {
            return self.rebuild(nodes);
        }
        for &n in touched {
            self.update(nodes, n as usize);
        }
    }

    /// Refreshes node `n` after its sums changed.
    pub fn update(&mut self, nodes: &Nodes, n: usize) {
        self.set(n, room_of(nodes, n));
    }

    /// Rules node `n` out of every search until its next [`RoomIndex::update`] or rebuild (a
    /// node a policy keeps for tasks already waiting for it).
    pub fn close(&mut self, n: usize) {
        self.set(n, [0; 5]);
    }

    fn set(&mut self, n: usize, room: Room) {
        let mut i = self.size + n;
        self.room[i] = room;
        while i > 1 {
            i /= 2;
            self.room[i] = max(&self.room[2 * i], &self.room[2 * i + 1]);
        }
    }

    /// Whether any node might have room for `need`.
    pub fn any(&self, need: &Need) -> bool {
        self.room.get(1).is_some_and(|r| covers(r, &wanted(need)))
    }

    /// The first node in index order, from `from` on, that `accept` takes among those the tree
    /// does not rule out for `need`.
    pub fn first(
        &self,
        need: &Need,
        from: usize,
        accept: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        self.first_in(need, from..self.nodes, accept)
    }

    /// The first such node from `start` on, going round past the last node to those before
    /// `start`: with `start` drawn at random, every node of a symmetric cell is equally likely
    /// to be taken (a tie broken by a draw, not by index order; issue 55).
    pub fn first_round_from(
        &self,
        need: &Need,
        start: usize,
        mut accept: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let start = start.min(self.nodes);
        (self.first_in(need, start..self.nodes, &mut accept))
            .or_else(|| self.first_in(need, 0..start, &mut accept))
    }

    /// The first node in index order within `range` that `accept` takes among those the tree
    /// does not rule out for `need`.
    pub fn first_in(
        &self,
        need: &Need,
        range: std::ops::Range<usize>,
        mut accept: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let (from, to) = (range.start, range.end.min(self.nodes));
        if from >= to {
            return None;
        }
        let want = wanted(need);
        // Depth-first, left to right, over the subtrees that might hold such a node; the stack
        // holds at most one pending right sibling per level.
        let mut stack = [(0usize, 0usize, 0usize); 2 * usize::BITS as usize];
        stack[0] = (1, 0, self.size);
        let mut depth = 1;
        while depth > 0 {
            depth -= 1;
            let (i, lo, hi) = stack[depth];
            if hi <= from || lo >= to || !covers(&self.room[i], &want) {
                continue;
            }
            if i >= self.size {
                if accept(lo) {
                    return Some(lo);
                }
                continue;
            }
            let mid = (lo + hi) / 2;
            stack[depth] = (2 * i + 1, mid, hi);
            stack[depth + 1] = (2 * i, lo, mid);
            depth += 2;
        }
        None
    }
}

fn max(a: &Room, b: &Room) -> Room {
    std::array::from_fn(|k| a[k].max(b[k]))
}

#[cfg(test)]
mod tests {
    use super::super::fit::fits;
    use super::*;

    /// On random cells and needs, the nodes the index visits are a superset of those with room,
    /// in index order, and `first` finds the first node with room (`first_round_from` the first
    /// from a start, going round): as a scan over every node.
    #[test]
    fn the_index_finds_what_a_scan_finds() {
        let mut r = ingest::rng::Rng::new(7, 0);
        for case in 0..200 {
            let mut nodes = Nodes::default();
            let count = 1 + r.below(70) as usize;
            for m in 0..count {
                nodes.push(m as u64);
                let online = r.below(10) > 0;
                let cap = (50 + r.below(50) as u32, 50 + r.below(50) as u32);
                // Some overloaded: used above capacity.
                let used = (r.below(110) as u32, r.below(110) as u32);
                let prod_req = (r.below(110) as u32, r.below(110) as u32);
                nodes.set_for_test(m, online, cap, used, prod_req);
            }
            let mut index = RoomIndex::default();
            index.rebuild(&nodes);
            for _ in 0..20 {
                let need = Need {
                    cpu: r.below(40) as u32 * u32::from(case % 7 != 0),
                    mem: r.below(40) as u32,
                    cpu_req: r.below(60) as u32,
                    mem_req: r.below(60) as u32,
                    production: r.below(2) == 0,
                };
                let scan: Vec<usize> = (0..count).filter(|&n| fits(&nodes, n, &need)).collect();
                let mut visited = Vec::new();
                index.first(&need, 0, |n| {
                    visited.push(n);
                    false
                });
                assert!(visited.windows(2).all(|w| w[0] < w[1]), "index order");
                assert!(scan.iter().all(|n| visited.contains(n)), "case {case}");
                let first = index.first(&need, 0, |n| fits(&nodes, n, &need));
                assert_eq!(first, scan.first().copied(), "case {case}");
                assert!(index.any(&need) || scan.is_empty());
                let from = r.below(count as u64) as usize;
                let later = index.first(&need, from, |n| fits(&nodes, n, &need));
                assert_eq!(later, scan.iter().copied().find(|&n| n >= from));
                let round = index.first_round_from(&need, from, |n| fits(&nodes, n, &need));
                let wrapped = scan.iter().copied().find(|&n| n >= from);
                assert_eq!(round, wrapped.or_else(|| scan.first().copied()));
            }
            // Updating one node after a change matches a rebuild.
            let n = r.below(count as u64) as usize;
            let (cap, used) = (
                (nodes.cpu_cap()[n], nodes.mem_cap()[n]),
                (nodes.cpu_used()[n].saturating_add(30), nodes.mem_used()[n]),
            );
            let prod_req = (nodes.prod_cpu_req()[n], nodes.prod_mem_req()[n]);
            nodes.set_for_test(n, nodes.online()[n], cap, used, prod_req);
            index.update(&nodes, n);
            let mut rebuilt = RoomIndex::default();
            rebuilt.rebuild(&nodes);
            assert_eq!(index.room, rebuilt.room);
            // Refreshing from the nodes changed since matches a rebuild, whether it updates
            // them one by one (a few) or rebuilds (many).
            let changed: Vec<u32> = (0..count as u32).filter(|_| r.below(12) == 0).collect();
            for &m in &changed {
                let m = m as usize;
                let used = (r.below(110) as u32, r.below(110) as u32);
                let cap = (nodes.cpu_cap()[m], nodes.mem_cap()[m]);
                let prod_req = (nodes.prod_cpu_req()[m], nodes.prod_mem_req()[m]);
                nodes.set_for_test(m, r.below(10) > 0, cap, used, prod_req);
            }
            index.refresh(&nodes, &changed);
            rebuilt.rebuild(&nodes);
            assert_eq!(index.room, rebuilt.room, "case {case}");
        }
    }

    /// Two nodes, one with CPU to spare and one with memory: the per-amount maxima of the pair
    /// admit a need of both, the lesser-of-the-two amount shuts the pair (no node is visited),
    /// while a need either node has room for still finds it.
    #[test]
    fn room_split_across_nodes_is_not_visited() {
        let mut nodes = Nodes::default();
        for m in 0..2 {
            nodes.push(m);
        }
        let prod_req = (0, 0);
        nodes.set_for_test(0, true, (100, 100), (10, 95), prod_req); // CPU 90 free, memory 5
        nodes.set_for_test(1, true, (100, 100), (95, 10), prod_req); // CPU 5 free, memory 90
        let mut index = RoomIndex::default();
        index.rebuild(&nodes);
        let need = |cpu, mem| Need {
            cpu,
            mem,
            cpu_req: cpu,
            mem_req: mem,
            production: false,
        };
        let mut visited = Vec::new();
        let both = need(50, 50);
        let found = index.first(&both, 0, |n| {
            visited.push(n);
            true
        });
        assert_eq!(found, None);
        assert!(visited.is_empty() && !index.any(&both));
        assert_eq!(index.first(&need(5, 50), 0, |_| true), Some(1));
        assert_eq!(index.first(&need(50, 5), 0, |_| true), Some(0));
    }
}
