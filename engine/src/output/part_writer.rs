//! Writing parts on a thread of their own (`worker.rs`) while the run goes on: encoding a part
//! as Parquet (`write_part`) took ~4 % of first-fit's run thread on the 12.5k cell, outside the
//! ticks' timed phases.
//!
//! The run builds each part's batch (it reads the run's state) and hands it over; the thread
//! encodes, writes, syncs and renames it into place, in hand-over order, and hands back its
//! record. Records are taken back in that order, so the list of parts ([`OutputState::parts`])
//! is what writing each part at once gives, and the files are the same bytes. Invariants: at
//! most [`HELD`] parts wait for the thread; a snapshot's state and a finished run list only
//! parts written through to the disk ([`PartWriter::flush`] first); a write's error comes back
//! at the next hand-over or flush. Without the thread (the system would not start one) parts
//! are written at once, as before.
//!
//! [`OutputState::parts`]: super::OutputState::parts

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::RecordBatch;
use parquet::file::metadata::KeyValue;

use super::{PartRecord, write_part};
use crate::error::{EngineError, Result};
use crate::worker::Worker;

/// Parts handed over and not yet taken by the thread: the run waits beyond that (each holds a
/// batch: a policy table's part is up to `part_rows` rows).
const HELD: usize = 2;

/// One part to write: where (the run directory, table, file name), what, with which metadata.
pub(super) struct PartJob {
    pub(super) run_dir: Arc<PathBuf>,
    pub(super) table: String,
    pub(super) name: String,
    pub(super) batch: RecordBatch,
    pub(super) file_metadata: Arc<Vec<KeyValue>>,
}

impl PartJob {
    fn write(self) -> Result<PartRecord> {
        write_part(
            &self.run_dir,
            (&self.table, &self.name),
            &self.batch,
            &self.file_metadata,
        )
    }
}

/// The run's end of the writing thread (module doc).
pub(super) struct PartWriter {
    /// The thread (`None`: parts are written at once).
    worker: Option<Worker<PartJob, Result<PartRecord>>>,
    /// Parts handed over whose records are not taken back yet.
    pending: usize,
}

impl PartWriter {
    /// Starts the thread (without one, parts are written at once).
    pub(super) fn spawn() -> PartWriter {
        PartWriter {
            worker: Worker::spawn("part-writer", HELD, PartJob::write),
            pending: 0,
        }
    }

    /// Writes `job`'s part (on the thread, or at once without one); the records of parts
    /// written since go to `parts`, in hand-over order.
    pub(super) fn write(&mut self, job: PartJob, parts: &mut Vec<PartRecord>) -> Result<()> {
        let Some(worker) = &self.worker else {
            parts.push(job.write()?);
            return Ok(());
        };
        match worker.send(job) {
            Ok(()) => self.pending += 1,
            // The thread is gone (it panicked): write at once.
            Err(job) => parts.push(job.write()?),
        }
        while self.pending > 0
            && let Some(record) = worker.try_recv()
        {
            self.pending -= 1;
            parts.push(record?);
        }
        Ok(())
    }

    /// Waits for every part handed over; their records go to `parts`, in hand-over order.
    pub(super) fn flush(&mut self, parts: &mut Vec<PartRecord>) -> Result<()> {
        while self.pending > 0 {
            self.pending -= 1;
            match self.worker.as_ref().and_then(Worker::recv) {
                Some(record) => parts.push(record?),
                None => {
                    return Err(EngineError::Internal(
                        "the part-writing thread ended with parts not written".into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};

    use super::*;
    use crate::output::PARTIAL_DIR;

    /// A run directory with the partial directory and `tables`' directories.
    fn run_dir(tables: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for sub in tables.iter().chain([&PARTIAL_DIR]) {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        dir
    }

    fn job(dir: &std::path::Path, table: &str, k: i64) -> PartJob {
        let column = Int64Array::from_iter_values((0..1000).map(|v| v * k));
        PartJob {
            run_dir: Arc::new(dir.to_path_buf()),
            table: table.into(),
            name: format!("part-{k:08}.parquet"),
            batch: RecordBatch::try_from_iter([("v", Arc::new(column) as _)]).unwrap(),
            file_metadata: Arc::default(),
        }
    }

    /// Nine parts of two tables handed over (more than the thread holds) are recorded in
    /// hand-over order, as the same records and bytes as writing each at once, and are all on
    /// the disk after the flush.
    #[test]
    fn parts_written_on_the_thread_are_those_written_at_once() {
        let (threaded, at_once) = (run_dir(&["a", "b"]), run_dir(&["a", "b"]));
        let (mut writer, mut parts) = (PartWriter::spawn(), Vec::new());
        assert!(writer.worker.is_some());
        let mut expected = Vec::new();
        for k in 1..=9 {
            let table = if k % 3 == 0 { "b" } else { "a" };
            writer
                .write(job(threaded.path(), table, k), &mut parts)
                .unwrap();
            expected.push(job(at_once.path(), table, k).write().unwrap());
        }
        writer.flush(&mut parts).unwrap();
        assert_eq!(parts, expected);
        assert_eq!(writer.pending, 0);
        crate::output::check_parts(threaded.path(), &parts).unwrap();
        for p in &parts {
            let read = |d: &tempfile::TempDir| std::fs::read(d.path().join(&p.name)).unwrap();
            assert_eq!(read(&threaded), read(&at_once), "{}", p.name);
        }
    }

    /// A part that cannot be written (its table's directory is gone) comes back as an error
    /// naming its file at the flush, after the parts handed over before it are recorded.
    #[test]
    fn a_failed_write_is_an_error_at_the_flush() {
        let dir = run_dir(&["a"]);
        let (mut writer, mut parts) = (PartWriter::spawn(), Vec::new());
        writer.write(job(dir.path(), "a", 1), &mut parts).unwrap();
        let taken = writer.write(job(dir.path(), "missing", 2), &mut parts);
        let error = taken.and_then(|()| writer.flush(&mut parts)).unwrap_err();
        assert!(error.to_string().contains("missing"), "{error}");
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].name, "a/part-00000001.parquet");
    }
}
