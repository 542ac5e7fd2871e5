//! The sbatch templates under a fake SLURM: stub `scontrol` (logs its arguments) and `srun` on
//! PATH, the `SLURM_*` variables a job sees, and the script run as a copy from a spool directory
//! with the binary in the submission directory. `run.sbatch`: USR1 (the time-limit warning) ->
//! cellsim snapshots -> `scontrol requeue <job>`; the requeued start resumes and completes with
//! outputs identical to an uninterrupted run, and never requeues once complete. `sweep.sbatch`:
//! array task i runs parameter line i, and requeues as `<array job>_<task>`; TERM (scancel) stops a
//! job with a snapshot and no requeue. `ingest.sbatch`
//! ingests a trace.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;

struct FakeSlurm {
    dir: tempfile::TempDir,
}

impl FakeSlurm {
    /// Stubs on `PATH`: `scontrol` logs its arguments, `srun` runs its command. A submission
    /// directory holds the binary where the templates look (`target/release/cellsim`) and the
    /// templates (`slurm/`).
    fn new() -> FakeSlurm {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let log = dir.path().join("scontrol.log");
        let stubs = [
            (
                "scontrol",
                format!("#!/bin/sh\necho \"$*\" >> '{}'\n", log.display()),
            ),
            ("srun", "#!/bin/sh\nexec \"$@\"\n".to_string()),
        ];
        for (name, stub) in stubs {
            std::fs::write(bin.join(name), stub).unwrap();
            Command::new("chmod")
                .args(["+x", &bin.join(name).display().to_string()])
                .status()
                .unwrap();
        }
        let submit = dir.path().join("submit");
        std::fs::create_dir_all(submit.join("target/release")).unwrap();
        std::os::unix::fs::symlink(BIN, submit.join("target/release/cellsim")).unwrap();
        let templates = Path::new(env!("CARGO_MANIFEST_DIR")).join("slurm");
        std::os::unix::fs::symlink(templates, submit.join("slurm")).unwrap();
        FakeSlurm { dir }
    }

    fn scontrol_calls(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("scontrol.log")).unwrap_or_default()
    }

    /// Starts template `script` with `args` as a job with `vars`, the way SLURM does: a copy of
    /// the script run from a spool directory, in the submission directory, with no `CELLSIM`
    /// (the templates find the binary through `SLURM_SUBMIT_DIR`).
    fn job(&self, script: &str, args: &[&str], vars: &[(&str, &str)]) -> Child {
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap()
        );
        let template = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("slurm")
            .join(script);
        let spool = tempfile::tempdir_in(self.dir.path()).unwrap().keep();
        let copy = spool.join("slurm_script");
        std::fs::copy(template, &copy).unwrap();
        let submit = self.dir.path().join("submit");
        let mut cmd = Command::new("bash");
        cmd.arg(copy)
            .args(args)
            .current_dir(&submit)
            .env("PATH", path)
            .env_remove("CELLSIM")
            .env("SLURM_CPUS_PER_TASK", "2")
            .env("SLURM_SUBMIT_DIR", &submit)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.spawn().unwrap()
    }
}

fn finish(job: Child) -> (Option<i32>, String) {
    let out = job.wait_with_output().unwrap();
    let log = text(&out.stdout) + &text(&out.stderr);
    (out.status.code(), log)
}

fn masb_flags(extra: &[&str]) -> Vec<String> {
    let mut args = run_args("masb", Path::new("unused"));
    args.drain(..1); // "run"
    let out = args.iter().position(|a| a == "--out").unwrap();
    args.drain(out..out + 2);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// `scancel` sends TERM: cellsim snapshots and the script does not requeue the job (it would
/// come back by itself); submitted again, the job resumes and completes.
/// A MASB job's run directory in `slurm`'s scratch and its `run.sbatch` arguments (the run
/// directory, then the flags: a snapshot every 10 simulated minutes).
fn masb_job(slurm: &FakeSlurm) -> (PathBuf, Vec<String>) {
    let run = slurm.dir.path().join("run");
    let mut args = vec![run.display().to_string()];
    args.extend(masb_flags(&["--snapshot-every-sim-minutes", "10"]));
    (run, args)
}

#[test]
fn run_sbatch_does_not_requeue_a_cancelled_job() {
    let slurm = FakeSlurm::new();
    let (run, args) = masb_job(&slurm);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let vars = [("SLURM_JOB_ID", "4545")];
    let job = slurm.job("run.sbatch", &args, &vars);
    assert!(wait_until(Duration::from_secs(60), || !snapshots(&run).is_empty()));
    signal(job.id(), "TERM");
    let (code, log) = finish(job);
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("stopped by TERM (scancel?) after a snapshot (exit 75): not requeued"),
        "{log}"
    );
    assert_eq!(slurm.scontrol_calls(), "", "no requeue");
    assert!(!run.join("summary.json").exists() && !snapshots(&run).is_empty());
    let (code, log) = finish(slurm.job("run.sbatch", &args, &[("SLURM_JOB_ID", "4546")]));
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("resuming"), "{log}");
    assert!(run.join("summary.json").exists(), "{log}");
    assert_eq!(slurm.scontrol_calls(), "", "no requeue");
}

#[test]
fn run_sbatch_requeues_on_the_time_limit_signal_and_stops_when_complete() {
    let reference = reference("masb");
    let slurm = FakeSlurm::new();
    let (run, args) = masb_job(&slurm);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let vars = [("SLURM_JOB_ID", "4242"), ("SLURM_RESTART_COUNT", "0")];
    // First start; USR1 once it has snapshotted (SLURM's --signal=B:USR1@300).
    let job = slurm.job("run.sbatch", &args, &vars);
    assert!(wait_until(Duration::from_secs(60), || !snapshots(&run).is_empty()));
    signal(job.id(), "USR1");
    let (code, log) = finish(job);
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("requeueing job 4242"), "{log}");
    assert_eq!(slurm.scontrol_calls(), "requeue 4242\n");
    assert!(!run.join("summary.json").exists());
    // The requeued job (SLURM counts the restart) resumes and completes: no further requeue.
    let vars = [("SLURM_JOB_ID", "4242"), ("SLURM_RESTART_COUNT", "1")];
    let (code, log) = finish(slurm.job("run.sbatch", &args, &vars));
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("cellsim: resuming"), "{log}");
    assert!(log.contains("resuming from"), "{log}");
    assert_eq!(
        slurm.scontrol_calls(),
        "requeue 4242\n",
        "no requeue once complete"
    );
    assert_same_outputs(&run, reference);
    // The run's log names the job and its restarts, which stay with the run directory.
    let run_log = std::fs::read_to_string(run.join("cellsim.log")).unwrap();
    let starts: Vec<&str> = run_log
        .lines()
        .filter(|l| l.contains(" started: "))
        .collect();
    assert_eq!(starts.len(), 2, "{run_log}");
    assert!(
        starts[0].ends_with(", SLURM job 4242 restart 0)"),
        "{run_log}"
    );
    assert!(
        starts[1].ends_with(", SLURM job 4242 restart 1)"),
        "{run_log}"
    );
    // Started again after completion (a stray requeue): nothing to do.
    let (code, log) = finish(slurm.job("run.sbatch", &args, &vars));
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("is complete"), "{log}");
    assert_eq!(slurm.scontrol_calls(), "requeue 4242\n");
}

/// A run on a synthetic cell signalled while the cell is being made (an 8x cell takes about half
/// an hour) stops that and is requeued, not killed (the signal's default action, before the
/// handlers were installed ahead of the cell); the requeued start, which has no run.toml to
/// resume and so runs the same command, makes the cell and gives the outputs of a run never
/// interrupted.
#[test]
fn run_sbatch_requeues_a_run_signalled_while_making_its_synthetic_cell() {
    let slurm = FakeSlurm::new();
    let config = config().display().to_string();
    let flags = [
        "--synthetic",
        "3000",
        "--hours",
        "1",
        "--policy",
        "borg-replay",
        "--config",
        &config,
    ];
    let reference = slurm.dir.path().join("reference");
    let mut args = vec!["run", "--out"];
    let reference_s = reference.display().to_string();
    args.push(&reference_s);
    args.extend(flags);
    let out = cellsim(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run = slurm.dir.path().join("run");
    let run_s = run.display().to_string();
    let mut args = vec![run_s.as_str()];
    args.extend(flags);
    let vars = [("SLURM_JOB_ID", "4343")];
    let job = slurm.job("run.sbatch", &args, &vars);
    let settings = run.join("synthetic/settings.json");
    assert!(wait_until(Duration::from_secs(60), || settings.exists()));
    signal(job.id(), "USR1");
    let (code, log) = finish(job);
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("stopped by a signal while making the synthetic cell"),
        "{log}"
    );
    assert_eq!(slurm.scontrol_calls(), "requeue 4343\n");
    assert!(!run.join("run.toml").exists());
    let (code, log) = finish(slurm.job("run.sbatch", &args, &vars));
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("cellsim: starting"), "{log}");
    assert_eq!(slurm.scontrol_calls(), "requeue 4343\n");
    assert_same_outputs(&run, &reference);
}

#[test]
fn sweep_sbatch_runs_its_parameter_line_and_requeues_the_array_task() {
    let slurm = FakeSlurm::new();
    let params = slurm.dir.path().join("params.txt");
    let trace = trace().display().to_string();
    let config = config().display().to_string();
    std::fs::write(
        &params,
        format!(
            "# policy sweep\n\n--trace {trace} --config {config} --policy borg-replay --hours 0.5\n\
             --trace {trace} --config {config} --policy masb --seed 3 --snapshot-every-sim-minutes 10\n"
        ),
    )
    .unwrap();
    let sweep = slurm.dir.path().join("sweep");
    let (params_s, sweep_s) = (params.display().to_string(), sweep.display().to_string());
    let vars = |task: &'static str| [("SLURM_ARRAY_JOB_ID", "77"), ("SLURM_ARRAY_TASK_ID", task)];
    // Task 0: borg-replay for half an hour, to completion.
    let (code, log) = finish(slurm.job("sweep.sbatch", &[&params_s, &sweep_s], &vars("0")));
    assert_eq!(code, Some(0), "{log}");
    let run0 = std::fs::read_to_string(sweep.join("run-0/run.toml")).unwrap();
    assert!(
        run0.contains("[policy]\nkind = \"borg-replay\"") && run0.contains("hours = 0.5"),
        "{run0}"
    );
    assert!(sweep.join("run-0/summary.json").exists());
    // Task 1: masb, stopped by the time-limit warning (USR1) -> requeue of 77_1.
    let job = slurm.job("sweep.sbatch", &[&params_s, &sweep_s], &vars("1"));
    let run1 = sweep.join("run-1");
    assert!(wait_until(Duration::from_secs(60), || !snapshots(&run1).is_empty()));
    signal(job.id(), "USR1");
    let (code, log) = finish(job);
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(slurm.scontrol_calls(), "requeue 77_1\n");
    let config1 = std::fs::read_to_string(run1.join("run.toml")).unwrap();
    assert!(config1.contains("[policy]\nkind = \"masb\"") && config1.contains("seed = 3"));
    // A task beyond the parameter list is an error, not a silent success.
    let (code, log) = finish(slurm.job("sweep.sbatch", &[&params_s, &sweep_s], &vars("2")));
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("has no parameter line 2"), "{log}");
}

/// `sweep.sbatch` submitted from a directory that is not the checkout (issue 56): it finds
/// `run.sbatch` in the checkout `CELLSIM` names, and a quoted parameter path with spaces, and a
/// sweep directory with spaces, stay whole.
#[test]
fn sweep_sbatch_from_elsewhere_with_spaces_in_paths() {
    let slurm = FakeSlurm::new();
    let elsewhere = slurm.dir.path().join("home dir");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let config = elsewhere.join("my config.toml");
    std::fs::copy(common::config(), &config).unwrap();
    let params = elsewhere.join("params.txt");
    let trace = trace().display().to_string();
    std::fs::write(
        &params,
        format!(
            "--trace {trace} --config \"{}\" --policy first-fit --hours 0.5\n",
            config.display()
        ),
    )
    .unwrap();
    let sweep = elsewhere.join("my sweep");
    let (params_s, sweep_s) = (params.display().to_string(), sweep.display().to_string());
    let bin = slurm.dir.path().join("submit/target/release/cellsim");
    let bin_s = bin.display().to_string();
    let elsewhere_s = elsewhere.display().to_string();
    let vars = [
        ("SLURM_ARRAY_JOB_ID", "78"),
        ("SLURM_ARRAY_TASK_ID", "0"),
        ("SLURM_SUBMIT_DIR", elsewhere_s.as_str()),
        ("CELLSIM", bin_s.as_str()),
    ];
    let (code, log) = finish(slurm.job("sweep.sbatch", &[&params_s, &sweep_s], &vars));
    assert_eq!(code, Some(0), "{log}");
    assert!(sweep.join("run-0/summary.json").exists(), "{log}");
    let recorded = std::fs::read_to_string(sweep.join("run-0/run.toml")).unwrap();
    assert!(recorded.contains("part = \"25min\""), "{recorded}");
    // Without CELLSIM, from elsewhere: a clear error, not bash's "No such file".
    let vars = [
        ("SLURM_ARRAY_JOB_ID", "78"),
        ("SLURM_ARRAY_TASK_ID", "0"),
        ("SLURM_SUBMIT_DIR", elsewhere_s.as_str()),
    ];
    let other = elsewhere.join("other").display().to_string();
    let (code, log) = finish(slurm.job("sweep.sbatch", &[&params_s, &other], &vars));
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("cellsim: no run.sbatch in"), "{log}");
}

/// `ingest.sbatch` finds the binary through the submission directory (it looked next to its own
/// copy in SLURM's spool directory, where there is none) and ingests the trace with the job's
/// CPUs.
#[test]
fn ingest_sbatch_ingests_with_the_submitted_binary() {
    let slurm = FakeSlurm::new();
    let raw = slurm.dir.path().join("raw");
    let parquet = slurm.dir.path().join("parquet");
    let (raw_s, parquet_s) = (raw.display().to_string(), parquet.display().to_string());
    let out = cellsim(&["gen", &raw_s, "--machines", "60", "--hours", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (code, log) = finish(slurm.job("ingest.sbatch", &[&raw_s, &parquet_s], &[]));
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("task_usage"), "{log}");
    assert!(parquet.join("ingest-summary.json").is_file());
}

/// `scripts/paper-sweep.sh` writes a parameter line per experiment of seed 000's section 7, each
/// a valid `cellsim run` with the table's setting (read back from `--print-config`), and a line
/// runs to completion as an array task.
#[test]
fn paper_sweep_lines_are_the_papers_experiments() {
    let slurm = FakeSlurm::new();
    let exp = slurm.dir.path().join("exp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/paper-sweep.sh");
    let trace = trace().display().to_string();
    let out = Command::new("bash")
        .arg(&script)
        .args([&trace, &exp.display().to_string(), "--hours", "0.25"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let params = text(&out.stdout);
    let lines: Vec<&str> = params
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    // (policy, workload %, compact %, SIAS_GAIN, SRAS_GAIN, multiply) per line, as the tables.
    let mut expected = vec![("borg-replay", 100, 100, false, false, 1)];
    expected.push(("masb", 100, 100, false, false, 1));
    expected.extend((101..=106).map(|p| ("masb", p, 100, false, false, 1)));
    expected.extend([99, 98, 97].map(|p| ("masb", 100, p, false, false, 1)));
    expected.extend(
        [(true, false), (false, true), (true, true)].map(|(i, r)| ("masb", 100, 100, i, r, 1)),
    );
    expected.extend([2, 4, 8].map(|k| ("masb", 100, 100, false, false, k)));
    assert_eq!(lines.len(), expected.len(), "{params}");
    for (line, want) in lines.iter().zip(&expected) {
        let mut args = vec!["run"];
        args.extend(line.split_whitespace());
        args.push("--print-config");
        let out = cellsim(&args);
        assert!(out.status.success(), "{line}: {}", text(&out.stderr));
        let config: toml::Value = toml::from_str(&text(&out.stdout)).unwrap();
        // borg-replay has no MASB keys: no gain scores.
        let flag = |key: &str| {
            config["policy"]
                .get(key)
                .is_some_and(|v| v.as_bool().unwrap())
        };
        let got = (
            config["policy"]["kind"].as_str().unwrap(),
            config["scale"]["workload_pct"].as_integer().unwrap(),
            config["scale"]["compact_pct"].as_integer().unwrap(),
            flag("sias_gain"),
            flag("sras_gain"),
            config["scale"]["multiply"].as_integer().unwrap(),
        );
        assert_eq!(got, *want, "{line}");
        assert_eq!(config["hours"].as_float(), Some(0.25), "{line}");
        assert_eq!(config["trace"].as_str(), Some(trace.as_str()), "{line}");
    }
    // Table 6's SIAS_GAIN + SRAS run as array task 11 of the sweep.
    let params_file = slurm.dir.path().join("params.txt");
    std::fs::write(&params_file, &params).unwrap();
    let sweep = slurm.dir.path().join("sweep");
    let vars = [("SLURM_ARRAY_JOB_ID", "78"), ("SLURM_ARRAY_TASK_ID", "11")];
    let args = [
        params_file.display().to_string(),
        sweep.display().to_string(),
    ];
    let (code, log) = finish(slurm.job("sweep.sbatch", &[&args[0], &args[1]], &vars));
    assert_eq!(code, Some(0), "{log}");
    let run = std::fs::read_to_string(sweep.join("run-11/run.toml")).unwrap();
    assert!(run.contains("sias_gain = true"), "{run}");
    assert!(sweep.join("run-11/summary.json").exists());
}
