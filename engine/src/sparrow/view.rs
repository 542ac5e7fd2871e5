//! A peer's gossip views (seed 002 improvements 3 and 4), kept by real exchanges (issue 59):
//! each entry is a peer's descriptor of itself (its free CPU and queue length when it sent it),
//! passed from view to view by messages that take the network delay, so the values a view holds
//! age as they travel. Pure functions of the views and the settings, tested alone; the
//! exchanges' messages are `peer.rs`'s.
//!
//! Cyclon (Voulgaris et al. 2005; the random view, `view = "cyclon"`, and the sampling layer
//! under Gradient): every period a peer sends its oldest neighbour Q its own fresh descriptor
//! and `shuffle - 1` other entries, dropping Q's entry; Q answers with up to `shuffle` of its
//! entries and takes the received ones, first into empty slots, then in place of those it sent;
//! the initiator does the same with the answer. Descriptors of the node itself and of peers
//! already known are not taken (a newer descriptor of a known peer replaces the older).
//!
//! T-Man (Jelasity et al.; the Gradient view, `view = "gradient"`): every period a peer sends
//! its best-ranked neighbour its own descriptor and its best entries; the neighbour answers the
//! same way; each keeps the `view_size` best of its view, the received entries and its random
//! view's, ranked by seed 002's U = free CPU - queue length as the descriptors say.
//!
//! Invariants: a view never holds the node itself nor a node twice; at most `view_size` entries.
//! Equal entries (as old, as useful) are ordered by [`tie_key`] under a salt, never by node
//! index (issue 55).

use crate::ties::tie_key;

/// A peer's descriptor of itself, as cached in a view.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ViewEntry {
    /// The peer's node index.
    pub node: u32,
    /// Its free CPUs when it sent the descriptor.
    pub free_cpus: f32,
    /// Its queue length then.
    pub queue: u32,
    /// When it sent it, microseconds (older: smaller).
    pub at_us: i64,
}

impl ViewEntry {
    /// Seed 002's utility U = CPU - Queue (eq. 1).
    pub fn utility(&self) -> f64 {
        f64::from(self.free_cpus) - f64::from(self.queue)
    }
}

/// Entries carried by one exchange message (at most [`MAX_EXCHANGED`]).
pub const MAX_EXCHANGED: usize = 6;

/// The entries of one exchange message: plain `Copy` data of a fixed size.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Exchanged {
    len: u8,
    entries: [ViewEntry; MAX_EXCHANGED],
}

impl Exchanged {
    /// The first [`MAX_EXCHANGED`] of `entries`.
    pub fn of(entries: &[ViewEntry]) -> Exchanged {
        let blank = ViewEntry {
            node: u32::MAX,
            free_cpus: 0.0,
            queue: 0,
            at_us: 0,
        };
        let mut e = [blank; MAX_EXCHANGED];
        let len = entries.len().min(MAX_EXCHANGED);
        e[..len].copy_from_slice(&entries[..len]);
        Exchanged {
            len: len as u8,
            entries: e,
        }
    }

    /// The entries.
    pub fn entries(&self) -> &[ViewEntry] {
        &self.entries[..self.len as usize]
    }
}

/// The shuffle length of a view of `size`: half of it (Cyclon's usual choice), at most
/// [`MAX_EXCHANGED`].
pub fn shuffle_length(size: usize) -> usize {
    (size / 2).clamp(1, MAX_EXCHANGED)
}

/// The position in `view` of its oldest entry (Cyclon's partner), equals by the salt.
pub fn oldest(view: &[ViewEntry], salt: u64) -> Option<usize> {
    (0..view.len()).min_by_key(|&k| (view[k].at_us, tie_key(salt, u64::from(view[k].node))))
}

/// The position in `view` of its best-ranked entry (T-Man's partner), equals by the salt.
pub fn best(view: &[ViewEntry], salt: u64) -> Option<usize> {
    (0..view.len()).min_by(|&a, &b| {
        let (x, y) = (&view[a], &view[b]);
        (y.utility().total_cmp(&x.utility()))
            .then(tie_key(salt, u64::from(x.node)).cmp(&tie_key(salt, u64::from(y.node))))
    })
}

/// Cyclon's merge: `received` into `view` (of at most `size`) at node `me`: a newer descriptor
/// of a known peer replaces the older; a new peer takes an empty slot, else the place of one of
/// `sent` (the entries this node gave its partner, in order) still in the view; otherwise it is
/// dropped.
pub fn cyclon_merge(
    view: &mut Vec<ViewEntry>,
    received: &[ViewEntry],
    sent: &[u32],
    (size, me): (usize, u32),
) {
    let mut replaceable: Vec<u32> = sent.to_vec();
    for r in received {
        if r.node == me {
            continue;
        }
        if let Some(known) = view.iter_mut().find(|e| e.node == r.node) {
            if r.at_us > known.at_us {
                *known = *r;
            }
            continue;
        }
        if view.len() < size {
            view.push(*r);
            continue;
        }
        while let Some(node) = (!replaceable.is_empty()).then(|| replaceable.remove(0)) {
            if let Some(slot) = view.iter_mut().find(|e| e.node == node) {
                *slot = *r;
                break;
            }
        }
    }
}

/// T-Man's merge with a global ranking: the `size` best by U of `view` and `candidates` (the
/// newest descriptor of each peer, never `me`), equals by the salt.
pub fn tman_merge(
    view: &mut Vec<ViewEntry>,
    candidates: &[ViewEntry],
    (size, me): (usize, u32),
    salt: u64,
) {
    for c in candidates {
        if c.node == me {
            continue;
        }
        match view.iter_mut().find(|e| e.node == c.node) {
            Some(known) if c.at_us > known.at_us => *known = *c,
            Some(_) => {}
            None => view.push(*c),
        }
    }
    view.sort_by(|a, b| {
        (b.utility().total_cmp(&a.utility()))
            .then(tie_key(salt, u64::from(a.node)).cmp(&tie_key(salt, u64::from(b.node))))
    });
    view.truncate(size);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(node: u32, free_cpus: f32, queue: u32, at_us: i64) -> ViewEntry {
        ViewEntry {
            node,
            free_cpus,
            queue,
            at_us,
        }
    }

    fn nodes(view: &[ViewEntry]) -> Vec<u32> {
        view.iter().map(|e| e.node).collect()
    }

    /// Worked by hand: node 0's full view [1, 2, 3, 4] sent 3 and 4 to its partner and receives
    /// [0 (itself), 2 (newer), 5, 6, 7]: itself skipped, 2 refreshed, 5 and 6 take the places of
    /// 3 and 4, 7 finds no place. With a free slot, 5 takes it first.
    #[test]
    fn cyclon_takes_empty_slots_then_the_places_of_what_it_sent() {
        let view = vec![
            entry(1, 1.0, 0, 10),
            entry(2, 1.0, 0, 10),
            entry(3, 1.0, 0, 10),
            entry(4, 1.0, 0, 10),
        ];
        let received = [
            entry(0, 8.0, 0, 50),
            entry(2, 3.0, 1, 40),
            entry(5, 2.0, 0, 40),
            entry(6, 2.0, 0, 30),
            entry(7, 2.0, 0, 30),
        ];
        let mut full = view.clone();
        cyclon_merge(&mut full, &received, &[3, 4], (4, 0));
        assert_eq!(nodes(&full), [1, 2, 5, 6]);
        assert_eq!(full[1], entry(2, 3.0, 1, 40));
        let mut roomy = view[..3].to_vec();
        cyclon_merge(&mut roomy, &received, &[3], (4, 0));
        assert_eq!(nodes(&roomy), [1, 2, 6, 5]);
    }

    /// T-Man keeps the best U among its view and the candidates, the newer descriptor of a peer
    /// it knows, never itself: U 1 -> 8, 6 -> 7, 4 -> 5 (newer: 6 - 1), 3 -> 2, 5 -> 1, 2 -> -3.
    #[test]
    fn tman_keeps_the_best_ranked_newest_descriptors() {
        let mut view = vec![
            entry(1, 8.0, 0, 30),
            entry(2, 0.0, 3, 10),
            entry(3, 2.0, 0, 20),
            entry(4, 1.0, 1, 10),
        ];
        let candidates = [
            entry(5, 1.0, 0, 50),
            entry(6, 7.0, 0, 50),
            entry(4, 6.0, 1, 40),
            entry(9, 99.0, 0, 50),
        ];
        tman_merge(&mut view, &candidates, (4, 9), 1);
        assert_eq!(nodes(&view), [1, 6, 4, 3]);
        assert_eq!(oldest(&view, 1), Some(3), "3 is cached at 20, 4 now at 40");
        assert_eq!(best(&view, 1), Some(0));
    }

    /// Among equally old (Cyclon's partner) or equally useful (T-Man's cut) entries, which is
    /// taken follows the salt, not the node index: over 200 salts each of two equal entries is.
    #[test]
    fn equal_entries_are_chosen_by_the_salt() {
        let view = vec![
            entry(1, 1.0, 0, 10),
            entry(2, 1.0, 0, 10),
            entry(3, 5.0, 0, 30),
        ];
        let (mut oldest_first, mut kept_first) = (0, 0);
        for salt in 0..200 {
            let salt = ingest::rng::mix64(salt);
            oldest_first += usize::from(oldest(&view, salt) == Some(0));
            let mut cut = view.clone();
            tman_merge(&mut cut, &[], (2, 9), salt);
            assert_eq!(cut[0].node, 3);
            kept_first += usize::from(cut[1].node == 1);
        }
        assert!((60..140).contains(&oldest_first), "{oldest_first}");
        assert!((60..140).contains(&kept_first), "{kept_first}");
        assert_eq!(nodes(Exchanged::of(&view).entries()), [1, 2, 3]);
    }
}
