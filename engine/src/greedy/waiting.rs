//! The tasks waiting to be placed, in the order they became pending (new, resubmitted, or
//! displaced by a machine removal): the queue every placer that works through pending tasks
//! keeps (the greedy placers, `federation`).
//!
//! Invariants: `waiting` holds each task slot at most once (`queued` marks the slots in it), and
//! between ticks only tasks pending then; a task that ends before the next tick is dropped at
//! its start.

use serde::{Deserialize, Serialize};

use crate::cell::{Cell, TaskState};
use crate::ids::TaskIdx;
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

/// Pending tasks with their slot generations, in queue order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Waiting {
    waiting: Vec<(TaskIdx, u32)>,
    /// Per task slot: in `waiting` (not saved: rebuilt from it).
    #[serde(skip)]
    queued: Vec<bool>,
}

impl Waiting {
    /// Drops the tasks no longer pending in their generation (placed, ended).
    pub fn keep_pending(&mut self, cell: &Cell) {
        let tasks = &cell.tasks;
        self.queued.resize(tasks.len(), false);
        let queued = &mut self.queued;
        self.waiting.retain(|&(t, g)| {
            let keep = tasks.generation()[t.index()] == g
                && tasks.state()[t.index()] == TaskState::Pending;
            queued[t.index()] &= keep;
            keep
        });
    }

    /// Brings the queue up to date with the cell and this tick's `events`; returns where the
    /// tasks that joined it begin.
    pub fn update(&mut self, cell: &Cell, events: &TickEvents) -> usize {
        self.keep_pending(cell);
        let joined = self.waiting.len();
        let tasks = events.submitted.iter().chain(&events.displaced_tasks);
        self.enqueue(cell, tasks.copied());
        joined
    }

    /// Appends `tasks` that are pending and not queued yet, in order (after [`keep_pending`]
    /// this tick: its marks cover every slot).
    ///
    /// [`keep_pending`]: Waiting::keep_pending
    pub fn enqueue(&mut self, cell: &Cell, tasks: impl IntoIterator<Item = TaskIdx>) {
        let (columns, queued) = (&cell.tasks, &mut self.queued);
        for t in tasks {
            let i = t.index();
            if columns.state()[i] == TaskState::Pending && !queued[i] {
                queued[i] = true;
                self.waiting.push((t, columns.generation()[i]));
            }
        }
    }

    /// The queue.
    pub fn tasks(&self) -> &[(TaskIdx, u32)] {
        &self.waiting
    }

    /// Writes the queue for a snapshot.
    pub fn save(&self, w: &mut SectionWriter) {
        w.serde(&self.waiting);
    }

    /// Reads what [`Waiting::save`] wrote.
    pub fn load(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        self.waiting = r.serde()?;
        self.queued.clear();
        for &(t, _) in &self.waiting {
            if self.queued.len() <= t.index() {
                self.queued.resize(t.index() + 1, false);
            }
            self.queued[t.index()] = true;
        }
        Ok(())
    }
}
