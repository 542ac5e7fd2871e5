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

/// The log's name in a run directory.
pub const LOG_FILE: &str = "cellsim.log";

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

/// What started this process, for the log's first line of it.
fn start_line() -> String {
    let command: Vec<String> = std::env::args().collect();
    let mut line = format!(
        "started: {} (build {}, pid {}",
        command.join(" "),
        engine::BUILD,
        std::process::id()
    );
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname");
    if let Ok(host) = host.as_deref().map(str::trim) {
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
