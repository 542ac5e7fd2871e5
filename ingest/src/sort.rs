//! Putting rows in time order, ties in file order, with memory bounded by a chunk.
//!
//! Each chunk is stable-sorted on its own ([`sort_chunk`]) and written as one row group. When
//! the chunks of a part file come out in order (the GCD parts are time-sorted, so this is the
//! normal case) nothing else happens. Otherwise [`merge_row_groups`] k-way merges the row groups
//! of the temporary file into the final one, holding one batch per row group.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::path::Path;

use arrow_array::{Array, Int64Array, RecordBatch, UInt32Array};
use arrow_select::interleave::interleave_record_batch;
use arrow_select::take::take_record_batch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use crate::error::{IngestError, Result};

/// Stable-sorts a chunk by `times` (its first column); returns it unchanged if already sorted.
pub fn sort_chunk(batch: RecordBatch, times: &[i64], path: &Path) -> Result<RecordBatch> {
    if times.is_sorted() {
        return Ok(batch);
    }
    let mut order: Vec<u32> = (0..times.len() as u32).collect();
    order.sort_by_key(|&i| times[i as usize]);
    take_record_batch(&batch, &UInt32Array::from(order)).map_err(|source| IngestError::Arrow {
        path: path.to_path_buf(),
        source,
    })
}

/// The time key of a batch (its first column, non-null `Int64`).
fn time_column(batch: &RecordBatch) -> &Int64Array {
    batch
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("the first column is the time key")
}

/// One sorted row group being consumed.
struct Run {
    reader: ParquetRecordBatchReader,
    /// Index into the merge's batch list of the batch being read.
    slot: usize,
    row: usize,
    done: bool,
}

/// Merges the (individually sorted) row groups of `input` into `writer` in time order, ties by
/// row group then row: i.e. file order. Flushes a row group every `rows_per_group` rows.
pub fn merge_row_groups(
    input: &Path,
    writer: &mut ArrowWriter<File>,
    rows_per_group: usize,
    batch_rows: usize,
) -> Result<()> {
    let parquet_err = |source| IngestError::Parquet {
        path: input.to_path_buf(),
        source,
    };
    let open = || File::open(input).map_err(IngestError::io(input));
    let groups = ParquetRecordBatchReaderBuilder::try_new(open()?)
        .map_err(parquet_err)?
        .metadata()
        .num_row_groups();
    let mut batches: Vec<RecordBatch> = Vec::new();
    let mut runs: Vec<Run> = Vec::with_capacity(groups);
    let mut heap = BinaryHeap::new();
    for g in 0..groups {
        let mut reader = ParquetRecordBatchReaderBuilder::try_new(open()?)
            .map_err(parquet_err)?
            .with_row_groups(vec![g])
            .with_batch_size(batch_rows)
            .build()
            .map_err(parquet_err)?;
        if let Some(batch) = reader.next() {
            let batch = batch.map_err(|source| IngestError::Arrow {
                path: input.to_path_buf(),
                source,
            })?;
            // Runs are numbered in row-group order, so equal times pop in file order.
            heap.push(Reverse((time_column(&batch).value(0), runs.len())));
            batches.push(batch);
            runs.push(Run {
                reader,
                slot: batches.len() - 1,
                row: 0,
                done: false,
            });
        }
    }
    let mut picks: Vec<(usize, usize)> = Vec::with_capacity(rows_per_group);
    let flush = |batches: &mut Vec<RecordBatch>,
                 runs: &mut Vec<Run>,
                 picks: &mut Vec<(usize, usize)>,
                 writer: &mut ArrowWriter<File>|
     -> Result<()> {
        if picks.is_empty() {
            return Ok(());
        }
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        let merged =
            interleave_record_batch(&refs, picks).map_err(|source| IngestError::Arrow {
                path: input.to_path_buf(),
                source,
            })?;
        writer.write(&merged).map_err(parquet_err)?;
        writer.flush().map_err(parquet_err)?;
        picks.clear();
        // Keep only the batches still being read, renumbering the runs' slots.
        let mut kept = Vec::with_capacity(runs.len());
        for run in runs.iter_mut() {
            kept.push(batches[run.slot].clone());
            run.slot = kept.len() - 1;
        }
        *batches = kept;
        Ok(())
    };
    while let Some(Reverse((_, r))) = heap.pop() {
        let run = &mut runs[r];
        picks.push((run.slot, run.row));
        run.row += 1;
        if run.row == batches[run.slot].num_rows() {
            match run.reader.next() {
                Some(batch) => {
                    let batch = batch.map_err(|source| IngestError::Arrow {
                        path: input.to_path_buf(),
                        source,
                    })?;
                    batches.push(batch);
                    run.slot = batches.len() - 1;
                    run.row = 0;
                }
                None => run.done = true,
            }
        }
        if !run.done {
            let t = time_column(&batches[run.slot]).value(run.row);
            heap.push(Reverse((t, r)));
        }
        if picks.len() == rows_per_group {
            flush(&mut batches, &mut runs, &mut picks, writer)?;
        }
    }
    flush(&mut batches, &mut runs, &mut picks, writer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::UInt64Array;
    use std::sync::Arc;

    #[test]
    fn sort_chunk_is_stable() {
        let times = [5i64, 1, 5, 0, 1];
        let ids = UInt64Array::from(vec![0u64, 1, 2, 3, 4]);
        let batch = RecordBatch::try_from_iter(vec![
            ("time", Arc::new(Int64Array::from(times.to_vec())) as _),
            ("id", Arc::new(ids) as _),
        ])
        .unwrap();
        let sorted = sort_chunk(batch, &times, Path::new("x")).unwrap();
        let ids = sorted
            .column(1)
            .as_any()
            .downcast_ref::<UInt64Array>()
            .unwrap();
        assert_eq!(ids.values().to_vec(), vec![3, 1, 4, 0, 2]);
    }
}
