//! The node reports (seed 000 section 4, SPEC 6: every tick each node agent reports its node's
//! capacities, requests and usage to its broker), taken from the cell by `Masb::begin_tick`
//! instead of sent as messages (~100k a tick at 8x, each written, grouped and read once).
//! `begin_tick` sees the cell as the tick's first round does, where the node agents sent them,
//! and the brokers read them at the round after, where the messages arrived; the node agents
//! count them as sent, so the tick's `node_report` count is the same too.
//!
//! Invariant: a [`ReportBook`] due at global round `g` holds, for each broker `b`, the reports of
//! the nodes `n` online at the start of round `g - 1` with `n % brokers == b`, in node order (the
//! order the mailbox delivered them in). With one round per tick a tick's book is due at the next
//! tick's first round, so two books are kept and a snapshot saves the one still due.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::select::CacheEntry;
use crate::cell::Cell;
use crate::ids::{AgentIdx, NodeIdx};
use crate::parallel_time::region;
use crate::units::to_normalised;

/// The reports of one round, by broker, and the global round the brokers read them at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportBook {
    /// The global round the reports are read at (`None`: an unused book).
    pub due_round: Option<u64>,
    /// Each broker's reports, in node order.
    pub by_broker: Vec<Vec<CacheEntry>>,
}

/// The broker node `n`'s agent reports to, of `brokers`.
pub(super) fn broker_of(n: NodeIdx, brokers: u32) -> AgentIdx {
    AgentIdx(n.0 % brokers)
}

/// Node `n`'s report at `reported_s`: its capacities, requests and usage as the cell holds them.
pub(super) fn report(cell: &Cell, n: NodeIdx, reported_s: f64) -> CacheEntry {
    let (nodes, i) = (&cell.nodes, n.index());
    CacheEntry {
        node: n,
        cpu_cap: to_normalised(nodes.cpu_cap()[i]),
        mem_cap: to_normalised(nodes.mem_cap()[i]),
        cpu_req: to_normalised(nodes.cpu_req()[i]),
        mem_req: to_normalised(nodes.mem_req()[i]),
        cpu_used: to_normalised(nodes.cpu_used()[i]),
        mem_used: to_normalised(nodes.mem_used()[i]),
        reported_s,
    }
}

impl ReportBook {
    /// Takes the reports of every online node of `cell` for `brokers` brokers, made at
    /// `reported_s` and read at global round `due_round` (the buffers of the book's last use
    /// are reused).
    /// The brokers' lists are made in parallel, one job per broker: a broker's nodes are every
    /// `brokers`-th from its own index ([`broker_of`]), in node order.
    pub fn take(&mut self, cell: &Cell, brokers: u32, reported_s: f64, due_round: u64) {
        self.due_round = Some(due_round);
        self.by_broker.resize_with(brokers as usize, Vec::new);
        let nodes = cell.nodes.len();
        region(|| {
            (self.by_broker.par_iter_mut().enumerate()).for_each(|(b, reports)| {
                reports.clear();
                for i in (b..nodes).step_by(brokers as usize) {
                    let n = NodeIdx(i as u32);
                    debug_assert_eq!(broker_of(n, brokers).index(), b);
                    if cell.nodes.online()[i] {
                        reports.push(report(cell, n, reported_s));
                    }
                }
            })
        });
    }

    /// Broker `broker`'s reports read at global round `round` (none unless the book is due then).
    pub fn due(&self, broker: AgentIdx, round: u64) -> &[CacheEntry] {
        match self.due_round == Some(round) {
            true => self.by_broker.get(broker.index()).map_or(&[], |v| &v[..]),
            false => &[],
        }
    }

    /// Keeps every report in `cache` as [`CacheEntry::store`] on each would, on every thread
    /// by range of [`CACHE_PER_RANGE`] nodes: a node is in one broker's list at most, each list
    /// in node order (the invariant), so a range finds its reports by binary search in each list
    /// and no two stores meet.
    fn store_into(&self, cache: &mut Vec<CacheEntry>) {
        let ends = self.by_broker.iter().filter_map(|l| l.last());
        let Some(len) = ends.map(|e| e.node.index() + 1).max() else {
            return;
        };
        if cache.len() < len {
            cache.resize(len, CacheEntry::unset());
        }
        region(|| {
            (cache.par_chunks_mut(CACHE_PER_RANGE).enumerate()).for_each(|(r, slots)| {
                let first = r * CACHE_PER_RANGE;
                let within = first..first + slots.len();
                for list in &self.by_broker {
                    let from = list.partition_point(|e| e.node.index() < within.start);
                    let to = list.partition_point(|e| e.node.index() < within.end);
                    for entry in &list[from..to] {
                        let slot = &mut slots[entry.node.index() - first];
                        if entry.supersedes(slot) {
                            *slot = *entry;
                        }
                    }
                }
            })
        });
    }
}

/// Cache entries per range of [`ReportBook::store_into`] (256 KiB).
const CACHE_PER_RANGE: usize = 1 << 12;

/// Reports read one round after they are taken: the book of the tick's first round, and the
/// one before it, still due when a tick has a single round.
#[derive(Debug, Clone, Default)]
pub struct Reports {
    books: [ReportBook; 2],
}

impl Reports {
    /// Takes the reports of the round before `due_round` (at `reported_s`) into the book not
    /// still due then.
    pub fn take(&mut self, cell: &Cell, brokers: u32, reported_s: f64, due_round: u64) {
        self.books[(due_round % 2) as usize].take(cell, brokers, reported_s, due_round);
    }

    /// Broker `broker`'s reports read at global round `round`.
    pub fn due(&self, broker: AgentIdx, round: u64) -> &[CacheEntry] {
        let book = &self.books[(round % 2) as usize];
        book.due(broker, round)
    }

    /// Keeps the reports read at global round `round` in the brokers' shared `cache`, as every
    /// broker's CacheShare messages would deliver them (`protocol.rs`): after the round's steps,
    /// which read the cache as it was.
    pub fn store_due(&self, round: u64, cache: &mut Vec<CacheEntry>) {
        let book = &self.books[(round % 2) as usize];
        if book.due_round == Some(round) {
            book.store_into(cache);
        }
    }

    /// The book due at `first_round` or later (to be saved at a tick boundary whose next tick
    /// starts at global round `first_round`), if any.
    pub fn due_from(&self, first_round: u64) -> Option<&ReportBook> {
        (self.books.iter()).find(|b| b.due_round.is_some_and(|r| r >= first_round))
    }

    /// Puts back a book saved by [`Reports::due_from`] (the other book left unused).
    pub fn restore(&mut self, book: Option<ReportBook>) {
        self.books = Default::default();
        if let Some(book) = book {
            let slot = book.due_round.map_or(0, |r| (r % 2) as usize);
            self.books[slot] = book;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::UNITS;

    /// Five nodes, node 3 offline, two brokers (hand-worked): broker 0 reads nodes 0, 2 and 4,
    /// broker 1 node 1, each at the round they are due only; with one round per tick the book
    /// taken for round 6 leaves the one due at round 5 in place, and only the later one is in
    /// flight at the boundary before round 6.
    #[test]
    fn reports_reach_their_broker_at_their_round() {
        let mut cell = Cell::default();
        for m in 0..5 {
            let n = cell.nodes.push(100 + m).index();
            let (cap, used) = ((UNITS / 2, 0), (0, UNITS / 4 * m as u32));
            cell.nodes.set_for_test(n, m != 3, cap, used, (0, 0));
        }
        let mut reports = Reports::default();
        reports.take(&cell, 2, 240.0, 5);
        let nodes = |r: &[CacheEntry]| r.iter().map(|e| e.node.0).collect::<Vec<_>>();
        assert_eq!(nodes(reports.due(AgentIdx(0), 5)), [0, 2, 4]);
        assert_eq!(nodes(reports.due(AgentIdx(1), 5)), [1]);
        assert!(reports.due(AgentIdx(0), 4).is_empty() && reports.due(AgentIdx(0), 6).is_empty());
        let e = reports.due(AgentIdx(0), 5)[1];
        assert_eq!((e.cpu_cap, e.mem_used, e.reported_s), (0.5, 0.5, 240.0));
        cell.set_machine(NodeIdx(3), true, None);
        reports.take(&cell, 2, 300.0, 6);
        assert_eq!(nodes(reports.due(AgentIdx(0), 5)), [0, 2, 4]);
        assert_eq!(nodes(reports.due(AgentIdx(1), 6)), [1, 3]);
        let in_flight = reports.due_from(6).cloned();
        assert_eq!(in_flight.as_ref().and_then(|b| b.due_round), Some(6));
        assert!(reports.due_from(7).is_none());
        let mut restored = Reports::default();
        restored.restore(in_flight);
        assert_eq!(restored.due(AgentIdx(1), 6), reports.due(AgentIdx(1), 6));
        assert!(restored.due(AgentIdx(0), 5).is_empty());
    }

    /// A round's reports go into the shared cache as storing each with `CacheEntry::store`
    /// does: over several ranges of nodes, 1 to 7 brokers, some nodes offline (not reported),
    /// some cache entries newer than the report (kept), a cache shorter than the nodes (grown);
    /// nothing is stored at a round the book is not due.
    #[test]
    fn due_reports_are_stored_as_one_by_one() {
        let mut r = ingest::rng::Rng::new(17, 0);
        for case in 0..12 {
            let mut cell = Cell::default();
            let nodes = 2 * CACHE_PER_RANGE + r.below(CACHE_PER_RANGE as u64) as usize;
            for m in 0..nodes {
                let n = cell.nodes.push(m as u64).index();
                let used = (r.below(UNITS as u64) as u32, 0);
                cell.nodes
                    .set_for_test(n, r.below(5) > 0, (UNITS, UNITS), used, (0, 0));
            }
            let brokers = 1 + case % 7;
            let mut cache: Vec<CacheEntry> = (0..r.below(nodes as u64))
                .map(|i| CacheEntry {
                    node: NodeIdx(i as u32),
                    reported_s: 60.0 * r.below(3) as f64,
                    ..CacheEntry::unset()
                })
                .collect();
            let mut reports = Reports::default();
            reports.take(&cell, brokers, 60.0, 9);
            let mut expected = cache.clone();
            for b in 0..brokers {
                for &e in reports.due(AgentIdx(b), 9) {
                    CacheEntry::store(&mut expected, e);
                }
            }
            let before = cache.clone();
            reports.store_due(8, &mut cache);
            assert!(
                cache == before,
                "case {case}: stored at a round it is not due"
            );
            reports.store_due(9, &mut cache);
            assert_eq!(cache.len(), expected.len(), "case {case}");
            let differ = (cache.iter().zip(&expected)).position(|(a, b)| a != b);
            assert_eq!(differ, None, "case {case}");
        }
    }
}
