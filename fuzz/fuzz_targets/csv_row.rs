//! The CSV row parser: any bytes, read as CSV records of the table the first byte picks, go
//! through `Chunk::push`: each row is accepted whole or refused with a row error naming the file
//! (never a panic), and the accepted rows finish into a batch of exactly that many rows whose
//! time column is the times the chunk reported.
#![no_main]

use std::path::Path;

use ingest::Table;
use ingest::chunk::Chunk;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let table = Table::ALL[pick as usize % Table::ALL.len()];
    let mut chunk = Chunk::new(table, 16);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text);
    let mut record = csv::ByteRecord::new();
    let (mut accepted, mut line) = (0, 0);
    while let Ok(true) = reader.read_byte_record(&mut record) {
        line += 1;
        match chunk.push(&record, Path::new("fuzz.csv"), line) {
            Ok(()) => accepted += 1,
            Err(e) => {
                assert!(e.is_row_error(), "a refused row gave a non-row error: {e}");
                assert!(e.to_string().contains("fuzz.csv"), "{e}");
            }
        }
        assert_eq!(chunk.len(), accepted);
    }
    let times = chunk.times().to_vec();
    let batch = chunk.finish();
    assert_eq!(batch.num_rows(), accepted);
    assert_eq!(batch.num_columns(), table.arrow_schema().fields().len());
    assert_eq!(ingest::columns::i64s(&batch, 0), times.as_slice());
});
