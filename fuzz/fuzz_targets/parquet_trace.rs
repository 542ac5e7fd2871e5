//! The Parquet trace reader: any bytes, as the one part of the table the first byte picks in an
//! otherwise empty ingested trace, are read by the engine's replay (`Replay::open`, then
//! `advance` over a few windows and to the end) into a cell. A part that is not an ingested
//! part of that table, or whose rows the replay cannot apply, is an error naming the file;
//! whatever is applied leaves a cell that passes `Cell::check`. Seeds: the parts of a small
//! generated and ingested trace.
#![no_main]

use engine::cell::Cell;
use engine::replay::Replay;
use ingest::Table;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let table = Table::ALL[pick as usize % Table::ALL.len()];
    let dir = tempfile::tempdir().expect("a temporary directory");
    let table_dir = dir.path().join(table.name());
    std::fs::create_dir_all(&table_dir).expect("the table directory");
    std::fs::write(table_dir.join("part-00000-of-00001.parquet"), bytes).expect("the part");
    let mut replay = match Replay::open(dir.path()) {
        Ok(replay) => replay,
        Err(e) => {
            assert!(e.to_string().contains(table.name()), "{e}");
            return;
        }
    };
    let mut cell = Cell::default();
    for end_us in [600_000_000, 3_600_000_000, i64::MAX] {
        match replay.advance(&mut cell, end_us) {
            Ok(_) => {
                if let Err(problem) = cell.check() {
                    panic!("the replay left a cell that breaks an invariant: {problem}");
                }
            }
            Err(e) => {
                assert!(e.to_string().contains(table.name()), "{e}");
                return;
            }
        }
    }
});
