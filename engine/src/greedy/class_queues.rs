//! The waiting tasks kept by need class across ticks, so that a pass of a placer that draws
//! nothing costs what its live classes cost, not what its queue holds (issue 62: ~170k tasks
//! wait on the generated cell fitting by requests, in ~5-7k classes, and a pass places ~340
//! and searches in vain for ~16; looking at each waiting task, as `classes.rs` does, was most
//! of first-fit's time).
//!
//! Each class (need, constraint set, the cell's nodes: `classes.rs`'s key) holds its members'
//! queue positions in order. A pass merges the classes' members by position (the classes'
//! first members, kept sorted across passes, and a heap of the next members of the few classes
//! the pass moved on in: a heap of every class was slower), so the tasks it looks at come in
//! queue order, as in [`super::place_waiting`]; once a class is *dead* in the pass (one of its
//! tasks found no node, or a class it needs at least as much as did in a search) its remaining
//! members are never looked at. Which tasks a pass places is therefore the queue-order pass's:
//! a task is only passed over when no node can take it.
//!
//! Invariants: a member is current while its task slot holds the generation it was queued with,
//! is pending, and names this class and this position (`slot_*`); every queued pending task has
//! exactly one current member, in the class of its need now: new tasks join at the end of the
//! queue, and a waiting task whose need changed (the cell's need log, `cell/need_log.rs`) moves
//! to its new class at its old position. Stale members are skipped and dropped as the fronts
//! move, and all of them when they outnumber the current ones. A pure cache, rebuilt from the
//! queue whenever it cannot be brought up to date (first pass, a forgotten log, nodes added).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::classes::ClassKey;
use super::fit::Need;
use crate::cell::{Cell, TaskState};
use crate::ids::TaskIdx;

/// No class.
const NONE: u32 = u32::MAX;

/// One queued task: its queue position (increasing with the order tasks joined the queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Member {
    position: u64,
    task: TaskIdx,
}

/// What becomes of a class's task a pass looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Placed.
    Placed,
    /// Passed over without a verdict on its class (held back, not admitted now).
    Skipped,
    /// No node can take it: its class is dead for the pass. `searched`: found by a search (or a
    /// memory of one), not by an O(1) test every harder class would fail on its own, so the
    /// classes needing at least as much die with it.
    Failed { searched: bool },
}

/// The waiting tasks by need class (module doc).
#[derive(Debug, Clone, Default)]
pub struct ClassQueues {
    /// Per class: its key, its members in position order, and the index of its first member
    /// that may be current (every one before it is stale).
    keys: Vec<ClassKey>,
    members: Vec<Vec<Member>>,
    fronts: Vec<u32>,
    of_key: FxHashMap<ClassKey, u32>,
    /// Per task slot: the class, position and generation it was last queued with.
    slot_class: Vec<u32>,
    slot_position: Vec<u64>,
    slot_generation: Vec<u32>,
    /// The next queue position.
    next_position: u64,
    /// Members in all classes, current or stale.
    entries: usize,
    /// The cell's need log position read up to, and its node count; `None`: not built.
    synced: Option<(u64, usize)>,
    /// Per class in this pass: the pass it died in, the pass and count of failures it was
    /// checked against, and the index of its next member to look at.
    dead_in: Vec<u32>,
    checked: Vec<(u32, u32)>,
    cursors: Vec<u32>,
    /// The classes whose searches failed this pass.
    failures: Vec<u32>,
    /// Every class's first member (current or stale), (position, class) ascending, as of the
    /// last pass's start; the classes whose first member changed since (each once, flagged):
    /// a pass sorts only those into the order the last one left (most fronts stay put).
    fronts_ordered: Vec<(u64, u32)>,
    front_moved: Vec<u32>,
    front_moved_flag: Vec<bool>,
    /// The live classes' first members at the pass's start, (position, class) ascending, and
    /// how many of them the pass has taken.
    heads: Vec<(u64, u32)>,
    heads_taken: usize,
    /// The next member of each class the pass moved on in: (position, class), least first.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    /// The current pass (from 1).
    pass: u32,
}

impl ClassQueues {
    /// Forgets every class (the next [`ClassQueues::sync`] rebuilds from the queue).
    pub fn clear(&mut self) {
        *self = ClassQueues::default();
    }

    /// Brings the classes up to date with the queue `waiting` (in queue order, each task slot's
    /// generation at most once; entries whose slot no longer holds theirs, or is not pending,
    /// are passed over), whose entries from `new_from` on joined it since the last call.
    pub fn sync(&mut self, cell: &Cell, waiting: &[(TaskIdx, u32)], new_from: usize) {
        let changes = self.synced.and_then(|(since, nodes)| {
            (nodes == cell.nodes.len()).then(|| cell.need_changes_since(since))?
        });
        let too_stale =
            self.entries > 2 * waiting.len() + 4096 || self.keys.len() > 2 * waiting.len() + 4096;
        match changes {
            Some(changes) if !too_stale => {
                for &(t, generation) in &waiting[new_from..] {
                    self.join(cell, t, generation);
                }
                for &t in changes {
                    self.follow_need(cell, t);
                }
            }
            _ => {
                self.clear();
                for &(t, generation) in waiting {
                    self.join(cell, t, generation);
                }
            }
        }
        self.synced = Some((cell.need_log_end(), cell.nodes.len()));
    }

    /// The key of task `t`'s class now.
    fn key_of(cell: &Cell, t: TaskIdx) -> ClassKey {
        ClassKey {
            need: Need::of(cell, t),
            set: cell.constraint_set(t),
            nodes: (0, cell.nodes.len()),
        }
    }

    /// The class of `key`, made if new.
    fn class(&mut self, key: ClassKey) -> u32 {
        *self.of_key.entry(key).or_insert_with(|| {
            self.keys.push(key);
            self.members.push(Vec::new());
            self.fronts.push(0);
            self.dead_in.push(0);
            self.checked.push((0, 0));
            self.cursors.push(0);
            self.front_moved_flag.push(false);
            self.keys.len() as u32 - 1
        })
    }

    /// Queues task `t` (of `generation`) at the end, if pending in it.
    fn join(&mut self, cell: &Cell, t: TaskIdx, generation: u32) {
        let i = t.index();
        if cell.tasks.generation()[i] != generation || cell.tasks.state()[i] != TaskState::Pending {
            return;
        }
        if self.slot_class.len() <= i {
            self.slot_class.resize(i + 1, NONE);
            self.slot_position.resize(i + 1, 0);
            self.slot_generation.resize(i + 1, 0);
        }
        let class = self.class(Self::key_of(cell, t));
        let position = self.next_position;
        self.next_position += 1;
        self.slot_class[i] = class;
        self.slot_position[i] = position;
        self.slot_generation[i] = generation;
        let members = &mut self.members[class as usize];
        members.push(Member { position, task: t });
        if self.fronts[class as usize] as usize == members.len() - 1 {
            self.moved_front(class);
        }
        self.entries += 1;
    }

    /// Moves task `t`, if queued here, to the class of its need now, at its position.
    fn follow_need(&mut self, cell: &Cell, t: TaskIdx) {
        let i = t.index();
        let Some(&class) = self.slot_class.get(i) else {
            return;
        };
        let queued = class != NONE
            && self.slot_generation[i] == cell.tasks.generation()[i]
            && cell.tasks.state()[i] == TaskState::Pending;
        if !queued {
            return;
        }
        let key = Self::key_of(cell, t);
        if self.keys[class as usize] == key {
            return;
        }
        let to = self.class(key);
        let position = self.slot_position[i];
        let (members, front) = (
            &mut self.members[to as usize],
            &mut self.fronts[to as usize],
        );
        let at = members.partition_point(|m| m.position < position);
        let member = Member { position, task: t };
        // Back in a class it left: its old member there is current again.
        if members.get(at) != Some(&member) {
            members.insert(at, member);
            self.entries += 1;
        }
        // Every member before the front is stale: the front may start at the new one.
        if at as u32 <= *front {
            *front = at as u32;
            self.moved_front(to);
        }
        self.slot_class[i] = to;
    }

    /// Notes that `class`'s first member changed (its place in `fronts_ordered`).
    fn moved_front(&mut self, class: u32) {
        let flag = &mut self.front_moved_flag[class as usize];
        if !*flag {
            *flag = true;
            self.front_moved.push(class);
        }
    }

    /// Brings `fronts_ordered` up to date: the moved classes' entries out, their first members
    /// now sorted and merged in.
    fn order_fronts(&mut self) {
        if self.front_moved.is_empty() {
            return;
        }
        let moved = &self.front_moved_flag;
        self.fronts_ordered.retain(|&(_, c)| !moved[c as usize]);
        let kept = self.fronts_ordered.len();
        for &c in &self.front_moved {
            self.front_moved_flag[c as usize] = false;
            let front = self.fronts[c as usize] as usize;
            if let Some(m) = self.members[c as usize].get(front) {
                self.fronts_ordered.push((m.position, c));
            }
        }
        self.front_moved.clear();
        self.fronts_ordered[kept..].sort_unstable();
        // Two sorted runs: the stable sort finds them and merges in one sweep.
        self.fronts_ordered.sort();
    }

    /// Whether `fronts_ordered` is every class's first member, sorted (after a pass's start).
    #[cfg(test)]
    fn fronts_hold(&self) -> bool {
        let mut fresh: Vec<(u64, u32)> = (self.members.iter().zip(&self.fronts).enumerate())
            .filter_map(|(c, (m, &f))| Some((m.get(f as usize)?.position, c as u32)))
            .collect();
        fresh.sort_unstable();
        self.front_moved.is_empty() && fresh == self.fronts_ordered
    }

    /// Whether `member` of `class` is current (module doc).
    fn current(&self, cell: &Cell, class: u32, member: Member) -> bool {
        let i = member.task.index();
        self.slot_class[i] == class
            && self.slot_position[i] == member.position
            && self.slot_generation[i] == cell.tasks.generation()[i]
            && cell.tasks.state()[i] == TaskState::Pending
    }

    /// Starts a pass: each class at its front, alive unless `may_fit` says no node can have
    /// room for its need now (as the pass only takes room away, none will in the pass).
    pub fn begin_pass(&mut self, may_fit: impl Fn(&Need) -> bool) {
        self.pass = self.pass.wrapping_add(1).max(1);
        if self.pass == 1 {
            self.dead_in.fill(0);
            self.checked.fill((0, 0));
        }
        self.failures.clear();
        self.heap.clear();
        self.heads.clear();
        self.heads_taken = 0;
        self.cursors.copy_from_slice(&self.fronts);
        self.order_fronts();
        for &(position, c) in &self.fronts_ordered {
            match may_fit(&self.keys[c as usize].need) {
                true => self.heads.push((position, c)),
                false => self.dead_in[c as usize] = self.pass,
            }
        }
    }

    /// The next task of the pass, in queue order, among the classes alive now, with its class
    /// and need; `None` when every class is dead or done. A class whose need `may_fit` says no
    /// node has room for now dies on its turn without a look at its tasks (~5k classes a pass
    /// on the generated cell: reading their members' slots was a tenth of first-fit's time).
    /// Report what became of the task with [`ClassQueues::settle`].
    pub fn next(
        &mut self,
        cell: &Cell,
        may_fit: impl Fn(&Need) -> bool,
    ) -> Option<(TaskIdx, u32, Need)> {
        while let Some((position, class)) = self.pop_least() {
            let c = class as usize;
            if self.dead_in[c] == self.pass || self.dies_of_failures(class) {
                continue;
            }
            if !may_fit(&self.keys[c].need) {
                self.dead_in[c] = self.pass;
                continue;
            }
            // The class's first current member from its cursor; stale ones at the front go.
            loop {
                let cursor = self.cursors[c] as usize;
                let Some(&member) = self.members[c].get(cursor) else {
                    break;
                };
                if self.current(cell, class, member) {
                    if member.position == position {
                        return Some((member.task, class, self.keys[c].need));
                    }
                    // Stale members came first: the class waits for its turn at this one.
                    self.heap.push(Reverse((member.position, class)));
                    break;
                }
                if self.fronts[c] as usize == cursor {
                    self.fronts[c] += 1;
                    self.moved_front(class);
                }
                self.cursors[c] += 1;
            }
        }
        None
    }

    /// The least of the next first member and the heap's least, taken.
    fn pop_least(&mut self) -> Option<(u64, u32)> {
        let head = self.heads.get(self.heads_taken).copied();
        match (head, self.heap.peek()) {
            (Some(h), Some(&Reverse(m))) if m < h => self.heap.pop().map(|Reverse(m)| m),
            (Some(h), _) => {
                self.heads_taken += 1;
                Some(h)
            }
            (None, _) => self.heap.pop().map(|Reverse(m)| m),
        }
    }

    /// Whether a failure of this pass not yet checked kills `class`.
    fn dies_of_failures(&mut self, class: u32) -> bool {
        let c = class as usize;
        let (pass, count) = self.checked[c];
        let from = if pass == self.pass { count as usize } else { 0 };
        self.checked[c] = (self.pass, self.failures.len() as u32);
        let key = &self.keys[c];
        let keys = &self.keys;
        if (self.failures[from..].iter()).any(|&f| key.harder_than(&keys[f as usize])) {
            self.dead_in[c] = self.pass;
            return true;
        }
        false
    }

    /// What became of the task [`ClassQueues::next`] gave last, of `class`.
    pub fn settle(&mut self, class: u32, outcome: Outcome) {
        let c = class as usize;
        let cursor = self.cursors[c];
        match outcome {
            Outcome::Failed { searched } => {
                self.dead_in[c] = self.pass;
                if searched {
                    self.failures.push(class);
                }
                return;
            }
            Outcome::Placed => {
                // It left the queue: its member is stale even should it wait again unqueued.
                let task = self.members[c][cursor as usize].task;
                self.slot_class[task.index()] = NONE;
                if self.fronts[c] == cursor {
                    self.fronts[c] += 1;
                    self.moved_front(class);
                }
            }
            Outcome::Skipped => {}
        }
        self.cursors[c] = cursor + 1;
        if let Some(m) = self.members[c].get(cursor as usize + 1) {
            self.heap.push(Reverse((m.position, class)));
        }
    }

    /// Ends a pass: a class whose stale front is most of it drops it.
    pub fn end_pass(&mut self) {
        for (members, front) in self.members.iter_mut().zip(&mut self.fronts) {
            let f = *front as usize;
            if f > 0 && 2 * f >= members.len() {
                members.drain(..f);
                self.entries -= f;
                *front = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Constraint;
    use crate::ids::NodeIdx;
    use ingest::rng::Rng;

    /// What a pass does with task `t` (a function of the task and the pass alone, so the model
    /// and the queues see the same outcomes).
    fn outcome(t: TaskIdx, pass: u32) -> Outcome {
        match ingest::rng::hash_keys(t.0 as u64, &[pass as u64]) % 7 {
            0 => Outcome::Failed { searched: true },
            1 => Outcome::Failed { searched: false },
            2 => Outcome::Skipped,
            _ => Outcome::Placed,
        }
    }

    /// The independent model: the queue in order, each pending task looked at unless its class
    /// (need and constraint set now) failed in the pass, or needs at least as much as one
    /// whose search failed in it, or `may_fit` rejected its need at the pass's start.
    fn model_pass(
        cell: &mut Cell,
        waiting: &[(TaskIdx, u32)],
        pass: u32,
        may_fit: impl Fn(&Need) -> bool,
    ) -> Vec<TaskIdx> {
        let key = |cell: &Cell, t: TaskIdx| ClassKey {
            need: Need::of(cell, t),
            set: cell.constraint_set(t),
            nodes: (0, cell.nodes.len()),
        };
        let (mut failed, mut searched, mut seen) = (Vec::new(), Vec::new(), Vec::new());
        for &(t, generation) in waiting {
            let i = t.index();
            if cell.tasks.generation()[i] != generation
                || cell.tasks.state()[i] != TaskState::Pending
            {
                continue;
            }
            let k = key(cell, t);
            if !may_fit(&k.need)
                || failed.contains(&k)
                || searched.iter().any(|f: &ClassKey| k.harder_than(f))
            {
                continue;
            }
            seen.push(t);
            match outcome(t, pass) {
                Outcome::Failed { searched: s } => {
                    failed.push(k);
                    if s {
                        searched.push(k);
                    }
                }
                Outcome::Placed => cell.place(t, NodeIdx(0), 0),
                Outcome::Skipped => {}
            }
        }
        seen
    }

    /// By hand: a waiting task whose request goes from 1 to 2 and back to 1 between passes
    /// moves to the class of 2 and back, keeping its place before a later task of the class of
    /// 1; it is looked at once, before that task, with one member in its class (not a second).
    #[test]
    fn a_need_that_returns_keeps_one_member_at_its_place() {
        let mut cell = Cell::with_machines(1, 100, 100);
        let [t, u] = [0, 1].map(|k| {
            let t = cell.tasks.alloc(1, k, 0, 0);
            cell.set_request(t, 1, 1);
            t
        });
        let waiting: Vec<(TaskIdx, u32)> = [t, u]
            .map(|t| (t, cell.tasks.generation()[t.index()]))
            .to_vec();
        let mut queues = ClassQueues::default();
        let everywhere = |_: &Need| true;
        queues.sync(&cell, &waiting, 0);
        for cpu in [2, 1] {
            cell.set_request(t, cpu, 1);
            queues.sync(&cell, &waiting, waiting.len());
        }
        queues.begin_pass(everywhere);
        let mut seen = Vec::new();
        while let Some((task, class, _)) = queues.next(&cell, everywhere) {
            seen.push(task);
            queues.settle(class, Outcome::Skipped);
        }
        assert_eq!(seen, [t, u]);
        assert_eq!(
            queues.entries, 3,
            "t's member in the class of 2 and one in that of 1, u's"
        );
    }

    /// Over 60 random runs of 30 passes, the queues look at exactly the tasks the model does,
    /// in the same order, while between passes tasks join, end (waiting or running), change
    /// requests, priority or constraints while waiting, and placed tasks come off their node
    /// without joining again (not waiting then). A front member gone stale before a later
    /// member of its class came up, taken at its old position, fails this.
    #[test]
    fn a_pass_looks_at_the_tasks_queue_order_would() {
        let rows = |v: u32| {
            [Constraint {
                name: 1,
                op: ingest::codes::comparison::EQUAL,
                value: v,
                value_int: None,
            }]
        };
        let mut looked = 0;
        for seed in 0..60 {
            let mut r = Rng::new(seed, 0);
            let mut cell = Cell::with_machines(1, u32::MAX / 2, u32::MAX / 2);
            let mut waiting: Vec<(TaskIdx, u32)> = Vec::new();
            let mut queues = ClassQueues::default();
            for pass in 1..30u32 {
                let joined = waiting.len();
                for _ in 0..r.below(12) {
                    let t = cell.tasks.alloc(1, 0, (r.below(2) * 9) as u8, 0);
                    cell.set_request(t, 1 + r.below(4) as u32, 1 + r.below(3) as u32);
                    if r.below(4) == 0 {
                        cell.set_constraints(t, &rows(1 + r.below(2) as u32));
                    }
                    waiting.push((t, cell.tasks.generation()[t.index()]));
                }
                for _ in 0..r.below(8) {
                    let t = TaskIdx(r.below(cell.tasks.len().max(1) as u64) as u32);
                    if t.index() >= cell.tasks.len() {
                        continue;
                    }
                    match (r.below(5), cell.tasks.state()[t.index()]) {
                        (0, TaskState::Pending | TaskState::Running) => cell.end(t),
                        (1, TaskState::Pending) => {
                            cell.set_request(t, 1 + r.below(4) as u32, 1 + r.below(3) as u32)
                        }
                        (2, TaskState::Pending) => cell.set_priority(t, (r.below(2) * 9) as u8),
                        (3, TaskState::Pending) => cell.set_constraints(t, &rows(1)),
                        (4, TaskState::Running) => cell.unplace(t),
                        _ => {}
                    }
                }
                let limit = 2 + r.below(3) as u32;
                let may_fit = |need: &Need| need.cpu <= limit;
                queues.sync(&cell, &waiting, joined);
                queues.begin_pass(may_fit);
                assert!(queues.fronts_hold(), "seed {seed} pass {pass}");
                let mut seen = Vec::new();
                let mut copy = cell.clone();
                while let Some((t, class, need)) = queues.next(&cell, may_fit) {
                    assert_eq!(need, Need::of(&cell, t));
                    seen.push(t);
                    let o = outcome(t, pass);
                    if o == Outcome::Placed {
                        cell.place(t, NodeIdx(0), 0);
                    }
                    queues.settle(class, o);
                }
                queues.end_pass();
                let expected = model_pass(&mut copy, &waiting, pass, may_fit);
                assert_eq!(seen, expected, "seed {seed} pass {pass}");
                looked += seen.len();
                // The queue keeps its pending tasks (as `Waiting::keep_pending`).
                waiting.retain(|&(t, g)| {
                    cell.tasks.generation()[t.index()] == g
                        && cell.tasks.state()[t.index()] == TaskState::Pending
                });
            }
        }
        assert!(looked > 3_000, "{looked}");
    }
}
