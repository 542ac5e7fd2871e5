//! The replay's handling of one trace row at a time: machine events (a removed machine's tasks
//! displaced once per tick, `displace_from_removed`) and task events (a task's identity, state,
//! priority, requests and the SCHEDULE hint for borg-replay). Invariant: `task_of` maps every
//! task instance the trace has submitted and not yet ended, in trace time (in workload mode a
//! run the policy started late outlives its entry; its end comes from the deferred queue).

use ingest::codes::{TRACE_START_US, machine_event, task_event};
use rayon::prelude::*;

use super::MachineChange;
use super::rows::{MachineEventRow, TaskEventRow};
use super::{Placement, Replay, TickEvents, deferred};
use crate::cell::{Cell, NOT_SCHEDULED, TaskState};
use crate::ids::{NodeIdx, TaskIdx};
use crate::units::to_units;

/// Slots a scan of [`slots_on`] hands to a thread at a time.
const SLOTS_PER_JOB: usize = 1 << 15;

/// The slots of `column` (a node column of the tasks) naming a node of `removed` (sorted,
/// distinct; `gone` flags them by node), ascending, found on every thread. One to four nodes
/// (a tick removes one or two) are compared directly, 64 slots to a bit mask: compares the
/// compiler vectorises, several times faster than a look-up in `gone` per slot.
fn slots_on(column: &[NodeIdx], (removed, gone): (&[NodeIdx], &[bool])) -> Vec<usize> {
    let scan = |(c, chunk): (usize, &[NodeIdx])| {
        let mut found = Vec::new();
        let base = c * SLOTS_PER_JOB;
        for (b, block) in chunk.chunks(64).enumerate() {
            let mut mask = match *removed {
                [a] => mask_of(block, [a]),
                [a, b] => mask_of(block, [a, b]),
                [a, b, c] => mask_of(block, [a, b, c]),
                [a, b, c, d] => mask_of(block, [a, b, c, d]),
                _ => (block.iter().enumerate())
                    .map(|(i, n)| u64::from(n.is_some() && gone[n.index()]) << i)
                    .fold(0, |m, bit| m | bit),
            };
            while mask != 0 {
                found.push(base + b * 64 + mask.trailing_zeros() as usize);
                mask &= mask - 1;
            }
        }
        found
    };
    let per_job: Vec<Vec<usize>> = (column.par_chunks(SLOTS_PER_JOB).enumerate())
        .map(scan)
        .collect();
    per_job.concat()
}

/// Bit `i` set where `block[i]` is one of `nodes` (a block of at most 64 slots).
#[inline]
fn mask_of<const K: usize>(block: &[NodeIdx], nodes: [NodeIdx; K]) -> u64 {
    (block.iter().enumerate())
        .map(|(i, n)| u64::from(nodes.iter().fold(false, |hit, m| hit | (m == n))) << i)
        .fold(0, |mask, bit| mask | bit)
}

impl Replay {
    pub(super) fn node(&mut self, machine_id: u64, cell: &mut Cell) -> NodeIdx {
        *self
            .node_of
            .entry(machine_id)
            .or_insert_with(|| cell.nodes.push(machine_id))
    }

    /// Takes the running tasks off the nodes removed in this tick's machine events
    /// ([`Replay::removed`]), into `ev.displaced_tasks`, and aborts migrations towards them: one
    /// scan of the tasks on every thread, however many removals. Each task's outcome is the one
    /// of handling the removals one by one; only the order of `displaced_tasks` (ascending here)
    /// differs.
    ///
    /// In workload mode a displaced run restarts: placed again, it runs its whole recorded run
    /// time (the work done is lost, as seed 002's task masters re-launch a dead node's tasks),
    /// but its usage rows continue from the trace time it had reached by `end_us` (`end_us` less
    /// its delay, `deferred::start_delay_us`; [`Cell::record_displaced_run`]), delayed by the
    /// time it waited.
    /// (Before, they were delayed by everything since its first start: a service displaced on
    /// day 3 had its remaining usage rows held back three days, and the deferred queue of the 8x
    /// cell grew by ~100 MB every 12 simulated hours.) Events already held back for it keep
    /// their due times.
    pub(super) fn displace_from_removed(
        &mut self,
        cell: &mut Cell,
        end_us: i64,
        ev: &mut TickEvents,
    ) {
        if self.removed.is_empty() {
            return;
        }
        // A node's task count counts the tasks on it and those migrating to it: none, no scan.
        let count = |n: &NodeIdx| u64::from(cell.nodes.task_count()[n.index()]);
        if self.removed.iter().map(count).sum::<u64>() == 0 {
            self.removed.clear();
            return;
        }
        let mut gone = vec![false; cell.nodes.len()];
        for &n in &self.removed {
            gone[n.index()] = true;
        }
        self.removed.sort_unstable();
        self.removed.dedup();
        let on_gone = |n: NodeIdx| n.is_some() && gone[n.index()];
        // Which tasks run on or towards a removed node, found on every thread (a read-only scan
        // of the node column, and of the migration targets while some task migrates), then
        // handled one by one in slot order: handling one changes no other.
        let (tasks, removed) = (&cell.tasks, (&self.removed[..], &gone[..]));
        let mut hits = crate::parallel_time::region(|| slots_on(tasks.node(), removed));
        if cell.migrating > 0 {
            hits.extend(crate::parallel_time::region(|| {
                slots_on(tasks.migrating_to(), removed)
            }));
            hits.sort_unstable();
            hits.dedup();
        }
        self.removed.clear();
        hits.retain(|&t| tasks.state()[t] == TaskState::Running);
        for t in hits {
            if on_gone(cell.tasks.migrating_to()[t]) {
                cell.abort_migration(TaskIdx(t as u32));
            }
            if on_gone(cell.tasks.node()[t]) {
                deferred::displace(self.workload_mode, cell, TaskIdx(t as u32), end_us);
                ev.displaced_tasks.push(TaskIdx(t as u32));
            }
        }
    }

    pub(super) fn machine_event(
        &mut self,
        cell: &mut Cell,
        row: &MachineEventRow,
        machine_id: u64,
        ev: &mut TickEvents,
    ) {
        let known = self.node_of.contains_key(&machine_id);
        let n = self.node(machine_id, cell);
        let i = n.index();
        match row.kind {
            machine_event::REMOVE => {
                cell.set_machine(n, false, None);
                self.removed.push(n);
            }
            kind => {
                // ADD and UPDATE carry capacities; an empty field keeps the previous value.
                let nodes = &cell.nodes;
                let was = (nodes.cpu_cap()[i], nodes.mem_cap()[i]);
                let cpu = row.cpus.map_or(was.0, to_units);
                let mem = row.memory.map_or(was.1, to_units);
                if kind == machine_event::ADD && known && nodes.online()[i] && (cpu, mem) != was {
                    self.stats.adds_changing_capacity += 1;
                }
                if kind == machine_event::UPDATE && !known {
                    self.stats.updates_of_unknown_machines += 1;
                }
                cell.set_machine(n, true, Some((cpu, mem)));
            }
        }
        let nodes = &cell.nodes;
        ev.machine_changes.push(MachineChange {
            node: n,
            online: nodes.online()[i],
            cpu_cap: nodes.cpu_cap()[i],
            mem_cap: nodes.mem_cap()[i],
        });
    }

    /// One task event row for the task instance `key` (its job ID the row's own unless scaled)
    /// of machine copy `k`, whose recorded machine is copy `k` of the row's machine (none when
    /// the row names none or compaction removed it); `existing` is the key's task in the ID map.
    /// Inlined into both row loops (borg-replay's and workload mode's): called once per task
    /// instance, and as a call it cost borg-replay's 8x trace apply ~10 %.
    #[inline(always)]
    pub(super) fn task_event(
        &mut self,
        cell: &mut Cell,
        row: &TaskEventRow,
        (key, k): ((u64, u32), u32),
        existing: Option<TaskIdx>,
        ev: &mut TickEvents,
    ) {
        let now = row.time_us;
        let (kind, priority) = (row.kind, row.priority);
        // Under `release = "trace-schedule"` (`release.rs`) the policy hears of a task at the
        // trace's SCHEDULE, not at its SUBMIT.
        let hold = cell.holds_for_trace_schedule();
        let t = match (existing, kind) {
            (Some(t), _) => t,
            (None, task_event::SUBMIT | task_event::SCHEDULE) => {
                let t = cell.tasks.alloc(key.0, key.1, priority, now);
                self.task_of.insert(key, t);
                if !hold || kind == task_event::SCHEDULE {
                    ev.submitted.push(t);
                }
                t
            }
            (None, _) => {
                self.stats.events_for_unknown_tasks += 1;
                return;
            }
        };
        if task_event::is_terminal(kind) {
            self.task_of.remove(&key);
            self.end_run(cell, t, now, ev);
            return;
        }
        if cell.tasks.priority()[t.index()] != priority {
            cell.set_priority(t, priority);
        }
        if cell.tasks.scheduling_class()[t.index()] != row.scheduling_class {
            cell.set_scheduling_class(t, row.scheduling_class);
        }
        let (cpu, mem) = (row.cpu_request, row.memory_request);
        if cpu.is_some() || mem.is_some() {
            let i = t.index();
            let cpu = cpu.map_or(cell.tasks.cpu_req()[i], to_units);
            let mem = mem.map_or(cell.tasks.mem_req()[i], to_units);
            cell.set_request(t, cpu, mem);
        }
        let was_held = existing.is_some() && cell.held(t);
        if kind == task_event::SCHEDULE && cell.tasks.trace_sched_us()[t.index()] == NOT_SCHEDULED {
            let at = if self.exact_schedule {
                now
            } else {
                self.window_end_us
            };
            cell.record_trace_schedule(t, at);
        }
        match kind {
            task_event::SUBMIT
                if existing.is_some() && cell.tasks.state()[t.index()] == TaskState::Pending =>
            {
                cell.resubmit(t, now);
                if !cell.held(t) {
                    ev.submitted.push(t);
                }
            }
            // A task held until now (`release.rs`): the policy hears of it. The recorded
            // placement is read for borg-replay, and for the initial state of a policy that
            // takes it over; otherwise in workload mode the policy places the task: the machine
            // is not looked up (nor counted when unknown).
            task_event::SCHEDULE if cell.tasks.state()[t.index()] == TaskState::Pending => {
                if was_held {
                    ev.submitted.push(t);
                }
                if self.reads_placement(now) {
                    self.recorded_placement(cell, row, k, t, ev);
                }
            }
            _ => {}
        }
    }

    /// Whether a SCHEDULE at `now_us` is read as a recorded placement: always for borg-replay;
    /// in workload mode only for the trace's initial state (before its window opens at
    /// [`TRACE_START_US`]: GCD's tasks running at t = 0) of a policy that takes it over.
    #[inline(always)]
    fn reads_placement(&self, now_us: i64) -> bool {
        !self.workload_mode || (self.initial_placements && now_us < TRACE_START_US)
    }

    /// The machine a SCHEDULE row names, as a recorded placement of task `t` (`NodeIdx::NONE`
    /// when the trace never adds it, counted). Inlined into `task_event` as it was written
    /// there before (borg-replay's row loop).
    #[inline(always)]
    fn recorded_placement(
        &mut self,
        cell: &Cell,
        row: &TaskEventRow,
        k: u32,
        t: TaskIdx,
        ev: &mut TickEvents,
    ) {
        // Only a SCHEDULE names a machine the replay uses: its copy ID is hashed here.
        let machine = row.machine_id.and_then(|m| self.scale.machine(m, k));
        let node = match machine.and_then(|m| self.node_of.get(&m)) {
            Some(n) => *n,
            None => {
                self.stats.unknown_machine_placements += 1;
                if let Some(m) = machine
                    && self.unknown.insert(m)
                {
                    self.stats.unknown_machines += 1;
                }
                NodeIdx::NONE
            }
        };
        let generation = cell.tasks.generation()[t.index()];
        ev.placements.push(Placement {
            task: t,
            generation,
            node,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots naming removed nodes are those a plain filter finds, for 0 to 6 removed nodes
    /// (direct compares up to four, the look-up beyond), over columns that end mid-block and
    /// span several jobs, with unplaced slots (NONE) among them.
    #[test]
    fn the_scan_finds_the_slots_a_filter_does() {
        let mut r = ingest::rng::Rng::new(3, 0);
        for case in 0..40 {
            let (len, nodes) = (r.below(3 * SLOTS_PER_JOB as u64) as usize, 50);
            let column: Vec<NodeIdx> = (0..len)
                .map(|_| match r.below(5) {
                    0 => NodeIdx::NONE,
                    _ => NodeIdx(r.below(nodes) as u32),
                })
                .collect();
            let mut removed: Vec<NodeIdx> = (0..case % 7)
                .map(|_| NodeIdx(r.below(nodes) as u32))
                .collect();
            removed.sort_unstable();
            removed.dedup();
            let mut gone = vec![false; nodes as usize];
            removed.iter().for_each(|n| gone[n.index()] = true);
            let expected: Vec<usize> = (0..len).filter(|&t| removed.contains(&column[t])).collect();
            assert_eq!(
                slots_on(&column, (&removed, &gone)),
                expected,
                "case {case}"
            );
        }
    }

    /// The trace's placements are read for borg-replay only. A one-machine cell whose trace
    /// schedules task 13/0 on machine 1 and 14/0 on machine 4, which it never adds (hand-worked):
    /// borg-replay's replay reads two placements, one of them on an unknown machine (counted);
    /// in workload mode it reads none and counts nothing, the tasks waiting for the policy.
    #[test]
    fn placements_are_read_for_borg_replay_only() {
        // time,missing,job,index,machine,event,user,class,priority,cpu,mem,disk,different-machines
        let tasks = "\
0,,13,0,,0,u,0,0,0.1,0.1,0,0
0,,14,0,,0,u,0,0,0.1,0.1,0,0
5000000,,13,0,1,1,u,0,0,0.1,0.1,0,0
6000000,,14,0,4,1,u,0,0,0.1,0.1,0,0
";
        let dir =
            super::super::ingested(&[("machine_events", "0,1,0,p,1,1\n"), ("task_events", tasks)]);
        let parquet = dir.path().join("parquet");
        for workload in [false, true] {
            let mut replay = Replay::open(&parquet).unwrap();
            replay.set_workload_mode(workload);
            let mut cell = Cell::default();
            let ev = replay.advance(&mut cell, 60_000_000).unwrap();
            let nodes: Vec<NodeIdx> = ev.placements.iter().map(|p| p.node).collect();
            let stats = replay.stats();
            if workload {
                assert!(nodes.is_empty());
                assert_eq!(stats.unknown_machine_placements, 0);
                assert_eq!(stats.unknown_machines, 0);
            } else {
                assert_eq!(nodes, [NodeIdx(0), NodeIdx::NONE]);
                assert_eq!(stats.unknown_machine_placements, 1);
                assert_eq!(stats.unknown_machines, 1);
            }
            assert_eq!(ev.submitted.len(), 2, "workload mode {workload}");
            let states = cell.tasks.state();
            let pending = states.iter().filter(|&&s| s == TaskState::Pending);
            assert_eq!(pending.count(), 2, "the replay places nothing itself");
        }
    }

    /// A policy taking over the initial state (`set_initial_placements`, MASB's `warm_start`):
    /// in workload mode the SCHEDULE events at time 0, before the trace's window opens at 600 s
    /// (tasks 13/0 on machine 1 and 15/0 on machine 4, which the trace never adds), are read as
    /// placements, a later one (14/0 on machine 1 at 650 s) is not; every task is still
    /// submitted to the policy, and the replay
    /// places nothing itself. The same when the run holds tasks until the trace's SCHEDULE
    /// (`release = "trace-schedule"`): 14/0, held, is submitted at its SCHEDULE without a
    /// placement.
    #[test]
    fn the_initial_states_placements_are_read_for_a_policy_taking_it_over() {
        // time,missing,job,index,machine,event,user,class,priority,cpu,mem,disk,different-machines
        let tasks = "\
0,,13,0,,0,u,0,0,0.1,0.1,0,0
0,,14,0,,0,u,0,0,0.1,0.1,0,0
0,,15,0,,0,u,0,0,0.1,0.1,0,0
0,,13,0,1,1,u,0,0,0.1,0.1,0,0
0,,15,0,4,1,u,0,0,0.1,0.1,0,0
650000000,,14,0,1,1,u,0,0,0.1,0.1,0,0
";
        let dir =
            super::super::ingested(&[("machine_events", "0,1,0,p,1,1\n"), ("task_events", tasks)]);
        let parquet = dir.path().join("parquet");
        for hold in [false, true] {
            let mut replay = Replay::open(&parquet).unwrap();
            replay.set_workload_mode(true);
            replay.set_initial_placements(true);
            let mut cell = Cell::default();
            cell.set_hold_for_trace_schedule(hold);
            let ev = replay.advance(&mut cell, 660_000_000).unwrap();
            let placed: Vec<(u64, NodeIdx)> = (ev.placements.iter())
                .map(|p| (cell.tasks.job_id()[p.task.index()], p.node))
                .collect();
            assert_eq!(
                placed,
                [(13, NodeIdx(0)), (15, NodeIdx::NONE)],
                "hold {hold}"
            );
            assert_eq!(replay.stats().unknown_machine_placements, 1);
            assert_eq!(ev.submitted.len(), 3, "hold {hold}");
            let states = cell.tasks.state();
            let pending = states.iter().filter(|&&s| s == TaskState::Pending);
            assert_eq!(pending.count(), 3, "the replay places nothing itself");
        }
    }

    /// Machine events the trace may not mean (hand-worked, issue 56): machine 1 added, added
    /// again with the same capacity (not counted), again with another (counted, taken); machine
    /// 2 updated without an ADD (counted, taken as its ADD); machine 3 removed and added again
    /// with another capacity (a return, not counted).
    #[test]
    fn odd_machine_events_are_counted() {
        // time,machine,event,platform,cpus,memory (ADD 0, REMOVE 1, UPDATE 2)
        let machines = "\
0,1,0,p,0.5,0.5
0,3,0,p,0.5,0.5
1000000,1,0,p,0.5,0.5
2000000,1,0,p,1,0.5
3000000,2,2,p,0.25,0.25
4000000,3,1,p,,
5000000,3,0,p,1,1
";
        let dir = super::super::ingested(&[("machine_events", machines)]);
        let mut replay = Replay::open(&dir.path().join("parquet")).unwrap();
        let mut cell = Cell::default();
        replay.advance(&mut cell, 60_000_000).unwrap();
        let stats = replay.stats();
        assert_eq!(
            (
                stats.adds_changing_capacity,
                stats.updates_of_unknown_machines
            ),
            (1, 1)
        );
        assert_eq!(cell.nodes.cpu_cap()[0], crate::units::to_units(1.0));
        assert!(stats.machine_event_oddities().unwrap().contains("1 ADD(s)"));
    }

    /// Two nodes removed in one tick (hand-worked): the tasks on either are displaced once each,
    /// in ascending order; a migration from a kept node towards a removed one is aborted, the
    /// task staying where it runs; tasks elsewhere are untouched; node sums stay exact.
    #[test]
    fn removals_of_a_tick_displace_their_tasks_in_one_pass() {
        let empty = tempfile::tempdir().unwrap();
        let mut replay = Replay::open(empty.path()).unwrap();
        let mut cell = Cell::default();
        let [a, b, c] = [1, 2, 3].map(|m| cell.add_machine(m, 1_000, 1_000));
        let t: Vec<TaskIdx> = (0..5).map(|i| cell.tasks.alloc(1, i, 0, 0)).collect();
        for &task in &t {
            cell.set_request(task, 10, 10);
        }
        cell.place(t[0], b, 0);
        cell.place(t[1], c, 0);
        cell.place(t[2], a, 0);
        cell.place(t[3], c, 0);
        // t[4] stays pending.
        assert!(cell.start_migration(t[1], b));
        replay.removed = vec![b, a];
        let mut ev = TickEvents::default();
        replay.displace_from_removed(&mut cell, 60, &mut ev);
        assert_eq!(ev.displaced_tasks, vec![t[0], t[2]]);
        assert!(replay.removed.is_empty());
        for (task, state, node) in [
            (t[0], TaskState::Pending, NodeIdx::NONE),
            (t[1], TaskState::Running, c),
            (t[2], TaskState::Pending, NodeIdx::NONE),
            (t[3], TaskState::Running, c),
            (t[4], TaskState::Pending, NodeIdx::NONE),
        ] {
            assert_eq!(cell.tasks.state()[task.index()], state);
            assert_eq!(cell.tasks.node()[task.index()], node);
            assert_eq!(cell.tasks.migrating_to()[task.index()], NodeIdx::NONE);
        }
        assert_eq!(cell.migrating, 0);
        let count = |n: NodeIdx| cell.nodes.task_count()[n.index()];
        assert_eq!((count(a), count(b), count(c)), (0, 0, 2));
        cell.check().unwrap();
    }

    const MIN: i64 = 60_000_000;

    /// Hand-worked, displaced at minute 40 by a removal: a run the trace scheduled at minute 10
    /// and the policy started at 15 (5 minutes late) had reached trace minute 35, its new
    /// SCHEDULE, losing 25 minutes of work; placed again at minute 50, its usage rows are 15
    /// minutes late, the 5 it started late and the 10 it waited. A run the policy started early
    /// (minute 8) had reached trace minute 40 (30 lost). A run the trace never scheduled is left
    /// alone, and borg-replay (which follows the trace's own placements) moves nothing.
    #[test]
    fn a_displaced_run_keeps_its_place_in_the_trace_in_workload_mode_only() {
        for workload in [false, true] {
            let empty = tempfile::tempdir().unwrap();
            let mut replay = Replay::open(empty.path()).unwrap();
            replay.set_workload_mode(workload);
            let mut cell = Cell::default();
            let [a, b] = [1, 2].map(|m| cell.add_machine(m, 1_000, 1_000));
            let t: Vec<TaskIdx> = (0..3).map(|i| cell.tasks.alloc(1, i, 0, 0)).collect();
            for (&task, start) in t.iter().zip([15, 8, 15]) {
                cell.set_request(task, 10, 10);
                cell.place(task, a, start * MIN);
            }
            cell.record_trace_schedule(t[0], 10 * MIN);
            cell.record_trace_schedule(t[1], 10 * MIN);
            replay.removed = vec![a];
            let mut ev = TickEvents::default();
            replay.displace_from_removed(&mut cell, 40 * MIN, &mut ev);
            assert_eq!(ev.displaced_tasks, t);
            let of = |column: &[i64]| t.iter().map(|x| column[x.index()]).collect::<Vec<_>>();
            let (sched, lost) = if workload {
                ([35 * MIN, 40 * MIN, NOT_SCHEDULED], [25 * MIN, 30 * MIN, 0])
            } else {
                ([10 * MIN, 10 * MIN, NOT_SCHEDULED], [0; 3])
            };
            assert_eq!(
                of(cell.tasks.trace_sched_us()),
                sched,
                "workload {workload}"
            );
            assert_eq!(of(cell.tasks.lost_us()), lost, "workload {workload}");
            cell.place(t[0], b, 50 * MIN);
            let delay = deferred::start_delay_us(workload, &cell, t[0]);
            assert_eq!(delay, if workload { 15 * MIN } else { 0 });
        }
    }
}
