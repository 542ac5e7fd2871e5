//! A batch of usage changes applied on every thread ([`Cell::set_usage_batch`]): what applying
//! each with [`Cell::set_usage`] in order does, in parallel sweeps.
//!
//! A change writes only its own task's usage columns, and moves its node's (and migration
//! target's) usage sums by the difference, in integers that wrap as `set_usage`'s do, so sums
//! commute. The changes are grouped by range of task slots (stably: a task's changes stay in
//! order) and each range applied on its own, its tasks' columns its own slice; the differences
//! it makes are grouped by range of nodes and each range adds them to its own slice of the sums.
//! What comes out as in `set_usage`, one by one: every column and sum, the need log (pending
//! tasks' changes when fitting by usage, in change order), and the nodes touched as a set; they
//! come in node-range order, not in first-change order (`Cell::touched`'s readers do not depend on
//! its order). The ranges are fixed sizes, so the result is the same for any number of threads.

use rayon::prelude::*;

use super::ranges::{ForNode, NodeRanges, SumsRange, TASKS_PER_RANGE, TaskRanges};
use super::{Cell, TaskState};
use crate::fit_by::FitBy;
use crate::ids::TaskIdx;
use crate::parallel_time::region;

/// One usage change: task `task`'s usage, if its slot still holds `generation` and is not free,
/// is `cpu` and `mem` (as [`Cell::set_usage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageChange {
    /// The task.
    pub task: TaskIdx,
    /// Its slot generation when the change was made.
    pub generation: u32,
    /// CPU units.
    pub cpu: u32,
    /// Memory units.
    pub mem: u32,
}

/// A node's usage sums moved by a change.
#[derive(Debug, Clone, Copy, Default)]
struct Moved {
    node: u32,
    cpu: i64,
    mem: i64,
}

/// What a range of task slots made: the sums it moved, and its pending tasks' changes for the
/// need log (change index, task).
#[derive(Debug, Clone, Default)]
struct RangeOut {
    moved: Vec<Moved>,
    logged: Vec<(u32, TaskIdx)>,
}

/// The buffers a batch keeps between calls.
#[derive(Debug, Clone, Default)]
pub struct UsageBatch {
    task_ranges: TaskRanges,
    ranges: Vec<RangeOut>,
    node_ranges: NodeRanges<Moved>,
    logged: Vec<(u32, TaskIdx)>,
}

impl Cell {
    /// Applies `changes` as [`Cell::set_usage`] on each in order would (skipping a change whose
    /// task slot no longer holds its generation or is free), on every thread (module doc); the
    /// nodes touched come in node order by ranges.
    pub fn set_usage_batch(&mut self, changes: &[UsageChange], batch: &mut UsageBatch) {
        let task_of = |k: usize| changes[k].task;
        self.set_usage_batch_of((changes.len(), task_of, |k| Some(changes[k])), batch);
    }

    /// [`Cell::set_usage_batch`] over items `0..items` of the caller's own list, read where
    /// they lie: item `k` is for task `task_of(k)` and, when `change_of(k)` gives one, makes
    /// that change (of that task); the others are passed over. Saves copying a long list of
    /// mixed items (the replay's due deferred events, `replay/deferred.rs`) into changes
    /// first, on one thread.
    pub fn set_usage_batch_of(
        &mut self,
        (items, task_of, change_of): (
            usize,
            impl Fn(usize) -> TaskIdx + Sync,
            impl Fn(usize) -> Option<UsageChange> + Sync,
        ),
        batch: &mut UsageBatch,
    ) {
        if items == 0 {
            return;
        }
        let by_usage = self.nodes.fit_by == FitBy::Usage;
        let ranges = self.tasks.len().div_ceil(TASKS_PER_RANGE);
        let (offsets, by_task) =
            (batch.task_ranges).group(self.tasks.len(), items, |k| task_of(k).index());
        batch.ranges.resize_with(ranges, RangeOut::default);
        // Each range's records (`cell/usage_slot.rs`: the usage, and copies of the state,
        // generation, node and target it reads).
        let records = self.tasks.usage.par_chunks_mut(TASKS_PER_RANGE);
        region(|| {
            (records.zip(batch.ranges.par_iter_mut()).enumerate()).for_each(
                |(r, (records, out))| {
                    out.moved.clear();
                    out.logged.clear();
                    let first = r * TASKS_PER_RANGE;
                    let range = offsets[r] as usize..offsets[r + 1] as usize;
                    for &k in &by_task[range] {
                        let Some(c) = change_of(k as usize) else {
                            continue;
                        };
                        let u = &mut records[c.task.index() - first];
                        let s = u.state;
                        if u.generation != c.generation || s == TaskState::Free {
                            continue;
                        }
                        if s == TaskState::Running {
                            let cpu = c.cpu as i64 - u.cpu as i64;
                            let mem = c.mem as i64 - u.mem as i64;
                            for at in [u.node, u.migrating_to] {
                                if at.is_some() {
                                    out.moved.push(Moved {
                                        node: at.0,
                                        cpu,
                                        mem,
                                    });
                                }
                            }
                        }
                        (u.cpu, u.mem, u.is_request) = (c.cpu, c.mem, false);
                        if by_usage && s == TaskState::Pending {
                            out.logged.push((k, c.task));
                        }
                    }
                },
            )
        });
        self.move_usage_sums(batch);
        batch.logged.clear();
        batch
            .logged
            .extend(batch.ranges.iter().flat_map(|r| &r.logged));
        batch.logged.sort_unstable_by_key(|&(k, _)| k);
        for &(_, t) in &batch.logged {
            self.need_log.push(t);
        }
    }

    /// Adds the ranges' moved sums to the nodes', node range by node range, and marks the
    /// nodes touched (`ranges.rs`).
    fn move_usage_sums(&mut self, batch: &mut UsageBatch) {
        let moved = &batch.ranges;
        let marks = self.usage_marks();
        let add = |sums: &mut SumsRange<'_>, j: usize, m: &Moved| {
            sums.cpu_used[j] = (sums.cpu_used[j] as i64 + m.cpu) as u32;
            sums.mem_used[j] = (sums.mem_used[j] as i64 + m.mem) as u32;
        };
        let parts = (moved.len(), |r: usize| moved[r].moved.iter());
        self.add_by_node_range(parts, &mut batch.node_ranges, marks, add);
    }
}

impl ForNode for Moved {
    fn node(&self) -> u32 {
        self.node
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::ranges::NODES_PER_RANGE;
    use crate::ids::NodeIdx;

    /// On random cells (running, migrating, pending and ended tasks; both fit rules) and random
    /// batches (several changes of one task, stale generations, sums going down and up), the
    /// batch leaves every column, sum and the need log as `set_usage` one by one does, and the
    /// same nodes touched; on pools of 1, 2 and 5 threads alike.
    #[test]
    fn a_batch_applies_as_set_usage_one_by_one() {
        let mut r = ingest::rng::Rng::new(21, 0);
        let pools = crate::csr::pools(&[1, 2, 5]);
        for case in 0..30 {
            let mut cell = Cell::default();
            let fit_by = if case % 2 == 0 {
                FitBy::Usage
            } else {
                FitBy::Requests
            };
            cell.set_fit_by(fit_by);
            let node_count = 1 + r.below(3 * NODES_PER_RANGE as u64) as u32;
            let nodes: Vec<NodeIdx> = (0..node_count)
                .map(|m| cell.add_machine(m as u64, 1 << 20, 1 << 20))
                .collect();
            let task_count = 1 + r.below(3 * TASKS_PER_RANGE as u64) as u32;
            let tasks: Vec<TaskIdx> = (0..task_count)
                .map(|i| {
                    let t = cell.tasks.alloc(1, i, 0, 0);
                    cell.set_request(t, 10, 10);
                    if r.below(4) > 0 {
                        let at = nodes[r.below(node_count as u64) as usize];
                        cell.place(t, at, 0);
                    }
                    t
                })
                .collect();
            for &t in &tasks {
                match r.below(20) {
                    0 => cell.end(t),
                    1 if cell.tasks.state()[t.index()] == TaskState::Running => {
                        let to = nodes[r.below(node_count as u64) as usize];
                        let _ = cell.start_migration(t, to);
                    }
                    _ => {}
                }
            }
            cell.take_touched(&mut Vec::new());
            let since = cell.need_log_end();
            let changes: Vec<UsageChange> = (0..r.below(40_000))
                .map(|_| {
                    let t = tasks[r.below(task_count as u64) as usize];
                    let stale = u32::from(r.below(30) == 0);
                    UsageChange {
                        task: t,
                        generation: cell.tasks.generation()[t.index()] + stale,
                        cpu: r.below(1 << 24) as u32,
                        mem: r.below(1 << 24) as u32,
                    }
                })
                .collect();
            let mut expected = cell.clone();
            for c in &changes {
                let i = c.task.index();
                let current = expected.tasks.generation()[i] == c.generation
                    && expected.tasks.state()[i] != TaskState::Free;
                if current {
                    expected.set_usage(c.task, c.cpu, c.mem);
                }
            }
            let sorted = |v: &[u32]| {
                let mut v = v.to_vec();
                v.sort_unstable();
                v
            };
            for pool in &pools {
                let mut got = cell.clone();
                pool.install(|| got.set_usage_batch(&changes, &mut UsageBatch::default()));
                let t = (&got.tasks, &expected.tasks);
                assert_eq!(t.0.usage(), t.1.usage(), "case {case}");
                assert_eq!(
                    got.nodes.cpu_used(),
                    expected.nodes.cpu_used(),
                    "case {case}"
                );
                assert_eq!(got.nodes.mem_used(), expected.nodes.mem_used());
                assert_eq!(sorted(got.touched()), sorted(expected.touched()));
                let (fit, fit_expected) = (got.touched_for_fit(), expected.touched_for_fit());
                assert_eq!(sorted(fit), sorted(fit_expected), "case {case}");
                assert_eq!(
                    got.need_changes_since(since),
                    expected.need_changes_since(since)
                );
                got.check().unwrap();
            }
        }
    }
}
