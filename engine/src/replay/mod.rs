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
//! policy but borg-replay, SPEC 5.5) in `replay/deferred.rs`. Reading overlaps applying
//! ([`Replay::advance`]): while deferred events are pending, the task event rows are read (their
//! tasks looked up in the ID map ahead) while those and the machine tables apply
//! (`replay/task_rows.rs`); the usage rows are read while the last tick's policy ran
//! (`replay/usage_ahead.rs`), or while the task events apply (`replay/usage.rs`).

use std::collections::BTreeMap;
use std::ops::Range;

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
mod task_ids;
mod task_rows;
mod usage;
mod usage_ahead;
use crate::scale::{CopyIds, Scale};
use crate::trace::Cursor;
pub use awaiting::AwaitingList;
pub use deferred::{AwaitingStart, Deferred, DeferredKind, displace};
pub use queue::DeferredQueue;
use rows::{AttributeRow, MachineEventRow, TaskEventRow, UsageReading};
use task_ids::TaskIds;
use task_rows::TaskEventRows;
use usage::UsageRows;

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

/// A task that ended: its trace identity (its slot may already serve another task) and its
/// times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndedTask {
    /// Its slot when it ended (the slot may serve another task by the time a policy reads it).
    pub task: TaskIdx,
    /// Trace job ID.
    pub job_id: u64,
    /// Task index within the job.
    pub task_index: u32,
    /// Its latest SUBMIT, microseconds.
    pub submit_us: i64,
    /// When its run started (the end of the tick it was placed in); `None` when it ended while
    /// pending.
    pub start_us: Option<i64>,
    /// When it ended, microseconds.
    pub end_us: i64,
    /// The node it ran on ([`NodeIdx::NONE`] when it ended while pending): where room was
    /// freed.
    pub node: NodeIdx,
    /// The room its end freed there ([`Cell::charge`]; zero when it ended while pending).
    pub freed: [i64; 4],
}

impl EndedTask {
    /// Task `t`, read before it ends at `end_us`.
    pub fn of(cell: &Cell, t: TaskIdx, end_us: i64) -> EndedTask {
        let (tasks, i) = (&cell.tasks, t.index());
        let running = tasks.state()[i] == crate::cell::TaskState::Running;
        EndedTask {
            task: t,
            job_id: tasks.job_id()[i],
            task_index: tasks.task_index()[i],
            submit_us: tasks.submit_us()[i],
            start_us: running.then_some(tasks.start_us()[i]),
            end_us,
            node: if running {
                tasks.node()[i]
            } else {
                NodeIdx::NONE
            },
            freed: if running { cell.charge(t) } else { [0; 4] },
        }
    }
}

/// A machine added, removed or resized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineChange {
    /// The node.
    pub node: NodeIdx,
    /// Online after the change (false: removed).
    pub online: bool,
    /// CPU capacity after the change, units.
    pub cpu_cap: u32,
    /// Memory capacity after the change, units.
    pub mem_cap: u32,
}

/// What changed in the cell this tick, for the policy. Per job: arrivals are `submitted`'s
/// tasks' `job_id`s, departures `ended`'s ([`TickEvents::by_job`]).
#[derive(Debug, Default, Clone)]
pub struct TickEvents {
    /// Tasks that became pending (new or resubmitted).
    pub submitted: Vec<TaskIdx>,
    /// Recorded placements, in trace order.
    pub placements: Vec<Placement>,
    /// Tasks ended this tick (their runs finished, failed, were killed or lost), with their
    /// jobs: a controller's departures per job.
    pub ended: Vec<EndedTask>,
    /// Machines added, removed or resized this tick, in trace order: capacity changes.
    pub machine_changes: Vec<MachineChange>,
    /// Running tasks taken off machines that were removed (now pending).
    pub displaced_tasks: Vec<TaskIdx>,
}

impl TickEvents {
    /// Places the tick's recorded placements on `cell` at `now_us`, in trace order, as the
    /// trace made them: a task that ended or was placed since, or whose slot serves another
    /// task by now, is left alone; one recorded on a machine that is offline (or that the trace
    /// never adds) stays where it is and is counted. Returns that count.
    pub fn follow_placements(&self, cell: &mut Cell, now_us: i64) -> u64 {
        let mut skipped = 0;
        for p in &self.placements {
            let i = p.task.index();
            // The task may have ended (and its slot been reused) later in the same tick.
            if cell.tasks.generation()[i] != p.generation
                || cell.tasks.state()[i] != crate::cell::TaskState::Pending
            {
                continue;
            }
            if !cell.nodes.is_online(p.node) {
                skipped += 1;
                continue;
            }
            cell.place(p.task, p.node, now_us);
        }
        skipped
    }

    /// Tasks submitted and ended this tick per job: (job ID, arrivals, departures), by job ID.
    pub fn by_job(&self, cell: &Cell) -> Vec<(u64, u32, u32)> {
        let mut jobs: BTreeMap<u64, (u32, u32)> = BTreeMap::new();
        for &t in &self.submitted {
            jobs.entry(cell.tasks.job_id()[t.index()]).or_default().0 += 1;
        }
        for e in &self.ended {
            jobs.entry(e.job_id).or_default().1 += 1;
        }
        jobs.into_iter().map(|(j, (a, d))| (j, a, d)).collect()
    }
}

/// Counts of trace oddities over the whole run, reported in the summary.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayStats {
    /// Rows applied per table.
    pub rows: BTreeMap<String, u64>,
    /// Distinct machine IDs that SCHEDULE events name before machine_events has added them (at
    /// that time: the replay cannot know whether an ADD comes later). Borg-replay only: in
    /// workload mode (MASB) the trace's placements are not read, and this stays 0.
    pub unknown_machines: u64,
    /// SCHEDULE events naming such machines (the task stays pending); borg-replay only, as
    /// `unknown_machines`.
    pub unknown_machine_placements: u64,
    /// Terminal or update events for tasks never submitted.
    pub events_for_unknown_tasks: u64,
    /// Usage rows for tasks not known at that time.
    pub usage_rows_unmatched: u64,
    /// Whether the trace has task_usage.
    pub usage_from_trace: bool,
    /// Whether tasks use the usage model's share of their requests until measured (by default
    /// when the trace has no task_usage; `usage_model.rs`), rather than their requests.
    #[serde(default)]
    pub usage_model: bool,
    /// ADD events for a machine already online, with another capacity than it has (the later
    /// one is taken, as an UPDATE; issue 56: counted, not silently applied).
    #[serde(default)]
    pub adds_changing_capacity: u64,
    /// UPDATE events for a machine never added (taken as its ADD).
    #[serde(default)]
    pub updates_of_unknown_machines: u64,
}

impl ReplayStats {
    /// The machine events the replay took in a way the trace may not mean, as warning text;
    /// none when there were none.
    pub fn machine_event_oddities(&self) -> Option<String> {
        let (adds, updates) = (
            self.adds_changing_capacity,
            self.updates_of_unknown_machines,
        );
        (adds + updates > 0).then(|| {
            format!(
                "machine_events: {adds} ADD(s) of a machine already online with another capacity (taken as UPDATEs), {updates} UPDATE(s) of a machine never added (taken as ADDs)"
            )
        })
    }
}

/// The replay state: cursors and the ID maps.
pub struct Replay {
    pub(crate) machines: Cursor,
    pub(crate) attributes: Cursor,
    pub(crate) task_rows: TaskEventRows,
    pub(crate) constraints: Cursor,
    pub(crate) usage: UsageRows,
    /// The thread that reads the next tick's usage rows ahead, once asked to (`usage_ahead.rs`).
    ahead: Option<usage_ahead::AheadReader>,
    pub(crate) node_of: HashMap<u64, NodeIdx>,
    pub(crate) task_of: TaskIds,
    pub(crate) strings: HashMap<String, u32>,
    pub(crate) unknown: HashSet<u64>,
    pub(crate) rows: [u64; 6],
    pub(crate) stats: ReplayStats,
    pub(crate) workload_mode: bool,
    /// In workload mode, the trace's initial state (its SCHEDULE events before the window,
    /// GCD's at t = 0) is still read as recorded placements ([`Replay::set_initial_placements`]).
    pub(crate) initial_placements: bool,
    /// Runs measured from the trace's exact SCHEDULE times (`deferred.rs`,
    /// [`Replay::set_exact_schedule`]).
    pub(crate) exact_schedule: bool,
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
    /// Scratch: the tasks that end in a batch of due events (a bit per task slot, all clear
    /// between batches; and listed), and those of its events applied one by one
    /// (`deferred.rs`); a burst of usage rows due now as changes (`usage.rs`); the buffers of
    /// a usage batch (both).
    ending: Vec<u64>,
    due_ends: Vec<TaskIdx>,
    due_one_by_one: Vec<Deferred>,
    usage_changes: Vec<crate::cell::UsageChange>,
    usage_batch: crate::cell::UsageBatch,
    pub(crate) scale: Scale,
    /// Scratch: the instances of the row being applied.
    instances: Vec<(u64, u32)>,
    /// The copy IDs of the last job scaled.
    copy_ids: CopyIds,
    /// Scratch: nodes removed by this tick's machine events, their tasks not yet displaced.
    removed: Vec<NodeIdx>,
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
            task_rows: TaskEventRows::new(open(Table::TaskEvents, &TaskEventRow::COLUMNS)?),
            constraints: open(Table::TaskConstraints, &ConstraintRow::COLUMNS)?,
            usage: UsageRows::new(usage),
            ahead: None,
            node_of: HashMap::default(),
            task_of: TaskIds::default(),
            strings,
            unknown: HashSet::default(),
            rows: consumed,
            stats,
            workload_mode: false,
            initial_placements: false,
            exact_schedule: false,
            window_end_us: i64::MIN,
            deferred: DeferredQueue::default(),
            deferred_seq: 0,
            awaiting: AwaitingList::default(),
            started_tasks: Vec::new(),
            started_runs: Vec::new(),
            due_events: Vec::new(),
            ending: Vec::new(),
            due_ends: Vec::new(),
            due_one_by_one: Vec::new(),
            usage_changes: Vec::new(),
            usage_batch: crate::cell::UsageBatch::default(),
            scale: Scale::default(),
            instances: Vec::new(),
            copy_ids: CopyIds::default(),
            removed: Vec::new(),
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
        let mut rows = std::mem::take(cursor(self));
        let result = rows.each_before(end_us, |b, run| {
            self.rows[table as usize] += run.len() as u64;
            apply(self, b, run);
            Ok(())
        });
        *cursor(self) = rows;
        result
    }

    /// Applies every event before `end_us` to `cell`; returns what the policy must hear about.
    /// Reading overlaps applying, on two threads: with deferred events pending the tick's task
    /// event rows are read (and their tasks looked up) while they and the machine tables apply
    /// (`task_rows.rs`); the usage rows were read ahead while the last tick ran
    /// ([`Replay::read_usage_ahead`]), or are read while the task events and constraints apply
    /// (`usage.rs`); usage is applied last. Errors come in the order of a sequential reading:
    /// machine tables, task events, constraints, usage.
    pub fn advance(&mut self, cell: &mut Cell, end_us: i64) -> Result<TickEvents> {
        let mut ev = TickEvents::default();
        self.window_end_us = end_us;
        let scale = self.scale;
        // Without deferred events (borg-replay, a run's first tick) the machine tables take next
        // to no time: the task rows are read and applied in one pass, their tasks looked up as
        // they apply.
        let ahead = !self.deferred.is_empty();
        if ahead {
            self.read_task_rows_ahead(cell, end_us, &mut ev)?;
        }
        let mut apply = |s: &mut Replay| {
            if ahead {
                s.apply_task_rows(cell, &mut ev);
            } else {
                s.apply_machine_tables(cell, end_us, &mut ev)?;
                s.apply_task_events(cell, end_us, &mut ev)?;
            }
            s.apply_constraints(cell, end_us)
        };
        // The usage rows read ahead while the last tick ran (`usage_ahead.rs`), or now beside
        // the task events.
        let (applied, usage_read) = if self.usage_read_out() {
            let applied = apply(self);
            (applied, self.take_usage_read(end_us))
        } else {
            let mut usage = std::mem::take(&mut self.usage);
            let both = rayon::join(|| apply(self), || usage.read_before(&scale, end_us));
            self.usage = usage;
            both
        };
        applied?;
        self.rows[Table::TaskUsage as usize] += usage_read?;
        self.apply_usage(cell);
        Ok(ev)
    }

    /// Applies the deferred events and machine tables before `end_us` while the other thread
    /// reads the task event rows before it and looks their tasks up (`task_rows.rs`).
    fn read_task_rows_ahead(
        &mut self,
        cell: &mut Cell,
        end_us: i64,
        ev: &mut TickEvents,
    ) -> Result<()> {
        let scale = self.scale;
        let mut task_rows = std::mem::take(&mut self.task_rows);
        // The ID map is read on the other thread: out of `self` while the machine tables apply
        // (they never use it).
        let task_of = std::mem::take(&mut self.task_of);
        let (applied, read) = rayon::join(
            || self.apply_machine_tables(cell, end_us, ev),
            || task_rows.read_before(&scale, end_us, &task_of),
        );
        (self.task_rows, self.task_of) = (task_rows, task_of);
        applied?;
        self.rows[Table::TaskEvents as usize] += read?;
        Ok(())
    }

    /// Applies the deferred events due before `end_us`, then the rows before it of the machine
    /// tables, in the module doc's order.
    fn apply_machine_tables(
        &mut self,
        cell: &mut Cell,
        end_us: i64,
        ev: &mut TickEvents,
    ) -> Result<()> {
        self.apply_deferred(cell, end_us, ev);
        let scale = self.scale;
        self.drain(
            Table::MachineEvents,
            |s| &mut s.machines,
            end_us,
            |s, b, run| {
                let read = MachineEventRow::reader(b);
                for row in run.map(read) {
                    for m in scale.machines(row.machine_id) {
                        s.machine_event(cell, &row, m, ev);
                    }
                }
            },
        )?;
        self.displace_from_removed(cell, end_us, ev);
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
        Ok(())
    }

    /// Reads and applies the task event rows before `end_us` in one pass, looking each
    /// instance's task up as it applies.
    fn apply_task_events(
        &mut self,
        cell: &mut Cell,
        end_us: i64,
        ev: &mut TickEvents,
    ) -> Result<()> {
        self.drain(
            Table::TaskEvents,
            |s| &mut s.task_rows.cursor,
            end_us,
            |s, b, run| {
                let read = TaskEventRow::reader(b);
                for row in run.map(read) {
                    s.each_instance(row.job_id, row.task_index, |s, job, k| {
                        let key = (job, row.task_index);
                        let existing = s.task_of.get(&key);
                        s.task_event(cell, &row, (key, k), existing, ev);
                    });
                }
            },
        )
    }

    /// Applies the task constraint rows before `end_us`, then indexes the attributes.
    fn apply_constraints(&mut self, cell: &mut Cell, end_us: i64) -> Result<()> {
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
        Ok(())
    }

    /// Gives every instance of the set's task the constraint rows collected in `set`.
    fn set_constraints(&mut self, cell: &mut Cell, set: &mut ConstraintSet) {
        let Some((job, index, _)) = set.stamp.take() else {
            return;
        };
        self.each_instance(job, index, |s, job, _| {
            let Some(t) = s.task_of.get(&(job, index)) else {
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
}

/// A trace of `tables` (each a table name and its CSV rows, one part) ingested into a temporary
/// directory, whose `parquet/` holds it (for tests).
#[cfg(test)]
fn ingested(tables: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let (trace, parquet) = (dir.path().join("trace"), dir.path().join("parquet"));
    for (table, rows) in tables {
        std::fs::create_dir_all(trace.join(table)).unwrap();
        std::fs::write(trace.join(table).join("part-00000-of-00001.csv"), rows).unwrap();
    }
    let none = ingest::Progress::default();
    ingest::ingest(&trace, &parquet, &ingest::IngestOptions::default(), &none).unwrap();
    dir
}
