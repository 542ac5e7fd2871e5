//! A batch of placements applied on every thread ([`Cell::place_batch`]): what [`Cell::place`]
//! on each in order does, for those whose slot still holds their generation, is pending, and
//! whose node is online (the checks a policy makes of a placement decided in a round).
//!
//! A placement writes only its own task's columns (node, state, start, its usage record) and
//! adds its task's amounts to its node's sums, which commute. So the placements are grouped by
//! range of task slots (stably: of two placements of one task the first, in batch order, wins,
//! as one by one: the second finds the task running) and each range applied on its own, its
//! tasks' columns its own slices; the amounts it adds are grouped by range of nodes and each
//! range adds them to its own slices of the sums. What comes out is what `place` one by one
//! leaves: every column and sum, [`Cell::take_started`]'s list in batch order, the placement
//! count; the nodes touched come as a set, by node range ([`Cell::touched`]'s readers take it in
//! any order), as [`Cell::set_usage_batch`]'s do. The ranges are fixed sizes, so the result is the
//! same for any number of threads.

use rayon::prelude::*;

use super::ranges::{ForNode, NodeRanges, SumsRange, TASKS_PER_RANGE, TaskRanges};
use super::{Cell, TOUCHED, TOUCHED_FOR_FIT, TaskState, UsageSlot};
use crate::ids::{NodeIdx, TaskIdx};
use crate::parallel_time::region;

/// One placement a policy decided: task `task` on node `node`, if its slot still holds
/// `generation`, it is pending, and the node is online.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaceRequest {
    /// The task.
    pub task: TaskIdx,
    /// Its slot generation when the placement was decided.
    pub generation: u32,
    /// The node.
    pub node: NodeIdx,
}

/// What a placement adds to one node's sums (a migrating task's amounts count on its target
/// too: a pending task has no target, but the rule is `place`'s).
#[derive(Debug, Clone, Copy, Default)]
struct Added {
    node: u32,
    cpu_used: u32,
    mem_used: u32,
    cpu_req: u32,
    mem_req: u32,
    production: bool,
}

/// What a range of task slots made: the amounts it adds, and its placements made (batch
/// index, task).
#[derive(Debug, Clone, Default)]
struct RangeOut {
    added: Vec<Added>,
    placed: Vec<(u32, TaskIdx)>,
}

/// The buffers a batch keeps between calls.
#[derive(Debug, Clone, Default)]
pub struct PlaceBatch {
    task_ranges: TaskRanges,
    ranges: Vec<RangeOut>,
    node_ranges: NodeRanges<Added>,
    placed: Vec<(u32, TaskIdx)>,
}

impl Cell {
    /// Places each of `places` whose slot still holds its generation, is pending, and whose
    /// node is online, as [`Cell::place`] on each in order would, at `now_us`, on every thread
    /// (module doc); returns how many it placed.
    pub fn place_batch(
        &mut self,
        places: &[PlaceRequest],
        now_us: i64,
        batch: &mut PlaceBatch,
    ) -> usize {
        if places.is_empty() {
            return 0;
        }
        let ranges = self.tasks.len().div_ceil(TASKS_PER_RANGE);
        let task_of = |k: usize| places[k].task.index();
        let (offsets, by_task) = batch
            .task_ranges
            .group(self.tasks.len(), places.len(), task_of);
        batch.ranges.resize_with(ranges, RangeOut::default);
        let tasks = &mut self.tasks;
        let online = &self.nodes.online;
        let columns = (tasks.usage.par_chunks_mut(TASKS_PER_RANGE))
            .zip(tasks.node.par_chunks_mut(TASKS_PER_RANGE))
            .zip(tasks.state.par_chunks_mut(TASKS_PER_RANGE))
            .zip(tasks.start_us.par_chunks_mut(TASKS_PER_RANGE));
        let read = (
            &tasks.trace_sched_us,
            &tasks.cpu_req,
            &tasks.mem_req,
            &tasks.production,
        );
        region(|| {
            (columns.zip(batch.ranges.par_iter_mut()).enumerate()).for_each(
                |(r, ((((records, node), state), start_us), out))| {
                    out.added.clear();
                    out.placed.clear();
                    let first = r * TASKS_PER_RANGE;
                    let (trace_sched_us, cpu_req, mem_req, production) = read;
                    for &k in &by_task[offsets[r] as usize..offsets[r + 1] as usize] {
                        let p = places[k as usize];
                        let (i, j) = (p.task.index(), p.task.index() - first);
                        let u = &mut records[j];
                        let on = online.get(p.node.index()).copied().unwrap_or(false);
                        if u.generation != p.generation || u.state != TaskState::Pending || !on {
                            continue;
                        }
                        (node[j], state[j], start_us[j]) = (p.node, TaskState::Running, now_us);
                        // `Tasks::mirror`'s copies: generation and target are unchanged.
                        (u.state, u.node) = (TaskState::Running, p.node);
                        u.shift_us = UsageSlot::shift(trace_sched_us[i], now_us);
                        for at in [u.node, u.migrating_to] {
                            if at.is_some() {
                                out.added.push(Added {
                                    node: at.0,
                                    cpu_used: u.cpu,
                                    mem_used: u.mem,
                                    cpu_req: cpu_req[i],
                                    mem_req: mem_req[i],
                                    production: production[i],
                                });
                            }
                        }
                        out.placed.push((k, p.task));
                    }
                },
            )
        });
        self.add_placed_sums(batch);
        batch.placed.clear();
        (batch.placed).extend(batch.ranges.iter().flat_map(|r| &r.placed));
        batch.placed.sort_unstable_by_key(|&(k, _)| k);
        self.started.extend(batch.placed.iter().map(|&(_, t)| t));
        self.placements += batch.placed.len() as u64;
        batch.placed.len()
    }

    /// Adds the ranges' amounts to the nodes' sums, node range by node range, and marks the
    /// nodes touched as [`Cell::place`] does: a change the fit rule reads (`ranges.rs`).
    fn add_placed_sums(&mut self, batch: &mut PlaceBatch) {
        let added = &batch.ranges;
        let add = |sums: &mut SumsRange<'_>, j: usize, a: &Added| {
            sums.cpu_used[j] = sums.cpu_used[j].wrapping_add(a.cpu_used);
            sums.mem_used[j] = sums.mem_used[j].wrapping_add(a.mem_used);
            sums.cpu_req[j] = sums.cpu_req[j].wrapping_add(a.cpu_req);
            sums.mem_req[j] = sums.mem_req[j].wrapping_add(a.mem_req);
            if a.production {
                sums.prod_cpu_req[j] = sums.prod_cpu_req[j].wrapping_add(a.cpu_req);
                sums.prod_mem_req[j] = sums.prod_mem_req[j].wrapping_add(a.mem_req);
            }
            sums.task_count[j] = sums.task_count[j].wrapping_add(1);
        };
        let parts = (added.len(), |r: usize| added[r].added.iter());
        let marks = TOUCHED | TOUCHED_FOR_FIT;
        self.add_by_node_range(parts, &mut batch.node_ranges, marks, add);
    }
}

impl ForNode for Added {
    fn node(&self) -> u32 {
        self.node
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::ranges::NODES_PER_RANGE;

    /// On random cells (pending, running, migrating and ended tasks, some of them scheduled by
    /// the trace; some nodes offline) and random batches (several placements of one task,
    /// stale generations, running tasks, offline nodes), the batch leaves every column, sum,
    /// the started list and the placement count as `place` one by one with the policy's checks
    /// does, and the same nodes touched; on pools of 1, 2 and 5 threads alike.
    #[test]
    fn a_batch_places_as_place_one_by_one() {
        let mut r = ingest::rng::Rng::new(33, 0);
        let pools = crate::csr::pools(&[1, 2, 5]);
        for case in 0..24 {
            let mut cell = Cell::default();
            let node_count = 1 + r.below(3 * NODES_PER_RANGE as u64) as u32;
            let nodes: Vec<NodeIdx> = (0..node_count)
                .map(|m| cell.add_machine(m as u64, 1 << 20, 1 << 20))
                .collect();
            let task_count = 1 + r.below(3 * TASKS_PER_RANGE as u64) as u32;
            let priority = |r: &mut ingest::rng::Rng| [0, 9, 11][r.below(3) as usize];
            let tasks: Vec<TaskIdx> = (0..task_count)
                .map(|i| {
                    let t = cell.tasks.alloc(1, i, priority(&mut r), 0);
                    cell.set_request(t, r.below(1000) as u32, r.below(1000) as u32);
                    if r.below(3) == 0 {
                        cell.record_trace_schedule(t, r.below(1_000_000) as i64);
                    }
                    if r.below(2) == 0 {
                        cell.set_usage(t, r.below(500) as u32, r.below(500) as u32);
                    }
                    if r.below(3) == 0 {
                        let at = nodes[r.below(node_count as u64) as usize];
                        cell.place(t, at, 0);
                        if r.below(5) == 0 {
                            let to = nodes[r.below(node_count as u64) as usize];
                            let _ = cell.start_migration(t, to);
                        }
                    }
                    t
                })
                .collect();
            for &t in &tasks {
                if r.below(20) == 0 {
                    cell.end(t);
                }
            }
            for &n in &nodes {
                if r.below(10) == 0 {
                    cell.set_machine(n, false, None);
                }
            }
            cell.take_touched(&mut Vec::new());
            cell.take_started(&mut Vec::new());
            cell.take_placements();
            let now_us = 5_000_000;
            let places: Vec<PlaceRequest> = (0..r.below(30_000))
                .map(|_| {
                    let t = tasks[r.below(task_count as u64) as usize];
                    let stale = u32::from(r.below(30) == 0);
                    PlaceRequest {
                        task: t,
                        generation: cell.tasks.generation()[t.index()] + stale,
                        node: nodes[r.below(node_count as u64) as usize],
                    }
                })
                .collect();
            let mut expected = cell.clone();
            let mut placed = 0;
            for p in &places {
                let i = p.task.index();
                if expected.tasks.generation()[i] == p.generation
                    && expected.tasks.state()[i] == TaskState::Pending
                    && expected.nodes.online()[p.node.index()]
                {
                    expected.place(p.task, p.node, now_us);
                    placed += 1;
                }
            }
            let sorted = |v: &[u32]| {
                let mut v = v.to_vec();
                v.sort_unstable();
                v
            };
            let (mut started, mut expected_started) = (Vec::new(), Vec::new());
            expected.take_started(&mut expected_started);
            for pool in &pools {
                let mut got = cell.clone();
                let n =
                    pool.install(|| got.place_batch(&places, now_us, &mut PlaceBatch::default()));
                assert_eq!(n, placed, "case {case}");
                let (t, e) = (&got.tasks, &expected.tasks);
                assert_eq!(t.usage(), e.usage(), "case {case}");
                assert_eq!((t.node(), t.state()), (e.node(), e.state()));
                assert_eq!(t.start_us(), e.start_us());
                let (n, e) = (&got.nodes, &expected.nodes);
                assert_eq!((n.cpu_used(), n.mem_used()), (e.cpu_used(), e.mem_used()));
                assert_eq!((n.cpu_req(), n.mem_req()), (e.cpu_req(), e.mem_req()));
                let prod = (n.prod_cpu_req(), n.prod_mem_req());
                assert_eq!(prod, (e.prod_cpu_req(), e.prod_mem_req()));
                assert_eq!(n.task_count(), e.task_count(), "case {case}");
                assert_eq!(sorted(got.touched()), sorted(expected.touched()));
                let (fit, fit_expected) = (got.touched_for_fit(), expected.touched_for_fit());
                assert_eq!(sorted(fit), sorted(fit_expected), "case {case}");
                got.take_started(&mut started);
                assert_eq!(started, expected_started, "case {case}");
                assert_eq!(got.take_placements(), expected.clone().take_placements());
                got.check().unwrap();
            }
        }
    }
}
