//! Streaming an ingested trace window by window: one cursor per table, each holding one Arrow
//! batch, handing out the rows whose time key is before a tick's end. Each cursor decodes its
//! table on a thread of its own, [`PREFETCH`] batches ahead, so Parquet decoding overlaps the
//! sequential trace apply; batches arrive in file order, so nothing depends on timing. Memory: a
//! few batches per table (64k rows each), independent of the trace length.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use ingest::dataset::Batches;
use ingest::{Dataset, Table};

use crate::error::Result;

/// Batches decoded ahead of the one being consumed.
pub const PREFETCH: usize = 2;

/// Rows of one table in time order, consumed up to a time bound.
pub struct Cursor {
    batches: Option<std::sync::mpsc::Receiver<ingest::Result<RecordBatch>>>,
    batch: Option<RecordBatch>,
    row: usize,
}

/// Decodes `batches` on a new thread, handing them over in order through a bounded channel; the
/// thread ends at the end of the table, or when the cursor is dropped.
fn prefetch(batches: Batches) -> std::sync::mpsc::Receiver<ingest::Result<RecordBatch>> {
    let (tx, rx) = std::sync::mpsc::sync_channel(PREFETCH);
    std::thread::spawn(move || {
        for batch in batches {
            if tx.send(batch).is_err() {
                return;
            }
        }
    });
    rx
}

impl Cursor {
    /// A cursor over `columns` of `table` in `dir` (the first must be the time key); a missing
    /// table yields no rows.
    pub fn open(dir: &Path, table: Table, columns: &[&str]) -> Result<Cursor> {
        Self::open_at(dir, table, columns, 0)
    }

    /// Like [`Cursor::open`], positioned after the first `consumed` rows (resuming a replay).
    pub fn open_at(dir: &Path, table: Table, columns: &[&str], consumed: u64) -> Result<Cursor> {
        let batches = match Dataset::open(dir, table)? {
            Some(ds) => Some(prefetch(ds.batches_from(columns, consumed)?)),
            None => None,
        };
        Ok(Cursor {
            batches,
            batch: None,
            row: 0,
        })
    }

    /// A cursor with no rows.
    pub fn none() -> Cursor {
        Cursor {
            batches: None,
            batch: None,
            row: 0,
        }
    }

    /// True when the table exists in the trace.
    pub fn present(&self) -> bool {
        self.batches.is_some()
    }

    /// Calls `f(batch, row)` for every remaining row with time < `end_us`, in order.
    pub fn each_before(
        &mut self,
        end_us: i64,
        mut f: impl FnMut(&RecordBatch, usize) -> Result<()>,
    ) -> Result<()> {
        loop {
            if self.batch.as_ref().is_none_or(|b| self.row >= b.num_rows()) {
                match self.batches.as_ref().and_then(|rx| rx.recv().ok()) {
                    Some(batch) => {
                        self.batch = Some(batch?);
                        self.row = 0;
                    }
                    None => return Ok(()),
                }
            }
            let batch = self.batch.as_ref().expect("loaded above");
            let times = batch.column(0).as_primitive::<Int64Type>().values();
            while self.row < batch.num_rows() {
                if times[self.row] >= end_us {
                    return Ok(());
                }
                f(batch, self.row)?;
                self.row += 1;
            }
        }
    }
}
