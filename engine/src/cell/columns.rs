//! The node and task tables as columns (struct-of-arrays), and task slots' recycling through a
//! free list. The invariants that tie them together, and all mutation that keeps node sums
//! right, are [`Cell`](super::Cell)'s.

use super::usage_slot::{UNUSED, UsageSlot};
use crate::codec::column::{SnapshotColumn, codes};
use crate::codec::{SectionReader, SectionWriter, SnapshotError};
use crate::ids::{ConstraintSetIdx, NodeIdx, TaskIdx};

/// Declares a table of columns once: the struct (one `Vec` per column, private to the cell
/// module, each read through an accessor of its name returning the slice), a row of defaults
/// appended or restored (`push_defaults`, `reset_row`), and the columns written to and read from
/// a snapshot in declaration order (`save_columns`, `load_columns`; each element type's
/// [`SnapshotColumn`] says how it is stored and checked). `derived` columns are not saved: they
/// are rebuilt after a load (at their defaults until then); `other` fields are not columns (kept
/// by the table's own code, at their `Default` after `load_columns`).
macro_rules! columns {
    (
        $(#[$smeta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty = $default:expr ),* $(,)?
        }
        derived {
            $( $(#[$dmeta:meta])* $dfield:ident : $dty:ty = $ddefault:expr ),* $(,)?
        }
        other {
            $( $(#[$ometa:meta])* $ovis:vis $ofield:ident : $oty:ty ),* $(,)?
        }
    ) => {
        $(#[$smeta])*
        #[derive(Debug, Default, Clone)]
        pub struct $name {
            $( $(#[$fmeta])* pub(in crate::cell) $field: Vec<$ty>, )*
            $( $(#[$dmeta])* pub(in crate::cell) $dfield: Vec<$dty>, )*
            $( $(#[$ometa])* $ovis $ofield: $oty, )*
        }

        /// Read access to every column (changed only through [`Cell`](crate::cell::Cell)'s
        /// methods).
        impl $name {
            $(
                $(#[$fmeta])*
                #[inline]
                pub fn $field(&self) -> &[$ty] {
                    &self.$field
                }
            )*
            $(
                $(#[$dmeta])*
                #[inline]
                pub fn $dfield(&self) -> &[$dty] {
                    &self.$dfield
                }
            )*
        }

        impl $name {
            /// Appends a row of defaults to every column.
            fn push_defaults(&mut self) {
                $( self.$field.push($default); )*
                $( self.$dfield.push($ddefault); )*
            }

            /// Sets row `i` of every column to its default.
            #[allow(dead_code)]
            fn reset_row(&mut self, i: usize) {
                $( self.$field[i] = $default; )*
                $( self.$dfield[i] = $ddefault; )*
            }

            /// Writes the saved columns, in declaration order.
            pub(crate) fn save_columns(&self, w: &mut SectionWriter) {
                $( SnapshotColumn::save(&self.$field, w); )*
            }

            /// Reads columns of `len` rows written by `save_columns`, checked; derived ones at
            /// their defaults.
            #[allow(clippy::needless_update)] // a table without `other` fields
            pub(crate) fn load_columns(
                r: &mut SectionReader<'_>,
                len: usize,
            ) -> Result<Self, SnapshotError> {
                Ok(Self {
                    $( $field: SnapshotColumn::load(r, len)?, )*
                    $( $dfield: vec![$ddefault; len], )*
                    ..Self::default()
                })
            }
        }
    };
}

/// [`Tasks::trace_sched_us`] of a task the trace has not scheduled (yet).
pub const NOT_SCHEDULED: i64 = i64::MIN;

/// Lifecycle of a task slot.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskState {
    /// Unused slot, on the free list.
    #[default]
    Free = 0,
    /// Submitted, not on a node.
    Pending = 1,
    /// Placed on a node.
    Running = 2,
}

/// Saved as its `u8` code; an unknown code is a corrupt snapshot.
impl SnapshotColumn for TaskState {
    fn save(col: &[Self], w: &mut SectionWriter) {
        w.column(&col.iter().map(|&s| s as u8).collect::<Vec<u8>>());
    }

    fn load(r: &mut SectionReader<'_>, len: usize) -> Result<Vec<Self>, SnapshotError> {
        codes(r, len, "task state", |s| match s {
            0 => Some(TaskState::Free),
            1 => Some(TaskState::Pending),
            2 => Some(TaskState::Running),
            _ => None,
        })
    }
}

columns! {
    /// Node columns. Capacities and sums in units.
    pub struct Nodes {
        /// Trace machine ID.
        machine_id: u64 = 0,
        /// Part of the cell (ADDed and not REMOVEd).
        online: bool = false,
        /// CPU capacity.
        cpu_cap: u32 = 0,
        /// Memory capacity.
        mem_cap: u32 = 0,
        /// CPU used by the node's tasks.
        cpu_used: u32 = 0,
        /// Memory used by the node's tasks.
        mem_used: u32 = 0,
        /// CPU requested by the node's tasks.
        cpu_req: u32 = 0,
        /// Memory requested by the node's tasks.
        mem_req: u32 = 0,
        /// CPU requested by the node's production tasks.
        prod_cpu_req: u32 = 0,
        /// Memory requested by the node's production tasks.
        prod_mem_req: u32 = 0,
        /// Tasks on the node.
        task_count: u32 = 0,
        /// Allocation class, computed at the end of each tick (`metrics.rs`).
        class: crate::classify::NodeClass = crate::classify::NodeClass::Offline,
    }
    derived {}
    other {
        /// What the greedy fit rule reads of the nodes (`fit_by.rs`; not saved: the run sets it
        /// to its policy's rule each time it opens, [`Cell::set_fit_by`](crate::cell::Cell::set_fit_by)).
        pub(in crate::cell) fit_by: crate::fit_by::FitBy,
        /// Whether a node's measured CPU is its tasks' CPU use throttled at its capacity
        /// (`[usage] cpu_compressible` on a trace without task_usage, `usage_model.rs`; not
        /// saved: the run sets it from its config and trace each time it opens,
        /// [`Cell::set_cpu_throttled`](crate::cell::Cell::set_cpu_throttled)).
        pub(in crate::cell) cpu_throttled: bool,
    }
}

impl Nodes {
    /// What the greedy fit rule reads of the nodes (`fit_by.rs`).
    pub fn fit_by(&self) -> crate::fit_by::FitBy {
        self.fit_by
    }

    /// Node `i`'s CPU as measured: what its tasks use ([`Nodes::cpu_used`], which the placers
    /// read), at most its capacity when CPU is throttled (`[usage] cpu_compressible` on a trace
    /// without task_usage).
    pub fn cpu_measured(&self, i: usize) -> u32 {
        if self.cpu_throttled {
            self.cpu_used[i].min(self.cpu_cap[i])
        } else {
            self.cpu_used[i]
        }
    }
}

#[cfg(test)]
impl Nodes {
    /// Sets node `n`'s columns directly, without tasks: for unit tests of functions that read
    /// only the node columns (online, capacities, usage and production-request sums; all
    /// requests as the usage, so the fit rule reads the same under either `fit_by`).
    pub(crate) fn set_for_test(
        &mut self,
        n: usize,
        online: bool,
        cap: (u32, u32),
        used: (u32, u32),
        prod_req: (u32, u32),
    ) {
        self.online[n] = online;
        (self.cpu_cap[n], self.mem_cap[n]) = cap;
        (self.cpu_used[n], self.mem_used[n]) = used;
        (self.cpu_req[n], self.mem_req[n]) = used;
        (self.prod_cpu_req[n], self.prod_mem_req[n]) = prod_req;
    }

    /// Sets node `n`'s requests of all its tasks (after [`Nodes::set_for_test`]) and what the
    /// fit rule reads.
    pub(crate) fn set_requests_for_test(
        &mut self,
        n: usize,
        req: (u32, u32),
        fit_by: crate::fit_by::FitBy,
    ) {
        (self.cpu_req[n], self.mem_req[n]) = req;
        self.fit_by = fit_by;
    }

    /// Sets whether the nodes' measured CPU is throttled at capacity.
    pub(crate) fn set_cpu_throttled_for_test(&mut self, throttled: bool) {
        self.cpu_throttled = throttled;
    }
}

impl Nodes {
    /// Nodes in the table (online or not).
    pub fn len(&self) -> usize {
        self.machine_id.len()
    }

    /// True when there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.machine_id.is_empty()
    }

    /// Whether node `n` exists and is online.
    pub fn is_online(&self, n: NodeIdx) -> bool {
        self.online.get(n.index()).copied().unwrap_or(false)
    }

    /// What classification needs of node `i` (its CPU as measured, [`Nodes::cpu_measured`]).
    pub fn load(&self, i: usize) -> crate::classify::NodeLoad {
        crate::classify::NodeLoad {
            cpu_cap: self.cpu_cap[i],
            mem_cap: self.mem_cap[i],
            cpu_used: self.cpu_measured(i),
            mem_used: self.mem_used[i],
            prod_cpu_req: self.prod_cpu_req[i],
            prod_mem_req: self.prod_mem_req[i],
            tasks: self.task_count[i],
        }
    }

    /// What node `i`'s tasks want of it: [`Nodes::load`] with its CPU not throttled. What
    /// MASB's node agents relieve (seed 000 section 5.1: a node is overloaded when its tasks
    /// use 0.5599 CPU of its 0.5), as their acceptance and SCS read the tasks' use.
    pub fn load_wanted(&self, i: usize) -> crate::classify::NodeLoad {
        crate::classify::NodeLoad {
            cpu_used: self.cpu_used[i],
            ..self.load(i)
        }
    }

    /// Appends an offline node with no capacity.
    pub fn push(&mut self, machine_id: u64) -> NodeIdx {
        let idx = NodeIdx(self.len() as u32);
        self.push_defaults();
        self.machine_id[idx.index()] = machine_id;
        idx
    }
}

columns! {
    /// Task columns. Requests and usage in units.
    pub struct Tasks {
        /// Trace job ID.
        job_id: u64 = 0,
        /// Task index within the job.
        task_index: u32 = 0,
        /// Priority 0..11.
        priority: u8 = 0,
        /// Priority >= 9.
        production: bool = false,
        /// Scheduling class 0..3 (3: the most latency-sensitive), as the trace gives it; no
        /// sum depends on it.
        scheduling_class: u8 = 0,
        /// Slot state.
        state: TaskState = TaskState::Free,
        /// Node while running, NONE otherwise.
        node: NodeIdx = NodeIdx::NONE,
        /// CPU request.
        cpu_req: u32 = 0,
        /// Memory request.
        mem_req: u32 = 0,
        /// Current usage, and copies of the columns a usage row reads (`cell/usage_slot.rs`;
        /// saved as the three usage columns it replaced).
        usage: UsageSlot = UNUSED,
        /// Time of the latest SUBMIT.
        submit_us: i64 = 0,
        /// Time the current run started (when running).
        start_us: i64 = 0,
        /// End of the tick in which the trace SCHEDULEd the current run, [`NOT_SCHEDULED`]
        /// until then; a policy that replays the workload shifts the run's later events by
        /// `start_us - trace_sched_us` (`replay/deferred.rs`). Moved forward when the run is
        /// displaced by a machine removal, to the trace time it had reached.
        trace_sched_us: i64 = NOT_SCHEDULED,
        /// Recorded run time the current run lost to displacements by machine removals: a
        /// displaced run restarts, so its end comes this much later than its shifted usage rows
        /// (`replay/deferred.rs`), microseconds.
        lost_us: i64 = 0,
        /// Incremented each time the slot is given to a new task, so stale references can be
        /// told apart.
        generation: u32 = 0,
        /// Target of an in-flight migration, NONE otherwise.
        migrating_to: NodeIdx = NodeIdx::NONE,
        /// First entry of the task's constraints in
        /// `Cell::constraints`.
        constraint_start: u32 = 0,
        /// Number of constraints.
        constraint_len: u16 = 0,
    }
    derived {
        /// The set those constraints are
        /// ([`Cell::constraint_set`](crate::cell::Cell::constraint_set); numbered from the rows
        /// when a snapshot is loaded).
        constraint_set: ConstraintSetIdx = ConstraintSetIdx::EMPTY,
    }
    other {
        /// Slots on the free list (saved after the columns).
        pub(crate) free: Vec<TaskIdx>,
    }
}

impl Tasks {
    /// Slots in the table (any state).
    pub fn len(&self) -> usize {
        self.job_id.len()
    }

    /// True when there are no slots.
    pub fn is_empty(&self) -> bool {
        self.job_id.is_empty()
    }

    /// A pending task in a recycled or new slot (every column at its default but the slot's
    /// generation, which counts up).
    pub fn alloc(&mut self, job_id: u64, task_index: u32, priority: u8, submit_us: i64) -> TaskIdx {
        let t = match self.free.pop() {
            Some(t) => t,
            None => {
                self.push_defaults();
                TaskIdx(self.len() as u32 - 1)
            }
        };
        let i = t.index();
        let generation = self.generation[i];
        self.reset_row(i);
        self.generation[i] = generation.wrapping_add(1);
        self.job_id[i] = job_id;
        self.task_index[i] = task_index;
        self.priority[i] = priority;
        self.production[i] = priority >= ingest::codes::PRODUCTION_PRIORITY;
        self.state[i] = TaskState::Pending;
        self.submit_us[i] = submit_us;
        self.mirror(i);
        t
    }

    /// Copies slot `i`'s state, generation, node and migration target, and its run's shift,
    /// into its usage record (`cell/usage_slot.rs`): after every change of those columns.
    #[inline]
    pub(in crate::cell) fn mirror(&mut self, i: usize) {
        self.usage[i] = self.mirrored(i);
    }

    /// Slot `i`'s usage record with the copies of [`Tasks::mirror`] made afresh.
    #[inline]
    pub(in crate::cell) fn mirrored(&self, i: usize) -> UsageSlot {
        UsageSlot {
            state: self.state[i],
            generation: self.generation[i],
            node: self.node[i],
            migrating_to: self.migrating_to[i],
            shift_us: UsageSlot::shift(self.trace_sched_us[i], self.start_us[i]),
            ..self.usage[i]
        }
    }

    /// [`Tasks::mirror`] of every slot: after a snapshot is loaded.
    pub(crate) fn mirror_all(&mut self) {
        for i in 0..self.len() {
            self.mirror(i);
        }
    }

    /// Slots currently in use.
    pub fn live(&self) -> usize {
        self.len() - self.free.len()
    }
}
