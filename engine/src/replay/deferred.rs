//! Workload mode of the replay (every policy but borg-replay, SPEC 5.5): a task runs for its
//! recorded run time (trace SCHEDULE to terminal event) with its recorded usage series, counted
//! from when the policy starts it. Times are kept at tick granularity: a run the policy starts `d`
//! ticks after the tick of the trace's SCHEDULE has its later usage rows and its terminal event
//! applied `d` ticks late (a queue of deferred events, ordered by due time then arrival); a
//! terminal event for a task still pending in the policy but run by the trace makes it finish its
//! recorded run time after the policy starts it. A run displaced by a machine removal restarts
//! when placed again: its end comes its whole recorded run time later, the work done being lost
//! (`Tasks::lost_us`), while its usage rows continue from the trace time it had reached, delayed
//! by the time it waited (`events.rs`, `displace_from_removed`). Not modelled: a policy that starts a
//! task *earlier* than the trace did cannot see the future, so the run ends at the recorded
//! terminal event (it runs longer); usage rows that arrive while the task is still pending in the
//! policy set the usage it starts with.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::queue::LaneKey;
use super::{EndedTask, Replay, TickEvents};
use crate::cell::{Cell, NOT_SCHEDULED, TaskState, UsageChange};
use crate::ids::TaskIdx;
use crate::preload;

/// Lanes of deferred ends from task_events (`queue.rs`).
const LANE_TASK_EVENTS: u8 = 0;
/// Due deferred events applied one by one per batch (their tasks' columns are read first).
const DUE_CHUNK: usize = 1024;
/// Due deferred events popped at a time ([`Replay::apply_due_batch`]): enough for the usage
/// samples among them to fill every thread.
const DUE_BATCH: usize = 1 << 16;
/// Lanes of deferred usage rows.
pub(super) const LANE_USAGE: u8 = 1;

/// A trace event held back in workload mode until the shifted run reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Deferred {
    /// When it applies, microseconds.
    pub due_us: i64,
    /// Arrival order (ties in `due_us` apply in arrival order).
    pub seq: u64,
    /// The task.
    pub task: TaskIdx,
    /// Its slot generation when deferred.
    pub generation: u32,
    /// What happens.
    pub kind: DeferredKind,
}

/// The event a [`Deferred`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum DeferredKind {
    /// The run ends.
    End,
    /// A usage sample: CPU and memory units.
    Usage {
        /// CPU units.
        cpu: u32,
        /// Memory units.
        mem: u32,
    },
}

/// A task that ended in the trace while still pending in the policy: it finishes `run_us` after
/// the policy starts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AwaitingStart {
    /// The task.
    pub task: TaskIdx,
    /// Its slot generation.
    pub generation: u32,
    /// Recorded run time, microseconds.
    pub run_us: i64,
}

/// Applies one due event unless its task slot has ended or been reused since; a run it ends
/// goes into `ended`.
fn apply_due(cell: &mut Cell, d: &Deferred, ended: &mut Vec<EndedTask>) {
    // The slot's generation and state from its usage record, which `set_usage` reads next.
    let u = &cell.tasks.usage()[d.task.index()];
    if u.generation() != d.generation || u.state() == TaskState::Free {
        return;
    }
    match d.kind {
        DeferredKind::End => {
            ended.push(EndedTask::of(cell, d.task, d.due_us));
            cell.end(d.task);
        }
        DeferredKind::Usage { cpu, mem } => {
            cell.set_usage(d.task, cpu, mem);
        }
    }
}

/// How far the policy's start of `t` lags the trace's (0 in borg-replay mode, for tasks the
/// trace has not scheduled, and for tasks the policy started earlier).
pub(super) fn start_delay_us(workload_mode: bool, cell: &Cell, t: TaskIdx) -> i64 {
    // From the usage record (`cell/usage_slot.rs`): one line, which a usage row reads anyway.
    let u = &cell.tasks.usage()[t.index()];
    match workload_mode && u.state() == TaskState::Running {
        true => u.shift_us(),
        false => 0,
    }
}

/// Takes running task `t` off its node at `now_us`, as a machine removal does (and a hosted
/// policy's eviction, `hosted/decisions.rs`): in workload mode its run restarts when placed
/// again, its usage rows continuing from the trace time it had reached (module doc).
pub fn displace(workload_mode: bool, cell: &mut Cell, t: TaskIdx, now_us: i64) {
    if workload_mode && cell.tasks.trace_sched_us()[t.index()] != NOT_SCHEDULED {
        let delay = start_delay_us(true, cell, t);
        cell.record_displaced_run(t, now_us - delay);
    }
    cell.unplace(t);
}

impl Replay {
    /// Switches to workload mode (module doc): for every policy that does not follow the trace's
    /// placements.
    pub fn set_workload_mode(&mut self, on: bool) {
        self.workload_mode = on;
    }

    /// For a policy that takes over the trace's initial state ([`crate::policy::Policy::
    /// takes_initial_placements`]): in workload mode the SCHEDULE events before the window
    /// (GCD's at t = 0: the tasks running when the trace begins) are read as recorded
    /// placements too, as for borg-replay.
    pub fn set_initial_placements(&mut self, on: bool) {
        self.initial_placements = on;
    }

    /// For a policy that starts tasks at exact times within a tick ([`Policy::exact_time`]):
    /// a run is measured from its SCHEDULE's own time, not the end of its tick, so it lasts its
    /// recorded length exactly from the policy's start (and a run the trace starts and ends
    /// within one tick still runs, for its length, once started).
    ///
    /// [`Policy::exact_time`]: crate::policy::Policy::exact_time
    pub fn set_exact_schedule(&mut self, on: bool) {
        self.exact_schedule = on;
    }

    /// Holds back `kind` for `task` in slot generation `generation` until `due_us`; `lane` as
    /// in [`DeferredQueue::push`].
    pub(super) fn defer(
        &mut self,
        (due_us, lane): (i64, Option<LaneKey>),
        (task, generation): (TaskIdx, u32),
        kind: DeferredKind,
    ) {
        self.deferred_seq += 1;
        let d = Deferred {
            due_us,
            seq: self.deferred_seq,
            task,
            generation,
            kind,
        };
        self.deferred.push(d, lane);
    }

    /// Applies the deferred events due before `end_us` and schedules the ends of awaited runs
    /// the policy has started since.
    pub(super) fn apply_deferred(&mut self, cell: &mut Cell, end_us: i64, ev: &mut TickEvents) {
        let mut started = std::mem::take(&mut self.started_tasks);
        cell.take_started(&mut started);
        let mut runs = std::mem::take(&mut self.started_runs);
        runs.clear();
        self.awaiting.take_started(cell, &started, &mut runs);
        self.started_tasks = started;
        for w in &runs {
            let due = cell.tasks.start_us()[w.task.index()] + w.run_us;
            let task = (w.task, cell.tasks.generation()[w.task.index()]);
            self.defer((due, None), task, DeferredKind::End);
        }
        self.started_runs = runs;
        let mut due = std::mem::take(&mut self.due_events);
        loop {
            due.clear();
            self.deferred.pop_due_into(end_us, &mut due, DUE_BATCH);
            if due.is_empty() {
                break;
            }
            self.apply_due_batch(cell, &due, &mut ev.ended);
        }
        self.due_events = due;
    }

    /// Applies `due` (popped whole: applying an event changes nothing the queue holds) as one by
    /// one in order. The events of tasks that end in it go one by one, in order (an end frees
    /// its slot and is reported in order), their columns read first (`preload`); every other
    /// task's usage samples in one batch on every thread (`cell/usage_batch.rs`): they touch
    /// their own tasks' columns and add to node sums, so they commute with those events. The
    /// ending tasks are found on every thread and marked in a bit set (cleared after: only
    /// their words); the batch reads the events where they lie (`Cell::set_usage_batch_of`).
    fn apply_due_batch(&mut self, cell: &mut Cell, due: &[Deferred], ended: &mut Vec<EndedTask>) {
        let bit = |t: TaskIdx| (t.index() / 64, 1u64 << (t.index() % 64));
        let (mut ends, mut one_by_one) = (
            std::mem::take(&mut self.due_ends),
            std::mem::take(&mut self.due_one_by_one),
        );
        ends.clear();
        one_by_one.clear();
        crate::parallel_time::region(|| {
            let ending_tasks = due.par_iter().filter(|d| d.kind == DeferredKind::End);
            ends.par_extend(ending_tasks.map(|d| d.task));
        });
        let ending = &mut self.ending;
        ending.resize(ending.len().max(cell.tasks.len().div_ceil(64)), 0);
        ends.iter().for_each(|&t| ending[bit(t).0] |= bit(t).1);
        let ending = &self.ending[..];
        let batched = |d: &Deferred| match d.kind {
            DeferredKind::Usage { cpu, mem }
                if ends.is_empty() || ending[bit(d.task).0] & bit(d.task).1 == 0 =>
            {
                Some(UsageChange {
                    task: d.task,
                    generation: d.generation,
                    cpu,
                    mem,
                })
            }
            _ => None,
        };
        if !ends.is_empty() {
            let others = due.par_iter().filter(|d| batched(d).is_none());
            crate::parallel_time::region(|| one_by_one.par_extend(others.copied()));
        }
        for events in one_by_one.chunks(DUE_CHUNK) {
            preload::preload(events, |d| cell.preload_usage(d.task));
            for d in events {
                apply_due(cell, d, ended);
            }
        }
        let items = (
            due.len(),
            |k: usize| due[k].task,
            |k: usize| batched(&due[k]),
        );
        cell.set_usage_batch_of(items, &mut self.usage_batch);
        ends.iter().for_each(|&t| self.ending[bit(t).0] = 0);
        (self.due_ends, self.due_one_by_one) = (ends, one_by_one);
    }

    /// The trace ends `t`'s run at `now_us`: at once in borg-replay mode, shifted in workload mode.
    pub(super) fn end_run(
        &mut self,
        cell: &mut Cell,
        t: TaskIdx,
        now_us: i64,
        ev: &mut TickEvents,
    ) {
        let i = t.index();
        let sched = cell.tasks.trace_sched_us()[i];
        // A run that starts and ends within one tick is never seen running at a tick boundary,
        // in the trace as under the policy (unless the policy starts tasks at exact times).
        let within_tick = sched == self.window_end_us && !self.exact_schedule;
        let mut end_us = now_us;
        if self.workload_mode && sched != NOT_SCHEDULED && !within_tick {
            match cell.tasks.state()[i] {
                TaskState::Pending => {
                    // Measured from the end of the SCHEDULE's tick, as the policy's start is (from
                    // the SCHEDULE itself under `exact_schedule`), plus the work lost to displacements.
                    let run_us = now_us - sched + cell.tasks.lost_us()[i];
                    self.awaiting.push(AwaitingStart {
                        task: t,
                        generation: cell.tasks.generation()[i],
                        run_us,
                    });
                    return;
                }
                TaskState::Running => {
                    let delay =
                        start_delay_us(self.workload_mode, cell, t) + cell.tasks.lost_us()[i];
                    let due = now_us + delay;
                    if delay > 0 && due >= self.window_end_us {
                        let lane = Some((delay, LANE_TASK_EVENTS));
                        let task = (t, cell.tasks.generation()[i]);
                        self.defer((due, lane), task, DeferredKind::End);
                        return;
                    }
                    if self.exact_schedule {
                        end_us = due; // later in this tick: applied now, at its time
                    }
                }
                _ => {}
            }
        }
        ev.ended.push(EndedTask::of(cell, t, end_us));
        cell.end(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeIdx;

    /// Several batches' worth of due events (usage samples, ends amid samples of the same
    /// tasks, events for ended or reused slots) leave the cell exactly as applying them one by
    /// one in `(due_us, seq)` order does (samples of ending tasks put in the parallel batch
    /// fail it); events not yet due stay queued.
    #[test]
    fn batched_due_events_apply_as_one_by_one() {
        let mut r = ingest::rng::Rng::new(11, 0);
        let empty = tempfile::tempdir().unwrap();
        let mut replay = Replay::open(empty.path()).unwrap();
        let mut cell = Cell::default();
        let nodes: Vec<NodeIdx> = (0..4)
            .map(|m| cell.add_machine(m, 1 << 30, 1 << 30))
            .collect();
        let tasks: Vec<TaskIdx> = (0..50)
            .map(|i| {
                let t = cell.tasks.alloc(1, i, 0, 0);
                cell.set_request(t, 10, 10);
                cell.place(t, nodes[i as usize % 4], 0);
                t
            })
            .collect();
        let mut events = Vec::new();
        for seq in 0..(3 * DUE_CHUNK as u64) {
            let task = tasks[r.below(50) as usize];
            let kind = if r.below(400) == 0 {
                DeferredKind::End
            } else {
                let (cpu, mem) = (r.below(100) as u32, r.below(100) as u32);
                DeferredKind::Usage { cpu, mem }
            };
            let generation = cell.tasks.generation()[task.index()] + u32::from(r.below(20) == 0);
            let due_us = r.below(70) as i64; // those from 60 on stay queued
            events.push(Deferred {
                due_us,
                seq,
                task,
                generation,
                kind,
            });
        }
        let mut expected = cell.clone();
        let mut sorted: Vec<Deferred> = events.iter().filter(|d| d.due_us < 60).copied().collect();
        sorted.sort();
        let mut ended = Vec::new();
        for d in &sorted {
            apply_due(&mut expected, d, &mut ended);
        }
        let later = events.len() - sorted.len();
        assert!(sorted.len() > 2 * DUE_CHUNK && later > 0);
        assert!(!ended.is_empty());
        replay.deferred = events.into_iter().collect();
        let mut ev = TickEvents::default();
        replay.apply_deferred(&mut cell, 60, &mut ev);
        assert_eq!(ev.ended, ended);
        assert_eq!(replay.deferred.len(), later);
        assert_eq!(cell.tasks.usage(), expected.tasks.usage());
        assert_eq!(cell.tasks.state(), expected.tasks.state());
        assert_eq!(cell.nodes.cpu_used(), expected.nodes.cpu_used());
        assert_eq!(cell.nodes.mem_used(), expected.nodes.mem_used());
        cell.check().unwrap();
    }
}
