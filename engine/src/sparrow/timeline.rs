//! Sparrow's messages in exact time (issue 59): every message is due at its send time plus the
//! network delay, to the microsecond, whatever the tick (a 0 ms delay is 0, 0.5 ms is 0.5 ms);
//! a wake-up is due when asked. [`Timeline`] holds them until due; the policy works through the
//! instants of a tick in time order (`play.rs`).
//!
//! Invariants: items are kept by (due time, send sequence): items due at one instant come out
//! in the order they were sent (causal order, never an agent's index); the sequence counts
//! every item ever pushed, so it is saved with them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::protocol::Msg;
use crate::ids::AgentIdx;
use crate::policy::Envelope;

/// Something due at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Item {
    /// A message delivered to `to`.
    Message(Envelope<Msg>),
    /// A wake-up an agent asked for (`Outbox::wake_at`): it is stepped with no message.
    Wake(AgentIdx),
}

impl Item {
    /// The message, when it is one.
    pub fn message(&self) -> Option<&Envelope<Msg>> {
        match self {
            Item::Message(e) => Some(e),
            Item::Wake(_) => None,
        }
    }

    /// Who is stepped for it.
    pub fn receiver(&self) -> AgentIdx {
        match self {
            Item::Message(e) => e.to,
            Item::Wake(a) => *a,
        }
    }
}

/// The messages and wake-ups not yet due.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(from = "Saved", into = "Saved")]
pub struct Timeline {
    /// (due time, sequence) -> slot in `items`: the ordered index moves 24-byte entries, not
    /// the items (when a view exchange's entries rode in its message, every item was ~170
    /// bytes and moving them in the tree's nodes was a seventh of a GCD run; an item is now
    /// under 64 bytes, the entries waiting in `exchanges.rs`).
    pending: BTreeMap<(i64, u64), u32>,
    items: Vec<Item>,
    /// Slots of `items` free for reuse.
    free: Vec<u32>,
    next_seq: u64,
}

impl PartialEq for Timeline {
    fn eq(&self, other: &Timeline) -> bool {
        Saved::from(self.clone()) == Saved::from(other.clone())
    }
}

/// A [`Timeline`] as saved: its items by (due time, sequence), and the next sequence number.
#[derive(Serialize, Deserialize, PartialEq)]
struct Saved(Vec<(i64, u64, Item)>, u64);

impl From<Timeline> for Saved {
    fn from(t: Timeline) -> Saved {
        let items = (t.pending.iter())
            .map(|(&(at, s), &k)| (at, s, t.items[k as usize]))
            .collect();
        Saved(items, t.next_seq)
    }
}

impl From<Saved> for Timeline {
    fn from(Saved(saved, next_seq): Saved) -> Timeline {
        let mut t = Timeline {
            next_seq,
            ..Timeline::default()
        };
        for (at, s, item) in saved {
            t.pending.insert((at, s), t.items.len() as u32);
            t.items.push(item);
        }
        t
    }
}

impl Timeline {
    /// Holds `item` until `at_us`.
    pub fn push(&mut self, at_us: i64, item: Item) {
        let slot = match self.free.pop() {
            Some(k) => {
                self.items[k as usize] = item;
                k
            }
            None => {
                self.items.push(item);
                self.items.len() as u32 - 1
            }
        };
        self.pending.insert((at_us, self.next_seq), slot);
        self.next_seq += 1;
    }

    /// When the earliest item is due.
    pub fn next_due(&self) -> Option<i64> {
        self.pending.first_key_value().map(|(&(at, _), _)| at)
    }

    /// Moves the items due at exactly `at_us` into `out`, in sending order (items due earlier
    /// must have been taken).
    pub fn take_due_at(&mut self, at_us: i64, out: &mut Vec<Item>) {
        while let Some(entry) = self.pending.first_entry() {
            if entry.key().0 > at_us {
                break;
            }
            debug_assert_eq!(entry.key().0, at_us, "an earlier instant was skipped");
            let k = entry.remove();
            out.push(self.items[k as usize]);
            self.free.push(k);
        }
    }

    /// The items held, in no particular order.
    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.pending.values().map(|&k| &self.items[k as usize])
    }

    /// Items held.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// True when none is held.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(to: u32) -> Item {
        Item::Message(Envelope {
            from: AgentIdx(0),
            to: AgentIdx(to),
            msg: Msg::Gossip,
        })
    }

    /// Items come out by due time, then in sending order (not by receiver), and a saved
    /// timeline restores to the same.
    #[test]
    fn due_items_come_out_by_time_then_sending_order() {
        let mut t = Timeline::default();
        t.push(500, message(3));
        t.push(0, message(9));
        t.push(500, message(1));
        t.push(500, Item::Wake(AgentIdx(2)));
        t.push(1_500, message(1));
        let json = serde_json::to_string(&t).unwrap();
        let mut t: Timeline = serde_json::from_str(&json).unwrap();
        let mut out = Vec::new();
        assert_eq!(t.next_due(), Some(0));
        t.take_due_at(0, &mut out);
        assert_eq!(out, [message(9)]);
        out.clear();
        t.take_due_at(500, &mut out);
        let receivers: Vec<u32> = out.iter().map(|i| i.receiver().0).collect();
        assert_eq!(receivers, [3, 1, 2]);
        assert_eq!((t.next_due(), t.len()), (Some(1_500), 1));
    }
}
