//! The generated cell behaves like Google's under its own scheduler: borg-replay of a generated
//! trace classifies its nodes as seed 000's Table 4 does the real cell under Borg (issue 33, item
//! 6), compared through `cellsim report --paper`'s own column and measurement. The cell is the
//! 2011 cell's 12,583 machines, over 4 hours to keep the test under a minute, and each band is
//! item 6's 3 points. Smaller cells are not the same cell: on 2,000 to 4,000 machines Borg's
//! replay shows 2-3 points more DA than on 12,583 (40.5-41.4 % against 38.0 % over a day,
//! `bench-results/fidelity-2026-11-26.md`). MASB on the same cell meets item 7's bands against
//! Table 7's first column, and its cost per migration does not depend on how migration targets
//! are chosen (section 12 of that file: why Table 7's SRAS_GAIN cost is not reached).

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

const CLASSES: [&str; 6] = ["idle", "STA", "TA", "PA", "DA", "overloaded"];

#[test]
fn borg_replay_of_a_generated_cell_lands_near_table_4() {
    let summary = run("[policy]\nkind = \"borg-replay\"\n");
    assert_eq!(column_of(&summary), Some(TABLE_4_BORG));
    let ours = Measured::of(&summary).classes_pct;
    for ((paper, ours), class) in TABLE_4_BORG.classes_pct.iter().zip(ours).zip(CLASSES) {
        assert!(
            (ours - paper).abs() <= 3.0,
            "{class}: {ours:.2} % against {paper} %"
        );
    }
    assert!(ours[5] < 0.1, "overloaded {:.3} %", ours[5]);
    // SPEC 3.1's usage figures hold while doing so (seed 000 7.8: CPU 40-50 %, memory 60-70 %).
    let a = &summary.averages;
    assert!(
        (0.40..0.50).contains(&a.cpu_used_ratio),
        "{}",
        a.cpu_used_ratio
    );
    assert!(
        (0.60..0.70).contains(&a.mem_used_ratio),
        "{}",
        a.mem_used_ratio
    );
}

/// Item 7: MASB (SIAS + SRAS, the defaults) within 5 points of every class of Table 7's first
/// column, overloaded at most the paper's 0.5 % bar, PA:DA at least 2.5, and item 5's cost per
/// migration within 25 % of the paper's 338.09 MB. Over this cell's 4 hours: idle 1.9, STA
/// 5.2, TA 6.7, PA 65.2, DA 21.0, overloaded 0.06 %, 323 MB (over a day: within 2.1 points).
#[test]
fn masb_of_a_generated_cell_lands_near_table_7() {
    let summary = run("[policy]\nkind = \"masb\"\n");
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
    assert!(ours[3] / ours[4] >= 2.5, "PA:DA {:.2}", ours[3] / ours[4]);
    let mb = measured.mb_per_migration.unwrap();
    assert!(
        (mb / 338.09 - 1.0).abs() <= 0.25,
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
