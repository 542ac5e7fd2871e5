//! The run directory's outputs. Each table is a directory of Parquet parts (read it whole with
//! `pandas.read_parquet("RUN/ticks")`, `polars.scan_parquet("RUN/ticks/*.parquet")` or DuckDB's
//! `read_parquet('RUN/ticks/*.parquet')`):
//! - `ticks/`: one row per tick; `migrations/`: one row per migration attempt and outcome (empty
//!   for policies that do not migrate); `timing/`: wall-clock milliseconds per tick and phase,
//!   the only non-deterministic table. One part per `part_ticks` ticks (a simulated day by
//!   default), `part-<first tick>.parquet`, written when its last tick is done.
//! - `nodes/`: one row per online node every `nodes_every_ticks` ticks, one part per sample,
//!   `part-<tick>.parquet`.
//! - `samples.jsonl`: the policy's sampled decision logs (`samples.jsonl.partial` until the run
//!   completes).
//!
//! Invariants: a part with a `.parquet` name is whole (written as `.partial`, then renamed);
//! parts are a function of the tick range they cover, so a run resumed from a snapshot rewrites
//! exactly the bytes an uninterrupted run writes. The rows of the open parts and the samples
//! file's length are what a snapshot keeps of the outputs ([`OutputState`]).
//! Memory: the rows of the open parts and one node sample.
//! The tables' schemas and batches are built in `output/tables.rs`.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};

use crate::cell::Cell;
use crate::error::{EngineError, Result};
use crate::metrics::TickRow;
use crate::policy::MigrationRecord;

mod tables;
pub use tables::{TickTiming, migrations_schema, nodes_schema, ticks_schema, timing_schema};
use tables::{migrations_batch, nodes_batch, ticks_batch, timing_batch};

fn props() -> WriterProperties {
    // No creation metadata that varies between runs: outputs must be byte-identical.
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by("cellsim".to_string())
        .build()
}

/// Table directories of a run, in the order they are written.
pub const TABLES: [&str; 4] = ["ticks", "migrations", "timing", "nodes"];

/// Name of the samples file.
pub const SAMPLES_FILE: &str = "samples.jsonl";

/// Name of a part starting at `first_tick`.
pub fn part_name(first_tick: u32) -> String {
    format!("part-{first_tick:08}.parquet")
}

/// Writes `batch` as `dir/name`, through `name.partial` and a rename.
fn write_part(dir: &Path, name: &str, batch: &RecordBatch) -> Result<()> {
    let path = dir.join(name);
    let partial = dir.join(format!("{name}.partial"));
    let file = File::create(&partial).map_err(EngineError::io(&partial))?;
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props()))
        .map_err(EngineError::parquet(&partial))?;
    writer
        .write(batch)
        .map_err(EngineError::parquet(&partial))?;
    writer.close().map_err(EngineError::parquet(&partial))?;
    std::fs::rename(&partial, &path).map_err(EngineError::io(&path))
}

/// What a snapshot keeps of the outputs: the rows of the open parts, the parts written so far and
/// the samples file's length.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputState {
    /// First tick of the open parts.
    pub part_first_tick: u32,
    /// Tick rows of the open part.
    pub ticks: Vec<TickRow>,
    /// Migration rows of the open part.
    pub migrations: Vec<MigrationRecord>,
    /// Timing rows of the open part.
    pub timing: Vec<TickTiming>,
    /// Parts written, as `table/part-*.parquet`.
    pub parts: Vec<String>,
    /// Bytes of `samples.jsonl.partial` written.
    pub samples_len: u64,
}

/// Writes the outputs of one run.
pub struct RunOutputs {
    dir: PathBuf,
    part_ticks: u32,
    ticks_schema: SchemaRef,
    nodes_schema: SchemaRef,
    migrations_schema: SchemaRef,
    timing_schema: SchemaRef,
    state: OutputState,
    samples: std::io::BufWriter<File>,
}

impl RunOutputs {
    /// Opens the outputs of a run in `dir` (parts of `part_ticks` ticks) at `state`, a snapshot's
    /// or the default one of a new run: parts and samples written after it are discarded.
    pub fn open(
        dir: &Path,
        message_kinds: &[&str],
        part_ticks: u32,
        state: OutputState,
    ) -> Result<RunOutputs> {
        for table in TABLES {
            let table_dir = dir.join(table);
            std::fs::create_dir_all(&table_dir).map_err(EngineError::io(&table_dir))?;
            for entry in std::fs::read_dir(&table_dir).map_err(EngineError::io(&table_dir))? {
                let entry = entry.map_err(EngineError::io(&table_dir))?;
                let name = format!("{table}/{}", entry.file_name().to_string_lossy());
                if !state.parts.contains(&name) {
                    std::fs::remove_file(entry.path()).map_err(EngineError::io(entry.path()))?;
                }
            }
        }
        let samples_partial = dir.join(format!("{SAMPLES_FILE}.partial"));
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
            dir: dir.to_path_buf(),
            part_ticks: part_ticks.max(1),
            ticks_schema: ticks_schema(message_kinds),
            nodes_schema: nodes_schema(),
            migrations_schema: migrations_schema(),
            timing_schema: timing_schema(),
            state,
            samples,
        })
    }

    /// Adds a tick's row, its timing and its migration records; writes the open parts when the
    /// tick is the last of their range.
    pub fn tick(
        &mut self,
        row: TickRow,
        timing: TickTiming,
        migrations: &mut Vec<MigrationRecord>,
    ) -> Result<()> {
        let tick = row.tick;
        self.state.ticks.push(row);
        self.state.timing.push(timing);
        self.state.migrations.append(migrations);
        if (tick + 1).is_multiple_of(self.part_ticks) {
            self.write_open_parts()?;
            self.state.part_first_tick = tick + 1;
        }
        Ok(())
    }

    fn write_open_parts(&mut self) -> Result<()> {
        if self.state.ticks.is_empty() {
            return Ok(());
        }
        let name = part_name(self.state.part_first_tick);
        let batches = [
            ("ticks", ticks_batch(&self.ticks_schema, &self.state.ticks)),
            (
                "migrations",
                migrations_batch(&self.migrations_schema, &self.state.migrations),
            ),
            (
                "timing",
                timing_batch(&self.timing_schema, &self.state.timing),
            ),
        ];
        for (table, batch) in batches {
            write_part(&self.dir.join(table), &name, &batch)?;
            self.state.parts.push(format!("{table}/{name}"));
        }
        self.state.ticks.clear();
        self.state.migrations.clear();
        self.state.timing.clear();
        Ok(())
    }

    /// Appends sampled decision logs, one JSON object per line.
    pub fn samples(&mut self, lines: &mut Vec<String>) -> Result<()> {
        for line in lines.drain(..) {
            writeln!(self.samples, "{line}").map_err(EngineError::io(self.samples_partial()))?;
            self.state.samples_len += line.len() as u64 + 1;
        }
        Ok(())
    }

    fn samples_partial(&self) -> PathBuf {
        self.dir.join(format!("{SAMPLES_FILE}.partial"))
    }

    /// Writes one row per online node as the part of `tick`.
    pub fn node_snapshot(&mut self, cell: &Cell, tick: u32, time_us: i64) -> Result<()> {
        let batch = nodes_batch(&self.nodes_schema, cell, tick, time_us);
        let name = part_name(tick);
        write_part(&self.dir.join("nodes"), &name, &batch)?;
        self.state.parts.push(format!("nodes/{name}"));
        Ok(())
    }

    /// Records the time a snapshot after the latest tick took (in its timing row, if that row is
    /// still open).
    pub fn note_snapshot_ms(&mut self, ms: f64) {
        if let Some(last) = self.state.timing.last_mut() {
            last.snapshot_ms = ms;
        }
    }

    /// The state a snapshot keeps, after flushing the samples file to the OS.
    pub fn state(&mut self) -> Result<&OutputState> {
        self.samples
            .flush()
            .map_err(EngineError::io(self.samples_partial()))?;
        Ok(&self.state)
    }

    /// Writes the last open parts and renames the samples file into place.
    pub fn finish(mut self) -> Result<()> {
        self.write_open_parts()?;
        let partial = self.samples_partial();
        let writer = self.samples;
        writer.into_inner().map_err(|e| EngineError::Io {
            path: partial.clone(),
            source: e.into_error(),
        })?;
        let path = self.dir.join(SAMPLES_FILE);
        std::fs::rename(&partial, &path).map_err(EngineError::io(&path))
    }
}
