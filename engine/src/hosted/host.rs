//! What decides for a hosted policy ([`Decider`]), and how a host program hands one to the run
//! it starts ([`with_decider`]).
//!
//! The engine cannot build a decider from a config (a Python object lives in the Python
//! process that runs cellsim in-process): the host puts it in this thread's slot, then starts
//! the command on the same thread; building the policy takes it out. A run configured with
//! `kind = "python"` and no decider in the slot (the command line) fails with a message saying
//! where such a policy runs.
//!
//! Invariant: the slot holds a decider only while [`with_decider`] runs, so one host's decider
//! never reaches a run another thread started.

use std::cell::RefCell;

use crate::cell::Cell;
use crate::ids::{TaskIdx, Tick};

/// What a decider sees of a tick: the cell after the tick's trace events, and the tasks waiting
/// to be placed, in the order they became pending (`greedy::waiting`).
pub struct TickView<'a> {
    /// The cell, read only.
    pub cell: &'a Cell,
    /// The tick.
    pub tick: Tick,
    /// Simulated time at the tick's end, microseconds (when its placements start).
    pub now_us: i64,
    /// The run's seed.
    pub seed: u64,
    /// The waiting tasks, each pending.
    pub waiting: &'a [TaskIdx],
}

/// A decider's answer for one tick.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decisions {
    /// Per waiting task (by position in [`TickView::waiting`]): the node index to place it on,
    /// or -1 to leave it waiting.
    pub nodes: Vec<i64>,
    /// Running tasks (by task slot) to move at once to a node (by index), in order.
    pub migrations: Vec<(i64, i64)>,
    /// Running tasks (by task slot) to take off their nodes before the placements, in order:
    /// each waits again, at the queue's end, as a task displaced by a machine removal does.
    pub evictions: Vec<i64>,
}

/// A scheduler that decides outside the engine (a Python class, `python/src/policy.rs`). The
/// engine checks every decision (`decisions.rs`) before it changes the cell.
pub trait Decider: Send + Sync {
    /// The decisions for `view`'s tick; an error stops the run, naming the tick.
    fn decide(&mut self, view: &TickView<'_>) -> Result<Decisions, String>;
    /// The decider's state, for a snapshot.
    fn state(&self) -> Result<Vec<u8>, String>;
    /// Restores what [`Decider::state`] gave.
    fn load(&mut self, state: &[u8]) -> Result<(), String>;
}

thread_local! {
    static SLOT: RefCell<Option<Box<dyn Decider>>> = const { RefCell::new(None) };
}

/// Runs `f` (which starts a run with a `python` policy on this thread) with `decider` in this
/// thread's slot; the slot is empty again afterwards, whether or not a run took it.
pub fn with_decider<R>(decider: Box<dyn Decider>, f: impl FnOnce() -> R) -> R {
    /// Empties the slot when `f` returns or unwinds.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            SLOT.with(|slot| slot.borrow_mut().take());
        }
    }
    SLOT.with(|slot| *slot.borrow_mut() = Some(decider));
    let _clear = Clear;
    f()
}

/// Takes the decider the host put in this thread's slot.
pub(super) fn take() -> Option<Box<dyn Decider>> {
    SLOT.with(|slot| slot.borrow_mut().take())
}

/// Whether a host put a decider in this thread's slot (a command checks it before it makes
/// anything for a `python` run).
pub fn has_decider() -> bool {
    SLOT.with(|slot| slot.borrow().is_some())
}

/// Why a `python` policy of class `class` cannot run without a host.
pub fn no_host(class: &str) -> String {
    format!(
        "kind = \"python\" (class {class:?}) runs only from the Python package, which gives the object that decides: cellsim.run(trace, policy=MyPolicy()) or cellsim.resume(run_dir, policy=MyPolicy())"
    )
}

/// A decider that leaves every task waiting and has no state (tests).
#[cfg(test)]
pub(crate) struct LeaveWaiting;

#[cfg(test)]
impl Decider for LeaveWaiting {
    fn decide(&mut self, view: &TickView<'_>) -> Result<Decisions, String> {
        Ok(Decisions {
            nodes: vec![-1; view.waiting.len()],
            ..Decisions::default()
        })
    }

    fn state(&self) -> Result<Vec<u8>, String> {
        Ok(Vec::new())
    }

    fn load(&mut self, _: &[u8]) -> Result<(), String> {
        Ok(())
    }
}
