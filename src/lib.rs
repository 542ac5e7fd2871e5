//! The `cellsim` command as a library: the binary (`main.rs`) and the Python package
//! (`python/`) run the same commands through [`run_command`], so a Python call prints, writes
//! and fails exactly as the command line does.
//!
//! A command never ends the process itself: where the command line exits with a code other
//! than 0 or 1 (75 stopped after a snapshot, 3 unfinished under `--strict`), or with 1 after
//! printing its own message, the command returns [`Exit`], and `main` exits with its code.

mod cli;
mod commands;
mod console;
mod progress;
mod run_cmd;
mod run_lock;
mod run_log;
mod status;

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

pub use console::{error_text, print_error};

/// A command's end with exit code `code`, its message already printed to standard error (and
/// the run's log): `main` exits with the code and prints nothing more.
#[derive(Debug)]
pub struct Exit {
    /// The process's exit code.
    pub code: i32,
    /// What was printed.
    pub message: String,
}

impl Exit {
    /// Prints `message` as a note and returns the end with `code`.
    pub(crate) fn noted(code: i32, message: String) -> anyhow::Error {
        console::note(format_args!("{message}"));
        Exit { code, message }.into()
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// This build's identity (`build.rs`).
pub const BUILD: &str = env!("CELLSIM_BUILD");

/// Hands [`BUILD`] to the engine for the runs' records; first thing in any front end.
pub fn set_build() {
    engine::set_build(BUILD);
}

/// How a command that did not succeed ended, as the command line ends it: its exit code and
/// what it printed or would print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The command line's exit code: 0 for `--help` and `--version`, 1 an error, 2 bad usage,
    /// or an [`Exit`]'s.
    pub code: i32,
    /// The message (an error's without the `error: ` prefix).
    pub message: String,
}

impl Ended {
    /// How `error` ends the command; an error (code 1) is also reported as `main` reports it
    /// (standard error and the run's log).
    pub fn of(error: anyhow::Error) -> Ended {
        if let Some(exit) = error.downcast_ref::<Exit>() {
            return Ended {
                code: exit.code,
                message: exit.message.clone(),
            };
        }
        if let Some(usage) = error.downcast_ref::<clap::Error>() {
            return Ended {
                code: usage.exit_code(),
                message: usage.render().to_string(),
            };
        }
        print_error(&error);
        Ended {
            code: 1,
            message: error_text(&error),
        }
    }
}

/// Whether the commands run inside another program ([`set_embedded`]).
static EMBEDDED: AtomicBool = AtomicBool::new(false);

/// The stop flags of the commands under way in an embedding program ([`request_stop`]).
static STOP_FLAGS: Mutex<Vec<Weak<AtomicBool>>> = Mutex::new(Vec::new());

/// Marks the commands as running inside another program (the Python package): they install no
/// signal handlers (the host owns its signals: Python may replace a handler at any time; the
/// host calls [`request_stop`] on its own interrupt instead), and their text is held for the
/// host ([`take_output`]), progress as plain lines.
pub fn set_embedded() {
    EMBEDDED.store(true, Ordering::Relaxed);
}

pub(crate) fn embedded() -> bool {
    EMBEDDED.load(Ordering::Relaxed)
}

/// Where a line of the commands' text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output: results.
    Out,
    /// Standard error: progress, notes, warnings.
    Err,
}

/// Text printed by commands in an embedding program, until it takes it ([`take_output`]).
static HELD: Mutex<Vec<(Stream, String)>> = Mutex::new(Vec::new());

/// Holds `text` for the embedding program instead of writing it to the process's stream;
/// false (nothing held) on the command line.
pub(crate) fn hold(stream: Stream, text: String) -> bool {
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
pub(crate) fn watch(stop: &Arc<AtomicBool>) {
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

/// Runs the command line `args` (the first the program's name): `Ok(())` for success; a clap
/// error for bad usage (`--help` and `--version` too, as clap reports them); [`Exit`] or the
/// command's error otherwise.
pub fn run_command<I, T>(args: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = <cli::Cli as clap::Parser>::try_parse_from(args)?;
    commands::run(cli)
}
