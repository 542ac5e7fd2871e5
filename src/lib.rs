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
mod embedded;
mod progress;
mod run_cmd;
mod run_lock;
mod run_log;
mod status;

use std::ffi::OsString;

pub use console::{error_text, print_error};
pub use embedded::{Stream, request_stop, set_embedded, take_output};
pub(crate) use embedded::{embedded, hold, watch};

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
