//! A peer's gossip view (seed 002 improvements 3 and 4): the peers it knows with their free CPU
//! and queue length as cached at the exchange that brought them, so values age between
//! exchanges. Pure functions of the view, the fresh samples and the settings, tested alone.
//!
//! Staleness model: an exchange every `gossip_period` brings `view_size / 2` fresh random
//! peers with their state at that moment (Cyclon's shuffle length); Cyclon drops the oldest
//! entries for them. Gradient (T-Man) exchanges with its best-ranked peer (whose entry is then
//! fresh), drops entries older than `oldest_us` (as the random view underneath would have
//! shuffled them out), and keeps the best ranked by U = free CPU - queue length among old and
//! new, old entries keeping their old values.

use super::config::ViewKind;
use crate::ties::tie_key;

/// A peer in a view, as cached.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ViewEntry {
    /// The peer's node index.
    pub node: u32,
    /// Its free CPUs when cached.
    pub free_cpus: f64,
    /// Its queue length when cached.
    pub queue: u32,
    /// When cached, microseconds.
    pub at_us: i64,
}

impl ViewEntry {
    /// Seed 002's utility U = CPU - Queue (eq. 1).
    pub fn utility(&self) -> f64 {
        self.free_cpus - self.queue as f64
    }
}

/// The view after an exchange that brought `fresh` (distinct peers, none already in the view
/// nor the node itself), at most `size` entries; Gradient drops entries cached before
/// `oldest_us` first. Equal entries (as old, as useful) are ordered by [`tie_key`] under `salt`,
/// not by node index (issue 55).
pub fn exchange(
    kind: ViewKind,
    view: &mut Vec<ViewEntry>,
    fresh: &[ViewEntry],
    (size, oldest_us): (usize, i64),
    salt: u64,
) {
    let tie = |e: &ViewEntry| tie_key(salt, u64::from(e.node));
    match kind {
        ViewKind::Uniform => view.clear(),
        ViewKind::Cyclon => {
            // Oldest first; the oldest make room for the fresh.
            view.sort_by_key(|e| (e.at_us, tie(e)));
            let keep = size.saturating_sub(fresh.len()).min(view.len());
            view.drain(..view.len() - keep);
            view.extend_from_slice(fresh);
        }
        ViewKind::Gradient => {
            view.retain(|e| e.at_us >= oldest_us);
            view.extend_from_slice(fresh);
            view.sort_by(|a, b| {
                b.utility()
                    .total_cmp(&a.utility())
                    .then(tie(a).cmp(&tie(b)))
            });
            view.truncate(size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(node: u32, free_cpus: f64, queue: u32, at_us: i64) -> ViewEntry {
        ViewEntry {
            node,
            free_cpus,
            queue,
            at_us,
        }
    }

    /// Among entries as old (Cyclon) or as useful (Gradient), which are dropped follows the
    /// salt, not the node index: over 200 salts each of two equal old entries is dropped.
    #[test]
    fn equal_entries_are_dropped_by_the_salt() {
        let old = vec![
            entry(1, 1.0, 0, 10),
            entry(2, 1.0, 0, 10),
            entry(3, 5.0, 0, 30),
        ];
        let fresh = [entry(5, 9.0, 0, 50)];
        for kind in [ViewKind::Cyclon, ViewKind::Gradient] {
            let mut kept = [0u32; 3];
            for salt in 0..200 {
                let mut view = old.clone();
                exchange(kind, &mut view, &fresh, (3, 0), ingest::rng::mix64(salt));
                assert!(view.iter().any(|e| e.node == 3) && view.iter().any(|e| e.node == 5));
                for e in view.iter().filter(|e| e.node <= 2) {
                    kept[e.node as usize] += 1;
                }
            }
            assert!(
                kept[1] > 60 && kept[2] > 60 && kept[1] + kept[2] == 200,
                "{kind:?} {kept:?}"
            );
        }
    }

    /// Cyclon drops the oldest for the fresh; Gradient keeps the highest U, stale or not.
    #[test]
    fn cyclon_replaces_the_oldest_gradient_keeps_the_best() {
        let old = vec![
            entry(1, 8.0, 0, 30),
            entry(2, 0.0, 3, 10),
            entry(3, 2.0, 0, 20),
            entry(4, 6.0, 1, 40),
        ];
        let fresh = [entry(5, 1.0, 0, 50), entry(6, 7.0, 0, 50)];
        let mut cyclon = old.clone();
        exchange(ViewKind::Cyclon, &mut cyclon, &fresh, (4, 0), 1);
        let nodes: Vec<u32> = cyclon.iter().map(|e| e.node).collect();
        assert_eq!(nodes, [1, 4, 5, 6]);
        let mut gradient = old.clone();
        exchange(ViewKind::Gradient, &mut gradient, &fresh, (4, 0), 1);
        let nodes: Vec<u32> = gradient.iter().map(|e| e.node).collect();
        // U: 1 -> 8, 6 -> 7, 4 -> 5, 3 -> 2, 5 -> 1, 2 -> -3.
        assert_eq!(nodes, [1, 6, 4, 3]);
        // Entries cached before 25 are gone (2 and 3): 5 makes the cut.
        let mut aged = old;
        exchange(ViewKind::Gradient, &mut aged, &fresh, (4, 25), 1);
        let nodes: Vec<u32> = aged.iter().map(|e| e.node).collect();
        assert_eq!(nodes, [1, 6, 4, 5]);
    }
}
