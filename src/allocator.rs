//! The process's allocator: mimalloc, tuned for a long run's resident memory.
//!
//! Two settings, each measured on the 8x cell (`bench-results/bench-2026-11-26-allocator.md`):
//! - **No transparent huge pages** (the `no_thp` feature: mimalloc does not `madvise` its memory
//!   into 2 MiB pages). A huge page is resident whole, however little of it is in use; on a
//!   kernel whose THP mode is `always` the kernel still uses them: set `MIMALLOC_ALLOW_THP=0`.
//! - **Freed memory returned at once** ([`PURGE_DELAY_MS`] = 0; mimalloc's own default keeps it
//!   a second, longer than a tick, so a surge's buffers stayed resident across ticks).
//!
//! A `MIMALLOC_PURGE_DELAY` in the environment wins over [`PURGE_DELAY_MS`] (mimalloc reads it).

use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

/// mimalloc's option number for the purge delay (`mi_option_purge_delay` in `mimalloc.h`, v2
/// and v3; the bindings do not name it). Checked by a test against the option's documented
/// default.
const OPTION_PURGE_DELAY: i32 = 15;

/// Milliseconds mimalloc waits before giving freed memory back to the system.
pub const PURGE_DELAY_MS: i64 = 0;

/// Applies the settings the environment does not override; call first thing in `main`.
pub fn tune() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        set_option(OPTION_PURGE_DELAY, PURGE_DELAY_MS);
    }
}

#[allow(unsafe_code)]
fn set_option(option: i32, value: i64) {
    // SAFETY: `mi_option_set` takes any option number and value; it only stores the value.
    unsafe { libmimalloc_sys::mi_option_set(option, value as _) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(unsafe_code)]
    fn get_option(option: i32) -> i64 {
        // SAFETY: as `set_option`; reads the stored value.
        unsafe { libmimalloc_sys::mi_option_get(option) as i64 }
    }

    /// Option 15 is the purge delay: it reads mimalloc v3's documented default (1,000 ms, or
    /// what the environment sets), and `tune` sets it to ours.
    #[test]
    fn tune_sets_the_purge_delay() {
        let from_env = std::env::var("MIMALLOC_PURGE_DELAY").ok();
        let expected = from_env.map_or(1000, |v| v.parse().expect("a number"));
        assert_eq!(get_option(OPTION_PURGE_DELAY), expected);
        tune();
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(get_option(OPTION_PURGE_DELAY), PURGE_DELAY_MS);
        }
    }
}
