//! The run directory's outputs. Each table is a directory of Parquet parts (read it whole with
//! `pandas.read_parquet("RUN/ticks")`, `polars.scan_parquet("RUN/ticks/*.parquet")` or DuckDB's
//! `read_parquet('RUN/ticks/*.parquet')`):
//! - `ticks/`: one row per tick, the same columns under every policy (a glob over many runs'
//!   parts reads as one table); `counters/`: one row per tick, the policy's own counters and
//!   message counts (`schema.json` lists them); `timing/`: wall-clock milliseconds per tick and phase, the only
//!   non-deterministic table; the policy's own tables ([`Policy::tables`](crate::policy::Policy::tables):
//!   MASB's `migrations/`, the queueing policies' `tasks/` and `jobs/`). One part per
//!   `part_ticks` ticks (a simulated day by default), `part-<first tick>.parquet`, written when
//!   its last tick is done; a policy table's part is also written at the end of a tick at which
//!   it holds `part_rows` rows (an 8x MASB day has ~1M migration rows), so that the rows held
//!   in memory and in snapshots stay bounded.
//! - `nodes/`: one row per online node every `nodes_every_ticks` ticks, one part per sample,
//!   `part-<tick>.parquet`.
//! - `samples.jsonl`: the policy's sampled decision logs (`samples.jsonl.partial` until the run
//!   completes).
//!
//! Invariants: a table's directory holds only whole parts (each written in `RUN/.partial/`, then
//! renamed into it);
//! parts are a function of the tick range they cover (where a policy table's part ends depends
//! only on its rows), so a run resumed from a snapshot rewrites exactly the bytes an
//! uninterrupted run writes. The rows of the open parts and the samples
//! file's length are what a snapshot keeps of the outputs ([`OutputState`]).
//! Parts are encoded and written on a thread of their own (`output/part_writer.rs`); a snapshot's
//! state and a finished run list only parts written through.
//! Memory: the rows of the open parts, one node sample and up to two parts being written.
//! The tables' schemas and batches are built in `output/tables.rs`.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};

use crate::cell::Cell;
use crate::error::{EngineError, Result};
use crate::metrics::TickRow;
use crate::policy::{CounterKind, TableRows, TableSpec, Value};

mod part_writer;
mod policy_tables;
pub mod schema;
mod tables;
use part_writer::{PartJob, PartWriter};
pub use policy_tables::schema_of as policy_table_schema;
pub use tables::{
    PARALLEL_COLUMNS, TickTiming, counters_schema, nodes_schema, rises_column, ticks_schema,
    timing_schema,
};
use tables::{counters_batch, nodes_batch, ticks_batch, timing_batch};

fn props(file_metadata: &[KeyValue]) -> WriterProperties {
    // No creation metadata that varies between runs of the same inputs: outputs must be
    // byte-identical ([`FileMetadata`]).
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by("cellsim".to_string())
        .set_key_value_metadata((!file_metadata.is_empty()).then(|| file_metadata.to_vec()))
        .build()
}

/// What every Parquet file of a run says about the run, as key-value metadata (issue 61 item 3:
/// a file read on its own, or a glob over many runs, tells whose it is): `cellsim.policy`,
/// `cellsim.seed`, `cellsim.config_hash` (the settings that shape the outputs, seed included:
/// `config::config_hash`), `cellsim.trace_hash` (the ingested trace, as snapshots check it),
/// `cellsim.run` (the two hashes together: the run's identity as its outputs know it) and
/// `cellsim.build` (the build that wrote the file; a run resumed by another build has parts of
/// both). Not the random ID in `run.toml`: two runs of the same inputs, config and seed write
/// the same bytes, whatever their thread counts or directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMetadata {
    /// The policy's name.
    pub policy: String,
    /// The run's seed.
    pub seed: u64,
    /// `config::config_hash` of the run's config.
    pub config_hash: u64,
    /// `snapshot::trace_hash` of the trace.
    pub trace_hash: u64,
    /// The build writing.
    pub build: String,
}

impl FileMetadata {
    /// The key-value pairs, in a fixed order.
    fn key_values(&self) -> Vec<KeyValue> {
        let run = crate::codec::hash_bytes(
            &[
                self.config_hash.to_le_bytes(),
                self.trace_hash.to_le_bytes(),
            ]
            .concat(),
        );
        [
            ("cellsim.run", format!("{run:016x}")),
            ("cellsim.policy", self.policy.clone()),
            ("cellsim.seed", self.seed.to_string()),
            ("cellsim.config_hash", format!("{:016x}", self.config_hash)),
            ("cellsim.trace_hash", format!("{:016x}", self.trace_hash)),
            ("cellsim.build", self.build.clone()),
        ]
        .into_iter()
        .map(|(k, v)| KeyValue::new(k.to_string(), v))
        .collect()
    }
}

/// The bytes the Parquet part at `part` would have without [`FileMetadata`]: its rows
/// re-encoded as the writer encodes them, with no key-value metadata (the bytes a build before
/// issue 61 wrote). What compares a part with one from such a build, or two runs whose configs
/// differ only in settings that must leave the data alone.
pub fn without_file_metadata(part: &Path) -> std::result::Result<Vec<u8>, String> {
    without_columns(part, &[])
}

/// What [`without_file_metadata`] gives, without the columns named in `since` (added later):
/// the bytes a build before them wrote. For references recorded by such builds.
pub fn without_columns(part: &Path, since: &[&str]) -> std::result::Result<Vec<u8>, String> {
    let (schema, batches) = read_without_metadata(part)?;
    let kept: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| !since.contains(&schema.field(i).name().as_str()))
        .collect();
    let schema = std::sync::Arc::new(schema.project(&kept).map_err(|e| e.to_string())?);
    let batches = (batches.iter())
        .map(|b| b.project(&kept).map_err(|e| e.to_string()))
        .collect::<std::result::Result<Vec<RecordBatch>, String>>()?;
    encode(schema, &batches)
}

/// What builds before issue 61 wrote as a `ticks/` part, from a run's `ticks/` part and the
/// `counters/` part of the same ticks: one table, the counters after the engine's columns,
/// without the usage rises and the counters named in `counters_since` (added later), encoded as
/// [`without_file_metadata`] does. For references recorded by such builds.
pub fn joined_ticks(
    ticks: &Path,
    counters: &Path,
    counters_since: &[&str],
) -> std::result::Result<Vec<u8>, String> {
    let (schema, ticks) = read_without_metadata(ticks)?;
    let (_, counters) = read_without_metadata(counters)?;
    let ([ticks], [counters]) = (ticks.as_slice(), counters.as_slice()) else {
        return Err("a part read as more than one batch".into());
    };
    let metadata = schema
        .metadata()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let joined = tables::joined_batch(ticks, counters, counters_since, metadata)?;
    encode(joined.schema(), &[joined])
}

/// Part `part`'s rows in one batch, its schema without the `cellsim.` key-value metadata.
fn read_without_metadata(
    part: &Path,
) -> std::result::Result<(SchemaRef, Vec<RecordBatch>), String> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let file = File::open(part).map_err(|e| format!("{}: {e}", part.display()))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| e.to_string())?;
    let rows = reader.metadata().file_metadata().num_rows();
    // The reader adds the file's key-value metadata to the schema's own (a policy table's
    // `pandas` entry): the `cellsim.` keys taken out again.
    let read = reader.schema().clone();
    let own: std::collections::HashMap<String, String> = (read.metadata().iter())
        .filter(|(k, _)| !k.starts_with("cellsim."))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let schema = std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
        read.fields().clone(),
        own,
    ));
    let reader = (reader.with_batch_size(usize::try_from(rows).unwrap_or(1).max(1)))
        .build()
        .map_err(|e| e.to_string())?;
    let batches = reader
        .map(|b| b.and_then(|b| b.with_schema(schema.clone())))
        .collect::<std::result::Result<Vec<RecordBatch>, _>>()
        .map_err(|e| e.to_string())?;
    Ok((schema, batches))
}

/// `batches` encoded as the writer encodes a part, without key-value metadata.
fn encode(schema: SchemaRef, batches: &[RecordBatch]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut out, schema, Some(props(&[]))).map_err(|e| e.to_string())?;
    for batch in batches {
        writer.write(batch).map_err(|e| e.to_string())?;
    }
    writer.close().map_err(|e| e.to_string())?;
    Ok(out)
}

/// Table directories of a run, in the order they are written.
pub const TABLES: [&str; 4] = ["ticks", "counters", "timing", "nodes"];

/// The table directories in run directory `dir` whose parts are deterministic (every one but
/// `timing/`: `ticks/`, `nodes/` and the policy's own tables), in name order. What a comparison
/// of two runs' outputs reads (with `samples.jsonl`).
pub fn deterministic_tables(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut tables = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let engine_only = ["timing", "snapshots", "synthetic"].contains(&name.as_str());
        if entry.file_type()?.is_dir() && !name.starts_with('.') && !engine_only {
            tables.push(name);
        }
    }
    tables.sort();
    Ok(tables)
}

/// Name of the samples file.
pub const SAMPLES_FILE: &str = "samples.jsonl";

/// Name of the samples file until the run finishes.
pub const SAMPLES_PARTIAL_FILE: &str = "samples.jsonl.partial";

/// Name of a part starting at `first_tick`.
pub fn part_name(first_tick: u32) -> String {
    format!("part-{first_tick:08}.parquet")
}

/// Directory of a run where parts are written before they are renamed into their table's
/// directory: a table's directory holds only whole parts, so a notebook reading it whole (pandas,
/// polars) while the run writes, or after a crash, never meets a half-written file.
pub const PARTIAL_DIR: &str = ".partial";

/// A part written by the run, as a snapshot records it: resuming checks the part is still there
/// as written ([`check_parts`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartRecord {
    /// `table/part-*.parquet`.
    pub name: String,
    /// Its size.
    pub bytes: u64,
    /// CRC-32 of its bytes.
    pub crc32: u32,
}

/// A writer that counts and checksums the bytes it passes to a file.
struct Checksummed {
    file: File,
    crc: crc32fast::Hasher,
    bytes: u64,
}

impl Write for Checksummed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.crc.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// Writes `batch` as `run_dir/table/name`, through `run_dir/.partial/table-name` and a rename,
/// durably: the file is synced before the rename and the table's directory after it, so a
/// snapshot that counts the part (written after this returns) never outlives it in a crash.
fn write_part(
    run_dir: &Path,
    (table, name): (&str, &str),
    batch: &RecordBatch,
    file_metadata: &[KeyValue],
) -> Result<PartRecord> {
    let table_dir = run_dir.join(table);
    let path = table_dir.join(name);
    let partial = run_dir.join(PARTIAL_DIR).join(format!("{table}-{name}"));
    let file = File::create(&partial).map_err(EngineError::io(&partial))?;
    let sink = Checksummed {
        file,
        crc: crc32fast::Hasher::new(),
        bytes: 0,
    };
    let mut writer = ArrowWriter::try_new(sink, batch.schema(), Some(props(file_metadata)))
        .map_err(EngineError::parquet(&partial))?;
    writer
        .write(batch)
        .map_err(EngineError::parquet(&partial))?;
    let sink = writer
        .into_inner()
        .map_err(EngineError::parquet(&partial))?;
    sink.file.sync_all().map_err(EngineError::io(&partial))?;
    std::fs::rename(&partial, &path).map_err(EngineError::io(&path))?;
    sync_dir(&table_dir)?;
    Ok(PartRecord {
        name: format!("{table}/{name}"),
        bytes: sink.bytes,
        crc32: sink.crc.finalize(),
    })
}

/// Syncs directory `dir` (the names renamed into it).
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(EngineError::io(dir))
}

/// Checks that every part in `parts` is in run directory `run_dir` as it was written (size and
/// CRC-32); the first that is not, as text naming it and what is wrong.
pub fn check_parts(run_dir: &Path, parts: &[PartRecord]) -> std::result::Result<(), String> {
    for part in parts {
        let path = run_dir.join(&part.name);
        let damaged = |what: String| {
            format!(
                "its output part {} {what} (restore the part from a copy to resume from this snapshot)",
                path.display()
            )
        };
        let (crc32, bytes) = match File::open(&path).and_then(ingest::ingest::crc32_and_len) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(damaged("is missing".into()));
            }
            Err(e) => return Err(damaged(format!("cannot be read: {e}"))),
        };
        if bytes != part.bytes {
            return Err(damaged(format!(
                "has {bytes} bytes, {} when it was written",
                part.bytes
            )));
        }
        if crc32 != part.crc32 {
            return Err(damaged(
                "changed since it was written (CRC-32 differs)".into(),
            ));
        }
    }
    Ok(())
}

/// Checks that the samples file of run directory `run_dir` ([`SAMPLES_PARTIAL_FILE`], or
/// [`SAMPLES_FILE`] of a finished run) begins with the `len` bytes of CRC-32 `crc32` a snapshot
/// counts; what is wrong as text otherwise. Read as a stream: a month's samples need not fit in
/// memory.
pub fn check_samples(run_dir: &Path, len: u64, crc32: u32) -> std::result::Result<(), String> {
    use std::io::Read;
    if len == 0 {
        return Ok(());
    }
    let partial = run_dir.join(SAMPLES_PARTIAL_FILE);
    let path = match partial.exists() {
        true => partial,
        false => run_dir.join(SAMPLES_FILE),
    };
    let read = File::open(&path).and_then(|f| ingest::ingest::crc32_and_len(f.take(len)));
    let damaged = |what: &str| format!("its samples file {} {what}", path.display());
    match read {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(damaged("is missing")),
        Err(e) => Err(damaged(&format!("cannot be read: {e}"))),
        Ok((_, n)) if n < len => Err(damaged(&format!(
            "holds {n} bytes, but the snapshot's outputs end at byte {len}"
        ))),
        Ok((held, _)) if held != crc32 => {
            Err(damaged("changed since it was written (CRC-32 differs)"))
        }
        Ok(_) => Ok(()),
    }
}

/// What a snapshot keeps of the outputs: the rows of the open parts, the parts written so far and
/// the samples file's length.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputState {
    /// First tick of the open `ticks/` and `timing/` parts.
    pub part_first_tick: u32,
    /// Tick rows of the open part.
    pub ticks: Vec<TickRow>,
    /// Timing rows of the open part.
    pub timing: Vec<TickTiming>,
    /// Parts written, with their sizes and checksums.
    pub parts: Vec<PartRecord>,
    /// Bytes of `samples.jsonl.partial` written.
    pub samples_len: u64,
    /// CRC-32 of those bytes (a resume checks them: a byte flipped in the samples file is found
    /// like a damaged part, [`check_samples`]).
    pub samples_crc32: u32,
    /// The open parts of the policy's own tables ([`Policy::tables`](crate::policy::Policy::tables)),
    /// in declaration order.
    pub tables: Vec<OpenTable>,
}

/// The open part of one of the policy's tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenTable {
    /// First tick of the part.
    pub first_tick: u32,
    /// Its rows' values, row after row.
    pub values: Vec<Value>,
}

/// Writes the outputs of one run.
pub struct RunOutputs {
    /// The run directory (shared with the parts handed to the writing thread).
    dir: std::sync::Arc<PathBuf>,
    writer: PartWriter,
    part_ticks: u32,
    part_rows: usize,
    ticks_schema: SchemaRef,
    /// The policy's counters, the `counters/` columns after the tick's.
    counter_kinds: &'static [CounterKind],
    counters_schema: SchemaRef,
    nodes_schema: SchemaRef,
    /// The policy's own tables and their schemas.
    policy_tables: &'static [TableSpec],
    policy_schemas: Vec<SchemaRef>,
    timing_schema: SchemaRef,
    state: OutputState,
    samples: std::io::BufWriter<File>,
    /// CRC-32 of the samples written, from the state's.
    samples_crc: crc32fast::Hasher,
    /// Every part's key-value metadata ([`RunOutputs::describe`]; none until then).
    file_metadata: std::sync::Arc<Vec<KeyValue>>,
}

impl RunOutputs {
    /// Every part written from now on carries `about` as key-value metadata.
    pub fn describe(&mut self, about: &FileMetadata) {
        self.file_metadata = std::sync::Arc::new(about.key_values());
    }

    /// Opens the outputs of a run in `dir` (parts of `part_ticks` ticks, policy table parts of
    /// at most about `part_rows` rows) at `state`, a snapshot's or the default one of a new run:
    /// parts and samples written after it, and parts a killed run left half-written, are
    /// discarded.
    pub fn open(
        dir: &Path,
        (counter_kinds, message_kinds): (&'static [CounterKind], &[&str]),
        policy_tables: &'static [TableSpec],
        (part_ticks, part_rows): (u32, u64),
        mut state: OutputState,
    ) -> Result<RunOutputs> {
        policy_tables::check(policy_tables)
            .map_err(|(table, problem)| EngineError::PolicyTable { table, problem })?;
        let first = state.part_first_tick;
        state.tables.resize_with(policy_tables.len(), || OpenTable {
            first_tick: first,
            values: Vec::new(),
        });
        let partial_dir = dir.join(PARTIAL_DIR);
        if partial_dir.exists() {
            std::fs::remove_dir_all(&partial_dir).map_err(EngineError::io(&partial_dir))?;
        }
        std::fs::create_dir_all(&partial_dir).map_err(EngineError::io(&partial_dir))?;
        for table in TABLES.iter().chain(policy_tables.iter().map(|t| &t.name)) {
            let table_dir = dir.join(table);
            std::fs::create_dir_all(&table_dir).map_err(EngineError::io(&table_dir))?;
            for entry in std::fs::read_dir(&table_dir).map_err(EngineError::io(&table_dir))? {
                let entry = entry.map_err(EngineError::io(&table_dir))?;
                let name = format!("{table}/{}", entry.file_name().to_string_lossy());
                if !state.parts.iter().any(|p| p.name == name) {
                    std::fs::remove_file(entry.path()).map_err(EngineError::io(entry.path()))?;
                }
            }
        }
        let samples_partial = dir.join(SAMPLES_PARTIAL_FILE);
        let samples_final = dir.join(SAMPLES_FILE);
        if state.samples_len > 0 && !samples_partial.exists() && samples_final.exists() {
            // A finished run resumed from one of its snapshots (its summary removed): the
            // finished samples file starts with what the snapshot's outputs hold.
            std::fs::rename(&samples_final, &samples_partial)
                .map_err(EngineError::io(&samples_partial))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&samples_partial)
            .map_err(EngineError::io(&samples_partial))?;
        let held = (file.metadata())
            .map_err(EngineError::io(&samples_partial))?
            .len();
        if held < state.samples_len {
            return Err(EngineError::OutputsIncomplete {
                path: samples_partial,
                problem: format!(
                    "{held} bytes, but the snapshot's outputs end at byte {}",
                    state.samples_len
                ),
            });
        }
        file.set_len(state.samples_len)
            .map_err(EngineError::io(&samples_partial))?;
        let mut samples = std::io::BufWriter::new(file);
        use std::io::Seek;
        samples
            .seek(std::io::SeekFrom::Start(state.samples_len))
            .map_err(EngineError::io(&samples_partial))?;
        Ok(RunOutputs {
            dir: std::sync::Arc::new(dir.to_path_buf()),
            writer: PartWriter::spawn(),
            part_ticks: part_ticks.max(1),
            part_rows: usize::try_from(part_rows).unwrap_or(usize::MAX).max(1),
            ticks_schema: ticks_schema(),
            counter_kinds,
            counters_schema: counters_schema(counter_kinds, message_kinds),
            nodes_schema: nodes_schema(),
            policy_schemas: policy_tables.iter().map(policy_tables::schema_of).collect(),
            policy_tables,
            timing_schema: timing_schema(),
            samples_crc: crc32fast::Hasher::new_with_initial_len(
                state.samples_crc32,
                state.samples_len,
            ),
            state,
            samples,
            file_metadata: std::sync::Arc::default(),
        })
    }

    /// Adds a tick's row, its timing and the policy's table rows; writes the open parts when the
    /// tick is the last of their range, and a policy table's open part when it holds
    /// `part_rows` rows.
    pub fn tick(&mut self, row: TickRow, timing: TickTiming, rows: &mut TableRows) -> Result<()> {
        let tick = row.tick;
        self.state.ticks.push(row);
        self.state.timing.push(timing);
        for (open, values) in self.state.tables.iter_mut().zip(&mut rows.values) {
            open.values.append(values);
        }
        if (tick + 1).is_multiple_of(self.part_ticks) {
            self.write_open_parts()?;
            self.state.part_first_tick = tick + 1;
            for open in &mut self.state.tables {
                open.first_tick = tick + 1;
            }
            return Ok(());
        }
        for t in 0..self.policy_tables.len() {
            let width = self.policy_tables[t].columns.len().max(1);
            if self.state.tables[t].values.len() / width >= self.part_rows {
                self.write_policy_part(t)?;
                self.state.tables[t].first_tick = tick + 1;
            }
        }
        Ok(())
    }

    /// Writes the open part of the policy's table `t` and empties it.
    fn write_policy_part(&mut self, t: usize) -> Result<()> {
        let spec = &self.policy_tables[t];
        let open = &self.state.tables[t];
        let batch = policy_tables::batch_of(spec, &self.policy_schemas[t], &open.values).map_err(
            |problem| EngineError::PolicyTable {
                table: spec.name.to_string(),
                problem,
            },
        )?;
        self.write_table_part(spec.name, open.first_tick, &batch)?;
        self.state.tables[t].values.clear();
        Ok(())
    }

    /// Hands `batch` to the writing thread as `table`'s part starting at `first_tick`; it is
    /// recorded once written.
    fn write_table_part(
        &mut self,
        table: &str,
        first_tick: u32,
        batch: &RecordBatch,
    ) -> Result<()> {
        let job = PartJob {
            run_dir: self.dir.clone(),
            table: table.to_string(),
            name: part_name(first_tick),
            batch: batch.clone(),
            file_metadata: self.file_metadata.clone(),
        };
        self.writer.write(job, &mut self.state.parts)
    }

    /// Writes the open parts of every table. A range whose policy table rows all went into parts
    /// of `part_rows` rows gets no empty part after them; one without rows gets an empty part
    /// (the table's schema, for notebooks).
    fn write_open_parts(&mut self) -> Result<()> {
        if self.state.ticks.is_empty() {
            return Ok(());
        }
        let first = self.state.part_first_tick;
        let batch = ticks_batch(&self.ticks_schema, &self.state.ticks);
        self.write_table_part("ticks", first, &batch)?;
        let batch = counters_batch(&self.counters_schema, self.counter_kinds, &self.state.ticks);
        self.write_table_part("counters", first, &batch)?;
        let batch = timing_batch(&self.timing_schema, &self.state.timing);
        self.write_table_part("timing", first, &batch)?;
        for t in 0..self.policy_tables.len() {
            let open = &self.state.tables[t];
            if !open.values.is_empty() || open.first_tick == first {
                self.write_policy_part(t)?;
            }
        }
        self.state.ticks.clear();
        self.state.timing.clear();
        Ok(())
    }

    /// Appends sampled decision logs, one JSON object per line.
    pub fn samples(&mut self, lines: &mut Vec<String>) -> Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        for line in lines.drain(..) {
            writeln!(self.samples, "{line}").map_err(EngineError::io(self.samples_partial()))?;
            self.state.samples_len += line.len() as u64 + 1;
            self.samples_crc.update(line.as_bytes());
            self.samples_crc.update(b"\n");
        }
        self.state.samples_crc32 = self.samples_crc.clone().finalize();
        Ok(())
    }

    fn samples_partial(&self) -> PathBuf {
        self.dir.join(SAMPLES_PARTIAL_FILE)
    }

    /// Writes one row per online node as the part of `tick`.
    pub fn node_snapshot(&mut self, cell: &Cell, tick: u32, time_us: i64) -> Result<()> {
        let batch = nodes_batch(&self.nodes_schema, cell, tick, time_us);
        self.write_table_part("nodes", tick, &batch)
    }

    /// Records the time a snapshot after the latest tick took (in its timing row, if that row is
    /// still open).
    pub fn note_snapshot_ms(&mut self, ms: f64) {
        if let Some(last) = self.state.timing.last_mut() {
            last.snapshot_ms = ms;
        }
    }

    /// The state a snapshot keeps, after the parts handed over and the samples file are written
    /// through to the disk.
    pub fn state(&mut self) -> Result<&OutputState> {
        self.writer.flush(&mut self.state.parts)?;
        let partial = self.samples_partial();
        self.samples.flush().map_err(EngineError::io(&partial))?;
        (self.samples.get_ref().sync_data()).map_err(EngineError::io(&partial))?;
        Ok(&self.state)
    }

    /// Writes the last open parts, renames the samples file into place and removes the (empty)
    /// directory parts are written in.
    pub fn finish(mut self) -> Result<()> {
        self.write_open_parts()?;
        self.writer.flush(&mut self.state.parts)?;
        let partial_dir = self.dir.join(PARTIAL_DIR);
        std::fs::remove_dir(&partial_dir).map_err(EngineError::io(&partial_dir))?;
        let partial = self.samples_partial();
        let writer = self.samples;
        let file = writer.into_inner().map_err(|e| EngineError::Io {
            path: partial.clone(),
            source: e.into_error(),
        })?;
        file.sync_all().map_err(EngineError::io(&partial))?;
        let path = self.dir.join(SAMPLES_FILE);
        std::fs::rename(&partial, &path).map_err(EngineError::io(&path))?;
        sync_dir(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{ColumnSpec, ColumnType, PolicyCounters};

    /// A policy table like MASB's `migrations/`: a time, a nullable machine ID, an outcome.
    const EVENT_COLUMNS: [ColumnSpec; 3] = [
        ColumnSpec::new("time_us", ColumnType::I64),
        ColumnSpec::new("target_machine", ColumnType::U64).nullable(),
        ColumnSpec::new("outcome", ColumnType::Name(&["started", "failed"])),
    ];
    const EVENTS: [TableSpec; 1] = [TableSpec {
        name: "events",
        columns: &EVENT_COLUMNS,
    }];

    fn tick_row(tick: u32) -> TickRow {
        TickRow {
            tick,
            time_us: (i64::from(tick) + 1) * 60_000_000,
            nodes_online: 3,
            tasks_running: 7,
            tasks_pending: 1,
            classes: [0; 7],
            rus_breaches: 0,
            usage_rises: [0; crate::metrics::RISES],
            sums: [0; 8],
            counters: PolicyCounters::default(),
            messages: vec![0],
        }
    }

    fn record(tick: u32, k: u32) -> [Value; 3] {
        let time_us = (i64::from(tick) + 1) * 60_000_000;
        let target = if k == 0 { Value::U64(6) } else { Value::Null };
        [Value::I64(time_us), target, Value::Code((k % 2) as u8)]
    }

    /// Policy table rows per tick: a part closes at 5 rows or at the end of its 10-tick range.
    const ROWS: [u32; 35] = [
        3, 3, 0, 0, 1, 0, 0, 0, 0, 0, // 6 rows at tick 1: part 0; 1 left at tick 9: part 2
        6, 0, 0, 0, 0, 0, 0, 0, 0, 0, // part 10 at tick 10; nothing left at tick 19: no part
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // no migrations: an empty part 20
        0, 0, 0, 0, 2, // the run ends at tick 34: part 30
    ];

    /// Feeds ticks `from..to` of [`ROWS`].
    fn feed(outputs: &mut RunOutputs, from: u32, to: u32) {
        for tick in from..to {
            let mut rows = TableRows::default();
            for k in 0..ROWS[tick as usize] {
                rows.push(0, &record(tick, k));
            }
            outputs
                .tick(tick_row(tick), TickTiming::default(), &mut rows)
                .unwrap();
            assert!(rows.values.iter().all(Vec::is_empty));
        }
    }

    fn rows_of(path: &Path) -> usize {
        let file = File::open(path).unwrap();
        let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
        use parquet::file::reader::FileReader;
        reader.metadata().file_metadata().num_rows() as usize
    }

    /// Hand-worked from [`ROWS`]: a policy table's parts close at 5 rows (end of that tick) and
    /// at the end of a 10-tick range, never empty after such a part, empty for a range without
    /// rows; `ticks/` parts keep their ranges. Outputs reopened at a mid-range state (as
    /// a snapshot's) write the same bytes for the parts after it.
    #[test]
    fn migration_parts_close_at_their_row_bound_or_their_range_end() {
        let whole = tempfile::tempdir().unwrap();
        let open = |dir: &Path, state| {
            RunOutputs::open(dir, (&[], &["m"]), &EVENTS, (10, 5), state).unwrap()
        };
        let mut outputs = open(whole.path(), OutputState::default());
        feed(&mut outputs, 0, 13);
        let mid_state = outputs.state().unwrap().clone();
        feed(&mut outputs, 13, 35);
        outputs.finish().unwrap();
        let parts = |dir: &Path, table: &str| {
            let mut found: Vec<(String, usize)> = std::fs::read_dir(dir.join(table))
                .unwrap()
                .map(|e| {
                    let path = e.unwrap().path();
                    let name = path.file_name().unwrap().to_string_lossy().into_owned();
                    (name, rows_of(&path))
                })
                .collect();
            found.sort();
            found
        };
        let expect = |v: &[(u32, usize)]| -> Vec<(String, usize)> {
            v.iter().map(|&(t, n)| (part_name(t), n)).collect()
        };
        let events = expect(&[(0, 6), (2, 1), (10, 6), (20, 0), (30, 2)]);
        assert_eq!(parts(whole.path(), "events"), events);
        let ticks = expect(&[(0, 10), (10, 10), (20, 10), (30, 5)]);
        assert_eq!(parts(whole.path(), "ticks"), ticks);
        assert_eq!(parts(whole.path(), "timing"), ticks);

        // Reopened after tick 12 (part 10 of events written, the ranges' rows open).
        assert_eq!(mid_state.tables[0].first_tick, 11);
        let resumed = tempfile::tempdir().unwrap();
        let mut outputs = open(resumed.path(), mid_state);
        feed(&mut outputs, 13, 35);
        outputs.finish().unwrap();
        for (table, firsts) in [("ticks", &[10, 20, 30][..]), ("events", &[20, 30])] {
            let later = parts(resumed.path(), table);
            let names: Vec<String> = later.iter().map(|p| p.0.clone()).collect();
            assert_eq!(
                names,
                firsts.iter().map(|&t| part_name(t)).collect::<Vec<_>>()
            );
            for (name, _) in &later {
                let read = |dir: &Path| std::fs::read(dir.join(table).join(name)).unwrap();
                assert_eq!(read(whole.path()), read(resumed.path()), "{table}/{name}");
            }
        }
    }

    /// A part is written outside its table's directory and renamed into it: a write that fails
    /// (here: the writing directory replaced by a file; a full disk in practice) leaves the
    /// table's directory without a half-written file that would break `pandas.read_parquet` on
    /// it; reopening clears what a killed run left half-written; a finished run keeps no
    /// writing directory.
    #[test]
    fn table_directories_hold_only_whole_parts() {
        let run = tempfile::tempdir().unwrap();
        let open =
            |state| RunOutputs::open(run.path(), (&[], &["m"]), &EVENTS, (10, 5), state).unwrap();
        let mut outputs = open(OutputState::default());
        feed(&mut outputs, 0, 9);
        let state = outputs.state().unwrap().clone();
        let partial_dir = run.path().join(PARTIAL_DIR);
        std::fs::remove_dir(&partial_dir).unwrap();
        std::fs::write(&partial_dir, b"not a directory").unwrap();
        let err = outputs
            .tick(
                tick_row(9),
                TickTiming::default(),
                &mut TableRows::default(),
            )
            .unwrap_err();
        assert!(err.to_string().contains(".partial/ticks-part-"), "{err}");
        for table in TABLES.into_iter().chain(["events"]) {
            let names: Vec<_> = std::fs::read_dir(run.path().join(table))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            let expected: &[&str] = if table == "events" {
                &["part-00000000.parquet"] // closed at 5 rows at tick 1
            } else {
                &[]
            };
            assert_eq!(names, expected, "{table}");
        }

        std::fs::remove_file(&partial_dir).unwrap();
        std::fs::create_dir(&partial_dir).unwrap();
        std::fs::write(
            partial_dir.join("ticks-part-00000000.parquet"),
            b"PAR1 half",
        )
        .unwrap();
        let mut outputs = open(state);
        assert_eq!(std::fs::read_dir(&partial_dir).unwrap().count(), 0);
        feed(&mut outputs, 9, 12);
        outputs.finish().unwrap();
        assert!(!partial_dir.exists());
        assert_eq!(rows_of(&run.path().join("ticks").join(part_name(0))), 10);
    }

    /// A policy table's nullable `UInt64` column (MASB's `migrations/` `target_machine`) is
    /// declared to pandas as its nullable `UInt64`, which keeps IDs above 2^53 (every
    /// `--multiply` copy's) exact.
    #[test]
    fn pandas_reads_target_machines_as_exact_integers() {
        let run = tempfile::tempdir().unwrap();
        let mut outputs = RunOutputs::open(
            run.path(),
            (&[], &["m"]),
            &EVENTS,
            (10, 5),
            OutputState::default(),
        )
        .unwrap();
        feed(&mut outputs, 0, 2);
        outputs.finish().unwrap();
        let file = File::open(run.path().join("events").join(part_name(0))).unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let dtypes = ingest::pandas::pandas_dtypes(reader.schema());
        assert_eq!(dtypes.len(), 1);
        assert_eq!(dtypes["target_machine"], "UInt64");
    }
}
