//! The `cellsim` binary end to end: the gen -> ingest -> stats pipeline, exit codes, error
//! messages on stderr, and plain progress lines when stderr is not a terminal.

use std::path::Path;
use std::process::{Command, Output};

use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn cellsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cellsim"))
        .args(args)
        .output()
        .expect("cellsim runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_lists_the_commands() {
    let out = cellsim(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for command in ["ingest", "gen", "stats"] {
        assert!(help.contains(command), "{help}");
    }
}

/// `run --help` names the policy and seed a run gets when neither a flag nor a config sets
/// them, and they are the engine's defaults.
#[test]
fn run_help_shows_the_default_policy_and_seed() {
    let out = cellsim(&["run", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let defaults = engine::RunConfig::default();
    let policy = format!("[default: {}, or the config's]", defaults.policy.kind());
    let seed = format!("[default: {}, or the config's]", defaults.seed);
    assert!(help.contains(&policy), "{policy} not in: {help}");
    assert!(help.contains(&seed), "{seed} not in: {help}");
}

#[test]
fn gen_ingest_stats_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let out = cellsim(&[
        "gen",
        &p("trace"),
        "--machines",
        "60",
        "--hours",
        "2",
        "--seed",
        "3",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("60 machines, 2 h, seed 3"));
    assert!(
        text(&out.stderr).contains("gen: "),
        "plain progress lines off a TTY"
    );
    // The held jobs by default, left out with --no-held-jobs (the trace's tables then those of
    // the model before, `real-gcd-8.5h-2026-11-27`).
    let held_jobs = |trace: &str| {
        let summary = std::fs::read_to_string(Path::new(&p(trace)).join("gen-summary.json"));
        let summary: serde_json::Value = serde_json::from_str(&summary.unwrap()).unwrap();
        summary["config"]["held_jobs"].as_bool()
    };
    assert_eq!(held_jobs("trace"), Some(true));
    let out = cellsim(&[
        "gen",
        &p("plain"),
        "--machines",
        "60",
        "--hours",
        "0.5",
        "--no-held-jobs",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(held_jobs("plain"), Some(false));

    // `--threads 0`: one per core, as for `run` (ingest used to refuse it).
    let out = cellsim(&["ingest", &p("trace"), &p("parquet"), "--threads", "0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("task_usage"));
    assert!(text(&out.stderr).contains("ingest: "));

    let out = cellsim(&["stats", &p("parquet"), "--json", &p("stats.json")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("== SPEC 3.1 targets =="));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("stats.json")).unwrap()).unwrap();
    assert_eq!(json["machines"], 60);

    // Within the trace's two hours: no note; asked for 2.5 (within the hour a run may go past the
    // last event, wherever in its last minutes that falls): a note says what the last part is.
    let run = |hours: &str, out: &str| {
        cellsim(&[
            "run",
            "--trace",
            &p("parquet"),
            "--hours",
            hours,
            "--out",
            &p(out),
        ])
    };
    let out = run("2", "run-2h");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("note:"),
        "{}",
        text(&out.stderr)
    );
    let out = run("2.5", "run-2.5h");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("note: the trace's events end at ")
            && stderr.contains("h have no new events"),
        "{stderr}"
    );
    // Into the finished run's directory again: the refusal alone, no note above it.
    let out = run("2.5", "run-2.5h");
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error: ") && stderr.contains("already holds a finished run"),
        "{stderr}"
    );

    // Directories mixed up: a table's directory for the trace, the trace for a run.
    let out = cellsim(&["stats", &p("parquet/task_events")]);
    assert_eq!(out.status.code(), Some(1));
    let expected = format!(
        "{} is the task_events table of the ingested trace {}; give {}",
        p("parquet/task_events"),
        p("parquet"),
        p("parquet")
    );
    assert!(
        text(&out.stderr).contains(&expected),
        "{}",
        text(&out.stderr)
    );
    let out = cellsim(&["report", &p("parquet")]);
    assert_eq!(out.status.code(), Some(1));
    let expected = format!("{} is an ingested trace, not a run directory", p("parquet"));
    assert!(
        text(&out.stderr).contains(&expected),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn errors_exit_1_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    std::fs::create_dir_all(trace.join("machine_events")).unwrap();
    std::fs::write(
        trace.join("machine_events/part-00000-of-00001.csv"),
        "0,1,0,p,0.5,0.5\n0,x,0,p,0.5,0.5\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = cellsim(&[
        "ingest",
        &trace.display().to_string(),
        &out_dir.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("part-00000-of-00001.csv:2: column 2 (machine_id): cannot parse \"x\" as an unsigned 64-bit integer"),
        "{stderr}"
    );
    assert!(
        !out_dir.exists(),
        "a failed ingest leaves no OUT it created behind"
    );

    let out = cellsim(&[
        "ingest",
        &trace.display().to_string(),
        &out_dir.display().to_string(),
        "--tables",
        "task_evnts",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown table \"task_evnts\""));

    let out = cellsim(&["stats", &dir.path().display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is this a directory written completely by `cellsim ingest`?")
    );
    // The raw CSV trace where its ingested dataset belongs: the way to make one.
    let out = cellsim(&["stats", &trace.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("holds the trace's CSV parts, not an ingested dataset")
            && stderr.contains(&format!("`cellsim ingest {} OUT`", trace.display())),
        "{stderr}"
    );

    // A truncated gzip part (the real sample's first 100 bytes): the file and the cause, the
    // cause once (the library's message already quotes it).
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/gcd-sample/task_events/part-00000-of-00500.csv.gz");
    let truncated = dir.path().join("truncated");
    std::fs::create_dir_all(truncated.join("task_events")).unwrap();
    std::fs::write(
        truncated.join("task_events/part-00000-of-00001.csv.gz"),
        &std::fs::read(sample).unwrap()[..100],
    )
    .unwrap();
    let out = cellsim(&[
        "ingest",
        &truncated.display().to_string(),
        &dir.path().join("out2").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("task_events/part-00000-of-00001.csv.gz: corrupt or truncated input"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("incomplete deflate stream").count(),
        1,
        "{stderr}"
    );

    assert!(!dir.path().join("out2").exists());

    // A file where the run's output directory, or the ingested trace, belongs.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = cellsim(&["run", "--out", &file.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("a-file is a file; give a directory"));
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/gcd-sample");
    let out = cellsim(&[
        "ingest",
        &sample.display().to_string(),
        &file.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "a-file is a file; give a directory (new or an earlier ingest's) for the ingested trace"
        ),
        "{stderr}"
    );

    let out = cellsim(&["gen", "x", "--machines", "lots"]);
    assert_eq!(out.status.code(), Some(2), "usage errors come from clap");
}

/// A synthetic cell that cannot be made is refused before anything is written, so the corrected
/// command works in the same directory (it once recorded the bad cell's settings there and then
/// refused every other cell).
#[test]
fn a_synthetic_cell_out_of_range_leaves_its_directory_usable() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run").display().to_string();
    let out = cellsim(&["run", "--synthetic", "10", "--out", &run]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("the synthetic cell (--synthetic, --hours): invalid settings: machines must be 50..=100664, got 10"),
        "{stderr}"
    );
    assert!(!dir.path().join("run").exists());
    let out = cellsim(&["run", "--synthetic", "50", "--hours", "800", "--out", &run]);
    assert!(text(&out.stderr).contains("hours must be in (0, 744], got 800"));
    let out = cellsim(&["run", "--synthetic", "50", "--hours", "0.2", "--out", &run]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn run_with_no_arguments_replays_the_embedded_default_and_report_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cellsim"))
        .arg("run")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for label in [
        "nodes online",
        "STA",
        "PA",
        "overloaded",
        "tasks running",
        "CPU used",
    ] {
        assert!(stdout.contains(label), "{label} missing from\n{stdout}");
    }
    // The progress line's last speed is the table's (issue 56: 108,225x against 195,841x,
    // the line counting the making of the synthetic cell).
    let stderr = text(&out.stderr);
    let last_line = stderr.lines().rfind(|l| l.starts_with("run: ")).unwrap();
    let shown = last_line
        .rsplit(", ")
        .next()
        .unwrap()
        .trim_end_matches("x real time");
    let row = stdout
        .lines()
        .find(|l| l.starts_with("speed (x real time)"))
        .unwrap();
    assert_eq!(
        Some(shown),
        row.split_whitespace().last(),
        "{last_line} / {row}"
    );
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("cellsim-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1);
    for f in [
        "ticks/part-00000000.parquet",
        "nodes/part-00000000.parquet",
        "timing/part-00000000.parquet",
        "samples.jsonl",
        "run.toml",
        "schema.json",
        "summary.json",
    ] {
        assert!(runs[0].join(f).exists(), "{f}");
    }
    // borg-replay never migrates: no `migrations/` (MASB's own table).
    assert!(!runs[0].join("migrations").exists());
    let run = runs[0].display().to_string();
    let out = cellsim(&["report", &run, &run]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout)
            .lines()
            .next()
            .unwrap()
            .matches(&run)
            .count(),
        2,
        "two runs side by side"
    );

    // Seed 000's published values beside the run's: borg-replay against Table 4's Borg column.
    let out = cellsim(&["report", &run, "--paper"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("against seed 000 Table 4, Borg"),
        "{stdout}"
    );
    let pa = stdout.lines().find(|l| l.starts_with("PA %")).unwrap();
    assert_eq!(pa.split_whitespace().nth(2), Some("52.94"), "{pa}");
    // The default run (6 h of a 500-machine synthetic cell, modelled usage) is not the paper's
    // month on its 12.5k cell: each difference is said, and the differences marked.
    for unlike in [
        "not the paper's experiment: it spans 6.0 simulated hours, the paper's month 696",
        "not the paper's experiment: its cell averages",
        "the paper's 12500",
    ] {
        assert!(stdout.contains(unlike), "{unlike}: {stdout}");
    }
    assert!(pa.trim_end().ends_with('*'), "{pa}");
    assert!(!stdout.contains("additions"), "{stdout}");
    let paper = &stdout[stdout.find("against seed 000").unwrap()..];
    assert!(
        !paper.contains("migrations / min"),
        "Table 4's Borg column has none: {paper}"
    );
    // Shorter than the month, the run's first and last whole hours beside Table 4: DA's, as
    // counted apart from its `ticks/` (360 one-minute ticks: hours 0 and 5).
    assert!(
        paper.contains("hour by hour: its 6 whole simulated hours"),
        "{paper}"
    );
    let hours = &paper[paper.find("hour by hour").unwrap()..];
    let da = hours.lines().find(|l| l.starts_with("DA %")).unwrap();
    let da: Vec<&str> = da.split_whitespace().skip(2).collect();
    let counted = da_by_hour(&runs[0].join("ticks/part-00000000.parquet"));
    assert_eq!(counted.len(), 6);
    let least = counted.iter().copied().fold(f64::INFINITY, f64::min);
    let most = counted.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let expected = [36.74, counted[0], counted[5], least, most].map(|v| format!("{v:.2}"));
    assert_eq!(da, expected, "{hours}");

    // The wall-clock profile over the whole run and over a window of it (`scripts/ab.sh`).
    let median_row = |args: &[&str]| {
        let out = cellsim(args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let row = stdout
            .lines()
            .find(|l| l.starts_with("ms per tick (median)"));
        row.map(str::to_string)
    };
    assert!(median_row(&["report", &run, "--timing"]).is_some());
    // The one-thread share (issue 62 item 2): a percentage, and its phase rows "a/b" with the
    // parallel part of each phase no larger than the phase (the phases read from timing/).
    let out = cellsim(&["report", &run, "--timing"]);
    let stdout = text(&out.stdout);
    let value = |label: &str| {
        let line = stdout.lines().find(|l| l.starts_with(label));
        let line = line.unwrap_or_else(|| panic!("{label}: {stdout}"));
        line[24..].trim().to_string()
    };
    let share: f64 = value("one-thread share (%)").parse().unwrap();
    assert!((0.0..=100.0).contains(&share), "{stdout}");
    for phase in ["trace apply", "policy", "metrics", "output"] {
        let pair = value(&format!("  {phase} (1/par)"));
        let (one, par) = pair.split_once('/').unwrap();
        let (one, par): (f64, f64) = (one.parse().unwrap(), par.parse().unwrap());
        assert!(one >= 0.0 && par >= 0.0, "{phase}: {pair}");
    }

    // The allocation classes over time (seed 000, Figures 8 and 9), one panel per run: a PNG of
    // two panels, and an SVG holding a line per class in each. A path of another kind is
    // refused before anything is read or written.
    let png = dir.path().join("classes.png");
    let out = cellsim(&["report", &run, &run, "--plot", &png.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("figure written to"));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let info = decoder.read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), (1100, 2 * 340));
    let svg = dir.path().join("classes.svg");
    let out = cellsim(&["report", &run, "--plot", &svg.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg_text.starts_with("<svg") && svg_text.contains(&run),
        "{svg_text}"
    );
    // With the tables' reader gone (`| head`), the figure is still written.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let piped = dir.path().join("piped.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_cellsim"))
        .args(["report", &run, "--plot", &piped.display().to_string()])
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(piped.exists());
    // A run not finished yet (here: the same parts without the summary) is drawn from the parts
    // written so far and left out of the tables, with a note.
    let going = dir.path().join("going");
    std::fs::create_dir_all(going.join("ticks")).unwrap();
    std::fs::copy(runs[0].join("run.toml"), going.join("run.toml")).unwrap();
    for part in std::fs::read_dir(runs[0].join("ticks")).unwrap() {
        let part = part.unwrap().path();
        std::fs::copy(&part, going.join("ticks").join(part.file_name().unwrap())).unwrap();
    }
    let going_s = going.display().to_string();
    let out = cellsim(&[
        "report",
        &run,
        &going_s,
        "--plot",
        &png.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!(
        "{going_s} has not finished: left out of the tables"
    )));
    let header = text(&out.stdout).lines().next().unwrap().to_string();
    assert!(
        header.contains(&run) && !header.contains(&going_s),
        "{header}"
    );
    let out = cellsim(&["report", &going_s]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "without --plot it is an error, as before"
    );
    let out = cellsim(&["report", &run, "--plot", "classes.pdf"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("classes.pdf: a figure is written as .svg or .png"));
    assert!(text(&out.stdout).is_empty(), "refused before the report");

    // A reader that stops early (`| head`) closes the pipe: the report ends quietly, status 0,
    // instead of panicking. Here the pipe has no reader from the start.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_cellsim"))
        .args(["report", &run, "--timing"])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    assert!(median_row(&["report", &run, "--timing", "--from-tick", "300"]).is_some());
    let out = cellsim(&["report", &run, "--from-tick", "300"]);
    assert_eq!(out.status.code(), Some(2), "--from-tick needs --timing");

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = cellsim(&["report", &empty.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is this a finished `cellsim run` directory?"));
    // A directory holding runs (a sweep's): its finished runs side by side in natural order,
    // the unfinished left out with a note; none finished is an error.
    let sweep = dir.path().join("sweep");
    for (name, finished) in [("run-10", true), ("run-5", false), ("run-2", true)] {
        let to = sweep.join(name);
        std::fs::create_dir_all(&to).unwrap();
        let from = &runs[0];
        for file in ["run.toml", "summary.json"]
            .iter()
            .take(1 + finished as usize)
        {
            std::fs::copy(from.join(file), to.join(file)).unwrap();
        }
    }
    // A run refused at config time (a bad line of the sweep): only its log (issue 56: the
    // report aborted on it).
    let refused = sweep.join("run-7");
    std::fs::create_dir_all(&refused).unwrap();
    std::fs::write(
        refused.join("cellsim.log"),
        "2026-11-27T10:00:00Z started: cellsim run --tick 7s (build 0.1.0, pid 1, host vm)\n\
         2026-11-27T10:00:00Z error: invalid settings: part (1d) must be a whole number of ticks\n",
    )
    .unwrap();
    let out = cellsim(&["report", &sweep.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "{} never started (no run.toml; its log ends: error: invalid settings",
            refused.display()
        )),
        "{}",
        text(&out.stderr)
    );
    let header = text(&out.stdout).lines().next().unwrap().to_string();
    let (two, ten) = (sweep.join("run-2"), sweep.join("run-10"));
    let at = |run: &Path| header.find(&format!(" {}", run.display())).unwrap();
    assert!(at(&two) < at(&ten), "{header}");
    assert!(!header.contains("run-5"), "{header}");
    assert!(
        text(&out.stderr).contains(&format!(
            "{} has not finished: left out",
            sweep.join("run-5").display()
        )),
        "{}",
        text(&out.stderr)
    );
    let out = cellsim(&["report", &dir.path().display().to_string()]);
    assert_eq!(out.status.code(), Some(1), "only `going`, not finished");
    assert!(
        text(&out.stderr).contains("no finished run among the 1 found"),
        "{}",
        text(&out.stderr)
    );
    // A run directory without its summary: a run killed, stopped or still running.
    std::fs::copy(runs[0].join("run.toml"), dir.path().join("run.toml")).unwrap();
    let out = cellsim(&["report", &dir.path().display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("holds a run that has not finished (no summary.json yet)"),
        "{}",
        text(&out.stderr)
    );
    // With stderr closed the error cannot be shown, but the status still says error (1), not
    // panic (101).
    let closed_stderr = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        writer
    };
    let out = Command::new(env!("CARGO_BIN_EXE_cellsim"))
        .args(["report", &dir.path().display().to_string()])
        .stderr(closed_stderr())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));

    // Every setting at its default: no settings rows. Another seed: its row, at the end of the
    // run and in the report, beside the first run's default.
    assert!(!stdout.contains("settings (not default)"), "{stdout}");
    // Its notes and progress lines go to a closed stderr (a log reader that died): the run
    // goes on and succeeds.
    let out = Command::new(env!("CARGO_BIN_EXE_cellsim"))
        .args(["run", "--seed", "7", "--hours", "1", "--out", "seven"])
        .current_dir(dir.path())
        .stderr(closed_stderr())
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let seed_row = |stdout: &str| {
        let rows: Vec<&str> = stdout
            .lines()
            .skip_while(|l| *l != "settings (not default)")
            .collect();
        rows.iter()
            .find(|l| l.trim_start().starts_with("seed "))
            .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
    };
    assert_eq!(seed_row(&text(&out.stdout)).as_deref(), Some("7"));
    let seven = dir.path().join("seven").display().to_string();
    let out = cellsim(&["report", &run, &seven]);
    assert_eq!(seed_row(&text(&out.stdout)).as_deref(), Some("1 7"));
    // The figure's panels say what tells the runs apart: the policy and the changed settings.
    let svg = dir.path().join("seeds.svg");
    let out = cellsim(&["report", &run, &seven, "--plot", &svg.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg.contains(&format!(">\n{run} (borg-replay)\n</text>")),
        "{svg}"
    );
    assert!(svg.contains(&format!(">\n{seven} (borg-replay, seed = 7)\n</text>")));
}

#[test]
fn run_config_errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("exp.toml");
    std::fs::write(&config, "seed = 3\nrounds_per_tik = 2\n").unwrap();
    let out = cellsim(&["run", "--config", &config.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("exp.toml")
            && stderr.contains("line 2")
            && stderr.contains("rounds_per_tik"),
        "{stderr}"
    );
    let out = cellsim(&["run", "--print-config", "--hours", "2"]);
    assert!(out.status.success());
    let printed = text(&out.stdout);
    assert!(printed.contains("hours = 2.0") && printed.contains("rounds_per_tick = 6"));
    // Keys written only when set are shown, commented, with their defaults: uncommented, each
    // line parses into a config with the same defaults.
    for line in [
        "# release = \"submit\"",
        "# inbox_order = \"fair\"",
        "# [usage.window]",
        "# every_s = 300",
        "# [watchdog]",
        "# stall_minutes = 10.0",
    ] {
        assert!(printed.contains(line), "{line} in\n{printed}");
    }
    let top: String = printed
        .lines()
        .filter_map(|l| l.strip_prefix("# "))
        .take_while(|l| !l.starts_with('['))
        .filter(|l| l.contains('='))
        .map(|l| l.split('#').next().unwrap().trim().to_string() + "\n")
        .collect();
    let parsed: engine::RunConfig = toml::from_str(&top).unwrap();
    assert_eq!(parsed, engine::RunConfig::default());
}

/// A trace ingested without its machine_events table gives a cell without machines: the run is
/// refused with the way to ingest them, instead of replaying every task as pending.
#[test]
fn a_trace_without_machines_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw");
    std::fs::create_dir_all(raw.join("task_events")).unwrap();
    std::fs::write(
        raw.join("task_events/part-00000-of-00001.csv"),
        "700000000,,1,0,,0,u,0,0,0.1,0.1,0,0\n",
    )
    .unwrap();
    let trace = dir.path().join("parquet").display().to_string();
    let out = cellsim(&["ingest", &raw.display().to_string(), &trace]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run = dir.path().join("run").display().to_string();
    let out = cellsim(&["run", "--trace", &trace, "--out", &run]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{trace} has no machine_events rows, so the cell would have no machines"
        )),
        "{stderr}"
    );
}

/// A relative trace in a config file is relative to the file: an experiment file next to its
/// trace works from any working directory (a SLURM job starts in the submission directory), and
/// `run.toml` records the trace's absolute place.
/// `report --paper` names a MASB run's additions seed 000 does not describe (its options off by
/// default) and a start held to the trace's scheduler, beside the comparison with Table 7.
#[test]
fn report_paper_names_the_masb_additions_a_run_used() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let out = cellsim(&["gen", &p("raw"), "--machines", "60", "--hours", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cellsim(&["ingest", &p("raw"), &p("parquet")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let config = "trace = \"parquet\"\nhours = 0.25\nrelease = \"trace-schedule\"\n\
                  [policy]\nkind = \"masb\"\nbook_asks = true\noffload_every_s = 300\n";
    std::fs::write(dir.path().join("c.toml"), config).unwrap();
    let out = cellsim(&["run", "--config", &p("c.toml"), "--out", &p("run")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cellsim(&["report", &p("run"), "--paper"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for said in [
        "against seed 000 Table 7, SIAS + SRAS",
        "not the paper's experiment: its tasks start no earlier than the trace's scheduler",
        "not the paper's experiment: its MASB runs additions seed 000 does not describe: \
         book_asks = true, offload_every_s = 300 (offload_goal = \"not-da\")",
    ] {
        assert!(stdout.contains(said), "{said}: {stdout}");
    }
    // Table 7's migrations a minute read both ways: as its header says (1,490.65 GB / 338.09 MB
    // a minute) and as the month's total (the same over 29 days' 41,760 minutes), the run's
    // own rate beside each, and the second reading explained under the table.
    let paper = &stdout[stdout.find("against seed 000").unwrap()..];
    let row = |label: &str| -> Vec<String> {
        let line = paper.lines().find(|l| l.starts_with(label)).unwrap();
        line[label.len()..]
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    // Table 7 prints no tasks count: Table 5's at 100 % (132,061.15 a minute), labelled so,
    // beside the mean of the run's ticks' running tasks, counted here from its ticks part.
    let tasks = row("tasks running (Table 5)");
    let part = dir.path().join("run/ticks/part-00000000.parquet");
    let running = ticks_column(&part, "tasks_running");
    let mean = running.iter().sum::<f64>() / running.len() as f64;
    assert_eq!(tasks[..2], ["132061.15".to_string(), format!("{mean:.2}")]);
    let (minute, total) = (row("migrations / minute"), row("migrations / min (total)"));
    assert_eq!((minute[0].as_str(), total[0].as_str()), ("4409.03", "0.11"));
    assert_eq!(minute[1], total[1], "the run's own rate in both rows");
    assert!(
        stdout.contains("(total): Table 7's GB column read as the month's total"),
        "{stdout}"
    );
}

/// On a trace without task_usage (the real sample), `report --paper` says the run's usage is
/// modelled and, unless `[usage.window]` draws it again in time, constant while a task runs,
/// naming the setting; with the table it says the first only.
#[test]
fn report_paper_says_when_modelled_usage_stands_still() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/gcd-sample");
    let out = cellsim(&["ingest", &sample.display().to_string(), &p("parquet")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let still = "not the paper's experiment: its modelled usage is constant while a task runs";
    for (name, window) in [("still", ""), ("moving", "[usage.window]\n")] {
        let config =
            format!("trace = \"parquet\"\nhours = 0.1\n{window}[policy]\nkind = \"masb\"\n");
        std::fs::write(dir.path().join(format!("{name}.toml")), config).unwrap();
        let toml = p(&format!("{name}.toml"));
        let out = cellsim(&["run", "--config", &toml, "--out", &p(name)]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let out = cellsim(&["report", &p(name), "--paper"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(
            stdout
                .contains("not the paper's experiment: its usage is modelled (no task_usage rows)"),
            "{stdout}"
        );
        assert_eq!(
            stdout.contains(still),
            window.is_empty(),
            "{name}: {stdout}"
        );
        if window.is_empty() {
            assert!(
                stdout.contains("`[usage.window]` draws it again every 300 s"),
                "{stdout}"
            );
        }
    }
}

#[test]
fn a_config_files_relative_trace_is_relative_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("exp");
    let p = |name: &str| exp.join(name).display().to_string();
    let out = cellsim(&["gen", &p("raw"), "--machines", "60", "--hours", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cellsim(&["ingest", &p("raw"), &p("parquet")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(exp.join("c.toml"), "trace = \"parquet\"\nhours = 0.5\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cellsim"))
        .current_dir(dir.path())
        .args(["run", "--config", "exp/c.toml", "--out", "run"])
        .args(["--snapshot-every-sim-minutes", "10"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let saved = std::fs::read_to_string(dir.path().join("run/run.toml")).unwrap();
    let trace = std::path::absolute(exp.join("parquet")).unwrap();
    assert!(
        saved.contains(&format!("trace = \"{}\"", trace.display())),
        "{saved}"
    );
    // The summary reports the trace as given, also after a resume from elsewhere.
    let run = dir.path().join("run");
    let summary_trace = || {
        let summary = std::fs::read_to_string(run.join("summary.json")).unwrap();
        let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
        summary["trace"].as_str().unwrap().to_string()
    };
    assert_eq!(summary_trace(), "exp/parquet");
    std::fs::remove_file(run.join("summary.json")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cellsim"))
        .current_dir(&exp)
        .args(["resume", &run.display().to_string()])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(
        out.status.success() && stderr.contains("resuming from"),
        "{stderr}"
    );
    assert_eq!(summary_trace(), "exp/parquet");
}

/// A run notes each simulated day done, with its tick and speed, on stderr and in its log (a
/// long run's history of speed; `cellsim status` shows it as a running run's last log line).
/// A run shorter than a day has no such line.
#[test]
fn a_run_notes_each_simulated_day_in_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let run_s = run.display().to_string();
    let out = cellsim(&["run", "--synthetic", "60", "--hours", "25", "--out", &run_s]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(run.join("cellsim.log")).unwrap();
    let days: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" simulated day "))
        .collect();
    assert_eq!(days.len(), 1, "{log}");
    assert!(
        days[0].contains(" simulated day 1 done (tick ")
            && days[0].contains(" of 1500), ")
            && days[0].ends_with("x real time so far"),
        "{log}"
    );
    assert!(text(&out.stderr).contains("simulated day 1 done"));
    let short = dir.path().join("short");
    let out = cellsim(&[
        "run",
        "--synthetic",
        "60",
        "--hours",
        "23",
        "--out",
        &short.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(short.join("cellsim.log")).unwrap();
    assert!(!log.contains("simulated day"), "{log}");
}

/// `gen --scenario`: a seed's experiment, ingested and run by a policy from the command line at
/// a 100 ms tick; an unknown scenario, or a scenario setting without `--scenario`, is refused.
#[test]
fn gen_scenario_ingest_run_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let out = cellsim(&[
        "gen",
        &p("raw"),
        "--scenario",
        "pse-1",
        "--jobs-factor",
        "1",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("100 machines, 25 jobs, 25 tasks"),
        "{}",
        text(&out.stdout)
    );
    assert!(dir.path().join("raw/scenario.json").is_file());
    let out = cellsim(&["ingest", &p("raw"), &p("pq")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(dir.path().join("pq/scenario/datacenters.csv").is_file());
    let out = cellsim(&[
        "run",
        "--trace",
        &p("pq"),
        "--policy",
        "omniscient",
        "--tick",
        "100ms",
        "--out",
        &p("run"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(dir.path().join("run/tasks").is_dir());
    let out = cellsim(&["gen", &p("x"), "--scenario", "sparow"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("sparrow-load"),
        "{}",
        text(&out.stderr)
    );
    let out = cellsim(&["gen", &p("y"), "--load", "50"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--scenario"),
        "{}",
        text(&out.stderr)
    );
}

/// `cellsim experiment` refuses a directory that holds something (results never mix) and an
/// unknown experiment, naming the choices.
#[test]
fn experiment_refuses_a_used_directory_and_unknown_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let out = cellsim(&[
        "experiment",
        "sparrow-load",
        "--out",
        &dir.path().display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("exists and is not empty"), "{err}");
    let out = cellsim(&["experiment", "sparrow-lod", "--out", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("sparrow-load"));
}

/// `cellsim experiment federation-hosts` runs seed 003's experiment and writes its outputs; the
/// Sparrow-only options are refused with the reason.
#[test]
fn federation_experiments_run_and_refuse_sparrow_options() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hosts");
    let run = cellsim(&[
        "experiment",
        "federation-hosts",
        "--out",
        &out.display().to_string(),
        "--seeds",
        "1",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    for f in ["results.parquet", "results.md", "hosts.svg", "hosts.png"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    assert!(text(&run.stdout).contains("## Against seed 003"));
    let refused = cellsim(&[
        "experiment",
        "federation-jobs",
        "--out",
        &dir.path().join("jobs").display().to_string(),
        "--net-delay-ms",
        "2",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    let said = text(&refused.stderr);
    assert!(
        said.contains("takes no --arrivals, --net-delay-ms or --draws"),
        "{said}"
    );
    assert!(!dir.path().join("jobs").exists());
    // The Sparrow authors' draws are for sparrow-load only.
    let refused = cellsim(&[
        "experiment",
        "sparrow-random",
        "--out",
        &dir.path().join("random").display().to_string(),
        "--draws",
        "radlab",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    let said = text(&refused.stderr);
    assert!(
        said.contains("takes no --draws") && said.contains("sparrow-load"),
        "{said}"
    );
    assert!(!dir.path().join("random").exists());
}

/// The map-task time (seed 004's MapReduce jobs): `gen --map-task-s` says it in the scenario's
/// description and takes whole seconds only; `experiment --map-task-s` is refused for an
/// experiment that is not seed 004's, before its directory is made, and `gen` refuses it for
/// another scenario.
#[test]
fn map_task_time_is_for_mapreduce_jobs_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let (raw, sl) = (p("raw"), p("sl"));
    let args = |scenario, out| ["gen", out, "--scenario", scenario, "--map-task-s", "12"];
    let generated = cellsim(&args("nbs-hadoop", &raw));
    assert_eq!(
        generated.status.code(),
        Some(0),
        "{}",
        text(&generated.stderr)
    );
    assert!(text(&generated.stdout).contains("3 map tasks of 12 s"));
    // Whole seconds: a replay keeps times at tick granularity (1 s in the experiments).
    let fraction = cellsim(&[
        "gen",
        &p("f"),
        "--scenario",
        "nbs-hadoop",
        "--map-task-s",
        "14.69",
    ]);
    assert_eq!(fraction.status.code(), Some(2));
    assert!(
        text(&fraction.stderr).contains("invalid value '14.69'"),
        "{}",
        text(&fraction.stderr)
    );
    let refused = cellsim(&args("sparrow-load", &sl));
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("a map-task time is for the MapReduce jobs"));
    assert!(!dir.path().join("sl").exists());
    let refused = cellsim(&[
        "experiment",
        "federation-hosts",
        "--out",
        &p("x"),
        "--map-task-s",
        "12",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("takes no --map-task-s"));
    assert!(!dir.path().join("x").exists());
}

/// Reduce tasks (seed 004's MapReduce jobs): `gen --reduce-tasks` writes them for an nbs-*
/// scenario (four tasks per job, the last a reduce in `scenario/tasks.csv`) and refuses them for
/// another; `experiment --reduce-tasks` is refused for an experiment that is not seed 004's,
/// before its directory is made; and masb refuses the trace, naming its `tasks.csv`.
#[test]
fn reduce_tasks_are_generated_for_mapreduce_jobs_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let generated = cellsim(&[
        "gen",
        &p("raw"),
        "--scenario",
        "nbs-hadoop",
        "--reduce-tasks",
        "1",
    ]);
    assert_eq!(
        generated.status.code(),
        Some(0),
        "{}",
        text(&generated.stderr)
    );
    assert!(text(&generated.stdout).contains("then 1 reduce task of 10 s"));
    let tasks = std::fs::read_to_string(dir.path().join("raw/scenario/tasks.csv")).unwrap();
    let rows: Vec<&str> = tasks.lines().skip(1).collect();
    assert_eq!(rows.len(), 40);
    assert!(
        rows[3].starts_with("1,3,") && rows[3].ends_with(",reduce"),
        "{}",
        rows[3]
    );
    assert!(rows[2].ends_with(",map"), "{}", rows[2]);
    let refused = cellsim(&[
        "gen",
        &p("sl"),
        "--scenario",
        "sparrow-load",
        "--reduce-tasks",
        "1",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("reduce tasks are for the MapReduce jobs"));
    assert!(!dir.path().join("sl").exists());
    let refused = cellsim(&[
        "experiment",
        "sparrow-load",
        "--out",
        &p("x"),
        "--reduce-tasks",
        "1",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("takes no --reduce-tasks"));
    assert!(!dir.path().join("x").exists());
    let ingest = cellsim(&["ingest", &p("raw"), &p("pq")]);
    assert_eq!(ingest.status.code(), Some(0), "{}", text(&ingest.stderr));
    let run = cellsim(&[
        "run",
        "--trace",
        &p("pq"),
        "--out",
        &p("run"),
        "--policy",
        "masb",
    ]);
    assert_eq!(run.status.code(), Some(1));
    let err = text(&run.stderr);
    assert!(
        err.contains("scenario/tasks.csv") && err.contains("policy masb does not hold them back"),
        "{err}"
    );
}

/// A run's length is checked before anything is written (issue 37): hours far past the trace's
/// last event are refused unless asked for, a length of more ticks than a run holds is an error
/// even when asked for (it wrapped to 0 ticks, or to billions), and negative hours are refused
/// by name rather than taken for a flag.
#[test]
fn run_lengths_past_the_trace_or_too_long_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw");
    for (table, row) in [
        ("machine_events", "0,1,0,p,0.5,0.5\n"),
        ("task_events", "700000000,,1,0,,0,u,0,0,0.1,0.1,0,0\n"),
    ] {
        std::fs::create_dir_all(raw.join(table)).unwrap();
        std::fs::write(raw.join(table).join("part-00000-of-00001.csv"), row).unwrap();
    }
    let trace = dir.path().join("parquet").display().to_string();
    let out = cellsim(&["ingest", &raw.display().to_string(), &trace]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run = dir.path().join("run");
    let refused = |extra: &[&str], expected: &str| {
        let mut args = vec!["run", "--trace", &trace];
        let run_arg = run.display().to_string();
        args.extend(["--out", &run_arg]);
        args.extend(extra);
        let out = cellsim(&args);
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(expected), "{extra:?}: {stderr}");
        assert!(!run.join("ticks").exists(), "{extra:?} wrote outputs");
    };
    refused(&["--hours", "1e9"], "after the trace's last event");
    refused(&["--hours", "71582788.27"], "after the trace's last event");
    refused(
        &["--hours", "71582788.27", "--past-trace-end"],
        "more than the 4294967295 a run holds",
    );
    refused(
        &["--hours", "-1"],
        "hours must be positive and finite, got -1",
    );
    // Within the trace (and a little past it) runs.
    let out = cellsim(&[
        "run",
        "--trace",
        &trace,
        "--out",
        &run.display().to_string(),
        "--hours",
        "0.5",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A scenario cut short by `--hours` (past its last submission, before its work is done) says
/// so: a warning naming the tasks left, "ended with work undone" in its log rather than
/// "complete", the work in `report` and `status`; with `--strict` (or `[run] strict = true` in
/// its config) it exits 3, without either 0. Without `--hours` the same scenario runs until its
/// work is done and exits 0 under `--strict`.
#[test]
fn a_scenario_run_cut_short_says_so_and_strict_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let out = cellsim(&["gen", &p("raw"), "--scenario", "nbs-hadoop"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cellsim(&["ingest", &p("raw"), &p("pq")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(dir.path().join("strict.toml"), "[run]\nstrict = true\n").unwrap();
    let strict_config = p("strict.toml");
    let run_with = |name: &str, hours: Option<&str>, strict: &[&str]| {
        let (trace, out_dir) = (p("pq"), p(name));
        let mut args = vec!["run", "--trace", &trace, "--policy", "nbs"];
        args.extend(["--tick", "100ms", "--out", &out_dir]);
        args.extend(strict);
        if let Some(h) = hours {
            args.extend(["--hours", h]);
        }
        cellsim(&args)
    };
    let run = |name: &str, hours: Option<&str>| run_with(name, hours, &["--strict"]);
    // The last submission is 10 s in; its 10 s tasks cannot all end by 12 s.
    let lenient = run_with("lenient", Some("0.0034"), &[]);
    assert_eq!(lenient.status.code(), Some(0), "{}", text(&lenient.stderr));
    let by_config = run_with("by-config", Some("0.0034"), &["--config", &strict_config]);
    assert_eq!(
        by_config.status.code(),
        Some(3),
        "{}",
        text(&by_config.stderr)
    );
    let cut = run("cut", Some("0.0034"));
    let stderr = text(&cut.stderr);
    assert_eq!(cut.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("warning: work left undone at the end"),
        "{stderr}"
    );
    let log = std::fs::read_to_string(dir.path().join("cut/cellsim.log")).unwrap();
    assert!(log.contains("ended with work undone or stalled"), "{log}");
    assert!(!log.contains("complete:"), "{log}");
    let report = cellsim(&["report", &p("cut")]);
    assert!(text(&report.stdout).contains("work left undone at the end"));
    let status = cellsim(&["status", &p("cut")]);
    assert!(
        text(&status.stdout).contains("work left undone"),
        "{}",
        text(&status.stdout)
    );

    let done = run("done", None);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    let log = std::fs::read_to_string(dir.path().join("done/cellsim.log")).unwrap();
    assert!(log.contains("complete:"), "{log}");
}

/// The column `name` of the ticks part `part`, its rows in order, as f64.
fn ticks_column(part: &Path, name: &str) -> Vec<f64> {
    let file = std::fs::File::open(part).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut values = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let c = batch.column_by_name(name).unwrap();
        if let Some(v) = c.as_primitive_opt::<UInt32Type>() {
            values.extend(v.values().iter().map(|&x| f64::from(x)));
        } else {
            let v = c.as_primitive_opt::<UInt64Type>();
            let v = v.unwrap_or_else(|| panic!("{name}: {}", c.data_type()));
            values.extend(v.values().iter().map(|&x| x as f64));
        }
    }
    values
}

/// The mean DA share (% of the online nodes) of each hour of 60 one-minute ticks in the ticks
/// part `part`, counted from its rows in order.
fn da_by_hour(part: &Path) -> Vec<f64> {
    let (da, online) = (ticks_column(part, "da"), ticks_column(part, "nodes_online"));
    let shares: Vec<f64> = da.iter().zip(&online).map(|(d, n)| 100.0 * d / n).collect();
    shares
        .chunks(60)
        .filter(|hour| hour.len() == 60)
        .map(|hour| hour.iter().sum::<f64>() / 60.0)
        .collect()
}
