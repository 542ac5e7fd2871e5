//! Policy `python`: a scheduler that decides outside the engine, tick by tick, in a batch (a
//! Python class run through the Python package, `python/`; issue 61).
//!
//! Each tick, after the trace's events, the policy lists the waiting tasks in the order they
//! became pending (new, resubmitted, or displaced by a machine removal: `greedy::waiting`, the
//! queue every placer keeps) and asks its [`Decider`] for a node per task (or none) and,
//! optionally, migrations and evictions. The engine checks each decision against its own
//! invariants as it applies it (`decisions.rs`): a wrong one stops the run with an error naming
//! the task, and so does a decider's own error. Placed tasks run their recorded time from the
//! tick's end, as under every policy that replays the workload (`replay/deferred.rs`); a
//! migration moves a running task at once (its run goes on); an evicted task waits again, at
//! the queue's end, from the next tick, and its run restarts when placed (as a task displaced by
//! a machine removal). The `tasks/` and `jobs/` tables are the greedy
//! placers' (`queue_outputs.rs`), so a decider that places as first-fit does writes first-fit's
//! outputs.
//!
//! Snapshots hold the queue, the open jobs and the decider's own state ([`Decider::state`]), so
//! a run resumes byte-identically when the decider is deterministic given its state, the tick
//! and the run's seed. A MapReduce trace's reduce tasks are refused (the policy does not hold
//! them back), as for every policy that does not.

pub mod decisions;
pub mod host;

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

pub use host::{Decider, Decisions, TickView, has_decider, no_host, with_decider};

use crate::cell::Cell;
use crate::error::EngineError;
use crate::greedy::waiting::Waiting;
use crate::ids::{TaskIdx, Tick};
use crate::policy::{
    Envelope, Policy, PolicyCounters, PolicySpec, RunSettings, TableRows, TableSpec,
};
use crate::queue_outputs::QueueOutputs;
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

/// The settings of policy `python`: which class decides (recorded so the run's config names
/// it; the host program gives the object, [`with_decider`]).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PythonConfig {
    /// The deciding class, `module.Class`.
    #[serde(default)]
    pub class: String,
}

impl PolicySpec for PythonConfig {
    type Policy = Hosted;

    const ABOUT: &'static str = "a scheduler written in Python: runs from the Python package (cellsim.run(trace, policy=MyPolicy()))";

    fn build(&self, run: &RunSettings, trace_dir: &std::path::Path) -> crate::Result<Hosted> {
        let decider = host::take().ok_or_else(|| EngineError::Config {
            path: "policy".into(),
            problem: no_host(&self.class),
        })?;
        Ok(Hosted {
            decider,
            seed: run.seed,
            waiting: Waiting::default(),
            outputs: QueueOutputs::of_run(run, trace_dir)?,
            listed: Vec::new(),
            failure: Mutex::new(None),
        })
    }
}

/// The `python` policy: its queue, outputs and decider.
pub struct Hosted {
    decider: Box<dyn Decider>,
    seed: u64,
    /// Pending tasks, in the order they became pending.
    waiting: Waiting,
    /// The `tasks/` and `jobs/` tables.
    outputs: QueueOutputs,
    /// The waiting tasks shown to the decider this tick (scratch).
    listed: Vec<TaskIdx>,
    /// What stopped the decider: its error, a wrong decision, or its state failing to save
    /// (set by `save_state`, which cannot fail itself).
    failure: Mutex<Option<String>>,
}

impl Hosted {
    fn fail(&self, problem: String) {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(problem);
    }
}

impl Policy for Hosted {
    type Msg = ();
    type Agent = ();
    type Action = ();

    fn name(&self) -> &'static str {
        "python"
    }

    fn begin_tick(
        &mut self,
        cell: &mut Cell,
        (tick, now_us): (Tick, i64),
        events: &TickEvents,
        _agents: &mut Vec<()>,
        _inject: &mut Vec<Envelope<()>>,
        _counters: &mut PolicyCounters,
    ) {
        self.waiting.update(cell, events);
        self.outputs.record(cell, events);
        self.listed.clear();
        (self.listed).extend(self.waiting.tasks().iter().map(|&(t, _)| t));
        let view = TickView {
            cell,
            tick,
            now_us,
            seed: self.seed,
            waiting: &self.listed,
        };
        let decided = self.decider.decide(&view);
        let evicted = decided.and_then(|d| {
            decisions::apply(cell, (&self.listed, now_us), &d)?;
            Ok(d.evictions)
        });
        self.waiting.keep_pending(cell);
        match evicted {
            Ok(slots) => (self.waiting).enqueue(cell, slots.iter().map(|&s| TaskIdx(s as u32))),
            Err(problem) => self.fail(problem),
        }
    }

    fn take_failure(&mut self) -> Option<String> {
        let failure = self.failure.get_mut().unwrap_or_else(|e| e.into_inner());
        failure.take()
    }

    fn tables(&self) -> &'static [TableSpec] {
        &crate::queue_outputs::TABLES
    }

    fn take_rows(&mut self, out: &mut TableRows) {
        self.outputs.take_rows(out);
    }

    fn save_state(&self, w: &mut SectionWriter) {
        self.waiting.save(w);
        self.outputs.save_state(w);
        let state = self.decider.state();
        if let Err(problem) = &state {
            self.fail(format!("saving its state for a snapshot: {problem}"));
        }
        w.serde(&state);
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        self.waiting.load(r)?;
        self.outputs.load_state(r)?;
        let state: Result<Vec<u8>, String> = r.serde()?;
        let state = state.map_err(|problem| {
            r.corrupt(format!("the policy's state could not be saved: {problem}"))
        })?;
        (self.decider.load(&state))
            .map_err(|problem| r.corrupt(format!("restoring the policy's state: {problem}")))
    }
}
