//! Determinism (SPEC 5.3): the same trace, config and seed give byte-identical `nodes.parquet`,
//! identical `ticks.parquet` apart from the wall-clock column, and the same summary apart from
//! its wall-clock fields, with 1 thread and with 2 and 3 threads.

mod common;

use arrow_array::RecordBatch;
use common::*;
use engine::RunConfig;
use ingest::synth::{GenConfig, GenProgress, generate};

fn without_wall_ms(b: &RecordBatch) -> RecordBatch {
    let keep: Vec<usize> = (0..b.num_columns())
        .filter(|&i| b.schema().field(i).name() != "wall_ms")
        .collect();
    b.project(&keep).unwrap()
}

#[test]
fn one_and_many_threads_agree() {
    let root = tempfile::tempdir().unwrap();
    let trace = root.path().join("trace");
    generate(
        &trace,
        &GenConfig {
            machines: 1_500,
            hours: 2.0,
            seed: 5,
            part_hours: 1.0,
        },
        &GenProgress::default(),
    )
    .unwrap();
    let parquet = root.path().join("parquet");
    ingest_dir(&trace, &parquet);
    let mut outputs = Vec::new();
    for threads in [1, 2, 3] {
        let run = root.path().join(format!("run{threads}"));
        let config = RunConfig {
            threads,
            nodes_every_ticks: 30,
            ..RunConfig::default()
        };
        let mut summary = run_borg(&config, &parquet, &run);
        assert!(
            summary.averages.tasks_running > 10_000.0,
            "a busy cell: {}",
            summary.averages.tasks_running
        );
        summary.wall_s = 0.0;
        summary.speed_x_real_time = 0.0;
        summary.peak_rss_mb = None;
        summary.config.threads = 0;
        let ticks = without_wall_ms(&read_parquet(&run.join("ticks.parquet")));
        let nodes = std::fs::read(run.join("nodes.parquet")).unwrap();
        outputs.push((summary, ticks, nodes));
    }
    for other in &outputs[1..] {
        assert_eq!(other.0, outputs[0].0, "summary");
        assert_eq!(other.1, outputs[0].1, "ticks.parquet");
        assert!(other.2 == outputs[0].2, "nodes.parquet bytes");
    }
    assert_eq!(
        outputs[0].1.num_rows(),
        121,
        "two hours of one-minute ticks, up to the last event"
    );
}
