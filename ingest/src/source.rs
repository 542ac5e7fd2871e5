//! Opening one trace part file as a stream of CSV records: `.csv.gz` (multi-member gzip) or
//! plain `.csv`, with the compressed bytes read counted for progress.
//!
//! Memory: one read buffer and one record, regardless of the file's size.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use csv::ByteRecord;
use flate2::read::MultiGzDecoder;

use crate::error::{IngestError, Result};

/// Counts bytes read from the underlying file into a shared counter.
struct Counting<'a, R> {
    inner: R,
    counter: &'a AtomicU64,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A CSV record stream over one part file.
pub struct PartReader<'a> {
    reader: csv::Reader<Box<dyn Read + Send + 'a>>,
    path: &'a Path,
    line: u64,
}

const READ_BUFFER_BYTES: usize = 256 * 1024;

impl<'a> PartReader<'a> {
    /// Opens `path`; gzip when its name ends in `.gz`. Compressed bytes read go to `bytes_read`.
    pub fn open(path: &'a Path, bytes_read: &'a AtomicU64) -> Result<PartReader<'a>> {
        let file = File::open(path).map_err(IngestError::io(path))?;
        let counted = Counting {
            inner: file,
            counter: bytes_read,
        };
        let stream: Box<dyn Read + Send + 'a> = if path.extension().is_some_and(|e| e == "gz") {
            Box::new(MultiGzDecoder::new(BufReader::with_capacity(
                READ_BUFFER_BYTES,
                counted,
            )))
        } else {
            Box::new(counted)
        };
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(READ_BUFFER_BYTES)
            .from_reader(stream);
        Ok(PartReader {
            reader,
            path,
            line: 0,
        })
    }

    /// Reads the next record into `record`; returns its 1-based line number, or `None` at the end.
    pub fn next(&mut self, record: &mut ByteRecord) -> Result<Option<u64>> {
        match self.reader.read_byte_record(record) {
            Ok(true) => {
                // The csv reader counts `\n` only; a part whose lines end in a bare `\r` would
                // give every record the same number, so a record is at least one line further.
                let line = record.position().map_or(0, |p| p.line());
                self.line = line.max(self.line + 1);
                Ok(Some(self.line))
            }
            Ok(false) => Ok(None),
            Err(e) => Err(self.corrupt(e)),
        }
    }

    fn corrupt(&self, e: csv::Error) -> IngestError {
        let source = match e.into_kind() {
            csv::ErrorKind::Io(io) => io,
            other => std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{other:?}")),
        };
        IngestError::Corrupt {
            path: self.path.to_path_buf(),
            line: self.line,
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line numbers of every record of `text` written as a plain part.
    fn lines_of(text: &[u8]) -> Vec<u64> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("part-00000-of-00001.csv");
        std::fs::write(&path, text).unwrap();
        let read = AtomicU64::new(0);
        let mut reader = PartReader::open(&path, &read).unwrap();
        let mut record = ByteRecord::new();
        let mut lines = Vec::new();
        while let Some(line) = reader.next(&mut record).unwrap() {
            lines.push(line);
        }
        lines
    }

    /// Records are numbered by their line: `\r\n` ends one line, and a bare `\r` (found by
    /// fuzzing: the csv reader counts `\n` only) still moves to the next line, so an error names
    /// one record.
    #[test]
    fn records_are_numbered_by_line_whatever_ends_them() {
        assert_eq!(lines_of(b"1,a\n2,b\n3,c\n"), [1, 2, 3]);
        assert_eq!(lines_of(b"1,a\r\n2,b\r\n"), [1, 2]);
        assert_eq!(lines_of(b"1,a\r2,b\r3,c"), [1, 2, 3]);
    }
}
