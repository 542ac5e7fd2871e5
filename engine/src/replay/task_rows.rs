//! The replay's task event rows, read ahead. A tick's rows are read ([`TaskEventRows::read_before`]:
//! decoded and expanded to their scaled task instances) and each instance's task looked up in the
//! ID map on the other thread while the deferred events and the machine tables apply, which
//! neither read nor change the ID map; then [`Replay::apply_task_rows`] applies them in order.
//! Workload mode only: without deferred events there is nothing to overlap the reading with,
//! and borg-replay reads and applies the rows in one pass (`Replay::apply_task_events`).
//!
//! Invariant: a lookup made ahead is the ID map's answer at the time its row is applied. The
//! map only changes when a task event is applied (a new task added, an ended one removed), and
//! only for that event's key, so an instance whose key no earlier instance of the tick had is
//! looked up ahead; the others ([`Lookup::Again`]) are looked up when applied (their keys were
//! just read, so the probe hits the cache).

use rustc_hash::{FxHashMap, FxHashSet};

use super::Replay;
use super::TickEvents;
use super::rows::TaskEventRow;
use crate::cell::Cell;
use crate::error::Result;
use crate::ids::TaskIdx;
use crate::scale::{CopyIds, Scale};
use crate::trace::Cursor;

/// The instances (and rows, and keys seen) whose room the buffers keep between ticks: a tick of
/// the 8x cell has ~130k, its first (the trace's running tasks submitted at once) ~2M, which
/// would otherwise hold ~150 MB for the rest of the run.
const KEPT_INSTANCES: usize = 1 << 18;

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
            rows: Vec::new(),
            instances: Vec::new(),
            seen: FxHashSet::default(),
            copy_ids: CopyIds::default(),
            scaled: Vec::new(),
        }
    }

    /// Reads the rows before `end_us`, each as its instances under `scale`, and looks their
    /// tasks up in `task_of` (the ID map as it is before the first of them applies); returns how
    /// many trace rows it read.
    pub(crate) fn read_before(
        &mut self,
        scale: &Scale,
        end_us: i64,
        task_of: &FxHashMap<(u64, u32), TaskIdx>,
    ) -> Result<u64> {
        let mut read_rows = 0;
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
                    let lookup = match seen.insert(key) {
                        true => Lookup::Ahead(task_of.get(&key).copied()),
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
        result.map(|()| read_rows)
    }
}

impl Replay {
    /// Applies the task event rows read this tick ([`TaskEventRows::read_before`]), in order.
    pub(super) fn apply_task_rows(&mut self, cell: &mut Cell, ev: &mut TickEvents) {
        let rows = std::mem::take(&mut self.task_rows.rows);
        let mut instances = std::mem::take(&mut self.task_rows.instances);
        for i in &instances {
            let row = &rows[i.row as usize];
            let key = (i.job, row.task_index);
            let existing = match i.lookup {
                Lookup::Ahead(t) => t,
                Lookup::Again => self.task_of.get(&key).copied(),
            };
            self.task_event(cell, row, (key, i.copy), existing, ev);
        }
        let mut rows = rows;
        rows.clear();
        rows.shrink_to(KEPT_INSTANCES);
        instances.clear();
        instances.shrink_to(KEPT_INSTANCES);
        (self.task_rows.rows, self.task_rows.instances) = (rows, instances);
    }
}
