//! The tasks waiting to be placed, in the order they became pending (new, resubmitted, or
//! displaced by a machine removal): the queue every placer that works through pending tasks
//! keeps (the greedy placers, `federation`).
//!
//! Invariants: `queued` marks, per task slot, the generation it has in the queue and that
//! entry's index; an entry is *current* while its mark names it, its slot holds its generation
//! and the task is pending, and a slot has at most one current entry. Between ticks the queue
//! holds only current entries, or, for a placer that skips the others (the greedy placers
//! keeping their tasks by need class, `class_queues.rs`), also entries no longer current: a
//! task the pass placed leaves at once ([`Waiting::leave`], its mark cleared, so that it joins
//! again at the end should it wait again), the others go when they outnumber a quarter of the
//! queue ([`Waiting::settle`]: one pass over the queue every few dozen ticks instead of one a
//! tick). Either way the current entries are the same, in the same order.

use serde::{Deserialize, Serialize};

use crate::cell::{Cell, TaskState};
use crate::ids::TaskIdx;
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

/// Pending tasks with their slot generations, in queue order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Waiting {
    waiting: Vec<(TaskIdx, u32)>,
    /// Per task slot: the generation it has in `waiting` and that entry's index, if any (not
    /// saved: rebuilt from it).
    #[serde(skip)]
    queued: Vec<Option<(u32, u32)>>,
    /// At most how many entries are no longer current (not saved: a loaded queue has none).
    #[serde(skip)]
    stale: usize,
    /// Whether a task left since the queue was last settled: an entry no mark names may then
    /// be held (not saved, as `stale`).
    #[serde(skip)]
    left: bool,
}

impl Waiting {
    /// Drops the entries no longer current (tasks placed, ended).
    pub fn keep_pending(&mut self, cell: &Cell) {
        let tasks = &cell.tasks;
        self.queued.resize(tasks.len(), None);
        let queued = &mut self.queued;
        let (mut at, mut kept) = (0u32, 0u32);
        self.waiting.retain(|&(t, g)| {
            let i = t.index();
            let named = queued[i] == Some((g, at));
            at += 1;
            let keep =
                named && tasks.generation()[i] == g && tasks.state()[i] == TaskState::Pending;
            if keep {
                queued[i] = Some((g, kept));
                kept += 1;
            } else if named {
                queued[i] = None;
            }
            keep
        });
        (self.stale, self.left) = (0, false);
    }

    /// Brings the queue up to date with the cell and this tick's `events`; returns where the
    /// tasks that joined it begin.
    pub fn update(&mut self, cell: &Cell, events: &TickEvents) -> usize {
        self.keep_pending(cell);
        self.join(cell, events)
    }

    /// [`Waiting::update`] for a placer that skips the entries no longer current (module doc):
    /// appends this tick's new and displaced tasks without looking at the queue (counting its
    /// ended tasks as possibly stale entries); returns where they begin.
    pub fn join(&mut self, cell: &Cell, events: &TickEvents) -> usize {
        let joined = self.waiting.len();
        self.stale += events.ended.len();
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
            let queued = self.queued[i].is_some_and(|(g, _)| g == generation);
            if columns.state()[i] == TaskState::Pending && !queued {
                self.queued[i] = Some((generation, self.waiting.len() as u32));
                self.waiting.push((t, generation));
            }
        }
    }

    /// Task `t`, placed, leaves the queue (its entry is no longer current).
    pub fn leave(&mut self, t: TaskIdx) {
        if let Some(mark) = self.queued.get_mut(t.index())
            && mark.take().is_some()
        {
            self.stale += 1;
            self.left = true;
        }
    }

    /// Whether the queue may hold an entry its mark no longer names (a task left since it was
    /// last settled): a pass that reads the entries' tasks alone must settle it first.
    pub fn has_left(&self) -> bool {
        self.left
    }

    /// Drops the entries no longer current once they may be a quarter of the queue.
    pub fn settle(&mut self, cell: &Cell) {
        if self.stale > self.waiting.len() / 4 {
            self.keep_pending(cell);
        }
    }

    /// The queue, with (between a [`Waiting::join`] and a [`Waiting::keep_pending`], or for a
    /// placer that [`Waiting::settle`]s) entries no longer current, which a pass skips.
    pub fn tasks(&self) -> &[(TaskIdx, u32)] {
        &self.waiting
    }

    /// The current entries, in queue order.
    pub fn current(&self, cell: &Cell) -> Vec<(TaskIdx, u32)> {
        let tasks = &cell.tasks;
        (self.named().filter(|&(t, g)| {
            tasks.generation()[t.index()] == g && tasks.state()[t.index()] == TaskState::Pending
        }))
        .collect()
    }

    /// The entries their marks name (all but those of tasks placed since the queue was last
    /// settled), in queue order.
    fn named(&self) -> impl Iterator<Item = (TaskIdx, u32)> + '_ {
        let queued = &self.queued;
        (self.waiting.iter().zip(0u32..))
            .filter(move |&(&(t, g), at)| queued.get(t.index()) == Some(&Some((g, at))))
            .map(|(&entry, _)| entry)
    }

    /// Writes the queue for a snapshot: the entries their marks name (a settled queue, as a
    /// placer keeping every entry current has, is written whole).
    pub fn save(&self, w: &mut SectionWriter) {
        w.serde(&self.named().collect::<Vec<_>>());
    }

    /// Reads what [`Waiting::save`] wrote.
    pub fn load(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        self.waiting = r.serde()?;
        self.queued.clear();
        (self.stale, self.left) = (0, false);
        for (&(t, generation), at) in self.waiting.iter().zip(0u32..) {
            if self.queued.len() <= t.index() {
                self.queued.resize(t.index() + 1, None);
            }
            self.queued[t.index()] = Some((generation, at));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random ticks of submissions, ends (slots then reused), placements and displacements: a
    /// queue whose placed tasks leave at once and that settles now and then (and goes through
    /// a snapshot section now and then) holds, as its current entries, exactly the queue of an
    /// independent model that drops every task no longer pending at each tick's end; a task
    /// displaced after a placement joins again at the end; dropping the entries no longer
    /// current leaves the model's queue alone.
    #[test]
    fn a_settling_queue_holds_what_dropping_at_every_tick_holds() {
        let mut r = ingest::rng::Rng::new(3, 0);
        for case in 0..40 {
            let mut cell = Cell::default();
            let node = cell.add_machine(1, u32::MAX / 2, u32::MAX / 2);
            let (mut waiting, mut model) = (Waiting::default(), Vec::<(TaskIdx, u32)>::new());
            let mut next_index = 0;
            for tick in 0..60 {
                let mut events = TickEvents::default();
                let live: Vec<TaskIdx> = (0..cell.tasks.len() as u32)
                    .map(TaskIdx)
                    .filter(|t| cell.tasks.state()[t.index()] != TaskState::Free)
                    .collect();
                for &t in &live {
                    match (cell.tasks.state()[t.index()], r.below(10)) {
                        (_, 0) => {
                            events.ended.push(crate::replay::EndedTask::of(&cell, t, 0));
                            cell.end(t);
                        }
                        (TaskState::Running, 1..=3) => {
                            cell.unplace(t);
                            events.displaced_tasks.push(t);
                        }
                        _ => {}
                    }
                }
                for _ in 0..r.below(6) {
                    next_index += 1;
                    events.submitted.push(cell.tasks.alloc(1, next_index, 0, 0));
                }
                // Now and then a task is submitted twice in a tick.
                if let Some(&t) = events.submitted.first().filter(|_| r.below(4) == 0) {
                    events.submitted.push(t);
                }
                waiting.join(&cell, &events);
                let tasks = events.submitted.iter().chain(&events.displaced_tasks);
                for &t in tasks {
                    let entry = (t, cell.tasks.generation()[t.index()]);
                    let pending = cell.tasks.state()[t.index()] == TaskState::Pending;
                    if pending && !model.contains(&entry) {
                        model.push(entry);
                    }
                }
                // The pass places some of the waiting tasks.
                for (t, _) in waiting.current(&cell) {
                    if r.below(3) == 0 {
                        cell.place(t, node, tick);
                        waiting.leave(t);
                    }
                }
                waiting.settle(&cell);
                model.retain(|&(t, g)| {
                    cell.tasks.generation()[t.index()] == g
                        && cell.tasks.state()[t.index()] == TaskState::Pending
                });
                assert_eq!(waiting.current(&cell), model, "case {case}, tick {tick}");
                if tick % 7 == 0 {
                    waiting.keep_pending(&cell);
                    assert_eq!(waiting.tasks(), model, "kept: case {case}, tick {tick}");
                }
                if r.below(10) == 0 {
                    let dir = tempfile::tempdir().unwrap();
                    let path = dir.path().join("s");
                    let mut w = crate::snapshot::SnapshotWriter::create(&path, &["q"]).unwrap();
                    waiting.save(w.section("q"));
                    let header = crate::snapshot::Header {
                        tick: 0,
                        config_hash: 0,
                        trace_hash: 0,
                        run_id: 0,
                    };
                    w.finish(header).unwrap();
                    let snap = crate::snapshot::Snapshot::open(&path).unwrap();
                    let mut loaded = Waiting::default();
                    loaded.load(&mut snap.section("q").unwrap()).unwrap();
                    assert_eq!(loaded.current(&cell), model);
                    waiting = loaded;
                }
            }
        }
    }
}
