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
    /// Every row has been read (the table's end was reached).
    finished: bool,
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

impl Default for Cursor {
    /// A cursor with no rows ([`Cursor::none`]).
    fn default() -> Cursor {
        Cursor::none()
    }
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
            finished: false,
        })
    }

    /// A cursor with no rows.
    pub fn none() -> Cursor {
        Cursor {
            batches: None,
            batch: None,
            row: 0,
            finished: true,
        }
    }

    /// True when the table exists in the trace.
    pub fn present(&self) -> bool {
        self.batches.is_some()
    }

    /// True when, without waiting for a batch, the cursor knows no row remains before `end_us`:
    /// its next row is at or after it, or the table has ended (false when it would have to
    /// wait for the next batch to tell).
    pub fn none_before(&self, end_us: i64) -> bool {
        if self.finished {
            return true;
        }
        self.batch.as_ref().is_some_and(|b| {
            let times = b.column(0).as_primitive::<Int64Type>().values();
            times.get(self.row).is_some_and(|&t| t >= end_us)
        })
    }

    /// Calls `f(batch, rows)` for the remaining rows with time < `end_us`, in order, a run of
    /// consecutive rows of one batch at a time (so that `f` can look its columns up once per
    /// run rather than once per row).
    pub fn each_before(
        &mut self,
        end_us: i64,
        mut f: impl FnMut(&RecordBatch, std::ops::Range<usize>) -> Result<()>,
    ) -> Result<()> {
        loop {
            if self.batch.as_ref().is_none_or(|b| self.row >= b.num_rows()) {
                match self.batches.as_ref().and_then(|rx| rx.recv().ok()) {
                    Some(batch) => {
                        self.batch = Some(batch?);
                        self.row = 0;
                    }
                    None => {
                        self.finished = true;
                        return Ok(());
                    }
                }
            }
            let batch = self.batch.as_ref().expect("loaded above");
            let times = batch.column(0).as_primitive::<Int64Type>().values();
            let start = self.row;
            let before = times[start..].iter().position(|&t| t >= end_us);
            let end = before.map_or(times.len(), |k| start + k);
            if end > start {
                f(batch, start..end)?;
                self.row = end;
            }
            if end < batch.num_rows() {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task_events table in two CSV parts (hence two Parquet files, two batches), read in
    /// tick windows that end inside a batch, at its end and past the table: every row comes
    /// once, in order, in runs of one batch each; a cursor opened after `consumed` rows goes on
    /// from there.
    #[test]
    fn runs_before_a_bound_cover_each_row_once_in_order() {
        let root = tempfile::tempdir().unwrap();
        let (trace, out) = (root.path().join("trace"), root.path().join("parquet"));
        let row = |s: u32, task: u32| format!("{s}000000,,1,{task},,0,u,0,0,0.1,0.1,0,0\n");
        let parts = [[0, 10, 20].as_slice(), &[30, 40]];
        let dir = trace.join("task_events");
        std::fs::create_dir_all(&dir).unwrap();
        for (k, times) in parts.iter().enumerate() {
            let rows: String = times.iter().map(|&s| row(s, s)).collect();
            std::fs::write(dir.join(format!("part-0000{k}-of-00002.csv")), rows).unwrap();
        }
        let machines = trace.join("machine_events");
        std::fs::create_dir_all(&machines).unwrap();
        std::fs::write(
            machines.join("part-00000-of-00001.csv"),
            "0,1,0,p,0.5,0.5\n",
        )
        .unwrap();
        let options = ingest::IngestOptions::default();
        ingest::ingest(&trace, &out, &options, &ingest::Progress::default()).unwrap();

        let read = |cursor: &mut Cursor, end_s: i64| {
            let mut runs = Vec::new();
            let end_us = end_s.saturating_mul(1_000_000);
            cursor
                .each_before(end_us, |b, rows| {
                    assert!(rows.end <= b.num_rows() && !rows.is_empty());
                    let times = b.column(0).as_primitive::<Int64Type>().values();
                    runs.push(
                        times[rows]
                            .iter()
                            .map(|t| t / 1_000_000)
                            .collect::<Vec<_>>(),
                    );
                    Ok(())
                })
                .unwrap();
            runs
        };
        let mut cursor = Cursor::open(&out, Table::TaskEvents, &["time"]).unwrap();
        let s = |t: i64| t * 1_000_000;
        assert!(
            !cursor.none_before(s(1)),
            "no batch loaded yet: it cannot tell"
        );
        assert_eq!(read(&mut cursor, 15), vec![vec![0, 10]]);
        // Next row at 20 s, in the batch loaded.
        assert!(cursor.none_before(s(20)) && !cursor.none_before(s(20) + 1));
        assert_eq!(read(&mut cursor, 15), Vec::<Vec<i64>>::new());
        assert_eq!(read(&mut cursor, 30), vec![vec![20]]);
        assert!(
            !cursor.none_before(s(1_000)),
            "the first batch is spent: it cannot tell"
        );
        assert_eq!(read(&mut cursor, i64::MAX), vec![vec![30, 40]]);
        assert!(cursor.none_before(i64::MAX), "the table has ended");
        assert_eq!(read(&mut cursor, i64::MAX), Vec::<Vec<i64>>::new());
        assert!(Cursor::none().none_before(i64::MAX));
        let mut resumed = Cursor::open_at(&out, Table::TaskEvents, &["time"], 2).unwrap();
        assert_eq!(read(&mut resumed, i64::MAX), vec![vec![20], vec![30, 40]]);
    }
}
