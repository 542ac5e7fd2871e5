//! The queue of deferred trace events (`deferred.rs`), popped in due order, then arrival order:
//! exactly the order of one binary heap over `(due_us, seq)`, at a fraction of its cost.
//!
//! Events held back by the same shift from the same table arrive in due order (each table is
//! sorted by time, and `seq` grows), so each such *lane* is a FIFO and only the lanes' fronts are
//! ordered, in a small heap. Whatever would break a lane's order (ends of awaited runs, rows out
//! of time order, a restored snapshot) goes to a general heap. Invariants: every lane is sorted
//! by `(due_us, seq)`; `fronts` holds one entry per non-empty lane, its front's key.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rustc_hash::FxHashMap;

use super::Deferred;

/// Which lane an event may join: its shift and its source table.
pub type LaneKey = (i64, u8);

/// Deferred events, popped in `(due_us, seq)` order (module doc).
#[derive(Debug, Default, Clone)]
pub struct DeferredQueue {
    lanes: Vec<VecDeque<Deferred>>,
    lane_of: FxHashMap<LaneKey, u32>,
    fronts: BinaryHeap<Reverse<(i64, u64, u32)>>,
    other: BinaryHeap<Reverse<Deferred>>,
    len: usize,
}

impl DeferredQueue {
    /// Events held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when none are held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every event held, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Deferred> {
        self.lanes
            .iter()
            .flatten()
            .chain(self.other.iter().map(|d| &d.0))
    }

    /// Adds `d`, to the lane `lane` when given and `d` keeps it in order.
    pub fn push(&mut self, d: Deferred, lane: Option<LaneKey>) {
        self.len += 1;
        let Some(key) = lane else {
            self.other.push(Reverse(d));
            return;
        };
        let next = self.lanes.len() as u32;
        let l = *self.lane_of.entry(key).or_insert(next);
        if l == next {
            self.lanes.push(VecDeque::new());
        }
        let queue = &mut self.lanes[l as usize];
        match queue.back() {
            Some(last) if (last.due_us, last.seq) > (d.due_us, d.seq) => {
                self.other.push(Reverse(d));
            }
            Some(_) => queue.push_back(d),
            None => {
                queue.push_back(d);
                self.fronts.push(Reverse((d.due_us, d.seq, l)));
            }
        }
    }

    /// Removes and returns the first event due before `end_us`, if any.
    pub fn pop_before(&mut self, end_us: i64) -> Option<Deferred> {
        let lane_first = self.fronts.peek().map(|f| (f.0.0, f.0.1));
        let other_first = self.other.peek().map(|d| (d.0.due_us, d.0.seq));
        let from_lane = match (lane_first, other_first) {
            (None, None) => return None,
            (Some(a), Some(b)) => a < b,
            (a, _) => a.is_some(),
        };
        let first = if from_lane { lane_first } else { other_first };
        if first.is_some_and(|(due, _)| due >= end_us) {
            return None;
        }
        self.len -= 1;
        if !from_lane {
            return self.other.pop().map(|d| d.0);
        }
        let Reverse((_, _, l)) = self.fronts.pop()?;
        let queue = &mut self.lanes[l as usize];
        let d = queue.pop_front();
        match queue.front() {
            Some(f) => self.fronts.push(Reverse((f.due_us, f.seq, l))),
            // An emptied lane gives its memory back (a day has hundreds of shifts).
            None => *queue = VecDeque::new(),
        }
        d
    }
}

impl FromIterator<Deferred> for DeferredQueue {
    /// A queue holding `events` (in the general heap: lanes refill as new events arrive).
    fn from_iter<I: IntoIterator<Item = Deferred>>(events: I) -> Self {
        let other: BinaryHeap<Reverse<Deferred>> = events.into_iter().map(Reverse).collect();
        DeferredQueue {
            len: other.len(),
            other,
            ..DeferredQueue::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use ingest::rng::Rng;

    use super::*;
    use crate::ids::TaskIdx;
    use crate::replay::DeferredKind;

    /// Random pushes (in-order lanes, out-of-order rows, laneless events) and pops up to moving
    /// horizons give exactly the order of one binary heap.
    #[test]
    fn pops_in_the_order_of_one_heap() {
        let mut r = Rng::new(5, 0);
        for case in 0..50 {
            let (mut queue, mut heap) = (DeferredQueue::default(), BinaryHeap::new());
            let mut seq = 0;
            let mut popped = 0;
            for step in 0..200i64 {
                let now = step * 60;
                for _ in 0..r.below(20) {
                    seq += 1;
                    let shift = 60 * r.below(4) as i64;
                    // Mostly in time order within a step; now and then a row out of order.
                    let time = if r.below(10) == 0 {
                        now - 30
                    } else {
                        now + seq as i64 % 60
                    };
                    let d = Deferred {
                        due_us: time + shift + 60,
                        seq,
                        task: TaskIdx(r.below(100) as u32),
                        generation: 0,
                        kind: DeferredKind::End,
                    };
                    let lane = (r.below(8) != 0).then_some((shift, (case % 2) as u8));
                    queue.push(d, lane);
                    heap.push(Reverse(d));
                }
                let horizon = now + 60 * r.below(3) as i64;
                loop {
                    let expected = heap
                        .peek()
                        .filter(|d: &&Reverse<Deferred>| d.0.due_us < horizon)
                        .map(|d| d.0);
                    if expected.is_some() {
                        heap.pop();
                    }
                    assert_eq!(
                        queue.pop_before(horizon),
                        expected,
                        "case {case}, step {step}"
                    );
                    if expected.is_none() {
                        break;
                    }
                    popped += 1;
                }
                assert_eq!(queue.len(), heap.len());
            }
            assert!(popped > 500, "{popped}");
        }
    }

    #[test]
    fn rebuilt_queues_hold_what_they_held() {
        let d = |due_us, seq| Deferred {
            due_us,
            seq,
            task: TaskIdx(0),
            generation: 0,
            kind: DeferredKind::End,
        };
        let queue: DeferredQueue = [d(5, 2), d(3, 1), d(5, 1)].into_iter().collect();
        let mut all: Vec<_> = queue.iter().copied().collect();
        all.sort();
        assert_eq!(all, vec![d(3, 1), d(5, 1), d(5, 2)]);
        let mut queue = queue;
        assert_eq!(queue.pop_before(5), Some(d(3, 1)));
        assert_eq!(queue.pop_before(5), None);
        assert_eq!(queue.len(), 2);
    }
}
