//! Streaming an ingested trace window by window: one cursor per table, each holding one Arrow
//! batch, handing out the rows whose time key is before a tick's end. Memory: one batch per table
//! (64k rows), independent of the trace length.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use ingest::dataset::Batches;
use ingest::{Dataset, Table};

use crate::error::Result;

/// Rows of one table in time order, consumed up to a time bound.
pub struct Cursor {
    batches: Option<Batches>,
    batch: Option<RecordBatch>,
    row: usize,
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
            Some(ds) => Some(ds.batches_from(columns, consumed)?),
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
                match self.batches.as_mut().and_then(Iterator::next) {
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
