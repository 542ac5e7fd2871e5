//! The commands inside another program (the Python package): no signal handlers (the host
//! owns its signals and calls [`request_stop`] on its own interrupt) and no writes to the
//! process's streams (the host takes the text with [`take_output`] and shows it where its user
//! looks). Off on the command line.
//!
//! Invariant: the stop flags kept are those of commands under way (a finished command's flag is
//! dropped, its weak reference pruned at the next command).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// Whether the commands run inside another program ([`set_embedded`]).
static EMBEDDED: AtomicBool = AtomicBool::new(false);

/// The stop flags of the commands under way in an embedding program ([`request_stop`]).
static STOP_FLAGS: Mutex<Vec<Weak<AtomicBool>>> = Mutex::new(Vec::new());

/// Marks the commands as running inside another program (the Python package): they install no
/// signal handlers (the host owns its signals: Python may replace a handler at any time; the
/// host calls [`request_stop`] on its own interrupt instead), and their text is held for the
/// host ([`take_output`]), progress as plain lines marked [`Stream::Progress`].
pub fn set_embedded() {
    EMBEDDED.store(true, Ordering::Relaxed);
}

/// Whether [`set_embedded`] was called.
pub fn embedded() -> bool {
    EMBEDDED.load(Ordering::Relaxed)
}

/// Where a line of the commands' text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output: results.
    Out,
    /// Standard error: notes, warnings.
    Err,
    /// Standard error: a progress line (a notebook shows it as one line updated in place).
    Progress,
}

/// Text printed by commands in an embedding program, until it takes it ([`take_output`]).
static HELD: Mutex<Vec<(Stream, String)>> = Mutex::new(Vec::new());

/// Holds `text` for the embedding program instead of writing it to the process's stream;
/// false (nothing held) on the command line.
pub fn hold(stream: Stream, text: String) -> bool {
    if !embedded() {
        return false;
    }
    HELD.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push((stream, text));
    true
}

/// The text the commands printed since the last call, in order (embedded only: a notebook
/// shows its own `sys.stdout` and `sys.stderr`, not the process's file descriptors).
pub fn take_output() -> Vec<(Stream, String)> {
    std::mem::take(&mut *HELD.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Keeps `stop` for [`request_stop`] (the flags of finished commands are dropped).
pub fn watch(stop: &Arc<AtomicBool>) {
    let mut flags = STOP_FLAGS.lock().unwrap_or_else(PoisonError::into_inner);
    flags.retain(|f| f.strong_count() > 0);
    flags.push(Arc::downgrade(stop));
}

/// Stops every command under way as a signal would: a run finishes its tick, snapshots and
/// ends with [`Exit`] code 75; an ingest or generation keeps what it finished.
pub fn request_stop() {
    let flags = STOP_FLAGS.lock().unwrap_or_else(PoisonError::into_inner);
    for flag in flags.iter().filter_map(Weak::upgrade) {
        flag.store(true, Ordering::Relaxed);
    }
}
