//! The entries of the view exchanges in flight (issue 59), kept beside the messages rather than
//! in them: a Cyclon shuffle or T-Man exchange carries up to six descriptors (~150 bytes), and
//! when they rode inside [`Msg`](super::Msg) every message was that large, so the t = 0 burst
//! of a GCD cell (every initial task's probes and answers at once) held ~600 MB. A message now
//! names its entries by an [`ExchangeId`].
//!
//! Invariants: an id is live from the send that inserts its entries until the instant its
//! message falls due (`play.rs` removes it after that instant's steps, delivered or not), so a
//! receiver always reads what was sent; freed slots are reused last freed first, and the free
//! list is saved with the slots, so a resumed run hands out the same ids.

use serde::{Deserialize, Serialize};

use super::view::Exchanged;

/// Names the entries of one exchange message in [`Exchanges`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExchangeId(u32);

/// The entries of the exchanges in flight, by id (a slab with a free list).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Exchanges {
    slots: Vec<Exchanged>,
    free: Vec<u32>,
}

impl Exchanges {
    /// Keeps `entries` until their message is due; the id the message carries.
    pub fn insert(&mut self, entries: Exchanged) -> ExchangeId {
        match self.free.pop() {
            Some(k) => {
                self.slots[k as usize] = entries;
                ExchangeId(k)
            }
            None => {
                self.slots.push(entries);
                ExchangeId(self.slots.len() as u32 - 1)
            }
        }
    }

    /// The entries of a live id.
    pub fn get(&self, id: ExchangeId) -> &Exchanged {
        &self.slots[id.0 as usize]
    }

    /// Frees a live id (its message fell due).
    pub fn remove(&mut self, id: ExchangeId) {
        debug_assert!(!self.free.contains(&id.0), "exchange {} freed twice", id.0);
        self.free.push(id.0);
    }

    /// Checks a loaded table against the ids its messages in flight name: each names a kept
    /// slot, none twice, every kept slot is named, and the free list holds each other slot once.
    pub fn check_named(&self, named: impl IntoIterator<Item = ExchangeId>) -> Result<(), String> {
        let mut state = vec![0u8; self.slots.len()]; // 1: free, 2: named
        for &k in &self.free {
            match state.get_mut(k as usize) {
                Some(s @ 0) => *s = 1,
                _ => {
                    return Err(format!(
                        "free exchange slot {k} out of range or listed twice"
                    ));
                }
            }
        }
        for id in named {
            match state.get_mut(id.0 as usize) {
                Some(s @ 0) => *s = 2,
                _ => return Err(format!("a view exchange names entries not kept ({})", id.0)),
            }
        }
        match state.iter().position(|&s| s == 0) {
            Some(k) => Err(format!("exchange slot {k} kept but named by no message")),
            None => Ok(()),
        }
    }

    /// Ids live.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// True when none is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::super::view::ViewEntry;
    use super::*;

    fn entries(node: u32) -> Exchanged {
        let e = ViewEntry {
            node,
            free_cpus: 1.0,
            queue: 0,
            at_us: 0,
        };
        Exchanged::of(&[e])
    }

    /// Each live id reads what was inserted under it, a freed slot is taken again, and a saved
    /// table hands out the same ids as the one it was saved from.
    #[test]
    fn live_ids_read_their_entries_and_freed_slots_are_reused() {
        let mut x = Exchanges::default();
        let a = x.insert(entries(1));
        let b = x.insert(entries(2));
        let c = x.insert(entries(3));
        x.remove(b);
        x.remove(a);
        assert_eq!(x.len(), 1);
        let saved: Exchanges = serde_json::from_str(&serde_json::to_string(&x).unwrap()).unwrap();
        let mut y = saved;
        let d = x.insert(entries(4));
        assert_eq!(d, a, "last freed first");
        assert_eq!(y.insert(entries(4)), d);
        assert_eq!(x.get(d).entries()[0].node, 4);
        assert_eq!(x.get(c).entries()[0].node, 3);
        assert_eq!(x.insert(entries(5)), b);
        assert_eq!((x.len(), x.slots.len()), (3, 3));
    }

    /// A loaded table is accepted only as its messages name it: every kept slot once.
    #[test]
    fn a_loaded_table_must_match_the_ids_in_flight() {
        let mut x = Exchanges::default();
        let ids: Vec<ExchangeId> = (0..4).map(|n| x.insert(entries(n))).collect();
        x.remove(ids[1]);
        assert_eq!(x.check_named(vec![ids[3], ids[0], ids[2]]), Ok(()));
        assert!(
            x.check_named(vec![ids[0], ids[2]]).is_err(),
            "slot 3 unnamed"
        );
        assert!(
            x.check_named(vec![ids[0], ids[2], ids[3], ids[1]]).is_err(),
            "1 is free"
        );
        assert!(
            x.check_named(vec![ids[0], ids[0], ids[2], ids[3]]).is_err(),
            "0 twice"
        );
        assert!(
            x.check_named(vec![ids[0], ids[2], ids[3], ExchangeId(9)])
                .is_err()
        );
        x.free.push(1);
        assert!(
            x.check_named(vec![ids[3], ids[0], ids[2]]).is_err(),
            "free twice"
        );
    }
}
