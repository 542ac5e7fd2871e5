//! The commands' text. Results go to standard output: a reader that stops early closes the
//! pipe (`cellsim report RUN --timing | head -3`), and the command then ends quietly with status
//! 0 (its work is done; only the rest of the text has no reader), where `print!` would panic
//! (Rust ignores SIGPIPE, so the write fails with EPIPE); any other write error is reported.
//! Messages (notes, warnings, the final error) go to standard error best effort ([`errln!`]): a
//! closed stderr (`2>&1 | head`, a log reader that died) must neither stop a run nor turn an
//! error's status 1 into a panic's 101. During a run they also go to its log (`run_log`);
//! progress lines do not ([`status`]).

use std::io::{ErrorKind, Write};

use anyhow::{Context, Result};

/// Writes `args` to standard output (through [`out!`] and [`outln!`]).
pub fn write(args: std::fmt::Arguments<'_>) -> Result<()> {
    if crate::hold(crate::Stream::Out, args.to_string()) {
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => std::process::exit(0),
        result => result.context("writing to standard output"),
    }
}

/// Writes `args` and a newline to standard error, ignoring a failure (through [`errln!`]), and
/// to the run's log when the process has one ([`crate::run_log`]).
pub fn note(args: std::fmt::Arguments<'_>) {
    let text = args.to_string();
    crate::run_log::append(&text);
    status(format_args!("{text}"));
}

/// Writes `args` and a newline to standard error only, ignoring a failure: lines the run's log
/// leaves out.
pub fn status(args: std::fmt::Arguments<'_>) {
    status_to(crate::Stream::Err, args);
}

/// [`status`] for a progress line (held apart for an embedding program: [`crate::Stream`]).
pub fn progress(args: std::fmt::Arguments<'_>) {
    status_to(crate::Stream::Progress, args);
}

fn status_to(held_as: crate::Stream, args: std::fmt::Arguments<'_>) {
    if crate::hold(held_as, format!("{args}\n")) {
        return;
    }
    let _ = writeln!(std::io::stderr().lock(), "{args}");
}

/// `text` cut to `chars` characters, with `...` when cut (a line kept to a width).
pub fn shortened(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

/// How a command's final error message begins (`status` looks for it in a run's log).
pub const ERROR: &str = "error: ";

/// Reports `error` as the command's final message: [`ERROR`] and [`error_text`].
pub fn print_error(error: &anyhow::Error) {
    note(format_args!("{ERROR}{}", error_text(error)));
}

/// `error`'s message and its causes, outermost first, joined by ": ", leaving out a cause whose
/// text a message before it already quotes (the libraries' errors show their source in their own
/// message, so `{:#}` would print it twice: "...: incomplete deflate stream: incomplete deflate
/// stream").
pub fn error_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Cut at a character count, never inside a character.
    #[test]
    fn shortened_counts_characters() {
        assert_eq!(shortened("abc", 3), "abc");
        assert_eq!(shortened("abcd", 3), "abc...");
        assert_eq!(shortened("µsµsµ", 2), "µs...");
    }

    /// A cause the message before it quotes is shown once; the others each once, outermost
    /// first.
    #[test]
    fn error_text_shows_each_cause_once() {
        /// A library error that shows its source in its message, as `thiserror`'s do.
        #[derive(Debug)]
        struct Corrupt(std::io::Error);
        impl std::fmt::Display for Corrupt {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "t/part-0.csv.gz: corrupt input: {}", self.0)
            }
        }
        impl std::error::Error for Corrupt {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let typed = Corrupt(std::io::Error::other("incomplete deflate stream"));
        let error = anyhow::Error::new(typed).context("ingesting t into o");
        assert_eq!(
            error_text(&error),
            "ingesting t into o: t/part-0.csv.gz: corrupt input: incomplete deflate stream"
        );
        assert_eq!(
            format!("{error:#}").matches("incomplete deflate").count(),
            2
        );
        let plain = anyhow::anyhow!("no such file").context("reading run r");
        assert_eq!(error_text(&plain), "reading run r: no such file");
    }
}
