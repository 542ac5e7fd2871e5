//! How each greedy placer picks a node among those with room for a task: pure functions of the
//! cell, tested on hand-worked cells.

use ingest::rng::Rng;

use super::fit::{Need, fits, free_after};
use crate::cell::Cell;
use crate::ids::{NodeIdx, TaskIdx};

/// A rule choosing a node for a task among the online nodes with room for it that meet its
/// constraints.
pub trait NodeChoice: Default + Clone + Send + Sync {
    /// The policy's name.
    const NAME: &'static str;

    /// The node for task `t` (its `need`), or `None` when no node qualifies; `rng` is the tick's
    /// stream, drawn from in queue order.
    fn choose(&self, cell: &Cell, t: TaskIdx, need: &Need, rng: &mut Rng) -> Option<NodeIdx>;
}

/// The nodes with room for `need` that meet task `t`'s constraints, in index order.
fn candidates<'a>(cell: &'a Cell, t: TaskIdx, need: &'a Need) -> impl Iterator<Item = usize> + 'a {
    let constraints = cell.constraints_of(t);
    (0..cell.nodes.len()).filter(move |&n| {
        fits(&cell.nodes, n, need)
            && (constraints.is_empty() || cell.meets(NodeIdx(n as u32), constraints))
    })
}

/// The first qualifying node in index order (the order the trace adds machines).
#[derive(Debug, Default, Clone, Copy)]
pub struct FirstFit;

impl NodeChoice for FirstFit {
    const NAME: &'static str = "first-fit";

    fn choose(&self, cell: &Cell, t: TaskIdx, need: &Need, _: &mut Rng) -> Option<NodeIdx> {
        candidates(cell, t, need).next().map(|n| NodeIdx(n as u32))
    }
}

/// The qualifying node left with the least free CPU and memory shares, summed
/// ([`free_after`]); the lowest index among equals.
#[derive(Debug, Default, Clone, Copy)]
pub struct BestFit;

impl NodeChoice for BestFit {
    const NAME: &'static str = "best-fit";

    fn choose(&self, cell: &Cell, t: TaskIdx, need: &Need, _: &mut Rng) -> Option<NodeIdx> {
        let mut best: Option<(f64, usize)> = None;
        for n in candidates(cell, t, need) {
            let left = free_after(&cell.nodes, n, need);
            if best.is_none_or(|(b, _)| left < b) {
                best = Some((left, n));
            }
        }
        best.map(|(_, n)| NodeIdx(n as u32))
    }
}

/// A qualifying node drawn uniformly: the k-th of them, k drawn below their count.
#[derive(Debug, Default, Clone, Copy)]
pub struct Random;

impl NodeChoice for Random {
    const NAME: &'static str = "random";

    fn choose(&self, cell: &Cell, t: TaskIdx, need: &Need, rng: &mut Rng) -> Option<NodeIdx> {
        let count = candidates(cell, t, need).count();
        if count == 0 {
            return None;
        }
        let k = rng.below(count as u64) as usize;
        candidates(cell, t, need).nth(k).map(|n| NodeIdx(n as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Cell;

    /// Four online nodes of capacity (100, 100) using, in CPU and memory: node 0 (90, 10),
    /// node 1 (50, 50), node 2 (70, 20), node 3 (20, 80); and a pending task using (20, 15).
    fn cell() -> (Cell, TaskIdx) {
        let mut cell = Cell::default();
        for (m, (cpu, mem)) in [(90, 10), (50, 50), (70, 20), (20, 80)]
            .into_iter()
            .enumerate()
        {
            let n = cell.nodes.push(m as u64).index();
            cell.nodes.online[n] = true;
            (cell.nodes.cpu_cap[n], cell.nodes.mem_cap[n]) = (100, 100);
            (cell.nodes.cpu_used[n], cell.nodes.mem_used[n]) = (cpu, mem);
        }
        let t = cell.tasks.alloc(1, 0, 0, 0);
        cell.set_request(t, 20, 15);
        (cell, t)
    }

    fn choose<C: NodeChoice>(cell: &Cell, t: TaskIdx, seed: u64) -> Option<u32> {
        let need = Need::of(cell, t);
        let mut rng = Rng::new(seed, 0);
        C::default().choose(cell, t, &need, &mut rng).map(|n| n.0)
    }

    #[test]
    fn first_fit_takes_the_lowest_index_with_room() {
        let (mut cell, t) = cell();
        // Node 0 lacks CPU (90 + 20 > 100): node 1.
        assert_eq!(choose::<FirstFit>(&cell, t, 1), Some(1));
        cell.nodes.online[1] = false;
        assert_eq!(choose::<FirstFit>(&cell, t, 1), Some(2));
        cell.set_request(t, 90, 15);
        assert_eq!(choose::<FirstFit>(&cell, t, 1), None);
    }

    #[test]
    fn best_fit_leaves_the_least_free() {
        let (mut cell, t) = cell();
        // Free shares after placing (20, 15): node 1 0.30 + 0.35 = 0.65, node 2 0.10 + 0.65 =
        // 0.75, node 3 0.60 + 0.05 = 0.65; nodes 1 and 3 tie, the lower index wins.
        assert_eq!(choose::<BestFit>(&cell, t, 1), Some(1));
        cell.nodes.mem_used[3] = 81;
        assert_eq!(choose::<BestFit>(&cell, t, 1), Some(3));
        cell.set_request(t, 10, 30);
        // Node 0: 0.00 + 0.60; node 1: 0.40 + 0.20; node 2: 0.20 + 0.50; node 3 lacks memory.
        // Nodes 0 and 1 tie at 0.6 (up to rounding: 0.0 + 0.6 against 0.4 + 0.2).
        let left = |n| free_after(&cell.nodes, n, &Need::of(&cell, t));
        let expected = if left(1) < left(0) { 1 } else { 0 };
        assert_eq!(choose::<BestFit>(&cell, t, 1), Some(expected));
    }

    #[test]
    fn random_draws_uniformly_among_the_nodes_with_room() {
        let (cell, t) = cell();
        // Nodes 1, 2 and 3 have room: over 3,000 seeds each is drawn about 1,000 times, node 0
        // never.
        let mut drawn = [0u32; 4];
        for seed in 0..3_000 {
            drawn[choose::<Random>(&cell, t, seed).unwrap() as usize] += 1;
        }
        assert_eq!(drawn[0], 0);
        for &d in &drawn[1..] {
            assert!((900..1_100).contains(&d), "{drawn:?}");
        }
    }

    #[test]
    fn constraints_rule_nodes_out() {
        let (mut cell, t) = cell();
        // The task needs attribute 7 = value 3; only node 2 has it.
        cell.set_attribute(NodeIdx(2), 7, (3, Some(3)));
        cell.index_attributes();
        let rows = [crate::cell::Constraint {
            name: 7,
            op: ingest::codes::comparison::EQUAL,
            value: 3,
            value_int: Some(3),
        }];
        cell.set_constraints(t, &rows);
        assert_eq!(choose::<FirstFit>(&cell, t, 1), Some(2));
        assert_eq!(choose::<BestFit>(&cell, t, 1), Some(2));
        assert_eq!(choose::<Random>(&cell, t, 1), Some(2));
    }
}
