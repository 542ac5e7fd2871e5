//! The commands' results on standard output. A reader that stops early closes the pipe
//! (`cellsim report RUN --timing | head -3`): the command then ends quietly with status 0 (its
//! work is done; only the rest of the text has no reader), where `print!` would panic (Rust
//! ignores SIGPIPE, so the write fails with EPIPE). Any other write error is reported.

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

/// `print!` through [`write`], returning its error with `?`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*))?
    };
}

/// `println!` through [`write`], returning its error with `?`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

pub(crate) use {out, outln};
