//! The waiting tasks' *need classes* within a pass: tasks with the same need, constraint set
//! and admitted nodes behave alike, so once one finds no node in a pass, none of its class does,
//! nor any class needing at least as much of everything (with the same constraint set, or the
//! failed class had none; among the same nodes): placements only take room away within a pass.
//! Such a class is *dead* for the rest of the pass, and its tasks are skipped at the cost of a
//! lookup. (Before, the pass kept the first 32 failed needs and compared each task with all of
//! them: on a cell fitting by requests with ~170k tasks waiting and hundreds of needs failing
//! per tick, that and the searches for tasks no longer checked against a failure were most of
//! first-fit's time.) Only for choices that draw nothing: a skipped search would shift a drawing
//! choice's random stream.
//!
//! A task's class is cached per task slot and checked against its key each pass (requests
//! change while a task waits, slots are reused: the key decides, so no generation is read), so
//! most tasks cost a comparison, not a hash lookup. A class met for the first time in a pass is checked against the pass's failures so
//! far; a new failure kills the classes met so far that it dominates.
//!
//! Invariants: a class is dead in a pass only if some class it needs at least as much as (the
//! conditions above) found no node in that pass; the classes are a pure cache (not saved, and
//! renumbered from scratch when most are no longer waiting).

use rustc_hash::FxHashMap;
use std::ops::Range;

use super::fit::Need;
use crate::ids::{ConstraintSetIdx, TaskIdx};

/// What makes two tasks alike in a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct ClassKey {
    pub need: Need,
    pub set: ConstraintSetIdx,
    /// The nodes the task may use (`Admission::nodes`).
    pub nodes: (usize, usize),
}

impl ClassKey {
    /// Whether a task of this class finds no node whenever one of `failed` found none.
    pub fn harder_than(&self, failed: &ClassKey) -> bool {
        self.nodes == failed.nodes
            && (failed.set == self.set || failed.set == ConstraintSetIdx::EMPTY)
            && self.need.at_least(&failed.need)
    }
}

/// The need classes and which are dead in the current pass (module doc).
#[derive(Debug, Clone, Default)]
pub struct NeedClasses {
    /// Per task slot: the class it was last seen with (`u32::MAX`: none).
    slots: Vec<u32>,
    /// Per class: its key, the pass it was last met in, the pass it died in.
    keys: Vec<ClassKey>,
    met_in: Vec<u32>,
    dead_in: Vec<u32>,
    of_key: FxHashMap<ClassKey, u32>,
    /// The classes met in this pass, and those that found no node in it.
    met: Vec<u32>,
    failed: Vec<u32>,
    /// The current pass (from 1).
    pass: u32,
}

impl NeedClasses {
    /// Starts a pass over `waiting` tasks: every class alive, none met.
    pub fn begin_pass(&mut self, waiting: usize) {
        if self.keys.len() > 4 * waiting + 100_000 {
            *self = NeedClasses::default(); // most classes no longer wait
        }
        self.pass = self.pass.wrapping_add(1).max(1);
        if self.pass == 1 {
            self.met_in.fill(0);
            self.dead_in.fill(0);
        }
        self.met.clear();
        self.failed.clear();
    }

    /// Task `t`'s class (it has `need` and constraint set `set`, and may use `nodes`), met in
    /// this pass.
    pub fn class_of(
        &mut self,
        t: TaskIdx,
        (need, set, nodes): (&Need, ConstraintSetIdx, &Range<usize>),
    ) -> u32 {
        let key = ClassKey {
            need: *need,
            set,
            nodes: (nodes.start, nodes.end),
        };
        let i = t.index();
        if self.slots.len() <= i {
            self.slots.resize(i + 1, u32::MAX);
        }
        let class = self.slots[i];
        let class = match class != u32::MAX && self.keys[class as usize] == key {
            true => class,
            false => {
                let class = *self.of_key.entry(key).or_insert_with(|| {
                    self.keys.push(key);
                    self.met_in.push(0);
                    self.dead_in.push(0);
                    self.keys.len() as u32 - 1
                });
                self.slots[i] = class;
                class
            }
        };
        let c = class as usize;
        if self.met_in[c] != self.pass {
            self.met_in[c] = self.pass;
            self.met.push(class);
            let keys = &self.keys;
            if (self.failed.iter()).any(|&f| key.harder_than(&keys[f as usize])) {
                self.dead_in[c] = self.pass;
            }
        }
        class
    }

    /// Whether `class` found no node in this pass, or one it needs at least as much as did.
    pub fn dead(&self, class: u32) -> bool {
        self.dead_in[class as usize] == self.pass
    }

    /// A task of `class` found no node: it and every class met so far that it dominates are
    /// dead for the rest of the pass.
    pub fn failed(&mut self, class: u32) {
        let failed = self.keys[class as usize];
        self.failed.push(class);
        for &c in &self.met {
            let c = c as usize;
            if self.dead_in[c] != self.pass && self.keys[c].harder_than(&failed) {
                self.dead_in[c] = self.pass;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(cpu: u32, mem: u32, production: bool) -> Need {
        Need {
            cpu,
            mem,
            cpu_req: cpu,
            mem_req: mem,
            production,
        }
    }

    /// By hand, one pass over six tasks: (60, 10) fails, so (70, 10) met before and (60, 20)
    /// met after are dead, (50, 10) is not; the same need with constraint set 1 dies too (the
    /// failed one had none), but not among other nodes; a failure with set 1 kills a larger need
    /// with set 1, not with set 2. A new pass revives them all; a slot reused for another need
    /// gets another class.
    #[test]
    fn a_failure_kills_the_classes_it_dominates() {
        let mut cell = crate::cell::Cell::with_machines(1, 100, 100);
        let tasks: Vec<TaskIdx> = (0..6).map(|i| cell.tasks.alloc(1, i, 0, 0)).collect();
        let mut classes = NeedClasses::default();
        let all = 0..1;
        let none = ConstraintSetIdx::EMPTY;
        let (one, two) = (ConstraintSetIdx(1), ConstraintSetIdx(2));
        classes.begin_pass(6);
        let mut class = |t: usize, n: Need, set, nodes: &Range<usize>| {
            classes.class_of(tasks[t], (&n, set, nodes))
        };
        let bigger = class(0, need(70, 10, false), none, &all);
        let failing = class(1, need(60, 10, false), none, &all);
        assert_eq!(
            class(5, need(60, 10, false), none, &all),
            failing,
            "same key"
        );
        let smaller = class(2, need(50, 10, false), none, &all);
        let constrained = class(3, need(60, 10, false), one, &all);
        let elsewhere = class(4, need(60, 10, false), none, &(1..2));
        classes.failed(failing);
        assert!(classes.dead(failing) && classes.dead(bigger) && classes.dead(constrained));
        assert!(!classes.dead(smaller) && !classes.dead(elsewhere));
        let later = classes.class_of(tasks[5], (&need(60, 20, false), none, &all));
        assert!(classes.dead(later), "met after the failure");
        let production = classes.class_of(tasks[5], (&need(60, 10, true), none, &all));
        assert!(classes.dead(production), "production needs more");
        let small_one = classes.class_of(tasks[3], (&need(40, 10, false), one, &all));
        let bigger_one = classes.class_of(tasks[4], (&need(45, 10, false), one, &all));
        let bigger_two = classes.class_of(tasks[2], (&need(45, 10, false), two, &all));
        classes.failed(small_one);
        assert!(classes.dead(bigger_one));
        assert!(!classes.dead(bigger_two), "another constraint set");
        classes.begin_pass(6);
        assert!(!classes.dead(failing) && !classes.dead(bigger));
        let reused = classes.class_of(tasks[1], (&need(10, 10, false), none, &all));
        assert_ne!(reused, failing);
    }
}
