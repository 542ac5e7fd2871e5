//! Applying the trace to the cell, tick by tick: machine ADD/REMOVE/UPDATE, machine attributes,
//! task SUBMIT / SCHEDULE / EVICT / FAIL / FINISH / KILL / LOST / UPDATE_*, task constraints and
//! task usage. Within a tick, tables are applied in that order (machines first, so a task
//! scheduled on a machine added in the same minute finds it).
//!
//! The replay owns the workload; placement is the policy's job: a SCHEDULE becomes a
//! [`Placement`] hint in [`TickEvents`] that borg-replay follows and other policies ignore.
//! Hash maps from trace IDs to indices live here, at trace-apply time, never in the round path.
//!
//! Row handlers for machine and task events live in `replay/events.rs`; workload mode (every
//! policy but borg-replay, SPEC 5.5) in `replay/deferred.rs`.

use std::collections::BTreeMap;
use std::ops::Range;

use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::Path;

use arrow_array::RecordBatch;
use ingest::Table;
use ingest::columns::ConstraintRow;
use serde::{Deserialize, Serialize};

use crate::cell::{Cell, Constraint};
use crate::error::Result;
use crate::ids::{NodeIdx, TaskIdx};

mod awaiting;
mod deferred;
mod events;
mod queue;
mod rows;
use crate::scale::{CopyIds, Scale};
use crate::trace::Cursor;
use crate::units::to_units;
pub use awaiting::AwaitingList;
pub use deferred::{AwaitingStart, Deferred, DeferredKind};
pub use queue::DeferredQueue;
use rows::{AttributeRow, MachineEventRow, TaskEventRow, UsageReading};

/// A SCHEDULE event seen this tick: where the trace put the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The task.
    pub task: TaskIdx,
    /// Its slot generation when the event was read (the slot may be reused by tick end).
    pub generation: u32,
    /// The recorded machine, NONE when the trace names a machine it never ADDs.
    pub node: NodeIdx,
}

/// What changed in the cell this tick, for the policy.
#[derive(Debug, Default, Clone)]
pub struct TickEvents {
    /// Tasks that became pending (new or resubmitted).
    pub submitted: Vec<TaskIdx>,
    /// Recorded placements, in trace order.
    pub placements: Vec<Placement>,
    /// Tasks ended this tick.
    pub ended: u64,
    /// Machines added, removed or resized this tick.
    pub machine_changes: u64,
    /// Running tasks taken off machines that were removed (now pending).
    pub displaced_tasks: Vec<TaskIdx>,
}

/// Counts of trace oddities over the whole run, reported in the summary.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayStats {
    /// Rows applied per table.
    pub rows: BTreeMap<String, u64>,
    /// Distinct machine IDs that SCHEDULE events name before machine_events has added them (at
    /// that time: the replay cannot know whether an ADD comes later).
    pub unknown_machines: u64,
    /// SCHEDULE events naming such machines (the task stays pending).
    pub unknown_machine_placements: u64,
    /// Terminal or update events for tasks never submitted.
    pub events_for_unknown_tasks: u64,
    /// Usage rows for tasks not known at that time.
    pub usage_rows_unmatched: u64,
    /// Whether the trace has task_usage; without it usage falls back to requests.
    pub usage_from_trace: bool,
}

/// The replay state: cursors and the ID maps.
pub struct Replay {
    pub(crate) machines: Cursor,
    pub(crate) attributes: Cursor,
    pub(crate) task_events: Cursor,
    pub(crate) constraints: Cursor,
    pub(crate) usage: Cursor,
    pub(crate) node_of: HashMap<u64, NodeIdx>,
    pub(crate) task_of: HashMap<(u64, u32), TaskIdx>,
    pub(crate) strings: HashMap<String, u32>,
    pub(crate) unknown: HashSet<u64>,
    pub(crate) rows: [u64; 6],
    pub(crate) stats: ReplayStats,
    pub(crate) workload_mode: bool,
    /// End of the window being applied.
    pub(crate) window_end_us: i64,
    pub(crate) deferred: DeferredQueue,
    pub(crate) deferred_seq: u64,
    pub(crate) awaiting: AwaitingList,
    /// Scratch: the tasks the policy placed since the last tick.
    started_tasks: Vec<TaskIdx>,
    /// Scratch: the awaited runs the policy started since the last tick.
    started_runs: Vec<AwaitingStart>,
    /// Scratch: deferred events due this tick, a batch at a time.
    due_events: Vec<Deferred>,
    pub(crate) scale: Scale,
    /// Scratch: the instances of the row being applied.
    instances: Vec<(u64, u32)>,
    /// The copy IDs of the last job scaled.
    copy_ids: CopyIds,
    /// Scratch: nodes removed by this tick's machine events, their tasks not yet displaced.
    removed: Vec<NodeIdx>,
    /// Scratch: the tick's usage rows, per task instance, and what they resolve to (task, start
    /// delay, slot generation).
    usage_rows: Vec<UsageRow>,
    usage_tasks: Vec<(Option<TaskIdx>, i64, u32)>,
}

/// Usage rows a thread looks up at a time ([`Replay::apply_usage`]).
const USAGE_LOOKUPS_PER_JOB: usize = 4096;

/// One usage row for one task instance, as read (applied by [`Replay::apply_usage`]).
#[derive(Debug, Clone, Copy)]
struct UsageRow {
    key: (u64, u32),
    start_us: i64,
    end_us: i64,
    cpu: u32,
    mem: u32,
}

/// Constraint rows of one task at one time, collected until the next task's rows begin.
#[derive(Default)]
struct ConstraintSet {
    stamp: Option<(u64, u32, i64)>,
    rows: Vec<Constraint>,
}

impl Replay {
    /// Opens the ingested trace in `dir`.
    pub fn open(dir: &Path) -> Result<Replay> {
        Self::open_at(dir, [0; 6])
    }

    /// Opens the ingested trace in `dir` with each table's first `consumed[table]` rows already
    /// applied (resuming from a snapshot); the ID maps start empty.
    pub fn open_at(dir: &Path, consumed: [u64; 6]) -> Result<Replay> {
        let open = |table: Table, columns: &[&str]| {
            Cursor::open_at(dir, table, columns, consumed[table as usize])
        };
        let usage = open(Table::TaskUsage, &UsageReading::COLUMNS)?;
        let stats = ReplayStats {
            usage_from_trace: usage.present(),
            ..ReplayStats::default()
        };
        let mut strings = HashMap::default();
        strings.insert(String::new(), 0);
        Ok(Replay {
            machines: open(Table::MachineEvents, &MachineEventRow::COLUMNS)?,
            attributes: open(Table::MachineAttributes, &AttributeRow::COLUMNS)?,
            task_events: open(Table::TaskEvents, &TaskEventRow::COLUMNS)?,
            constraints: open(Table::TaskConstraints, &ConstraintRow::COLUMNS)?,
            usage,
            node_of: HashMap::default(),
            task_of: HashMap::default(),
            strings,
            unknown: HashSet::default(),
            rows: consumed,
            stats,
            workload_mode: false,
            window_end_us: i64::MIN,
            deferred: DeferredQueue::default(),
            deferred_seq: 0,
            awaiting: AwaitingList::default(),
            started_tasks: Vec::new(),
            started_runs: Vec::new(),
            due_events: Vec::new(),
            scale: Scale::default(),
            instances: Vec::new(),
            copy_ids: CopyIds::default(),
            removed: Vec::new(),
            usage_rows: Vec::new(),
            usage_tasks: Vec::new(),
        })
    }

    /// Scales the workload while streaming (`scale.rs`).
    pub fn set_scale(&mut self, scale: Scale) {
        self.scale = scale;
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(id) = self.strings.get(s) {
            return *id;
        }
        let id = self.strings.len() as u32;
        self.strings.insert(s.to_string(), id);
        id
    }

    /// Oddities counted so far, with rows applied per table.
    pub fn stats(&self) -> ReplayStats {
        let mut stats = self.stats.clone();
        stats.rows = Table::ALL
            .iter()
            .map(|t| (t.name().to_string(), self.rows[*t as usize]))
            .collect();
        stats
    }

    /// Runs `apply` on every row of one table before `end_us`, a run of rows of one batch at a
    /// time, counting the rows. The cursor is taken out of `self` while `apply` gets `self`
    /// mutably.
    fn drain(
        &mut self,
        table: Table,
        cursor: fn(&mut Replay) -> &mut Cursor,
        end_us: i64,
        mut apply: impl FnMut(&mut Replay, &RecordBatch, Range<usize>),
    ) -> Result<()> {
        let mut rows = std::mem::replace(cursor(self), Cursor::none());
        let result = rows.each_before(end_us, |b, run| {
            self.rows[table as usize] += run.len() as u64;
            apply(self, b, run);
            Ok(())
        });
        *cursor(self) = rows;
        result
    }

    /// Applies every event before `end_us` to `cell`; returns what the policy must hear about.
    pub fn advance(&mut self, cell: &mut Cell, end_us: i64) -> Result<TickEvents> {
        let mut ev = TickEvents::default();
        self.window_end_us = end_us;
        self.apply_deferred(cell, end_us, &mut ev);
        let scale = self.scale;
        self.drain(
            Table::MachineEvents,
            |s| &mut s.machines,
            end_us,
            |s, b, run| {
                let read = MachineEventRow::reader(b);
                for row in run.map(read) {
                    for m in scale.machines(row.machine_id) {
                        s.machine_event(cell, &row, m, &mut ev);
                    }
                }
            },
        )?;
        self.displace_from_removed(cell, &mut ev);
        self.drain(
            Table::MachineAttributes,
            |s| &mut s.attributes,
            end_us,
            |s, b, run| {
                for row in run.map(|r| AttributeRow::read(b, r)) {
                    let name = s.intern(row.name);
                    // None: the row deletes the attribute.
                    let value = row.value.map(|(text, int)| (s.intern(text), int));
                    for m in scale.machines(row.machine_id) {
                        let node = s.node(m, cell);
                        match value {
                            Some(v) => cell.set_attribute(node, name, v),
                            None => cell.remove_attribute(node, name),
                        }
                    }
                }
            },
        )?;
        self.drain(
            Table::TaskEvents,
            |s| &mut s.task_events,
            end_us,
            |s, b, run| {
                let read = TaskEventRow::reader(b);
                for row in run.map(read) {
                    s.each_instance(row.job_id, row.task_index, |s, job, k| {
                        s.task_event(cell, &row, (job, k), &mut ev);
                    });
                }
            },
        )?;
        let mut set = ConstraintSet::default();
        self.drain(
            Table::TaskConstraints,
            |s| &mut s.constraints,
            end_us,
            |s, b, run| {
                // Consecutive rows of one task at one time form its (new) constraint set.
                for row in run.map(|r| ConstraintRow::read(b, r)) {
                    let stamp = (row.job_id, row.task_index, row.time_us);
                    if set.stamp != Some(stamp) {
                        s.set_constraints(cell, &mut set);
                        set.stamp = Some(stamp);
                    }
                    set.rows.push(Constraint {
                        op: row.op,
                        name: s.intern(row.name),
                        value: s.intern(row.value),
                        value_int: row.value_int,
                    });
                }
            },
        )?;
        self.set_constraints(cell, &mut set);
        cell.index_attributes();
        self.drain(
            Table::TaskUsage,
            |s| &mut s.usage,
            end_us,
            |s, b, run| {
                let read = UsageReading::reader(b);
                for reading in run.map(read) {
                    let index = reading.task_index;
                    let row = UsageRow {
                        key: (0, index),
                        start_us: reading.start_us,
                        end_us: reading.end_us,
                        cpu: to_units(reading.cpu.unwrap_or(0.0)),
                        mem: to_units(reading.memory.unwrap_or(0.0)),
                    };
                    s.each_instance(reading.job_id, index, |s, job, _| {
                        s.usage_rows.push(UsageRow {
                            key: (job, index),
                            ..row
                        });
                    });
                }
            },
        )?;
        self.apply_usage(cell);
        Ok(ev)
    }

    /// Gives every instance of the set's task the constraint rows collected in `set`.
    fn set_constraints(&mut self, cell: &mut Cell, set: &mut ConstraintSet) {
        let Some((job, index, _)) = set.stamp.take() else {
            return;
        };
        self.each_instance(job, index, |s, job, _| {
            let Some(&t) = s.task_of.get(&(job, index)) else {
                s.stats.events_for_unknown_tasks += set.rows.len() as u64;
                return;
            };
            cell.set_constraints(t, &set.rows);
        });
        set.rows.clear();
    }

    /// Calls `f(self, job ID, machine copy)` for every instance of task (`job`, `index`) under
    /// the scaling (`scale.rs`); the instance list is a reused scratch buffer.
    fn each_instance(&mut self, job: u64, index: u32, mut f: impl FnMut(&mut Replay, u64, u32)) {
        let mut instances = std::mem::take(&mut self.instances);
        self.scale
            .tasks(job, index, &mut self.copy_ids, &mut instances);
        for &(job, k) in &instances {
            f(self, job, k);
        }
        self.instances = instances;
    }

    /// Applies (or, for runs the policy started late, defers) the tick's usage rows, in order.
    /// The rows change no task's identity, state or start, so each row's task and shift are
    /// looked up first, on both threads (the hash probes and task columns are cache misses),
    /// then the rows applied one by one.
    fn apply_usage(&mut self, cell: &mut Cell) {
        let mut rows = std::mem::take(&mut self.usage_rows);
        let mut tasks = std::mem::take(&mut self.usage_tasks);
        tasks.clear();
        let (task_of, workload_mode) = (&self.task_of, self.workload_mode);
        let lookup = |u: &UsageRow| match task_of.get(&u.key) {
            Some(&t) => {
                let delay = deferred::start_delay_us(workload_mode, cell, t);
                (Some(t), delay, cell.tasks.generation[t.index()])
            }
            None => (None, 0, 0),
        };
        // Read-only: both threads look up, in order (the result does not depend on the split).
        tasks.par_extend(
            rows.par_iter()
                .with_min_len(USAGE_LOOKUPS_PER_JOB)
                .map(lookup),
        );
        for (u, &(t, delay, generation)) in rows.iter().zip(&tasks) {
            let Some(t) = t else {
                self.stats.usage_rows_unmatched += 1;
                continue;
            };
            let until_us = u.end_us + delay;
            if delay > 0 {
                let kind = DeferredKind::Usage {
                    cpu: u.cpu,
                    mem: u.mem,
                    until_us,
                };
                let lane = Some((delay, deferred::LANE_USAGE));
                self.defer((u.start_us + delay, lane), (t, generation), kind);
            } else {
                cell.set_usage(t, u.cpu, u.mem, until_us);
            }
        }
        rows.clear();
        (self.usage_rows, self.usage_tasks) = (rows, tasks);
    }
}
