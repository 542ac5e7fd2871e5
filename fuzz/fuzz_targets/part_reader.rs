//! The gzip/part reader: any bytes, written as a `.csv.gz` part (or, when the first byte is odd,
//! a plain `.csv` one), are read record by record by `PartReader` and parsed into a chunk, as
//! the ingest does. A damaged stream ends in a typed error naming the part, never a panic or a
//! hang; line numbers only grow.
#![no_main]

use std::sync::atomic::AtomicU64;

use ingest::Table;
use ingest::chunk::Chunk;
use ingest::source::PartReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let name = if pick & 1 == 1 {
        "part-00000-of-00001.csv"
    } else {
        "part-00000-of-00001.csv.gz"
    };
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("writing the part");
    let table = Table::ALL[(pick >> 1) as usize % Table::ALL.len()];
    let read = AtomicU64::new(0);
    let mut reader = PartReader::open(&path, &read).expect("the part opens");
    let mut chunk = Chunk::new(table, 16);
    let mut record = csv::ByteRecord::new();
    let mut last_line = 0;
    loop {
        match reader.next(&mut record) {
            Ok(Some(line)) => {
                assert!(line > last_line, "line {line} after {last_line}");
                last_line = line;
                if let Err(e) = chunk.push(&record, &path, line) {
                    assert!(e.is_row_error(), "{e}");
                }
            }
            Ok(None) => break,
            Err(e) => {
                assert!(e.to_string().contains(name), "the error names no part: {e}");
                break;
            }
        }
    }
    assert!(read.load(std::sync::atomic::Ordering::Relaxed) <= bytes.len() as u64);
});
