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
//! With many tasks waiting on a cell whose requests are full (fitting by requests, issue 57), the
//! touched nodes' scan was most of first-fit's time: the placers now ask it only about tasks with
//! constraints (the others go to the room index, exact for them, `mod.rs`), and the most room
//! any online touched node has in each amount is taken once per pass (`most_room`): a task
//! needing more than that in some amount is known unplaceable without the scan (a bound:
//! placements in the pass only take room away).
//!
//! Invariants: a mark counts only if it was set or confirmed in the previous pass (a task not
//! looked at in a pass loses it, as do all after a restore: neither marks nor the pass count are
//! saved); when more than an eighth of the nodes were touched, marks are not used (the index's
//! search is then as cheap).

use super::fit::{Amounts, Need, covers, free_amounts};
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
        cpu: 0,
        mem: 0,
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
    /// The most room an online touched node has in each amount, once this pass needed it.
    touched_room: Option<Amounts>,
}

/// The component-wise most room (free amounts) of the online nodes among `nodes`; none online:
/// less than any need.
fn most_room(cell: &Cell, nodes: &[u32]) -> Amounts {
    let online = nodes
        .iter()
        .map(|&n| n as usize)
        .filter(|&n| cell.nodes.online()[n]);
    online.fold([i64::MIN; 4], |most, n| {
        let free = free_amounts(&cell.nodes, n);
        std::array::from_fn(|k| most[k].max(free[k]))
    })
}

impl Unplaced {
    /// Starts a pass over the waiting tasks of `cell`.
    pub fn begin_pass(&mut self, cell: &Cell) {
        self.begin_pass_with(cell, &[]);
    }

    /// Starts a pass over the waiting tasks of `cell`, counting `also` (nodes a policy changed
    /// in ways the cell does not see, such as a queue of its own that lost a task) as touched.
    pub fn begin_pass_with(&mut self, cell: &Cell, also: &[u32]) {
        self.pass = self.pass.wrapping_add(1).max(1);
        let touched = cell.touched_for_fit();
        self.usable = touched.len() + also.len() <= cell.nodes.len() / 8;
        self.touched.clear();
        self.touched_room = None;
        if self.usable {
            self.touched.extend_from_slice(touched);
            self.touched.extend_from_slice(also);
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
        if !self.usable {
            return false;
        }
        let room = match self.touched_room {
            Some(room) => room,
            None => *self.touched_room.insert(most_room(cell, &self.touched)),
        };
        if !covers(&room, &need.amounts()) {
            // No touched node has the room: only whether the mark is current decides.
            return self.still_unplaceable_by(cell, (t, set, need), |_| false);
        }
        self.still_unplaceable_by(cell, (t, set, need), |n| qualifies(cell, t, need, n))
    }

    /// [`Unplaced::still_unplaceable`] with the policy's own test of whether touched node `n`
    /// could take the task now (`could_take`).
    pub fn still_unplaceable_by(
        &mut self,
        cell: &Cell,
        (t, set, need): (TaskIdx, ConstraintSetIdx, &Need),
        mut could_take: impl FnMut(usize) -> bool,
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
        if !current || (self.touched.iter()).any(|&n| could_take(n as usize)) {
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

/// Drives `policies[0]` (with its memory) and `policies[1]` (whose memory `forget` clears
/// before every pass, so it searches for every task) through the same 39 random passes over
/// two copies of a random cell: between passes tasks arrive (some with constraints), tasks end
/// (running or waiting), usage and requests change, waiting tasks change priority or
/// constraints, machines leave, come back or are resized and attributes change; the metrics take the touched nodes after each pass, as in a run.
/// Asserts after every pass that both cells have every task in the same state on the same
/// node; returns the sum over passes of `waiting(&policies[0], &cells[0])` (how many tasks
/// waited: the memory only matters when many do).
#[cfg(test)]
pub(crate) fn same_placements_with_and_without<P: crate::policy::Policy>(
    seed: u64,
    mut policies: [P; 2],
    (forget, waiting): (impl Fn(&mut P), impl Fn(&P, &Cell) -> usize),
) -> usize {
    use crate::cell::{Constraint, TaskState};
    use crate::ids::{NodeIdx, Tick};
    use crate::policy::PolicyCounters;
    use crate::replay::TickEvents;
    use ingest::codes::comparison::EQUAL;
    let mut r = ingest::rng::Rng::new(seed, 0);
    let nodes = 16 + r.below(48) as usize;
    let mut cells = [0, 1].map(|_| Cell::with_machines(nodes as u64, 100, 100));
    let rows = |v: u32| {
        [Constraint {
            name: 1,
            op: EQUAL,
            value: v,
            value_int: None,
        }]
    };
    let mut waited = 0;
    for pass in 1..40u32 {
        let mut submitted = Vec::new();
        // The same changes to both cells (their slots evolve alike).
        let changes: Vec<(u64, u64, u64)> = (0..12)
            .map(|_| (r.below(10), r.below(1 << 20), r.below(1 << 20)))
            .collect();
        for (k, cell) in cells.iter_mut().enumerate() {
            let mut r = ingest::rng::Rng::new(seed ^ pass as u64, 1);
            for _ in 0..6 + r.below(10) {
                let t = cell.tasks.alloc(1, cell.tasks.len() as u32, 0, 0);
                cell.set_request(t, 5 + r.below(60) as u32, 5 + r.below(60) as u32);
                if r.below(3) == 0 {
                    cell.set_constraints(t, &rows(1 + r.below(3) as u32));
                }
                if k == 0 {
                    submitted.push(t);
                }
            }
            for &(kind, a, b) in &changes {
                let n = NodeIdx((a % nodes as u64) as u32);
                let live: Vec<TaskIdx> = (0..cell.tasks.len())
                    .map(|i| TaskIdx(i as u32))
                    .filter(|t| cell.tasks.state()[t.index()] != TaskState::Free)
                    .collect();
                let some = live.get((b as usize) % live.len().max(1)).copied();
                let state = |t: TaskIdx| cell.tasks.state()[t.index()];
                match (kind, some) {
                    (0 | 1, Some(t)) if state(t) == TaskState::Running => cell.end(t),
                    (2, Some(t)) => cell.set_usage(t, (b % 70) as u32, (a % 70) as u32),
                    (3, Some(t)) if state(t) == TaskState::Pending => {
                        cell.set_request(t, (b % 50) as u32 + 1, (a % 50) as u32 + 1)
                    }
                    (4, _) => cell.set_machine(n, b % 3 != 0, Some((100, 80 + (b % 40) as u32))),
                    (5, _) => cell.set_attribute(n, 1, ((b % 3) as u32 + 1, None)),
                    (6, _) => cell.remove_attribute(n, 1),
                    (7, Some(t)) if state(t) == TaskState::Pending => cell.end(t),
                    (8, Some(t)) if state(t) == TaskState::Pending => {
                        cell.set_priority(t, if b % 2 == 0 { 9 } else { 0 })
                    }
                    (9, Some(t)) if state(t) == TaskState::Pending => {
                        cell.set_constraints(t, &rows(1 + (b % 3) as u32))
                    }
                    _ => {}
                }
            }
            cell.index_attributes();
        }
        let events = TickEvents {
            submitted,
            ..TickEvents::default()
        };
        forget(&mut policies[1]);
        for (policy, cell) in policies.iter_mut().zip(cells.iter_mut()) {
            let at = (Tick(pass), pass as i64 * 60_000_000);
            let counters = &mut PolicyCounters::default();
            policy.begin_tick(
                cell,
                at,
                &events,
                &mut Vec::new(),
                &mut Vec::new(),
                counters,
            );
            cell.take_touched(&mut Vec::new());
        }
        let placed = |cell: &Cell| -> Vec<(TaskState, u32)> {
            (0..cell.tasks.len())
                .map(|i| (cell.tasks.state()[i], cell.tasks.node()[i].0))
                .collect()
        };
        assert_eq!(
            placed(&cells[0]),
            placed(&cells[1]),
            "seed {seed} pass {pass}"
        );
        waited += waiting(&policies[0], &cells[0]);
    }
    waited
}
