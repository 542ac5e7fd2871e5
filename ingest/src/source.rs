//! Opening one trace part file as a stream of CSV records: `.csv.gz` (multi-member gzip) or
//! plain `.csv`, with the compressed bytes read counted for progress.
//!
//! Memory: one read buffer and one record, regardless of the file's size.

use std::collections::VecDeque;
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

/// The decompressed stream with the lines read and not yet passed, so that a record's line is
/// exact. The csv reader counts a record's blank lines as part of it: the records of
/// `1\n\n2\n\n\n3` start, by its positions, at bytes 0, 4 and 9 on lines 1, 2 and 4 (they are
/// on lines 1, 3 and 6). So this index keeps where each line with content starts (a line whose
/// first byte is not `\r` or `\n`) and its number, and a record's line is that of the first
/// such line at or after its position. Memory: the lines of the reader's read-ahead.
struct LineIndex<R> {
    inner: R,
    /// Bytes read so far.
    offset: u64,
    /// Newlines read so far.
    newlines: u64,
    /// The last byte read ended a line (or nothing was read yet): the next read's first byte
    /// starts one.
    at_line_start: bool,
    /// (offset, 1-based line) of the lines with content read and not yet passed.
    ahead: VecDeque<(u64, u64)>,
}

impl<R: Read> Read for LineIndex<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let read = &buf[..n];
        let content = |b: &u8| *b != b'\n' && *b != b'\r';
        if self.at_line_start && read.first().is_some_and(content) {
            self.ahead.push_back((self.offset, self.newlines + 1));
        }
        for at in memchr::memchr_iter(b'\n', read) {
            self.newlines += 1;
            if read.get(at + 1).is_some_and(content) {
                self.ahead
                    .push_back((self.offset + at as u64 + 1, self.newlines + 1));
            }
        }
        if n > 0 {
            self.at_line_start = read[n - 1] == b'\n';
        }
        self.offset += n as u64;
        Ok(n)
    }
}

impl<R> LineIndex<R> {
    /// The index over `inner`, nothing read yet.
    fn new(inner: R) -> LineIndex<R> {
        LineIndex {
            inner,
            offset: 0,
            newlines: 0,
            at_line_start: true,
            ahead: VecDeque::new(),
        }
    }

    /// The 1-based line of the first line with content at or after byte `byte` (asked in
    /// increasing order), or 0 when none has been read.
    fn line_at(&mut self, byte: u64) -> u64 {
        while self.ahead.front().is_some_and(|&(at, _)| at < byte) {
            self.ahead.pop_front();
        }
        self.ahead.front().map_or(0, |&(_, line)| line)
    }
}

/// A CSV record stream over one part file.
pub struct PartReader<'a> {
    reader: csv::Reader<LineIndex<Box<dyn Read + Send + 'a>>>,
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
            .from_reader(LineIndex::new(stream));
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
                // Lines end in `\n`; a part whose lines end in a bare `\r` would give every
                // record the same number, so a record is at least one line further.
                let start = record.position().map_or(0, |p| p.byte());
                let line = self.reader.get_mut().line_at(start);
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

    /// Lines are found whatever the reads' boundaries: read one byte at a time, the lines with
    /// content of `a\n\r\nb\n\nc` start at bytes 0, 4 and 7 on lines 1, 3 and 5.
    #[test]
    fn line_starts_do_not_depend_on_read_boundaries() {
        struct OneByte<'a>(&'a [u8]);
        impl Read for OneByte<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let Some((&b, rest)) = self.0.split_first() else {
                    return Ok(0);
                };
                buf[0] = b;
                self.0 = rest;
                Ok(1)
            }
        }
        let mut index = LineIndex::new(OneByte(b"a\n\r\nb\n\nc"));
        std::io::copy(&mut index, &mut std::io::sink()).unwrap();
        assert_eq!(index.ahead, [(0, 1), (4, 3), (7, 5)]);
        assert_eq!(
            (index.line_at(0), index.line_at(2), index.line_at(5)),
            (1, 3, 5)
        );
        assert_eq!(index.line_at(8), 0, "nothing read there");
    }

    /// Records are numbered by their line: `\r\n` ends one line, and a bare `\r` (found by
    /// fuzzing: the csv reader counts `\n` only) still moves to the next line, so an error names
    /// one record.
    #[test]
    fn records_are_numbered_by_line_whatever_ends_them() {
        assert_eq!(lines_of(b"1,a\n2,b\n3,c\n"), [1, 2, 3]);
        assert_eq!(lines_of(b"1,a\r\n2,b\r\n"), [1, 2]);
        assert_eq!(lines_of(b"1,a\r2,b\r3,c"), [1, 2, 3]);
        // Blank lines are skipped, and counted: the csv reader alone said 1, 2, 4.
        assert_eq!(lines_of(b"1,a\n\n2,b\n\n\n3,c\n"), [1, 3, 6]);
        assert_eq!(lines_of(b"\r\n1,a\r\n\r\n2,b"), [2, 4]);
        // A quoted field's newlines belong to its record; the next record is on a later line.
        assert_eq!(lines_of(b"1,\"a\nb\"\n2,c\n"), [1, 3]);
    }
}
