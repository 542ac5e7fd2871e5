//! The Parquet trace reader: any bytes, as the one part of the table the first byte picks in an
//! otherwise empty ingested trace, are read by the engine's replay (`Replay::open`, then
//! `advance` over a few windows and to the end) into a cell. A part that is not an ingested
//! part of that table, or whose rows the replay cannot apply, is an error naming the file (a
//! panic of the Parquet decoder included: `ingest::dataset` catches it);
//! whatever is applied leaves a cell that passes `Cell::check`. Seeds: the parts of a small
//! generated and ingested trace.
#![no_main]

use engine::cell::Cell;
use engine::replay::Replay;
use ingest::{Dataset, Table};
use libfuzzer_sys::fuzz_target;

/// libFuzzer's panic hook aborts on every panic, caught or not. The parquet crate panics on
/// some damaged pages, and `ingest::dataset` catches those and turns them into errors naming the
/// part (tested there): only they are let through to be caught; any other panic aborts.
fn abort_on_panics_but_the_decoders() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info
            .location()
            .is_some_and(|l| l.file().contains("/parquet-"))
        {
            return;
        }
        default(info);
        std::process::abort();
    }));
}

fuzz_target!(init: abort_on_panics_but_the_decoders(), |data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let table = Table::ALL[pick as usize % Table::ALL.len()];
    let dir = tempfile::tempdir().expect("a temporary directory");
    let table_dir = dir.path().join(table.name());
    std::fs::create_dir_all(&table_dir).expect("the table directory");
    std::fs::write(table_dir.join("part-00000-of-00001.parquet"), bytes).expect("the part");
    // The table read in this thread first (the replay decodes in threads of its own, which
    // outlive this input): what the decoder does with the part is attributed to it.
    // Each column alone, then all of them: the replay reads a projection of them.
    if let Some(dataset) = Dataset::open(dir.path(), table).expect("the table directory") {
        let names: Vec<_> = table.columns().iter().map(|c| c.name).collect();
        let projections = names.iter().map(std::slice::from_ref).chain([names.as_slice()]);
        for projection in projections {
            for batch in dataset.batches(projection).expect("the table's own columns") {
                if let Err(e) = batch {
                    assert!(e.to_string().contains(table.name()), "{e}");
                    break;
                }
            }
        }
    }
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
