//! A broker agent (BA): its cache of node reports, the initial allocation of the pending tasks it
//! is given each tick (SIAS over the fit index or the matching nodes, then AllocationRequests in a
//! weighted order) and the candidates it returns for migrations (SRAS).
//!
//! Invariant: a pending task's asks depend only on the cache, its demand and its place in the
//! broker's assignment (it draws from a random stream of its own), never on the other tasks, so
//! the broker may score them in any order; it sends their requests in assignment order.

use rayon::prelude::*;

use super::*;
use crate::preload;
use crate::surge::{AGENT_BUFFER_BYTES, PeakWindow, release_surge};

use super::booking::Booking;
use crate::masb::protocol::MAX_INITIAL_ASKS;

/// A broker's offers scored as one parallel job ([`OfferBlock`]): ~0.3-0.5 ms of work.
const OFFERS_PER_BLOCK: usize = 256;

/// Most blocks a broker's offers are split into (larger blocks beyond that): each keeps its
/// buffers, and ~130k offers per broker in the 8x cell's first tick would otherwise make ~500.
const MAX_BLOCKS: usize = 64;

/// A broker's state. Its cache is the brokers' shared cache (`Masb::cache`, the reports every
/// broker has heard of by this round) with the reports it received itself this round laid
/// over it ([`BrokerCache`]): the others hear of those one round later. A snapshot stores its
/// asks in asking order, all drawn ([`Allocation::draws`]), as they are restored.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Broker {
    /// This round's own reports and what is derived from the cache (no state).
    #[serde(skip)]
    pub cache: BrokerCache,
    /// This tick's initial allocations, by slot. Answers name their slot, so finding one is
    /// O(1); cleared at each tick's first round.
    pub allocations: Vec<Allocation>,
    /// The nodes each allocation asks (`Allocation::next..end`), in asking order as far as
    /// they are drawn ([`Allocation::draws`]).
    pub asks: Vec<Recommendation>,
    /// The new tasks it sent out (first asks) that no report of their node has caught up
    /// with yet (`MasbConfig::book_asks`; empty without it), in node order, each node's in the
    /// order booked.
    pub booked: Vec<Booking>,
    /// Buffers of the migration requests it answers (no state).
    #[serde(skip)]
    pub migration: MigrationScratch,
    /// Buffers of its initial allocations (no state).
    #[serde(skip)]
    pub offers: OfferScratch,
}

/// The order a broker scores its new tasks in, and where each one's asks went.
#[derive(Debug, Clone, Default)]
pub struct OfferScratch {
    /// (window offset, or `u64::MAX` for a task without a window; place in the assignment),
    /// sorted.
    order: Vec<(u64, u32)>,
    /// Each task's asks in [`Broker::asks`] (start, end) and the stream the rest of their
    /// order is drawn from, by place in the assignment.
    pub(super) ranges: Vec<(u32, u32, Option<Rng>)>,
    /// The sampled decision logs of the tick's offers, by place in the assignment.
    pub(super) sampled_lines: Vec<(u32, String)>,
    /// The blocks the offers are scored in (kept at their peak number).
    blocks: Vec<OfferBlock>,
    /// The most offers of a tick lately: what the per-tick buffers keep room for.
    peak: PeakWindow,
    /// With `book_asks`: the cache as a tick's new tasks are scored on it, each booked in turn
    /// (`booking.rs`).
    pub(super) booked_view: Vec<CacheEntry>,
    /// With `book_asks`: the entries of the booked nodes a round lays over the cache.
    pub(super) laid: Vec<CacheEntry>,
}

/// A block of consecutive offers (in scoring order) scored as one job, on whichever thread is
/// free: the brokers' offers are most of a tick's first round, and a broker's are independent
/// of each other (module doc), so blocks spread them evenly over the threads. A block writes its
/// asks into its own region of the broker's [`Broker::asks`] (room for [`MAX_INITIAL_ASKS`] per
/// offer), which are closed up afterwards: the asks are stored once, never copied whole.
#[derive(Debug, Clone, Default)]
struct OfferBlock {
    /// Scoring buffers.
    scratch: ScoreScratch,
    /// Each offer's place in the assignment, its asks in the block's region (start, end) and
    /// the stream the rest of their order is drawn from (`None`: in asking order already).
    offers: Vec<(u32, u32, u32, Option<Rng>)>,
    /// The sampled decision logs of its offers, by place in the assignment.
    sampled_lines: Vec<(u32, String)>,
}

/// How a broker reads the cache in a round: the shared cache with its own reports of the round
/// laid over it, and the indexes over that cache (all pure caches, rebuilt on demand).
#[derive(Debug, Clone, Default)]
pub struct BrokerCache {
    /// Reports received this round (cleared at every step).
    pub fresh: Vec<CacheEntry>,
    /// The shared cache with `fresh` laid over it, when `fresh` is not empty and a selection
    /// reads the cache (`view_round` says for which round it is current).
    pub view: Vec<CacheEntry>,
    /// The global round `view` was built in.
    pub view_round: Option<u64>,
    /// Where unconstrained new tasks fit, rebuilt at a tick's first round when this broker has
    /// reports of its own then (else the policy's index over the shared cache serves).
    pub fit: FitIndex,
    /// Matching cache positions per constraint set, for the running tasks this broker finds
    /// migration candidates for (pending tasks read the policy's shared memo).
    pub memo: MatchMemo,
}

impl BrokerCache {
    /// The cache at global round `g`: `shared` alone, or with this round's own reports laid
    /// over it (built once per round, only when there are some).
    pub(super) fn entries<'s>(&'s mut self, shared: &'s [CacheEntry], g: u64) -> &'s [CacheEntry] {
        self.build_view(shared, g);
        current(&self.fresh, &self.view, shared)
    }

    /// Lays this round's own reports over `shared` into `view`, once per global round `g` (only
    /// when there are some).
    fn build_view(&mut self, shared: &[CacheEntry], g: u64) {
        if !self.fresh.is_empty() && self.view_round != Some(g) {
            self.view.clear();
            self.view.extend_from_slice(shared);
            for e in &self.fresh {
                CacheEntry::store(&mut self.view, *e);
            }
            self.view_round = Some(g);
        }
    }

    /// Rebuilds the fit index over the cache at global round `g`, at `now_s`.
    fn rebuild_fit(
        &mut self,
        ctx: &StepCtx<'_>,
        (shared, g): (&[CacheEntry], u64),
        now_s: f64,
        config: &MasbConfig,
    ) {
        let online = |n: NodeIdx| ctx.cell.nodes.is_online(n);
        self.build_view(shared, g);
        let entries = current(&self.fresh, &self.view, shared);
        self.fit.rebuild(entries, now_s, config, &online);
    }

    /// The cache as migration candidates for task `t` are selected from, with the nodes meeting
    /// its constraints from the shared memo when it holds them this tick, else this broker's.
    fn view_for<'s>(
        &'s mut self,
        ctx: &StepCtx<'s>,
        (shared, g): (&'s [CacheEntry], u64),
        shared_memo: &'s MatchMemo,
        t: TaskIdx,
    ) -> CacheView<'s> {
        let meets = |n: NodeIdx| ctx.cell.satisfies(n, t);
        let changes = |since| ctx.cell.attribute_changes_since(since);
        let attributes = (ctx.cell.attributes_epoch(), &changes as &dyn Fn(u64) -> _);
        self.build_view(shared, g);
        let set = (ctx.cell.constraint_set(t), ctx.cell.constraints_of(t));
        let nodes = ctx.cell.nodes.len();
        let matching = match shared_memo.used(set.0) {
            Some(positions) => Some(positions),
            None => self.memo.positions(attributes, set, nodes, &meets),
        };
        CacheView {
            entries: current(&self.fresh, &self.view, shared),
            matching: matching.map(|p| (p, ctx.cell.nodes.online())),
            fit: None,
            ok: None,
        }
    }

    /// The cache (as built for this round) as a pending task's initial allocation reads it,
    /// with the nodes meeting its constraints (`None`: it has none) and `fit`, the fit index
    /// over exactly these entries.
    fn initial_view<'s>(
        &'s self,
        ctx: &StepCtx<'s>,
        shared: &'s [CacheEntry],
        matching: Option<&'s [u32]>,
        fit: &'s FitIndex,
    ) -> CacheView<'s> {
        CacheView {
            entries: current(&self.fresh, &self.view, shared),
            matching: matching.map(|p| (p, ctx.cell.nodes.online())),
            fit: matching.is_none().then_some(fit),
            ok: Some(fit),
        }
    }
}

/// The cache a broker reads: `shared`, or `view` when it has reports of its own this round.
fn current<'s>(
    fresh: &[CacheEntry],
    view: &'s [CacheEntry],
    shared: &'s [CacheEntry],
) -> &'s [CacheEntry] {
    if fresh.is_empty() { shared } else { view }
}

/// The sampled decision log of one new task's offer (`None`: not sampled): the nodes scored
/// (`ranked`) and the asking order: its first ask drawn and the rest as they will be drawn from
/// `rng`, or, without one, `asks` as they are (in score order, [`crate::masb::InitialOrder`]).
pub(super) fn offer_sample(
    ctx: &StepCtx<'_>,
    me: AgentIdx,
    task: TaskIdx,
    demand: &Demand,
    (ranked, asks): (&[Recommendation], &[Recommendation]),
    rng: Option<&Rng>,
) -> Option<String> {
    if !sampled(ctx, 5_000, &[me.0 as u64, task.0 as u64, 2]) {
        return None;
    }
    let order = match rng {
        Some(rng) => {
            let (first, rest) = asks.split_at(asks.len().min(1));
            [first, &drawn_order(rest, rng)].concat()
        }
        None => asks.to_vec(),
    };
    let line = serde_json::json!({
        "kind": "initial_scoring", "tick": ctx.tick.0,
        "round": ctx.round, "broker": me.0,
        "task": task_json(ctx, task, demand),
        "scored": recs_json(ctx, ranked),
        "ask_order": recs_json(ctx, &order),
    });
    Some(line.to_string())
}

/// One initial allocation a broker runs in a tick.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Allocation {
    /// The task and its generation.
    pub task: (TaskIdx, u32),
    /// Its demand.
    pub demand: Demand,
    /// The next node to ask, in the broker's `asks`.
    pub next: u32,
    /// Past the last node to ask.
    pub end: u32,
    /// The random stream the asks from `next` on are still to be drawn from (they are then in
    /// ranking order, and each is drawn to the front when it is asked: [`draw_to_front`]);
    /// `None` when they are in asking order already (restored from a snapshot).
    #[serde(skip)]
    pub draws: Option<Rng>,
}

impl Broker {
    /// What handling message `e` first reads of this broker's state at a random place, folded
    /// into a value of no meaning ([`crate::preload`]): for an answer, the allocation it names
    /// and the first and last of its asks (random places in two large vectors); 0 otherwise.
    fn preload_answer(&self, e: &Envelope<Msg>) -> u32 {
        let ask = |i: u32| self.asks.get(i as usize).map_or(0, |r| r.node.0);
        match e.msg {
            Msg::AllocationAnswer { slot, .. } => self
                .allocations
                .get(slot as usize)
                .map_or(0, |a| a.task.1 ^ ask(a.next) ^ ask(a.end.saturating_sub(1))),
            _ => 0,
        }
    }
}

impl Allocation {
    /// The asks this allocation has yet to make, in asking order (`asks`: its broker's; the
    /// order drawn from a copy of its stream).
    pub fn asks_to_come(&self, asks: &[Recommendation]) -> Vec<Recommendation> {
        let rest = &asks[self.next as usize..self.end as usize];
        match &self.draws {
            Some(draws) => drawn_order(rest, draws),
            None => rest.to_vec(),
        }
    }
}

impl serde::Serialize for Broker {
    /// The allocations and the asks, the asks an allocation has yet to make put in asking order
    /// by drawing them from a copy of its stream (those of an allocation that ended stay in
    /// ranking order: they are never read), so a restored broker asks what this one would.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The fields the derived `Deserialize` reads, in its order.
        #[derive(serde::Serialize)]
        struct Stored<'a> {
            allocations: &'a [Allocation],
            asks: &'a [Recommendation],
            booked: &'a [Booking],
        }
        let mut asks = self.asks.clone();
        for a in self.allocations.iter().filter(|a| a.draws.is_some()) {
            asks[a.next as usize..a.end as usize].copy_from_slice(&a.asks_to_come(&self.asks));
        }
        let allocations = &self.allocations;
        Stored {
            allocations,
            asks: &asks,
            booked: &self.booked,
        }
        .serialize(s)
    }
}

impl Masb {
    /// A broker's round.
    pub(in crate::masb) fn broker_step(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        b: &mut Broker,
        samples: &mut Vec<String>,
        inbox: &[Envelope<Msg>],
        out: &mut Outbox<'_, Msg, Action>,
    ) {
        let mut rng = ctx.rng(me);
        let now_s = self.now_s(ctx);
        let g = self.global_round(ctx);
        // The reports due now (`reports.rs`: those of the round before, as the mailbox would
        // deliver them; at most one per node). A report updates this broker's cache now and
        // every other broker's a round later: the CacheShare messages of the protocol, counted,
        // delivered through the shared cache (`Reports::store_due`, after the round).
        b.cache.fresh.clear();
        for &entry in self.reports.due(me, g) {
            let newer = |c: &CacheEntry| entry.supersedes(c);
            if self.cache.get(entry.node.index()).is_none_or(newer) {
                b.cache.fresh.push(entry);
            }
            out.count_delivered(CACHE_SHARE_KIND, u64::from(self.brokers - 1));
        }
        self.lay_bookings(b, (now_s, g));
        // The other messages a batch at a time, what the answers read first (`preload`). Unset
        // cache entries (reported_s = -inf) and stale ones are skipped by the scans themselves.
        for batch in inbox.chunks(preload::BATCH) {
            preload::preload(batch, |e| b.preload_answer(e));
            for e in batch {
                self.broker_message(ctx, (me, b, samples), e, (now_s, g, &mut rng), out);
            }
        }
        if ctx.round == 0 {
            self.initial_allocations(ctx, me, b, samples, out);
        }
    }

    /// A broker's handling of one message of its inbox.
    fn broker_message(
        &self,
        ctx: &StepCtx<'_>,
        (me, b, samples): (AgentIdx, &mut Broker, &mut Vec<String>),
        e: &Envelope<Msg>,
        (now_s, g, rng): (f64, u64, &mut Rng),
        out: &mut Outbox<'_, Msg, Action>,
    ) {
        let shared = (&self.cache[..], g);
        match e.msg {
            Msg::AllocationAnswer {
                slot,
                task,
                generation,
                accepted,
            } => {
                let Some(a) = b
                    .allocations
                    .get_mut(slot as usize)
                    .filter(|a| a.task == (task, generation))
                else {
                    return;
                };
                if accepted || a.next >= a.end {
                    // Placed, or unplaceable now: pending, retried next tick.
                    a.next = a.end;
                    return;
                }
                if let Some(draws) = &mut a.draws {
                    draw_to_front(&mut b.asks[a.next as usize..a.end as usize], draws);
                }
                let node = b.asks[a.next as usize].node;
                a.next += 1;
                out.send(
                    self.agent_of(node),
                    Msg::AllocationRequest {
                        slot,
                        task,
                        generation,
                        demand: a.demand,
                    },
                );
            }
            Msg::GetCandidateNodesRequest {
                task,
                generation,
                demand,
                offload,
            } => {
                let source = self.node_of(e.from);
                let matches = |n: NodeIdx| Self::can_host(ctx, n, task);
                let recs = migration_candidates(
                    b.cache.view_for(ctx, shared, &self.memo, task),
                    (source, &demand, !offload),
                    (now_s, &self.config),
                    rng,
                    &matches,
                    &mut b.migration,
                );
                if sampled(ctx, 5_000, &[me.0 as u64, task.0 as u64, 1]) {
                    let line = serde_json::json!({
                        "kind": "candidate_scoring", "tick": ctx.tick.0, "round": ctx.round,
                        "broker": me.0,
                        "source_machine": ctx.cell.nodes.machine_id()[source.index()],
                        "task": task_json(ctx, task, &demand),
                        "cache_entries": b.cache.entries(shared.0, g).iter()
                            .filter(|c| c.reported_s.is_finite()).count(),
                        "candidates": recs_json(ctx, recs),
                    });
                    samples.push(line.to_string());
                }
                out.send(
                    e.from,
                    Msg::GetCandidateNodesResponse {
                        task,
                        generation,
                        candidates: CandidateList::new(recs),
                    },
                );
            }
            _ => {}
        }
    }

    /// A broker's initial allocations, at a tick's first round: every pending task it was given
    /// gets its ranked nodes ([`initial_asks`]) from a random stream of its own (stream `1 + i`
    /// of the broker's, `i` its place in the assignment), so the tasks' draws do not depend on
    /// each other and they are scored in the order of their windows' offsets in the fit index
    /// ([`window_offset`]; tasks without a window last): consecutive tasks then read
    /// overlapping cache entries instead of a cold window each (at 8x the 100k-entry cache
    /// does not fit in the CPU's caches), in blocks scored in parallel ([`OfferBlock`]). The
    /// requests are sent, and the allocations given their slots, in assignment order.
    fn initial_allocations(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        b: &mut Broker,
        samples: &mut Vec<String>,
        out: &mut Outbox<'_, Msg, Action>,
    ) {
        let now_s = self.now_s(ctx);
        let shared = (&self.cache[..], self.global_round(ctx));
        b.allocations.clear();
        b.asks.clear();
        // The policy's index over the shared cache, unless this broker reads its own reports
        // laid over it (or the index is not this round's).
        let own_fit = !b.cache.fresh.is_empty() || self.fit_at_s != Some(now_s);
        if own_fit && !self.config.book_asks {
            b.cache.rebuild_fit(ctx, shared, now_s, &self.config);
        }
        b.cache.memo.trim();
        let assigned = self.assigned.get(me.index()).map_or(&[][..], |v| &v[..]);
        // The first tick offers the whole initial cell: its room is given back afterwards.
        if let Some(most) = b.offers.peak.note(assigned.len()) {
            release_surge(&mut b.offers.order, most, AGENT_BUFFER_BYTES);
            release_surge(&mut b.offers.ranges, most, AGENT_BUFFER_BYTES);
            release_surge(&mut b.asks, most * MAX_INITIAL_ASKS, AGENT_BUFFER_BYTES);
            release_surge(&mut b.allocations, most, AGENT_BUFFER_BYTES);
        }
        b.offers.ranges.clear();
        b.offers.ranges.resize(assigned.len(), (0, 0, None));
        if self.config.book_asks {
            self.offer_in_turn(ctx, me, b, assigned);
        } else {
            self.score_offers(ctx, me, b, assigned, own_fit);
        }
        // The sampled decisions in assignment order, as the requests.
        let sampled_lines = &mut b.offers.sampled_lines;
        sampled_lines.sort_unstable_by_key(|l| l.0);
        samples.extend(sampled_lines.drain(..).map(|l| l.1));
        for (a, (start, end, draws)) in assigned.iter().zip(b.offers.ranges.drain(..)) {
            let Assigned { task, demand, .. } = *a;
            let (task, generation) = task;
            // `begin_tick` kept only live pending tasks, and nothing ran since.
            debug_assert!(Self::live(ctx, task, generation, TaskState::Pending));
            debug_assert!(demand == Self::demand(ctx.cell, task));
            if end > start {
                let slot = b.allocations.len() as u32;
                out.send(
                    self.agent_of(b.asks[start as usize].node),
                    Msg::AllocationRequest {
                        slot,
                        task,
                        generation,
                        demand,
                    },
                );
                b.allocations.push(Allocation {
                    task: (task, generation),
                    demand,
                    next: start + 1,
                    end,
                    draws,
                });
            }
        }
    }

    /// One new task's asks ([`initial_asks`], the best `initial_asks` on `view`) at `now_s`,
    /// drawn from its stream `rng`, into `out`: how many, and the stream, left where the rest
    /// of their order is drawn from (`None`: in asking order already, `initial_order = "score"`).
    pub(super) fn offer(
        &self,
        ctx: &StepCtx<'_>,
        (view, a): (CacheView<'_>, &Assigned),
        (now_s, mut rng): (f64, Rng),
        scratch: &mut ScoreScratch,
        out: &mut [Recommendation],
    ) -> (usize, Option<Rng>) {
        let matches = |n: NodeIdx| Self::can_host(ctx, n, a.task.0);
        let at = (now_s, &self.config);
        let count = initial_asks(
            view,
            &a.demand,
            at,
            &mut rng,
            &matches,
            self.config.initial_asks as usize,
            scratch,
            out,
        );
        let weighted = self.config.initial_order == InitialOrder::Weighted;
        (count, weighted.then_some(rng))
    }

    /// Scores the offers of `assigned` (in the order of their windows, in blocks in parallel:
    /// [`Masb::initial_allocations`]) on the broker's cache as it is this round, putting their
    /// asks in `b.asks` and noting where they went in `b.offers.ranges`.
    fn score_offers(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        b: &mut Broker,
        assigned: &[Assigned],
        own_fit: bool,
    ) {
        let now_s = self.now_s(ctx);
        let shared = (&self.cache[..], self.global_round(ctx));
        let streams = ctx.streams(me);
        let stream_of = |i: usize| Rng::new(streams, 1 + i as u64);
        let cache = &b.cache;
        let fit = if own_fit { &cache.fit } else { &self.fit };
        let view_of = |set: Option<u32>| {
            cache.initial_view(ctx, shared.0, set.map(|i| self.memo.set(i)), fit)
        };
        let OfferScratch {
            order,
            ranges,
            sampled_lines,
            blocks,
            ..
        } = &mut b.offers;
        order.clear();
        order.extend(assigned.iter().enumerate().map(|(i, a)| {
            let offset = window_offset(&view_of(a.set), &mut stream_of(i));
            (offset.map_or(u64::MAX, |o| o as u64), i as u32)
        }));
        order.sort_unstable();
        // Blocks of offers scored in parallel, each writing its asks into its region of
        // `b.asks`; the regions then closed up in block order, which is the scoring order:
        // `asks` and `ranges` are as if scored one after another.
        let per_block = OFFERS_PER_BLOCK.max(order.len().div_ceil(MAX_BLOCKS));
        let blocks_used = order.len().div_ceil(per_block);
        if blocks.len() < blocks_used {
            blocks.resize_with(blocks_used, OfferBlock::default);
        }
        let unset = Recommendation {
            node: NodeIdx::NONE,
            score: 0.0,
            forced: false,
        };
        b.asks.resize(order.len() * MAX_INITIAL_ASKS, unset);
        crate::parallel_time::region(|| {
            order
                .par_chunks(per_block)
                .zip(b.asks.par_chunks_mut(per_block * MAX_INITIAL_ASKS))
                .zip(blocks[..blocks_used].par_iter_mut())
                .with_max_len(1)
                .for_each(|((order, region), block)| {
                    let OfferBlock {
                        scratch,
                        offers,
                        sampled_lines,
                    } = block;
                    offers.clear();
                    let mut used = 0;
                    // In window order the assignment is read at random places: a batch of it
                    // loaded first (`preload`), then its tasks offered.
                    for batch in order.chunks(preload::BATCH) {
                        preload::preload(batch, |&(_, i)| assigned[i as usize].task.1);
                        for &(_, i) in batch {
                            let a = &assigned[i as usize];
                            let (task, demand) = (a.task, a.demand);
                            let (count, rng) = self.offer(
                                ctx,
                                (view_of(a.set), a),
                                (now_s, stream_of(i as usize)),
                                scratch,
                                &mut region[used..],
                            );
                            let asks = &region[used..used + count];
                            let ranked = (scratch.ranked(), asks);
                            if let Some(line) =
                                offer_sample(ctx, me, task.0, &demand, ranked, rng.as_ref())
                            {
                                sampled_lines.push((i, line));
                            }
                            offers.push((i, used as u32, (used + count) as u32, rng));
                            used += count;
                        }
                    }
                });
        });
        let mut closed = 0;
        for (k, block) in blocks[..blocks_used].iter_mut().enumerate() {
            let (region, used) = (
                k * per_block * MAX_INITIAL_ASKS,
                block.offers.last().map_or(0, |o| o.2),
            );
            b.asks.copy_within(region..region + used as usize, closed);
            let base = closed as u32;
            for (i, start, end, rng) in block.offers.drain(..) {
                ranges[i as usize] = (base + start, base + end, rng);
            }
            sampled_lines.append(&mut block.sampled_lines);
            closed += used as usize;
        }
        b.asks.truncate(closed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allocation(next: u32, end: u32, draws: Option<Rng>) -> Allocation {
        let demand = Demand {
            cpu_req: 0.1,
            mem_req: 0.1,
            cpu_use: 0.0,
            mem_use: 0.0,
        };
        Allocation {
            task: (TaskIdx(next), 0),
            demand,
            next,
            end,
            draws,
        }
    }

    /// A broker's encoding holds every allocation's asks to come in asking order, so the restored
    /// broker (its asks no longer drawn) asks the same nodes in the same order, whether the asks
    /// are still to be drawn or were restored already.
    #[test]
    fn a_restored_broker_asks_what_the_original_would() {
        let asks: Vec<Recommendation> = (0..20)
            .map(|n| Recommendation {
                node: NodeIdx(n),
                score: 0.1 + f64::from(n % 7),
                forced: false,
            })
            .collect();
        let original = Broker {
            // Two asks made of the first ten; none of the second ten; one restored.
            allocations: vec![
                allocation(2, 10, Some(Rng::new(5, 1))),
                allocation(10, 18, Some(Rng::new(5, 2))),
                allocation(18, 20, None),
            ],
            asks,
            ..Broker::default()
        };
        let bytes = postcard::to_allocvec(&original).unwrap();
        let restored: Broker = postcard::from_bytes(&bytes).unwrap();
        for (a, r) in original.allocations.iter().zip(&restored.allocations) {
            assert!(r.draws.is_none());
            let to_come = a.asks_to_come(&original.asks);
            assert_eq!(to_come, r.asks_to_come(&restored.asks));
            assert_eq!(to_come.len(), (a.end - a.next) as usize);
        }
        // Drawn, not kept in ranking order: the second allocation's 8 asks come out reordered.
        let second = &original.allocations[1];
        assert_ne!(second.asks_to_come(&original.asks), original.asks[10..18]);
        // The asks made, and those of a restored allocation, are stored as they are.
        assert_eq!(restored.asks[..2], original.asks[..2]);
        assert_eq!(restored.asks[18..], original.asks[18..]);
    }
}
