//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

use std::path::Path;

use arrow_array::RecordBatch;
use engine::borg::BorgReplay;
use engine::{RunConfig, RunProgress, RunSummary};
use ingest::{IngestOptions, Progress};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Writes `rows` as `dir/<table>/part-00000-of-00001.csv`.
pub fn write_table(dir: &Path, table: &str, rows: &str) {
    let t = dir.join(table);
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("part-00000-of-00001.csv"), rows).unwrap();
}

/// Ingests `trace` into `out`.
pub fn ingest_dir(trace: &Path, out: &Path) {
    ingest::ingest(trace, out, &IngestOptions::default(), &Progress::default()).unwrap();
}

/// Runs borg-replay.
pub fn run_borg(config: &RunConfig, trace: &Path, out: &Path) -> RunSummary {
    engine::run(config, trace, out, BorgReplay, &RunProgress::default()).unwrap()
}

/// Runs masb.
pub fn run_masb(config: &RunConfig, trace: &Path, out: &Path) -> RunSummary {
    let masb = engine::masb::policy::Masb::new(
        config.masb.clone(),
        config.rounds_per_tick,
        config.tick_s,
        config.seed,
    );
    engine::run(config, trace, out, masb, &RunProgress::default()).unwrap()
}

/// Every batch of a Parquet file, concatenated.
pub fn read_parquet(path: &Path) -> RecordBatch {
    let file = std::fs::File::open(path).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}
