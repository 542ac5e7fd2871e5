//! The tasks waiting to be placed, in the order they became pending (new, resubmitted, or
//! displaced by a machine removal): the queue every placer that works through pending tasks
//! keeps (the greedy placers, `federation`).
//!
//! Invariants: `waiting` holds each task slot's generation at most once (`queued` marks the
//! generation each slot has in it), and between ticks only tasks pending then; a task that ends
//! before the next tick is dropped at its start ([`Waiting::update`]), or, for a placer that
//! skips entries whose slot no longer holds their generation or is not pending, at its end
//! ([`Waiting::join`]: one pass over the queue a tick instead of two).

use serde::{Deserialize, Serialize};

use crate::cell::{Cell, TaskState};
use crate::ids::TaskIdx;
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

/// Pending tasks with their slot generations, in queue order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Waiting {
    waiting: Vec<(TaskIdx, u32)>,
    /// Per task slot: the generation it has in `waiting`, if any (not saved: rebuilt from it).
    #[serde(skip)]
    queued: Vec<Option<u32>>,
}

impl Waiting {
    /// Drops the tasks no longer pending in their generation (placed, ended).
    pub fn keep_pending(&mut self, cell: &Cell) {
        let tasks = &cell.tasks;
        self.queued.resize(tasks.len(), None);
        let queued = &mut self.queued;
        self.waiting.retain(|&(t, g)| {
            let keep = tasks.generation()[t.index()] == g
                && tasks.state()[t.index()] == TaskState::Pending;
            if !keep && queued[t.index()] == Some(g) {
                queued[t.index()] = None;
            }
            keep
        });
    }

    /// Brings the queue up to date with the cell and this tick's `events`; returns where the
    /// tasks that joined it begin.
    pub fn update(&mut self, cell: &Cell, events: &TickEvents) -> usize {
        self.keep_pending(cell);
        self.join(cell, events)
    }

    /// [`Waiting::update`] for a placer that ended its last tick with
    /// [`Waiting::keep_pending`] and skips the entries no longer current (module doc): appends
    /// this tick's new and displaced tasks without looking at the queue; returns where they
    /// begin.
    pub fn join(&mut self, cell: &Cell, events: &TickEvents) -> usize {
        let joined = self.waiting.len();
        let tasks = events.submitted.iter().chain(&events.displaced_tasks);
        self.enqueue(cell, tasks.copied());
        joined
    }

    /// Appends `tasks` that are pending and not queued yet in their generation, in order.
    pub fn enqueue(&mut self, cell: &Cell, tasks: impl IntoIterator<Item = TaskIdx>) {
        let columns = &cell.tasks;
        self.queued.resize(columns.len(), None);
        for t in tasks {
            let (i, generation) = (t.index(), columns.generation()[t.index()]);
            if columns.state()[i] == TaskState::Pending && self.queued[i] != Some(generation) {
                self.queued[i] = Some(generation);
                self.waiting.push((t, generation));
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
        for &(t, generation) in &self.waiting {
            if self.queued.len() <= t.index() {
                self.queued.resize(t.index() + 1, None);
            }
            self.queued[t.index()] = Some(generation);
        }
        Ok(())
    }
}
