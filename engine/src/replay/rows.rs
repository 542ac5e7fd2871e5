//! The rows the replay reads: for each table, the projection it is opened with and the typed
//! reading of one row, side by side so that column positions and names cannot drift apart.
//! A row is decoded once, however many scaled instances it is applied to, and a batch's columns
//! are looked up once per run of rows (`reader`), not once per row.
//!
//! Every projection starts with the table's time key (what [`Cursor`](crate::trace::Cursor)
//! orders by). Task constraints are read as [`ingest::columns::ConstraintRow`], which the
//! statistics of `analysis` read too.

use arrow_array::RecordBatch;
use arrow_array::types::{Float32Type, UInt64Type};
use ingest::columns::{bool_at, i64_at, i64s, nullable, str_at, u8s, u32s, u64s};

/// One `machine_events` row.
#[derive(Debug, Clone, Copy)]
pub(super) struct MachineEventRow {
    /// The machine.
    pub machine_id: u64,
    /// ADD, REMOVE or UPDATE (`codes::machine_event`).
    pub kind: u8,
    /// CPU capacity, when given.
    pub cpus: Option<f32>,
    /// Memory capacity, when given.
    pub memory: Option<f32>,
}

impl MachineEventRow {
    /// The projection [`MachineEventRow::read`] reads.
    pub const COLUMNS: [&'static str; 5] = ["time", "machine_id", "event_type", "cpus", "memory"];

    /// The rows of a batch read with [`MachineEventRow::COLUMNS`], by row number.
    pub fn reader(b: &RecordBatch) -> impl Fn(usize) -> MachineEventRow + '_ {
        let (machine_id, kind) = (u64s(b, 1), u8s(b, 2));
        let (cpus, memory) = (nullable::<Float32Type>(b, 3), nullable::<Float32Type>(b, 4));
        move |r| MachineEventRow {
            machine_id: machine_id[r],
            kind: kind[r],
            cpus: cpus(r),
            memory: memory(r),
        }
    }
}

/// One `machine_attributes` row.
#[derive(Debug, Clone, Copy)]
pub(super) struct AttributeRow<'a> {
    /// The machine.
    pub machine_id: u64,
    /// Attribute name.
    pub name: &'a str,
    /// The value text and its integer reading; `None`: the row deletes the attribute.
    pub value: Option<(&'a str, Option<i64>)>,
}

impl<'a> AttributeRow<'a> {
    /// The projection [`AttributeRow::read`] reads.
    pub const COLUMNS: [&'static str; 6] = [
        "time",
        "machine_id",
        "attribute_name",
        "attribute_value",
        "attribute_value_int",
        "attribute_deleted",
    ];

    /// Row `r` of a batch read with [`AttributeRow::COLUMNS`].
    pub fn read(b: &'a RecordBatch, r: usize) -> AttributeRow<'a> {
        AttributeRow {
            machine_id: u64s(b, 1)[r],
            name: str_at(b, 2, r),
            value: (!bool_at(b, 5, r)).then(|| (str_at(b, 3, r), i64_at(b, 4, r))),
        }
    }
}

/// One `task_events` row.
#[derive(Debug, Clone, Copy)]
pub(super) struct TaskEventRow {
    /// When, microseconds.
    pub time_us: i64,
    /// The task's job.
    pub job_id: u64,
    /// The task's index in its job.
    pub task_index: u32,
    /// The machine the row names, if any.
    pub machine_id: Option<u64>,
    /// Event type (`codes::task_event`).
    pub kind: u8,
    /// Priority 0..11.
    pub priority: u8,
    /// Scheduling class 0..3 (3: the most latency-sensitive; mandatory in the trace).
    pub scheduling_class: u8,
    /// CPU request, when given.
    pub cpu_request: Option<f32>,
    /// Memory request, when given.
    pub memory_request: Option<f32>,
}

impl TaskEventRow {
    /// The projection [`TaskEventRow::read`] reads.
    pub const COLUMNS: [&'static str; 9] = [
        "time",
        "job_id",
        "task_index",
        "machine_id",
        "event_type",
        "scheduling_class",
        "priority",
        "cpu_request",
        "memory_request",
    ];

    /// The rows of a batch read with [`TaskEventRow::COLUMNS`], by row number.
    pub fn reader(b: &RecordBatch) -> impl Fn(usize) -> TaskEventRow + '_ {
        let (time_us, job_id, task_index) = (i64s(b, 0), u64s(b, 1), u32s(b, 2));
        let machine_id = nullable::<UInt64Type>(b, 3);
        let (kind, scheduling_class, priority) = (u8s(b, 4), u8s(b, 5), u8s(b, 6));
        let (cpu, memory) = (nullable::<Float32Type>(b, 7), nullable::<Float32Type>(b, 8));
        move |r| TaskEventRow {
            time_us: time_us[r],
            job_id: job_id[r],
            task_index: task_index[r],
            machine_id: machine_id(r),
            kind: kind[r],
            priority: priority[r],
            scheduling_class: scheduling_class[r],
            cpu_request: cpu(r),
            memory_request: memory(r),
        }
    }
}

/// One `task_usage` row (the fields the replay applies).
#[derive(Debug, Clone, Copy)]
pub(super) struct UsageReading {
    /// Window start, microseconds.
    pub start_us: i64,
    /// The task's job.
    pub job_id: u64,
    /// The task's index in its job.
    pub task_index: u32,
    /// Mean CPU rate, when given.
    pub cpu: Option<f32>,
    /// Canonical memory usage, when given.
    pub memory: Option<f32>,
}

impl UsageReading {
    /// The projection [`UsageReading::read`] reads.
    pub const COLUMNS: [&'static str; 5] = [
        "start_time",
        "job_id",
        "task_index",
        "cpu_rate",
        "canonical_memory_usage",
    ];

    /// The rows of a batch read with [`UsageReading::COLUMNS`], by row number.
    pub fn reader(b: &RecordBatch) -> impl Fn(usize) -> UsageReading + '_ {
        let start_us = i64s(b, 0);
        let (job_id, task_index) = (u64s(b, 1), u32s(b, 2));
        let (cpu, memory) = (nullable::<Float32Type>(b, 3), nullable::<Float32Type>(b, 4));
        move |r| UsageReading {
            start_us: start_us[r],
            job_id: job_id[r],
            task_index: task_index[r],
            cpu: cpu(r),
            memory: memory(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ingest::Table;
    use ingest::columns::ConstraintRow;

    /// Every projection names columns of its table's schema, time key first, in the schema's
    /// order (a Parquet projection yields its columns in the file's order, and the readers
    /// take them by position).
    #[test]
    fn projections_name_schema_columns() {
        let cases: [(Table, &[&str]); 5] = [
            (Table::MachineEvents, &MachineEventRow::COLUMNS),
            (Table::MachineAttributes, &AttributeRow::COLUMNS),
            (Table::TaskEvents, &TaskEventRow::COLUMNS),
            (Table::TaskConstraints, &ConstraintRow::COLUMNS),
            (Table::TaskUsage, &UsageReading::COLUMNS),
        ];
        for (table, columns) in cases {
            let schema = table.arrow_schema();
            assert_eq!(schema.field(0).name(), columns[0], "{table:?}");
            let at: Vec<usize> = (columns.iter())
                .map(|c| {
                    schema
                        .index_of(c)
                        .unwrap_or_else(|_| panic!("{table:?} {c}"))
                })
                .collect();
            assert!(at.is_sorted_by(|a, b| a < b), "{table:?}: {columns:?}");
        }
    }
}
