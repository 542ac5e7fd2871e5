//! Issue 61 item 3: every Parquet file a run writes says whose it is (key-value metadata:
//! policy, seed, config and trace hashes, the run's identity from them, the build), computed
//! here independently from the run's config and trace; and the metadata keeps two runs of the
//! same inputs byte-identical (another thread count and directory write the same bytes).

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use common::*;
use engine::RunConfig;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// The file's `cellsim.` keys (Arrow's writer adds its own `ARROW:schema`).
fn key_values(path: &Path) -> BTreeMap<String, String> {
    let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    (reader.metadata().file_metadata().key_value_metadata())
        .into_iter()
        .flatten()
        .filter(|kv| kv.key.starts_with("cellsim."))
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect()
}

#[test]
fn every_part_says_whose_it_is() {
    let root = tempfile::tempdir().unwrap();
    let parquet = generated_cell(root.path(), 120, 1.0, 4);
    let text = "hours = 1.0\nseed = 7\nthreads = 1\n[policy]\nkind = \"masb\"\n";
    let config = RunConfig::from_toml(text, Path::new("test.toml")).unwrap();
    let out = root.path().join("run-1");
    run_policy(&config, &parquet, &out);
    let config_hash = engine::config::config_hash(&config);
    let trace_hash = engine::snapshot::trace_hash(&parquet).unwrap();
    let mut pair = config_hash.to_le_bytes().to_vec();
    pair.extend(trace_hash.to_le_bytes());
    let expected: BTreeMap<String, String> = [
        ("cellsim.build", engine::build().to_string()),
        ("cellsim.config_hash", format!("{config_hash:016x}")),
        ("cellsim.policy", "masb".to_string()),
        (
            "cellsim.run",
            format!("{:016x}", engine::codec::hash_bytes(&pair)),
        ),
        ("cellsim.seed", "7".to_string()),
        ("cellsim.trace_hash", format!("{trace_hash:016x}")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mut files = 0;
    for table in ["ticks", "nodes", "timing", "migrations"] {
        for part in std::fs::read_dir(out.join(table)).unwrap() {
            assert_eq!(key_values(&part.unwrap().path()), expected, "{table}");
            files += 1;
        }
    }
    assert!(files >= 4, "{files}");
    // Two threads, another directory: the same bytes (the metadata names no run directory
    // and no random ID).
    let other = root.path().join("elsewhere").join("run-2");
    let two = RunConfig {
        threads: 2,
        ..config.clone()
    };
    run_policy(&two, &parquet, &other);
    assert!(deterministic_outputs(&out) == deterministic_outputs(&other));
    // Another seed: another run, the metadata says so.
    let seeded = RunConfig { seed: 8, ..config };
    let third = root.path().join("run-3");
    run_policy(&seeded, &parquet, &third);
    let part = std::fs::read_dir(third.join("ticks"))
        .unwrap()
        .next()
        .unwrap();
    let kv = key_values(&part.unwrap().path());
    assert_eq!(kv["cellsim.seed"], "8");
    assert_ne!(kv["cellsim.run"], expected["cellsim.run"]);
    assert_ne!(kv["cellsim.config_hash"], expected["cellsim.config_hash"]);
}

/// Every column of a run's output and of an ingested trace carries the column order readers
/// before PARQUET-2249 know (`TYPE_DEFINED_ORDER`), float columns included: parquet 60 marks
/// floats `IEEE_754_TOTAL_ORDER`, and polars before 2.0 then cannot open the file at all
/// (pola-rs/polars#27893), so the writer is held below 60 (`engine/Cargo.toml`).
#[test]
fn every_column_order_is_one_older_readers_know() {
    use parquet::basic::{ColumnOrder, Type};
    let root = tempfile::tempdir().unwrap();
    let parquet = generated_cell(root.path(), 60, 0.5, 5);
    let out = root.path().join("run");
    let config = RunConfig::from_toml("hours = 0.5\n", Path::new("test.toml")).unwrap();
    run_policy(&config, &parquet, &out);
    let parts =
        [out.join("ticks"), parquet.join("task_events")].map(|dir| common::parts(&dir).remove(0));
    for part in parts {
        let reader = SerializedFileReader::new(File::open(&part).unwrap()).unwrap();
        let meta = reader.metadata().file_metadata();
        let floats = (meta.schema_descr().columns().iter())
            .filter(|c| matches!(c.physical_type(), Type::FLOAT | Type::DOUBLE))
            .count();
        assert!(floats > 0, "{part:?} has float columns");
        let orders = meta.column_orders().expect("column orders written");
        assert!(
            (orders.iter()).all(|o| matches!(o, ColumnOrder::TYPE_DEFINED_ORDER(_))),
            "{part:?}: {orders:?}"
        );
    }
}
