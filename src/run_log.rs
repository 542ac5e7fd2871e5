//! A run's own log, `RUN/cellsim.log` (SPEC 9's warnings/errors log): every message a `run` or
//! `resume` on the directory shows on standard error (notes, warnings, skipped snapshots, the
//! resume point, each simulated day done, a stop by a signal, the final error), each line
//! stamped with UTC wall time, after a line saying which command, build, host and SLURM job
//! started; and a line when the run completes. The periodic progress lines are left out (the
//! SLURM log has them).
//!
//! Invariants: the file is only appended to, so it holds the whole history of a run that was
//! stopped, requeued and resumed, in order (a resume does not cut it back to the snapshot, as
//! it does the outputs); it is not an output compared for determinism (it holds wall times).
//! Writing it is best effort: a log that cannot be written is reported once on standard error
//! and the run goes on without it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

pub use engine::run_dir::LOG_FILE;

/// The open log of this process's run, if any.
static LOG: Mutex<Option<(PathBuf, File)>> = Mutex::new(None);

/// Opens (or creates) `dir`'s log for appending and writes the start line: the command line,
/// cellsim's build, the process, the host and the SLURM job (when under SLURM).
pub fn open(dir: &Path) {
    let path = dir.join(LOG_FILE);
    match OpenOptions::new().create(true).append(true).open(&path) {
        Ok(file) => {
            *LOG.lock().unwrap_or_else(PoisonError::into_inner) = Some((path, file));
            append(&start_line());
        }
        Err(e) => crate::console::status(format_args!(
            "note: cannot open {} ({e}); the run goes on without its log",
            path.display()
        )),
    }
}

/// How a start line's message begins ([`parse_start`] reads the rest back).
const STARTED: &str = "started: ";

/// How the message of a process stopped by a signal begins (`status` looks for it).
pub const STOPPED_BY_A_SIGNAL: &str = "stopped by a signal";

/// What started this process, for the log's first line of it.
fn start_line() -> String {
    let command: Vec<String> = std::env::args().collect();
    let mut line = format!(
        "{STARTED}{} (build {}, pid {}",
        command.join(" "),
        engine::build(),
        std::process::id()
    );
    if let Some(host) = host() {
        line.push_str(&format!(", host {host}"));
    }
    let slurm = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if let Some(job) = slurm("SLURM_JOB_ID") {
        line.push_str(&format!(", SLURM job {job}"));
        if let Some(task) = slurm("SLURM_ARRAY_TASK_ID") {
            line.push_str(&format!(" array task {task}"));
        }
        if let Some(restarts) = slurm("SLURM_RESTART_COUNT") {
            line.push_str(&format!(" restart {restarts}"));
        }
    }
    line.push(')');
    line
}

/// This machine's host name, as start lines record it.
pub fn host() -> Option<String> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    Some(host.trim().to_string())
}

/// What a start line records of the process that wrote it.
#[derive(Debug, PartialEq)]
pub struct Started<'a> {
    /// Its command line, the arguments joined by spaces.
    pub command: &'a str,
    /// Its process ID.
    pub pid: Option<u32>,
    /// The host it ran on.
    pub host: Option<&'a str>,
}

/// The text of a log line after its time stamp.
pub fn message(line: &str) -> &str {
    line.split_once(' ').map_or(line, |(_, text)| text)
}

/// A start line's message read back (`None` for any other message).
pub fn parse_start(message: &str) -> Option<Started<'_>> {
    let (command, about) = message.strip_prefix(STARTED)?.rsplit_once(" (build ")?;
    // The value after `, name ` in the parenthesis: `..., pid 4887, host vm, ...` -> `4887`.
    let field = |name: &str| {
        let at = about.rfind(&format!(", {name} "))?;
        let value = &about[at + name.len() + 3..];
        Some(value.split([',', ')']).next().unwrap_or(value).trim())
    };
    Some(Started {
        command,
        pid: field("pid").and_then(|pid| pid.parse().ok()),
        host: field("host"),
    })
}

/// The command line of the first `cellsim run` that `dir`'s log records, if any (what a run
/// stopped before its `run.toml` was written is started again with).
pub fn first_run_command(dir: &Path) -> Option<String> {
    let log = std::fs::read_to_string(dir.join(LOG_FILE)).ok()?;
    log.lines()
        .filter_map(|line| parse_start(message(line)))
        .map(|started| started.command)
        .find(|command| command.split(' ').nth(1) == Some("run"))
        .map(str::to_string)
}

/// Appends `text` (one or more lines), each line stamped with the UTC wall time, when this
/// process has a run log; a write that fails closes the log and says so once.
pub fn append(text: &str) {
    let mut log = LOG.lock().unwrap_or_else(PoisonError::into_inner);
    let Some((path, file)) = log.as_mut() else {
        return;
    };
    let stamp = utc_now();
    let mut lines = String::new();
    for line in text.lines() {
        lines.push_str(&format!("{stamp} {line}\n"));
    }
    if let Err(e) = file.write_all(lines.as_bytes()) {
        let path = path.clone();
        *log = None;
        drop(log);
        crate::console::status(format_args!(
            "note: cannot write {} ({e}); the run goes on without its log",
            path.display()
        ));
    }
}

/// The wall time now, UTC, to the second: `2026-11-23T06:05:09Z`.
fn utc_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let time = chrono::DateTime::from_timestamp(now as i64, 0).unwrap_or_default();
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's start line reads back as its command, pid and host; a SLURM job's too;
    /// other messages are no start line.
    #[test]
    fn start_lines_read_back() {
        let line = start_line();
        let command = std::env::args().collect::<Vec<_>>().join(" ");
        let here = host();
        let expected = Started {
            command: &command,
            pid: Some(std::process::id()),
            host: here.as_deref(),
        };
        assert_eq!(parse_start(&line), Some(expected));
        let slurm = "started: cellsim run --out r (build 0.1.0 (git 1a2b, modified), pid 4887, host node12, SLURM job 77 array task 3 restart 1)";
        let expected = Started {
            command: "cellsim run --out r",
            pid: Some(4887),
            host: Some("node12"),
        };
        assert_eq!(parse_start(slurm), Some(expected));
        assert_eq!(parse_start("note: the run goes on"), None);
        assert_eq!(
            message("2026-11-23T07:00:00Z started: x (build b, pid 1)"),
            "started: x (build b, pid 1)"
        );
    }
}
