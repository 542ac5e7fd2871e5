//! The node and task tables as columns (struct-of-arrays), and task slots' recycling through a
//! free list. The invariants that tie them together, and all mutation that keeps node sums
//! right, are [`Cell`](super::Cell)'s.

use crate::ids::{ConstraintSetIdx, NodeIdx, TaskIdx};

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

/// Node columns. Capacities and sums in units.
#[derive(Debug, Default, Clone)]
pub struct Nodes {
    /// Trace machine ID.
    pub machine_id: Vec<u64>,
    /// Part of the cell (ADDed and not REMOVEd).
    pub online: Vec<bool>,
    /// CPU capacity.
    pub cpu_cap: Vec<u32>,
    /// Memory capacity.
    pub mem_cap: Vec<u32>,
    /// CPU used by the node's tasks.
    pub cpu_used: Vec<u32>,
    /// Memory used by the node's tasks.
    pub mem_used: Vec<u32>,
    /// CPU requested by the node's tasks.
    pub cpu_req: Vec<u32>,
    /// Memory requested by the node's tasks.
    pub mem_req: Vec<u32>,
    /// CPU requested by the node's production tasks.
    pub prod_cpu_req: Vec<u32>,
    /// Memory requested by the node's production tasks.
    pub prod_mem_req: Vec<u32>,
    /// Tasks on the node.
    pub task_count: Vec<u32>,
    /// Allocation class, computed at the end of each tick (`metrics.rs`).
    pub class: Vec<crate::classify::NodeClass>,
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

    /// What classification needs of node `i`.
    pub fn load(&self, i: usize) -> crate::classify::NodeLoad {
        crate::classify::NodeLoad {
            cpu_cap: self.cpu_cap[i],
            mem_cap: self.mem_cap[i],
            cpu_used: self.cpu_used[i],
            mem_used: self.mem_used[i],
            prod_cpu_req: self.prod_cpu_req[i],
            prod_mem_req: self.prod_mem_req[i],
            tasks: self.task_count[i],
        }
    }

    /// Appends an offline node with no capacity.
    pub fn push(&mut self, machine_id: u64) -> NodeIdx {
        let idx = NodeIdx(self.len() as u32);
        self.machine_id.push(machine_id);
        self.online.push(false);
        self.class.push(crate::classify::NodeClass::Offline);
        for col in [
            &mut self.cpu_cap,
            &mut self.mem_cap,
            &mut self.cpu_used,
            &mut self.mem_used,
            &mut self.cpu_req,
            &mut self.mem_req,
            &mut self.prod_cpu_req,
            &mut self.prod_mem_req,
            &mut self.task_count,
        ] {
            col.push(0);
        }
        idx
    }
}

/// Task columns. Requests and usage in units.
#[derive(Debug, Default, Clone)]
pub struct Tasks {
    /// Trace job ID.
    pub job_id: Vec<u64>,
    /// Task index within the job.
    pub task_index: Vec<u32>,
    /// Priority 0..11.
    pub priority: Vec<u8>,
    /// Priority >= 9.
    pub production: Vec<bool>,
    /// Slot state.
    pub state: Vec<TaskState>,
    /// Node while running, NONE otherwise.
    pub node: Vec<NodeIdx>,
    /// CPU request.
    pub cpu_req: Vec<u32>,
    /// Memory request.
    pub mem_req: Vec<u32>,
    /// Current CPU usage.
    pub cpu_use: Vec<u32>,
    /// Current memory usage.
    pub mem_use: Vec<u32>,
    /// Usage is the request (no task_usage sample applies yet).
    pub use_is_request: Vec<bool>,
    /// End of the usage sample in force (the usage-series cursor), microseconds.
    pub use_until_us: Vec<i64>,
    /// Time of the latest SUBMIT.
    pub submit_us: Vec<i64>,
    /// Time the current run started (when running).
    pub start_us: Vec<i64>,
    /// End of the tick in which the trace SCHEDULEd the current run, [`NOT_SCHEDULED`] until
    /// then; a policy that replays the workload shifts the run's later events by
    /// `start_us - trace_sched_us` (`replay/deferred.rs`).
    pub trace_sched_us: Vec<i64>,
    /// Incremented each time the slot is given to a new task, so stale references can be told
    /// apart.
    pub generation: Vec<u32>,
    /// Target of an in-flight migration, NONE otherwise.
    pub migrating_to: Vec<NodeIdx>,
    /// First entry of the task's constraints in [`Cell::constraints`](crate::cell::Cell::constraints).
    pub constraint_start: Vec<u32>,
    /// Number of constraints.
    pub constraint_len: Vec<u16>,
    /// The set those constraints are ([`Cell::constraint_set`](crate::cell::Cell::constraint_set);
    /// derived from the rows: not saved).
    pub constraint_set: Vec<ConstraintSetIdx>,
    pub(crate) free: Vec<TaskIdx>,
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

    /// A pending task in a recycled or new slot.
    pub fn alloc(&mut self, job_id: u64, task_index: u32, priority: u8, submit_us: i64) -> TaskIdx {
        let t = match self.free.pop() {
            Some(t) => t,
            None => {
                let t = TaskIdx(self.len() as u32);
                self.job_id.push(0);
                self.task_index.push(0);
                self.priority.push(0);
                self.production.push(false);
                self.state.push(TaskState::Free);
                self.node.push(NodeIdx::NONE);
                self.cpu_req.push(0);
                self.mem_req.push(0);
                self.cpu_use.push(0);
                self.mem_use.push(0);
                self.use_is_request.push(true);
                self.use_until_us.push(0);
                self.submit_us.push(0);
                self.start_us.push(0);
                self.trace_sched_us.push(NOT_SCHEDULED);
                self.generation.push(0);
                self.migrating_to.push(NodeIdx::NONE);
                self.constraint_start.push(0);
                self.constraint_len.push(0);
                self.constraint_set.push(ConstraintSetIdx::EMPTY);
                t
            }
        };
        let i = t.index();
        self.job_id[i] = job_id;
        self.task_index[i] = task_index;
        self.priority[i] = priority;
        self.production[i] = priority >= ingest::codes::PRODUCTION_PRIORITY;
        self.state[i] = TaskState::Pending;
        self.node[i] = NodeIdx::NONE;
        self.cpu_req[i] = 0;
        self.mem_req[i] = 0;
        self.cpu_use[i] = 0;
        self.mem_use[i] = 0;
        self.use_is_request[i] = true;
        self.use_until_us[i] = 0;
        self.submit_us[i] = submit_us;
        self.start_us[i] = 0;
        self.trace_sched_us[i] = NOT_SCHEDULED;
        self.generation[i] = self.generation[i].wrapping_add(1);
        self.migrating_to[i] = NodeIdx::NONE;
        self.constraint_start[i] = 0;
        self.constraint_len[i] = 0;
        self.constraint_set[i] = ConstraintSetIdx::EMPTY;
        t
    }

    /// Slots currently in use.
    pub fn live(&self) -> usize {
        self.len() - self.free.len()
    }
}
