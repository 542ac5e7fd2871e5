//! The output tables' Arrow schemas and the record batches built from the run's rows: `ticks/`
//! (one row per tick, the same columns under every policy), `counters/` (one row per tick: the
//! policy's counters and a count column per message kind it declares), `nodes/` (one row per
//! online node of a sample) and `timing/` (wall-clock milliseconds per phase).
//! Invariant: a batch's columns follow its schema, in order (the builders are the only place
//! either is written down).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, UInt8Array, UInt32Array,
    UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use ingest::pandas::with_pandas_metadata;
use serde::{Deserialize, Serialize};

use crate::cell::Cell;
use crate::classify::NodeClass;
use crate::metrics::{RISE_THRESHOLDS_PCT, TickRow, sum};
use crate::policy::CounterKind;

/// A table's schema of `fields`, with the pandas dtypes of its nullable integer columns (so
/// that pandas keeps `migrations/`' `target_machine` an exact `UInt64`).
fn schema(fields: Vec<Field>) -> SchemaRef {
    Arc::new(with_pandas_metadata(Schema::new(fields)))
}

/// The columns that name a tick, first in `ticks/` and `counters/`.
fn tick_fields() -> Vec<Field> {
    vec![
        Field::new("tick", DataType::UInt32, false),
        Field::new("time_us", DataType::Int64, false),
    ]
}

/// The `ticks/` schema: the same for every policy (a glob over many runs' parts reads as one
/// table).
pub fn ticks_schema() -> SchemaRef {
    schema(ticks_fields())
}

fn ticks_fields() -> Vec<Field> {
    let mut f = tick_fields();
    f.extend([
        Field::new("nodes_online", DataType::UInt32, false),
        Field::new("tasks_running", DataType::UInt64, false),
        Field::new("tasks_pending", DataType::UInt64, false),
    ]);
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
    for pct in RISE_THRESHOLDS_PCT {
        f.push(Field::new(rises_column(pct), DataType::UInt32, false));
    }
    f
}

/// The `ticks/` column of the nodes whose use rose by more than `pct` points in the tick
/// ([`TickRow::usage_rises`]).
pub fn rises_column(pct: u32) -> String {
    format!("usage_rises_{pct}pct")
}

/// The columns of the policy's counters, then a `msg_<kind>` count per message kind.
fn counter_fields(counter_kinds: &[CounterKind], message_kinds: &[&str]) -> Vec<Field> {
    let mut f = Vec::new();
    for kind in counter_kinds {
        let data_type = if kind.amount {
            DataType::Float64
        } else {
            DataType::UInt64
        };
        f.push(Field::new(kind.name, data_type, false));
    }
    for kind in message_kinds {
        f.push(Field::new(format!("msg_{kind}"), DataType::UInt64, false));
    }
    f
}

/// The `counters/` schema for a policy with these counters and message kinds: the tick's
/// columns, then the counters', then the message counts'.
pub fn counters_schema(counter_kinds: &[CounterKind], message_kinds: &[&str]) -> SchemaRef {
    let mut f = tick_fields();
    f.extend(counter_fields(counter_kinds, message_kinds));
    schema(f)
}

/// `ticks` and `counters`, batches of the same ticks, as one batch: the `ticks/` schema builds
/// before issue 61 wrote (the counters after the engine's columns; `counters`' tick columns
/// dropped, and the counters named in `counters_since`, which those builds did not have), with
/// `metadata` on its schema.
pub(super) fn joined_batch(
    ticks: &RecordBatch,
    counters: &RecordBatch,
    counters_since: &[&str],
    metadata: std::collections::HashMap<String, String>,
) -> Result<RecordBatch, String> {
    let skip = tick_fields().len();
    // Those builds had no usage rises either (`ticks/`' last columns since).
    let rises: Vec<String> = RISE_THRESHOLDS_PCT.map(rises_column).into();
    let older = |f: &Field| !rises.contains(f.name());
    let (mut fields, mut columns): (Vec<Field>, Vec<_>) = (ticks.schema().fields().iter())
        .zip(ticks.columns())
        .filter(|(f, _)| older(f))
        .map(|(f, c)| (f.as_ref().clone(), c.clone()))
        .unzip();
    for (field, column) in counters
        .schema()
        .fields()
        .iter()
        .zip(counters.columns())
        .skip(skip)
        .filter(|(f, _)| !counters_since.contains(&f.name().as_str()))
    {
        fields.push(field.as_ref().clone());
        columns.push(column.clone());
    }
    let joined = Schema::new_with_metadata(fields, metadata);
    RecordBatch::try_new(Arc::new(joined), columns).map_err(|e| e.to_string())
}

/// The tick rows' `ticks/` batch.
pub(super) fn ticks_batch(schema: &SchemaRef, rows: &[TickRow]) -> RecordBatch {
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
    for k in 0..RISE_THRESHOLDS_PCT.len() {
        cols.push(u32s(&|r| r.usage_rises[k]));
    }
    RecordBatch::try_new(schema.clone(), cols).expect("columns follow the schema")
}

/// The tick rows' `counters/` batch.
pub(super) fn counters_batch(
    schema: &SchemaRef,
    counter_kinds: &[CounterKind],
    rows: &[TickRow],
) -> RecordBatch {
    let u64s = |f: &dyn Fn(&TickRow) -> u64| {
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let f64s = |f: &dyn Fn(&TickRow) -> f64| {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.tick))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.time_us))),
    ];
    for (k, kind) in counter_kinds.iter().enumerate() {
        cols.push(if kind.amount {
            f64s(&|r| r.counters.get(k))
        } else {
            u64s(&|r| r.counters.get(k) as u64)
        });
    }
    let kinds = schema.fields().len() - cols.len();
    for k in 0..kinds {
        cols.push(u64s(&|r| r.messages.get(k).copied().unwrap_or(0)));
    }
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
    schema(f)
}

pub(super) fn nodes_batch(schema: &SchemaRef, cell: &Cell, tick: u32, time_us: i64) -> RecordBatch {
    let n = &cell.nodes;
    let online: Vec<usize> = (0..n.len()).filter(|&i| n.online()[i]).collect();
    let per_node = |value: &dyn Fn(usize) -> u32| {
        Arc::new(Float64Array::from_iter_values(
            online
                .iter()
                .map(|&i| value(i) as f64 / crate::units::UNITS as f64),
        )) as ArrayRef
    };
    let norm = |col: &[u32]| per_node(&|i| col[i]);
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(online.iter().map(|_| tick))),
        Arc::new(Int64Array::from_iter_values(online.iter().map(|_| time_us))),
        Arc::new(UInt64Array::from_iter_values(
            online.iter().map(|&i| n.machine_id()[i]),
        )),
        Arc::new(StringArray::from_iter_values(
            online.iter().map(|&i| n.class()[i].name()),
        )),
        Arc::new(UInt8Array::from_iter_values(
            online.iter().map(|&i| n.class()[i] as u8),
        )),
        norm(n.cpu_cap()),
        norm(n.mem_cap()),
        per_node(&|i| n.cpu_measured(i)),
        norm(n.mem_used()),
        norm(n.prod_cpu_req()),
        norm(n.prod_mem_req()),
        Arc::new(UInt32Array::from_iter_values(
            online.iter().map(|&i| n.task_count()[i]),
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
    /// Within the policy's time: its optimisation solver (`nbs`; 0 for the others).
    pub solver_ms: f64,
    /// Within each phase (apply, policy, metrics, output): the time spent in data-parallel
    /// sweeps over the pool ([`crate::parallel_time`]); the rest of the phase ran on one thread.
    pub parallel_ms: [f64; 4],
}

/// The `timing/` columns of [`TickTiming::parallel_ms`], in its order.
pub const PARALLEL_COLUMNS: [&str; 4] = [
    "apply_parallel_ms",
    "policy_parallel_ms",
    "metrics_parallel_ms",
    "output_parallel_ms",
];

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
        "solver_ms",
    ]
    .into_iter()
    .chain(PARALLEL_COLUMNS)
    {
        f.push(Field::new(name, DataType::Float64, false));
    }
    schema(f)
}

pub(super) fn timing_batch(schema: &SchemaRef, rows: &[TickTiming]) -> RecordBatch {
    let f64s = |f: fn(&TickTiming) -> f64| {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.tick))),
        f64s(|r| r.wall_ms),
        f64s(|r| r.apply_ms),
        f64s(|r| r.policy_ms),
        f64s(|r| r.metrics_ms),
        f64s(|r| r.output_ms),
        f64s(|r| r.snapshot_ms),
        f64s(|r| r.solver_ms),
    ];
    cols.extend((0..PARALLEL_COLUMNS.len()).map(|k| {
        Arc::new(Float64Array::from_iter_values(
            rows.iter().map(|r| r.parallel_ms[k]),
        )) as ArrayRef
    }));
    RecordBatch::try_new(schema.clone(), cols).expect("columns follow the schema")
}
