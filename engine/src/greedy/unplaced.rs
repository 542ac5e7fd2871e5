//! The greedy placers' memory of waiting tasks that no node could take. On a GCD cell thousands
//! of tasks wait tick after tick (many with constraints few nodes meet), and searching the room
//! index for each of them every tick was most of first-fit's time. A task no node qualified for
//! in the last pass ([`Unplaced::mark`]: its search found none, no node had room, or a smaller
//! need had failed) can only qualify now on a node whose columns changed since: placements in
//! that pass only took room away, and every other change to a node (a task ended or moved, its
//! usage, the machine's capacity, state or attributes) marks it touched in the cell
//! ([`Cell::touched`], taken by the metrics after each pass). So while the task's need and
//! constraint set are those it failed with, checking the touched nodes alone
//! ([`Unplaced::still_unplaceable`]) gives the answer a full search would: the placements are
//! the same. Only for choices that draw nothing ([`super::NodeChoice::DRAWS`] false): skipping
//! a search would change a drawing choice's random stream.
//!
//! Invariants: a mark counts only if it was set or confirmed in the previous pass (a task not
//! looked at in a pass loses it, as do all after a restore: neither marks nor the pass count are
//! saved); when more than an eighth of the nodes were touched, marks are not used (the index's
//! search is then as cheap).

use super::fit::Need;
use super::qualifies;
use crate::cell::Cell;
use crate::ids::{ConstraintSetIdx, TaskIdx};

/// What a task failed with, in which pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    /// The pass it was set or confirmed in (0: none).
    pass: u32,
    /// The task slot's generation.
    generation: u32,
    set: ConstraintSetIdx,
    need: Need,
}

const NO_MARK: Mark = Mark {
    pass: 0,
    generation: 0,
    set: ConstraintSetIdx::EMPTY,
    need: Need {
        cpu_use: 0,
        mem_use: 0,
        cpu_req: 0,
        mem_req: 0,
        production: false,
    },
};

/// The marks, per task slot, and this pass's touched nodes (module doc).
#[derive(Debug, Clone, Default)]
pub struct Unplaced {
    marks: Vec<Mark>,
    /// The current pass (from 1; 0 before the first).
    pass: u32,
    /// The nodes touched since the last pass (when `usable`).
    touched: Vec<u32>,
    /// Few enough nodes were touched for the marks to be used this pass.
    usable: bool,
}

impl Unplaced {
    /// Starts a pass over the waiting tasks of `cell`.
    pub fn begin_pass(&mut self, cell: &Cell) {
        self.pass = self.pass.wrapping_add(1).max(1);
        let touched = cell.touched();
        self.usable = touched.len() <= cell.nodes.len() / 8;
        self.touched.clear();
        if self.usable {
            self.touched.extend_from_slice(touched);
        }
    }

    /// True when task `t` (with `need` and constraint set `set`) failed in the last pass with
    /// this need and set and no node touched since qualifies for it now; the mark then holds for
    /// this pass too.
    pub fn still_unplaceable(
        &mut self,
        cell: &Cell,
        (t, set, need): (TaskIdx, ConstraintSetIdx, &Need),
    ) -> bool {
        let Some(mark) = self.marks.get_mut(t.index()).filter(|_| self.usable) else {
            return false;
        };
        let generation = cell.tasks.generation()[t.index()];
        let current = mark.pass != 0
            && mark.pass.wrapping_add(1) == self.pass
            && mark.generation == generation
            && mark.set == set
            && mark.need == *need;
        if !current || (self.touched.iter()).any(|&n| qualifies(cell, t, need, n as usize)) {
            return false;
        }
        mark.pass = self.pass;
        true
    }

    /// Notes that no node qualifies for task `t` with `need` and constraint set `set` now.
    pub fn mark(&mut self, cell: &Cell, (t, set, need): (TaskIdx, ConstraintSetIdx, &Need)) {
        let i = t.index();
        if self.marks.len() <= i {
            self.marks.resize(i + 1, NO_MARK);
        }
        self.marks[i] = Mark {
            pass: self.pass,
            generation: cell.tasks.generation()[i],
            set,
            need: *need,
        };
    }
}
