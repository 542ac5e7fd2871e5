//! Reading one of a run's output tables (`RUN/ticks/`, `RUN/timing/`, ...): its Parquet parts in
//! name order, which is tick order (`part-<first tick>.parquet`, zero-padded), batch by batch,
//! with typed column access that names the part and the column when either is missing or of
//! another type.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{PrimitiveArray, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::{AnalysisError, Result};

/// A batch of a part, with the part's path for errors.
pub(crate) struct PartBatch<'a> {
    /// The part file.
    pub path: &'a Path,
    /// The rows.
    pub batch: RecordBatch,
}

impl PartBatch<'_> {
    /// The error for this part saying `problem`.
    pub fn bad(&self, problem: String) -> AnalysisError {
        AnalysisError::BadPart {
            path: self.path.to_path_buf(),
            problem,
        }
    }

    /// The column `name` as an array of `T`, or an error naming the part and the column.
    pub fn column<T: ArrowPrimitiveType>(&self, name: &str) -> Result<&PrimitiveArray<T>> {
        let i = self
            .batch
            .schema()
            .index_of(name)
            .map_err(|_| self.bad(format!("no column {name}")))?;
        self.batch
            .column(i)
            .as_primitive_opt::<T>()
            .ok_or_else(|| self.bad(format!("column {name} is not {}", T::DATA_TYPE)))
    }

    /// The Boolean column `name`, or an error naming the part and the column.
    pub fn booleans(&self, name: &str) -> Result<&arrow_array::BooleanArray> {
        self.batch
            .column_by_name(name)
            .and_then(|c| c.as_boolean_opt())
            .ok_or_else(|| self.bad(format!("no Boolean column {name}")))
    }

    /// The column `name` if the part has it.
    pub fn optional_column<T: ArrowPrimitiveType>(
        &self,
        name: &str,
    ) -> Result<Option<&PrimitiveArray<T>>> {
        match self.batch.schema().index_of(name) {
            Ok(_) => self.column(name).map(Some),
            Err(_) => Ok(None),
        }
    }
}

/// The parts of `RUN/table/`, in name (tick) order; an error naming the directory when it
/// cannot be listed.
fn part_files(run: &Path, table: &str) -> Result<Vec<PathBuf>> {
    let dir = run.join(table);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|source| AnalysisError::NotARun {
            path: dir.clone(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    Ok(files)
}

/// Calls `each` with every batch of `RUN/table/`, parts in tick order.
pub(crate) fn for_each_batch(
    run: &Path,
    table: &str,
    mut each: impl FnMut(&PartBatch) -> Result<()>,
) -> Result<()> {
    for path in part_files(run, table)? {
        let bad = |problem: String| AnalysisError::BadPart {
            path: path.clone(),
            problem,
        };
        let file = File::open(&path).map_err(|source| AnalysisError::NotARun {
            path: path.clone(),
            source,
        })?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|e| bad(e.to_string()))?;
        for batch in reader {
            let batch = batch.map_err(|e| bad(e.to_string()))?;
            each(&PartBatch { path: &path, batch })?;
        }
    }
    Ok(())
}

/// Writes `batch` as the Parquet part at `path`, as the engine writes its parts (tests build
/// runs' tables by hand with it).
#[cfg(test)]
pub(crate) fn write_part(path: &Path, batch: &RecordBatch) {
    let file = File::create(path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::types::{Int64Type, UInt32Type};
    use arrow_array::{ArrayRef, Int64Array};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// A column of another type than cellsim writes (a part rewritten by another tool, say) is
    /// an error naming the part and the column, not a panic; a missing one too.
    #[test]
    fn a_column_of_another_type_or_missing_is_named() {
        let run = tempfile::tempdir().unwrap();
        std::fs::create_dir(run.path().join("timing")).unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "tick",
            DataType::Int64,
            false,
        )]));
        let ticks: ArrayRef = Arc::new(Int64Array::from(vec![0, 1, 2]));
        let batch = RecordBatch::try_new(schema, vec![ticks]).unwrap();
        write_part(&run.path().join("timing/part-00000000.parquet"), &batch);
        let read = |name: &str| {
            for_each_batch(run.path(), "timing", |part| {
                part.column::<UInt32Type>(name).map(|_| ())
            })
            .unwrap_err()
            .to_string()
        };
        let err = read("tick");
        assert!(
            err.contains("part-00000000.parquet: not a readable cellsim output part")
                && err.ends_with("column tick is not UInt32"),
            "{err}"
        );
        assert!(read("wall_ms").ends_with("no column wall_ms"));
        let mut sum = 0;
        for_each_batch(run.path(), "timing", |part| {
            sum += part
                .column::<Int64Type>("tick")?
                .values()
                .iter()
                .sum::<i64>();
            Ok(())
        })
        .unwrap();
        assert_eq!(sum, 3);
    }
}
