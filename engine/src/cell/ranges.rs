//! The two sweeps of the batches (`usage_batch.rs`, `place_batch.rs`): a batch's items grouped
//! by range of [`TASKS_PER_RANGE`] task slots ([`TaskRanges`]), each range applying its own
//! to its own slices of the task columns; then the amounts they add to the node sums, by
//! range of [`NODES_PER_RANGE`] nodes ([`Cell::add_by_node_range`]).
//!
//! Both groupings are stable (a task's items, a node's amounts stay in batch order) and the
//! ranges fixed sizes, so the result is that of applying one by one, for any number of threads.
//! Sums are integers that wrap, so they commute; the nodes touched come in node-range order
//! ([`Cell::touched`]'s readers take them as a set).

use rayon::prelude::*;

use super::Cell;
use crate::csr::{Grouping, group_by_key};
use crate::parallel_time::region;

/// Task slots per range of the first sweep.
pub(super) const TASKS_PER_RANGE: usize = 1 << 14;
/// Nodes per range of the second sweep.
pub(super) const NODES_PER_RANGE: usize = 1 << 12;
/// A batch's items per part of the first sweep's grouping.
const ITEMS_PER_PART: usize = 1 << 12;

/// The first sweep's grouping of a batch's items by range of task slots, and its buffers.
#[derive(Debug, Clone, Default)]
pub(super) struct TaskRanges {
    offsets: Vec<u32>,
    grouping: Grouping<u32>,
    by_task: Vec<u32>,
}

impl TaskRanges {
    /// Groups items `0..items` (item `k`'s task slot `task_of(k)`) by range of a table of
    /// `slots` slots, stably; returns each range's start in the second slice (range `r`'s
    /// items are `by_task[offsets[r]..offsets[r + 1]]`).
    pub(super) fn group(
        &mut self,
        slots: usize,
        items: usize,
        task_of: impl Fn(usize) -> usize + Sync,
    ) -> (&[u32], &[u32]) {
        let ranges = slots.div_ceil(TASKS_PER_RANGE);
        let of_part = |p: usize| {
            let part = p * ITEMS_PER_PART..((p + 1) * ITEMS_PER_PART).min(items);
            part.map(|k| (task_of(k) / TASKS_PER_RANGE, k as u32))
        };
        let parts = (items.div_ceil(ITEMS_PER_PART), of_part);
        let (offsets, grouping) = (&mut self.offsets, &mut self.grouping);
        let n = group_by_key(ranges, parts, offsets, grouping, &mut self.by_task);
        (&self.offsets, &self.by_task[..n])
    }
}

/// Amounts for one node.
pub(super) trait ForNode: Copy + Send + Sync {
    /// The node's index.
    fn node(&self) -> u32;
}

/// One range's slices of the node sums, from its first node.
pub(super) struct SumsRange<'a> {
    pub cpu_used: &'a mut [u32],
    pub mem_used: &'a mut [u32],
    pub cpu_req: &'a mut [u32],
    pub mem_req: &'a mut [u32],
    pub prod_cpu_req: &'a mut [u32],
    pub prod_mem_req: &'a mut [u32],
    pub task_count: &'a mut [u32],
}

/// The buffers of the sweep, kept between calls.
#[derive(Debug, Clone)]
pub(super) struct NodeRanges<D> {
    offsets: Vec<u32>,
    grouping: Grouping<D>,
    by_node: Vec<D>,
    /// Per node range, the nodes it touched first and the marks it set.
    touched: Vec<Vec<(u32, u8)>>,
}

impl<D> Default for NodeRanges<D> {
    fn default() -> Self {
        NodeRanges {
            offsets: Vec::new(),
            grouping: Grouping::default(),
            by_node: Vec::new(),
            touched: Vec::new(),
        }
    }
}

impl Cell {
    /// Adds the amounts of `parts` ordered parts (`amounts(p)` yields part `p`'s) to the node
    /// sums with `add(range, j, amounts)` (`j`: the node's index in the range), range by range
    /// on every thread, and marks their nodes touched as `marks` (module doc).
    pub(super) fn add_by_node_range<'d, D: ForNode + 'd, I: Iterator<Item = &'d D>>(
        &mut self,
        (parts, amounts): (usize, impl Fn(usize) -> I + Sync),
        buffers: &mut NodeRanges<D>,
        marks: u8,
        add: impl Fn(&mut SumsRange<'_>, usize, &D) + Sync,
    ) {
        let nodes = self.nodes.len();
        let ranges = nodes.div_ceil(NODES_PER_RANGE);
        let keyed = |p: usize| amounts(p).map(|a| (a.node() as usize / NODES_PER_RANGE, a));
        let NodeRanges {
            offsets,
            grouping,
            by_node,
            touched,
        } = buffers;
        let n = group_by_key(ranges, (parts, keyed), offsets, grouping, by_node);
        let (offsets, by_node) = (&*offsets, &by_node[..n]);
        if self.touched_mark.len() < nodes {
            self.touched_mark.resize(nodes, 0);
        }
        touched.resize_with(ranges, Vec::new);
        fn chunks(v: &mut [u32]) -> rayon::slice::ChunksMut<'_, u32> {
            v.par_chunks_mut(NODES_PER_RANGE)
        }
        let s = &mut self.nodes;
        let sums = (chunks(&mut s.cpu_used).zip(chunks(&mut s.mem_used)))
            .zip(chunks(&mut s.cpu_req).zip(chunks(&mut s.mem_req)))
            .zip(chunks(&mut s.prod_cpu_req).zip(chunks(&mut s.prod_mem_req)))
            .zip(chunks(&mut s.task_count))
            .zip(self.touched_mark[..nodes].par_chunks_mut(NODES_PER_RANGE));
        region(|| {
            (sums.zip(touched.par_iter_mut()).enumerate()).for_each(
                |(r, (((((used, req), prod), task_count), touched_mark), touched))| {
                    touched.clear();
                    let ((cpu_used, mem_used), (cpu_req, mem_req)) = (used, req);
                    let (prod_cpu_req, prod_mem_req) = prod;
                    let mut range = SumsRange {
                        cpu_used,
                        mem_used,
                        cpu_req,
                        mem_req,
                        prod_cpu_req,
                        prod_mem_req,
                        task_count,
                    };
                    let first = r * NODES_PER_RANGE;
                    for a in &by_node[offsets[r] as usize..offsets[r + 1] as usize] {
                        let j = a.node() as usize - first;
                        add(&mut range, j, a);
                        let new = marks & !touched_mark[j];
                        if new != 0 {
                            touched_mark[j] |= new;
                            touched.push((a.node(), new));
                        }
                    }
                },
            )
        });
        for &(n, new) in touched.iter().flatten() {
            self.list_touched(n, new);
        }
    }
}
