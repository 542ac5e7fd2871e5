//! The queue of deferred trace events (`deferred.rs`), popped in due order, then arrival order:
//! exactly the order of one binary heap over `(due_us, seq)`, at a fraction of its cost.
//!
//! Events held back by the same shift from the same table arrive in due order (each table is
//! sorted by time, and `seq` grows), so each such *lane* is a FIFO and only the lanes' fronts are
//! ordered, in a small heap. Whatever would break a lane's order (ends of awaited runs, rows out
//! of time order, a restored snapshot) is held *outside the lanes*: unordered in `later` until a
//! pop's horizon reaches it, then sorted into `ready` (a pop takes every event due before its
//! horizon, so sorting a tick's few hundred costs less than a heap operation for each of them).
//! Invariants: every lane is sorted by `(due_us, seq)`; `fronts` holds one entry per non-empty
//! lane, its front's key; `lane_of` maps exactly the non-empty lanes' keys to them; emptied lanes
//! wait in `free_lanes` for a new key; `ready` is sorted and holds exactly the events outside the
//! lanes due before `ready_until` (`later` the others, `later_min_due` at most their least due).
//!
//! Events come in bursts (the usage rows of five minutes arrive in one tick, over a million at
//! 8x; pushed lane by lane on every thread, `queue/burst.rs`) and leave as runs of one lane:
//! [`DeferredQueue::pop_due_into`] takes a lane's events for as long as they precede every
//! other lane's front, without a heap operation each. A lane is a FIFO of fixed-size blocks
//! drawn from a pool the queue keeps, so a burst neither copies a growing buffer nor touches
//! fresh memory once the pool holds the peak (a day has hundreds of shifts: one growable
//! buffer per lane would do both at every burst).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rustc_hash::FxHashMap;

use super::Deferred;

mod burst;

/// Which lane an event may join: its shift and its source table.
pub type LaneKey = (i64, u8);

/// Events per full block of a lane (a few in unit tests, so that they cross blocks).
#[cfg(not(test))]
const BLOCK: usize = 4096;
#[cfg(test)]
const BLOCK: usize = 3;

/// Events in a new lane's first block; each next block doubles up to [`BLOCK`]. A policy that
/// starts tasks at sub-second times makes a lane of nearly every late start (its own shift),
/// each holding a few usage rows: full blocks for them held 437 MB of Sparrow's 643 MB heap on
/// the 12.5k cell after 12 simulated minutes.
#[cfg(not(test))]
const FIRST_BLOCK: usize = 16;
#[cfg(test)]
const FIRST_BLOCK: usize = 2;

/// Deferred events, popped in `(due_us, seq)` order (module doc).
#[derive(Debug, Default, Clone)]
pub struct DeferredQueue {
    lanes: Vec<Lane>,
    lane_of: FxHashMap<LaneKey, u32>,
    fronts: BinaryHeap<Reverse<(i64, u64, u32)>>,
    /// Events outside the lanes due before `ready_until`, in order.
    ready: VecDeque<Deferred>,
    /// The other events outside the lanes, in no order.
    later: Vec<Deferred>,
    /// The last pop's horizon (`None`: no pop yet: every event outside the lanes is `later`).
    ready_until: Option<i64>,
    /// At most the least due of `later` (`None`: it is empty).
    later_min_due: Option<i64>,
    len: usize,
    /// Empty blocks (capacity [`BLOCK`]) for lanes to fill.
    pool: Vec<Vec<Deferred>>,
    /// Lanes emptied, for new keys: a lane lives while it holds events, so the lanes and their
    /// map stay as many as the shifts with events held, not every shift a run ever had.
    free_lanes: Vec<u32>,
    /// The lane the last push went to, with its key: the next push's, when it still holds
    /// events under that key (a burst's rows come by job, whose late runs share their shift),
    /// without a look-up in `lane_of`.
    recent: Option<(LaneKey, u32)>,
    /// Scratch of [`DeferredQueue::push_burst`].
    burst: burst::BurstScratch,
}

/// One lane: its events in order, in blocks (all full but the last: [`FIRST_BLOCK`] events,
/// doubling up to [`BLOCK`]); `head` events of the first block are popped already. Empty: no
/// blocks.
#[derive(Debug, Default, Clone)]
struct Lane {
    blocks: VecDeque<Vec<Deferred>>,
    head: usize,
    /// Capacity of the next block (0: [`FIRST_BLOCK`]).
    next_block: usize,
    /// Its key in `lane_of`.
    key: LaneKey,
    /// `(due_us, seq)` of its last event, while it has one: what a push compares with, without
    /// reading the last block.
    last: (i64, u64),
}

/// An empty block of `size` events: `pool`'s last when it has that size (the queue's pool holds
/// full-size ones; a burst's, each lane's blocks in the order it takes them), else a new one.
fn take_block(size: usize, pool: &mut Vec<Vec<Deferred>>) -> Vec<Deferred> {
    let pooled = pool.pop_if(|b| b.capacity() == size);
    pooled.unwrap_or_else(|| Vec::with_capacity(size))
}

impl Lane {
    fn front(&self) -> Option<&Deferred> {
        self.blocks.front().map(|b| &b[self.head])
    }

    /// Whether it holds events under `key` (an emptied lane waits for a new key).
    fn holds(&self, key: LaneKey) -> bool {
        self.key == key && !self.blocks.is_empty()
    }

    /// `(due_us, seq)` of its last event, if it has one.
    fn back(&self) -> Option<(i64, u64)> {
        (!self.blocks.is_empty()).then_some(self.last)
    }

    fn iter(&self) -> impl Iterator<Item = &Deferred> {
        let skip = self.head;
        self.blocks.iter().flatten().skip(skip)
    }

    fn push_back(&mut self, d: Deferred, pool: &mut Vec<Vec<Deferred>>) {
        if self.blocks.back().is_none_or(|b| b.len() == b.capacity()) {
            let size = self.next_block.clamp(FIRST_BLOCK, BLOCK);
            self.next_block = (size * 2).min(BLOCK);
            self.blocks.push_back(take_block(size, pool));
        }
        if let Some(b) = self.blocks.back_mut() {
            b.push(d);
            self.last = (d.due_us, d.seq);
        }
    }

    /// The blocks pushing `events` more would add, in the order it adds them ([`take_block`]).
    /// Allocated by the caller's thread, so a burst pushed on other threads writes into memory
    /// the run's allocator had at hand, not fresh pages (`queue/burst.rs`).
    fn blocks_for(&self, events: usize, pool: &mut Vec<Vec<Deferred>>) -> Vec<Vec<Deferred>> {
        let room = self.blocks.back().map_or(0, |b| b.capacity() - b.len());
        let (mut left, mut next, mut blocks) =
            (events.saturating_sub(room), self.next_block, Vec::new());
        while left > 0 {
            let size = next.clamp(FIRST_BLOCK, BLOCK);
            blocks.push(take_block(size, pool));
            (left, next) = (left.saturating_sub(size), size * 2);
        }
        blocks
    }

    /// Moves the front events for which `takes` holds to `out`, up to `max` of them in all
    /// there (`takes` must hold for a prefix of the lane: true, then false); emptied blocks go
    /// back to `pool`. A block's events go as one slice.
    fn pop_while(
        &mut self,
        pool: &mut Vec<Vec<Deferred>>,
        out: &mut Vec<Deferred>,
        max: usize,
        takes: impl Fn(&Deferred) -> bool,
    ) {
        while let Some(first) = self.blocks.front() {
            let rest = &first[self.head..];
            let room = max.saturating_sub(out.len()).min(rest.len());
            let n = rest[..room].partition_point(&takes);
            out.extend_from_slice(&rest[..n]);
            self.head += n;
            if self.head < first.len() {
                return;
            }
            if let Some(mut block) = self.blocks.pop_front()
                && block.capacity() == BLOCK
            {
                block.clear();
                pool.push(block);
            }
            self.head = 0;
            if self.blocks.is_empty() {
                self.next_block = FIRST_BLOCK;
            }
        }
    }
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
            .flat_map(Lane::iter)
            .chain(self.ready.iter())
            .chain(self.later.iter())
    }

    /// Adds `d`, to the lane `lane` when given and `d` keeps it in order.
    pub fn push(&mut self, d: Deferred, lane: Option<LaneKey>) {
        self.len += 1;
        let Some(key) = lane else {
            self.push_outside(d);
            return;
        };
        let l = match self.recent {
            Some((k, l)) if k == key && self.lanes[l as usize].holds(key) => l,
            _ => match self.lane_of.get(&key) {
                Some(&l) => l,
                None => self.new_lane(key),
            },
        };
        self.recent = Some((key, l));
        let queue = &mut self.lanes[l as usize];
        match queue.back() {
            Some(last) if last > (d.due_us, d.seq) => {
                self.push_outside(d);
            }
            Some(_) => queue.push_back(d, &mut self.pool),
            None => {
                queue.push_back(d, &mut self.pool);
                self.fronts.push(Reverse((d.due_us, d.seq, l)));
            }
        }
    }

    /// Holds `d` outside the lanes: in order in `ready` when due before the last pop's horizon,
    /// else in `later`.
    fn push_outside(&mut self, d: Deferred) {
        match self.ready_until {
            Some(until) if d.due_us < until => {
                let at = self.ready.partition_point(|e| *e < d);
                self.ready.insert(at, d);
            }
            _ => {
                self.later.push(d);
                self.later_min_due = Some(self.later_min_due.map_or(d.due_us, |m| m.min(d.due_us)));
            }
        }
    }

    /// Moves the events of `later` due before `end_us` to `ready`, sorted, when `end_us` is
    /// past the last horizon: each is due at or after the last horizon, so after all of `ready`.
    fn make_ready(&mut self, end_us: i64) {
        if self.ready_until.is_some_and(|until| end_us <= until) {
            return;
        }
        self.ready_until = Some(end_us);
        if self.later_min_due.is_none_or(|m| m >= end_us) {
            return;
        }
        let (ready, mut min) = (&mut self.ready, None::<i64>);
        let from = ready.len();
        self.later.retain(|d| match d.due_us < end_us {
            true => {
                ready.push_back(*d);
                false
            }
            false => {
                min = Some(min.map_or(d.due_us, |m| m.min(d.due_us)));
                true
            }
        });
        self.later_min_due = min;
        ready.make_contiguous()[from..].sort_unstable();
    }

    /// A lane for `key`, which has none: an emptied one, or a new one.
    fn new_lane(&mut self, key: LaneKey) -> u32 {
        let l = self.free_lanes.pop().unwrap_or_else(|| {
            self.lanes.push(Lane::default());
            self.lanes.len() as u32 - 1
        });
        self.lanes[l as usize].key = key;
        self.lane_of.insert(key, l);
        l
    }

    /// The key of the first event in the lanes.
    fn lanes_first(&self) -> Option<(i64, u64)> {
        self.fronts.peek().map(|f| (f.0.0, f.0.1))
    }

    /// Moves the events due before `end_us` to `out`, in order, until `out` holds `max`.
    pub fn pop_due_into(&mut self, end_us: i64, out: &mut Vec<Deferred>, max: usize) {
        let key = |d: &Deferred| (d.due_us, d.seq);
        // The earlier of two keys, `None` standing for no event (keys are distinct: `seq`).
        let earlier = |a: Option<(i64, u64)>, b: Option<(i64, u64)>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Every event outside the lanes due before `end_us` is in `ready`, which is what they
        // are merged from.
        self.make_ready(end_us);
        while out.len() < max {
            let other_first = self.ready.front().map(key);
            let Some(first) = earlier(self.lanes_first(), other_first) else {
                return;
            };
            if first.0 >= end_us {
                return;
            }
            if Some(first) == other_first {
                // Its events before the lanes' first, and due: one run.
                let bound = self.lanes_first();
                while out.len() < max
                    && let Some(&d) = self.ready.front()
                    && d.due_us < end_us
                    && bound.is_none_or(|b| key(&d) < b)
                {
                    out.push(d);
                    self.ready.pop_front();
                    self.len -= 1;
                }
                continue;
            }
            let Some(Reverse((_, _, l))) = self.fronts.pop() else {
                return;
            };
            // The lane's events before every other source's first, and due: one run.
            let bound = earlier(self.lanes_first(), other_first);
            let queue = &mut self.lanes[l as usize];
            let before = out.len();
            let takes = |d: &Deferred| d.due_us < end_us && bound.is_none_or(|b| key(d) < b);
            queue.pop_while(&mut self.pool, out, max, takes);
            self.len -= out.len() - before;
            match queue.front() {
                Some(f) => self.fronts.push(Reverse((f.due_us, f.seq, l))),
                None => {
                    self.lane_of.remove(&queue.key);
                    self.free_lanes.push(l);
                }
            }
        }
    }
}

impl FromIterator<Deferred> for DeferredQueue {
    /// A queue holding `events` (outside the lanes: lanes refill as new events arrive).
    fn from_iter<I: IntoIterator<Item = Deferred>>(events: I) -> Self {
        let later: Vec<Deferred> = events.into_iter().collect();
        DeferredQueue {
            len: later.len(),
            later_min_due: later.iter().map(|d| d.due_us).min(),
            later,
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
    /// (now and then receding) horizons, 0 to 40 at a time, with pushes between the pops of a
    /// step, give exactly the order of one binary heap (lanes cross blocks of 3 events here).
    #[test]
    fn pops_in_the_order_of_one_heap() {
        let mut r = Rng::new(5, 0);
        for case in 0..50 {
            let (mut queue, mut heap) = (DeferredQueue::default(), BinaryHeap::new());
            let mut seq = 0;
            let mut popped = 0;
            for step in 0..200i64 {
                let now = step * 60;
                let horizon = now + 60 * r.below(3) as i64;
                let mut max = 1 + r.below(40) as usize;
                for round in 0..3 {
                    for _ in 0..r.below(12) {
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
                    let mut expected = Vec::new();
                    while expected.len() < max
                        && let Some(d) = heap.peek().filter(|d| d.0.due_us < horizon)
                    {
                        expected.push(d.0);
                        heap.pop();
                    }
                    let mut got = Vec::new();
                    queue.pop_due_into(horizon, &mut got, max);
                    assert_eq!(got, expected, "case {case}, step {step}, round {round}");
                    popped += got.len();
                    assert_eq!(queue.len(), heap.len());
                    max = if round == 1 {
                        usize::MAX
                    } else {
                        r.below(40) as usize
                    };
                }
            }
            assert!(popped > 1000, "{popped}");
        }
    }

    /// With a shift of its own for nearly every event (as a policy that starts tasks at
    /// sub-second times makes), lanes emptied are taken again: their count stays at the most
    /// held at once, and the order is still one heap's.
    #[test]
    fn emptied_lanes_are_taken_again() {
        let mut r = Rng::new(7, 0);
        let (mut queue, mut heap) = (DeferredQueue::default(), BinaryHeap::new());
        let (mut seq, mut most_held) = (0, 0);
        for step in 0..300i64 {
            let now = step * 60;
            for _ in 0..r.below(30) {
                seq += 1;
                let shift = r.below(100_000) as i64;
                let d = Deferred {
                    due_us: now + shift % 120,
                    seq,
                    task: TaskIdx(0),
                    generation: 0,
                    kind: DeferredKind::End,
                };
                queue.push(d, Some((shift, 1)));
                heap.push(Reverse(d));
            }
            most_held = most_held.max(queue.len());
            let mut expected = Vec::new();
            while let Some(d) = heap.peek().filter(|d| d.0.due_us < now + 60) {
                expected.push(d.0);
                heap.pop();
            }
            let mut got = Vec::new();
            queue.pop_due_into(now + 60, &mut got, usize::MAX);
            assert_eq!(got, expected, "step {step}");
            assert_eq!(
                queue.lane_of.len(),
                queue.lanes.len() - queue.free_lanes.len()
            );
        }
        assert!(
            seq > 3000 && queue.lanes.len() <= most_held,
            "{}",
            queue.lanes.len()
        );
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
        let (mut queue, mut due) = (queue, Vec::new());
        queue.pop_due_into(5, &mut due, 10);
        assert_eq!(due, vec![d(3, 1)]);
        assert_eq!(queue.len(), 2);
    }
}
