//! The cell's state as columns: [`Nodes`] and [`Tasks`], indexed by [`NodeIdx`] / [`TaskIdx`].
//!
//! Invariants (checked by [`Cell::check`] in tests):
//! - every column of a table has the table's length;
//! - a node's `*_used`, `*_req`, `prod_*_req` and `task_count` are the exact sums over the tasks
//!   whose `node` or `migrating_to` is that node (all amounts are integer units, `units.rs`): a
//!   migrating task counts on both its source and its target (SPEC 6);
//! - `Cell::migrating` is the number of tasks with a `migrating_to`;
//! - a live task's constraints (`constraint_start`, `constraint_len`) lie inside
//!   `Cell::constraints`, and its `constraint_set` is their number in `Cell::constraint_sets`;
//! - a task slot is `Free` (on the free list, every other column stale), `Pending` (`node` is
//!   NONE) or `Running` (on exactly one online-or-just-removed node). A `TaskIdx` stops being valid
//!   when the task ends: its slot is reused by the next new task;
//! - a slot's usage record copies its state, generation, node, migration target and start shift
//!   (`cell/usage_slot.rs`).
//!
//! All mutation goes through the methods here, which keep the sums right: the columns are private
//! to this module (`cell/columns.rs`), read everywhere else through accessors of their names
//! (`cell.nodes.cpu_used()[n]`).

use std::collections::BTreeMap;

use crate::ids::{NodeIdx, TaskIdx};
use crate::usage_model::RequestUse;

mod columns;
mod constraints;
mod need_log;
mod place_batch;
mod ranges;
mod usage_batch;
mod usage_slot;

pub use columns::{NOT_SCHEDULED, Nodes, TaskState, Tasks};
pub use constraints::Constraint;
pub(crate) use constraints::{AttributeIndex, ConstraintSets};
use need_log::NeedLog;
pub use place_batch::{PlaceBatch, PlaceRequest};
pub use usage_batch::{UsageBatch, UsageChange};
pub use usage_slot::UsageSlot;
/// [`Cell::touched_mark`]'s bit for a node in [`Cell::touched`].
const TOUCHED: u8 = 1;
/// [`Cell::touched_mark`]'s bit for a node in [`Cell::touched_for_fit`].
const TOUCHED_FOR_FIT: u8 = 2;

/// Nodes, tasks, task constraints and node attributes.
#[derive(Debug, Default, Clone)]
pub struct Cell {
    /// Node columns.
    pub nodes: Nodes,
    /// Task columns.
    pub tasks: Tasks,
    /// Constraints of all tasks, referenced by ranges in the task columns.
    pub(crate) constraints: Vec<Constraint>,
    /// Node attributes: (node, interned name) -> (interned value, integer reading), the source
    /// of truth; changed through [`Cell::set_attribute`] / [`Cell::remove_attribute`].
    pub(crate) attributes: BTreeMap<(NodeIdx, u32), (u32, Option<i64>)>,
    /// The same attributes as one contiguous slice per node (CSR, rebuilt by
    /// [`Cell::index_attributes`]): what [`Cell::satisfies`] reads on the hot path.
    pub(crate) attr_index: AttributeIndex,
    /// Tasks with a migration in flight ([`Cell::migrating`]).
    pub(crate) migrating: u32,
    /// [`Cell::constraints`]' length at which [`Cell::set_constraints`] next looks for rows no
    /// task refers to (a pure cache: not saved).
    pub(crate) compact_at: usize,
    /// Tasks placed since [`Cell::take_started`] was last called, in placement order (not
    /// saved: a restored replay looks at every task it awaits once).
    pub(crate) started: Vec<TaskIdx>,
    /// Placements since [`Cell::take_placements`] was last called (the run takes it after every
    /// tick, so it is 0 at every snapshot: not saved).
    pub(crate) placements: u64,
    /// The distinct constraint sets tasks were given, numbered (not saved: numbered again on
    /// restore).
    pub(crate) constraint_sets: ConstraintSets,
    /// Per node, what [`Cell::constraint_stamp`] returns (grown on demand; not saved: what a
    /// policy derived from it is not saved either).
    pub(crate) constraint_stamps: Vec<u64>,
    /// What a task uses of its request until measured (`usage_model.rs`; not saved: the run
    /// sets it from its config and the trace each time it opens).
    pub(crate) request_use: RequestUse,
    /// Whether a waiting task is held until the trace schedules it (`release.rs`; not saved:
    /// the run sets it from its config and policy each time it opens).
    pub(crate) hold_for_trace_schedule: bool,
    /// Nodes whose columns changed since [`Cell::take_touched`] was last called, each once (not
    /// saved: a restored run's metrics classify every node first, `metrics::Classifier`).
    pub(crate) touched: Vec<u32>,
    /// Those of `touched` where a column the fit rule reads changed: all but the nodes whose
    /// usage alone changed, when fitting by requests ([`Cell::touched_for_fit`]).
    pub(crate) touched_for_fit: Vec<u32>,
    /// Per node, whether it is in `touched` ([`TOUCHED`]) and in `touched_for_fit`
    /// ([`TOUCHED_FOR_FIT`]); grown on demand.
    pub(crate) touched_mark: Vec<u8>,
    /// Pending tasks whose need changed (`cell/need_log.rs`; not saved).
    pub(crate) need_log: NeedLog,
}

impl Cell {
    /// Adds (`sign` 1) or removes (-1) task `t`'s amounts on its node and its migration target.
    fn add_to_node(&mut self, t: TaskIdx, sign: i64) {
        self.add_to(t, self.tasks.node[t.index()], sign);
        let target = self.tasks.migrating_to[t.index()];
        if target.is_some() {
            self.add_to(t, target, sign);
        }
    }

    /// Notes that node `n`'s columns changed (for the metrics' incremental classification), in
    /// a way the fit rule reads.
    fn touch(&mut self, n: usize) {
        self.touch_as(n, TOUCHED | TOUCHED_FOR_FIT);
    }

    /// Notes that node `n`'s usage sums changed: a change the fit rule reads only when fitting
    /// by usage.
    fn touch_usage(&mut self, n: usize) {
        self.touch_as(n, self.usage_marks());
    }

    /// The lists a usage change puts its nodes in: both when fitting by usage, else only
    /// [`Cell::touched`].
    fn usage_marks(&self) -> u8 {
        match self.nodes.fit_by {
            crate::fit_by::FitBy::Usage => TOUCHED | TOUCHED_FOR_FIT,
            crate::fit_by::FitBy::Requests => TOUCHED,
        }
    }

    /// Adds node `n` to the lists `marks` names that do not hold it yet.
    fn touch_as(&mut self, n: usize, marks: u8) {
        if n >= self.touched_mark.len() {
            self.touched_mark.resize(n + 1, 0);
        }
        let new = marks & !self.touched_mark[n];
        if new == 0 {
            return;
        }
        self.touched_mark[n] |= new;
        self.list_touched(n as u32, new);
    }

    /// Appends node `n`, newly marked `new`, to the lists those marks name.
    fn list_touched(&mut self, n: u32, new: u8) {
        if new & TOUCHED != 0 {
            self.touched.push(n);
        }
        if new & TOUCHED_FOR_FIT != 0 {
            self.touched_for_fit.push(n);
        }
    }

    /// The nodes whose columns changed since the last [`Cell::take_touched`], each once, in the
    /// order they first changed but for a [`Cell::set_usage_batch`]'s, which come by node
    /// range: a set, which its readers (the metrics, the placers' indexes) take in any order.
    pub fn touched(&self) -> &[u32] {
        &self.touched
    }

    /// Those of [`Cell::touched`] where a column the fit rule reads changed (`fit_by.rs`):
    /// capacity, online, requests, and usage when fitting by usage; each once, in the order of
    /// [`Cell::touched`]. What a placer's indexes of room follow.
    pub fn touched_for_fit(&self) -> &[u32] {
        &self.touched_for_fit
    }

    /// Puts into `out` (cleared) the nodes whose columns changed since the last call
    /// ([`Cell::touched`]); `out`'s old buffer collects the next ones. Clears
    /// [`Cell::touched_for_fit`] too.
    pub fn take_touched(&mut self, out: &mut Vec<u32>) {
        out.clear();
        std::mem::swap(&mut self.touched, out);
        for &n in out.iter() {
            self.touched_mark[n as usize] = 0;
        }
        self.touched_for_fit.clear();
    }

    fn add_to(&mut self, t: TaskIdx, node: NodeIdx, sign: i64) {
        let (n, i) = (node.index(), t.index());
        self.touch(n);
        let add = |v: &mut u32, d: u32| *v = (*v as i64 + sign * d as i64) as u32;
        let tasks = &self.tasks;
        let nodes = &mut self.nodes;
        add(&mut nodes.cpu_used[n], tasks.usage[i].cpu);
        add(&mut nodes.mem_used[n], tasks.usage[i].mem);
        add(&mut nodes.cpu_req[n], tasks.cpu_req[i]);
        add(&mut nodes.mem_req[n], tasks.mem_req[i]);
        if tasks.production[i] {
            add(&mut nodes.prod_cpu_req[n], tasks.cpu_req[i]);
            add(&mut nodes.prod_mem_req[n], tasks.mem_req[i]);
        }
        add(&mut nodes.task_count[n], 1);
    }

    /// A cell of `machines` online nodes (machine IDs 0, 1, ...) of capacities `cpu_cap` and
    /// `mem_cap` units, with no task: the hand-worked cells of unit tests.
    #[cfg(test)]
    pub(crate) fn with_machines(machines: u64, cpu_cap: u32, mem_cap: u32) -> Cell {
        let mut cell = Cell::default();
        for m in 0..machines {
            cell.add_machine(m, cpu_cap, mem_cap);
        }
        cell
    }

    /// Tasks with a migration in flight.
    pub fn migrating(&self) -> u32 {
        self.migrating
    }

    /// A node for machine `machine_id`, online with capacities `cpu_cap` and `mem_cap` (units).
    pub fn add_machine(&mut self, machine_id: u64, cpu_cap: u32, mem_cap: u32) -> NodeIdx {
        let n = self.nodes.push(machine_id);
        self.set_machine(n, true, Some((cpu_cap, mem_cap)));
        n
    }

    /// Node `n` (its machine) joins or leaves the cell, with new capacities when given (CPU,
    /// memory units). A node that leaves keeps its tasks until the caller takes them off.
    pub fn set_machine(&mut self, n: NodeIdx, online: bool, capacity: Option<(u32, u32)>) {
        let i = n.index();
        self.touch(i);
        self.nodes.online[i] = online;
        if let Some((cpu, mem)) = capacity {
            (self.nodes.cpu_cap[i], self.nodes.mem_cap[i]) = (cpu, mem);
        }
    }

    /// The trace scheduled task `t`'s current run at `at_us`: the end of the SCHEDULE's tick, or
    /// its exact time for a policy that starts tasks at exact times ([`Tasks::trace_sched_us`]).
    pub fn record_trace_schedule(&mut self, t: TaskIdx, at_us: i64) {
        self.tasks.trace_sched_us[t.index()] = at_us;
        self.tasks.mirror(t.index());
    }

    /// Running task `t`, displaced by a machine removal, had reached trace time `reached_us` of
    /// its recorded run: its SCHEDULE moves there and the work done since the old one is lost
    /// ([`Tasks::lost_us`]).
    pub fn record_displaced_run(&mut self, t: TaskIdx, reached_us: i64) {
        let i = t.index();
        let done_us = (reached_us - self.tasks.trace_sched_us[i]).max(0);
        self.tasks.lost_us[i] += done_us;
        self.tasks.trace_sched_us[i] = reached_us;
        self.tasks.mirror(i);
    }

    /// Pending task `t` is submitted again at `now_us`.
    pub fn resubmit(&mut self, t: TaskIdx, now_us: i64) {
        debug_assert_eq!(self.tasks.state[t.index()], TaskState::Pending);
        self.tasks.submit_us[t.index()] = now_us;
    }

    /// Recomputes the nodes' allocation classes (`metrics.rs`, at the end of each tick):
    /// `classify` writes every node's class into the first slice from the node columns, read
    /// only, and returns what it measured on the way.
    pub fn classify_nodes<R>(
        &mut self,
        classify: impl FnOnce(&mut [crate::classify::NodeClass], &Nodes) -> R,
    ) -> R {
        let mut classes = std::mem::take(&mut self.nodes.class);
        let measured = classify(&mut classes, &self.nodes);
        self.nodes.class = classes;
        measured
    }

    /// Starts pending task `t` on node `n` at `now_us`.
    pub fn place(&mut self, t: TaskIdx, n: NodeIdx, now_us: i64) {
        debug_assert_eq!(self.tasks.state[t.index()], TaskState::Pending);
        self.tasks.node[t.index()] = n;
        self.tasks.state[t.index()] = TaskState::Running;
        self.tasks.start_us[t.index()] = now_us;
        self.tasks.mirror(t.index());
        self.add_to_node(t, 1);
        self.started.push(t);
        self.placements += 1;
    }

    /// The placements since the last call (the run's watchdog, `watchdog.rs`).
    pub fn take_placements(&mut self) -> u64 {
        std::mem::take(&mut self.placements)
    }

    /// Puts into `out` (cleared) the tasks placed since the last call, in placement order (a task
    /// placed twice is listed twice); `out`'s old buffer collects the next ones, so a caller that
    /// keeps `out` allocates nothing once both have grown.
    pub fn take_started(&mut self, out: &mut Vec<TaskIdx>) {
        out.clear();
        std::mem::swap(&mut self.started, out);
    }

    /// Takes running task `t` off its node (aborting a migration in flight); it becomes pending.
    pub fn unplace(&mut self, t: TaskIdx) {
        if self.tasks.state[t.index()] != TaskState::Running {
            return;
        }
        self.abort_migration(t);
        self.add_to_node(t, -1);
        self.tasks.node[t.index()] = NodeIdx::NONE;
        self.tasks.state[t.index()] = TaskState::Pending;
        self.tasks.mirror(t.index());
    }

    /// Starts migrating running task `t` to `target`: from now its resources count on both nodes.
    /// Returns false (and changes nothing) if the task is not running, already migrating, or
    /// `target` is its own node.
    pub fn start_migration(&mut self, t: TaskIdx, target: NodeIdx) -> bool {
        let i = t.index();
        if self.tasks.state[i] != TaskState::Running
            || self.tasks.migrating_to[i].is_some()
            || self.tasks.node[i] == target
        {
            return false;
        }
        self.tasks.migrating_to[i] = target;
        self.tasks.mirror(i);
        self.add_to(t, target, 1);
        self.migrating += 1;
        true
    }

    /// Completes `t`'s migration: it now runs only on the target.
    pub fn finish_migration(&mut self, t: TaskIdx) {
        let i = t.index();
        let target = self.tasks.migrating_to[i];
        if !target.is_some() {
            return;
        }
        self.add_to(t, self.tasks.node[i], -1);
        self.tasks.node[i] = target;
        self.tasks.migrating_to[i] = NodeIdx::NONE;
        self.tasks.mirror(i);
        self.migrating -= 1;
    }

    /// Cancels `t`'s migration: it stays only on its source.
    pub fn abort_migration(&mut self, t: TaskIdx) {
        let i = t.index();
        let target = self.tasks.migrating_to[i];
        if !target.is_some() {
            return;
        }
        self.add_to(t, target, -1);
        self.tasks.migrating_to[i] = NodeIdx::NONE;
        self.tasks.mirror(i);
        self.migrating -= 1;
    }

    /// Ends task `t` for good: off its node and its slot freed.
    pub fn end(&mut self, t: TaskIdx) {
        self.unplace(t);
        self.tasks.state[t.index()] = TaskState::Free;
        self.tasks.mirror(t.index());
        self.tasks.free.push(t);
    }

    /// Changes task `t`'s columns through `change`, keeping its node's sums right when running.
    pub fn modify(&mut self, t: TaskIdx, change: impl FnOnce(&mut Tasks, usize)) {
        let running = self.tasks.state[t.index()] == TaskState::Running;
        if running {
            self.add_to_node(t, -1);
        }
        change(&mut self.tasks, t.index());
        if running {
            self.add_to_node(t, 1);
        }
    }

    /// Logs task `t`'s need as changed if it is pending (`cell/need_log.rs`).
    pub(crate) fn need_changed(&mut self, t: TaskIdx) {
        if self.tasks.state[t.index()] == TaskState::Pending {
            self.need_log.push(t);
        }
    }

    /// Logs task `t` (in `state`) as its need changed if it is pending and the fit rule reads
    /// usage (a task's usage is no part of its need when fitting by requests).
    fn usage_changed(&mut self, t: TaskIdx, state: TaskState) {
        if self.nodes.fit_by == crate::fit_by::FitBy::Usage && state == TaskState::Pending {
            self.need_log.push(t);
        }
    }

    /// The pending tasks whose requests, usage, priority or constraints changed since position
    /// `since` of the cell's need log, in change order (possibly more than once); `None` when
    /// those changes were forgotten (look at every waiting task again: `cell/need_log.rs`).
    pub fn need_changes_since(&self, since: u64) -> Option<&[TaskIdx]> {
        self.need_log.since(since)
    }

    /// The need log's position after its last change ([`Cell::need_changes_since`]).
    pub fn need_log_end(&self) -> u64 {
        self.need_log.end()
    }

    /// What task `t` takes of its node's room under the fit rule (`fit_by.rs`): the CPU and
    /// memory charged (requests or usage), then its CPU and memory requests if production (0
    /// otherwise); the order of `greedy::fit::Amounts`.
    pub fn charge(&self, t: TaskIdx) -> [i64; 4] {
        let (tasks, i) = (&self.tasks, t.index());
        let (cpu, mem) = match self.nodes.fit_by {
            crate::fit_by::FitBy::Requests => (tasks.cpu_req[i], tasks.mem_req[i]),
            crate::fit_by::FitBy::Usage => (tasks.usage[i].cpu, tasks.usage[i].mem),
        };
        let prod = |v: u32| if tasks.production[i] { v as i64 } else { 0 };
        [
            cpu as i64,
            mem as i64,
            prod(tasks.cpu_req[i]),
            prod(tasks.mem_req[i]),
        ]
    }

    /// Sets whether a node's measured CPU is its tasks' use throttled at its capacity
    /// ([`crate::usage_model::UsageModel::throttles_cpu`]).
    pub fn set_cpu_throttled(&mut self, throttled: bool) {
        self.nodes.cpu_throttled = throttled;
    }

    /// Sets what the greedy fit rule reads (`fit_by.rs`).
    pub fn set_fit_by(&mut self, fit_by: crate::fit_by::FitBy) {
        self.nodes.fit_by = fit_by;
        self.need_log.forget(); // every task's need may read other columns now
    }

    /// Holds waiting tasks until the trace schedules them (`release = "trace-schedule"` in a
    /// policy that places the workload itself, `release.rs`).
    pub fn set_hold_for_trace_schedule(&mut self, hold: bool) {
        self.hold_for_trace_schedule = hold;
    }

    /// Whether waiting tasks are held until the trace schedules them.
    pub fn holds_for_trace_schedule(&self) -> bool {
        self.hold_for_trace_schedule
    }

    /// Whether task `t` waits for the trace to schedule it before a policy may start it.
    pub fn held(&self, t: TaskIdx) -> bool {
        self.hold_for_trace_schedule && self.tasks.trace_sched_us[t.index()] == NOT_SCHEDULED
    }

    /// Sets what a task uses of its request until measured.
    pub fn set_request_use(&mut self, request_use: RequestUse) {
        self.request_use = request_use;
        self.need_log.forget(); // later usage derives otherwise
    }

    /// Enters the usage model's window holding `elapsed_us` (time since the trace's start,
    /// `[usage.window]`): on entering another window, every task whose usage still derives
    /// from its request uses the new window's draw, its node's sums changed (and the node
    /// touched) only where the draw differs, so entering the window a run is already in (a
    /// resumed run's first tick) changes nothing.
    pub fn enter_usage_window(&mut self, elapsed_us: i64) {
        if !self.request_use.enter(elapsed_us) {
            return;
        }
        let request_use = self.request_use;
        for i in 0..self.tasks.len() {
            let tasks = &self.tasks;
            if tasks.state[i] == TaskState::Free || !tasks.usage[i].is_request {
                continue;
            }
            let now = Self::modelled_use(tasks, i, request_use);
            if now != (tasks.usage[i].cpu, tasks.usage[i].mem) {
                self.modify(TaskIdx(i as u32), |tasks, i| {
                    (tasks.usage[i].cpu, tasks.usage[i].mem) = now;
                });
                self.usage_changed(TaskIdx(i as u32), self.tasks.state[i]);
            }
        }
    }

    /// Changes the task's requests (and its usage too while usage derives from requests).
    pub fn set_request(&mut self, t: TaskIdx, cpu: u32, mem: u32) {
        let request_use = self.request_use;
        self.modify(t, |tasks, i| {
            tasks.cpu_req[i] = cpu;
            tasks.mem_req[i] = mem;
            Self::use_request(tasks, i, request_use);
        });
        self.need_changed(t);
    }

    /// While task `i`'s usage derives from its request: sets it from the request and priority.
    fn use_request(tasks: &mut Tasks, i: usize, request_use: RequestUse) {
        if tasks.usage[i].is_request {
            (tasks.usage[i].cpu, tasks.usage[i].mem) = Self::modelled_use(tasks, i, request_use);
        }
    }

    /// What task `i` uses under `request_use`, from its identity, priority and requests.
    fn modelled_use(tasks: &Tasks, i: usize, request_use: RequestUse) -> (u32, u32) {
        request_use.usage(
            (tasks.job_id[i], tasks.task_index[i]),
            tasks.priority[i],
            tasks.cpu_req[i],
            tasks.mem_req[i],
        )
    }

    /// Sets the task's measured usage.
    ///
    /// Only the usage sums of its node (and migration target) change, by the difference: the
    /// same wrapping arithmetic as taking the task off and adding it back ([`Cell::modify`]),
    /// without touching the other sums (the most frequent change: one per usage row).
    pub fn set_usage(&mut self, t: TaskIdx, cpu: u32, mem: u32) {
        // One record (`cell/usage_slot.rs`): the copies of state, node and target, then the usage.
        let u = self.tasks.usage[t.index()];
        if u.state == TaskState::Running {
            let d_cpu = cpu as i64 - u.cpu as i64;
            let d_mem = mem as i64 - u.mem as i64;
            for node in [u.node, u.migrating_to] {
                if node.is_some() {
                    let (n, nodes) = (node.index(), &mut self.nodes);
                    nodes.cpu_used[n] = (nodes.cpu_used[n] as i64 + d_cpu) as u32;
                    nodes.mem_used[n] = (nodes.mem_used[n] as i64 + d_mem) as u32;
                    self.touch_usage(n);
                }
            }
        }
        let u = &mut self.tasks.usage[t.index()];
        (u.cpu, u.mem, u.is_request) = (cpu, mem, false);
        let state = u.state;
        self.usage_changed(t, state);
    }

    /// Reads task `t`'s usage record, all that [`Cell::set_usage`] and a usage row's look-up
    /// read of it, into a value of no meaning: the read of a batch's [`crate::preload`].
    pub fn preload_usage(&self, t: TaskIdx) -> u32 {
        // The record is one aligned half line: a word of it loads the line.
        self.tasks.usage[t.index()].cpu
    }

    /// Reads the columns a task event for task `t` reads first, folded into a value of no
    /// meaning: the read of a batch's [`crate::preload`].
    pub fn preload_event(&self, t: TaskIdx) -> u32 {
        let i = t.index();
        let tasks = &self.tasks;
        u32::from(tasks.priority[i])
            ^ u32::from(tasks.scheduling_class[i])
            ^ tasks.state[i] as u32
            ^ tasks.trace_sched_us[i] as u32
            ^ tasks.node[i].0
            ^ tasks.generation[i]
    }

    /// Changes the task's scheduling class (read by policies; no sum depends on it).
    pub fn set_scheduling_class(&mut self, t: TaskIdx, scheduling_class: u8) {
        self.tasks.scheduling_class[t.index()] = scheduling_class;
    }

    /// Changes the task's priority (and so whether it counts as production).
    pub fn set_priority(&mut self, t: TaskIdx, priority: u8) {
        let request_use = self.request_use;
        self.modify(t, |tasks, i| {
            tasks.priority[i] = priority;
            tasks.production[i] = priority >= ingest::codes::PRODUCTION_PRIORITY;
            Self::use_request(tasks, i, request_use);
        });
        self.need_changed(t);
    }

    /// Verifies the invariants in the module doc; returns the first violation.
    pub fn check(&self) -> Result<(), String> {
        let n = self.nodes.len();
        let mut sums = vec![[0u64; 7]; n];
        for i in 0..self.tasks.len() {
            let (t, u) = (&self.tasks, &self.tasks.usage[i]);
            if *u != t.mirrored(i) {
                return Err(format!(
                    "task slot {i}'s usage record {u:?} does not copy its columns"
                ));
            }
            let constraints_end =
                self.tasks.constraint_start[i] as usize + self.tasks.constraint_len[i] as usize;
            if self.tasks.state[i] != TaskState::Free {
                if constraints_end > self.constraints.len() {
                    return Err(format!("task slot {i}'s constraints lie beyond the rows"));
                }
                let rows = self.constraints_of(TaskIdx(i as u32));
                if self.constraint_sets.index_of(rows) != Some(self.tasks.constraint_set[i]) {
                    return Err(format!("task slot {i}'s constraint set is not its rows'"));
                }
            }
            if self.tasks.state[i] != TaskState::Running {
                continue;
            }
            let node = self.tasks.node[i];
            if !node.is_some() || node.index() >= n {
                return Err(format!("running task slot {i} has no valid node"));
            }
            let target = self.tasks.migrating_to[i];
            if target.is_some() && target.index() >= n {
                return Err(format!("task slot {i} migrates to an unknown node"));
            }
            let prod = self.tasks.production[i] as u64;
            let amounts = [
                self.tasks.usage[i].cpu as u64,
                self.tasks.usage[i].mem as u64,
                self.tasks.cpu_req[i] as u64,
                self.tasks.mem_req[i] as u64,
                prod * self.tasks.cpu_req[i] as u64,
                prod * self.tasks.mem_req[i] as u64,
                1,
            ];
            for place in [node, target].into_iter().filter(|p| p.is_some()) {
                for (s, v) in sums[place.index()].iter_mut().zip(amounts) {
                    *s += v;
                }
            }
        }
        let migrating = self
            .tasks
            .migrating_to
            .iter()
            .zip(&self.tasks.state)
            .filter(|(m, s)| m.is_some() && **s == TaskState::Running)
            .count();
        if migrating != self.migrating as usize {
            return Err(format!(
                "{migrating} tasks migrate but the counter says {}",
                self.migrating
            ));
        }
        for (m, s) in sums.iter().enumerate() {
            let nd = &self.nodes;
            let have = [
                nd.cpu_used[m],
                nd.mem_used[m],
                nd.cpu_req[m],
                nd.mem_req[m],
                nd.prod_cpu_req[m],
                nd.prod_mem_req[m],
                nd.task_count[m],
            ]
            .map(u64::from);
            if have != *s {
                return Err(format!(
                    "node {m} sums {have:?} but its tasks add up to {s:?}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(cell: &Cell, n: NodeIdx) -> [u32; 7] {
        let d = &cell.nodes;
        let i = n.index();
        [
            d.cpu_used[i],
            d.mem_used[i],
            d.cpu_req[i],
            d.mem_req[i],
            d.prod_cpu_req[i],
            d.prod_mem_req[i],
            d.task_count[i],
        ]
    }

    /// A usage change touches its node for the metrics, and for the fit only when the fit rule
    /// reads usage; a placement touches it for both; each list holds a node once, in first-change
    /// order, and both empty when taken.
    #[test]
    fn usage_touches_a_node_for_the_fit_only_when_fitting_by_usage() {
        for fit_by in [crate::fit_by::FitBy::Requests, crate::fit_by::FitBy::Usage] {
            let mut cell = Cell::default();
            cell.set_fit_by(fit_by);
            let (a, b) = (cell.add_machine(1, 100, 100), cell.add_machine(2, 100, 100));
            let t = cell.tasks.alloc(1, 0, 0, 0);
            cell.set_request(t, 10, 10);
            cell.place(t, a, 0);
            cell.take_touched(&mut Vec::new());
            cell.set_usage(t, 5, 5);
            let u = cell.tasks.alloc(1, 1, 0, 0);
            cell.place(u, b, 0);
            cell.set_usage(t, 6, 6);
            let by_usage = fit_by == crate::fit_by::FitBy::Usage;
            let fit: Vec<u32> = if by_usage { vec![0, 1] } else { vec![1] };
            assert_eq!(cell.touched(), &[0, 1], "{fit_by:?}");
            assert_eq!(cell.touched_for_fit(), &fit[..], "{fit_by:?}");
            let mut taken = Vec::new();
            cell.take_touched(&mut taken);
            assert!(cell.touched().is_empty() && cell.touched_for_fit().is_empty());
            cell.set_usage(t, 7, 7);
            assert_eq!(cell.touched(), &[0]);
            assert_eq!(cell.touched_for_fit().len(), usize::from(by_usage));
        }
    }

    #[test]
    fn node_sums_follow_every_change_and_slots_are_recycled() {
        let mut cell = Cell::default();
        let n = cell.nodes.push(7);
        cell.nodes.online[n.index()] = true;
        let a = cell.tasks.alloc(1, 0, 9, 0); // production
        let b = cell.tasks.alloc(1, 1, 0, 0);
        cell.set_request(a, 100, 200);
        cell.set_request(b, 10, 20);
        cell.place(a, n, 5);
        cell.place(b, n, 5);
        // Usage derives from requests until a sample arrives (here: usage = requests).
        assert_eq!(sums(&cell, n), [110, 220, 110, 220, 100, 200, 2]);
        cell.set_usage(a, 50, 150);
        assert_eq!(sums(&cell, n), [60, 170, 110, 220, 100, 200, 2]);
        // A request change no longer moves usage once it is measured.
        cell.set_request(a, 120, 200);
        assert_eq!(sums(&cell, n), [60, 170, 130, 220, 120, 200, 2]);
        cell.set_priority(a, 2); // no longer production
        assert_eq!(sums(&cell, n), [60, 170, 130, 220, 0, 0, 2]);
        cell.check().unwrap();
        cell.unplace(b);
        assert_eq!(cell.tasks.state[b.index()], TaskState::Pending);
        assert_eq!(sums(&cell, n), [50, 150, 120, 200, 0, 0, 1]);
        // A pending task's usage moves no node.
        cell.set_usage(b, 7, 9);
        assert_eq!(sums(&cell, n), [50, 150, 120, 200, 0, 0, 1]);
        cell.check().unwrap();
        let generation = cell.tasks.generation[a.index()];
        cell.end(a);
        assert_eq!(sums(&cell, n), [0; 7]);
        assert_eq!(cell.tasks.live(), 1);
        let c = cell.tasks.alloc(2, 0, 0, 9);
        assert_eq!(c, a, "the freed slot is reused");
        assert_ne!(
            cell.tasks.generation[c.index()],
            generation,
            "and told apart by its generation"
        );
        assert_eq!(
            (
                cell.tasks.usage[c.index()].cpu,
                cell.tasks.usage[c.index()].is_request
            ),
            (0, true)
        );
        cell.check().unwrap();
    }

    #[test]
    fn a_migrating_task_counts_on_both_nodes() {
        let mut cell = Cell::default();
        let (src, dst) = (cell.nodes.push(1), cell.nodes.push(2));
        let t = cell.tasks.alloc(1, 0, 10, 0); // production
        cell.set_request(t, 30, 40);
        cell.place(t, src, 0);
        assert!(!cell.start_migration(t, src), "not onto its own node");
        assert!(cell.start_migration(t, dst));
        assert!(!cell.start_migration(t, dst), "one migration at a time");
        assert_eq!(
            (sums(&cell, src), sums(&cell, dst)),
            ([30, 40, 30, 40, 30, 40, 1], [30, 40, 30, 40, 30, 40, 1])
        );
        assert_eq!(cell.migrating, 1);
        // Usage changes while migrating move both nodes.
        cell.set_usage(t, 10, 20);
        assert_eq!(sums(&cell, src), [10, 20, 30, 40, 30, 40, 1]);
        assert_eq!(sums(&cell, dst), [10, 20, 30, 40, 30, 40, 1]);
        cell.check().unwrap();
        cell.finish_migration(t);
        assert_eq!(
            (sums(&cell, src), sums(&cell, dst)),
            ([0; 7], [10, 20, 30, 40, 30, 40, 1])
        );
        assert_eq!((cell.tasks.node[t.index()], cell.migrating), (dst, 0));
        cell.check().unwrap();
        // Back again, then aborted; then again and the task ends mid-migration.
        assert!(cell.start_migration(t, src));
        cell.abort_migration(t);
        assert_eq!((sums(&cell, src), cell.migrating), ([0; 7], 0));
        assert!(cell.start_migration(t, src));
        cell.end(t);
        assert_eq!(
            (sums(&cell, src), sums(&cell, dst), cell.migrating),
            ([0; 7], [0; 7], 0)
        );
        cell.check().unwrap();
    }

    #[test]
    fn check_reports_a_broken_sum() {
        let mut cell = Cell::default();
        let n = cell.nodes.push(1);
        let t = cell.tasks.alloc(1, 0, 0, 0);
        cell.set_request(t, 5, 5);
        cell.place(t, n, 0);
        cell.nodes.cpu_req[n.index()] += 1;
        assert!(cell.check().unwrap_err().starts_with("node 0 sums"));
    }
}
