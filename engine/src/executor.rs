//! The round executor: a parallel sweep over agents, messages grouped by destination for the next
//! round.
//!
//! Agents are stepped in work items: the policy's heavy agents ([`Policy::heavy_agents`], e.g.
//! MASB's brokers) one each, the rest in fixed chunks of [`Granularity::agents_per_chunk`], every
//! item its own rayon job (`with_max_len(1)`: rayon's adaptive splitting would otherwise run
//! neighbouring items, such as two brokers, one after the other on one thread; work stealing
//! balances the jobs: most agents are idle, a few run expensive searches). Each item
//! writes to its own buffers; the buffers are read in agent order, so the result is the same for
//! any thread count and any chunking. Grouping is a stable counting sort by destination, so an
//! inbox lists messages in sender order; the run loop then puts each inbox in a fair order
//! drawn from the seed and the round ([`Mailbox::shuffle_inboxes`]), so no sender wins a tie by
//! its index.

use ingest::rng::hash_keys;
use rayon::prelude::*;

use crate::cell::Cell;
use crate::csr::Grouping;
use crate::ids::{AgentIdx, Tick};
use crate::policy::{Envelope, Outbox, Policy, PolicyCounters, StepCtx};
use crate::surge::{AGENT_BUFFER_BYTES, PeakWindow, release_surge};
use crate::ties::tie_key;

/// The key of a round's fair inbox order ([`Mailbox::shuffle_inboxes`]): the run's seed and the
/// round counted over the run ([`crate::active::RoundClock::global`]).
pub fn fair_order_key(seed: u64, global_round: u64) -> u64 {
    // A constant apart from the agents' streams (`StepCtx::streams` hashes agent, tick, round).
    const INBOX_ORDER: u64 = 0x1b0c_5e7d_0a11_f00d;
    hash_keys(seed, &[INBOX_ORDER, global_round])
}

/// Inboxes per parallel work item of [`Mailbox::shuffle_inboxes`].
const INBOXES_PER_SHUFFLE: usize = 4096;

/// Parallelism knobs.
#[derive(Debug, Clone, Copy)]
pub struct Granularity {
    /// Agents per parallel work item.
    pub agents_per_chunk: usize,
}

impl Default for Granularity {
    fn default() -> Self {
        Granularity {
            agents_per_chunk: 1024,
        }
    }
}

/// Messages grouped by receiver, in one of two forms. Dense (every agent stepped each round):
/// `messages[offsets[a]..offsets[a + 1]]` is agent `a`'s inbox, and the first `offsets[last]`
/// entries of `messages` are the messages held (the entries beyond are left over from larger
/// groupings, kept so that a grouping writes into initialised slots). Sparse (active stepping,
/// `active.rs`): `receivers` lists the agents with messages in ascending order, `starts[i]..
/// starts[i + 1]` is the inbox of `receivers[i]`, and `messages` holds exactly the messages: its
/// cost follows the messages, not the agents.
#[derive(Debug, Clone)]
pub struct Mailbox<M> {
    messages: Vec<Envelope<M>>,
    offsets: Vec<u32>,
    /// Scratch: the grouping's buffers.
    grouping: Grouping<Envelope<M>>,
    /// Sparse form: the agents with messages, ascending (empty in the dense form).
    receivers: Vec<u32>,
    /// Sparse form: where each receiver's messages start, and the end (empty in the dense form).
    starts: Vec<u32>,
    /// The most it held (or was to make room for) over its recent rounds: what
    /// [`Mailbox::release_surge`] keeps. A tick's first round carries most of its messages (at
    /// 8x ~16x its later rounds'), so measured round by round the room was given back and grown
    /// again every tick.
    peak: PeakWindow,
}

/// A round buffer holding room for more than this many bytes gives back what a surge left
/// ([`crate::surge`]; at 8x the first tick's ~2M messages in one round held ~370 MB in the two
/// mailboxes for the rest of the run).
const SURGE_BYTES: usize = 16 << 20;

impl<M: Copy + Send + Sync> Mailbox<M> {
    /// An empty mailbox for `agents` agents.
    pub fn new(agents: usize) -> Mailbox<M> {
        Mailbox {
            messages: Vec::new(),
            offsets: vec![0; agents + 1],
            grouping: Grouping::default(),
            receivers: Vec::new(),
            starts: Vec::new(),
            peak: PeakWindow::default(),
        }
    }

    /// Notes a round's need (the messages it holds, at least `expected`); once per window
    /// ([`PeakWindow`]) gives back the room its buffers kept from a surge of messages
    /// ([`release_surge`] over [`SURGE_BYTES`]) beyond the window's peak.
    pub(crate) fn release_surge(&mut self, expected: usize) {
        if let Some(used) = self.peak.note(self.len().max(expected)) {
            release_surge(&mut self.messages, used, SURGE_BYTES);
            self.grouping.release_surge(used, SURGE_BYTES);
        }
    }

    /// Agent `a`'s messages in sender order.
    pub fn inbox(&self, a: usize) -> &[Envelope<M>] {
        if !self.starts.is_empty() {
            return match self.receivers.binary_search(&(a as u32)) {
                Ok(i) => &self.messages[self.starts[i] as usize..self.starts[i + 1] as usize],
                Err(_) => &[],
            };
        }
        match (self.offsets.get(a), self.offsets.get(a + 1)) {
            (Some(&s), Some(&e)) => &self.messages[s as usize..e as usize],
            _ => &[],
        }
    }

    /// Every message held, grouped by receiver.
    pub fn messages(&self) -> &[Envelope<M>] {
        &self.messages[..self.len()]
    }

    /// Messages held.
    pub fn len(&self) -> usize {
        match self.starts.last() {
            Some(&n) => n as usize,
            None => self.offsets.last().map_or(0, |&n| n as usize),
        }
    }

    /// The agents with messages, ascending (sparse form only; empty in the dense form).
    pub fn receivers(&self) -> &[u32] {
        &self.receivers
    }

    /// Groups `sent` by receiver (stable) in the sparse form; messages to agents beyond
    /// `agents` are dropped.
    pub fn group_sparse(sent: &[Envelope<M>], agents: usize) -> Mailbox<M> {
        let mut mailbox = Mailbox::new(0);
        mailbox.regroup_sparse(sent.iter(), agents);
        mailbox
    }

    /// Groups `sent` by receiver: sparse for active stepping, dense otherwise.
    pub fn group_as(sparse: bool, sent: &[Envelope<M>], agents: usize) -> Mailbox<M> {
        if sparse {
            Mailbox::group_sparse(sent, agents)
        } else {
            Mailbox::group(sent, agents)
        }
    }

    /// Groups the messages `sent` yields into `self` in the sparse form, by receiver (a stable
    /// sort: an inbox lists messages in the order sent), reusing its buffers; messages to agents
    /// beyond `agents` are dropped.
    pub(crate) fn regroup_sparse<'m>(
        &mut self,
        sent: impl Iterator<Item = &'m Envelope<M>>,
        agents: usize,
    ) where
        M: 'm,
    {
        self.messages.clear();
        self.messages
            .extend(sent.filter(|e| e.to.index() < agents).copied());
        self.messages.sort_by_key(|e| e.to.0);
        self.offsets.clear();
        self.receivers.clear();
        self.starts.clear();
        for (i, e) in self.messages.iter().enumerate() {
            if self.receivers.last() != Some(&e.to.0) {
                self.receivers.push(e.to.0);
                self.starts.push(i as u32);
            }
        }
        self.starts.push(self.messages.len() as u32);
    }

    /// Puts every inbox in an order that favours no sender index: the senders of an inbox are
    /// ordered by a key drawn from `draw` (the run's seed and the round, [`fair_order_key`]), the
    /// receiver and the sender, and each sender's messages keep the order it sent them in (a
    /// stable sort). The same for any thread count and across a resume, as `draw` is. Without
    /// it, a receiver that takes the first of several equal offers (Sparrow's master binding a
    /// task to the first worker that confirmed) would favour the lowest-numbered sender, as a
    /// grouping by receiver lists senders in index order.
    ///
    /// Hot path (every round): one hash per inbox of two or more senders, a multiply-mix per
    /// comparison, and an in-place stable sort (no allocation for the short inboxes a round
    /// holds; a long one sorts with the standard library's buffer).
    pub fn shuffle_inboxes(&mut self, draw: u64) {
        let shuffle = |inbox: &mut [Envelope<M>]| {
            let Some(first) = inbox.first() else { return };
            if inbox.iter().all(|e| e.from == first.from) {
                return;
            }
            let receiver = tie_key(draw, u64::from(first.to.0));
            inbox.sort_by_key(|e| tie_key(receiver, u64::from(e.from.0)));
        };
        let len = self.len();
        let bounds = match self.starts.is_empty() {
            true => &self.offsets[..],
            false => &self.starts[..],
        };
        // Blocks of inboxes, each its own slice of the messages, shuffled in parallel.
        let mut blocks = Vec::with_capacity(bounds.len().div_ceil(INBOXES_PER_SHUFFLE));
        let mut rest = &mut self.messages[..len];
        for block in (0..bounds.len().saturating_sub(1)).step_by(INBOXES_PER_SHUFFLE) {
            let ends = &bounds[block..(block + INBOXES_PER_SHUFFLE + 1).min(bounds.len())];
            let (first, last) = (ends[0], ends[ends.len() - 1]);
            let (messages, after) = std::mem::take(&mut rest).split_at_mut((last - first) as usize);
            rest = after;
            blocks.push((ends, first, messages));
        }
        crate::parallel_time::region(|| {
            blocks.into_par_iter().for_each(|(ends, first, messages)| {
                for w in ends.windows(2) {
                    shuffle(&mut messages[(w[0] - first) as usize..(w[1] - first) as usize]);
                }
            })
        });
    }

    /// True when no messages are held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Groups `sent` by receiver (stable); messages to agents beyond `agents` are dropped.
    pub fn group(sent: &[Envelope<M>], agents: usize) -> Mailbox<M> {
        let mut mailbox = Mailbox::new(agents);
        mailbox.regroup((1, |_| sent.iter().map(|e| (e.to.index(), e))), agents);
        mailbox
    }

    /// Groups the messages of `parts` ordered parts (`items(p)` yields part `p`'s with their
    /// receivers) into `self` by receiver (stable), reusing its buffers; messages to agents
    /// beyond `agents` are dropped. A counting sort over the pool (`csr.rs`): `items` is called
    /// up to three times per part and must yield the same messages each time.
    fn regroup<'m, I>(&mut self, (parts, items): (usize, impl Fn(usize) -> I + Sync), agents: usize)
    where
        M: 'm,
        I: Iterator<Item = (usize, &'m Envelope<M>)>,
    {
        self.receivers.clear();
        self.starts.clear();
        let (offsets, grouping) = (&mut self.offsets, &mut self.grouping);
        let messages = &mut self.messages;
        crate::csr::group_by_key(agents, (parts, items), offsets, grouping, messages);
    }
}

/// What one chunk of agents produced in a round: messages, their receivers (in message order:
/// the grouping's passes over keys read these 4-byte entries, not the messages), actions tagged
/// with their agent, and its messages counted per kind (sent and [`Outbox::count_delivered`]).
pub(crate) struct ChunkOutput<M, A> {
    pub(crate) messages: Vec<Envelope<M>>,
    pub(crate) receivers: Vec<u32>,
    pub(crate) actions: Vec<(AgentIdx, A)>,
    pub(crate) counted: Vec<u64>,
    /// Wake-ups asked for ([`Outbox::wake_at`]).
    pub(crate) wakes: Vec<(AgentIdx, i64)>,
    /// Messages sent with a delivery time ([`Outbox::send_at`]).
    pub(crate) delayed: Vec<(Envelope<M>, crate::policy::Due)>,
    /// The most messages over the recent rounds (what [`Self::release_surge`] keeps) ...
    messages_peak: PeakWindow,
    /// ... and the most actions.
    actions_peak: PeakWindow,
}

impl<M, A> Default for ChunkOutput<M, A> {
    fn default() -> Self {
        ChunkOutput {
            messages: Vec::new(),
            receivers: Vec::new(),
            actions: Vec::new(),
            counted: Vec::new(),
            wakes: Vec::new(),
            delayed: Vec::new(),
            messages_peak: PeakWindow::default(),
            actions_peak: PeakWindow::default(),
        }
    }
}

impl<M, A> ChunkOutput<M, A> {
    /// Steps the agents `ids` (ascending; agent `a`'s state is `states[a - base]`) into this
    /// output, cleared first, and counts their messages per kind (`kinds` of them). First notes
    /// the last step's need and gives back a surge's room ([`Self::release_surge`]): here, on
    /// the step's thread, not after the round on the run's (at 8x ~5 % of MASB's one-thread
    /// time was chunks' buffers shrunk one after the other).
    pub(crate) fn step<P>(
        &mut self,
        (policy, ctx, inbox): (&P, &StepCtx<'_>, &Mailbox<M>),
        (states, base): (&mut [P::Agent], usize),
        ids: impl Iterator<Item = usize>,
        kinds: usize,
    ) where
        P: Policy<Msg = M, Action = A>,
        M: Copy + Send + Sync,
    {
        self.release_surge();
        let ChunkOutput {
            messages,
            receivers,
            actions,
            counted,
            wakes,
            delayed,
            messages_peak: _,
            actions_peak: _,
        } = self;
        messages.clear();
        actions.clear();
        wakes.clear();
        delayed.clear();
        counted.clear();
        counted.resize(kinds, 0);
        for a in ids {
            let (me, state) = (AgentIdx(a as u32), &mut states[a - base]);
            let mut out = Outbox {
                from: me,
                messages,
                actions,
                delivered: counted,
                wakes,
                delayed,
            };
            policy.step(ctx, me, state, inbox.inbox(a), &mut out);
        }
        receivers.clear();
        receivers.extend(messages.iter().map(|e| e.to.0));
        let sent = messages.iter().chain(delayed.iter().map(|(e, _)| e));
        for e in sent {
            if let Some(k) = counted.get_mut(policy.message_kind(&e.msg)) {
                *k += 1;
            }
        }
    }

    /// The messages with their receivers.
    pub(crate) fn sent(&self) -> impl Iterator<Item = (usize, &Envelope<M>)> {
        let receivers = self.receivers.iter().map(|&to| to as usize);
        receivers.zip(&self.messages)
    }

    /// Gives back the room its buffers kept from a surge ([`crate::surge`]; a chunk is one
    /// heavy agent or a few hundred others, so its threshold is lower than the mailbox's), once
    /// per window, against the window's peak: a broker's actions swing every tick (its
    /// placements at the first round), and keeping only this round's need regrew them each tick.
    fn release_surge(&mut self) {
        if let Some(used) = self.messages_peak.note(self.messages.len()) {
            release_surge(&mut self.messages, used, AGENT_BUFFER_BYTES);
            release_surge(&mut self.receivers, used, AGENT_BUFFER_BYTES);
        }
        if let Some(used) = self.actions_peak.note(self.actions.len()) {
            release_surge(&mut self.actions, used, AGENT_BUFFER_BYTES);
        }
    }
}

/// Per-tick message counts per kind.
pub type MessageCounts = Vec<u64>;

/// Buffers a run keeps across rounds, so a round allocates nothing once they have grown (SPEC
/// 5.2): each chunk's message, action and count buffers and the spare mailbox the next round's
/// messages are grouped into. After a surge they give back what the rounds since no longer
/// need ([`release_surge`]); a later surge grows them again.
pub struct RoundScratch<M, A> {
    pub(crate) chunks: Vec<ChunkOutput<M, A>>,
    pub(crate) spare: Mailbox<M>,
    /// The round's messages sent with a delivery time, in agent order, for the run's delay
    /// queue (`delay.rs`) to take.
    pub(crate) delayed: Vec<(Envelope<M>, crate::policy::Due)>,
}

impl<M, A> RoundScratch<M, A> {
    /// Takes the last round's messages sent with a delivery time (what the run's delay queue
    /// takes; for a harness that runs rounds itself).
    pub fn take_delayed(&mut self) -> Vec<(Envelope<M>, crate::policy::Due)> {
        std::mem::take(&mut self.delayed)
    }
}

impl<M: Copy + Send + Sync, A> Default for RoundScratch<M, A> {
    fn default() -> Self {
        RoundScratch {
            chunks: Vec::new(),
            spare: Mailbox::new(0),
            delayed: Vec::new(),
        }
    }
}

/// Runs one round: steps every agent on the messages in `mailbox`, applies the actions, and
/// leaves the messages sent in `mailbox` for the next round.
#[allow(clippy::too_many_arguments)]
pub fn run_round<P: Policy>(
    policy: &mut P,
    cell: &mut Cell,
    agents: &mut [P::Agent],
    mailbox: &mut Mailbox<P::Msg>,
    scratch: &mut RoundScratch<P::Msg, P::Action>,
    tick: Tick,
    round: u32,
    now_us: i64,
    seed: u64,
    granularity: Granularity,
    counts: &mut MessageCounts,
    counters: &mut PolicyCounters,
) {
    // The policy's heavy agents (e.g. MASB's brokers) one per work item, so they spread over
    // threads; the rest in fixed chunks. Chunking never changes the result (module doc).
    let chunk = granularity.agents_per_chunk.max(1);
    let heavy = policy.heavy_agents().min(agents.len());
    let chunks = heavy + (agents.len() - heavy).div_ceil(chunk);
    // Work item c starts at agent c (heavy) or heavy + (c - heavy) * chunk.
    let base = |c: usize| {
        if c < heavy {
            c
        } else {
            heavy + (c - heavy) * chunk
        }
    };
    let kinds = policy.message_kinds().len();
    scratch.chunks.resize_with(chunks, ChunkOutput::default);
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
        let (first, rest) = agents.split_at_mut(heavy);
        crate::parallel_time::region(|| {
            first
                .par_chunks_mut(1)
                .chain(rest.par_chunks_mut(chunk))
                .zip(scratch.chunks.par_iter_mut())
                .enumerate()
                .with_max_len(1)
                .for_each(|(c, (states, output))| {
                    let ids = base(c)..base(c) + states.len();
                    output.step((shared, &ctx, inbox), (states, base(c)), ids, kinds);
                });
        });
    }
    for output in &scratch.chunks[..chunks] {
        for (total, k) in counts.iter_mut().zip(&output.counted) {
            *total += k;
        }
        scratch.delayed.extend_from_slice(&output.delayed);
    }
    // The actions change the cell, the grouping reads only the chunks' messages: side by side
    // (the grouping over the threads the actions leave, `csr.rs`). The chunks' actions are
    // applied chunk by chunk, in agent order (not copied into one list).
    let RoundScratch {
        chunks: outputs,
        spare,
        ..
    } = scratch;
    let (outputs, agent_count) = (&outputs[..chunks], agents.len());
    rayon::join(
        || {
            for output in outputs {
                policy.apply(cell, now_us, &output.actions, counters);
            }
            policy.end_round(cell, (tick, round), now_us);
        },
        || spare.regroup((outputs.len(), |p| outputs[p].sent()), agent_count),
    );
    std::mem::swap(mailbox, &mut scratch.spare);
    // The spare now holds the messages this round delivered; the next grouping into it needs
    // room for the messages just sent, which `mailbox` holds.
    scratch.spare.release_surge(mailbox.len());
    mailbox.release_surge(0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surge::{SURGE_FACTOR, WINDOW_NOTES};

    /// Against grouping by filtering, over several parts: every receiver's messages in part
    /// order then sender order, receivers out of range dropped, whatever the split between the
    /// two threads falls on (all messages to one receiver, none, the last agent only); a mailbox
    /// regrouped after holding more messages shows only the new ones.
    #[test]
    fn regrouping_parts_matches_filtering() {
        let mut r = ingest::rng::Rng::new(3, 0);
        let mut mailbox = Mailbox::new(0);
        let agents = 40;
        for case in 0..60u32 {
            let parts: Vec<Vec<Envelope<u32>>> = (0..r.below(5))
                .map(|_| {
                    (0..r.below(300))
                        .map(|i| {
                            let to = match case % 4 {
                                0 => r.below(agents as u64 + 3) as u32,
                                1 => 7,
                                2 => agents as u32 - 1,
                                _ => (r.below(3) * 19) as u32,
                            };
                            Envelope {
                                from: AgentIdx(case),
                                to: AgentIdx(to),
                                msg: i as u32,
                            }
                        })
                        .collect()
                })
                .collect();
            let part = |p: usize| parts[p].iter().map(|e| (e.to.index(), e));
            mailbox.regroup((parts.len(), part), agents);
            let all: Vec<Envelope<u32>> = parts.iter().flatten().copied().collect();
            let mut expected_all = Vec::new();
            for a in 0..agents {
                let expected: Vec<_> = all.iter().filter(|e| e.to.index() == a).copied().collect();
                assert_eq!(mailbox.inbox(a), &expected[..], "case {case}, agent {a}");
                expected_all.extend(expected);
            }
            assert_eq!(mailbox.messages(), &expected_all[..]);
            assert_eq!(mailbox.len(), expected_all.len());
            assert!(mailbox.inbox(agents).is_empty());
        }
    }

    /// After a surge (the first tick's placements), a mailbox gives back what a window of
    /// rounds no longer needed (at the window's end, not before) and groups as before, small or
    /// surging again; under [`SURGE_BYTES`], or when the window used an eighth or more of it, a
    /// buffer is kept whole.
    #[test]
    fn a_surge_of_messages_is_given_back_and_grouping_stays_exact() {
        let sent = |n: usize| -> Vec<Envelope<u64>> {
            (0..n)
                .map(|i| Envelope {
                    from: AgentIdx(0),
                    to: AgentIdx((i * 7 % 40) as u32),
                    msg: i as u64,
                })
                .collect()
        };
        let check = |mailbox: &Mailbox<u64>, sent: &[Envelope<u64>]| {
            for a in [0, 7, 39] {
                let expected: Vec<_> = sent.iter().filter(|e| e.to.index() == a).collect();
                let got: Vec<_> = mailbox.inbox(a).iter().collect();
                assert_eq!(got, expected, "agent {a}");
            }
            assert_eq!(mailbox.len(), sent.len());
        };
        let size = std::mem::size_of::<Envelope<u64>>();
        let surge = SURGE_BYTES / size + 100_000;
        let mut mailbox = Mailbox::new(0);
        for n in [surge, 1_000, surge, SURGE_BYTES / size / 2, 3] {
            let messages = sent(n);
            mailbox.regroup((1, |_| messages.iter().map(|e| (e.to.index(), e))), 40);
            let before = mailbox.messages.capacity();
            // A window of rounds with this need: only its last gives back.
            for round in 1..=WINDOW_NOTES {
                mailbox.release_surge(0);
                if round < WINDOW_NOTES {
                    assert_eq!(mailbox.messages.capacity(), before, "round {round}");
                }
            }
            let after = mailbox.messages.capacity();
            if before * size > SURGE_BYTES && before > SURGE_FACTOR * n {
                assert!(after <= 2 * n.max(1) + 16, "{before} -> {after} for {n}");
            } else {
                assert_eq!(after, before, "kept for {n}");
            }
            check(&mailbox, &messages);
        }
        let mut kept = vec![0u8; SURGE_BYTES + 1];
        release_surge(&mut kept, SURGE_BYTES / SURGE_FACTOR + 1, SURGE_BYTES);
        assert_eq!(kept.len(), SURGE_BYTES + 1, "used an eighth: kept");
        release_surge(&mut kept, 10, SURGE_BYTES);
        assert!(kept.len() == 10 && kept.capacity() <= 20 + 16);
    }

    #[test]
    fn grouping_is_stable_by_receiver() {
        let e = |from, to, msg| Envelope {
            from: AgentIdx(from),
            to: AgentIdx(to),
            msg,
        };
        let sent = [
            e(0, 2, 'a'),
            e(1, 0, 'b'),
            e(2, 2, 'c'),
            e(3, 1, 'd'),
            e(4, 0, 'e'),
            e(5, 9, 'x'),
        ];
        let mb = Mailbox::group(&sent, 3);
        let msgs = |a| mb.inbox(a).iter().map(|e| e.msg).collect::<String>();
        assert_eq!(
            (msgs(0), msgs(1), msgs(2)),
            ("be".into(), "d".into(), "ac".into())
        );
        assert_eq!(mb.len(), 5, "messages to unknown agents are dropped");
        assert!(mb.inbox(7).is_empty());
    }
}
