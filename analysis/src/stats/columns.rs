//! Typed access to the columns of an ingested-trace batch, by position in the projection.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Int32Type, Int64Type, UInt8Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch, StringArray};

/// i64 column `i` (non-null time keys).
pub fn i64s(b: &RecordBatch, i: usize) -> &[i64] {
    b.column(i).as_primitive::<Int64Type>().values()
}

/// u64 column `i` values (for non-null columns).
pub fn u64s(b: &RecordBatch, i: usize) -> &[u64] {
    b.column(i).as_primitive::<UInt64Type>().values()
}

/// u32 column `i` values.
pub fn u32s(b: &RecordBatch, i: usize) -> &[u32] {
    b.column(i).as_primitive::<UInt32Type>().values()
}

/// u8 column `i` values (non-null codes).
pub fn u8s(b: &RecordBatch, i: usize) -> &[u8] {
    b.column(i).as_primitive::<UInt8Type>().values()
}

/// f32 column `i` at `row`, `None` when empty in the trace.
pub fn f32_at(b: &RecordBatch, i: usize, row: usize) -> Option<f32> {
    let a = b.column(i).as_primitive::<Float32Type>();
    a.is_valid(row).then(|| a.value(row))
}

/// i64 column `i` at `row`, `None` when null.
pub fn i64_at(b: &RecordBatch, i: usize, row: usize) -> Option<i64> {
    let a = b.column(i).as_primitive::<Int64Type>();
    a.is_valid(row).then(|| a.value(row))
}

/// Dictionary-string column `i` as one `Option<&str>` per row.
pub fn strings(b: &RecordBatch, i: usize) -> Vec<Option<&str>> {
    let dict = b.column(i).as_dictionary::<Int32Type>();
    let typed = dict
        .downcast_dict::<StringArray>()
        .expect("hash columns are dictionaries of strings");
    typed.into_iter().collect()
}

/// Boolean column `i` at `row` (false when null).
pub fn bool_at(b: &RecordBatch, i: usize, row: usize) -> bool {
    let a = b.column(i).as_boolean();
    a.is_valid(row) && a.value(row)
}
