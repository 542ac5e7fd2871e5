//! Typed access to the columns of a batch read from an ingested dataset
//! ([`Dataset::batches`](crate::dataset::Dataset::batches)), by position in the projection the
//! batch was read with, and the typed rows that more than one reader decodes.
//!
//! Invariant: a column is read with the Arrow type [`Table::arrow_schema`](crate::Table) gives
//! it (the ingest writes exactly that schema); a mismatch is a programming error and panics.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Int32Type, Int64Type, UInt8Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch, StringArray};

/// i64 column `i` values (for non-null columns such as time keys).
pub fn i64s(b: &RecordBatch, i: usize) -> &[i64] {
    b.column(i).as_primitive::<Int64Type>().values()
}

/// u64 column `i` values (for non-null columns).
pub fn u64s(b: &RecordBatch, i: usize) -> &[u64] {
    b.column(i).as_primitive::<UInt64Type>().values()
}

/// u32 column `i` values (for non-null columns).
pub fn u32s(b: &RecordBatch, i: usize) -> &[u32] {
    b.column(i).as_primitive::<UInt32Type>().values()
}

/// u8 column `i` values (non-null codes).
pub fn u8s(b: &RecordBatch, i: usize) -> &[u8] {
    b.column(i).as_primitive::<UInt8Type>().values()
}

/// Nullable primitive column `i` as a function of the row, `None` where null (empty in the
/// trace): the column is looked up and downcast once, however many rows are read.
pub fn nullable<T: ArrowPrimitiveType>(
    b: &RecordBatch,
    i: usize,
) -> impl Fn(usize) -> Option<T::Native> + '_ {
    let a = b.column(i).as_primitive::<T>();
    move |row| a.is_valid(row).then(|| a.value(row))
}

/// f32 column `i` at `row`, `None` when empty in the trace.
pub fn f32_at(b: &RecordBatch, i: usize, row: usize) -> Option<f32> {
    nullable::<Float32Type>(b, i)(row)
}

/// i64 column `i` at `row`, `None` when null.
pub fn i64_at(b: &RecordBatch, i: usize, row: usize) -> Option<i64> {
    nullable::<Int64Type>(b, i)(row)
}

/// Boolean column `i` at `row` (false when null).
pub fn bool_at(b: &RecordBatch, i: usize, row: usize) -> bool {
    let a = b.column(i).as_boolean();
    a.is_valid(row) && a.value(row)
}

/// Dictionary-string column `i` at `row`, `""` when empty in the trace.
pub fn str_at(b: &RecordBatch, i: usize, row: usize) -> &str {
    let d = b.column(i).as_dictionary::<Int32Type>();
    if d.is_null(row) {
        return "";
    }
    let values = d
        .values()
        .as_any()
        .downcast_ref::<StringArray>()
        .expect("hash columns are dictionaries of strings");
    values.value(d.keys().value(row) as usize)
}

/// Dictionary-string column `i` as one `Option<&str>` per row.
pub fn strings(b: &RecordBatch, i: usize) -> Vec<Option<&str>> {
    let dict = b.column(i).as_dictionary::<Int32Type>();
    let typed = dict
        .downcast_dict::<StringArray>()
        .expect("hash columns are dictionaries of strings");
    typed.into_iter().collect()
}

/// One row of `task_constraints`: `attribute_name op attribute_value` for task
/// (`job_id`, `task_index`) from `time_us` on. Consecutive rows of one task and time form its
/// constraint set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstraintRow<'a> {
    /// When the set was given, microseconds.
    pub time_us: i64,
    /// The task's job.
    pub job_id: u64,
    /// The task's index in its job.
    pub task_index: u32,
    /// Comparison operator code (`codes::COMPARISON`).
    pub op: u8,
    /// Attribute name (a hash).
    pub name: &'a str,
    /// Attribute value as text (`""` when empty).
    pub value: &'a str,
    /// The value's integer reading, when it is one.
    pub value_int: Option<i64>,
}

impl<'a> ConstraintRow<'a> {
    /// The projection to read `task_constraints` with for [`ConstraintRow::read`].
    pub const COLUMNS: [&'static str; 7] = [
        "time",
        "job_id",
        "task_index",
        "comparison_operator",
        "attribute_name",
        "attribute_value",
        "attribute_value_int",
    ];

    /// Row `row` of a batch read with [`ConstraintRow::COLUMNS`].
    pub fn read(b: &'a RecordBatch, row: usize) -> ConstraintRow<'a> {
        ConstraintRow {
            time_us: i64s(b, 0)[row],
            job_id: u64s(b, 1)[row],
            task_index: u32s(b, 2)[row],
            op: u8s(b, 3)[row],
            name: str_at(b, 4, row),
            value: str_at(b, 5, row),
            value_int: i64_at(b, 6, row),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Table;

    /// The projection names every column of the table's schema, in schema order.
    #[test]
    fn constraint_projection_is_the_schema() {
        let schema = Table::TaskConstraints.arrow_schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ConstraintRow::COLUMNS);
    }
}
