//! Parsing CSV records of one table into Arrow columns, a bounded chunk at a time.
//!
//! A [`Chunk`] owns one Arrow builder per output column and the `time` values of its rows (for
//! sorting). A row is validated completely before any builder is touched, so a rejected row
//! (`--skip-bad-rows`) leaves the chunk unchanged. Memory: the rows of one chunk.

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float32Builder, Int64Builder, StringDictionaryBuilder, UInt8Builder,
    UInt32Builder, UInt64Builder,
};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, RecordBatch};
use csv::ByteRecord;

use crate::error::{IngestError, Result};
use crate::tables::{ColumnSpec, Kind, MAX_AMOUNT, Table};

/// A parsed field, before it is appended.
#[derive(Clone, Copy)]
enum Value<'a> {
    Null,
    I64(i64),
    U64(u64),
    U32(u32),
    U8(u8),
    F32(f32),
    Bool(bool),
    Str(&'a str),
    StrOrInt(&'a str, Option<i64>),
}

enum Builder {
    I64(Int64Builder),
    U64(UInt64Builder),
    U32(UInt32Builder),
    U8(UInt8Builder),
    F32(Float32Builder),
    Bool(BooleanBuilder),
    Dict(StringDictionaryBuilder<Int32Type>),
    DictAndInt(StringDictionaryBuilder<Int32Type>, Int64Builder),
}

/// Rows of one table being accumulated into Arrow columns.
pub struct Chunk {
    table: Table,
    builders: Vec<Builder>,
    times: Vec<i64>,
}

/// Most CSV columns of any table (task_usage).
const MAX_COLUMNS: usize = 20;

/// Parses an unsigned decimal integer (digits only).
pub fn parse_u64(field: &[u8]) -> Option<u64> {
    if field.is_empty() || field.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in field {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Parses a signed decimal integer.
pub fn parse_i64(field: &[u8]) -> Option<i64> {
    match field.first() {
        Some(b'-') => parse_u64(&field[1..]).and_then(|v| 0i64.checked_sub_unsigned(v)),
        _ => parse_u64(field).and_then(|v| i64::try_from(v).ok()),
    }
}

fn parse_value<'a>(spec: &ColumnSpec, field: &'a [u8]) -> std::result::Result<Value<'a>, String> {
    if field.is_empty() {
        return if spec.nullable {
            Ok(Value::Null)
        } else {
            Err("empty, but this column is mandatory".to_string())
        };
    }
    let shown = || String::from_utf8_lossy(field).into_owned();
    let bad = |what: &str| format!("cannot parse {:?} as {what}", shown());
    Ok(match spec.kind {
        Kind::TimeUs => {
            let v = parse_i64(field).ok_or_else(|| bad("a 64-bit integer"))?;
            if v < 0 {
                return Err(format!(
                    "{} is negative; trace times are microseconds from 0 (before the trace)",
                    shown()
                ));
            }
            Value::I64(v)
        }
        Kind::Id => Value::U64(parse_u64(field).ok_or_else(|| bad("an unsigned 64-bit integer"))?),
        Kind::TaskIndex => {
            let v = parse_u64(field).ok_or_else(|| bad("an unsigned integer"))?;
            Value::U32(u32::try_from(v).map_err(|_| bad("a task index below 2^32"))?)
        }
        Kind::Code(table) => {
            let v = parse_u64(field).ok_or_else(|| bad("an integer code"))?;
            if v > table.max() as u64 {
                return Err(format!("unknown code {v}, expected {}", table.describe()));
            }
            Value::U8(v as u8)
        }
        Kind::F32 | Kind::Amount => {
            let text = std::str::from_utf8(field).map_err(|_| bad("a number"))?;
            let v: f32 = text.parse().map_err(|_| bad("a number"))?;
            if !v.is_finite() {
                return Err(bad("a finite number"));
            }
            if v < 0.0 {
                return Err(format!(
                    "{} is negative; this column is never below 0",
                    shown()
                ));
            }
            if matches!(spec.kind, Kind::Amount) && v > MAX_AMOUNT {
                return Err(format!(
                    "{} is more than {MAX_AMOUNT} (amounts are normalised to the largest machine, 1.0)",
                    shown()
                ));
            }
            Value::F32(v)
        }
        Kind::Bool => match field {
            b"0" => Value::Bool(false),
            b"1" => Value::Bool(true),
            _ => return Err(bad("a boolean 0/1")),
        },
        Kind::Hash => Value::Str(std::str::from_utf8(field).map_err(|_| bad("UTF-8 text"))?),
        Kind::HashOrInt => {
            let text = std::str::from_utf8(field).map_err(|_| bad("UTF-8 text"))?;
            Value::StrOrInt(text, parse_i64(field))
        }
    })
}

impl Chunk {
    /// An empty chunk for `table` with room for `capacity` rows.
    pub fn new(table: Table, capacity: usize) -> Chunk {
        let builders = table
            .columns()
            .iter()
            .map(|c| match c.kind {
                Kind::TimeUs => Builder::I64(Int64Builder::with_capacity(capacity)),
                Kind::Id => Builder::U64(UInt64Builder::with_capacity(capacity)),
                Kind::TaskIndex => Builder::U32(UInt32Builder::with_capacity(capacity)),
                Kind::Code(_) => Builder::U8(UInt8Builder::with_capacity(capacity)),
                Kind::F32 | Kind::Amount => Builder::F32(Float32Builder::with_capacity(capacity)),
                Kind::Bool => Builder::Bool(BooleanBuilder::with_capacity(capacity)),
                Kind::Hash => Builder::Dict(StringDictionaryBuilder::new()),
                Kind::HashOrInt => Builder::DictAndInt(
                    StringDictionaryBuilder::new(),
                    Int64Builder::with_capacity(capacity),
                ),
            })
            .collect();
        Chunk {
            table,
            builders,
            times: Vec::with_capacity(capacity),
        }
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True when no rows are held.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The time key of every row, in append order.
    pub fn times(&self) -> &[i64] {
        &self.times
    }

    /// Validates `record` (line `line` of `path`) and appends it; on error the chunk is unchanged.
    pub fn push(&mut self, record: &ByteRecord, path: &Path, line: u64) -> Result<()> {
        let specs = self.table.columns();
        if record.len() != specs.len() {
            return Err(IngestError::ColumnCount {
                path: path.to_path_buf(),
                line,
                expected: specs.len(),
                found: record.len(),
            });
        }
        let mut values = [Value::Null; MAX_COLUMNS];
        for (i, (spec, field)) in specs.iter().zip(record.iter()).enumerate() {
            match parse_value(spec, field) {
                Ok(v) => values[i] = v,
                Err(problem) => {
                    return Err(IngestError::BadField {
                        path: path.to_path_buf(),
                        line,
                        column: i + 1,
                        name: spec.name,
                        problem,
                    });
                }
            }
        }
        let Value::I64(time) = values[0] else {
            unreachable!("the first column is a mandatory time")
        };
        self.times.push(time);
        for (builder, value) in self.builders.iter_mut().zip(values.iter()) {
            append(builder, *value);
        }
        Ok(())
    }

    /// Finishes the held rows into a record batch and empties the chunk.
    pub fn finish(&mut self) -> RecordBatch {
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.builders.len() + 1);
        for b in &mut self.builders {
            match b {
                Builder::I64(b) => arrays.push(Arc::new(b.finish())),
                Builder::U64(b) => arrays.push(Arc::new(b.finish())),
                Builder::U32(b) => arrays.push(Arc::new(b.finish())),
                Builder::U8(b) => arrays.push(Arc::new(b.finish())),
                Builder::F32(b) => arrays.push(Arc::new(b.finish())),
                Builder::Bool(b) => arrays.push(Arc::new(b.finish())),
                Builder::Dict(b) => arrays.push(Arc::new(b.finish())),
                Builder::DictAndInt(s, i) => {
                    arrays.push(Arc::new(s.finish()));
                    arrays.push(Arc::new(i.finish()));
                }
            }
        }
        self.times.clear();
        RecordBatch::try_new(self.table.arrow_schema(), arrays)
            .expect("builders follow the table schema")
    }
}

fn append(builder: &mut Builder, value: Value<'_>) {
    match (builder, value) {
        (Builder::I64(b), Value::I64(v)) => b.append_value(v),
        (Builder::U64(b), Value::U64(v)) => b.append_value(v),
        (Builder::U32(b), Value::U32(v)) => b.append_value(v),
        (Builder::U8(b), Value::U8(v)) => b.append_value(v),
        (Builder::F32(b), Value::F32(v)) => b.append_value(v),
        (Builder::Bool(b), Value::Bool(v)) => b.append_value(v),
        (Builder::Dict(b), Value::Str(v)) => {
            b.append_value(v);
        }
        (Builder::DictAndInt(s, i), Value::StrOrInt(v, n)) => {
            s.append_value(v);
            i.append_option(n);
        }
        (Builder::I64(b), Value::Null) => b.append_null(),
        (Builder::U64(b), Value::Null) => b.append_null(),
        (Builder::U32(b), Value::Null) => b.append_null(),
        (Builder::U8(b), Value::Null) => b.append_null(),
        (Builder::F32(b), Value::Null) => b.append_null(),
        (Builder::Bool(b), Value::Null) => b.append_null(),
        (Builder::Dict(b), Value::Null) => b.append_null(),
        (Builder::DictAndInt(s, i), Value::Null) => {
            s.append_null();
            i.append_null();
        }
        _ => unreachable!("parse_value yields the builder's kind"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_strictly() {
        assert_eq!(parse_u64(b"6253771429"), Some(6_253_771_429));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-5"), Some(-5));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"12a"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"+1"), None);
    }

    #[test]
    fn bad_row_leaves_chunk_unchanged() {
        let mut chunk = Chunk::new(Table::MachineEvents, 4);
        let p = Path::new("m.csv");
        chunk
            .push(
                &ByteRecord::from(vec!["0", "5", "0", "h", "0.5", "0.25"]),
                p,
                1,
            )
            .unwrap();
        let err = chunk
            .push(
                &ByteRecord::from(vec!["7", "6", "3", "h", "0.5", "0.25"]),
                p,
                2,
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "m.csv:2: column 3 (event_type): unknown code 3, expected machine event type 0..=2 (ADD, REMOVE, UPDATE)"
        );
        chunk
            .push(&ByteRecord::from(vec!["9", "7", "2", "", "", ""]), p, 3)
            .unwrap();
        let batch = chunk.finish();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.column(4).null_count(), 1);
    }

    /// Values the engine's units cannot hold, and negatives, are refused with the line and
    /// column (issue 56: a request of 1e30 wrapped its node's sum; machine CPUs of 1e10 were
    /// capped; a negative time or request was kept or made 0); the bound itself is taken, and
    /// a large ratio that is no amount (cycles per instruction) is kept.
    #[test]
    fn amounts_beyond_the_units_and_negatives_are_refused() {
        let p = Path::new("t.csv");
        let task = |time: &str, cpu: &str, mem: &str| {
            let fields = [
                time, "", "3", "0", "", "0", "u", "0", "0", cpu, mem, "", "0",
            ];
            Chunk::new(Table::TaskEvents, 1)
                .push(&ByteRecord::from(fields.to_vec()), p, 4)
                .map_err(|e| e.to_string())
        };
        assert!(task("0", "0.5", "4").is_ok());
        assert_eq!(
            task("0", "1e30", "0.1").unwrap_err(),
            "t.csv:4: column 10 (cpu_request): 1e30 is more than 4 (amounts are normalised to the largest machine, 1.0)"
        );
        assert!(
            task("0", "0.1", "1e38")
                .unwrap_err()
                .contains("column 11 (memory_request): 1e38 is more than 4")
        );
        assert!(
            task("0", "-0.1", "0.1")
                .unwrap_err()
                .contains("column 10 (cpu_request): -0.1 is negative")
        );
        assert!(
            task("-5", "0.1", "0.1")
                .unwrap_err()
                .contains("column 1 (time): -5 is negative")
        );
        let machine = Chunk::new(Table::MachineEvents, 1)
            .push(
                &ByteRecord::from(vec!["0", "5", "0", "h", "1e10", "0.5"]),
                p,
                9,
            )
            .unwrap_err();
        assert!(
            machine
                .to_string()
                .contains("t.csv:9: column 5 (cpus): 1e10 is more than 4")
        );
        let mut usage = vec!["0", "1", "3", "0", "5"];
        usage.extend(["0.1"; 10]);
        usage.extend(["250.0", "0.1", "1", "0", "0.1"]);
        assert!(
            Chunk::new(Table::TaskUsage, 1)
                .push(&ByteRecord::from(usage), p, 1)
                .is_ok()
        );
    }
}
