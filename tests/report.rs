//! `cellsim report`'s rows against figures taken independently from the run's own tables: the
//! migration rows (seed 000's Table 6: data moved by live migration per minute and per
//! migration, forced migrations) from `migrations/`, and the allocation score ratios (Table 3)
//! from `ticks/`, for a MASB run and a borg-replay run (no migrations).

mod common;

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt32Type};
use common::*;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// (started migrations, their summed cost MB, forced ones) from `RUN/migrations/`.
fn started_migrations(run: &Path) -> (u64, f64, u64) {
    let (mut started, mut cost_mb, mut forced) = (0, 0.0, 0);
    for part in std::fs::read_dir(run.join("migrations")).unwrap() {
        let file = std::fs::File::open(part.unwrap().path()).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            let column = |name: &str| batch.column(batch.schema().index_of(name).unwrap()).clone();
            let outcome = column("outcome");
            let cost = column("cost_mb");
            let is_forced = column("forced");
            let (outcome, cost) = (
                outcome.as_string::<i32>(),
                cost.as_primitive::<Float64Type>(),
            );
            for row in 0..batch.num_rows() {
                if outcome.value(row) == "started" {
                    started += 1;
                    cost_mb += cost.value(row);
                    forced += u64::from(is_forced.as_boolean().value(row));
                }
            }
        }
    }
    (started, cost_mb, forced)
}

/// The rows of the Parquet parts in `dir`.
fn rows(dir: &Path) -> usize {
    let parts = std::fs::read_dir(dir).unwrap().map(|p| p.unwrap().path());
    parts
        .map(|p| {
            let file = std::fs::File::open(p).unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
            reader.metadata().file_metadata().num_rows() as usize
        })
        .sum()
}

/// The values of `report`'s row `label`, one per run.
fn report_row(report: &str, label: &str) -> Vec<String> {
    let line = report.lines().find(|l| l.starts_with(label)).unwrap();
    line[label.len()..]
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn migration_rows_match_the_runs_migrations() {
    let (masb, borg) = (reference("masb"), reference("borg-replay"));
    let out = cellsim(&[
        "report",
        &masb.display().to_string(),
        &borg.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let (started, cost_mb, forced) = started_migrations(masb);
    assert!(started > 100, "a run that migrates: {started}");
    // The run's simulated minutes: its ticks (of one minute), counted in `ticks/`.
    let minutes = rows(&masb.join("ticks")) as f64;
    assert_eq!(minutes, trace_ticks() as f64);
    // borg-replay declares no migration counters: `-`, not 0.
    assert_eq!(
        report_row(&report, "migrated MB / minute"),
        [format!("{:.0}", cost_mb / minutes), "-".into()]
    );
    assert_eq!(
        report_row(&report, "MB per migration"),
        [format!("{:.0}", cost_mb / started as f64), "-".into()]
    );
    assert_eq!(
        report_row(&report, "forced migrations"),
        [forced.to_string(), "-".into()]
    );
    assert_eq!(
        report_row(&report, "migrations / minute"),
        [format!("{:.2}", started as f64 / minutes), "-".into()]
    );
}

/// The mean per tick of each of `columns` in `RUN/ticks/`.
fn tick_means(run: &Path, columns: &[&str]) -> Vec<f64> {
    let mut sums = vec![0u64; columns.len()];
    let mut ticks = 0;
    for part in std::fs::read_dir(run.join("ticks")).unwrap() {
        let file = std::fs::File::open(part.unwrap().path()).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        for batch in reader.build().unwrap() {
            let batch = batch.unwrap();
            ticks += batch.num_rows();
            for (sum, name) in sums.iter_mut().zip(columns) {
                let column = batch.column(batch.schema().index_of(name).unwrap()).clone();
                let values = column.as_primitive::<UInt32Type>().values();
                *sum += values.iter().map(|&v| u64::from(v)).sum::<u64>();
            }
        }
    }
    sums.iter().map(|&s| s as f64 / ticks as f64).collect()
}

#[test]
fn allocation_score_ratios_match_the_runs_ticks() {
    let runs = [reference("masb"), reference("borg-replay")];
    let names = runs.map(|r| r.display().to_string());
    let out = cellsim(&["report", &names[0], &names[1]]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let expected: Vec<String> = runs
        .iter()
        .map(|run| {
            let means = tick_means(run, &["sta", "ta", "pa", "da"]);
            let balanced: f64 = means.iter().sum();
            let shares = means.iter().map(|m| format!("{:.1}", 100.0 * m / balanced));
            shares.collect::<Vec<_>>().join("/")
        })
        .collect();
    assert_eq!(report_row(&report, "ASR STA/TA/PA/DA %"), expected);
}

/// The "usage from" row says when a node's CPU was throttled at its capacity: a run on a trace
/// without task_usage (a generated one, its task_usage left out), whose usage is then all the
/// model's, with the default compressible CPU; not with `cpu_compressible = false`, and not for a
/// run recorded before the key existed (its summary's config without it: such builds never
/// throttled).
#[test]
fn usage_row_says_when_cpu_was_throttled() {
    let root = tempfile::tempdir().unwrap();
    let path = |name: &str| root.path().join(name).display().to_string();
    let ok = |out: std::process::Output| assert!(out.status.success(), "{}", text(&out.stderr));
    ok(cellsim(&[
        "gen",
        &path("raw"),
        "--machines",
        "50",
        "--hours",
        "0.5",
        "--seed",
        "3",
    ]));
    std::fs::remove_dir_all(root.path().join("raw/task_usage")).unwrap();
    ok(cellsim(&["ingest", &path("raw"), &path("pq")]));
    let row = |run: &str| {
        let out = cellsim(&["report", run]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let report = text(&out.stdout);
        let line = report
            .lines()
            .find(|l| l.starts_with("usage from"))
            .unwrap();
        line["usage from".len()..].trim().to_string()
    };
    for compressible in [true, false] {
        let config = path(&format!("{compressible}.toml"));
        std::fs::write(
            &config,
            format!("[usage]\ncpu_compressible = {compressible}\n"),
        )
        .unwrap();
        let run = path(&format!("run-{compressible}"));
        let args = [
            "run",
            "--trace",
            &path("pq"),
            "--hours",
            "0.3",
            "--config",
            &config,
        ];
        ok(cellsim(&[&args[..], &["--out", &run]].concat()));
    }
    assert_eq!(row(&path("run-true")), "usage model, CPU throttled");
    assert_eq!(row(&path("run-false")), "usage model");
    // The throttled run's summary as a cellsim from before `cpu_compressible` wrote it.
    let summary_path = root.path().join("run-true/summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary_path).unwrap()).unwrap();
    let usage = summary["config"]["usage"].as_object_mut().unwrap();
    assert_eq!(usage.remove("cpu_compressible"), Some(true.into()));
    std::fs::write(&summary_path, serde_json::to_string(&summary).unwrap()).unwrap();
    assert_eq!(row(&path("run-true")), "usage model");
}
