//! The snapshot file format: a fixed header, a section table, then the sections.
//!
//! ```text
//! header (64 B)   magic "CELLSNAP" | version u32 | sections u32 | tick u64 | config_hash u64
//!                 | trace_hash u64 | file_len u64 | run_id u64 | header crc32 u32 | 0 u32
//! table (32 B/s)  name [u8; 8] | offset u64 | len u64 | crc32 u32 | 0 u32
//! sections        each 8-byte aligned; a sequence of columns:
//!                 element size u32 | 0 u32 | count u64 | count * size bytes | zero padding to 8
//! ```
//!
//! All integers little-endian (the engine only builds on little-endian targets). Arrays are the
//! engine's columns as raw bytes; irregular state (agents' queues, in-flight messages) is one
//! byte column in `postcard` encoding. Reading maps the file (memmap2) and views columns in
//! place through `bytemuck::try_cast_slice`, which checks length and alignment; every header
//! field, table entry and column length is checked against the file before use, so a corrupt,
//! truncated or foreign file is an error naming the file and the place, never a panic.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use bytemuck::Pod;
use ingest::atomic_file::{AtomicFile, WriteError};
use serde::Serialize;
use serde::de::DeserializeOwned;

#[cfg(not(target_endian = "little"))]
compile_error!("snapshots store little-endian columns; big-endian targets are not supported");

/// First bytes of every snapshot.
pub const MAGIC: [u8; 8] = *b"CELLSNAP";
/// Format version written and the only one read. Raised whenever the layout of any section
/// changes, including the policy's postcard-encoded state (2: MASB brokers keep their asks in
/// one flat vector; 3: a MASB agent's broker state is optional, present for brokers only), and
/// whenever the policy's random draws change, so that a resumed run always continues as the run
/// that wrote the snapshot would have (4: a migration's candidates are drawn from the cumulative
/// scores, `masb/select/draw.rs`; 5: a MASB broker's new tasks draw from streams of their own,
/// scored in the order of their windows, `masb/agents/broker.rs`; 6: the outputs' open
/// `migrations/` part has a first tick of its own, `output::OutputState`; 7: MASB's node reports
/// still due at a tick boundary are the policy's, not messages, `masb/reports.rs`; 8: the
/// trace's identity hashed from its parts' inputs, rows and times, not from the summary file's
/// bytes, `snapshot::trace_hash`; 9: the run section lists the builds that simulated the run,
/// `summary::BuildSpan`; 10: the policy section ends with the agents' pending wake-ups,
/// `active.rs`, and the config holds the policy as a `[policy]` table, `policies.rs`; 11: the
/// outputs' state holds MASB's `migrations/` rows as a policy table's, `output/mod.rs`; 12: the
/// header holds the run's ID, `run_identity.rs`, and the outputs' state each written part's size
/// and CRC-32, `output::PartRecord`; 13: a MASB node agent holds one SAN process per task its
/// SCS selected, `masb/agents/node.rs`; 14: a run displaced by a machine removal keeps its usage
/// rows' place and counts its lost work, `replay/events.rs`, `Tasks::lost_us`; 15: inboxes are
/// read in a fair order drawn from the seed and the round, `executor.rs`, and the run section
/// ends with the watchdog's state, `watchdog.rs`; 16: the outputs' state holds the samples
/// file's CRC-32, `output::check_samples`, and the header the section table's; 17: MASB's forced
/// migration candidates are drawn, `masb/select/migration.rs`, and the greedy fit rule reads
/// requests by default, `fit_by.rs`; 18: the outputs' state lists `counters/` parts, the
/// policy's counters moved out of `ticks/`, `output/tables.rs`; 19: tasks hold their scheduling
/// class, `cell/columns.rs`; 20: the outputs' open timing rows hold each phase's parallel time,
/// `output::TickTiming`; 21: Sparrow's view exchanges' entries wait in a table of their own
/// beside its timeline, its messages naming them, `sparrow/exchanges.rs`; 22: a task's usage
/// and deferred usage rows are saved without the sample's end, which nothing read,
/// `cell/usage_slot.rs`; 23: a Sparrow peer holds the one scheduler's draws under
/// `draws = "radlab-*"`, `ingest::pyrandom::RadlabDraws`; 24: a MASB broker holds the
/// bookings of the new tasks it sent, `masb/agents/booking.rs`; 25: the run's sums hold the
/// usage rises per threshold, `summary.rs`; 26: a MASB node agent's SAN process says whether
/// a stable node's offload started it, `masb/agents/node.rs`; 27: a MASB migration's process
/// request, start, transfer in flight and `migrations/` rows say whether an offload asked,
/// `masb/protocol.rs`, `masb/migrations.rs`; 28: a MASB request for migration candidates says
/// whether an offload asked, its broker then drawing no forced ones, `masb/protocol.rs`).
pub const VERSION: u32 = 28;
const HEADER_LEN: usize = 64;
const ENTRY_LEN: usize = 32;

/// Why a snapshot cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The snapshot file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not a snapshot, is damaged or was cut short.
    #[error("{path}: {problem}")]
    Corrupt {
        /// The snapshot file.
        path: PathBuf,
        /// What is wrong and where.
        problem: String,
    },
    /// Written by another format version.
    #[error(
        "{path}: snapshot format version {found}, this cellsim reads version {VERSION} (finish the run with the cellsim build that started it, or start it again)"
    )]
    Version {
        /// The snapshot file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
    },
    /// Taken from a run with another configuration or trace.
    #[error("{path}: {problem}")]
    Mismatch {
        /// The snapshot file.
        path: PathBuf,
        /// Which identity differs.
        problem: String,
    },
}

impl SnapshotError {
    /// The snapshot file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            SnapshotError::Io { path, .. }
            | SnapshotError::Corrupt { path, .. }
            | SnapshotError::Version { path, .. }
            | SnapshotError::Mismatch { path, .. } => path,
        }
    }
}

/// What a snapshot says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The next tick to simulate (the snapshot is taken at this tick boundary).
    pub tick: u64,
    /// Hash of the run's configuration (`config::config_hash`).
    pub config_hash: u64,
    /// Hash of the trace's identity (`snapshot::trace_hash`).
    pub trace_hash: u64,
    /// The ID of the run that wrote it (`run_identity.rs`); 0 = none recorded.
    pub run_id: u64,
}

/// Writes one section's columns straight into the snapshot file, keeping only its running
/// length and checksum: a column is written from where it lies (the engine's big columns are
/// never copied) or from a vector built for it and dropped once written, so taking a snapshot
/// needs no more memory than the largest such vector. The first write error is kept and
/// reported by [`SnapshotWriter::finish`]; writes after it are skipped.
#[derive(Debug)]
pub struct SectionWriter {
    file: AtomicFile,
    /// The section's bytes so far.
    len: usize,
    crc: crc32fast::Hasher,
    error: Option<std::io::Error>,
}

impl SectionWriter {
    /// Appends bytes to the section.
    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        self.len += bytes.len();
        self.crc.update(bytes);
        if let Err(e) = self.file.writer().write_all(bytes) {
            self.error = Some(e);
        }
    }

    /// Appends a column of the `len` plain values `values` yields, written in chunks (no copy
    /// of the whole column is built).
    pub fn column_iter<T: Pod>(&mut self, len: usize, values: impl IntoIterator<Item = T>) {
        self.column_head::<T>(len);
        let bytes = self.write_chunked(values, |v, mut chunk| {
            chunk.extend_from_slice(bytemuck::bytes_of(&v));
            chunk
        });
        assert_eq!(
            bytes,
            len * size_of::<T>(),
            "a column yields the length it declares"
        );
        self.pad();
    }

    /// Writes what `encode` appends for each of `items`, buffered in chunks of about
    /// [`CHUNK_BYTES`]; returns the bytes written.
    fn write_chunked<I>(
        &mut self,
        items: impl IntoIterator<Item = I>,
        mut encode: impl FnMut(I, Vec<u8>) -> Vec<u8>,
    ) -> usize {
        let (mut chunk, mut written) = (Vec::with_capacity(CHUNK_BYTES), 0);
        for item in items {
            chunk = encode(item, chunk);
            if chunk.len() >= CHUNK_BYTES {
                self.write(&chunk);
                written += chunk.len();
                chunk.clear();
            }
        }
        self.write(&chunk);
        written + chunk.len()
    }

    /// Appends a column of plain values.
    pub fn column<T: Pod>(&mut self, values: &[T]) {
        self.column_head::<T>(values.len());
        self.write(bytemuck::cast_slice(values));
        self.pad();
    }

    fn column_head<T: Pod>(&mut self, len: usize) {
        self.write(&(size_of::<T>() as u32).to_le_bytes());
        self.write(&0u32.to_le_bytes());
        self.write(&(len as u64).to_le_bytes());
    }

    /// Zero padding to the next multiple of 8 bytes of the section.
    fn pad(&mut self) {
        let padding = self.len.next_multiple_of(8) - self.len;
        self.write(&[0u8; 8][..padding]);
    }

    /// Appends one plain value (a column of one).
    pub fn value<T: Pod>(&mut self, v: T) {
        self.column(&[v]);
    }

    /// Appends irregular state, postcard-encoded, as a byte column.
    pub fn serde<T: Serialize>(&mut self, v: &T) {
        let bytes = postcard::to_allocvec(v).expect("in-memory encoding cannot fail");
        self.column(&bytes);
    }

    /// Appends `items` as [`SectionWriter::serde`] appends a vector of them (the same bytes),
    /// encoding them in chunks: the items are encoded twice, once to size the column, so that
    /// neither a copy of them nor their whole encoding is held.
    pub fn serde_items<T: Serialize>(&mut self, items: &[T]) {
        let prefix = postcard::to_allocvec(&items.len()).expect("in-memory encoding cannot fail");
        let mut counted = Counted(prefix.len());
        for item in items {
            counted = postcard::to_extend(item, counted).expect("in-memory encoding cannot fail");
        }
        self.column_head::<u8>(counted.0);
        self.write(&prefix);
        self.write_chunked(items, |item, chunk| {
            postcard::to_extend(item, chunk).expect("in-memory encoding cannot fail")
        });
        self.pad();
    }

    /// Ends the section: its length and checksum, and a fresh start for the next.
    fn close(&mut self) -> (usize, u32) {
        let crc = std::mem::take(&mut self.crc).finalize();
        (std::mem::take(&mut self.len), crc)
    }
}

/// Bytes a column written in chunks is buffered by.
const CHUNK_BYTES: usize = 1 << 16;

/// Counts the bytes postcard would write.
struct Counted(usize);

impl Extend<u8> for Counted {
    fn extend<I: IntoIterator<Item = u8>>(&mut self, bytes: I) {
        self.0 += bytes.into_iter().count();
    }
}

/// Writes a snapshot file durably ([`AtomicFile`]: a temporary file beside it, synced and
/// renamed into place, removed if the snapshot is abandoned). Its sections, declared when it is
/// created, are written in that order, each straight to the file; [`SnapshotWriter::finish`]
/// then writes the header and the section table over the zeros reserved for them.
#[derive(Debug)]
pub struct SnapshotWriter {
    names: Vec<[u8; 8]>,
    /// Length and checksum of each section closed.
    done: Vec<(usize, u32)>,
    /// Whether `section` holds a section not yet closed.
    open: bool,
    /// The section being written, and the file.
    section: SectionWriter,
}

fn section_name(name: &str) -> [u8; 8] {
    assert!(name.len() <= 8, "section names have at most 8 bytes");
    let mut n = [0u8; 8];
    n[..name.len()].copy_from_slice(name.as_bytes());
    n
}

/// Where the sections of a snapshot of `sections` sections start.
fn table_end(sections: usize) -> usize {
    HEADER_LEN + ENTRY_LEN * sections
}

fn io_error(e: WriteError) -> SnapshotError {
    SnapshotError::Io {
        path: e.path,
        source: e.source,
    }
}

impl SnapshotWriter {
    /// Starts the snapshot `path` with sections `names` (each at most 8 ASCII bytes).
    pub fn create(path: &Path, names: &[&str]) -> Result<SnapshotWriter, SnapshotError> {
        let mut file = AtomicFile::create(path).map_err(io_error)?;
        if let Err(e) = file.writer().write_all(&vec![0u8; table_end(names.len())]) {
            return Err(io_error(file.error(e)));
        }
        Ok(SnapshotWriter {
            names: names.iter().map(|n| section_name(n)).collect(),
            done: Vec::with_capacity(names.len()),
            open: false,
            section: SectionWriter {
                file,
                len: 0,
                crc: crc32fast::Hasher::new(),
                error: None,
            },
        })
    }

    /// Closes the previous section and starts `name`, which must be the next one declared.
    pub fn section(&mut self, name: &str) -> &mut SectionWriter {
        self.close_open();
        assert_eq!(
            self.names.get(self.done.len()),
            Some(&section_name(name)),
            "sections are written in the order declared"
        );
        self.open = true;
        &mut self.section
    }

    fn close_open(&mut self) {
        if std::mem::take(&mut self.open) {
            let closed = self.section.close();
            self.done.push(closed);
        }
    }

    /// The header and the section table: the file's bytes before the sections'.
    fn head(&self, header: Header) -> Vec<u8> {
        let table_end = table_end(self.names.len());
        let file_len = table_end + self.done.iter().map(|s| s.0).sum::<usize>();
        let mut out = Vec::with_capacity(table_end);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.names.len() as u32).to_le_bytes());
        for v in [
            header.tick,
            header.config_hash,
            header.trace_hash,
            file_len as u64,
            header.run_id,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        let mut table = Vec::with_capacity(table_end - HEADER_LEN);
        let mut offset = table_end;
        for (name, &(len, crc)) in self.names.iter().zip(&self.done) {
            table.extend_from_slice(name);
            table.extend_from_slice(&(offset as u64).to_le_bytes());
            table.extend_from_slice(&(len as u64).to_le_bytes());
            table.extend_from_slice(&crc.to_le_bytes());
            table.extend_from_slice(&0u32.to_le_bytes());
            offset += len;
        }
        // The section table's own checksum (bytes 60..64): a flipped name byte makes the
        // snapshot damaged, skipped for an older one, not a resume that fails on "no section".
        out.extend_from_slice(&crc32fast::hash(&table).to_le_bytes());
        out.extend_from_slice(&table);
        out
    }

    /// Closes the last section, writes the header and the table, and puts the file in place
    /// durably; a write that failed on the way is reported here, and the file is not kept.
    pub fn finish(mut self, header: Header) -> Result<(), SnapshotError> {
        self.close_open();
        assert_eq!(
            self.done.len(),
            self.names.len(),
            "every declared section is written"
        );
        let head = self.head(header);
        let file = &mut self.section.file;
        let written = match self.section.error.take() {
            Some(e) => Err(e),
            None => (file.writer().seek(SeekFrom::Start(0)))
                .and_then(|_| file.writer().write_all(&head)),
        };
        if let Err(e) = written {
            return Err(io_error(file.error(e)));
        }
        self.section.file.commit().map_err(io_error)
    }
}

/// An open, checked snapshot file.
pub struct Snapshot {
    path: PathBuf,
    map: memmap2::Mmap,
    header: Header,
    sections: Vec<([u8; 8], usize, usize)>,
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The header at the start of `b`, the bytes of snapshot `path`, and its section count; checks
/// the magic, the header's checksum and the format version.
fn parse_header(path: &Path, b: &[u8]) -> Result<(Header, usize), SnapshotError> {
    if b.len() < HEADER_LEN || b[..8] != MAGIC {
        return Err(SnapshotError::Corrupt {
            path: path.to_path_buf(),
            problem: format!(
                "not a cellsim snapshot (no {:?} header)",
                std::str::from_utf8(&MAGIC).unwrap_or("")
            ),
        });
    }
    if crc32fast::hash(&b[..56]) != le_u32(b, 56) {
        return Err(SnapshotError::Corrupt {
            path: path.to_path_buf(),
            problem: "header checksum mismatch".into(),
        });
    }
    let version = le_u32(b, 8);
    if version != VERSION {
        return Err(SnapshotError::Version {
            path: path.to_path_buf(),
            found: version,
        });
    }
    let header = Header {
        tick: le_u64(b, 16),
        config_hash: le_u64(b, 24),
        trace_hash: le_u64(b, 32),
        run_id: le_u64(b, 48),
    };
    Ok((header, le_u32(b, 12) as usize))
}

/// Reads and checks only the header of snapshot `path` (its first 64 bytes; the sections are
/// not checked): what `cellsim status` tells a run's snapshots apart by.
pub fn read_header(path: &Path) -> Result<Header, SnapshotError> {
    use std::io::Read;
    let io = |source| SnapshotError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut b = Vec::with_capacity(HEADER_LEN);
    File::open(path)
        .map_err(io)?
        .take(HEADER_LEN as u64)
        .read_to_end(&mut b)
        .map_err(io)?;
    Ok(parse_header(path, &b)?.0)
}

impl Snapshot {
    /// Opens `path` and checks its header, table and every section's checksum.
    pub fn open(path: &Path) -> Result<Snapshot, SnapshotError> {
        let corrupt = |problem: String| SnapshotError::Corrupt {
            path: path.to_path_buf(),
            problem,
        };
        let file = File::open(path).map_err(|source| SnapshotError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        // SAFETY: the map is read-only and private to this reader; snapshot files are written
        // once under a temporary name and renamed, never modified in place, so the bytes
        // cannot change while mapped (a user truncating the file by hand meanwhile is outside
        // what any reader can guard against).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|source| SnapshotError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let b = &map[..];
        let (header, count) = parse_header(path, b)?;
        let file_len = le_u64(b, 40);
        if file_len != b.len() as u64 {
            return Err(corrupt(format!(
                "truncated: {} bytes, the header says {file_len}",
                b.len()
            )));
        }
        let table_end = count
            .checked_mul(ENTRY_LEN)
            .and_then(|t| t.checked_add(HEADER_LEN))
            .filter(|&end| end <= b.len())
            .ok_or_else(|| corrupt(format!("section table of {count} entries overruns")))?;
        if crc32fast::hash(&b[HEADER_LEN..table_end]) != le_u32(b, 60) {
            return Err(corrupt(format!(
                "section table checksum mismatch (bytes {HEADER_LEN}..{table_end})"
            )));
        }
        let mut sections = Vec::with_capacity(count);
        for s in 0..count {
            let e = HEADER_LEN + s * ENTRY_LEN;
            let name: [u8; 8] = b[e..e + 8].try_into().expect("8 bytes");
            let (offset, len) = (le_u64(b, e + 8), le_u64(b, e + 16));
            let shown = String::from_utf8_lossy(&name)
                .trim_end_matches('\0')
                .to_string();
            let end = offset
                .checked_add(len)
                .filter(|&end| offset >= table_end as u64 && end <= b.len() as u64)
                .ok_or_else(|| corrupt(format!("section {shown} lies outside the file")))?;
            let (offset, end) = (offset as usize, end as usize);
            if !offset.is_multiple_of(8) {
                return Err(corrupt(format!("section {shown} is not 8-byte aligned")));
            }
            if crc32fast::hash(&b[offset..end]) != le_u32(b, e + 24) {
                return Err(corrupt(format!(
                    "section {shown} checksum mismatch (bytes {offset}..{end})"
                )));
            }
            sections.push((name, offset, end));
        }
        Ok(Snapshot {
            path: path.to_path_buf(),
            map,
            header,
            sections,
        })
    }

    /// The header.
    pub fn header(&self) -> Header {
        self.header
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A reader over section `name`.
    pub fn section(&self, name: &str) -> Result<SectionReader<'_>, SnapshotError> {
        let key = section_name(name);
        let &(_, start, end) =
            self.sections
                .iter()
                .find(|s| s.0 == key)
                .ok_or_else(|| SnapshotError::Corrupt {
                    path: self.path.clone(),
                    problem: format!("no section {name}"),
                })?;
        Ok(SectionReader {
            path: &self.path,
            name: name.to_string(),
            data: &self.map[start..end],
            pos: 0,
            column: 0,
        })
    }
}

/// Reads one section's columns in the order they were written.
pub struct SectionReader<'a> {
    path: &'a Path,
    name: String,
    data: &'a [u8],
    pos: usize,
    column: usize,
}

impl<'a> SectionReader<'a> {
    /// A corruption error at the current column.
    pub fn corrupt(&self, problem: impl std::fmt::Display) -> SnapshotError {
        SnapshotError::Corrupt {
            path: self.path.to_path_buf(),
            problem: format!("section {} column {}: {problem}", self.name, self.column),
        }
    }

    /// The next column, viewed in place.
    pub fn column<T: Pod>(&mut self) -> Result<&'a [T], SnapshotError> {
        if self.pos + 16 > self.data.len() {
            return Err(self.corrupt("missing (section ends)"));
        }
        let size = le_u32(self.data, self.pos) as usize;
        let count = le_u64(self.data, self.pos + 8);
        if size != size_of::<T>() {
            return Err(self.corrupt(format!(
                "holds {size}-byte elements, expected {}",
                size_of::<T>()
            )));
        }
        let start = self.pos + 16;
        let end = count
            .checked_mul(size as u64)
            .and_then(|n| n.checked_add(start as u64))
            .filter(|&end| end <= self.data.len() as u64)
            .ok_or_else(|| self.corrupt(format!("{count} elements overrun the section")))?
            as usize;
        let values = bytemuck::try_cast_slice::<u8, T>(&self.data[start..end])
            .map_err(|e| self.corrupt(format!("{e:?}")))?;
        self.pos = end.next_multiple_of(8).min(self.data.len());
        self.column += 1;
        Ok(values)
    }

    /// The next column as one value.
    pub fn value<T: Pod>(&mut self) -> Result<T, SnapshotError> {
        match self.column::<T>()? {
            [v] => Ok(*v),
            other => Err(self.corrupt(format!("{} values, expected 1", other.len()))),
        }
    }

    /// The next column, checked to hold `len` values.
    pub fn column_of<T: Pod>(&mut self, len: usize) -> Result<&'a [T], SnapshotError> {
        let values = self.column::<T>()?;
        if values.len() != len {
            return Err(self.corrupt(format!("{} values, expected {len}", values.len())));
        }
        Ok(values)
    }

    /// The next column as postcard-encoded state.
    pub fn serde<T: DeserializeOwned>(&mut self) -> Result<T, SnapshotError> {
        let bytes = self.column::<u8>()?;
        postcard::from_bytes(bytes).map_err(|e| self.corrupt(format!("undecodable: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: Header = Header {
        tick: 42,
        config_hash: 9,
        trace_hash: 8,
        run_id: 7,
    };

    /// Writes two sections to `path`: columns, a postcard column of odd length (padded) and a
    /// column after it.
    fn write_sample(path: &Path) {
        let mut w = SnapshotWriter::create(path, &["cell", "other"]).unwrap();
        let s = w.section("cell");
        s.column(&[1u32, 2, 3]);
        s.value(-7i64);
        s.serde(&vec![(1u8, "x".to_string())]);
        s.column(&[4u16, 5, 6]);
        w.section("other").column(&[0.5f64]);
        w.finish(HEADER).unwrap();
    }

    #[test]
    fn round_trip_with_checks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.snap");
        write_sample(&path);
        let header = HEADER;
        // The layout, worked by hand: 64 header bytes and two 32-byte table entries; section
        // "cell" is 16 + 12 + 4 (padding), 16 + 8, 16 + 4 (postcard: length 1, 1, length 1,
        // 'x') + 4 and 16 + 6 + 2 = 104 bytes at 128; "other" 16 + 8 = 24 bytes at 232.
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 256);
        assert_eq!(
            (le_u64(&bytes, 64 + 8), le_u64(&bytes, 64 + 16)),
            (128, 104)
        );
        assert_eq!((le_u64(&bytes, 96 + 8), le_u64(&bytes, 96 + 16)), (232, 24));
        assert_eq!(&bytes[64..68], b"cell");
        assert_eq!((le_u32(&bytes, 128), le_u64(&bytes, 136)), (4, 3));
        assert!(!ingest::atomic_file::tmp_path(&path).exists());
        let snap = Snapshot::open(&path).unwrap();
        assert_eq!(snap.header(), header);
        let mut r = snap.section("cell").unwrap();
        assert_eq!(r.column::<u32>().unwrap(), &[1, 2, 3]);
        assert_eq!(r.value::<i64>().unwrap(), -7);
        assert_eq!(
            r.serde::<Vec<(u8, String)>>().unwrap(),
            vec![(1, "x".to_string())]
        );
        assert_eq!(r.column::<u16>().unwrap(), &[4, 5, 6]);
        let err = r.column::<u8>().unwrap_err().to_string();
        assert!(
            err.ends_with("section cell column 4: missing (section ends)"),
            "{err}"
        );
        let mut r = snap.section("other").unwrap();
        let err = r.column::<u32>().unwrap_err().to_string();
        assert!(err.contains("holds 8-byte elements, expected 4"), "{err}");
        assert!(snap.section("nope").is_err());
    }

    /// Columns written in chunks are the bytes of those written whole: plain values over
    /// several chunks, and postcard items (here references, as snapshots write them) against the
    /// vector `serde` encodes, whose length prefix takes two bytes.
    #[test]
    fn chunked_columns_are_the_columns_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let values: Vec<u64> = (0..20_000).map(|v| v * 7).collect();
        let items: Vec<(u32, String)> = (0..300).map(|k| (k, "x".repeat(k as usize % 5))).collect();
        let bytes = |chunked: bool| {
            let path = dir.path().join(format!("{chunked}.snap"));
            let mut w = SnapshotWriter::create(&path, &["s"]).unwrap();
            let s = w.section("s");
            if chunked {
                s.column_iter(values.len(), values.iter().copied());
                s.serde_items(&items.iter().collect::<Vec<_>>());
            } else {
                s.column(&values);
                s.serde(&items);
            }
            w.finish(HEADER).unwrap();
            std::fs::read(&path).unwrap()
        };
        assert_eq!(bytes(true), bytes(false));
        let snap = Snapshot::open(&dir.path().join("true.snap")).unwrap();
        let mut r = snap.section("s").unwrap();
        assert_eq!(r.column::<u64>().unwrap(), &values[..]);
        assert_eq!(r.serde::<Vec<(u32, String)>>().unwrap(), items);
    }

    #[test]
    fn every_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.snap");
        write_sample(&path);
        let good = std::fs::read(&path).unwrap();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..good.len() - 3].to_vec(), "truncated"),
            (
                {
                    let mut b = good.clone();
                    b[0] = b'X';
                    b
                },
                "not a cellsim snapshot",
            ),
            (
                {
                    let mut b = good.clone();
                    b[8] = VERSION as u8 + 1;
                    b
                },
                "header checksum",
            ),
            (
                {
                    let mut b = good.clone();
                    let n = b.len();
                    b[n - 10] ^= 1;
                    b
                },
                "section other checksum mismatch",
            ),
            (
                {
                    // A name byte of the section table (issue 56: "no section cell" at restore).
                    let mut b = good.clone();
                    b[65] ^= 0x20;
                    b
                },
                "section table checksum mismatch",
            ),
            (good[..20].to_vec(), "not a cellsim snapshot"),
        ];
        for (bytes, expected) in cases {
            std::fs::write(&path, &bytes).unwrap();
            let err = Snapshot::open(&path).err().expect("rejected").to_string();
            assert!(err.contains(expected), "{err} should say {expected}");
            assert!(err.contains("b.snap"), "{err} names the file");
        }
        // A future version with a valid header checksum.
        let mut b = good.clone();
        b[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
        let crc = crc32fast::hash(&b[..56]);
        b[56..60].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&path, &b).unwrap();
        let err = Snapshot::open(&path).err().unwrap().to_string();
        let expected = format!(
            "format version {}, this cellsim reads version {VERSION}",
            VERSION + 1
        );
        assert!(err.contains(&expected), "{err}");
        assert!(err.contains("the cellsim build that started it"), "{err}");
    }

    /// A snapshot abandoned before [`SnapshotWriter::finish`] (a panic while saving the state)
    /// leaves neither a file nor its temporary file; the previous snapshot of that name stays.
    #[test]
    fn an_abandoned_snapshot_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.snap");
        write_sample(&path);
        let before = std::fs::read(&path).unwrap();
        let mut w = SnapshotWriter::create(&path, &["cell", "other"]).unwrap();
        w.section("cell").column(&[9u64; 1000]);
        assert!(ingest::atomic_file::tmp_path(&path).exists());
        drop(w);
        assert!(!ingest::atomic_file::tmp_path(&path).exists());
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
