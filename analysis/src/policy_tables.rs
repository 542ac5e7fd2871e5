//! The tables a run's policy declares (`RUN/schema.json`, `engine::output::schema`), read with
//! no knowledge of the policy: each summarised column's mean, median and 99th percentile over
//! the run's rows (nulls left out; milliseconds for a `_us` column), for `cellsim report`.
//! A run written before `schema.json` existed declares nothing.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use serde::Deserialize;

use crate::error::{AnalysisError, Result};
use crate::parts::for_each_batch;

/// A column as `schema.json` lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct DeclaredColumn {
    /// Its name.
    pub name: String,
    /// The report summarises it.
    pub summarised: bool,
}

/// A table as `schema.json` lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct DeclaredTable {
    /// Its directory name.
    pub name: String,
    /// Its columns.
    pub columns: Vec<DeclaredColumn>,
}

/// What `schema.json` says (the parts the report reads).
#[derive(Debug, Clone, Deserialize)]
pub struct Declared {
    /// The policy.
    pub policy: String,
    /// Its tables.
    pub tables: Vec<DeclaredTable>,
}

/// A summarised column of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSummary {
    /// `table.column`.
    pub key: String,
    /// Non-null values.
    pub count: usize,
    /// Mean, median, 99th percentile (`percentile.rs`), in ms for a `_us` column.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// Reads `RUN/schema.json`; `None` for a run without one.
pub fn declared(run: &Path) -> Result<Option<Declared>> {
    let path = run.join(engine::output::schema::SCHEMA_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(AnalysisError::NotARun { path, source }),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| AnalysisError::BadSchema {
            path,
            problem: e.to_string(),
        })
}

/// Appends the non-null values of a numeric column to `out`.
fn values(a: &ArrayRef, out: &mut Vec<f64>) -> std::result::Result<(), String> {
    macro_rules! take {
        ($t:ty) => {
            out.extend(a.as_primitive::<$t>().iter().flatten().map(|v| v as f64))
        };
    }
    match a.data_type() {
        DataType::Int64 => take!(Int64Type),
        DataType::UInt64 => take!(UInt64Type),
        DataType::UInt32 => take!(UInt32Type),
        DataType::Float64 => take!(Float64Type),
        other => {
            return Err(format!(
                "a summarised column of type {other} is not numeric"
            ));
        }
    }
    Ok(())
}

/// The summaries of every summarised column of `run`'s declared tables, in declaration order.
pub fn summaries(run: &Path, declared: &Declared) -> Result<Vec<ColumnSummary>> {
    let mut out = Vec::new();
    for table in &declared.tables {
        if !run.join(&table.name).is_dir() {
            continue; // no part written (a run stopped before its first)
        }
        let columns: Vec<&DeclaredColumn> = table.columns.iter().filter(|c| c.summarised).collect();
        let mut all: Vec<Vec<f64>> = vec![Vec::new(); columns.len()];
        for_each_batch(run, &table.name, |part| {
            for (c, vals) in columns.iter().zip(&mut all) {
                let Some(a) = part.batch.column_by_name(&c.name) else {
                    return Err(part.bad(format!("no column {}", c.name)));
                };
                values(a, vals).map_err(|p| part.bad(format!("{}: {p}", c.name)))?;
            }
            Ok(())
        })?;
        for (c, mut vals) in columns.into_iter().zip(all) {
            let scale = if c.name.ends_with("_us") { 1e-3 } else { 1.0 };
            vals.sort_by(f64::total_cmp);
            let rank = |q: f64| crate::percentile::of_sorted(&vals, q) * scale;
            let (mean, p50, p99) = if vals.is_empty() {
                (f64::NAN, f64::NAN, f64::NAN)
            } else {
                let mean = vals.iter().sum::<f64>() / vals.len() as f64 * scale;
                (mean, rank(0.5), rank(0.99))
            };
            out.push(ColumnSummary {
                key: format!("{}.{}", table.name, c.name),
                count: vals.len(),
                mean,
                p50,
                p99,
            });
        }
    }
    Ok(out)
}

/// Label of a summary's report rows: `tasks queue (ms)` for `tasks.queue_us`.
pub fn label(key: &str) -> String {
    match key.strip_suffix("_us") {
        Some(k) => format!("{} (ms)", k.replace(['.', '_'], " ")),
        None => key.replace(['.', '_'], " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{Field, Schema};

    /// By hand: queue times 0, 100, 200, 300 us and a null: mean 0.15 ms, median 0.15 ms
    /// (halfway between ranks 2 and 3 of 4, `percentile.rs`), p99 0.297 ms (rank 3.97: 0.2 +
    /// 0.97 x 0.1); an undeclared table or column is not read.
    #[test]
    fn summarised_columns_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("queue_us", DataType::Int64, true),
            Field::new("end_us", DataType::Int64, false),
        ]));
        let queue = Int64Array::from(vec![Some(300), None, Some(0), Some(200), Some(100)]);
        let end = Int64Array::from(vec![1, 2, 3, 4, 5]);
        let batch = RecordBatch::try_new(schema, vec![Arc::new(queue), Arc::new(end)]).unwrap();
        std::fs::create_dir_all(dir.path().join("tasks")).unwrap();
        crate::parts::write_part(&dir.path().join("tasks/part-0.parquet"), &batch);
        std::fs::write(
            dir.path().join("schema.json"),
            r#"{"policy": "first-fit", "counters": [], "tables": [
                {"name": "tasks", "columns": [
                    {"name": "queue_us", "ty": "i64", "nullable": true, "summarised": true},
                    {"name": "end_us", "ty": "i64", "nullable": false, "summarised": false}]},
                {"name": "jobs", "columns": []}]}"#,
        )
        .unwrap();
        let declared = declared(dir.path()).unwrap().unwrap();
        let s = summaries(dir.path(), &declared).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].key.as_str(), s[0].count), ("tasks.queue_us", 4));
        assert!((s[0].mean - 0.15).abs() < 1e-12);
        assert!((s[0].p50 - 0.15).abs() < 1e-12 && (s[0].p99 - 0.297).abs() < 1e-12);
        assert_eq!(label(&s[0].key), "tasks queue (ms)");
        assert!(super::declared(&dir.path().join("none")).unwrap().is_none());
        std::fs::write(dir.path().join("schema.json"), "garbage").unwrap();
        let err = super::declared(dir.path()).unwrap_err().to_string();
        assert!(err.contains("schema.json: not a run's schema"), "{err}");
    }
}
