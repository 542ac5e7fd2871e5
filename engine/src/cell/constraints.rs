//! Task constraints and node attributes: which nodes a task may run on.
//!
//! The attributes' source of truth is [`Cell`]'s ordered map; [`AttributeIndex`] lays them out
//! per node (CSR) for the hot path and logs which nodes changed, epoch after epoch, for caches
//! such as MASB's match memo. Constraint rows live in one vector, a task holding a range of it;
//! rows no live task refers to are dropped once they are half of it. Each distinct set of rows
//! is numbered once, when a task gets it ([`ConstraintSets`]), so that caches of per-set
//! results find a set by index rather than by hashing its rows on the hot path.

use rustc_hash::FxHashMap;

use super::{Cell, TaskState};
use crate::ids::{ConstraintSetIdx, NodeIdx, TaskIdx};

/// One placement constraint: `attribute op value` on interned strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Constraint {
    /// Interned attribute name.
    pub name: u32,
    /// Comparison operator code.
    pub op: u8,
    /// Interned value text (0 = empty).
    pub value: u32,
    /// Integer reading of the value.
    pub value_int: Option<i64>,
}

/// The distinct constraint sets the cell's tasks were given, each numbered once (from 1; 0 is
/// the empty set) by [`Cell::set_constraints`]. Derived from the tasks' rows: not saved, numbered
/// again on restore (the numbers are never shown; a cache keyed by them is a pure cache). Sets
/// are kept for the run: a trace has far fewer distinct sets than tasks, and every copy of a
/// job (`--multiply`) has its original's.
#[derive(Default, Clone)]
pub(crate) struct ConstraintSets {
    index_of: FxHashMap<Box<[Constraint]>, ConstraintSetIdx>,
}

impl ConstraintSets {
    /// The number of set `rows` (given one if new).
    fn intern(&mut self, rows: &[Constraint]) -> ConstraintSetIdx {
        if rows.is_empty() {
            return ConstraintSetIdx::EMPTY;
        }
        if let Some(&set) = self.index_of.get(rows) {
            return set;
        }
        let set = ConstraintSetIdx(self.index_of.len() as u32 + 1);
        self.index_of.insert(rows.into(), set);
        set
    }

    /// The number set `rows` was given, if it was ([`Cell::check`]).
    pub(crate) fn index_of(&self, rows: &[Constraint]) -> Option<ConstraintSetIdx> {
        match rows {
            [] => Some(ConstraintSetIdx::EMPTY),
            _ => self.index_of.get(rows).copied(),
        }
    }
}

impl std::fmt::Debug for ConstraintSets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConstraintSets")
            .field("sets", &self.index_of.len())
            .finish()
    }
}

/// Constraint rows below which they are never compacted.
const COMPACT_MIN_ROWS: usize = 1 << 20;

/// Entries of the attribute change log past which its older half is dropped (1 MiB of nodes):
/// a cache that has not caught up since an epoch older than what is left rebuilds instead.
const CHANGE_LOG_MAX: usize = 1 << 18;

/// Node attributes in compressed-sparse-row form: node `n`'s are entries
/// `offsets[n]..offsets[n + 1]`, sorted by name. The change log (`dirty`, `log`, `marks`) serves
/// caches of this process only: it is neither saved nor shown.
#[derive(Default, Clone)]
pub(crate) struct AttributeIndex {
    /// False after a change, until rebuilt.
    fresh: bool,
    /// Rebuilds so far (see [`Cell::attributes_epoch`]).
    epoch: u64,
    /// Nodes whose attributes changed since the last rebuild.
    dirty: Vec<NodeIdx>,
    /// Nodes whose attributes changed, epoch after epoch: the changes after epoch
    /// `first_epoch + k` start at `log[marks[k]]`. Epochs count from the cell's creation or
    /// restore; the log keeps at most about [`CHANGE_LOG_MAX`] entries, the newest epochs'.
    log: Vec<NodeIdx>,
    marks: Vec<u32>,
    first_epoch: u64,
    offsets: Vec<u32>,
    names: Vec<u32>,
    values: Vec<(u32, Option<i64>)>,
}

impl std::fmt::Debug for AttributeIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttributeIndex")
            .field("fresh", &self.fresh)
            .field("epoch", &self.epoch)
            .field("offsets", &self.offsets)
            .field("names", &self.names)
            .field("values", &self.values)
            .finish()
    }
}

impl Cell {
    /// Whether node `n` satisfies every constraint of task `t` (interned value 0 = empty text,
    /// which is how an absent attribute reads). Reads the attribute index when it is fresh (the
    /// replay rebuilds it after every trace window), the ordered map otherwise.
    pub fn satisfies(&self, n: NodeIdx, t: TaskIdx) -> bool {
        self.meets(n, self.constraints_of(t))
    }

    /// Whether node `n` satisfies every constraint of `constraints` (as [`Cell::satisfies`]).
    pub fn meets(&self, n: NodeIdx, constraints: &[Constraint]) -> bool {
        if constraints.is_empty() {
            return true;
        }
        let index = &self.attr_index;
        // The node's slice of the index when it is fresh, else the ordered map.
        let slice = (index.fresh && n.index() + 1 < index.offsets.len()).then(|| {
            let range = index.offsets[n.index()] as usize..index.offsets[n.index() + 1] as usize;
            (&index.names[range.clone()], &index.values[range])
        });
        let attribute = |name: u32| match slice {
            Some((names, values)) => names
                .iter()
                .position(|&have| have == name)
                .map(|p| values[p]),
            None => self.attributes.get(&(n, name)).copied(),
        };
        constraints.iter().all(|c| {
            let (have, have_int) = attribute(c.name).unwrap_or((0, None));
            ingest::codes::constraint_holds(c.op, have, have_int, c.value, c.value_int)
        })
    }

    /// Task `t`'s constraints.
    pub fn constraints_of(&self, t: TaskIdx) -> &[Constraint] {
        let start = self.tasks.constraint_start[t.index()] as usize;
        let len = self.tasks.constraint_len[t.index()] as usize;
        &self.constraints[start..start + len]
    }

    /// The number of task `t`'s constraint set: tasks with the same constraints have the same
    /// number ([`ConstraintSetIdx::EMPTY`] for none), different constraints different numbers.
    pub fn constraint_set(&self, t: TaskIdx) -> ConstraintSetIdx {
        self.tasks.constraint_set[t.index()]
    }

    /// Numbers the live tasks' constraint sets again, in slot order (a restored cell).
    pub(crate) fn number_constraint_sets(&mut self) {
        let mut sets = ConstraintSets::default();
        for i in 0..self.tasks.len() {
            let set = match self.tasks.state[i] {
                TaskState::Free => ConstraintSetIdx::EMPTY,
                _ => sets.intern(self.constraints_of(TaskIdx(i as u32))),
            };
            self.tasks.constraint_set[i] = set;
        }
        self.constraint_sets = sets;
        self.need_log.forget(); // every set has another number
    }

    /// Gives task `t` the constraints `rows` (at most 65,535), replacing any it had.
    ///
    /// The rows of ended tasks and of replaced sets stay in `Cell::constraints` until they are
    /// at least half of it; then (looked for each time the rows have doubled, from 1 Mi rows)
    /// only the live tasks' rows are kept, in slot order. Without that the rows would grow with
    /// every task the trace submits: ~140 MB a day at 8x.
    pub fn set_constraints(&mut self, t: TaskIdx, rows: &[Constraint]) {
        if self.constraints.len() + rows.len() >= self.compact_at.max(COMPACT_MIN_ROWS) {
            self.compact_constraints();
        }
        let i = t.index();
        self.tasks.constraint_start[i] = self.constraints.len() as u32;
        self.tasks.constraint_len[i] = rows.len() as u16;
        self.tasks.constraint_set[i] = self.constraint_sets.intern(rows);
        self.constraints.extend_from_slice(rows);
        self.need_changed(t);
        if self.tasks.state[i] == TaskState::Running {
            self.touch_constraints(self.tasks.node[i]);
            self.touch_constraints(self.tasks.migrating_to[i]);
        }
    }

    /// Keeps only the constraint rows of live tasks if the others are at least half of them.
    fn compact_constraints(&mut self) {
        let tasks = &mut self.tasks;
        let live = |state: &[TaskState], i: usize| state[i] != TaskState::Free;
        let kept: usize = (0..tasks.len())
            .filter(|&i| live(&tasks.state, i))
            .map(|i| tasks.constraint_len[i] as usize)
            .sum();
        if kept * 2 <= self.constraints.len() {
            let mut rows = Vec::with_capacity(kept);
            for i in 0..tasks.len() {
                let start = tasks.constraint_start[i] as usize;
                let len = tasks.constraint_len[i] as usize;
                if !live(&tasks.state, i) {
                    (tasks.constraint_start[i], tasks.constraint_len[i]) = (0, 0);
                    tasks.constraint_set[i] = ConstraintSetIdx::EMPTY;
                    continue;
                }
                tasks.constraint_start[i] = rows.len() as u32;
                rows.extend_from_slice(&self.constraints[start..start + len]);
            }
            self.constraints = rows;
        }
        self.compact_at = 2 * self.constraints.len();
    }

    /// Sets attribute `name` of node `n`.
    pub fn set_attribute(&mut self, n: NodeIdx, name: u32, value: (u32, Option<i64>)) {
        self.attributes.insert((n, name), value);
        self.attributes_changed(n);
    }

    /// Deletes attribute `name` of node `n`.
    pub fn remove_attribute(&mut self, n: NodeIdx, name: u32) {
        if self.attributes.remove(&(n, name)).is_some() {
            self.attributes_changed(n);
        }
    }

    fn attributes_changed(&mut self, n: NodeIdx) {
        // Which tasks the node takes changed (`greedy/unplaced.rs`).
        if n.is_some() {
            self.touch(n.index());
        }
        self.attr_index.fresh = false;
        self.attr_index.dirty.push(n);
        self.touch_constraints(n);
    }

    /// A value that changes whenever node `n`'s attributes change or a task running on it (or
    /// migrating to it) gets new constraints. A policy that saw every task on `n` meet its
    /// constraints may trust that while the stamp stays, provided it matches each task it
    /// places or migrates there on arrival (as [`Cell::satisfies`] does).
    pub fn constraint_stamp(&self, n: NodeIdx) -> u64 {
        self.constraint_stamps.get(n.index()).copied().unwrap_or(0)
    }

    /// Moves node `n`'s [`Cell::constraint_stamp`] (nothing for `NodeIdx::NONE`).
    fn touch_constraints(&mut self, n: NodeIdx) {
        if !n.is_some() {
            return;
        }
        if self.constraint_stamps.len() <= n.index() {
            self.constraint_stamps.resize(n.index() + 1, 0);
        }
        self.constraint_stamps[n.index()] += 1;
    }

    /// Rebuilds the attribute index if attributes or nodes changed since it was built.
    pub fn index_attributes(&mut self) {
        let index = &mut self.attr_index;
        if index.fresh && index.offsets.len() == self.nodes.len() + 1 {
            return;
        }
        // New nodes alone (no attributes yet) leave earlier nodes' matches as they were.
        let attributes_changed = !index.fresh;
        index.offsets.clear();
        index.names.clear();
        index.values.clear();
        let mut entries = self.attributes.iter().peekable();
        for n in 0..self.nodes.len() {
            index.offsets.push(index.names.len() as u32);
            while let Some(&(&(node, name), &value)) = entries.peek() {
                if node.index() != n {
                    break;
                }
                index.names.push(name);
                index.values.push(value);
                entries.next();
            }
        }
        index.offsets.push(index.names.len() as u32);
        index.fresh = true;
        if attributes_changed {
            if index.marks.is_empty() {
                index.marks.push(0);
            }
            index.epoch += 1;
            index.log.append(&mut index.dirty);
            index.marks.push(index.log.len() as u32);
            if index.log.len() > CHANGE_LOG_MAX {
                index.forget_older_half();
            }
        }
    }

    /// Changes whenever node attributes change (counted at [`Cell::index_attributes`]), so
    /// results derived from attributes can be kept until it moves.
    pub fn attributes_epoch(&self) -> u64 {
        self.attr_index.epoch
    }

    /// The nodes whose attributes changed after epoch `since` (in change order, possibly more
    /// than once), so results derived from attributes at `since` can be brought up to date node
    /// by node; `None` when `since` is not a past epoch of this cell.
    pub fn attribute_changes_since(&self, since: u64) -> Option<&[NodeIdx]> {
        let index = &self.attr_index;
        if since == index.epoch {
            return Some(&[]);
        }
        let k = since.checked_sub(index.first_epoch)?;
        let start = *index.marks.get(usize::try_from(k).ok()?)? as usize;
        Some(&index.log[start..])
    }
}

impl AttributeIndex {
    /// Drops the change log's epochs whose changes start in its older half (at least one).
    fn forget_older_half(&mut self) {
        let half = (self.log.len() / 2) as u32;
        let k = self.marks.partition_point(|&m| m < half).max(1);
        let cut = self.marks[k];
        self.log.drain(..cut as usize);
        self.marks.drain(..k);
        for m in &mut self.marks {
            *m -= cut;
        }
        self.first_epoch += k as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_changes_are_logged_per_epoch() {
        let mut cell = Cell::default();
        let a = cell.nodes.push(1);
        cell.index_attributes(); // the first build: epoch 1, no changes
        let b = cell.nodes.push(2);
        cell.index_attributes();
        assert_eq!(
            cell.attributes_epoch(),
            1,
            "new nodes alone change no epoch"
        );
        cell.set_attribute(a, 7, (1, None));
        cell.index_attributes();
        cell.set_attribute(b, 7, (1, None));
        cell.remove_attribute(a, 7);
        cell.remove_attribute(a, 8); // absent: no change
        cell.index_attributes();
        assert_eq!(cell.attributes_epoch(), 3);
        assert_eq!(cell.attribute_changes_since(1), Some(&[a, b, a][..]));
        assert_eq!(cell.attribute_changes_since(2), Some(&[b, a][..]));
        assert_eq!(cell.attribute_changes_since(3), Some(&[][..]));
        assert_eq!(cell.attribute_changes_since(4), None);
    }

    /// A node's constraint stamp moves when its attributes change or a task running on it (or
    /// migrating to it) gets new constraints, and for nothing else.
    #[test]
    fn constraint_stamps_move_with_what_can_break_a_match() {
        let mut cell = Cell::default();
        let [a, b, c] = [1, 2, 3].map(|m| {
            let n = cell.nodes.push(m);
            cell.nodes.online[n.index()] = true;
            (cell.nodes.cpu_cap[n.index()], cell.nodes.mem_cap[n.index()]) = (1_000, 1_000);
            n
        });
        let stamps = |cell: &Cell| [a, b, c].map(|n| cell.constraint_stamp(n));
        assert_eq!(stamps(&cell), [0, 0, 0]);
        cell.set_attribute(a, 7, (1, None));
        cell.remove_attribute(b, 7); // absent: no change
        assert_eq!(stamps(&cell), [1, 0, 0]);
        cell.remove_attribute(a, 7);
        assert_eq!(stamps(&cell), [2, 0, 0]);
        let rows = [Constraint {
            name: 7,
            op: ingest::codes::comparison::EQUAL,
            value: 1,
            value_int: None,
        }];
        let pending = cell.tasks.alloc(1, 0, 0, 0);
        cell.set_constraints(pending, &rows);
        assert_eq!(stamps(&cell), [2, 0, 0], "a pending task is on no node");
        let moving = cell.tasks.alloc(1, 1, 0, 0);
        cell.place(moving, b, 0);
        assert!(cell.start_migration(moving, c));
        assert_eq!(
            stamps(&cell),
            [2, 0, 0],
            "placements are matched on arrival"
        );
        cell.set_constraints(moving, &rows);
        assert_eq!(stamps(&cell), [2, 1, 1]);
        cell.index_attributes();
        assert_eq!(stamps(&cell), [2, 1, 1]);
    }

    /// The change log stays bounded: once past `CHANGE_LOG_MAX` entries its older half goes,
    /// old epochs then reading as unknown (`None`) and recent ones as before.
    #[test]
    fn the_change_log_forgets_old_epochs() {
        let mut cell = Cell::default();
        let a = cell.nodes.push(1);
        cell.index_attributes();
        let per_epoch = 1_000;
        let epochs = (CHANGE_LOG_MAX / per_epoch + 1) as u32;
        for e in 0..epochs {
            for k in 0..per_epoch as u32 {
                cell.set_attribute(a, 7, (1 + (e * per_epoch as u32 + k) % 2, None));
            }
            cell.index_attributes();
            let log = &cell.attr_index.log;
            assert!(
                log.len() <= CHANGE_LOG_MAX,
                "epoch {e}: {} entries",
                log.len()
            );
        }
        let now = cell.attributes_epoch();
        assert_eq!(now, 1 + u64::from(epochs));
        // The changes after epoch k start at entry (k - 1) x 1,000 (the first build changed
        // nothing); the 263rd epoch of changes took the log to 263,000 entries, and the epochs
        // whose changes start before its half (131,500), 0 to 132, went.
        let first = cell.attr_index.first_epoch;
        assert_eq!(first, 133);
        assert_eq!(cell.attr_index.log.len(), 131 * per_epoch);
        assert_eq!(cell.attribute_changes_since(first - 1), None);
        assert_eq!(cell.attribute_changes_since(1), None);
        for since in [first, now - 1] {
            let changes = cell.attribute_changes_since(since).unwrap();
            assert_eq!(changes.len(), (now - since) as usize * per_epoch);
            assert!(changes.iter().all(|&n| n == a));
        }
        assert_eq!(cell.attribute_changes_since(now), Some(&[][..]));
    }

    #[test]
    fn constraints_are_matched_against_node_attributes() {
        use ingest::codes::comparison::*;
        let mut cell = Cell::default();
        let (n, m) = (cell.nodes.push(1), cell.nodes.push(2));
        // Interned: 0 = "", 1 = name "a", 2 = value "7", 3 = value "x".
        cell.set_attribute(n, 1, (2, Some(7)));
        let t = cell.tasks.alloc(1, 0, 0, 0);
        let c = |op, value, value_int| Constraint {
            name: 1,
            op,
            value,
            value_int,
        };
        cell.constraints
            .extend([c(GREATER_THAN, 0, Some(5)), c(NOT_EQUAL, 3, None)]);
        cell.tasks.constraint_len[t.index()] = 2;
        assert!(cell.satisfies(n, t), "7 > 5 and 7 != x");
        assert!(!cell.satisfies(m, t), "no attribute: not comparable");
        cell.index_attributes();
        assert!(cell.satisfies(n, t), "the same through the index");
        assert!(!cell.satisfies(m, t));
        cell.set_attribute(m, 1, (2, Some(9)));
        assert!(cell.satisfies(m, t), "a change is seen before re-indexing");
        cell.index_attributes();
        assert!(cell.satisfies(m, t), "and after");
        cell.remove_attribute(n, 1);
        cell.index_attributes();
        assert!(!cell.satisfies(n, t));
        cell.tasks.constraint_len[t.index()] = 0;
        assert!(cell.satisfies(m, t), "no constraints");
    }

    /// The constraint rows of ended tasks and replaced sets are dropped once they are at least
    /// half of the rows (looked for when the rows reach 1 Mi, then each time they have doubled);
    /// every live task keeps exactly its own constraints.
    #[test]
    fn dead_constraint_rows_are_dropped() {
        use ingest::codes::comparison::EQUAL;
        let mut cell = Cell::default();
        let rows_of = |id: u32, n: u32| -> Vec<Constraint> {
            (0..n)
                .map(|k| Constraint {
                    name: id,
                    op: EQUAL,
                    value: k,
                    value_int: None,
                })
                .collect()
        };
        let mut expected: Vec<Option<Vec<Constraint>>> = Vec::new();
        let mut add = |cell: &mut Cell, id: u32, n: u32| {
            let t = cell.tasks.alloc(u64::from(id), 0, 0, 0);
            cell.set_constraints(t, &rows_of(id, n));
            expected.resize(cell.tasks.len(), None);
            expected[t.index()] = Some(rows_of(id, n));
            t
        };
        let first: Vec<TaskIdx> = (0..40).map(|id| add(&mut cell, id, 30_000)).collect();
        // The 35th set reached 1 Mi rows, all live: nothing dropped, next look at twice that.
        assert_eq!(cell.constraints.len(), 1_200_000);
        assert_eq!(cell.compact_at, 2 * 1_020_000);
        for &t in &first[..38] {
            cell.end(t);
        }
        cell.set_constraints(first[39], &rows_of(39, 10));
        let mut id = 40;
        while cell.constraints.len() + 30_000 < 2 * 1_020_000 {
            add(&mut cell, id, 30_000);
            id += 1;
        }
        assert_eq!(cell.constraints.len(), 1_200_010 + 27 * 30_000);
        add(&mut cell, id, 30_000);
        // Live: task 38 (30k), task 39 (10) and 28 new sets of 30k; the old rows went first.
        assert_eq!(cell.constraints.len(), 30_000 + 10 + 28 * 30_000);
        assert_eq!(cell.compact_at, 2 * (30_000 + 10 + 27 * 30_000));
        #[allow(clippy::needless_range_loop)] // `i` indexes several columns
        for i in 0..cell.tasks.len() {
            if cell.tasks.state[i] == TaskState::Free {
                continue;
            }
            let want = if i == first[39].index() {
                rows_of(39, 10)
            } else {
                expected[i].clone().expect("a live task was given rows")
            };
            assert_eq!(
                cell.constraints_of(TaskIdx(i as u32)),
                &want[..],
                "slot {i}"
            );
        }
        cell.check().expect("ranges inside the rows");
    }

    /// Tasks have the same constraint set number exactly when they have the same rows (none:
    /// the empty set), also after their constraints are replaced and after the sets are numbered
    /// again (a restore), and the invariant check catches a task whose number is not its rows'.
    #[test]
    fn constraint_sets_are_numbered_by_their_rows() {
        use ingest::codes::comparison::{EQUAL, NOT_EQUAL};
        let row = |name: u32, op: u8, value: u32| Constraint {
            name,
            op,
            value,
            value_int: None,
        };
        let sets = [
            vec![],
            vec![row(1, EQUAL, 2)],
            vec![row(1, EQUAL, 3)],
            vec![row(1, NOT_EQUAL, 2)],
            vec![row(1, EQUAL, 2), row(4, EQUAL, 5)],
            vec![row(4, EQUAL, 5), row(1, EQUAL, 2)],
        ];
        let mut cell = Cell::default();
        let tasks: Vec<TaskIdx> = (0..24)
            .map(|k| {
                let t = cell.tasks.alloc(k, 0, 0, 0);
                cell.set_constraints(t, &sets[(k as usize * 7) % sets.len()]);
                t
            })
            .collect();
        cell.set_constraints(tasks[3], &sets[4]);
        cell.set_constraints(tasks[5], &[]);
        let agree = |cell: &Cell| {
            for &a in &tasks {
                assert_eq!(
                    cell.constraint_set(a) == ConstraintSetIdx::EMPTY,
                    cell.constraints_of(a).is_empty()
                );
                for &b in &tasks {
                    assert_eq!(
                        cell.constraint_set(a) == cell.constraint_set(b),
                        cell.constraints_of(a) == cell.constraints_of(b),
                        "{a:?} {b:?}"
                    );
                }
            }
            cell.check().expect("numbers agree with the rows");
        };
        agree(&cell);
        let mut restored = cell.clone();
        restored.constraint_sets = ConstraintSets::default();
        restored.tasks.constraint_set.reverse();
        restored.number_constraint_sets();
        agree(&restored);
        let other = cell.constraint_set(tasks[1]);
        assert_ne!(cell.constraint_set(tasks[2]), other);
        cell.tasks.constraint_set[tasks[2].index()] = other;
        assert!(cell.check().unwrap_err().contains("constraint set"));
    }
}
