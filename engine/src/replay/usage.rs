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
use crate::cell::{Cell, UsageBatch, UsageChange};
use crate::error::Result;
use crate::ids::TaskIdx;
use crate::parallel_time::region;
use crate::preload;
use crate::scale::{CopyIds, Scale};
use crate::trace::Cursor;
use crate::units::to_units;

/// Usage rows a thread looks up at a time ([`Replay::apply_usage`]).
const USAGE_LOOKUPS_PER_JOB: usize = 4096;

/// The rows of a tick from which those due now are applied as one batch on every thread
/// ([`apply_due_now`]): a burst (at `--multiply 8`, every fifth minute brings ~1M) ...
const ROWS_FOR_A_BATCH: usize = 1 << 14;

/// ... on a cell of this many task slots or more (their usage records, 32 bytes each, beyond
/// 16 MB). On a smaller cell the records stay in cache, one by one costs a few nanoseconds a
/// row, and the batch's passes cost more than they spread: first-fit on the 12.5k cell (~140k
/// slots) at one thread ran 11.9k -> 9.0k x real time with batches (no gain at two threads);
/// masb `--multiply 8` (~1.1M slots, 3 h at one thread) ran as fast with them, its trace
/// apply's one-thread ms per tick ~10 -> ~8.6 (`bench-results/masb-8x-batches-2026-11-30.md`).
const SLOTS_FOR_A_BATCH: usize = 1 << 19;

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
    /// then the rows due now applied in order (a burst on a large cell in one batch on every
    /// thread, [`apply_due_now`]) beside the rest pushed to the deferred queue lane by lane, with
    /// the result of pushing them in row order
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
        let batch = (&mut self.usage_changes, &mut self.usage_batch);
        rayon::join(
            || apply_due_now(cell, &rows, &tasks, batch),
            || queue.push_burst(seq, (rows.len(), late), |i| late_row(&rows[i], tasks[i])),
        );
        rows.clear();
        (self.usage.rows, self.usage.tasks) = (rows, tasks);
    }
}

/// Applies the rows of runs not held back (start delay 0), in order: a burst of at least
/// [`ROWS_FOR_A_BATCH`] on a cell of at least [`SLOTS_FOR_A_BATCH`] task slots in one batch on
/// every thread ([`apply_due_now_batched`]), else one by one ([`apply_due_now_one_by_one`]).
fn apply_due_now(
    cell: &mut Cell,
    rows: &[UsageRow],
    tasks: &[(Option<TaskIdx>, i64, u32)],
    batch: (&mut Vec<UsageChange>, &mut UsageBatch),
) {
    if rows.len() >= ROWS_FOR_A_BATCH && cell.tasks.len() >= SLOTS_FOR_A_BATCH {
        apply_due_now_batched(cell, rows, tasks, batch);
    } else {
        apply_due_now_one_by_one(cell, rows, tasks);
    }
}

/// [`apply_due_now`] in one [`Cell::set_usage_batch`] on every thread: the rows' tasks were just
/// looked up, so every change holds its slot's generation and the batch applies them all, as
/// one by one.
fn apply_due_now_batched(
    cell: &mut Cell,
    rows: &[UsageRow],
    tasks: &[(Option<TaskIdx>, i64, u32)],
    (changes, batch): (&mut Vec<UsageChange>, &mut UsageBatch),
) {
    let due = |(u, &(t, delay, generation)): (&UsageRow, &(Option<TaskIdx>, i64, u32))| {
        let task = t.filter(|_| delay == 0)?;
        let (cpu, mem) = (u.cpu, u.mem);
        Some(UsageChange {
            task,
            generation,
            cpu,
            mem,
        })
    };
    changes.clear();
    region(|| changes.par_extend(rows.par_iter().zip(tasks).filter_map(due)));
    cell.set_usage_batch(changes, batch);
}

/// [`apply_due_now`] one row at a time, in batches whose tasks' usage records are loaded first
/// (`preload`).
fn apply_due_now_one_by_one(
    cell: &mut Cell,
    rows: &[UsageRow],
    tasks: &[(Option<TaskIdx>, i64, u32)],
) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::TaskState;
    use crate::fit_by::FitBy;
    use crate::ids::NodeIdx;

    /// A tick's rows due now, a burst in one batch on every thread or a few one by one, leave
    /// the cell as `set_usage` on each row due now, in order, does:
    /// usage, node sums, the need log (pending tasks' rows when fitting by usage), the nodes
    /// touched as a set; rows held back (a start delay) or matching no task change nothing.
    #[test]
    fn rows_due_now_apply_as_one_by_one() {
        let mut r = ingest::rng::Rng::new(51, 0);
        for case in 0..6 {
            let mut cell = Cell::default();
            cell.set_fit_by(if case % 2 == 0 {
                FitBy::Usage
            } else {
                FitBy::Requests
            });
            let nodes: Vec<NodeIdx> = (0..50)
                .map(|m| cell.add_machine(m, 1 << 20, 1 << 20))
                .collect();
            let tasks: Vec<TaskIdx> = (0..2_000)
                .map(|i| {
                    let t = cell.tasks.alloc(1, i, 0, 0);
                    cell.set_request(t, 10, 10);
                    if r.below(3) > 0 {
                        cell.place(t, nodes[r.below(50) as usize], 0);
                    }
                    t
                })
                .collect();
            cell.take_touched(&mut Vec::new());
            let since = cell.need_log_end();
            let count = if case < 2 { 100 } else { 3 * ROWS_FOR_A_BATCH };
            let rows: Vec<UsageRow> = (0..count)
                .map(|_| UsageRow {
                    key: (1, 0),
                    start_us: 0,
                    cpu: r.below(1 << 16) as u32,
                    mem: r.below(1 << 16) as u32,
                })
                .collect();
            let looked_up: Vec<(Option<TaskIdx>, i64, u32)> = (0..count)
                .map(|_| {
                    let t = tasks[r.below(2_000) as usize];
                    let delay = [0, 0, 0, 5][r.below(4) as usize];
                    let generation = cell.tasks.generation()[t.index()];
                    (Some(t).filter(|_| r.below(20) > 0), delay, generation)
                })
                .collect();
            let mut expected = cell.clone();
            for (u, &(t, delay, _)) in rows.iter().zip(&looked_up) {
                if let Some(t) = t.filter(|_| delay == 0) {
                    expected.set_usage(t, u.cpu, u.mem);
                }
            }
            let mut got = cell.clone();
            if case < 2 {
                apply_due_now_one_by_one(&mut got, &rows, &looked_up);
            } else {
                let batch = (&mut Vec::new(), &mut UsageBatch::default());
                apply_due_now_batched(&mut got, &rows, &looked_up, batch);
            }
            assert_eq!(got.tasks.usage(), expected.tasks.usage(), "case {case}");
            assert_eq!(got.nodes.cpu_used(), expected.nodes.cpu_used());
            assert_eq!(got.nodes.mem_used(), expected.nodes.mem_used());
            let need = |c: &Cell| c.need_changes_since(since).map(<[TaskIdx]>::to_vec);
            assert_eq!(need(&got), need(&expected), "case {case}");
            let sorted = |c: &Cell| {
                let mut v = c.touched().to_vec();
                v.sort_unstable();
                v
            };
            assert_eq!(sorted(&got), sorted(&expected), "case {case}");
            let pending = got
                .tasks
                .state()
                .iter()
                .filter(|&&s| s == TaskState::Pending);
            assert!(pending.count() > 0);
            got.check().unwrap();
        }
    }
}
