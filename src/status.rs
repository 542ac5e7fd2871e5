//! `cellsim status RUN...`: where each run of a sweep stands, without opening its logs: complete,
//! stopped by a signal (to resume), failed (with its error), still running here, or ended
//! without a word (killed: SIGKILL, out of memory, a node failure); how far it is kept (its
//! newest snapshot, which a resume continues from) against the hours it asks for; and the last
//! line of its log.
//!
//! It only reads: `summary.json`, `run.toml`, the snapshots' names and `cellsim.log`. It never
//! takes the run's lock, so it cannot make a job that starts at that moment refuse its
//! directory. Whether a run with no end line is still running is told from the process its log's
//! last start line names, when that process is on this host; on another host it cannot be told.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use engine::RunConfig;
use engine::run::{CONFIG_FILE, SUMMARY_FILE};
use engine::run_identity::RunRecord;

use crate::cli::StatusArgs;
use crate::console::{self, out, outln};
use crate::run_log::{self, LOG_FILE};

/// Longest log line shown, characters.
const LAST_LINE_CHARS: usize = 100;

/// Where a run stands.
#[derive(Debug, PartialEq)]
enum State {
    /// It has its `summary.json`.
    Complete,
    /// Its last process was stopped by a signal after a snapshot.
    Stopped,
    /// Its last process ended with an error (the log's last line).
    Failed,
    /// Its last process, on this host, still runs.
    Running(u32),
    /// Its last process ran on another host, which cannot be asked from here.
    RunningElsewhere(String),
    /// Its last process, on this host, is gone without an end line.
    Killed,
    /// No log says what its last process did.
    Unknown,
    /// Not a run directory, or one whose files cannot be read: what is wrong.
    NotARun(String),
    /// Finished, but outputs it wrote are gone: which.
    Damaged(String),
}

impl State {
    /// The state column's text.
    fn label(&self) -> String {
        match self {
            State::Complete => "complete".into(),
            State::Stopped => "stopped: resume it".into(),
            State::Failed => "failed (see the last log line)".into(),
            State::Running(pid) => format!("running (pid {pid})"),
            State::RunningElsewhere(host) => format!("running on {host}, or killed there"),
            State::Killed => "ended without a word: killed? resume it".into(),
            State::Unknown => "no log: state unknown".into(),
            State::NotARun(what) => what.clone(),
            State::Damaged(what) => format!("complete, but {what}"),
        }
    }

    /// The word the summary line counts the state under.
    fn group(&self) -> &'static str {
        match self {
            State::Complete => "complete",
            State::Stopped => "stopped",
            State::Failed => "failed",
            State::Running(_) => "running",
            State::RunningElsewhere(_) => "running elsewhere or killed",
            State::Killed => "killed",
            State::Unknown => "unknown",
            State::NotARun(_) => "not a run",
            State::Damaged(_) => "damaged",
        }
    }
}

/// Where one run stands.
#[derive(Debug)]
struct RunStatus {
    /// Complete, stopped, failed, running...
    state: State,
    /// Simulated hours done (complete: `24.0 h, all`) or kept (the newest snapshot), of those
    /// asked for.
    kept: String,
    /// The last line of the run's log (its time, then its text), shortened.
    last_line: String,
}

/// The engine's tables a finished run must still hold (every run writes a part of each; a
/// policy's own tables can be empty), as text naming those gone; `None` when all are there.
fn lost_outputs(dir: &Path) -> Option<String> {
    let lost: Vec<String> = engine::output::TABLES
        .iter()
        .filter(|table| {
            let parts = std::fs::read_dir(dir.join(table)).ok().map(|entries| {
                let names = entries.filter_map(|e| e.ok()).map(|e| e.file_name());
                names
                    .filter(|n| n.to_string_lossy().ends_with(".parquet"))
                    .count()
            });
            parts.unwrap_or(0) == 0
        })
        .map(|table| format!("{table}/"))
        .collect();
    (!lost.is_empty()).then(|| format!("{} lost: outputs gone since it finished", lost.join(", ")))
}

/// Runs `cellsim status`.
pub fn status(args: StatusArgs) -> Result<()> {
    let host = run_log::host();
    let rows: Vec<(String, RunStatus)> = engine::run_dir::expand(&args.runs)
        .iter()
        .map(|(dir, _)| dir)
        .map(|dir| (dir.display().to_string(), run_status(dir, host.as_deref())))
        .collect();
    let width = |f: &dyn Fn(&(String, RunStatus)) -> usize, title: &str| {
        rows.iter().map(f).max().unwrap_or(0).max(title.len())
    };
    let run_w = width(&|r| r.0.chars().count(), "run");
    let state_w = width(&|r| r.1.state.label().chars().count(), "state");
    let kept_w = width(&|r| r.1.kept.chars().count(), "kept");
    outln!(
        "{:run_w$}  {:state_w$}  {:kept_w$}  last log line",
        "run",
        "state",
        "kept"
    );
    for (dir, s) in &rows {
        out!(
            "{dir:run_w$}  {:state_w$}  {:kept_w$}  {}\n",
            s.state.label(),
            s.kept,
            s.last_line
        );
    }
    if rows.len() > 1 {
        outln!("{}", summary_line(rows.iter().map(|r| &r.1.state)));
    }
    Ok(())
}

/// `17 runs: 12 complete, 3 running, 1 stopped, 1 failed`: the states counted by group, in
/// the order they first appear.
fn summary_line<'a>(states: impl Iterator<Item = &'a State>) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    let mut runs = 0;
    for state in states {
        runs += 1;
        match counts.iter_mut().find(|(g, _)| *g == state.group()) {
            Some((_, n)) => *n += 1,
            None => counts.push((state.group(), 1)),
        }
    }
    let counted: Vec<String> = counts.iter().map(|(g, n)| format!("{n} {g}")).collect();
    format!("{runs} runs: {}", counted.join(", "))
}

/// Where the run in `dir` stands; `host` is this machine's name (a run whose log's last start
/// was here is looked for among its processes).
fn run_status(dir: &Path, host: Option<&str>) -> RunStatus {
    let log = std::fs::read_to_string(dir.join(LOG_FILE)).unwrap_or_default();
    let last_line = log.lines().last().unwrap_or_default();
    let last_line = console::shortened(last_line, LAST_LINE_CHARS);
    let status = |state: State, kept: String| RunStatus {
        state,
        kept,
        last_line: last_line.clone(),
    };
    let config = match RunConfig::from_file(&dir.join(CONFIG_FILE)) {
        Ok(config) => config,
        Err(_) if !dir.join(CONFIG_FILE).exists() => {
            let state = match dir.is_dir() {
                true => "not a run (no run.toml)",
                false => "no such directory",
            };
            return status(State::NotARun(state.into()), String::new());
        }
        Err(e) => {
            let what = format!("run.toml unreadable: {e}");
            return status(State::NotARun(what), String::new());
        }
    };
    let hours = |ticks: u64| ticks as f64 * config.tick.secs_f64() / 3600.0;
    if dir.join(SUMMARY_FILE).exists() {
        return match analysis::report::load_run(dir) {
            Ok(summary) => {
                let mut kept = format!("{:.1} h, all", hours(summary.ticks));
                if let Some(undone) = summary.work_left.describe() {
                    let _ = write!(kept, "; {undone}");
                }
                if !summary.stalls.is_empty() {
                    let _ = write!(kept, "; stalled {} time(s)", summary.stalls.len());
                }
                match lost_outputs(dir) {
                    Some(lost) => status(State::Damaged(lost), kept),
                    None => status(State::Complete, kept),
                }
            }
            Err(e) => {
                let what = format!("summary.json unreadable: {e}");
                status(State::NotARun(what), String::new())
            }
        };
    }
    // Without `hours` the run goes to its trace's last event, as the engine counts it.
    let last_event_us = config
        .trace
        .as_deref()
        .and_then(|t| ingest::IngestSummary::load(t).ok())
        .map(|summary| summary.last_event_us());
    let asked = match (config.hours, last_event_us) {
        (Some(h), _) => format!("{h:.1} h"),
        (None, Some(last)) => {
            let scenario = (config.trace.as_deref()).is_some_and(ingest::scenario::side::present);
            match engine::run::ticks_to_run(&config, last, scenario) {
                Ok(engine::run::OPEN_ENDED_TICKS) => "until its work is done".to_string(),
                Ok(ticks) => format!("{:.1} h", hours(ticks as u64)),
                Err(_) => "the trace's end".to_string(),
            }
        }
        (None, None) => "the trace's end".to_string(),
    };
    let run_id = config.run.as_ref().map_or(0, RunRecord::id_u64);
    let kept = match newest_snapshot_tick(dir, run_id) {
        Some(tick) => format!("{:.1} h of {asked}", hours(tick)),
        None => format!("0 h of {asked}"),
    };
    status(state_from_log(&log, host), kept)
}

/// The state of an unfinished run, from its log: what its last process wrote last.
fn state_from_log(log: &str, host: Option<&str>) -> State {
    let messages: Vec<&str> = log.lines().map(run_log::message).collect();
    let Some((start, started)) = (messages.iter().enumerate().rev())
        .find_map(|(at, m)| run_log::parse_start(m).map(|started| (at, started)))
    else {
        return State::Unknown;
    };
    let since = &messages[start + 1..];
    if since
        .iter()
        .any(|m| m.starts_with(run_log::STOPPED_BY_A_SIGNAL))
    {
        return State::Stopped;
    }
    if since.iter().any(|m| m.starts_with(console::ERROR)) {
        return State::Failed;
    }
    match (started.pid, started.host, host) {
        (Some(pid), Some(on), Some(here)) if on == here => match runs(pid, started.command) {
            true => State::Running(pid),
            false => State::Killed,
        },
        (_, on, _) => State::RunningElsewhere(on.unwrap_or("an unknown host").to_string()),
    }
}

/// True when process `pid` (on this host) runs `command`: the same arguments, so a pid reused
/// by another process is not taken for the run.
fn runs(pid: u32, command: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
        let args: Vec<String> = cmdline
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        args.join(" ") == command
    })
}

/// The tick the newest snapshot the run in `dir` (with ID `run_id`) wrote continues at, from
/// its header: a snapshot of another run copied into it, or one that is not a snapshot, does
/// not count (a resume skips them).
fn newest_snapshot_tick(dir: &Path, run_id: u64) -> Option<u64> {
    let snapshots = engine::run_dir::list(dir).ok()?;
    snapshots.iter().find_map(|path| {
        let header = engine::snapshot::read_header(path).ok()?;
        (header.run_id == run_id).then_some(header.tick)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state follows what the last process wrote after its start line; earlier processes'
    /// endings do not count. A run started here by a process that is gone ended without a word;
    /// one started on another host cannot be told.
    #[test]
    fn states_from_the_log() {
        // This test's own command line, as the log of a run it had started would record it.
        let me: Vec<String> = std::env::args().collect();
        let start = |host: &str, pid: u32| {
            format!(
                "2026-11-23T07:00:00Z started: {} (build b (git 1a2b, modified), pid {pid}, host {host})\n",
                me.join(" ")
            )
        };
        let stopped = "2026-11-23T08:00:00Z stopped by a signal: snapshot s (continues at tick 60); resume with `cellsim resume r`; exit code 75\n";
        let failed = "2026-11-23T09:00:00Z error: running masb on t: No space left on device\n";
        assert_eq!(state_from_log("", Some("vm")), State::Unknown);
        let log = format!("{}{stopped}", start("vm", 1));
        assert_eq!(state_from_log(&log, Some("vm")), State::Stopped);
        let log = format!("{}{stopped}{}{failed}", start("vm", 1), start("vm", 2));
        assert_eq!(
            state_from_log(&log, Some("vm")).label(),
            "failed (see the last log line)"
        );
        // Started here again after the failure: by this test's own process, running; by a
        // process that is gone (as a killed run's), or whose pid another command now has,
        // ended without a word.
        let pid = std::process::id();
        let log = format!("{}{failed}{}", start("vm", 1), start("vm", pid));
        assert_eq!(
            state_from_log(&log, Some("vm")).label(),
            format!("running (pid {pid})")
        );
        let other = format!(
            "2026-11-23T07:00:00Z started: cellsim run --out x (build b, pid {pid}, host vm)\n"
        );
        assert_eq!(
            state_from_log(&other, Some("vm")).label(),
            "ended without a word: killed? resume it"
        );
        let log = format!("{}{failed}{}", start("vm", 1), start("vm", u32::MAX));
        assert_eq!(state_from_log(&log, Some("vm")), State::Killed);
        let log = format!("{stopped}{}", start("node7", 5));
        assert_eq!(
            state_from_log(&log, Some("vm")).label(),
            "running on node7, or killed there"
        );
    }
    /// The summary line counts each group once, in the order the groups first appear.
    #[test]
    fn summary_counts_states_by_group() {
        let states = [
            State::Complete,
            State::Running(7),
            State::Complete,
            State::Failed,
            State::Running(9),
            State::NotARun("no such directory".into()),
            State::Complete,
        ];
        assert_eq!(
            summary_line(states.iter()),
            "7 runs: 3 complete, 2 running, 1 failed, 1 not a run"
        );
    }
}
