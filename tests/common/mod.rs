//! Helpers for the binary's snapshot/resume and SLURM tests: a shared synthetic trace, reference
//! runs, child processes and output comparison.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_cellsim");

/// Runs the binary to completion.
pub fn cellsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("cellsim runs")
}

/// Starts the binary as a child process (outputs discarded).
pub fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("cellsim starts")
}

/// Lossy UTF-8.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A directory kept for the whole test binary.
pub fn shared_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

/// A generated 1,200-machine, 2-hour cell, ingested once per test binary.
pub fn trace() -> &'static Path {
    static TRACE: OnceLock<PathBuf> = OnceLock::new();
    TRACE.get_or_init(|| {
        let root = shared_dir();
        let csv = root.join("trace-csv");
        let parquet = root.join("trace");
        let gen_config = ingest::synth::GenConfig {
            machines: 1_200,
            hours: 2.0,
            seed: 5,
            part_hours: 1.0,
            held_jobs: true,
        };
        ingest::synth::generate(&csv, &gen_config, &Default::default()).unwrap();
        ingest::ingest(&csv, &parquet, &Default::default(), &Default::default()).unwrap();
        parquet
    })
}

/// The ticks of a run of [`trace`] to its end: one per minute from the window's start (600 s) up
/// to the one holding the trace's last event (in its last minute, or at its end when a pending
/// task is retried there).
pub fn trace_ticks() -> i64 {
    let last_event_us = ingest::IngestSummary::load(trace())
        .unwrap()
        .last_event_us();
    let ticks = (last_event_us - 600_000_000) / 60_000_000 + 1;
    assert!((120..=121).contains(&ticks), "a 2-hour trace: {ticks}");
    ticks
}

/// A config with small output parts (25 ticks; `migrations/` parts also closed at 100 rows) and
/// node samples every 20 ticks, so snapshots fall inside and between parts.
pub fn config() -> &'static Path {
    static CONFIG: OnceLock<PathBuf> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let path = shared_dir().join("small-parts.toml");
        std::fs::write(
            &path,
            "part = \"25min\"\npart_rows = 100\nnodes_every = \"20min\"\n",
        )
        .unwrap();
        path
    })
}

/// Flags of a run of `policy` on [`trace`] into `out`, with [`config`].
pub fn run_args(policy: &str, out: &Path) -> Vec<String> {
    [
        "run",
        "--config",
        &config().display().to_string(),
        "--trace",
        &trace().display().to_string(),
        "--policy",
        policy,
        "--out",
        &out.display().to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// An uninterrupted run of `policy` (one thread, no snapshots), made once per test binary.
pub fn reference(policy: &'static str) -> &'static Path {
    static RUNS: OnceLock<std::sync::Mutex<Vec<(&'static str, &'static Path)>>> = OnceLock::new();
    let runs = RUNS.get_or_init(Default::default);
    let mut runs = runs.lock().unwrap();
    if let Some((_, p)) = runs.iter().find(|r| r.0 == policy) {
        return p;
    }
    let out: &'static Path =
        Box::leak(shared_dir().join(format!("ref-{policy}")).into_boxed_path());
    let mut args = run_args(policy, out);
    args.extend(["--threads", "1", "--snapshot-every-wall-minutes", "0"].map(String::from));
    let o = cellsim(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o.stderr));
    runs.push((policy, out));
    out
}

/// Snapshot files of a run, oldest first.
pub fn snapshots(run: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(run.join("snapshots")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
        .collect();
    files.sort();
    files
}

/// Waits (polling) until `ready` holds; false on timeout.
pub fn wait_until(timeout: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    false
}

/// Sends `signal` (a `kill -s` name) to process `pid`.
pub fn signal(pid: u32, signal: &str) {
    let ok = Command::new("kill")
        .args(["-s", signal, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -s {signal} {pid}");
}

/// The deterministic outputs of a run: the parts of every deterministic table (ticks/, nodes/,
/// the policy's own such as migrations/) and
/// samples.jsonl, by name.
pub fn outputs(run: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for table in engine::output::deterministic_tables(run).unwrap() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(run.join(&table))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let name = format!("{table}/{}", f.file_name().unwrap().to_string_lossy());
            out.push((name, std::fs::read(&f).unwrap()));
        }
    }
    let samples = std::fs::read(run.join("samples.jsonl")).unwrap();
    out.push(("samples.jsonl".into(), samples));
    out
}

/// Asserts that `run` wrote exactly the bytes of `reference`.
pub fn assert_same_outputs(run: &Path, reference: &Path) {
    let (a, b) = (outputs(run), outputs(reference));
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b), "the same files");
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs from the uninterrupted run's");
    }
    assert!(b.len() > 6, "a run with parts to compare: {}", b.len());
}
