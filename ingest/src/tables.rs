//! The six GCD 2011 tables: their CSV columns in order, how each is typed in Arrow/Parquet, and
//! which may be empty.
//!
//! Invariants: the first CSV column of every table is its time key (`time`, or `start_time` for
//! task_usage) and is mandatory; `nullable` follows the `mandatory` column of the official
//! `schema.csv` exactly. A `HashOrInt` CSV column becomes two Arrow columns (`<name>` as a
//! dictionary string and `<name>_int` when the value is an integer), every other kind one.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::codes::{self, CodeTable};

/// One of the trace's tables; the name is the trace's directory name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// Machine ADD / REMOVE / UPDATE with capacities.
    MachineEvents,
    /// Machine attribute values over time.
    MachineAttributes,
    /// Job lifecycle events.
    JobEvents,
    /// Task lifecycle events with requests and placements.
    TaskEvents,
    /// Placement constraints of tasks.
    TaskConstraints,
    /// Per-task resource usage, mostly 300 s windows.
    TaskUsage,
}

/// How a CSV field is parsed and stored.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Microsecond timestamp, `i64` (0 = before the trace, 2^63-1 = after it).
    TimeUs,
    /// 64-bit identifier (job, machine), `u64`.
    Id,
    /// Task index within its job, `u32`.
    TaskIndex,
    /// A code from a closed table, `u8`, out-of-range values rejected.
    Code(&'static CodeTable),
    /// A non-negative number the engine does not count in units (a ratio, a time, a usage
    /// column it does not read), `f32`.
    F32,
    /// A resource amount the engine counts in `u32` millionths and sums per node (machine
    /// capacities, CPU and memory requests, the usage it reads), normalised to the largest
    /// machine (1.0), `f32`, at most [`MAX_AMOUNT`].
    Amount,
    /// 0/1, `bool`.
    Bool,
    /// An opaque base64 hash, dictionary-encoded string.
    Hash,
    /// An attribute value: hash or integer; stored as string plus `i64` when it is an integer.
    HashOrInt,
}

/// The largest resource amount a trace may hold: 4 times the largest machine (the trace is
/// normalised so that it is 1.0). The engine counts amounts in `u32` millionths (4,294 of the
/// largest machine in all), and sums a node's tasks in the same width: at this bound a node's
/// sums hold over 1,000 tasks, where a value of 1e30 would have wrapped them (issue 56).
pub const MAX_AMOUNT: f32 = 4.0;

/// One CSV column of a table.
#[derive(Debug, Clone, Copy)]
pub struct ColumnSpec {
    /// snake_case column name in the Parquet output.
    pub name: &'static str,
    /// Parsing and storage type.
    pub kind: Kind,
    /// True when the trace allows the field to be empty (schema.csv `mandatory = NO`).
    pub nullable: bool,
}

const fn col(name: &'static str, kind: Kind, nullable: bool) -> ColumnSpec {
    ColumnSpec {
        name,
        kind,
        nullable,
    }
}

use Kind::*;

static MACHINE_EVENTS: [ColumnSpec; 6] = [
    col("time", TimeUs, false),
    col("machine_id", Id, false),
    col("event_type", Code(&codes::MACHINE_EVENT), false),
    col("platform_id", Hash, true),
    col("cpus", Amount, true),
    col("memory", Amount, true),
];

static MACHINE_ATTRIBUTES: [ColumnSpec; 5] = [
    col("time", TimeUs, false),
    col("machine_id", Id, false),
    col("attribute_name", Hash, false),
    col("attribute_value", HashOrInt, true),
    col("attribute_deleted", Bool, false),
];

static JOB_EVENTS: [ColumnSpec; 8] = [
    col("time", TimeUs, false),
    col("missing_info", Code(&codes::MISSING_INFO), true),
    col("job_id", Id, false),
    col("event_type", Code(&codes::TASK_EVENT), false),
    col("user", Hash, true),
    col("scheduling_class", Code(&codes::SCHEDULING_CLASS), true),
    col("job_name", Hash, true),
    col("logical_job_name", Hash, true),
];

static TASK_EVENTS: [ColumnSpec; 13] = [
    col("time", TimeUs, false),
    col("missing_info", Code(&codes::MISSING_INFO), true),
    col("job_id", Id, false),
    col("task_index", TaskIndex, false),
    col("machine_id", Id, true),
    col("event_type", Code(&codes::TASK_EVENT), false),
    col("user", Hash, true),
    col("scheduling_class", Code(&codes::SCHEDULING_CLASS), true),
    col("priority", Code(&codes::PRIORITY), false),
    col("cpu_request", Amount, true),
    col("memory_request", Amount, true),
    col("disk_space_request", F32, true),
    col("different_machines", Bool, true),
];

static TASK_CONSTRAINTS: [ColumnSpec; 6] = [
    col("time", TimeUs, false),
    col("job_id", Id, false),
    col("task_index", TaskIndex, false),
    col("comparison_operator", Code(&codes::COMPARISON), false),
    col("attribute_name", Hash, false),
    col("attribute_value", HashOrInt, true),
];

static TASK_USAGE: [ColumnSpec; 20] = [
    col("start_time", TimeUs, false),
    col("end_time", TimeUs, false),
    col("job_id", Id, false),
    col("task_index", TaskIndex, false),
    col("machine_id", Id, false),
    col("cpu_rate", Amount, true),
    col("canonical_memory_usage", Amount, true),
    col("assigned_memory_usage", F32, true),
    col("unmapped_page_cache", F32, true),
    col("total_page_cache", F32, true),
    col("max_memory_usage", F32, true),
    col("disk_io_time", F32, true),
    col("local_disk_space_usage", F32, true),
    col("max_cpu_rate", F32, true),
    col("max_disk_io_time", F32, true),
    col("cycles_per_instruction", F32, true),
    col("memory_accesses_per_instruction", F32, true),
    col("sample_portion", F32, true),
    col("aggregation_type", Bool, true),
    col("sampled_cpu_usage", F32, true),
];

impl Table {
    /// Every table, in the order ingest reports them.
    pub const ALL: [Table; 6] = [
        Table::MachineEvents,
        Table::MachineAttributes,
        Table::JobEvents,
        Table::TaskEvents,
        Table::TaskConstraints,
        Table::TaskUsage,
    ];

    /// The trace's directory name for the table.
    pub fn name(self) -> &'static str {
        match self {
            Table::MachineEvents => "machine_events",
            Table::MachineAttributes => "machine_attributes",
            Table::JobEvents => "job_events",
            Table::TaskEvents => "task_events",
            Table::TaskConstraints => "task_constraints",
            Table::TaskUsage => "task_usage",
        }
    }

    /// Parses a directory name back into a table.
    pub fn from_name(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The CSV columns in file order.
    pub fn columns(self) -> &'static [ColumnSpec] {
        match self {
            Table::MachineEvents => &MACHINE_EVENTS,
            Table::MachineAttributes => &MACHINE_ATTRIBUTES,
            Table::JobEvents => &JOB_EVENTS,
            Table::TaskEvents => &TASK_EVENTS,
            Table::TaskConstraints => &TASK_CONSTRAINTS,
            Table::TaskUsage => &TASK_USAGE,
        }
    }

    /// The Arrow schema of the Parquet output (see the module doc for `HashOrInt`), with the
    /// pandas dtypes of its nullable integer columns ([`crate::pandas`]).
    pub fn arrow_schema(self) -> SchemaRef {
        let mut fields = Vec::new();
        for c in self.columns() {
            let data_type = match c.kind {
                TimeUs => DataType::Int64,
                Id => DataType::UInt64,
                TaskIndex => DataType::UInt32,
                Code(_) => DataType::UInt8,
                F32 | Amount => DataType::Float32,
                Bool => DataType::Boolean,
                Hash | HashOrInt => dictionary_utf8(),
            };
            fields.push(Field::new(c.name, data_type, c.nullable));
            if let HashOrInt = c.kind {
                fields.push(Field::new(format!("{}_int", c.name), DataType::Int64, true));
            }
        }
        Arc::new(crate::pandas::with_pandas_metadata(Schema::new(fields)))
    }
}

/// The Arrow type of hash columns: `Dictionary<Int32, Utf8>`.
pub fn dictionary_utf8() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column counts and mandatory flags of the official schema.csv.
    #[test]
    fn columns_match_the_official_schema_csv() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/gcd-sample/schema.csv"
        ))
        .expect("../shared/gcd-sample/schema.csv is readable");
        for table in Table::ALL {
            let rows: Vec<Vec<&str>> = text
                .lines()
                .skip(1)
                .map(|l| l.split(',').collect())
                .filter(|f: &Vec<&str>| f[0].starts_with(&format!("{}/", table.name())))
                .collect();
            assert_eq!(rows.len(), table.columns().len(), "{}", table.name());
            for (row, spec) in rows.iter().zip(table.columns()) {
                assert_eq!(
                    row[4] == "NO",
                    spec.nullable,
                    "{} {}",
                    table.name(),
                    spec.name
                );
            }
        }
    }

    #[test]
    fn time_key_is_first_and_mandatory() {
        for table in Table::ALL {
            let first = table.columns()[0];
            assert!(matches!(first.kind, Kind::TimeUs) && !first.nullable);
            assert_eq!(Table::from_name(table.name()), Some(table));
        }
        let schema = Table::MachineAttributes.arrow_schema();
        assert_eq!(schema.field(4).name(), "attribute_value_int");
    }
}
