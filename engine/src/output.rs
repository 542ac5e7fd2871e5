//! The run directory's Parquet outputs: `ticks.parquet` (one row per tick), `nodes.parquet`
//! (one row per node every `nodes_every_ticks` ticks), `migrations.parquet` (one row per
//! migration attempt and outcome; empty for policies that do not migrate) and `samples.jsonl`
//! (the policy's sampled decision logs). Both are written as `*.parquet.partial`
//! and renamed when the run completes, so a file with the final name is always whole.
//! Memory: the ticks of one row group (a simulated day by default) and one node snapshot.

use std::fs::File;
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

/// Ticks buffered per row group of `ticks.parquet`.
const TICKS_PER_GROUP: usize = 1440;

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
    f.push(Field::new("wall_ms", DataType::Float64, false));
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
    let kinds = schema.fields().len() - cols.len() - 1;
    for k in 0..kinds {
        cols.push(u64s(&|r| r.messages.get(k).copied().unwrap_or(0)));
    }
    cols.push(f64s(&|r| r.wall_ms));
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

struct Sink {
    path: PathBuf,
    partial: PathBuf,
    writer: ArrowWriter<File>,
}

impl Sink {
    fn create(dir: &Path, name: &str, schema: SchemaRef) -> Result<Sink> {
        let path = dir.join(name);
        let partial = dir.join(format!("{name}.partial"));
        let file = File::create(&partial).map_err(EngineError::io(&partial))?;
        let writer = ArrowWriter::try_new(file, schema, Some(props()))
            .map_err(EngineError::parquet(&partial))?;
        Ok(Sink {
            path,
            partial,
            writer,
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer
            .write(batch)
            .map_err(EngineError::parquet(&self.partial))?;
        self.writer
            .flush()
            .map_err(EngineError::parquet(&self.partial))
    }

    fn finish(self) -> Result<()> {
        self.writer
            .close()
            .map_err(EngineError::parquet(&self.partial))?;
        std::fs::rename(&self.partial, &self.path).map_err(EngineError::io(&self.path))
    }
}

/// Writes the per-tick and per-node outputs of one run.
pub struct RunOutputs {
    ticks_schema: SchemaRef,
    nodes_schema: SchemaRef,
    migrations_schema: SchemaRef,
    ticks: Sink,
    nodes: Sink,
    migrations: Sink,
    pending: Vec<TickRow>,
    pending_migrations: Vec<MigrationRecord>,
    samples: (PathBuf, PathBuf, std::io::BufWriter<File>),
}

impl RunOutputs {
    /// Creates the partial files in `dir`.
    pub fn create(dir: &Path, message_kinds: &[&str]) -> Result<RunOutputs> {
        let ticks_schema = ticks_schema(message_kinds);
        let nodes_schema = nodes_schema();
        let migrations_schema = migrations_schema();
        let (samples_path, samples_partial) =
            (dir.join("samples.jsonl"), dir.join("samples.jsonl.partial"));
        let samples_file =
            File::create(&samples_partial).map_err(EngineError::io(&samples_partial))?;
        Ok(RunOutputs {
            samples: (
                samples_path,
                samples_partial,
                std::io::BufWriter::new(samples_file),
            ),
            ticks: Sink::create(dir, "ticks.parquet", ticks_schema.clone())?,
            nodes: Sink::create(dir, "nodes.parquet", nodes_schema.clone())?,
            migrations: Sink::create(dir, "migrations.parquet", migrations_schema.clone())?,
            ticks_schema,
            nodes_schema,
            migrations_schema,
            pending: Vec::with_capacity(TICKS_PER_GROUP),
            pending_migrations: Vec::new(),
        })
    }

    /// Adds a tick row (flushed a row group at a time).
    pub fn tick(&mut self, row: TickRow) -> Result<()> {
        self.pending.push(row);
        if self.pending.len() == TICKS_PER_GROUP {
            self.flush_ticks()?;
        }
        Ok(())
    }

    fn flush_ticks(&mut self) -> Result<()> {
        if !self.pending.is_empty() {
            let batch = ticks_batch(&self.ticks_schema, &self.pending);
            self.ticks.write(&batch)?;
            self.pending.clear();
        }
        if !self.pending_migrations.is_empty() {
            let batch = migrations_batch(&self.migrations_schema, &self.pending_migrations);
            self.migrations.write(&batch)?;
            self.pending_migrations.clear();
        }
        Ok(())
    }

    /// Appends sampled decision logs, one JSON object per line.
    pub fn samples(&mut self, lines: &mut Vec<String>) -> Result<()> {
        use std::io::Write;
        for line in lines.drain(..) {
            writeln!(self.samples.2, "{line}").map_err(EngineError::io(&self.samples.1))?;
        }
        Ok(())
    }

    /// Adds migration records (written with the ticks' row groups).
    pub fn migrations(&mut self, records: &mut Vec<MigrationRecord>) {
        self.pending_migrations.append(records);
    }

    /// Writes one row per online node.
    pub fn node_snapshot(&mut self, cell: &Cell, tick: u32, time_us: i64) -> Result<()> {
        let batch = nodes_batch(&self.nodes_schema, cell, tick, time_us);
        self.nodes.write(&batch)
    }

    /// Flushes and renames both files into place.
    pub fn finish(mut self) -> Result<()> {
        self.flush_ticks()?;
        self.ticks.finish()?;
        self.migrations.finish()?;
        self.nodes.finish()?;
        let (path, partial, writer) = self.samples;
        writer.into_inner().map_err(|e| EngineError::Io {
            path: partial.clone(),
            source: e.into_error(),
        })?;
        std::fs::rename(&partial, &path).map_err(EngineError::io(&path))
    }
}
