//! Active stepping: rounds that step only the agents with something to do, for policies that do
//! not step every agent every round ([`Policy::steps_every_agent`] false).
//!
//! An agent is active in a round when its inbox holds messages or a wake-up it asked for
//! ([`Outbox::wake_at`](crate::policy::Outbox::wake_at)) falls due. [`WakeQueue`] keeps the
//! wake-ups by round, the mailbox is grouped in its sparse form (receivers only), and the active
//! agents are stepped in parallel in the fixed chunks of the dense executor that hold any, so a
//! round costs what its active agents cost (plus one pass over the chunk count), not what the
//! agent table costs: a 100k-agent cell with a few busy agents runs at 10 ms ticks.
//!
//! Determinism as in `executor.rs`: chunk outputs are read in agent order, so messages, actions
//! and wake-ups never depend on thread count.
//!
//! Time: round `g` counted over the run (tick k, round r: g = k R + r) starts at
//! `TRACE_START_US + floor(g tick_us / R)`; a wake-up at `at_us` falls due in the first round
//! that starts at or after it, and never before the round after the one that asked.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ingest::codes::TRACE_START_US;
use rayon::prelude::*;

use crate::cell::Cell;
use crate::executor::{ChunkOutput, Granularity, Mailbox, MessageCounts, RoundScratch};
use crate::ids::{AgentIdx, Tick};
use crate::policy::{Policy, PolicyCounters, StepCtx};

/// Where a round lies in simulated time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundClock {
    /// Microseconds per tick.
    pub tick_us: i64,
    /// Rounds per tick.
    pub rounds_per_tick: u32,
}

impl RoundClock {
    /// Round `round` of `tick` counted over the run.
    pub fn global(&self, tick: Tick, round: u32) -> u64 {
        tick.0 as u64 * self.rounds_per_tick as u64 + round as u64
    }

    /// When round `g` (counted over the run) starts, microseconds.
    pub fn start_us(&self, g: u64) -> i64 {
        let r = self.rounds_per_tick.max(1) as i128;
        TRACE_START_US + (g as i128 * self.tick_us as i128 / r) as i64
    }

    /// The first round (counted over the run) that starts at or after `at_us`.
    pub fn first_at(&self, at_us: i64) -> u64 {
        let since = (at_us as i128 - TRACE_START_US as i128).max(0);
        let r = self.rounds_per_tick.max(1) as i128;
        let tick_us = self.tick_us.max(1) as i128;
        let g = (since * r + tick_us - 1) / tick_us;
        u64::try_from(g).unwrap_or(u64::MAX)
    }
}

/// The wake-ups asked for and not yet due: (round counted over the run, agent), earliest first.
#[derive(Debug, Clone, Default)]
pub struct WakeQueue {
    heap: BinaryHeap<Reverse<(u64, u32)>>,
}

impl WakeQueue {
    /// Adds a wake-up of `agent` in round `g`.
    pub fn push(&mut self, g: u64, agent: AgentIdx) {
        self.heap.push(Reverse((g, agent.0)));
    }

    /// Moves the agents due by round `g` into `out` (unordered, possibly repeated).
    fn take_due(&mut self, g: u64, out: &mut Vec<u32>) {
        while let Some(&Reverse((at, agent))) = self.heap.peek() {
            if at > g {
                break;
            }
            self.heap.pop();
            out.push(agent);
        }
    }

    /// Every pending wake-up, sorted (for snapshots).
    pub fn to_sorted(&self) -> Vec<(u64, u32)> {
        let mut all: Vec<(u64, u32)> = self.heap.iter().map(|r| r.0).collect();
        all.sort_unstable();
        all
    }

    /// The queue holding `wakes`.
    pub fn from_sorted(wakes: Vec<(u64, u32)>) -> WakeQueue {
        WakeQueue {
            heap: wakes.into_iter().map(Reverse).collect(),
        }
    }
}

/// Scratch of active rounds, kept across rounds.
#[derive(Debug, Default)]
pub struct ActiveScratch {
    active: Vec<u32>,
}

/// A work item: the index of its first agent, its agents' states and the active ones among them.
type WorkItem<'a, A> = (usize, &'a mut [A], &'a [u32]);

/// Runs one round under active stepping: steps the agents with messages in `mailbox` (sparse
/// form) or a wake-up due in `wakes`, applies their actions in agent order, leaves the messages
/// sent in `mailbox` (sparse form) and the wake-ups asked for in `wakes`.
#[allow(clippy::too_many_arguments)]
pub fn run_active_round<P: Policy>(
    policy: &mut P,
    cell: &mut Cell,
    agents: &mut [P::Agent],
    mailbox: &mut Mailbox<P::Msg>,
    scratch: &mut RoundScratch<P::Msg, P::Action>,
    (wakes, active_scratch): (&mut WakeQueue, &mut ActiveScratch),
    (tick, round, clock): (Tick, u32, RoundClock),
    (now_us, seed): (i64, u64),
    granularity: Granularity,
    counts: &mut MessageCounts,
    counters: &mut PolicyCounters,
) {
    let g = clock.global(tick, round);
    let active = &mut active_scratch.active;
    active.clear();
    wakes.take_due(g, active);
    active.retain(|&a| (a as usize) < agents.len());
    active.extend_from_slice(mailbox.receivers());
    active.sort_unstable();
    active.dedup();
    // The fixed chunks holding active agents, each with its slice of the agent table and of
    // the active list.
    let chunk = granularity.agents_per_chunk.max(1);
    let mut work: Vec<WorkItem<'_, P::Agent>> = Vec::new();
    let (mut rest, mut rest_base, mut i) = (&mut *agents, 0usize, 0usize);
    while i < active.len() {
        let c = active[i] as usize / chunk;
        let end = active[i..].partition_point(|&a| (a as usize) / chunk == c) + i;
        let (base, stop) = (c * chunk, ((c + 1) * chunk).min(rest_base + rest.len()));
        let taken = std::mem::take(&mut rest);
        let (_, from_base) = taken.split_at_mut(base - rest_base);
        let (states, after) = from_base.split_at_mut(stop - base);
        work.push((base, states, &active[i..end]));
        (rest, rest_base, i) = (after, stop, end);
    }
    let (kinds, used) = (policy.message_kinds().len(), work.len());
    scratch
        .chunks
        .resize_with(work.len().max(scratch.chunks.len()), ChunkOutput::default);
    {
        let ctx = StepCtx {
            cell,
            tick,
            round,
            now_us,
            seed,
        };
        let shared: &P = policy;
        let inbox: &Mailbox<P::Msg> = mailbox;
        crate::parallel_time::region(|| {
            work.into_par_iter()
                .zip(scratch.chunks.par_iter_mut())
                .with_max_len(1)
                .for_each(|((base, states, ids), output)| {
                    let ids = ids.iter().map(|&a| a as usize);
                    output.step((shared, &ctx, inbox), (states, base), ids, kinds);
                });
        });
    }
    let RoundScratch {
        chunks: outputs,
        spare,
        delayed,
    } = scratch;
    let outputs = &outputs[..used];
    for output in outputs {
        for (total, k) in counts.iter_mut().zip(&output.counted) {
            *total += k;
        }
        for &(agent, at_us) in &output.wakes {
            wakes.push(clock.first_at(at_us).max(g + 1), agent);
        }
        delayed.extend_from_slice(&output.delayed);
        policy.apply(cell, now_us, &output.actions, counters);
    }
    policy.end_round(cell, (tick, round), now_us);
    let sent = outputs.iter().flat_map(|o| o.messages.iter());
    spare.regroup_sparse(sent, agents.len());
    std::mem::swap(mailbox, spare);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_and_times_convert_both_ways() {
        // Ticks of 100 ms in 3 rounds: rounds start 33,333 µs apart (floored).
        let clock = RoundClock {
            tick_us: 100_000,
            rounds_per_tick: 3,
        };
        assert_eq!(clock.global(Tick(2), 1), 7);
        assert_eq!(clock.start_us(7) - TRACE_START_US, 233_333);
        for g in 0..50 {
            let start = clock.start_us(g);
            assert_eq!(clock.first_at(start), g, "a round's own start");
            assert_eq!(clock.first_at(start + 1), g + 1, "just after it");
        }
        assert_eq!(clock.first_at(0), 0, "before the window: the first round");
    }

    #[test]
    fn the_queue_gives_due_agents_and_round_trips() {
        let mut q = WakeQueue::default();
        q.push(5, AgentIdx(3));
        q.push(2, AgentIdx(9));
        q.push(5, AgentIdx(1));
        q.push(7, AgentIdx(3));
        let restored = WakeQueue::from_sorted(q.to_sorted());
        assert_eq!(restored.to_sorted(), [(2, 9), (5, 1), (5, 3), (7, 3)]);
        let mut due = Vec::new();
        q.take_due(5, &mut due);
        due.sort_unstable();
        assert_eq!(due, [1, 3, 9]);
        assert_eq!(q.to_sorted(), [(7, 3)]);
    }
}
