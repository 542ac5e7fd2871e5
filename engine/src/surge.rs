//! Giving back a buffer's room left from a surge. The first tick places the whole initial cell
//! (at 8x a million tasks, ~2M messages in one round); buffers reused tick after tick keep the
//! capacity that tick gave them, resident for the rest of the run, unless it is given back.
//! [`release_surge`] keeps a buffer's entries and gives back capacity only, so no result
//! depends on it; a later surge grows the buffer again. A buffer's need swings from round to
//! round and tick to tick (a broker's actions: many at a tick's first round, few after), so it
//! is measured against its peak over a [`PeakWindow`], or it would be given back and grown
//! again each time its need dips.

/// A buffer holding more than this many times what it needs now gives the excess back.
pub const SURGE_FACTOR: usize = 8;

/// The threshold for buffers one of many agents keeps (an executor chunk's outputs, a MASB
/// broker's per-tick work: a thousand brokers at 8x, each under any larger threshold).
pub const AGENT_BUFFER_BYTES: usize = 64 << 10;

/// When `buffer` holds room for over `min_bytes` and over [`SURGE_FACTOR`] times the `used`
/// entries it needs now, keeps its first `used` entries and room for `2 used`.
pub fn release_surge<T>(buffer: &mut Vec<T>, used: usize, min_bytes: usize) {
    let held = buffer.capacity().max(buffer.len());
    if held * size_of::<T>() > min_bytes && held > SURGE_FACTOR * used {
        buffer.truncate(used);
        buffer.shrink_to(2 * used);
    }
}

/// Needs a [`PeakWindow`] spans: the rounds of ten ticks of MASB's six and more for a buffer
/// used every round, 64 ticks for one used once a tick.
pub const WINDOW_NOTES: u32 = 64;

/// The most a buffer needed over its last [`WINDOW_NOTES`] uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct PeakWindow {
    peak: usize,
    notes: u32,
}

impl PeakWindow {
    /// Notes a use's need; at the window's end returns its peak (what [`release_surge`] may
    /// keep) and starts the next window.
    pub fn note(&mut self, used: usize) -> Option<usize> {
        self.peak = self.peak.max(used);
        self.notes += 1;
        if self.notes < WINDOW_NOTES {
            return None;
        }
        let peak = self.peak;
        *self = PeakWindow::default();
        Some(peak)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Room over the threshold and over 8 times the need shrinks to twice the need, entries
    /// kept; within either bound nothing changes.
    #[test]
    fn only_a_surge_is_given_back() {
        let mut v: Vec<u64> = Vec::with_capacity(10_000);
        v.extend(0..100);
        release_surge(&mut v, 100, 1 << 20);
        assert_eq!(v.capacity(), 10_000, "80 KB is under the 1 MiB threshold");
        release_surge(&mut v, 100, 1 << 10);
        assert!((200..10_000).contains(&v.capacity()), "{}", v.capacity());
        assert_eq!(v, (0..100).collect::<Vec<_>>());
        let mut v: Vec<u64> = Vec::with_capacity(10_000);
        release_surge(&mut v, 1_300, 1 << 10);
        assert_eq!(v.capacity(), 10_000, "under 8 times the need");
    }

    /// A window reports its peak once per WINDOW_NOTES notes, then starts again from nothing.
    #[test]
    fn a_window_reports_its_peak_at_its_end() {
        let mut w = PeakWindow::default();
        let needs = (0..WINDOW_NOTES as usize).map(|r| if r % 6 == 0 { 1_000 } else { r });
        let reports: Vec<_> = needs.map(|n| w.note(n)).collect();
        assert!(reports[..reports.len() - 1].iter().all(Option::is_none));
        assert_eq!(reports.last(), Some(&Some(1_000)));
        let reports: Vec<_> = (0..WINDOW_NOTES).map(|_| w.note(3)).collect();
        assert_eq!(
            reports.last(),
            Some(&Some(3)),
            "the last window's peak is forgotten"
        );
    }
}
