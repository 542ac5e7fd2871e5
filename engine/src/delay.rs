//! Messages in flight for longer than a round ([`Outbox::send_at`](crate::policy::Outbox::send_at)):
//! a network latency, a timer. Held by their due round (counted over the run, `active.rs`'s
//! [`RoundClock`](crate::active::RoundClock)) and the order they were sent in, and put into the
//! mailbox at the start of the round they are due in, ahead of the messages sent the round
//! before (they were sent earlier). Saved in snapshots with the run's other messages.

use std::collections::BTreeMap;

use crate::executor::Mailbox;
use crate::policy::Envelope;

/// The delayed messages of a run.
#[derive(Debug, Clone)]
pub struct DelayQueue<M> {
    /// (due round, send sequence) -> message.
    pending: BTreeMap<(u64, u64), Envelope<M>>,
    next_seq: u64,
}

impl<M> Default for DelayQueue<M> {
    fn default() -> Self {
        DelayQueue {
            pending: BTreeMap::new(),
            next_seq: 0,
        }
    }
}

/// What a snapshot keeps of a [`DelayQueue`]: its messages by (due round, sequence), and the
/// next sequence number.
pub type SavedDelays<M> = (Vec<(u64, u64, Envelope<M>)>, u64);

impl<M: Copy + Send + Sync> DelayQueue<M> {
    /// Holds `message` until round `due`.
    pub fn push(&mut self, due: u64, message: Envelope<M>) {
        self.pending.insert((due, self.next_seq), message);
        self.next_seq += 1;
    }

    /// True when none is held.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Puts the messages due by round `g` into `mailbox` (grouped again, sparse or dense as it
    /// is used, for `agents` agents), ahead of those it holds.
    pub fn deliver_due(&mut self, g: u64, mailbox: &mut Mailbox<M>, agents: usize, sparse: bool) {
        if self.pending.first_key_value().is_none_or(|(k, _)| k.0 > g) {
            return;
        }
        let later = self.pending.split_off(&(g + 1, 0));
        let due = std::mem::replace(&mut self.pending, later);
        let mut all: Vec<Envelope<M>> = due.into_values().collect();
        all.extend_from_slice(mailbox.messages());
        *mailbox = Mailbox::group_as(sparse, &all, agents);
    }

    /// The queue as a snapshot keeps it.
    pub fn save(&self) -> SavedDelays<M> {
        let held = self.pending.iter().map(|(&(g, s), m)| (g, s, *m)).collect();
        (held, self.next_seq)
    }

    /// The queue a snapshot kept.
    pub fn restore((held, next_seq): SavedDelays<M>) -> DelayQueue<M> {
        DelayQueue {
            pending: held.into_iter().map(|(g, s, m)| ((g, s), m)).collect(),
            next_seq,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::AgentIdx;

    fn to(agent: u32, msg: u32) -> Envelope<u32> {
        Envelope {
            from: AgentIdx(0),
            to: AgentIdx(agent),
            msg,
        }
    }

    /// Due messages join the mailbox ahead of the round's own, in sending order; later ones
    /// wait; a saved queue restores to the same.
    #[test]
    fn due_messages_arrive_in_their_round_in_sending_order() {
        let mut q = DelayQueue::default();
        q.push(3, to(1, 10));
        q.push(2, to(1, 20));
        q.push(3, to(2, 30));
        q.push(5, to(1, 40));
        let mut q = DelayQueue::restore(q.save());
        let mut mailbox = Mailbox::group_sparse(&[to(1, 99)], 4);
        q.deliver_due(1, &mut mailbox, 4, true);
        assert_eq!(mailbox.len(), 1, "nothing due in round 1");
        q.deliver_due(3, &mut mailbox, 4, true);
        let msgs = |m: &Mailbox<u32>, a| m.inbox(a).iter().map(|e| e.msg).collect::<Vec<_>>();
        assert_eq!(msgs(&mailbox, 1), [20, 10, 99]);
        assert_eq!(msgs(&mailbox, 2), [30]);
        assert_eq!(q.save(), (vec![(5, 3, to(1, 40))], 4));
        let mut dense = Mailbox::group(&[], 4);
        q.deliver_due(5, &mut dense, 4, false);
        assert_eq!(msgs(&dense, 1), [40]);
        assert!(q.is_empty());
    }
}
