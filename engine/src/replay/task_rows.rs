//! The replay's task event rows, read ahead. A tick's rows are read
//! ([`TaskEventRows::read_before`]: decoded and expanded to their scaled task instances, then
//! each instance's task looked up in the ID map, spread over the threads) on the other side of
//! a join while the deferred events and the machine tables apply, which neither read nor change
//! the ID map; then [`Replay::apply_task_rows`] applies them in order.
//! Only with deferred events pending (workload mode, after its first tick): without them there
//! is nothing to overlap the reading with, and the rows are read and applied in one pass
//! (`Replay::apply_task_events`), as borg-replay always does.
//!
//! Invariant: a lookup made ahead is the ID map's answer at the time its row is applied. The
//! map only changes when a task event is applied (a new task added, an ended one removed), and
//! only for that event's key, so an instance whose key no earlier instance of the tick had is
//! looked up ahead; the others ([`Lookup::Again`]) are looked up when applied (their keys were
//! just read, so the probe hits the cache).

use rayon::prelude::*;
use rustc_hash::FxHashSet;

use super::Replay;
use super::TickEvents;
use super::rows::TaskEventRow;
use super::task_ids::TaskIds;
use crate::cell::Cell;
use crate::error::Result;
use crate::ids::TaskIdx;
use crate::parallel_time::region;
use crate::preload;
use crate::scale::{CopyIds, Scale};
use crate::trace::Cursor;

/// The instances (and rows, and keys seen) whose room the buffers keep between ticks: a tick of
/// the 8x cell has ~130k, its first (the trace's running tasks submitted at once) ~2M, which
/// would otherwise hold ~150 MB for the rest of the run.
const KEPT_INSTANCES: usize = 1 << 18;

/// Instances a thread looks up at a time ([`TaskEventRows::read_before`]).
const LOOKUPS_PER_PART: usize = 1 << 12;

/// An instance's task in the ID map, as looked up ahead.
#[derive(Debug, Clone, Copy)]
enum Lookup {
    /// The key's task, or `None` when the map has no such key.
    Ahead(Option<TaskIdx>),
    /// An earlier instance of the tick had the same key: look it up when applying.
    Again,
}

/// One task instance of a row read this tick.
#[derive(Debug, Clone, Copy)]
struct Instance {
    /// The instance's job ID (the row's own unless scaled).
    job: u64,
    /// Its machine copy.
    copy: u32,
    /// Its row, an index into [`TaskEventRows::rows`].
    row: u32,
    /// Its task, as looked up ahead.
    lookup: Lookup,
}

/// The task_events cursor and the tick's rows read from it. Between ticks the buffers are empty
/// (they keep their capacity).
#[derive(Default)]
pub(crate) struct TaskEventRows {
    /// The table's cursor.
    pub(crate) cursor: Cursor,
    /// The tick's rows, in trace order.
    rows: Vec<TaskEventRow>,
    /// Their task instances, in the order they are applied.
    instances: Vec<Instance>,
    /// Scratch: the keys of the instances read so far this tick.
    seen: FxHashSet<(u64, u32)>,
    /// The copy IDs of the last job scaled (the reading's own: it runs beside the other tables).
    copy_ids: CopyIds,
    /// Scratch: the instances of the row being read.
    scaled: Vec<(u64, u32)>,
}

impl TaskEventRows {
    /// Rows to be read from `cursor`.
    pub(crate) fn new(cursor: Cursor) -> TaskEventRows {
        TaskEventRows {
            cursor,
            ..TaskEventRows::default()
        }
    }

    /// Reads the rows before `end_us`, each as its instances under `scale`, and looks their
    /// tasks up in `task_of` (the ID map as it is before the first of them applies); returns how
    /// many trace rows it read.
    pub(crate) fn read_before(
        &mut self,
        scale: &Scale,
        end_us: i64,
        task_of: &TaskIds,
    ) -> Result<u64> {
        let mut read_rows = 0;
        let first = self.instances.len();
        let TaskEventRows {
            cursor,
            rows,
            instances,
            seen,
            copy_ids,
            scaled,
        } = self;
        let result = cursor.each_before(end_us, |b, run| {
            read_rows += run.len() as u64;
            let read = TaskEventRow::reader(b);
            for row in run.map(read) {
                let index = row.task_index;
                scale.tasks(row.job_id, index, copy_ids, scaled);
                let row_at = rows.len() as u32;
                rows.push(row);
                instances.extend(scaled.iter().map(|&(job, copy)| {
                    let key = (job, index);
                    // Looked up below, on every thread.
                    let lookup = match seen.insert(key) {
                        true => Lookup::Ahead(None),
                        false => Lookup::Again,
                    };
                    Instance {
                        job,
                        copy,
                        row: row_at,
                        lookup,
                    }
                }));
            }
            Ok(())
        });
        seen.clear();
        seen.shrink_to(KEPT_INSTANCES);
        // The ID map is only read here: the lookups made ahead spread over the threads, each
        // part remembering the last job it found (`TaskIds::get_near`).
        let (rows, read) = (&self.rows[..], &mut self.instances[first..]);
        region(|| {
            read.par_chunks_mut(LOOKUPS_PER_PART).for_each(|part| {
                let mut near = None;
                for i in part {
                    if let Lookup::Ahead(t) = &mut i.lookup {
                        let key = (i.job, rows[i.row as usize].task_index);
                        *t = task_of.get_near(&key, &mut near);
                    }
                }
            })
        });
        result.map(|()| read_rows)
    }
}

impl Replay {
    /// Applies the task event rows read this tick ([`TaskEventRows::read_before`]), in order.
    pub(super) fn apply_task_rows(&mut self, cell: &mut Cell, ev: &mut TickEvents) {
        let mut rows = std::mem::take(&mut self.task_rows.rows);
        let mut instances = std::mem::take(&mut self.task_rows.instances);
        for batch in instances.chunks(preload::BATCH) {
            // The columns of the tasks looked up ahead first (`preload`), then the events.
            preload::preload(batch, |i| match i.lookup {
                Lookup::Ahead(Some(t)) => cell.preload_event(t),
                _ => 0,
            });
            for i in batch {
                let row = &rows[i.row as usize];
                let key = (i.job, row.task_index);
                let existing = match i.lookup {
                    Lookup::Ahead(t) => t,
                    Lookup::Again => self.task_of.get(&key),
                };
                self.task_event(cell, row, (key, i.copy), existing, ev);
            }
        }
        rows.clear();
        rows.shrink_to(KEPT_INSTANCES);
        instances.clear();
        instances.shrink_to(KEPT_INSTANCES);
        (self.task_rows.rows, self.task_rows.instances) = (rows, instances);
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::cell::TaskState;

    /// Tasks ended and submitted again within one tick, and events of a task submitted earlier in
    /// the same tick: read ahead (a deferred event pending, never due), the replay leaves the
    /// cell, the ID map and the tick's events exactly as reading and applying in one pass does.
    #[test]
    fn lookups_made_ahead_match_lookups_made_in_turn() {
        // time,missing,job,index,machine,event,user,class,priority,cpu,mem,disk,different-machines
        let tasks = "\
0,,10,0,,0,u,0,0,0.1,0.1,0,0
0,,10,0,1,1,u,0,0,0.1,0.1,0,0
0,,11,0,,0,u,0,0,0.1,0.1,0,0
70000000,,10,0,1,2,u,0,0,,,,
71000000,,10,0,,0,u,0,0,0.1,0.1,0,0
72000000,,10,0,,7,u,0,0,0.2,0.1,0,0
73000000,,10,0,1,1,u,0,0,0.2,0.1,0,0
75000000,,11,0,,5,u,0,0,,,,
76000000,,11,0,,0,u,0,4,0.1,0.1,0,0
80000000,,12,0,,0,u,0,0,0.1,0.1,0,0
81000000,,12,0,1,1,u,0,0,0.1,0.1,0,0
82000000,,12,0,1,4,u,0,0,,,,
130000000,,11,0,1,1,u,0,4,0.1,0.1,0,0
140000000,,10,0,1,4,u,0,0,,,,
";
        let dir =
            super::super::ingested(&[("machine_events", "0,1,0,p,1,1\n"), ("task_events", tasks)]);
        let parquet = dir.path().join("parquet");
        let mut in_turn = Replay::open(&parquet).unwrap();
        let mut ahead = Replay::open(&parquet).unwrap();
        ahead.defer((i64::MAX, None), (TaskIdx(0), 0), DeferredKind::End);
        let (mut cell_in_turn, mut cell_ahead) = (Cell::default(), Cell::default());
        let ids = |r: &Replay| {
            let mut ids: Vec<_> = r.task_of.iter().collect();
            ids.sort_unstable();
            ids
        };
        let tasks = |c: &Cell| {
            let t = &c.tasks;
            (
                t.job_id().to_vec(),
                t.state().to_vec(),
                t.generation().to_vec(),
                t.cpu_req().to_vec(),
            )
        };
        for tick in 1..=3 {
            let end_us = tick * 60_000_000;
            let ev_in_turn = in_turn.advance(&mut cell_in_turn, end_us).unwrap();
            let ev_ahead = ahead.advance(&mut cell_ahead, end_us).unwrap();
            assert_eq!(ev_ahead.submitted, ev_in_turn.submitted, "tick {tick}");
            assert_eq!(ev_ahead.placements, ev_in_turn.placements, "tick {tick}");
            assert_eq!(ev_ahead.ended, ev_in_turn.ended, "tick {tick}");
            assert_eq!(ids(&ahead), ids(&in_turn), "tick {tick}");
            assert_eq!(tasks(&cell_ahead), tasks(&cell_in_turn), "tick {tick}");
            assert_eq!(ahead.stats(), in_turn.stats(), "tick {tick}");
        }
        // Hand-worked: after tick 2, 10/0 (evicted and submitted again, its request raised to
        // 0.2) and 11/0 (killed and submitted again) wait in new slots; 12/0 finished.
        // After tick 3 only 11/0 is left.
        assert_eq!(ids(&ahead).len(), 1);
        let live = (cell_ahead.tasks.state().iter()).filter(|&&s| s != TaskState::Free);
        assert_eq!(live.count(), 1);
    }
}
