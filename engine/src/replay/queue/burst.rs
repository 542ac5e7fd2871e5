//! A burst of pushes to the deferred queue's lanes on every thread
//! ([`DeferredQueue::push_burst`]): the usage rows of five minutes arrive in one tick, over a
//! million at 8x, nearly all deferred, and pushed one by one they were the largest one-thread
//! step of the trace apply (a lane look-up each: the 8 instances of a row have 8 shifts).
//!
//! The result is exactly that of pushing the burst one by one in order: each event gets the
//! next arrival number in order; lanes for keys without one are made in order of first arrival
//! (the same lane numbers); each lane receives its events in order, an event that would break
//! its order going outside the lanes. Only what decides no pop differs: which pooled block a
//! lane fills, the heap's inner layout, the order of the unsorted events outside the lanes.
//!
//! The burst is cut into chunks of a fixed size (never the thread count): each chunk numbers
//! its keys and sorts its events by lane (a stable counting sort), then the lanes append their
//! events chunk by chunk, side by side.

use std::cmp::Reverse;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::{BLOCK, Deferred, DeferredQueue, LaneKey};

/// Events a chunk sorts by lane (a few in unit tests, so that bursts cross chunks).
#[cfg(not(test))]
const CHUNK: usize = 1 << 12;
#[cfg(test)]
const CHUNK: usize = 7;

/// Fewer events than this are pushed one by one.
#[cfg(not(test))]
const MIN_EVENTS: usize = 1 << 14;
#[cfg(test)]
const MIN_EVENTS: usize = 1;

/// In a burst's column of key numbers: the position holds no event.
const NO_EVENT: u32 = u32::MAX;

/// What a burst works in, kept between bursts so that it writes into memory in use.
#[derive(Debug, Default, Clone)]
pub(super) struct BurstScratch {
    /// Each position's key number in its chunk ([`NO_EVENT`]: no event).
    ids: Vec<u32>,
    /// The chunks sorted by lane.
    chunks: Vec<ChunkByLane>,
}

/// One chunk's events ordered by lane, each lane's in arrival order: their positions in the
/// burst and ranks among the chunk's events (the burst's numbers are known once every chunk is
/// counted).
#[derive(Debug, Default, Clone)]
pub(super) struct ChunkByLane {
    /// Where each lane's events start in `order`, and the end (one more than the lanes).
    starts: Vec<u32>,
    order: Vec<(u32, u32)>,
}

impl ChunkByLane {
    /// Sorts chunk `c` of the burst by lane, from its positions' numbers `ids` (or
    /// [`NO_EVENT`]) and the numbers' `lanes`.
    fn sort(&mut self, c: usize, ids: &[u32], lanes: &[u32]) {
        let ChunkByLane { starts, order } = self;
        let lane_count = lanes.iter().max().map_or(0, |&l| l as usize + 1);
        starts.clear();
        starts.resize(lane_count + 1, 0);
        let held = || ids.iter().enumerate().filter(|&(_, &id)| id != NO_EVENT);
        for (_, &id) in held() {
            starts[lanes[id as usize] as usize + 1] += 1;
        }
        for l in 0..lane_count {
            starts[l + 1] += starts[l];
        }
        let mut next = starts.clone();
        order.clear();
        order.resize(starts[lane_count] as usize, (0, 0));
        for (rank, (j, &id)) in held().enumerate() {
            let at = &mut next[lanes[id as usize] as usize];
            order[*at as usize] = ((c * CHUNK + j) as u32, rank as u32);
            *at += 1;
        }
    }

    /// Lane `l`'s events: positions and ranks.
    fn of_lane(&self, l: usize) -> &[(u32, u32)] {
        match self.starts.get(l + 1) {
            Some(&end) => &self.order[self.starts[l] as usize..end as usize],
            None => &[],
        }
    }

    /// Events in the chunk.
    fn len(&self) -> u64 {
        self.order.len() as u64
    }
}

impl DeferredQueue {
    /// Pushes the events `event(0)`, ..., `event(n - 1)` (`None`: no event at that position;
    /// `events` of them hold one) to their lanes, numbering them from `seq` on (their own `seq`
    /// is ignored): the same as pushing them one by one in order, on every thread when the
    /// events are many and the lanes few (module doc).
    pub fn push_burst(
        &mut self,
        seq: &mut u64,
        (n, events): (usize, usize),
        event: impl Fn(usize) -> Option<(Deferred, LaneKey)> + Sync,
    ) {
        // The per-lane work is lanes x chunks: in parallel only while that is within the events.
        if events >= MIN_EVENTS && self.lanes.len() * n.div_ceil(CHUNK) <= events {
            crate::parallel_time::region(|| self.push_by_lane(seq, n, &event));
            return;
        }
        for (mut d, key) in (0..n).filter_map(event) {
            *seq += 1;
            d.seq = *seq;
            self.push(d, Some(key));
        }
    }

    /// [`DeferredQueue::push_burst`] lane by lane, the lanes side by side.
    fn push_by_lane(
        &mut self,
        seq: &mut u64,
        n: usize,
        event: &(impl Fn(usize) -> Option<(Deferred, LaneKey)> + Sync),
    ) {
        let key_of = |i: usize| event(i).map(|(_, key)| key);
        let BurstScratch {
            mut ids,
            mut chunks,
        } = std::mem::take(&mut self.burst);
        // Each chunk's keys numbered in order of first arrival, and each position's number (a
        // small map per chunk, on every thread) ...
        ids.resize(n, NO_EVENT); // every entry written below
        let chunk_keys: Vec<Vec<LaneKey>> = ids
            .par_chunks_mut(CHUNK)
            .enumerate()
            .map(|(c, ids)| {
                let (mut keys, mut number) = (Vec::new(), FxHashMap::default());
                for (j, id) in ids.iter_mut().enumerate() {
                    *id = match key_of(c * CHUNK + j) {
                        None => NO_EVENT,
                        Some(key) => *number.entry(key).or_insert_with(|| {
                            keys.push(key);
                            keys.len() as u32 - 1
                        }),
                    };
                }
                keys
            })
            .collect();
        // ... then their lanes, made for new keys in order of first arrival (as one by one).
        let chunk_lanes: Vec<Vec<u32>> = chunk_keys
            .iter()
            .map(|keys| {
                let lane = |key: &LaneKey| match self.lane_of.get(key) {
                    Some(&l) => l,
                    None => self.new_lane(*key),
                };
                keys.iter().map(lane).collect()
            })
            .collect();
        let lane_count = self.lanes.len();
        let chunk_count = n.div_ceil(CHUNK);
        if chunks.len() < chunk_count {
            chunks.resize_with(chunk_count, ChunkByLane::default);
        }
        let sorting = chunks[..chunk_count]
            .par_iter_mut()
            .zip(ids.par_chunks(CHUNK));
        sorting
            .zip(&chunk_lanes)
            .enumerate()
            .for_each(|(c, ((chunk, ids), lanes))| chunk.sort(c, ids, lanes));
        let sorted = &chunks[..chunk_count];
        // Each chunk's first arrival number.
        let first_seq: Vec<u64> = sorted
            .iter()
            .scan(*seq + 1, |next, chunk| {
                let first = *next;
                *next += chunk.len();
                Some(first)
            })
            .collect();
        let total: u64 = sorted.iter().map(ChunkByLane::len).sum();
        (*seq, self.len) = (*seq + total, self.len + total as usize);
        // Each lane's blocks, made (or taken from the pool) here ([`Lane::blocks_for`]).
        let per_lane: Vec<usize> = (0..lane_count)
            .into_par_iter()
            .map(|l| sorted.iter().map(|c| c.of_lane(l).len()).sum())
            .collect();
        let mut spares: Vec<Vec<Vec<Deferred>>> = (0..lane_count).map(|_| Vec::new()).collect();
        for (l, &events) in per_lane.iter().enumerate() {
            let mut blocks = self.lanes[l].blocks_for(events, &mut self.pool);
            blocks.reverse();
            spares[l] = blocks;
        }
        // The lanes with events dealt to one group per thread (what a group holds changes no
        // lane's events); a group takes the chunks in order, each chunk's events lane by lane,
        // so that the burst's rows are read chunk by chunk, from cache. An event before its
        // lane's last goes outside the lanes (as `push` does).
        let groups = rayon::current_num_threads();
        let mut dealt: Vec<Vec<_>> = (0..groups).map(|_| Vec::new()).collect();
        let lanes_with_events = self.lanes.iter_mut().zip(&mut spares).enumerate();
        for (l, (lane, spare)) in lanes_with_events.filter(|&(l, _)| per_lane[l] > 0) {
            dealt[l % groups].push((l, lane.blocks.is_empty(), lane, spare, Vec::new()));
        }
        let mut appended: Vec<(usize, Vec<Deferred>, bool)> = dealt
            .into_par_iter()
            .flat_map_iter(|mut group| {
                for (chunk, first) in sorted.iter().zip(&first_seq) {
                    for (l, _, lane, spare, outside) in &mut group {
                        for &(i, rank) in chunk.of_lane(*l) {
                            let (d, _) = event(i as usize).expect("an event");
                            let d = Deferred {
                                seq: first + u64::from(rank),
                                ..d
                            };
                            match lane.back() {
                                Some(last) if last > (d.due_us, d.seq) => outside.push(d),
                                _ => lane.push_back(d, spare),
                            }
                        }
                    }
                }
                group
                    .into_iter()
                    .map(|(l, was_empty, _, _, outside)| (l, outside, was_empty))
            })
            .collect();
        appended.sort_unstable_by_key(|a| a.0);
        let mut outside = Vec::new();
        for (l, out, was_empty) in appended {
            if let Some(f) = self.lanes[l].front().filter(|_| was_empty) {
                self.fronts.push(Reverse((f.due_us, f.seq, l as u32)));
            }
            outside.extend(out);
        }
        for d in outside {
            self.push_outside(d);
        }
        let unused = spares.into_iter().flatten();
        self.pool.extend(unused.filter(|b| b.capacity() == BLOCK));
        self.recent = None;
        self.burst = BurstScratch { ids, chunks };
    }
}

#[cfg(test)]
mod tests {
    use ingest::rng::Rng;

    use super::*;
    use crate::ids::TaskIdx;
    use crate::replay::DeferredKind;

    /// The held events in pop order and, lane by lane, each lane's key and events: what the
    /// queue holds, whatever blocks and heap layout hold it.
    fn contents(queue: &DeferredQueue) -> (Vec<Deferred>, Vec<(LaneKey, Vec<Deferred>)>) {
        let lanes = queue.lanes.iter();
        let by_lane = lanes
            .map(|l| (l.key, l.iter().copied().collect()))
            .collect();
        let mut popped = Vec::new();
        queue
            .clone()
            .pop_due_into(i64::MAX, &mut popped, usize::MAX);
        (popped, by_lane)
    }

    /// Bursts pushed lane by lane (across chunks of 7, lanes crossing blocks of 3, new keys,
    /// emptied lanes taken again, events out of their lane's order, positions without events)
    /// leave the queue holding exactly what pushing them one by one does, with the same arrival
    /// numbers, lane numbers and pop order; between bursts both queues are popped alike. Cases
    /// alternate between pools of 1 and 3 threads (one group of lanes per thread).
    #[test]
    fn a_burst_holds_what_pushes_one_by_one_hold() {
        let mut r = Rng::new(17, 0);
        let mut outside_seen = 0;
        let pools = [1, 3].map(|threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads);
            pool.build().unwrap()
        });
        for case in 0..40 {
            let pool = &pools[case % 2];
            let (mut burst, mut one_by_one) = (DeferredQueue::default(), DeferredQueue::default());
            let (mut seq_a, mut seq_b) = (0, 0);
            for step in 0..30i64 {
                let now = step * 60;
                let n = r.below(80) as usize;
                let events: Vec<Option<(Deferred, LaneKey)>> = (0..n)
                    .map(|i| {
                        if r.below(5) == 0 {
                            return None;
                        }
                        let shift = 60 * r.below(1 + case as u64 % 6) as i64;
                        let late = r.below(12) == 0;
                        let time = now + i as i64 - if late { 50 } else { 0 };
                        let d = Deferred {
                            due_us: time + shift + 60,
                            seq: 0,
                            task: TaskIdx(r.below(100) as u32),
                            generation: r.below(3) as u32,
                            kind: DeferredKind::Usage {
                                cpu: r.below(9) as u32,
                                mem: 0,
                            },
                        };
                        Some((d, (shift, 1)))
                    })
                    .collect();
                pool.install(|| burst.push_by_lane(&mut seq_a, n, &|i| events[i]));
                for (mut d, key) in events.iter().flatten().copied() {
                    seq_b += 1;
                    d.seq = seq_b;
                    one_by_one.push(d, Some(key));
                }
                assert_eq!(seq_a, seq_b);
                assert_eq!(burst.len(), one_by_one.len());
                assert_eq!(
                    burst.lane_of, one_by_one.lane_of,
                    "case {case}, step {step}"
                );
                assert_eq!(
                    contents(&burst),
                    contents(&one_by_one),
                    "case {case}, step {step}"
                );
                outside_seen += burst.later.len() + burst.ready.len();
                let horizon = now + 60 * r.below(3) as i64;
                let max = r.below(60) as usize;
                let (mut a, mut b) = (Vec::new(), Vec::new());
                burst.pop_due_into(horizon, &mut a, max);
                one_by_one.pop_due_into(horizon, &mut b, max);
                assert_eq!(a, b, "case {case}, step {step}");
            }
        }
        assert!(outside_seen > 100, "{outside_seen}");
    }
}
