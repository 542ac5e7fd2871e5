//! Adding a batch's amounts to the node sums range by range on every thread: the second sweep
//! of the batches (`usage_batch.rs`, `place_batch.rs`), which first apply their changes per
//! range of task slots and collect what each adds to which node.
//!
//! The amounts are grouped by range of [`NODES_PER_RANGE`] nodes (stably: a node's amounts
//! stay in batch order) and each range adds its own into its own slices of the sums, marking
//! the nodes it touches. Sums are integers that wrap, so they commute: the result is that of
//! adding one by one, for any number of threads; the nodes touched come in node-range order
//! ([`Cell::touched`]'s readers take them as a set).

use rayon::prelude::*;

use super::Cell;
use crate::csr::{Grouping, group_by_key};
use crate::parallel_time::region;

/// Nodes per range of the sweep.
pub(super) const NODES_PER_RANGE: usize = 1 << 12;

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
