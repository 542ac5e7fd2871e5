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

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt8Array,
    UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::cell::Cell;
use crate::classify::NodeClass;
use crate::error::{EngineError, Result};
use crate::metrics::{TickRow, sum};
use crate::policy::MigrationRecord;
use serde::{Deserialize, Serialize};

fn props() -> WriterProperties {
    // No creation metadata that varies between runs: outputs must be byte-identical.
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by("cellsim".to_string())
        .build()
}

/// The `ticks.parquet` schema for a policy with these message kinds.
pub fn ticks_schema(message_kinds: &[&str]) -> SchemaRef {
    let mut f = vec![
        Field::new("tick", DataType::UInt32, false),
        Field::new("time_us", DataType::Int64, false),
        Field::new("nodes_online", DataType::UInt32, false),
        Field::new("tasks_running", DataType::UInt64, false),
        Field::new("tasks_pending", DataType::UInt64, false),
    ];
    for class in &NodeClass::ALL[1..] {
        f.push(Field::new(class.name(), DataType::UInt32, false));
    }
    for name in [
        "cpu_used_ratio",
        "mem_used_ratio",
        "cpu_requested_ratio",
        "mem_requested_ratio",
        "prod_cpu_reserved_ratio",
        "prod_mem_reserved_ratio",
    ] {
        f.push(Field::new(name, DataType::Float64, false));
    }
    f.push(Field::new("rus_breaches", DataType::UInt32, false));
    for name in [
        "migrations_started",
        "migrations_completed",
        "migrations_failed",
    ] {
        f.push(Field::new(name, DataType::UInt64, false));
    }
    f.push(Field::new("migration_cost_mb", DataType::Float64, false));
    for name in ["forced_migrations", "collisions", "placements_skipped"] {
        f.push(Field::new(name, DataType::UInt64, false));
    }
    for kind in message_kinds {
        f.push(Field::new(format!("msg_{kind}"), DataType::UInt64, false));
    }
    Arc::new(Schema::new(f))
}

fn ticks_batch(schema: &SchemaRef, rows: &[TickRow]) -> RecordBatch {
    let u32s = |f: &dyn Fn(&TickRow) -> u32| {
        Arc::new(UInt32Array::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let u64s = |f: &dyn Fn(&TickRow) -> u64| {
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let f64s = |f: &dyn Fn(&TickRow) -> f64| {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let mut cols: Vec<ArrayRef> = vec![
        u32s(&|r| r.tick),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.time_us))),
        u32s(&|r| r.nodes_online),
        u64s(&|r| r.tasks_running),
        u64s(&|r| r.tasks_pending),
    ];
    for class in &NodeClass::ALL[1..] {
        let k = *class as usize;
        cols.push(u32s(&|r| r.classes[k]));
    }
    for (a, b) in [
        (sum::CPU_USED, sum::CPU_CAP),
        (sum::MEM_USED, sum::MEM_CAP),
        (sum::CPU_REQ, sum::CPU_CAP),
        (sum::MEM_REQ, sum::MEM_CAP),
        (sum::PROD_CPU_REQ, sum::CPU_CAP),
        (sum::PROD_MEM_REQ, sum::MEM_CAP),
    ] {
        cols.push(f64s(&|r| r.ratio(a, b)));
    }
    cols.push(u32s(&|r| r.rus_breaches));
    cols.push(u64s(&|r| r.counters.migrations_started));
    cols.push(u64s(&|r| r.counters.migrations_completed));
    cols.push(u64s(&|r| r.counters.migrations_failed));
    cols.push(f64s(&|r| r.counters.migration_cost_mb));
    cols.push(u64s(&|r| r.counters.forced_migrations));
    cols.push(u64s(&|r| r.counters.collisions));
    cols.push(u64s(&|r| r.counters.placements_skipped));
    let kinds = schema.fields().len() - cols.len();
    for k in 0..kinds {
        cols.push(u64s(&|r| r.messages.get(k).copied().unwrap_or(0)));
    }
    RecordBatch::try_new(schema.clone(), cols).expect("columns follow the schema")
}

/// The `migrations.parquet` schema.
pub fn migrations_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("time_us", DataType::Int64, false),
        Field::new("job_id", DataType::UInt64, false),
        Field::new("task_index", DataType::UInt32, false),
        Field::new("source_machine", DataType::UInt64, false),
        Field::new("target_machine", DataType::UInt64, true),
        Field::new("cost_mb", DataType::Float64, false),
        Field::new("forced", DataType::Boolean, false),
        Field::new("outcome", DataType::Utf8, false),
    ]))
}

fn migrations_batch(schema: &SchemaRef, rows: &[MigrationRecord]) -> RecordBatch {
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.time_us))),
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.job_id))),
        Arc::new(UInt32Array::from_iter_values(
            rows.iter().map(|r| r.task_index),
        )),
        Arc::new(UInt64Array::from_iter_values(
            rows.iter().map(|r| r.source_machine),
        )),
        Arc::new(UInt64Array::from(
            rows.iter().map(|r| r.target_machine).collect::<Vec<_>>(),
        )),
        Arc::new(Float64Array::from_iter_values(
            rows.iter().map(|r| r.cost_mb),
        )),
        Arc::new(BooleanArray::from(
            rows.iter().map(|r| r.forced).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.outcome.name()),
        )),
    ];
    RecordBatch::try_new(schema.clone(), cols).expect("columns follow the schema")
}

/// The `nodes.parquet` schema.
pub fn nodes_schema() -> SchemaRef {
    let mut f = vec![
        Field::new("tick", DataType::UInt32, false),
        Field::new("time_us", DataType::Int64, false),
        Field::new("machine_id", DataType::UInt64, false),
        Field::new("class", DataType::Utf8, false),
        Field::new("class_code", DataType::UInt8, false),
    ];
    for name in [
        "cpu_cap",
        "mem_cap",
        "cpu_used",
        "mem_used",
        "prod_cpu_req",
        "prod_mem_req",
    ] {
        f.push(Field::new(name, DataType::Float64, false));
    }
    f.push(Field::new("task_count", DataType::UInt32, false));
    Arc::new(Schema::new(f))
}

fn nodes_batch(schema: &SchemaRef, cell: &Cell, tick: u32, time_us: i64) -> RecordBatch {
    let n = &cell.nodes;
    let online: Vec<usize> = (0..n.len()).filter(|&i| n.online[i]).collect();
    let norm = |col: &[u32]| {
        Arc::new(Float64Array::from_iter_values(
            online
                .iter()
                .map(|&i| col[i] as f64 / crate::units::UNITS as f64),
        )) as ArrayRef
    };
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(online.iter().map(|_| tick))),
        Arc::new(Int64Array::from_iter_values(online.iter().map(|_| time_us))),
        Arc::new(UInt64Array::from_iter_values(
            online.iter().map(|&i| n.machine_id[i]),
        )),
        Arc::new(StringArray::from_iter_values(
            online.iter().map(|&i| n.class[i].name()),
        )),
        Arc::new(UInt8Array::from_iter_values(
            online.iter().map(|&i| n.class[i] as u8),
        )),
        norm(&n.cpu_cap),
        norm(&n.mem_cap),
        norm(&n.cpu_used),
        norm(&n.mem_used),
        norm(&n.prod_cpu_req),
        norm(&n.prod_mem_req),
        Arc::new(UInt32Array::from_iter_values(
            online.iter().map(|&i| n.task_count[i]),
        )),
    ];
    RecordBatch::try_new(schema.clone(), cols).expect("columns follow the schema")
}

/// Wall-clock milliseconds of one tick, by phase (not deterministic).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TickTiming {
    /// The tick.
    pub tick: u32,
    /// The whole tick.
    pub wall_ms: f64,
    /// Applying the trace.
    pub apply_ms: f64,
    /// The policy: tick hooks and rounds.
    pub policy_ms: f64,
    /// Classification and metrics.
    pub metrics_ms: f64,
    /// Writing outputs.
    pub output_ms: f64,
    /// Writing a snapshot after this tick (0 when none was taken).
    pub snapshot_ms: f64,
}

/// The `timing/` schema.
pub fn timing_schema() -> SchemaRef {
    let mut f = vec![Field::new("tick", DataType::UInt32, false)];
    for name in [
        "wall_ms",
        "apply_ms",
        "policy_ms",
        "metrics_ms",
        "output_ms",
        "snapshot_ms",
    ] {
        f.push(Field::new(name, DataType::Float64, false));
    }
    Arc::new(Schema::new(f))
}

fn timing_batch(schema: &SchemaRef, rows: &[TickTiming]) -> RecordBatch {
    let f64s = |f: fn(&TickTiming) -> f64| {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.tick))),
        f64s(|r| r.wall_ms),
        f64s(|r| r.apply_ms),
        f64s(|r| r.policy_ms),
        f64s(|r| r.metrics_ms),
        f64s(|r| r.output_ms),
        f64s(|r| r.snapshot_ms),
    ];
    RecordBatch::try_new(schema.clone(), cols).expect("columns follow the schema")
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
