//! Snapshot/resume end to end (SPEC 8): `cellsim run` as a child process on a generated cell,
//! killed with SIGKILL at several points (after a snapshot, while one is being written, right
//! after a restart) or stopped with SIGTERM / SIGUSR1 / SIGINT (clean snapshot, exit code 75), then
//! resumed; every deterministic output file must equal an uninterrupted run's byte for byte.
//! Damaged snapshots are skipped with their reason and the previous one used; with none usable,
//! or with another configuration, a clear error.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;

const SNAPSHOTTED: i32 = 75;

fn args_with(policy: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = run_args(policy, out);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// A run of `policy` into `dir/run` with `extra` flags: its directory and its arguments.
fn run_in(dir: &Path, policy: &str, extra: &[&str]) -> (std::path::PathBuf, Vec<String>) {
    let run = dir.join("run");
    let args = args_with(policy, &run, extra);
    (run, args)
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn resume(run: &Path) -> std::process::Output {
    cellsim(&["resume", &run.display().to_string()])
}

/// A copy of [`trace`] at `to`.
fn copy_of_the_trace(to: &Path) {
    let copied = std::process::Command::new("cp")
        .args([
            "-r",
            &trace().display().to_string(),
            &to.display().to_string(),
        ])
        .status()
        .unwrap();
    assert!(copied.success());
}

/// `args` reading the trace at `trace`.
fn with_trace(mut args: Vec<String>, trace: &Path) -> Vec<String> {
    let at = args.iter().position(|a| a == "--trace").unwrap() + 1;
    args[at] = trace.display().to_string();
    args
}

#[test]
fn sigkill_at_any_point_then_resume_gives_identical_outputs() {
    let reference = reference("masb");
    let dir = tempfile::tempdir().unwrap();
    let (run, args) = run_in(
        dir.path(),
        "masb",
        &["--threads", "2", "--snapshot-every-sim-minutes", "10"],
    );
    let run_s = run.display().to_string();
    // 1. Killed soon after its first snapshot.
    let mut child = spawn(&strs(&args));
    assert!(wait_until(Duration::from_secs(60), || !snapshots(&run).is_empty()));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!run.join("summary.json").exists(), "killed before the end");
    // 2. Killed while a snapshot is being written (its temporary file exists), or right after
    //    the next snapshot if the write is too quick to catch.
    let before = snapshots(&run).last().cloned();
    let mut child = spawn(&["resume", &run_s]);
    let tmp_seen = wait_until(Duration::from_secs(60), || {
        let tmp = std::fs::read_dir(run.join("snapshots"))
            .map(|d| {
                d.flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "tmp"))
            })
            .unwrap_or(false);
        tmp || snapshots(&run).last() != before.as_ref()
    });
    assert!(tmp_seen);
    child.kill().unwrap();
    child.wait().unwrap();
    // 3. Killed right after a restart, before it snapshots again.
    let mut child = spawn(&["resume", &run_s]);
    std::thread::sleep(Duration::from_millis(30));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!run.join("summary.json").exists(), "still unfinished");
    let out = resume(&run);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("resuming from"),
        "{}",
        text(&out.stderr)
    );
    assert_same_outputs(&run, reference);
    assert!(snapshots(&run).len() <= 3, "the newest 3 are kept");
    // Some `migrations/` parts closed at their row bound (`part_rows`), between the ranges.
    let parts = |table: &str| std::fs::read_dir(reference.join(table)).unwrap().count();
    assert!(
        parts("migrations") > parts("ticks"),
        "{}",
        parts("migrations")
    );
}

/// Stops a run with `sig` once it has snapshotted once, checks the exit code and the snapshot,
/// resumes it and compares.
fn stop_with_signal_then_resume(policy: &'static str, sig: &str) {
    let reference = reference(policy);
    let dir = tempfile::tempdir().unwrap();
    // A snapshot every simulated minute: the fsyncs slow even borg-replay's ~120 ticks down to
    // far longer than the signal takes to arrive, so the run cannot finish first.
    let (run, args) = run_in(dir.path(), policy, &["--snapshot-every-sim-minutes", "1"]);
    let child = spawn(&strs(&args));
    assert!(wait_until(Duration::from_secs(60), || !snapshots(&run).is_empty()));
    signal(child.id(), sig);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(SNAPSHOTTED), "{stderr}");
    assert!(stderr.contains("stopped by a signal: snapshot"), "{stderr}");
    assert!(!run.join("summary.json").exists());
    assert!(snapshots(&run).len() <= 3, "the newest 3 kept");
    let out = resume(&run);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("the snapshot was written by cellsim"));
    assert_same_outputs(&run, reference);
    // Resumed by the build that started it: one build in the summary, the one `--version` names.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let version = text(&cellsim(&["--version"]).stdout);
    let build = version.trim().strip_prefix("cellsim ").unwrap();
    assert!(build.starts_with("0.1.0 ("), "{build}");
    assert_eq!(
        summary["builds"],
        serde_json::json!([{"build": build, "from_tick": 0}])
    );
    // The run's log holds its history across the stop, each line stamped with UTC wall time:
    // who started, the stop, the resume and its point, the end.
    let log = std::fs::read_to_string(run.join("cellsim.log")).unwrap();
    let events: Vec<&str> = log
        .lines()
        .map(|line| {
            let (stamp, event) = line.split_once(' ').unwrap();
            let stamp = stamp.as_bytes();
            assert!(
                stamp.len() == 20 && stamp[10] == b'T' && stamp[19] == b'Z',
                "{line}"
            );
            event
        })
        .collect();
    let expected = [
        format!("started: {} run ", env!("CARGO_BIN_EXE_cellsim")),
        "stopped by a signal: snapshot".into(),
        format!("started: {} resume ", env!("CARGO_BIN_EXE_cellsim")),
        "resuming from".into(),
        "state restored from the snapshot".into(),
        format!(
            "complete: {} ticks (2.0 simulated hours); summary.json written",
            trace_ticks()
        ),
    ];
    assert_eq!(events.len(), expected.len(), "{log}");
    for (event, expected) in events.iter().zip(&expected) {
        assert!(
            event.starts_with(expected.as_str()),
            "{event} / {expected}\n{log}"
        );
    }
    assert!(
        events[0].contains(&format!("(build {build}, pid ")),
        "{log}"
    );
    assert!(!log.contains("run: "), "no progress lines:\n{log}");
    // Resuming a complete run does nothing.
    let again = resume(&run);
    assert!(again.status.success());
    assert!(text(&again.stdout).contains("is complete"));
    let log = std::fs::read_to_string(run.join("cellsim.log")).unwrap();
    assert!(
        log.ends_with("is complete (summary.json); nothing to resume\n"),
        "{log}"
    );
}

#[test]
fn sigterm_snapshots_and_exits_75_borg_replay() {
    stop_with_signal_then_resume("borg-replay", "TERM");
}

#[test]
fn sigusr1_snapshots_and_exits_75_masb() {
    stop_with_signal_then_resume("masb", "USR1");
}

#[test]
fn sigint_snapshots_and_exits_75_borg_replay() {
    stop_with_signal_then_resume("borg-replay", "INT");
}

#[test]
fn sigterm_snapshots_and_exits_75_first_fit() {
    stop_with_signal_then_resume("first-fit", "TERM");
}

#[test]
fn sigusr1_snapshots_and_exits_75_best_fit() {
    stop_with_signal_then_resume("best-fit", "USR1");
}

#[test]
fn sigint_snapshots_and_exits_75_random() {
    stop_with_signal_then_resume("random", "INT");
}

#[test]
fn sigterm_snapshots_and_exits_75_omniscient() {
    stop_with_signal_then_resume("omniscient", "TERM");
}

#[test]
fn sigusr1_snapshots_and_exits_75_equal_share() {
    stop_with_signal_then_resume("equal-share", "USR1");
}

/// A run of `policy` stopped by SIGTERM with several snapshots on disk.
fn interrupted(dir: &Path) -> std::path::PathBuf {
    let (run, args) = run_in(dir, "masb", &["--snapshot-every-sim-minutes", "10"]);
    let mut child = spawn(&strs(&args));
    assert!(wait_until(Duration::from_secs(60), || snapshots(&run)
        .len()
        >= 2));
    signal(child.id(), "TERM");
    assert_eq!(child.wait().unwrap().code(), Some(SNAPSHOTTED));
    run
}

#[test]
fn damaged_snapshots_are_skipped_with_the_reason() {
    let reference = reference("masb");
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 5] = [
        ("checksum mismatch", |b| {
            let n = b.len();
            b[n / 2] ^= 0x40;
        }),
        // A name byte of the section table (issue 56: every resume failed with "no section cell").
        ("section table checksum mismatch", |b| b[65] ^= 0x01),
        ("truncated", |b| b.truncate(b.len() - 100)),
        ("not a cellsim snapshot", |b| {
            b[..8].copy_from_slice(b"PK\x03\x04....")
        }),
        ("format version 99", |b| {
            b[8..12].copy_from_slice(&99u32.to_le_bytes());
            let crc = crc32(&b[..56]);
            b[56..60].copy_from_slice(&crc.to_le_bytes());
        }),
    ];
    for (expected, damage) in damages {
        let dir = tempfile::tempdir().unwrap();
        let run = interrupted(dir.path());
        let newest = snapshots(&run).pop().unwrap();
        let mut bytes = std::fs::read(&newest).unwrap();
        damage(&mut bytes);
        std::fs::write(&newest, bytes).unwrap();
        // Debris of a write cut short is ignored too.
        std::fs::write(run.join("snapshots/tick-99999999.snap.tmp"), b"CELLSNAP").unwrap();
        let out = resume(&run);
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let skip = stderr
            .lines()
            .find(|l| l.starts_with("skipping snapshot"))
            .unwrap_or_else(|| panic!("no skip reported:\n{stderr}"));
        let shown = newest.display().to_string();
        assert_eq!(
            skip.matches(&shown).count(),
            1,
            "{skip} names the file once"
        );
        assert!(skip.contains(expected), "{skip} should say {expected}");
        assert_same_outputs(&run, reference);
    }
}

#[test]
fn no_usable_snapshot_or_another_config_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = interrupted(dir.path());
    // Another configuration: every snapshot is refused, nothing is overwritten.
    let args = args_with("masb", &run, &["--resume", "--seed", "77"]);
    let out = cellsim(&strs(&args));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no usable snapshot"), "{stderr}");
    assert!(stderr.contains("another configuration"), "{stderr}");
    // Which setting changed, from run.toml (and only it: not the thread count or snapshots),
    // and how to go on as the run started: said once, for every snapshot.
    let run_s = run.display().to_string();
    let reason = format!(
        "must not change; changed since it started: seed 1 -> 77; `cellsim resume {run_s}` continues it as it started)"
    );
    assert_eq!(stderr.matches(&reason).count(), 1, "{stderr}");
    let names: Vec<String> = snapshots(&run)
        .iter()
        .rev()
        .map(|s| s.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.len() >= 2, "{names:?}");
    assert!(
        stderr.contains(&format!(
            "no usable snapshot: {}: taken with another configuration",
            names.join(", ")
        )),
        "{stderr}"
    );
    // Another trace (here: the same files with a summary whose parts had bad rows): refused the
    // same way.
    let other = dir.path().join("other-trace");
    copy_of_the_trace(&other);
    let summary = other.join("ingest-summary.json");
    let json = std::fs::read_to_string(&summary).unwrap();
    assert!(json.contains("\"bad_rows\": 0"));
    std::fs::write(&summary, json.replace("\"bad_rows\": 0", "\"bad_rows\": 1")).unwrap();
    let args = with_trace(args_with("masb", &run, &["--resume"]), &other);
    let out = cellsim(&strs(&args));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("another trace"), "{stderr}");
    // A fresh `run` into the unfinished run directory is refused too.
    let out = cellsim(&strs(&run_args("masb", &run)));
    assert!(text(&out.stderr).contains("holds snapshots of an unfinished run"));
    // Every snapshot truncated: a clear error naming each.
    for s in snapshots(&run) {
        let bytes = std::fs::read(&s).unwrap();
        std::fs::write(&s, &bytes[..bytes.len() / 3]).unwrap();
    }
    let out = resume(&run);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no usable snapshot"), "{stderr}");
    assert_eq!(
        stderr.matches("truncated").count(),
        snapshots(&run).len(),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The run's log has the refusals, as shown.
    let log = std::fs::read_to_string(run.join("cellsim.log")).unwrap();
    assert!(log.contains("Z error: resuming"), "{log}");
    assert!(log.contains(&reason), "{log}");
    let last = log.lines().last().unwrap();
    assert!(
        last.contains("no usable snapshot") && last.contains("truncated"),
        "{last}"
    );
    // Not a run directory at all.
    let out = cellsim(&["resume", &dir.path().display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is not a cellsim run directory (it has no run.toml)"));
    // A run whose config was damaged: the file, the line and the problem.
    let toml = run.join("run.toml");
    let text_before = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text_before.replace("rounds_per_tick = 6", "rounds_per_tick = 0"),
    )
    .unwrap();
    let out = resume(&run);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("its config: ")
            && stderr.contains("run.toml: rounds_per_tick must be at least 1"),
        "{stderr}"
    );
    std::fs::write(&toml, "seed = 1\nrounds_per_tick = \n").unwrap();
    let stderr = text(&resume(&run).stderr);
    assert!(
        stderr.contains("run.toml") && stderr.contains("line 2"),
        "{stderr}"
    );
}

/// CRC-32 (IEEE), bitwise: an independent implementation to forge a valid header checksum.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A finished run whose summary was removed resumes from an earlier snapshot to the outputs of
/// an uninterrupted run (its finished samples file taken back); with one byte of that file
/// flipped (issue 56: it survived resume) or the file gone, the resume is refused, naming it,
/// rather than writing a samples file with a hole or a wrong byte.
#[test]
fn a_finished_run_resumes_from_a_snapshot_and_lost_samples_are_refused() {
    let reference = reference("masb");
    let dir = tempfile::tempdir().unwrap();
    let (run, args) = run_in(
        dir.path(),
        "masb",
        &["--threads", "2", "--snapshot-every-sim-minutes", "30"],
    );
    finish_then_resume_from_the_first_snapshot(&args, &run, reference);
    std::fs::remove_file(run.join("summary.json")).unwrap();
    let samples = run.join("samples.jsonl");
    let mut bytes = std::fs::read(&samples).unwrap();
    assert!(bytes.len() > 100, "MASB samples its decisions");
    bytes[20] ^= 0x01;
    std::fs::write(&samples, &bytes).unwrap();
    let out = resume(&run);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let flipped = format!("{} changed since it was written", samples.display());
    assert!(stderr.contains(&flipped), "{stderr}");
    std::fs::remove_file(&samples).unwrap();
    let out = resume(&run);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{} is missing", samples.display())),
        "{stderr}"
    );
}

/// With one round per tick a tick's node reports are read at the next tick's first round, so
/// every snapshot holds reports in flight (`engine/src/masb/reports.rs`): a run resumed from an
/// early snapshot must still give the uninterrupted run's outputs byte for byte.
#[test]
fn one_round_per_tick_resumes_with_its_reports_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("one-round.toml");
    let small_parts = std::fs::read_to_string(common::config()).unwrap();
    std::fs::write(&config, small_parts + "rounds_per_tick = 1\n").unwrap();
    let args = |out: &Path, extra: &[&str]| {
        let mut args = args_with("masb", out, extra);
        let at = args.iter().position(|a| a == "--config").unwrap() + 1;
        args[at] = config.display().to_string();
        args
    };
    let reference = dir.path().join("reference");
    let flags = ["--threads", "1", "--snapshot-every-wall-minutes", "0"];
    let out = cellsim(&strs(&args(&reference, &flags)));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run = dir.path().join("run");
    let flags = ["--threads", "2", "--snapshot-every-sim-minutes", "25"];
    finish_then_resume_from_the_first_snapshot(&args(&run, &flags), &run, &reference);
}

/// Runs `args` (a run into `run` that snapshots at least twice) to the end, then takes back its
/// summary and every snapshot but the first and resumes: the outputs must equal `reference`'s.
fn finish_then_resume_from_the_first_snapshot(args: &[String], run: &Path, reference: &Path) {
    let out = cellsim(&strs(args));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let kept = snapshots(run);
    assert!(kept.len() >= 2, "{kept:?}");
    for newer in &kept[1..] {
        std::fs::remove_file(newer).unwrap();
    }
    std::fs::remove_file(run.join("summary.json")).unwrap();
    let out = resume(run);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_outputs(run, reference);
}

/// A run on a synthetic cell killed while its cell is being made, during the generation and
/// again during the ingest, is started again the way `slurm/run.sbatch` does (`run --resume`,
/// since it has no run.toml yet): it reuses what was finished and gives the outputs of a run
/// never interrupted. Asked for another cell in the same directory, it refuses.
#[test]
fn a_run_killed_while_making_its_synthetic_cell_starts_again() {
    let dir = tempfile::tempdir().unwrap();
    let args = |out: &Path, extra: &[&str]| {
        let (out, config) = (out.display().to_string(), config().display().to_string());
        let mut args = [
            "run",
            "--synthetic",
            "1500",
            "--hours",
            "1",
            "--policy",
            "masb",
        ]
        .map(String::from)
        .to_vec();
        args.extend(["--config", &config, "--out", &out].map(String::from));
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let reference = dir.path().join("reference");
    let out = cellsim(&strs(&args(&reference, &[])));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run = dir.path().join("run");
    let cell = run.join("synthetic");
    let ingested = cell.join("parquet/ingest-summary.json");
    for kill_when in [cell.clone(), cell.join("parquet")] {
        let mut child = spawn(&strs(&args(&run, &["--resume"])));
        assert!(wait_until(Duration::from_secs(60), || kill_when.exists()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!ingested.exists(), "killed before the cell was ingested");
    }
    // No run.toml yet: `cellsim resume` names the command to start again with.
    let out = resume(&run);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("has no run.toml: its run was stopped before it started")
            && stderr.contains("run --synthetic 1500 --hours 1 --policy masb"),
        "{stderr}"
    );
    let out = cellsim(&strs(&args(&run, &["--resume"])));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_outputs(&run, &reference);
    std::fs::remove_file(run.join("summary.json")).unwrap();
    let other = [
        "run",
        "--synthetic",
        "1400",
        "--hours",
        "1",
        "--resume",
        "--out",
    ];
    let out = cellsim(&[&other[..], &[&run.display().to_string()]].concat());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("holds a synthetic cell made with"),
        "{stderr}"
    );
}

/// A run directory is held by one cellsim at a time: a second start on it (the same job
/// submitted twice, or a resume by hand) is refused while the first runs, naming its process;
/// the lock goes with the process, so after a SIGKILL the run resumes at once.
#[test]
fn a_second_process_on_a_running_run_is_refused() {
    let reference = reference("masb");
    let dir = tempfile::tempdir().unwrap();
    let (run, args) = run_in(
        dir.path(),
        "masb",
        &["--threads", "1", "--snapshot-every-sim-minutes", "10"],
    );
    let mut child = spawn(&strs(&args));
    assert!(wait_until(Duration::from_secs(60), || run
        .join("run.toml")
        .exists()));
    let mut again = args.clone();
    again.push("--resume".into());
    for second in [strs(&again), vec!["resume", run.to_str().unwrap()]] {
        let out = cellsim(&second);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        let holder = format!("in use by another cellsim process (pid {})", child.id());
        assert!(stderr.contains(&holder), "{stderr}");
    }
    assert!(wait_until(Duration::from_secs(60), || !snapshots(&run).is_empty()));
    child.kill().unwrap();
    child.wait().unwrap();
    let out = resume(&run);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_outputs(&run, reference);
}

/// A periodic snapshot that cannot be written (here its temporary file leads to `/dev/full`, as
/// a full disk or a quota would) does not end the run: a warning names it, its partial file is
/// removed, the next snapshot is written, and the outputs equal an uninterrupted run's.
#[test]
fn a_snapshot_that_cannot_be_written_does_not_end_the_run() {
    let reference = reference("masb");
    let dir = tempfile::tempdir().unwrap();
    let (run, args) = run_in(dir.path(), "masb", &["--snapshot-every-sim-minutes", "10"]);
    std::fs::create_dir_all(run.join("snapshots")).unwrap();
    let full = run.join("snapshots/tick-00000010.snap.tmp");
    std::os::unix::fs::symlink("/dev/full", &full).unwrap();
    let out = cellsim(&strs(&args));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("warning: the snapshot before tick 10 failed; the run goes on")
            && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    let log = std::fs::read_to_string(run.join("cellsim.log")).unwrap();
    assert_eq!(
        log.matches("Z warning: the snapshot before tick 10 failed; the run goes on")
            .count(),
        1,
        "{log}"
    );
    assert!(
        full.symlink_metadata().is_err(),
        "the partial file is removed"
    );
    let kept = snapshots(&run);
    assert!(!kept.is_empty() && !kept.contains(&run.join("snapshots/tick-00000010.snap")));
    assert_same_outputs(&run, reference);
}

/// A run whose trace moved (a scratch directory purged and restored elsewhere): `resume` says
/// where it looked and how to give the new place; `resume --trace NEW` continues (the snapshots
/// check that it is the same trace) to the uninterrupted run's outputs and records the new
/// place in run.toml, so a later resume needs no flag. Another trace there is refused.
#[test]
fn a_run_whose_trace_moved_resumes_with_its_new_place() {
    let reference = reference("masb");
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("trace"), dir.path().join("moved"));
    copy_of_the_trace(&old);
    let (run, args) = run_in(dir.path(), "masb", &["--snapshot-every-sim-minutes", "25"]);
    let args = with_trace(args, &old);
    let out = cellsim(&strs(&args));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let take_back_the_end = || {
        for newer in &snapshots(&run)[1..] {
            std::fs::remove_file(newer).unwrap();
        }
        std::fs::remove_file(run.join("summary.json")).unwrap();
    };
    take_back_the_end();
    std::fs::rename(&old, &new).unwrap();
    let run_s = run.display().to_string();
    let out = resume(&run);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let hint = format!("give its new place: `cellsim resume {run_s} --trace PARQUET_DIR`");
    assert!(
        stderr.contains(&format!("its trace {} is not there", old.display()))
            && stderr.contains(&hint),
        "{stderr}"
    );

    let other = dir.path().join("other");
    let out = cellsim(&["gen", &other.display().to_string(), "--machines", "60"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let other_parquet = dir.path().join("other-parquet").display().to_string();
    let out = cellsim(&["ingest", &other.display().to_string(), &other_parquet]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cellsim(&["resume", &run_s, "--trace", &other_parquet]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("taken with another trace"));

    let new_s = new.display().to_string();
    let out = cellsim(&["resume", &run_s, "--trace", &new_s]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_outputs(&run, reference);
    let recorded = std::fs::read_to_string(run.join("run.toml")).unwrap();
    assert!(
        recorded.contains(&format!("trace = \"{new_s}\"")),
        "{recorded}"
    );
    take_back_the_end();
    let out = resume(&run);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_outputs(&run, reference);
}

/// A run stopped by an error part way (here its trace's second hour, damaged in place as a
/// failing disk leaves a file: its size and footer intact, in a trace whose ingest recorded no
/// CRC-32s, as an older cellsim's did, so the check of the parts against the ingest summary
/// before the run passes it): the error names the file, a note names the
/// snapshot the run is kept up to and the command that continues it, and once the file is
/// mended `resume` finishes the run to the uninterrupted run's outputs. An error before any
/// snapshot has no such note (starting again is the same).
#[test]
fn a_run_stopped_by_an_error_says_where_resume_continues() {
    let reference = reference("masb");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("trace");
    copy_of_the_trace(&copy);
    let summary = copy.join("ingest-summary.json");
    let mut recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    for table in recorded["tables"].as_object_mut().unwrap().values_mut() {
        for part in table["parts"].as_array_mut().unwrap() {
            assert!(part.as_object_mut().unwrap().remove("crc32").is_some());
        }
    }
    std::fs::write(&summary, recorded.to_string()).unwrap();
    let part = copy.join("task_events/part-00001-of-00002.parquet");
    let cut = |part: &Path| {
        let mut bytes = std::fs::read(part).unwrap();
        bytes[4..5_000].fill(0);
        std::fs::write(part, bytes).unwrap();
    };
    cut(&part);
    let (run, args) = run_in(dir.path(), "masb", &["--snapshot-every-sim-minutes", "10"]);
    let out = cellsim(&strs(&with_trace(args.clone(), &copy)));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let newest = snapshots(&run)
        .last()
        .cloned()
        .expect("snapshots before the error");
    let run_s = run.display().to_string();
    let tick = engine::run_dir::tick_of(&newest).unwrap();
    let note = format!(
        "note: the run is kept up to its snapshot {} (tick {tick}, {:.1} simulated h); once the cause is fixed, `cellsim resume {run_s}` continues from there",
        newest.display(),
        tick as f64 / 60.0
    );
    assert!(
        stderr.contains(&format!("error: running masb on {}", copy.display()))
            && stderr.contains(&part.display().to_string())
            && stderr.trim_end().ends_with(&note),
        "{stderr}"
    );
    let log = std::fs::read_to_string(run.join("cellsim.log")).unwrap();
    assert!(log.trim_end().ends_with(&note), "{log}");

    let kept = format!("{:.1} h of 2.0 h", tick as f64 / 60.0);
    assert_status(&run, "failed (see the last log line)", &kept, &note);

    std::fs::copy(
        trace().join("task_events/part-00001-of-00002.parquet"),
        &part,
    )
    .unwrap();
    let out = resume(&run);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("resuming from {}", newest.display())));
    assert_same_outputs(&run, reference);
    let complete = format!("complete: {} ticks", trace_ticks());
    assert_status(&run, "complete", "2.0 h, all", &complete);
    // Refused before its first tick (the run is finished): the error alone, though the
    // directory holds snapshots.
    let out = cellsim(&strs(&with_trace(args.clone(), &copy)));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("already holds a finished run")
            && !stderr.contains("note: the run is kept"),
        "{stderr}"
    );

    // Cut in the first hour, before the first snapshot: the error alone.
    let first = copy.join("task_events/part-00000-of-00002.parquet");
    cut(&first);
    let early = dir.path().join("early");
    let (_, args) = run_in(&early, "masb", &["--snapshot-every-sim-minutes", "10"]);
    let out = cellsim(&strs(&with_trace(args, &copy)));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&first.display().to_string()) && !stderr.contains("note: the run is kept"),
        "{stderr}"
    );
}

/// Asserts that `cellsim status RUN` shows `state`, `kept` and a last log line holding `last`.
fn assert_status(run: &Path, state: &str, kept: &str, last: &str) {
    let out = cellsim(&["status", &run.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let row = table.lines().nth(1).unwrap_or_default();
    let columns: Vec<&str> = row.split("  ").filter(|c| !c.is_empty()).collect();
    assert!(
        columns.len() >= 4
            && columns[1].trim() == state
            && columns[2].trim() == kept
            && row.contains(&last[..last.len().min(60)]),
        "{table}"
    );
}

/// `cellsim status` on a run while it runs (the process its log names, on this host), once it
/// was killed (that process gone, no end line) and once stopped by a signal; on directories
/// that are no run. (Failed and complete: `a_run_stopped_by_an_error_says_where_resume_continues`.)
#[test]
fn status_says_where_each_run_stands() {
    let dir = tempfile::tempdir().unwrap();
    let (run, args) = run_in(dir.path(), "masb", &["--snapshot-every-sim-minutes", "1"]);
    let mut child = spawn(&strs(&args));
    assert!(wait_until(Duration::from_secs(60), || !snapshots(&run).is_empty()));
    let pid = child.id();
    let status = |run: &Path| text(&cellsim(&["status", &run.display().to_string()]).stdout);
    let table = status(&run);
    assert!(table.contains(&format!("running (pid {pid})")), "{table}");
    child.kill().unwrap();
    child.wait().unwrap();
    let table = status(&run);
    assert!(
        table.contains("ended without a word: killed? resume it") && table.contains(" of 2.0 h"),
        "{table}"
    );
    let stopped = interrupted(&dir.path().join("stopped"));
    let newest = snapshots(&stopped).last().cloned().unwrap();
    let tick = engine::run_dir::tick_of(&newest).unwrap();
    assert_status(
        &stopped,
        "stopped: resume it",
        &format!("{:.1} h of 2.0 h", tick as f64 / 60.0),
        "stopped by a signal: snapshot",
    );
    // A directory holding runs (a sweep's) lists them.
    let sweep = dir.path().join("stopped");
    let table = text(&cellsim(&["status", &sweep.display().to_string()]).stdout);
    let row = table.lines().nth(1).unwrap_or_default();
    assert!(
        row.starts_with(&format!("{}  ", stopped.display())) && row.contains("stopped: resume it"),
        "{table}"
    );
    let out = cellsim(&[
        "status",
        &trace().display().to_string(),
        &dir.path().join("nothing").display().to_string(),
    ]);
    assert!(out.status.success());
    let table = text(&out.stdout);
    assert!(
        table.contains("not a run (no run.toml)")
            && table.contains("no such directory")
            && table.ends_with("\n2 runs: 2 not a run\n"),
        "{table}"
    );
}

/// The trace's parts are checked against its ingest summary before a run starts: a deleted
/// machine_events or task_events part, a truncated part, a part with one bit flipped (same size)
/// and a part the ingest did not write are each refused, naming the part, and nothing is run.
#[test]
fn a_trace_whose_parts_changed_since_its_ingest_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("trace");
    copy_of_the_trace(&copy);
    let refused = |what: &str, part: &Path| {
        let (run, args) = run_in(&dir.path().join(what), "masb", &[]);
        let out = cellsim(&strs(&with_trace(args, &copy)));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
        assert!(
            stderr.contains("the ingested parts differ from its ingest-summary.json")
                && stderr.contains(&format!("{} {what}", part.display())),
            "{what}: {stderr}"
        );
        assert!(!run.join("ticks").exists(), "{what}: nothing is run");
    };
    let machines = std::fs::read_dir(copy.join("machine_events"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let kept = std::fs::read(&machines).unwrap();
    std::fs::remove_file(&machines).unwrap();
    refused("is missing", &machines);
    std::fs::write(&machines, &kept).unwrap();

    let tasks = copy.join("task_events/part-00001-of-00002.parquet");
    let kept = std::fs::read(&tasks).unwrap();
    std::fs::remove_file(&tasks).unwrap();
    refused("is missing", &tasks);
    std::fs::write(&tasks, &kept[..kept.len() - 100]).unwrap();
    refused(
        &format!(
            "has {} bytes, {} when ingested",
            kept.len() - 100,
            kept.len()
        ),
        &tasks,
    );
    // One bit flipped in the middle of the part, its size unchanged (issue 56: it ran to other
    // results, exit 0).
    let mut flipped = kept.clone();
    flipped[kept.len() / 2] ^= 0x10;
    std::fs::write(&tasks, &flipped).unwrap();
    refused(
        "changed since it was ingested (same size, CRC-32 differs)",
        &tasks,
    );
    std::fs::write(&tasks, &kept).unwrap();

    let extra = copy.join("task_events/part-00002-of-00002.parquet");
    std::fs::write(&extra, &kept).unwrap();
    refused("is not from the ingest", &extra);
    std::fs::remove_file(&extra).unwrap();
    let (_, args) = run_in(&dir.path().join("restored"), "masb", &[]);
    let out = cellsim(&strs(&with_trace(args, &copy)));
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A resume checks the output parts its snapshot counts (size and CRC-32): a snapshot whose
/// part was deleted is skipped with the reason naming the part, and the run goes on from an
/// older snapshot written before that part, to the uninterrupted run's outputs. A part every
/// snapshot counts, truncated, is an error naming it; restored, the run resumes.
#[test]
fn output_parts_lost_before_a_resume_are_named_or_rewritten() {
    let reference = reference("masb");
    let dir = tempfile::tempdir().unwrap();
    let (run, args) = run_in(dir.path(), "masb", &["--snapshot-every-sim-minutes", "30"]);
    let out = cellsim(&strs(&args));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let kept = snapshot_ticks(&run);
    assert_eq!(kept, last_three_snapshots_every_30());
    std::fs::remove_file(run.join("summary.json")).unwrap();
    // Written at the end of tick 74 (parts of 25 ticks): counted by the snapshots from 90 on.
    let lost = run.join("ticks/part-00000050.parquet");
    std::fs::remove_file(&lost).unwrap();
    let out = resume(&run);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let reason = format!("its output part {} is missing", lost.display());
    for tick in kept.iter().filter(|&&t| t >= 90) {
        assert!(
            stderr.contains(&format!("tick-{tick:08}.snap: {reason}")),
            "{stderr}"
        );
    }
    assert!(stderr.contains("tick-00000060.snap (tick 60)"), "{stderr}");
    assert_same_outputs(&run, reference);

    std::fs::remove_file(run.join("summary.json")).unwrap();
    let first = run.join("ticks/part-00000000.parquet");
    let whole = std::fs::read(&first).unwrap();
    std::fs::write(&first, &whole[..whole.len() / 2]).unwrap();
    let out = resume(&run);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let reason = format!(
        "its output part {} has {} bytes, {} when it was written (restore the part from a copy to resume from this snapshot)",
        first.display(),
        whole.len() / 2,
        whole.len()
    );
    assert!(stderr.contains(&reason), "{stderr}");
    std::fs::write(&first, &whole).unwrap();
    let out = resume(&run);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_outputs(&run, reference);
}

/// A snapshot copied into a run from another run of the same configuration and trace, at a
/// later tick, is not this run's: `status` does not count it, and a resume skips it with the
/// reason and continues from the run's own, to the uninterrupted run's outputs.
#[test]
fn a_snapshot_from_another_run_is_skipped() {
    let reference = reference("masb");
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--snapshot-every-sim-minutes", "30"];
    let (run, args) = run_in(&dir.path().join("a"), "masb", &flags);
    let (other, other_args) = run_in(&dir.path().join("b"), "masb", &flags);
    for args in [&args, &other_args] {
        let out = cellsim(&strs(args));
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    std::fs::remove_file(run.join("summary.json")).unwrap();
    let oldest = snapshot_ticks(&run)[0];
    for newer in &snapshots(&run)[1..] {
        std::fs::remove_file(newer).unwrap();
    }
    let newest_of_other = snapshots(&other).pop().unwrap();
    let foreign = run
        .join("snapshots")
        .join(newest_of_other.file_name().unwrap());
    std::fs::copy(&newest_of_other, &foreign).unwrap();
    let table = text(&cellsim(&["status", &run.display().to_string()]).stdout);
    let kept = format!("{:.1} h of 2.0 h", oldest as f64 / 60.0);
    assert!(table.contains(&kept), "{table}");
    let out = resume(&run);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: written by another run (run ID ",
            foreign.display()
        )) && stderr.contains(&format!("tick-{oldest:08}.snap (tick {oldest})")),
        "{stderr}"
    );
    assert_same_outputs(&run, reference);
}

/// The ticks of the snapshots kept in `run`, oldest first.
fn snapshot_ticks(run: &Path) -> Vec<u64> {
    snapshots(run)
        .iter()
        .map(|s| engine::run_dir::tick_of(s).unwrap())
        .collect()
}

/// The snapshots a run of [`trace`] keeps with `--snapshot-every-sim-minutes 30` (and the
/// default keep of 3): the last three multiples of 30 ticks before its end (the trace's last
/// event falls in its 120th or 121st minute, see [`trace_ticks`]).
fn last_three_snapshots_every_30() -> Vec<u64> {
    let every_30: Vec<u64> = (1..)
        .map(|k| 30 * k)
        .take_while(|&t| (t as i64) < trace_ticks())
        .collect();
    every_30[every_30.len() - 3..].to_vec()
}
