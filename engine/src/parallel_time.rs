//! How much of a tick runs in parallel: the wall time the run's thread spends inside the
//! data-parallel regions ([`region`]), so that `timing/` can split each phase into the part that
//! runs on one thread and the part that spreads over the pool (issue 62's Amdahl share).
//!
//! A region is a sweep over many independent items (agents, nodes, tasks, jobs) that rayon
//! spreads over every thread of the pool. A `rayon::join` of two or three different jobs (e.g.
//! applying a round's actions while grouping its messages) is *not* a region: it can use at most
//! that many threads, so its time counts as one-thread time (conservative for the projection).
//!
//! Invariants: only the outermost region on a thread counts (a region entered from inside
//! another, or by a thread that stole work while waiting inside one, adds nothing), so the
//! figure never exceeds the wall time between two reads; the clock is per thread, so runs on
//! other threads (tests in one process) never mix. Exact at one thread, where the one-thread
//! share is Amdahl's serial fraction; on more, a region that another thread runs (a stolen
//! `join` branch) is not counted on the run's thread, so the share read there is an upper
//! bound. Time only: nothing here touches the simulation, so outputs are the same with or
//! without it.

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    /// Regions open on this thread, and the nanoseconds its outermost regions took so far.
    static CLOCK: Cell<(u32, u64)> = const { Cell::new((0, 0)) };
}

/// Closes a region when dropped, so an unwinding panic leaves the depth right.
struct Open {
    started: Option<Instant>,
}

impl Drop for Open {
    fn drop(&mut self) {
        let (depth, ns) = CLOCK.get();
        let took = self.started.map_or(0, |t| t.elapsed().as_nanos() as u64);
        CLOCK.set((depth - 1, ns + took));
    }
}

/// Runs `sweep`, a data-parallel sweep, counting its wall time as parallel time on this thread
/// (when it is not inside another region). Never inlined, so that a profile's call stacks show
/// where regions are (samples under it are parallel time; bench files count those outside).
#[inline(never)]
pub fn region<R>(sweep: impl FnOnce() -> R) -> R {
    let (depth, ns) = CLOCK.get();
    CLOCK.set((depth + 1, ns));
    let _open = Open {
        started: (depth == 0).then(Instant::now),
    };
    sweep()
}

/// The nanoseconds this thread has spent in its outermost regions so far (a running total:
/// phases read it at their start and end).
pub fn parallel_ns() -> u64 {
    CLOCK.get().1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A region's time counts once however deeply regions nest, nothing outside one counts, and
    /// a panic inside one leaves the clock usable.
    #[test]
    fn counts_the_outermost_regions_only() {
        let start = parallel_ns();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(parallel_ns(), start);
        let wall = Instant::now();
        region(|| {
            std::thread::sleep(Duration::from_millis(10));
            region(|| std::thread::sleep(Duration::from_millis(10)));
        });
        let wall_ns = wall.elapsed().as_nanos() as u64;
        let counted = parallel_ns() - start;
        assert!(
            (20_000_000..=wall_ns).contains(&counted),
            "{counted} of {wall_ns}"
        );
        let caught = std::panic::catch_unwind(|| region(|| panic!("inside")));
        assert!(caught.is_err());
        assert_eq!(CLOCK.get().0, 0);
        let before = parallel_ns();
        region(|| std::thread::sleep(Duration::from_millis(2)));
        assert!(parallel_ns() - before >= 2_000_000);
    }

    /// Another thread's regions are its own.
    #[test]
    fn threads_keep_their_own_clock() {
        let start = parallel_ns();
        std::thread::spawn(|| region(|| std::thread::sleep(Duration::from_millis(5))))
            .join()
            .unwrap();
        assert_eq!(parallel_ns(), start);
    }
}
