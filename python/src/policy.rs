//! A scheduler written in Python as the engine's [`Decider`] (policy `python`,
//! `engine/src/hosted/`): each tick the waiting tasks' and the nodes' columns go to
//! `cellsim.policy._decide` as bytes (one copy per column; numpy views them without another),
//! which calls the object's `schedule` and gives back a node per task, the migrations and the
//! evictions.
//!
//! The cell is borrowed only for the call, so what `schedule` may ask for beyond the columns
//! (the nodes meeting a task's constraints, the running tasks) goes through [`TickAccess`],
//! which refuses once the tick is over. An exception in the Python code fails the run; it is
//! kept ([`Raised`]) and raised as itself once the command has ended.

use std::sync::{Arc, Mutex};

use engine::cell::{Cell, TaskState, Tasks, UsageSlot};
use engine::greedy::fit::charged;
use engine::hosted::{Decider, Decisions, TickView};
use engine::ids::{NodeIdx, TaskIdx};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// The first Python exception a decider met, raised by the command once it has ended.
pub type Raised = Arc<Mutex<Option<PyErr>>>;

/// A Python policy object and the module functions that drive it.
pub struct PyDecider {
    policy: Py<PyAny>,
    raised: Raised,
}

impl PyDecider {
    /// Drives `policy` (an object with `schedule(tick)`); its exceptions go to `raised`.
    pub fn new(policy: Py<PyAny>, raised: Raised) -> PyDecider {
        PyDecider { policy, raised }
    }

    /// `what` failed with `err`: kept for the caller, told to the engine as text.
    fn failed(&self, py: Python<'_>, what: &str, err: PyErr) -> String {
        let text = format!(
            "{what} raised {}",
            err.value(py)
                .repr()
                .map_or_else(|_| "an exception".to_string(), |r| r.to_string(),)
        );
        let mut raised = self.raised.lock().unwrap_or_else(|e| e.into_inner());
        raised.get_or_insert(err);
        text
    }

    /// `cellsim.policy.<name>`, a function taking the policy object first.
    fn function<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        py.import("cellsim.policy")?.getattr(name)
    }
}

/// One column as bytes, with its numpy dtype.
fn column<'py, T: bytemuck::Pod>(
    py: Python<'py>,
    dtype: &'static str,
    values: &[T],
) -> (&'static str, Bound<'py, PyBytes>) {
    (dtype, PyBytes::new(py, bytemuck::cast_slice(values)))
}

/// `columns` as a dict name -> (dtype, bytes).
fn columns<'py>(
    py: Python<'py>,
    columns: Vec<(&'static str, (&'static str, Bound<'py, PyBytes>))>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, value) in columns {
        dict.set_item(name, value)?;
    }
    Ok(dict)
}

/// An amount of `of`'s usage records (`UsageSlot::cpu` or `mem`), in `of`'s order.
fn used_by(tasks: &Tasks, of: &[TaskIdx], amount: fn(&UsageSlot) -> u32) -> Vec<u32> {
    (of.iter())
        .map(|t| amount(&tasks.usage()[t.index()]))
        .collect()
}

/// The waiting tasks' columns, in queue order.
fn task_columns<'py>(
    py: Python<'py>,
    cell: &Cell,
    waiting: &[TaskIdx],
) -> PyResult<Bound<'py, PyDict>> {
    let tasks = &cell.tasks;
    let of = |col: &[u32]| waiting.iter().map(|t| col[t.index()]).collect::<Vec<u32>>();
    let usage = cell.nodes.fit_by() == engine::fit_by::FitBy::Usage;
    let used = |amount| used_by(tasks, waiting, amount);
    let (cpu, mem) = match usage {
        true => (used(UsageSlot::cpu), used(UsageSlot::mem)),
        false => (of(tasks.cpu_req()), of(tasks.mem_req())),
    };
    let job: Vec<u64> = waiting.iter().map(|t| tasks.job_id()[t.index()]).collect();
    let submit: Vec<i64> = waiting
        .iter()
        .map(|t| tasks.submit_us()[t.index()])
        .collect();
    let priority: Vec<u8> = waiting
        .iter()
        .map(|t| tasks.priority()[t.index()])
        .collect();
    let production: Vec<u8> = waiting
        .iter()
        .map(|t| tasks.production()[t.index()] as u8)
        .collect();
    let class: Vec<u8> = (waiting.iter())
        .map(|t| tasks.scheduling_class()[t.index()])
        .collect();
    let set: Vec<u32> = waiting.iter().map(|&t| cell.constraint_set(t).0).collect();
    let slot: Vec<u32> = waiting.iter().map(|t| t.0).collect();
    columns(
        py,
        vec![
            ("task", column(py, "u4", &slot)),
            ("job_id", column(py, "u8", &job)),
            ("task_index", column(py, "u4", &of(tasks.task_index()))),
            ("submit_us", column(py, "i8", &submit)),
            ("priority", column(py, "u1", &priority)),
            ("production", column(py, "bool", &production)),
            ("scheduling_class", column(py, "u1", &class)),
            ("cpu", column(py, "u4", &cpu)),
            ("mem", column(py, "u4", &mem)),
            ("cpu_req", column(py, "u4", &of(tasks.cpu_req()))),
            ("mem_req", column(py, "u4", &of(tasks.mem_req()))),
            ("constraint_set", column(py, "u4", &set)),
        ],
    )
}

/// The nodes' columns, by node index.
fn node_columns<'py>(py: Python<'py>, cell: &Cell) -> PyResult<Bound<'py, PyDict>> {
    let nodes = &cell.nodes;
    let (cpu, mem): (Vec<u32>, Vec<u32>) = (0..nodes.len()).map(|n| charged(nodes, n)).unzip();
    let online: Vec<u8> = nodes.online().iter().map(|&o| o as u8).collect();
    columns(
        py,
        vec![
            ("machine_id", column(py, "u8", nodes.machine_id())),
            ("online", column(py, "bool", &online)),
            ("cpu_cap", column(py, "u4", nodes.cpu_cap())),
            ("mem_cap", column(py, "u4", nodes.mem_cap())),
            ("cpu", column(py, "u4", &cpu)),
            ("mem", column(py, "u4", &mem)),
            ("cpu_req", column(py, "u4", nodes.cpu_req())),
            ("mem_req", column(py, "u4", nodes.mem_req())),
            ("cpu_used", column(py, "u4", nodes.cpu_used())),
            ("mem_used", column(py, "u4", nodes.mem_used())),
            ("prod_cpu_req", column(py, "u4", nodes.prod_cpu_req())),
            ("prod_mem_req", column(py, "u4", nodes.prod_mem_req())),
            ("task_count", column(py, "u4", nodes.task_count())),
        ],
    )
}

/// Integers from `bytes` (native-endian `int64`, as numpy's `tobytes` writes them).
fn int64s(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks_exact(8)
        .map(|b| i64::from_ne_bytes(b.try_into().expect("8 bytes")))
        .collect()
}

impl Decider for PyDecider {
    fn decide(&mut self, view: &TickView<'_>) -> Result<Decisions, String> {
        Python::attach(|py| {
            let answer = (|| -> PyResult<(Vec<i64>, Vec<i64>, Vec<i64>)> {
                let access = Bound::new(py, TickAccess::new(view))?;
                let args = (
                    self.policy.bind(py),
                    view.tick.0,
                    view.now_us,
                    view.seed,
                    view.cell.nodes.fit_by().name(),
                    view.cell.attributes_epoch(),
                    task_columns(py, view.cell, view.waiting)?,
                    node_columns(py, view.cell)?,
                    access.clone(),
                );
                let result = self.function(py, "_decide").and_then(|f| f.call1(args));
                access.borrow_mut().close();
                let (nodes, migrations, evictions): (Vec<u8>, Vec<u8>, Vec<u8>) =
                    result?.extract()?;
                Ok((int64s(&nodes), int64s(&migrations), int64s(&evictions)))
            })();
            let (nodes, migrations, evictions) =
                answer.map_err(|e| self.failed(py, "schedule()", e))?;
            let migrations = migrations.chunks_exact(2).map(|m| (m[0], m[1])).collect();
            Ok(Decisions {
                nodes,
                migrations,
                evictions,
            })
        })
    }

    fn state(&self) -> Result<Vec<u8>, String> {
        Python::attach(|py| {
            let state = (self.function(py, "_state"))
                .and_then(|f| f.call1((self.policy.bind(py),)))
                .and_then(|s| s.extract::<Vec<u8>>());
            state.map_err(|e| self.failed(py, "state()", e))
        })
    }

    fn load(&mut self, state: &[u8]) -> Result<(), String> {
        Python::attach(|py| {
            let loaded = (self.function(py, "_load"))
                .and_then(|f| f.call1((self.policy.bind(py), PyBytes::new(py, state))));
            loaded.map(drop).map_err(|e| self.failed(py, "load()", e))
        })
    }
}

/// What `schedule` may ask of the cell during its tick (`Tick.meets`, `Tick.running` in
/// `cellsim/policy.py`). Holds the borrowed cell and waiting list as addresses, cleared when
/// the tick's call returns: every method checks first, so a tick kept past its call raises
/// instead of reading freed memory. Methods run holding the GIL, as `close` does, so none runs
/// while the call's thread closes the access, even from another Python thread (the package is
/// built for CPython with a GIL: abi3).
#[pyclass]
pub struct TickAccess {
    /// The cell's address, 0 once closed.
    cell: usize,
    /// The waiting tasks' address and length.
    waiting: (usize, usize),
}

impl TickAccess {
    fn new(view: &TickView<'_>) -> TickAccess {
        TickAccess {
            cell: view.cell as *const Cell as usize,
            waiting: (view.waiting.as_ptr() as usize, view.waiting.len()),
        }
    }

    fn close(&mut self) {
        (self.cell, self.waiting) = (0, (0, 0));
    }

    /// The cell and the waiting tasks while the tick's call runs.
    #[allow(unsafe_code)]
    fn open(&self) -> PyResult<(&Cell, &[TaskIdx])> {
        if self.cell == 0 {
            return Err(PyRuntimeError::new_err(
                "this tick is over: its cell can only be read while schedule() runs",
            ));
        }
        let (waiting, len) = self.waiting;
        // SAFETY: not closed, so the decider's call that set both addresses is still running
        // (`close` clears them before it returns), and the engine holds the cell and the
        // waiting list borrowed, unchanged, for that call.
        Ok(unsafe {
            (
                &*(self.cell as *const Cell),
                std::slice::from_raw_parts(waiting as *const TaskIdx, len),
            )
        })
    }
}

#[pymethods]
impl TickAccess {
    /// Whether each node meets the constraints of waiting task `position`, as bytes of bools.
    fn meets<'py>(&self, py: Python<'py>, position: usize) -> PyResult<Bound<'py, PyBytes>> {
        let (cell, waiting) = self.open()?;
        let t = *waiting.get(position).ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!(
                "waiting task {position}: the tick has {} waiting tasks",
                waiting.len()
            ))
        })?;
        let constraints = cell.constraints_of(t);
        let meets: Vec<u8> = (0..cell.nodes.len())
            .map(|n| cell.meets(NodeIdx(n as u32), constraints) as u8)
            .collect();
        Ok(PyBytes::new(py, &meets))
    }

    /// The running tasks' columns (task slot, node, job, index, requests, usage, production,
    /// scheduling class).
    fn running<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (cell, _) = self.open()?;
        let tasks = &cell.tasks;
        let running: Vec<TaskIdx> = (0..tasks.len())
            .filter(|&i| tasks.state()[i] == TaskState::Running)
            .map(|i| TaskIdx(i as u32))
            .collect();
        let slot: Vec<u32> = running.iter().map(|t| t.0).collect();
        let of = |col: &[u32]| running.iter().map(|t| col[t.index()]).collect::<Vec<u32>>();
        let used = |amount| used_by(tasks, &running, amount);
        let node: Vec<u32> = running.iter().map(|t| tasks.node()[t.index()].0).collect();
        let job: Vec<u64> = running.iter().map(|t| tasks.job_id()[t.index()]).collect();
        let production: Vec<u8> = running
            .iter()
            .map(|t| tasks.production()[t.index()] as u8)
            .collect();
        let class: Vec<u8> = (running.iter())
            .map(|t| tasks.scheduling_class()[t.index()])
            .collect();
        columns(
            py,
            vec![
                ("task", column(py, "u4", &slot)),
                ("node", column(py, "u4", &node)),
                ("job_id", column(py, "u8", &job)),
                ("task_index", column(py, "u4", &of(tasks.task_index()))),
                ("cpu_req", column(py, "u4", &of(tasks.cpu_req()))),
                ("mem_req", column(py, "u4", &of(tasks.mem_req()))),
                ("cpu_use", column(py, "u4", &used(UsageSlot::cpu))),
                ("mem_use", column(py, "u4", &used(UsageSlot::mem))),
                ("production", column(py, "bool", &production)),
                ("scheduling_class", column(py, "u1", &class)),
            ],
        )
    }
}
