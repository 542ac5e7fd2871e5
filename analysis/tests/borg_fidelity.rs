//! Seed 000's Tables 4 and 7 as predictions on a generated cell (issue 57 item 4): the
//! generator is calibrated on the real 8.5 h (`bench-results/generator-2026-11-27.md`), not on
//! these tables, so these tests check what it predicts, with the bands the prediction is
//! reported at. The cell is the 2011 cell's 12,583 machines over 4 hours (under a minute), with
//! the jobs Borg holds waiting (the generator's default since model
//! `real-gcd-8.5h-held-2026-12-03`). Borg's replay: every Table 4 share within 8 points
//! (measured over 4 h: PA -4.3, DA +4.5; the same as without the held jobs, which it leaves
//! waiting), its own placements overloading almost nothing under its own usage, at Table 5's
//! usage. MASB by default: what it does on the real trace (it places the held work and packs
//! the cell), not Table 7. MASB's configuration of record: every
//! Table 7 share within 5 points, the ordering seed 000 claims (section 7.7: MASB's PA:DA of
//! ~3:1 against Borg's ~3:2), its overloaded share under the paper's 0.5 % bar, migrations at a
//! cost per migration within 35 % of the paper's 338.09 MB. MASB's cost per migration does not
//! depend on how migration targets are chosen (section 12 of
//! `bench-results/fidelity-2026-11-26.md`: why Table 7's SRAS_GAIN cost is not reached).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use analysis::paper::{Measured, TABLE_4_BORG, TABLE_7, column_of};
use engine::{RunConfig, RunProgress, RunSummary};
use ingest::synth::{GenConfig, GenProgress, generate};
use ingest::{IngestOptions, Progress};

/// The generated 12.5k cell over 4 hours, ingested once for every test of this file (the
/// directory lives as long as the test process).
fn cell() -> &'static Path {
    static CELL: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, parquet) = CELL.get_or_init(|| {
        let root = tempfile::tempdir().unwrap();
        let (trace, parquet) = (root.path().join("trace"), root.path().join("parquet"));
        let gen_config = GenConfig {
            machines: 12_583,
            hours: 4.0,
            seed: 1,
            part_hours: 4.0,
            held_jobs: true,
        };
        generate(&trace, &gen_config, &GenProgress::default()).unwrap();
        ingest::ingest(
            &trace,
            &parquet,
            &IngestOptions::default(),
            &Progress::default(),
        )
        .unwrap();
        (root, parquet)
    });
    parquet
}

/// A run of the cell under `config` (a run config's TOML), to its end.
fn run(config: &str) -> RunSummary {
    let config = RunConfig::from_toml(config, Path::new("test.toml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = out.path().join("run");
    engine::run_configured(&config, cell(), &run, &RunProgress::default(), None)
        .unwrap()
        .complete()
        .unwrap()
}

/// Borg's replay of the cell, run once for the tests of this file.
fn borg() -> &'static RunSummary {
    static BORG: OnceLock<RunSummary> = OnceLock::new();
    BORG.get_or_init(|| run("[policy]\nkind = \"borg-replay\"\n"))
}

const CLASSES: [&str; 6] = ["idle", "STA", "TA", "PA", "DA", "overloaded"];

#[test]
fn borg_replay_of_a_generated_cell_predicts_table_4() {
    let summary = borg();
    assert_eq!(column_of(summary), Some(TABLE_4_BORG));
    let ours = Measured::of(summary).classes_pct;
    for ((paper, ours), class) in TABLE_4_BORG.classes_pct.iter().zip(ours).zip(CLASSES) {
        assert!(
            (ours - paper).abs() <= 8.0,
            "{class}: {ours:.2} % against {paper} %"
        );
    }
    assert!(ours[5] < 0.1, "overloaded {:.3} %", ours[5]);
    // Seed 000's Table 5 (43.64 % and 62.05 %), which the generator's usage is set on.
    let a = &summary.averages;
    assert!(
        (0.40..0.50).contains(&a.cpu_used_ratio),
        "{}",
        a.cpu_used_ratio
    );
    assert!(
        (0.60..0.66).contains(&a.mem_used_ratio),
        "{}",
        a.mem_used_ratio
    );
}

/// MASB by default predicts its run on the real trace, not Table 7: the generated cell holds,
/// as the real one does, the work Borg leaves waiting for hours (the generator's held jobs),
/// and MASB by default places it, so it carries more work than Borg's replay and packs the cell
/// (the real 8 h, seeds 1-3: memory requested 112.4 %, PA 36.9 %, 8.1 % more tasks running than
/// Borg's replay; `bench-results/held-jobs-2026-12-03.md`). Measured here: 111.4 %, 38.9 %,
/// +7.6 %. Without the held jobs this cell had put MASB by default within 15 points of every
/// Table 7 share (PA -13.8): a cell without Borg's waiting work hid the packing.
#[test]
fn masb_of_a_generated_cell_predicts_its_real_trace_run() {
    let b = &borg().averages;
    let summary = run("[policy]\nkind = \"masb\"\n");
    let m = &summary.averages;
    assert!(
        (m.mem_requested_ratio - 1.124).abs() <= 0.05,
        "memory requested {:.4}",
        m.mem_requested_ratio
    );
    let more = m.tasks_running / b.tasks_running - 1.0;
    assert!(more > 0.05, "{more:+.4} tasks running against Borg's");
    let ours = Measured::of(&summary).classes_pct;
    assert!((ours[3] - 36.91).abs() <= 10.0, "PA {:.2} %", ours[3]);
    assert!(ours[5] <= 0.5, "overloaded {:.3} %", ours[5]);
}

/// MASB's configuration of record (`slurm/masb-real-trace.toml`: a task starts no earlier than
/// the trace's scheduler started it, booked asks, usage windows; none in seed 000) predicts
/// Table 7 on the generated cell as it meets it on the real trace: every share within 5
/// points (measured here: STA 2.2, TA 2.4, PA 68.4, DA 26.6 %, against 4.0, 4.5, 68.3, 22.4),
/// the ordering seed 000 claims (section 7.7: MASB's PA:DA of ~3:1 against Borg's ~3:2), its
/// overloaded share under the paper's 0.5 % bar, and migrations at a cost per migration within
/// 35 % of the paper's 338.09 MB.
#[test]
fn masb_of_record_on_a_generated_cell_predicts_table_7() {
    let borg = Measured::of(borg()).classes_pct;
    let record = Path::new(env!("CARGO_MANIFEST_DIR")).join("../slurm/masb-real-trace.toml");
    let summary = run(&std::fs::read_to_string(record).unwrap());
    let paper = TABLE_7[0].2;
    assert_eq!(column_of(&summary), Some(paper));
    let measured = Measured::of(&summary);
    let ours = measured.classes_pct;
    for ((paper, ours), class) in paper.classes_pct.iter().zip(ours).zip(CLASSES) {
        assert!(
            (ours - paper).abs() <= 5.0,
            "{class}: {ours:.2} % against {paper} %"
        );
    }
    assert!(ours[5] <= 0.5, "overloaded {:.3} %", ours[5]);
    let (masb_ratio, borg_ratio) = (ours[3] / ours[4], borg[3] / borg[4]);
    assert!(
        masb_ratio > borg_ratio,
        "PA:DA {masb_ratio:.2} under MASB, {borg_ratio:.2} under Borg"
    );
    assert!(measured.gb_per_minute.is_some_and(|gb| gb > 0.0));
    let mb = measured.mb_per_migration.unwrap();
    assert!(
        (mb / 338.09 - 1.0).abs() <= 0.35,
        "{mb:.1} MB per migration"
    );
}

/// Section 12's measured cause of Table 7's SRAS_GAIN cost (2.35 times SRAS's in the paper) not
/// being reached: how migration targets are chosen hardly moves the cost per migration, since
/// SCS picks what moves before any target is scored. SRAS, SRAS_GAIN, uniformly random targets
/// and SRAS turned around stay within 15 % of one another (over this cell's 4 hours 323, 346,
/// 332 and 329 MB; over a day within 3 %), where the paper's ratio would fail by far.
#[test]
fn target_choice_hardly_moves_the_cost_per_migration() {
    let policies = [
        "",
        "sras_gain = true\n",
        "target_weighting = \"uniform\"\n",
        "target_weighting = \"inverse\"\n",
    ];
    let mb: Vec<f64> = policies
        .iter()
        .map(|p| {
            let summary = run(&format!("[policy]\nkind = \"masb\"\n{p}"));
            Measured::of(&summary).mb_per_migration.unwrap()
        })
        .collect();
    let (least, most) = mb
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, m), &v| (l.min(v), m.max(v)));
    assert!(most / least < 1.15, "MB per migration {mb:.1?}");
}
