//! The instants of a tick, in time order (issue 59): Sparrow plays its protocol in exact time
//! rather than in the engine's rounds. At each instant that has something due, the agents
//! with items due are stepped once each (in the order of their first item), with every message
//! due to them then as their inbox; what they send is due one network delay later (the
//! DATACENTER's hand-over to a master at once: an instant of its own at the same time), and
//! what they ask of the cell is applied at that instant, so a task starts at the exact time its
//! assignment arrives.
//!
//! A task that ended within the tick freed its room in the cell when the replay applied it (at
//! the tick's start); its worker counts the room as taken until the task's own end time
//! (`held`), when it also hears `Finished` (step 8).
//!
//! Invariants: instants are visited in increasing time, none before the tick's start nor at or
//! after its end, and counted over the run (`instants`, saved: the agents' random streams are
//! keyed by it, so a run draws the same at any tick); items due at one instant keep their
//! posting order (an engine notice posted at a tick's start and a message sent within the tick
//! that fall due at the same microsecond are ordered by when they were posted); `held[n]` is the room of node `n`'s tasks that ended later in the tick than
//! the current instant (all zero between ticks).

use super::Sparrow;
use super::peer::Peer;
use super::protocol::Msg;
use super::timeline::Item;
use crate::cell::Cell;
use crate::greedy::fit::Amounts;
use crate::ids::{AgentIdx, NodeIdx, Tick};
use crate::policy::{Due, Envelope, Outbox, Policy, PolicyCounters, StepCtx};
use crate::replay::EndedTask;

/// A message delivered (the optional record kept for tests: [`Sparrow::record_deliveries`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delivery {
    /// When, microseconds.
    pub at_us: i64,
    /// Sender.
    pub from: u32,
    /// Receiver.
    pub to: u32,
    /// The message.
    pub msg: Msg,
}

/// Scratch of the instants (kept across ticks so nothing is allocated once grown).
#[derive(Debug, Default, Clone)]
pub(super) struct Scratch {
    due: Vec<Item>,
    /// Receivers in order of their first item.
    receivers: Vec<AgentIdx>,
    /// Each due item's receiver, as its position in `receivers` (u32::MAX: none).
    item_slot: Vec<u32>,
    /// The instant's messages grouped by receiver, in sending order within each: receiver
    /// `k`'s inbox is `mail[starts[k]..starts[k + 1]]` (one buffer, so a burst's capacity is
    /// kept once, not per receiver position; `group_by_receiver`).
    mail: Vec<Envelope<Msg>>,
    starts: Vec<u32>,
    grouping: crate::csr::Grouping<Envelope<Msg>>,
    /// Position of an agent in `receivers` (u32::MAX: none this instant).
    slot: Vec<u32>,
    sent: Vec<Envelope<Msg>>,
    delayed: Vec<(Envelope<Msg>, Due)>,
    wakes: Vec<(AgentIdx, i64)>,
    actions: Vec<(AgentIdx, super::Action)>,
    counted: Vec<u64>,
}

impl Sparrow {
    /// Sends `envelope`, due at `at_us` (counted as sent now).
    pub(super) fn post(&mut self, at_us: i64, envelope: Envelope<Msg>) {
        if let Some(c) = self.sent.get_mut(envelope.msg.kind()) {
            *c += 1;
        }
        self.timeline.push(at_us, Item::Message(envelope));
    }

    /// The room `ended` freed on its node, held until its end time, when its worker hears.
    pub(super) fn hold_until_end(&mut self, ended: &EndedTask, from_us: i64) {
        let n = ended.node.index();
        if n >= self.held.len() {
            self.held.resize(n + 1, [0; 4]);
        }
        for (h, f) in self.held[n].iter_mut().zip(ended.freed) {
            *h += f;
        }
        let at = ended.end_us.max(from_us);
        self.ending.push((at, ended.node, ended.freed));
        let to = super::agent_of(ended.node);
        self.post(
            at,
            Envelope {
                from: super::DATACENTER,
                to,
                msg: Msg::Finished,
            },
        );
    }

    /// Room node `n`'s worker counts as still taken by tasks ending later in the tick.
    pub(super) fn held(&self, n: NodeIdx) -> Amounts {
        self.held.get(n.index()).copied().unwrap_or([0; 4])
    }

    /// Releases the held room of the tasks ended by `at_us` (`ending` is latest first).
    fn release_ended(&mut self, at_us: i64) {
        while let Some(&(_, node, freed)) = self.ending.last().filter(|e| e.0 <= at_us) {
            for (h, f) in self.held[node.index()].iter_mut().zip(freed) {
                *h -= f;
            }
            self.ending.pop();
        }
    }

    /// Plays every instant before `end_us` (module doc).
    pub(super) fn play(
        &mut self,
        cell: &mut Cell,
        agents: &mut [Peer],
        (end_us, seed): (i64, u64),
        counters: &mut PolicyCounters,
    ) {
        // Latest end first: each instant pops what it releases (not a scan of the tick's ends).
        self.ending.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
        let mut s = std::mem::take(&mut self.scratch);
        let mut exchanges = std::mem::take(&mut self.exchanges);
        s.slot.resize(agents.len(), u32::MAX);
        s.counted.resize(self.sent.len(), 0);
        while let Some(at) = self.timeline.next_due().filter(|&at| at < end_us) {
            self.release_ended(at);
            s.due.clear();
            self.timeline.take_due_at(at, &mut s.due);
            self.round_us = at;
            s.group_by_receiver(agents.len());
            if let Some(log) = &mut self.deliveries {
                let delivered = s.due.iter().zip(&s.item_slot).filter(|d| *d.1 != u32::MAX);
                for e in delivered.filter_map(|d| d.0.message()) {
                    log.push(Delivery {
                        at_us: at,
                        from: e.from.0,
                        to: e.to.0,
                        msg: e.msg,
                    });
                }
            }
            // The agents' random streams follow the instants counted over the run, not the
            // ticks: the same draws at any tick.
            let instant = self.instants;
            let ctx = StepCtx {
                cell: &*cell,
                tick: Tick((instant >> 32) as u32),
                round: instant as u32,
                now_us: end_us,
                seed,
            };
            for (k, &a) in s.receivers.iter().enumerate() {
                let mut out = Outbox {
                    from: a,
                    messages: &mut s.sent,
                    actions: &mut s.actions,
                    delivered: &mut s.counted,
                    wakes: &mut s.wakes,
                    delayed: &mut s.delayed,
                };
                let inbox = &s.mail[s.starts[k] as usize..s.starts[k + 1] as usize];
                let agent = &mut agents[a.index()];
                self.step_agent(&ctx, a, agent, inbox, &mut out, &mut exchanges);
                s.slot[a.index()] = u32::MAX;
            }
            s.receivers.clear();
            // The exchanges due now were read (or their receiver was gone): their slots free.
            let named = s
                .due
                .iter()
                .filter_map(|item| item.message()?.msg.exchange());
            named.for_each(|id| exchanges.remove(id));
            for e in s.sent.drain(..) {
                self.post(at, e);
            }
            for (e, due) in s.delayed.drain(..) {
                let due_us = match due {
                    Due::At(t) => t.max(at),
                    Due::AfterRounds(_) => at,
                };
                self.post(due_us, e);
            }
            for (a, t) in s.wakes.drain(..) {
                self.timeline.push(t.max(at + 1), Item::Wake(a));
            }
            self.apply(cell, at, &s.actions, counters);
            s.actions.clear();
            self.instants += 1;
        }
        for (c, n) in self.sent.iter_mut().zip(&mut s.counted) {
            *c += std::mem::take(n);
        }
        self.release_ended(i64::MAX);
        self.round_us = end_us;
        self.scratch = s;
        self.exchanges = exchanges;
    }
}

impl Scratch {
    /// Groups the instant's `due` items by receiver (agents below `agents` only), receivers in
    /// the order of their first item and each one's messages in sending order, into `mail`
    /// (`csr::group_by_key`, the engine mailbox's stable counting sort, by receiver position).
    fn group_by_receiver(&mut self, agents: usize) {
        let Scratch {
            due,
            receivers,
            item_slot,
            mail,
            starts,
            grouping,
            slot,
            ..
        } = self;
        item_slot.clear();
        for item in due.iter() {
            let a = item.receiver();
            if a.index() >= agents {
                item_slot.push(u32::MAX); // a node beyond the cell (never sent to): dropped
                continue;
            }
            if slot[a.index()] == u32::MAX {
                slot[a.index()] = receivers.len() as u32;
                receivers.push(a);
            }
            item_slot.push(slot[a.index()]);
        }
        // One part: split for a pool's threads, a burst's (receiver, message) pairs would be
        // held once more (+20 MB at a 12.5k cell's t = 0).
        let part = |_| {
            (due.iter().zip(item_slot.iter()))
                .filter_map(|(item, &k)| Some((k as usize, item.message()?)))
        };
        let parts = (usize::from(!due.is_empty()), part);
        // Receiver k's inbox is mail[starts[k]..starts[k + 1]] (entries past the last are left
        // from larger instants: the grouping then writes without initialising slots).
        crate::csr::group_by_key(receivers.len(), parts, starts, grouping, mail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(from: u32, to: u32) -> Item {
        Item::Message(Envelope {
            from: AgentIdx(from),
            to: AgentIdx(to),
            msg: Msg::Gossip,
        })
    }

    /// Worked by hand: receivers come in the order of their first item (a wake-up makes one
    /// with an empty inbox), each inbox in sending order, an agent beyond the table is dropped;
    /// a second instant reuses the buffers with nothing left over.
    #[test]
    fn an_instants_items_are_grouped_by_receiver_in_sending_order() {
        let mut s = Scratch {
            slot: vec![u32::MAX; 5],
            ..Scratch::default()
        };
        s.due = vec![
            message(1, 3),
            Item::Wake(AgentIdx(4)),
            message(2, 1),
            message(4, 3),
            message(0, 9),
            message(3, 1),
            message(0, 3),
        ];
        s.group_by_receiver(5);
        let inbox = |s: &Scratch, k: usize| -> Vec<u32> {
            let range = s.starts[k] as usize..s.starts[k + 1] as usize;
            s.mail[range].iter().map(|e| e.from.0).collect()
        };
        assert_eq!(s.receivers, [AgentIdx(3), AgentIdx(4), AgentIdx(1)]);
        assert_eq!(inbox(&s, 0), [1, 4, 0]);
        assert_eq!(inbox(&s, 1), Vec::<u32>::new());
        assert_eq!(inbox(&s, 2), [2, 3]);
        assert_eq!(s.item_slot, [0, 1, 2, 0, u32::MAX, 2, 0]);
        for a in s.receivers.drain(..) {
            s.slot[a.index()] = u32::MAX;
        }
        s.due = vec![message(2, 0), message(1, 0)];
        s.group_by_receiver(5);
        assert_eq!(s.receivers, [AgentIdx(0)]);
        assert_eq!((inbox(&s, 0), s.starts.len()), (vec![2, 1], 2));
    }
}
