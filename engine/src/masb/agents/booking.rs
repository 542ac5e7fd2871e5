//! A broker's bookings (`MasbConfig::book_asks`, not in seed 000, off by default): the new tasks
//! it sent out, counted in its own cache on the node each first asked until a report of that
//! node made after the booking arrives. With bookings a broker places its pending tasks one
//! after another, each scored on the cache with the tasks before it booked, instead of all of a
//! tick's on the same reports (which were made before the last tick's placements: in the burst
//! of a trace's t = 0 state every node reads empty for two ticks).
//!
//! Invariants: a booking holds the task's requests (what SIAS adds for a new task), made at the
//! start of the round that sent it; a report made at that same moment shows the node before the
//! task, so only a later one drops it (or the cache's time to live). Bookings are laid over the
//! cache as the broker's own reports of the round (`BrokerCache::fresh`), per node summed in
//! booking order, so every reading of the cache (initial and migration scoring) sees them; they
//! are broker state, saved in snapshots.

use super::broker::offer_sample;
use super::*;
use crate::masb::protocol::MAX_INITIAL_ASKS;

/// A new task a broker sent to a node, as its cache counts it on the node until a report made
/// after it arrives (`MasbConfig::book_asks`): the task's requests, what SIAS adds for it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Booking {
    /// The node asked.
    pub node: NodeIdx,
    /// CPU requested.
    pub cpu_req: f64,
    /// Memory requested.
    pub mem_req: f64,
    /// When it was booked (the start of the round that sent it), seconds of simulated time:
    /// a report made at that time shows the node before the task, one made later with it (or
    /// without it, refused).
    pub booked_s: f64,
}

/// Lays `bookings` (in node order, each node's in booking order) over the broker's cache as
/// reports of this round (`cache.fresh`): per node booked, the entry it reads now plus the
/// bookings' requests summed in their order (gathered in `laid`, a reused buffer). A view
/// already built for round `g` takes them too (no second copy of the cache).
fn lay_over(
    cache: &mut BrokerCache,
    bookings: &[Booking],
    laid: &mut Vec<CacheEntry>,
    (shared, g): (&[CacheEntry], u64),
) {
    let entries = cache.entries(shared, g);
    laid.clear();
    for k in bookings {
        match laid.last_mut() {
            Some(e) if e.node == k.node => *e = e.booked(k.cpu_req, k.mem_req),
            _ => laid.extend((entries.get(k.node.index())).map(|e| e.booked(k.cpu_req, k.mem_req))),
        }
    }
    let built = !cache.fresh.is_empty() && cache.view_round == Some(g);
    if built {
        for &e in laid.iter() {
            CacheEntry::store(&mut cache.view, e);
        }
    } else {
        cache.view_round = None;
    }
    cache.fresh.extend_from_slice(laid);
}

impl Masb {
    /// A broker's initial allocations with `book_asks`: its pending tasks one after another in
    /// assignment order, each scored on the cache with the first asks of the tasks before it
    /// booked ([`Booking`]: the node reads as holding the task's request), by a scan of its
    /// `initial_candidates` entries (no fit index: the bookings change the cache as it goes).
    /// The tick's bookings are then kept, and laid over the cache from the next round on
    /// ([`Masb::lay_bookings`]).
    pub(super) fn offer_in_turn(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        b: &mut Broker,
        assigned: &[Assigned],
    ) {
        let (now_s, g) = (self.now_s(ctx), self.global_round(ctx));
        let shared = &self.cache[..];
        let streams = ctx.streams(me);
        // The cache as scored, booked task by task (a reused buffer, not the cache itself).
        let mut entries = std::mem::take(&mut b.offers.booked_view);
        entries.clear();
        entries.extend_from_slice(b.cache.entries(shared, g));
        let online = ctx.cell.nodes.online();
        let unset = Recommendation {
            node: NodeIdx::NONE,
            score: 0.0,
            forced: false,
        };
        let (mut scratch, mut asks) = (ScoreScratch::default(), [unset; MAX_INITIAL_ASKS]);
        for (i, a) in assigned.iter().enumerate() {
            let Assigned { task, set, demand } = *a;
            let view = CacheView {
                entries: &entries,
                matching: set.map(|k| (self.memo.set(k), online)),
                fit: None,
                ok: None,
            };
            let stream = Rng::new(streams, 1 + i as u64);
            let (count, rng) = self.offer(ctx, (view, a), (now_s, stream), &mut scratch, &mut asks);
            if let Some(line) = offer_sample(
                ctx,
                me,
                task.0,
                &demand,
                (scratch.ranked(), &asks[..count]),
                rng.as_ref(),
            ) {
                b.offers.sampled_lines.push((i as u32, line));
            }
            let start = b.asks.len() as u32;
            b.asks.extend_from_slice(&asks[..count]);
            b.offers.ranges[i] = (start, start + count as u32, rng);
            if let Some(first) = asks[..count].first() {
                let booking = Booking {
                    node: first.node,
                    cpu_req: demand.cpu_req,
                    mem_req: demand.mem_req,
                    booked_s: now_s,
                };
                let e = &mut entries[first.node.index()];
                *e = e.booked(booking.cpu_req, booking.mem_req);
                b.booked.push(booking);
            }
        }
        b.offers.booked_view = entries;
        // In node order (stably: each node's in booking order) for `lay_bookings`, once a tick.
        // Nothing reads the cache after this in the round (`broker_step`), so the new bookings
        // are laid over it from the next round on.
        b.booked.sort_by_key(|k| k.node);
    }

    /// Drops the bookings a report has caught up with (one made after the booking, in the
    /// broker's cache at global round `g`) or older than the cache's time to live, and lays the
    /// rest over the broker's cache as reports of this round: the node as last reported, plus
    /// its booked tasks' requests.
    pub(super) fn lay_bookings(&self, b: &mut Broker, (now_s, g): (f64, u64)) {
        if b.booked.is_empty() {
            return;
        }
        let shared = &self.cache[..];
        let ttl_s = self.config.cache_ttl_s as f64;
        let mut kept = std::mem::take(&mut b.booked);
        let entries = b.cache.entries(shared, g);
        kept.retain(|k| {
            let caught_up = (entries.get(k.node.index())).is_none_or(|e| e.reported_s > k.booked_s);
            !caught_up && now_s - k.booked_s <= ttl_s
        });
        lay_over(&mut b.cache, &kept, &mut b.offers.laid, (shared, g));
        b.booked = kept;
    }
}
