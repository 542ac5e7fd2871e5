//! The tables a policy declares ([`Policy::tables`](crate::policy::Policy::tables)): their
//! schemas and batches, built from the rows the policy wrote ([`Value`]s, row-major), with each
//! value checked against its column's declared type.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::policy::{ColumnType, TableSpec, Value};

/// Directory names a policy's table may not take.
pub(super) const RESERVED: [&str; 6] = [
    "ticks",
    "counters",
    "timing",
    "nodes",
    "snapshots",
    "synthetic",
];

/// What is wrong with the declared `specs` (a reserved, repeated or empty name, no columns).
pub(super) fn check(specs: &[TableSpec]) -> Result<(), (String, String)> {
    for (i, spec) in specs.iter().enumerate() {
        let bad = |problem: &str| Err((spec.name.to_string(), problem.to_string()));
        if spec.name.is_empty()
            || !spec
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return bad("a table's name is letters, digits and `_`");
        }
        if RESERVED.contains(&spec.name) {
            return bad("the name is one of the engine's own tables");
        }
        if specs[..i].iter().any(|s| s.name == spec.name) {
            return bad("declared twice");
        }
        if spec.columns.is_empty() {
            return bad("no columns");
        }
    }
    Ok(())
}

/// The table's Arrow schema (with the pandas dtypes that keep nullable integers exact).
pub fn schema_of(spec: &TableSpec) -> SchemaRef {
    let fields: Vec<Field> = spec
        .columns
        .iter()
        .map(|c| {
            let ty = match c.ty {
                ColumnType::U32 => DataType::UInt32,
                ColumnType::U64 => DataType::UInt64,
                ColumnType::I64 => DataType::Int64,
                ColumnType::F64 => DataType::Float64,
                ColumnType::Bool => DataType::Boolean,
                ColumnType::Name(_) => DataType::Utf8,
            };
            Field::new(c.name, ty, c.nullable)
        })
        .collect();
    Arc::new(ingest::pandas::with_pandas_metadata(Schema::new(fields)))
}

/// The batch of `values` (whole rows of `spec`'s columns); a value of another type than its
/// column's, or a null in a column that is not nullable, is an error naming the column.
pub(super) fn batch_of(
    spec: &TableSpec,
    schema: &SchemaRef,
    values: &[Value],
) -> Result<RecordBatch, String> {
    let width = spec.columns.len();
    if !values.len().is_multiple_of(width) {
        return Err(format!(
            "{} values are not whole rows of {width} columns",
            values.len()
        ));
    }
    let rows = values.len() / width;
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(width);
    for (k, column) in spec.columns.iter().enumerate() {
        let mut cells = values.iter().skip(k).step_by(width);
        let wrong = |v: &Value| format!("column {} ({:?}) got {v:?}", column.name, column.ty);
        let null_ok = |v: &Value| column.nullable && *v == Value::Null;
        macro_rules! build {
            ($builder:ty, $variant:ident) => {{
                let mut b = <$builder>::with_capacity(rows);
                for v in cells.by_ref() {
                    match v {
                        Value::$variant(x) => b.append_value(*x),
                        v if null_ok(v) => b.append_null(),
                        v => return Err(wrong(v)),
                    }
                }
                Arc::new(b.finish()) as ArrayRef
            }};
        }
        columns.push(match column.ty {
            ColumnType::U32 => build!(UInt32Builder, U32),
            ColumnType::U64 => build!(UInt64Builder, U64),
            ColumnType::I64 => build!(Int64Builder, I64),
            ColumnType::F64 => build!(Float64Builder, F64),
            ColumnType::Bool => build!(BooleanBuilder, Bool),
            ColumnType::Name(names) => {
                let mut b = StringBuilder::with_capacity(rows, rows * 8);
                for v in cells.by_ref() {
                    match v {
                        Value::Code(c) if (*c as usize) < names.len() => {
                            b.append_value(names[*c as usize])
                        }
                        v if null_ok(v) => b.append_null(),
                        v => return Err(wrong(v)),
                    }
                }
                Arc::new(b.finish()) as ArrayRef
            }
        });
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ColumnSpec;

    const COLUMNS: [ColumnSpec; 2] = [
        ColumnSpec::new("id", ColumnType::U64),
        ColumnSpec::new("start_us", ColumnType::I64).nullable(),
    ];
    const SPEC: TableSpec = TableSpec {
        name: "tasks",
        columns: &COLUMNS,
    };

    #[test]
    fn rows_become_typed_columns_and_wrong_values_are_named() {
        let schema = schema_of(&SPEC);
        let values = [Value::U64(7), Value::I64(5), Value::U64(8), Value::Null];
        let batch = batch_of(&SPEC, &schema, &values).unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.column(1).null_count(), 1);
        let err = batch_of(&SPEC, &schema, &[Value::Null, Value::I64(1)]).unwrap_err();
        assert!(err.contains("column id"), "{err}");
        let err = batch_of(&SPEC, &schema, &[Value::U64(1), Value::F64(1.0)]).unwrap_err();
        assert!(err.contains("column start_us"), "{err}");
        assert!(batch_of(&SPEC, &schema, &[Value::U64(1)]).is_err());
        // No rows (a part with none): an empty batch, not a panic.
        assert_eq!(batch_of(&SPEC, &schema, &[]).unwrap().num_rows(), 0);
        assert!(check(&[SPEC]).is_ok());
        assert!(check(&[SPEC, SPEC]).is_err());
        let ticks = TableSpec {
            name: "ticks",
            columns: &COLUMNS,
        };
        assert!(check(&[ticks]).is_err());
    }
}
