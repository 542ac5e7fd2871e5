//! Loading what a batch of updates will read at random places before applying them. Updates
//! applied one after the other each wait for their own cache misses (a task's columns, a
//! broker's allocation) when the next needs the last one's result; a pass of independent reads
//! over the whole batch first lets the out-of-order core overlap those misses, and the updates
//! then find their lines in the cache. Speed only: a preload reads, never writes, and its value
//! means nothing (it goes to `std::hint::black_box`, so the reads are not optimised away).

/// Items of a batch preloaded at once: enough misses in flight to fill the core's queue of
/// outstanding loads, few enough for the lines to stay in the cache until the batch is applied.
pub const BATCH: usize = 32;

/// Reads `read(item)` for every item of `batch` (a value folded from the fields an update of
/// that item will read first: 0 for items that read nothing at random).
#[inline]
pub fn preload<T>(batch: &[T], read: impl Fn(&T) -> u32) {
    std::hint::black_box(batch.iter().fold(0, |acc, x| acc ^ read(x)));
}
