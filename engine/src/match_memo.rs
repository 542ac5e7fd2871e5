//! The nodes that meet a constraint set, memoised ([`MatchMemo`]): a set shared by many tasks
//! (the tasks of one job) is matched against every node once, not once per task, round and tick.
//!
//! MASB keeps one memo for all brokers' initial allocations, brought up to date in `begin_tick`
//! for the constraint sets of the tick's pending tasks (new sets matched in parallel) and only
//! read during the rounds; each broker keeps one of its own for the running tasks it finds
//! migration candidates for. The greedy placers keep one for the constrained tasks they look
//! for (`greedy/mod.rs`).
//!
//! Invariants: a set's positions are the ascending node indices below its `done` that met its
//! constraints at attribute epoch `epoch` ([`Cell::attributes_epoch`]); when attributes change,
//! only the nodes that changed are matched again (or the set is rebuilt when many did), and
//! nodes added since are matched on demand. Whether a node is online is not part of it: scans
//! still test that. Indices from [`MatchMemo::slot`] stay valid until the next
//! [`MatchMemo::trim`]. A pure cache: never saved, never part of an output.

use rayon::prelude::*;

use crate::cell::{Cell, Constraint};
use crate::ids::{ConstraintSetIdx, NodeIdx};
use crate::parallel_time::region;

/// A cell's attribute epoch and the nodes whose attributes changed since an earlier epoch
/// (`None` when that epoch is not a past one of the cell).
pub type Attributes<'a, 'c> = (u64, &'a dyn Fn(u64) -> Option<&'c [NodeIdx]>);

/// Matching nodes of constraint sets, by set.
#[derive(Debug, Clone, Default)]
pub struct MatchMemo {
    sets: Vec<MemoSet>,
    /// Each set's index in `sets`, by the set's number ([`Cell::constraint_set`]; `u32::MAX`:
    /// not held): found without hashing its constraints.
    slot_of: Vec<u32>,
}

#[derive(Debug, Clone)]
struct MemoSet {
    /// The set's number and its constraints.
    set: ConstraintSetIdx,
    key: Vec<Constraint>,
    matched: Matched,
    /// Given out by [`MatchMemo::slot`] since the last [`MatchMemo::trim`].
    used: bool,
}

/// The nodes one set matched, and how far that is current.
#[derive(Debug, Clone, Default)]
struct Matched {
    positions: Vec<u32>,
    /// Nodes below this were matched.
    done: u32,
    /// The attribute epoch `positions` hold for.
    epoch: u64,
}

/// Most sets a memo keeps from one tick to the next.
const MEMO_SETS: usize = 1024;

/// Most node positions a memo keeps over all its sets (64 MiB): at 8x one set can hold 100k.
const MEMO_POSITIONS: usize = 16 << 20;

impl Matched {
    /// Follows the attribute changes up to `epoch`: the nodes that changed are matched again
    /// with `meets`, or everything is forgotten when many did (or the log does not reach back).
    fn follow(
        &mut self,
        (epoch, changes_since): Attributes<'_, '_>,
        meets: &dyn Fn(NodeIdx) -> bool,
    ) {
        if self.done == 0 {
            self.epoch = epoch;
        }
        if self.epoch == epoch {
            return;
        }
        match changes_since(self.epoch) {
            Some(changed) if changed.len() <= self.done as usize / 4 => {
                for &n in changed.iter().filter(|n| n.0 < self.done) {
                    match (self.positions.binary_search(&n.0), meets(n)) {
                        (Ok(k), false) => {
                            self.positions.remove(k);
                        }
                        (Err(k), true) => self.positions.insert(k, n.0),
                        _ => {}
                    }
                }
            }
            _ => {
                self.positions.clear();
                self.done = 0;
            }
        }
        self.epoch = epoch;
    }

    /// Matches the nodes from `done` up to `nodes` with `meets`.
    fn extend(&mut self, nodes: usize, meets: &dyn Fn(NodeIdx) -> bool) {
        let done = self.done;
        self.positions
            .extend((done..nodes as u32).filter(|&n| meets(NodeIdx(n))));
        self.done = self.done.max(nodes as u32);
    }
}

/// Nodes per work item when sets are matched against new nodes.
const MATCH_BLOCK: u32 = 4096;

impl MatchMemo {
    /// Starts a tick: a memo holding more than 1,024 sets or 16 Mi positions (64 MiB) keeps
    /// only the sets used since the last trim, and forgets everything if that is still too
    /// much. Earlier indices are invalid afterwards.
    pub fn trim(&mut self) {
        let too_big = |sets: &[MemoSet]| {
            sets.len() > MEMO_SETS
                || sets
                    .iter()
                    .map(|s| s.matched.positions.len())
                    .sum::<usize>()
                    > MEMO_POSITIONS
        };
        if too_big(&self.sets) {
            self.sets.retain(|s| s.used);
            if too_big(&self.sets) {
                self.sets.clear();
            }
            self.slot_of.fill(u32::MAX);
            for (i, s) in self.sets.iter().enumerate() {
                self.slot_of[s.set.index()] = i as u32;
            }
        }
        for s in &mut self.sets {
            s.used = false;
        }
    }

    /// Where set number `set` is held, if it is.
    fn held(&self, set: ConstraintSetIdx) -> Option<u32> {
        (self.slot_of.get(set.index()).copied()).filter(|&i| i != u32::MAX)
    }

    /// The index of constraint set number `set`, whose constraints are `key` (added, matching
    /// nothing yet, when new), marked used; `None` for the empty set: everything matches, and a
    /// plain scan stops early.
    pub fn slot(&mut self, set: ConstraintSetIdx, key: &[Constraint]) -> Option<u32> {
        if set == ConstraintSetIdx::EMPTY {
            return None;
        }
        let i = match self.held(set) {
            Some(i) => i,
            None => {
                let i = self.sets.len() as u32;
                self.sets.push(MemoSet {
                    set,
                    key: key.to_vec(),
                    matched: Matched::default(),
                    used: false,
                });
                if self.slot_of.len() <= set.index() {
                    self.slot_of.resize(set.index() + 1, u32::MAX);
                }
                self.slot_of[set.index()] = i;
                i
            }
        };
        debug_assert_eq!(self.sets[i as usize].key, key, "set {set:?}");
        self.sets[i as usize].used = true;
        Some(i)
    }

    /// The nodes constraint set number `set` matched, if it was given out since the last trim
    /// (and so is current once [`MatchMemo::refresh_used`] has run).
    pub fn used(&self, set: ConstraintSetIdx) -> Option<&[u32]> {
        let held = &self.sets[self.held(set)? as usize];
        held.used.then_some(&held.matched.positions[..])
    }

    /// The nodes set `i` matched when last brought up to date, ascending.
    pub fn set(&self, i: u32) -> &[u32] {
        &self.sets[i as usize].matched.positions
    }

    /// Brings every set used since the last trim up to date with `cell`'s nodes and attributes.
    /// Attribute changes are followed set by set; the nodes sets have not matched yet are
    /// matched in one pass over them for all sets (each node's attributes read once, not once
    /// per set), in blocks of nodes in parallel.
    pub fn refresh_used(&mut self, cell: &Cell) {
        let changes = |since| cell.attribute_changes_since(since);
        let epoch = cell.attributes_epoch();
        region(|| {
            (self.sets.par_iter_mut().filter(|s| s.used)).for_each(|s| {
                let meets = |n: NodeIdx| cell.meets(n, &s.key);
                s.matched.follow((epoch, &changes), &meets);
            })
        });
        let nodes = cell.nodes.len() as u32;
        let todo: Vec<&MemoSet> = (self.sets.iter())
            .filter(|s| s.used && s.matched.done < nodes)
            .collect();
        let Some(from) = todo.iter().map(|s| s.matched.done).min() else {
            return;
        };
        let blocks: Vec<Vec<Vec<u32>>> = region(|| {
            (from..nodes)
                .step_by(MATCH_BLOCK as usize)
                .collect::<Vec<u32>>()
                .into_par_iter()
                .map(|start| {
                    let end = (start + MATCH_BLOCK).min(nodes);
                    let mut found = vec![Vec::new(); todo.len()];
                    for n in start..end {
                        for (s, found) in todo.iter().zip(&mut found) {
                            if n >= s.matched.done && cell.meets(NodeIdx(n), &s.key) {
                                found.push(n);
                            }
                        }
                    }
                    found
                })
                .collect()
        });
        let todo = (self.sets.iter_mut()).filter(|s| s.used && s.matched.done < nodes);
        for (k, s) in todo.enumerate() {
            s.matched
                .positions
                .extend(blocks.iter().flat_map(|b| &b[k]));
            s.matched.done = nodes;
        }
    }

    /// The nodes below `nodes` meeting constraint set number `set`, whose constraints are `key`
    /// (by `meets`), ascending, brought up to date at `attributes`; `None` for the empty set.
    pub fn positions(
        &mut self,
        attributes: Attributes<'_, '_>,
        (set, key): (ConstraintSetIdx, &[Constraint]),
        nodes: usize,
        meets: &dyn Fn(NodeIdx) -> bool,
    ) -> Option<&[u32]> {
        let i = self.slot(set, key)? as usize;
        let matched = &mut self.sets[i].matched;
        matched.follow(attributes, meets);
        matched.extend(nodes, meets);
        Some(&matched.positions)
    }
}

#[cfg(test)]
mod tests {
    use ingest::rng::Rng;

    use super::*;

    /// The memo brought up to date from the change log holds exactly the matching nodes, over
    /// random attribute changes (few and many per epoch), growing node counts and two sets.
    #[test]
    fn memo_follows_attribute_changes() {
        let mut r = Rng::new(11, 0);
        let keys: Vec<Vec<Constraint>> = (1..3)
            .map(|name| {
                vec![Constraint {
                    name,
                    op: 0,
                    value: 1,
                    value_int: None,
                }]
            })
            .collect();
        // value[key][node]: whether the node has the attribute value the key asks for.
        let mut value = vec![vec![false; 400]; 2];
        let (mut log, mut marks) = (Vec::new(), vec![0u32]);
        let mut memo = MatchMemo::default();
        let mut nodes = 100;
        let mut updated = 0;
        for epoch in 1..200u64 {
            let changes = if r.below(4) == 0 { 60 } else { r.below(4) };
            for _ in 0..changes {
                let (k, n) = (r.below(2) as usize, r.below(nodes as u64) as usize);
                value[k][n] = r.below(2) == 0;
                log.push(NodeIdx(n as u32));
            }
            marks.push(log.len() as u32);
            nodes = (nodes + r.below(3) as usize).min(400);
            let since = |e: u64| marks.get(e as usize).map(|&m| &log[m as usize..]);
            for _ in 0..3 {
                let k = r.below(2) as usize;
                let meets = |n: NodeIdx| value[k][n.index()];
                let expected: Vec<u32> = (0..nodes as u32)
                    .filter(|&n| value[k][n as usize])
                    .collect();
                let before = memo
                    .sets
                    .iter()
                    .find(|m| m.key == keys[k])
                    .map(|m| m.matched.done);
                let set = (ConstraintSetIdx(1 + k as u32), &keys[k][..]);
                let got = memo.positions((epoch, &since), set, nodes, &meets);
                assert_eq!(got, Some(&expected[..]), "epoch {epoch}, key {k}");
                updated += usize::from(before.is_some_and(|done| done > 0));
            }
        }
        assert!(updated > 300, "kept sets brought up to date: {updated}");
    }

    /// The shared path (sets given out by `slot`, matched by `refresh_used` over a cell) holds
    /// exactly the nodes `Cell::meets` accepts, across attribute changes and new nodes; a trim
    /// of an over-full memo keeps the sets in use and their indices' meaning.
    #[test]
    fn shared_sets_follow_the_cell() {
        let mut cell = Cell::default();
        let mut r = Rng::new(5, 0);
        let key = |value: u32| {
            vec![Constraint {
                name: 1,
                op: ingest::codes::comparison::EQUAL,
                value,
                value_int: None,
            }]
        };
        let mut memo = MatchMemo::default();
        for round in 0..6 {
            for _ in 0..40 {
                cell.nodes.push(cell.nodes.len() as u64);
            }
            for _ in 0..30 {
                let n = NodeIdx(r.below(cell.nodes.len() as u64) as u32);
                cell.set_attribute(n, 1, (1 + r.below(3) as u32, None));
            }
            cell.index_attributes();
            memo.trim();
            let slots: Vec<(u32, u32)> = (1..4)
                .filter(|&v| v != 1 + round % 3)
                .map(|v| (v, memo.slot(ConstraintSetIdx(v), &key(v)).expect("a set")))
                .collect();
            memo.refresh_used(&cell);
            for (v, i) in slots {
                let expected: Vec<u32> = (0..cell.nodes.len() as u32)
                    .filter(|&n| cell.meets(NodeIdx(n), &key(v)))
                    .collect();
                assert!(round == 0 || !expected.is_empty());
                assert_eq!(memo.set(i), &expected[..], "round {round}, value {v}");
            }
        }
        // Over-full: only the sets used since the last trim survive it (under new indices).
        let before: Vec<u32> = (0..cell.nodes.len() as u32)
            .filter(|&n| cell.meets(NodeIdx(n), &key(2)))
            .collect();
        assert!(!before.is_empty());
        memo.trim();
        for v in 10..(10 + MEMO_SETS as u32 - 1) {
            memo.slot(ConstraintSetIdx(v), &key(v));
        }
        memo.refresh_used(&cell);
        memo.trim();
        assert_eq!(memo.sets.len(), MEMO_SETS - 1);
        assert_eq!(memo.held(ConstraintSetIdx(2)), None);
        // The sets kept are found under their new indices.
        let kept = memo.slot(ConstraintSetIdx(500), &key(500)).expect("a set");
        assert_eq!(memo.sets[kept as usize].key, key(500));
        let again = memo.slot(ConstraintSetIdx(2), &key(2)).expect("a set");
        memo.refresh_used(&cell);
        assert_eq!(memo.set(again), &before[..]);
        assert_eq!(memo.used(ConstraintSetIdx(2)), Some(&before[..]));
        // Still too many after that: everything goes.
        memo.trim();
        for v in 5000..(5001 + MEMO_SETS as u32) {
            memo.slot(ConstraintSetIdx(v), &key(v));
        }
        memo.trim();
        assert!(memo.sets.is_empty() && memo.held(ConstraintSetIdx(5000)).is_none());
    }
}
