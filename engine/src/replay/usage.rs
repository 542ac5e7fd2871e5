//! The replay's task usage rows. A tick's rows are first read ([`UsageRows::read_before`]:
//! decoded and expanded to their scaled task instances), which touches only the table's cursor
//! and buffers of its own, so it runs on a thread of its own while the last tick's policy ran
//! (`usage_ahead.rs`), or else on the other thread while the task events and constraints apply;
//! then [`Replay::apply_usage`] looks their tasks up and applies them in order, after the
//! task events (a task submitted in the tick finds its usage).

use rayon::prelude::*;

use super::Replay;
use super::deferred::{self, Deferred, DeferredKind};
use super::queue::LaneKey;
use super::rows::UsageReading;
use super::task_ids::JobCache;
use crate::cell::Cell;
use crate::error::Result;
use crate::ids::TaskIdx;
use crate::preload;
use crate::scale::{CopyIds, Scale};
use crate::trace::Cursor;
use crate::units::to_units;

/// Usage rows a thread looks up at a time ([`Replay::apply_usage`]).
const USAGE_LOOKUPS_PER_JOB: usize = 4096;

/// One usage row for one task instance, as read (applied by [`Replay::apply_usage`]).
#[derive(Debug, Clone, Copy)]
struct UsageRow {
    key: (u64, u32),
    start_us: i64,
    cpu: u32,
    mem: u32,
}

/// The task_usage cursor and the tick's rows read from it. Between ticks the buffers are empty
/// (they keep their capacity).
#[derive(Default)]
pub(crate) struct UsageRows {
    /// The table's cursor.
    pub(crate) cursor: Cursor,
    /// The tick's rows, per task instance, in trace order.
    rows: Vec<UsageRow>,
    /// What each row resolves to: its task, start delay and slot generation.
    tasks: Vec<(Option<TaskIdx>, i64, u32)>,
    /// The copy IDs of the last job scaled (the reading's own: it runs beside the other tables).
    copy_ids: CopyIds,
    /// Scratch: the instances of the row being read.
    instances: Vec<(u64, u32)>,
}

impl UsageRows {
    /// Rows to be read from `cursor`.
    pub(crate) fn new(cursor: Cursor) -> UsageRows {
        UsageRows {
            cursor,
            ..UsageRows::default()
        }
    }

    /// Reads the rows before `end_us`, each as its instances under `scale`, after those read
    /// before; returns how many trace rows it read.
    pub(crate) fn read_before(&mut self, scale: &Scale, end_us: i64) -> Result<u64> {
        let mut read_rows = 0;
        let UsageRows {
            cursor,
            rows,
            copy_ids,
            instances,
            ..
        } = self;
        cursor.each_before(end_us, |b, run| {
            read_rows += run.len() as u64;
            let read = UsageReading::reader(b);
            for reading in run.map(read) {
                let index = reading.task_index;
                let row = UsageRow {
                    key: (0, index),
                    start_us: reading.start_us,
                    cpu: to_units(reading.cpu.unwrap_or(0.0)),
                    mem: to_units(reading.memory.unwrap_or(0.0)),
                };
                scale.tasks(reading.job_id, index, copy_ids, instances);
                rows.extend(instances.iter().map(|&(job, _)| UsageRow {
                    key: (job, index),
                    ..row
                }));
            }
            Ok(())
        })?;
        Ok(read_rows)
    }
}

impl Replay {
    /// Applies (or, for runs the policy started late, defers) the usage rows read this tick, in
    /// order. The rows change no task's identity, state or start, so each row's task and shift
    /// are looked up first, on both threads (the hash probes and task columns are cache misses),
    /// then the rows due now applied in order on one thread while the others push the rest to
    /// the deferred queue lane by lane, with the result of pushing them in row order
    /// (`queue/burst.rs`; the two touch disjoint state, so the result is that of one pass in
    /// row order).
    pub(super) fn apply_usage(&mut self, cell: &mut Cell) {
        let mut rows = std::mem::take(&mut self.usage.rows);
        let mut tasks = std::mem::take(&mut self.usage.tasks);
        tasks.clear();
        let (task_of, workload_mode) = (&self.task_of, self.workload_mode);
        let lookup = |cache: &mut JobCache, u: &UsageRow| (task_of.get_near(&u.key, cache), 0, 0);
        // Read-only: both threads look up, in order (the result does not depend on the split):
        // the tasks, then by batch their usage records loaded first (`preload`), then the
        // shifts and generations read from them, counting the rows that match no task and
        // those held back (whether they go lane by lane).
        let shift = |(t, delay, generation): &mut (Option<TaskIdx>, i64, u32)| match *t {
            None => (1, 0),
            Some(t) => {
                *delay = deferred::start_delay_us(workload_mode, cell, t);
                *generation = cell.tasks.usage()[t.index()].generation();
                (0, usize::from(*delay > 0))
            }
        };
        let sum = |a: (u64, usize), b: (u64, usize)| (a.0 + b.0, a.1 + b.1);
        let (unmatched, late) = crate::parallel_time::region(|| {
            tasks.par_extend(
                rows.par_iter()
                    .with_min_len(USAGE_LOOKUPS_PER_JOB)
                    .map_init(|| None, lookup),
            );
            let batches = tasks.par_chunks_mut(preload::BATCH);
            let per_job = USAGE_LOOKUPS_PER_JOB / preload::BATCH;
            let counts = batches.with_min_len(per_job).map(|batch| {
                preload::preload(batch, |&(t, _, _)| t.map_or(0, |t| cell.preload_usage(t)));
                batch.iter_mut().map(shift).fold((0, 0), sum)
            });
            counts.reduce(|| (0, 0), sum)
        });
        self.stats.usage_rows_unmatched += unmatched;
        // The rows due now and those held back touch disjoint state (the cell; the deferred
        // queue and its counter), each in row order: one thread applies, the other defers (by
        // lane, on every thread, `queue/burst.rs`).
        let (queue, seq) = (&mut self.deferred, &mut self.deferred_seq);
        rayon::join(
            || apply_due_now(cell, &rows, &tasks),
            || queue.push_burst(seq, (rows.len(), late), |i| late_row(&rows[i], tasks[i])),
        );
        rows.clear();
        (self.usage.rows, self.usage.tasks) = (rows, tasks);
    }
}

/// Applies the rows of runs not held back (start delay 0), in order, in batches whose tasks'
/// usage records are loaded first (`preload`).
fn apply_due_now(cell: &mut Cell, rows: &[UsageRow], tasks: &[(Option<TaskIdx>, i64, u32)]) {
    let batches = rows
        .chunks(preload::BATCH)
        .zip(tasks.chunks(preload::BATCH));
    for (rows, tasks) in batches {
        preload::preload(tasks, |&(t, delay, _)| match t {
            Some(t) if delay == 0 => cell.preload_usage(t),
            _ => 0,
        });
        for (u, &(t, delay, _)) in rows.iter().zip(tasks) {
            if let Some(t) = t
                && delay == 0
            {
                cell.set_usage(t, u.cpu, u.mem);
            }
        }
    }
}

/// The deferred event of row `u` when its task's run started late (lane: the delay), held back
/// until the run reaches it.
fn late_row(
    u: &UsageRow,
    (t, delay, generation): (Option<TaskIdx>, i64, u32),
) -> Option<(Deferred, LaneKey)> {
    let task = t.filter(|_| delay > 0)?;
    let d = Deferred {
        due_us: u.start_us + delay,
        seq: 0,
        task,
        generation,
        kind: DeferredKind::Usage {
            cpu: u.cpu,
            mem: u.mem,
        },
    };
    Some((d, (delay, deferred::LANE_USAGE)))
}
