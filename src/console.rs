//! The commands' text. Results go to standard output: a reader that stops early closes the
//! pipe (`cellsim report RUN --timing | head -3`), and the command then ends quietly with status
//! 0 (its work is done; only the rest of the text has no reader), where `print!` would panic
//! (Rust ignores SIGPIPE, so the write fails with EPIPE); any other write error is reported.
//! Messages (notes, warnings, the final error) go to standard error best effort ([`errln!`]): a
//! closed stderr (`2>&1 | head`, a log reader that died) must neither stop a run nor turn an
//! error's status 1 into a panic's 101.

use std::io::{ErrorKind, Write};

use anyhow::{Context, Result};

/// Writes `args` to standard output (through [`out!`] and [`outln!`]).
pub fn write(args: std::fmt::Arguments<'_>) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => std::process::exit(0),
        result => result.context("writing to standard output"),
    }
}

/// Writes `args` and a newline to standard error, ignoring a failure (through [`errln!`]).
pub fn note(args: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{args}");
}

/// `print!` through [`write()`], returning its error with `?`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::console::write(format_args!($($arg)*))?
    };
}

/// `println!` through [`write()`], returning its error with `?`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::console::write(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// `eprintln!` through [`note`]: best effort, never a panic.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::console::note(format_args!($($arg)*))
    };
}

pub(crate) use {errln, out, outln};
