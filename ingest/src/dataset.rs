//! Reading an ingested table back: the part files of `DIR/<table>/` in name order (which is time
//! order when the ingest summary says `parts_in_time_order`), as Arrow batches of the columns
//! asked for. Memory: one batch at a time.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::Schema;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use crate::error::{IngestError, Result};
use crate::tables::Table;

/// Rows per batch when reading.
const READ_BATCH_ROWS: usize = 64 * 1024;

/// The Parquet files of one ingested table.
#[derive(Debug, Clone)]
pub struct Dataset {
    table: Table,
    files: Vec<PathBuf>,
}

impl Dataset {
    /// Opens `dir/<table>/`; `Ok(None)` when the table was not ingested.
    pub fn open(dir: &Path, table: Table) -> Result<Option<Dataset>> {
        let table_dir = dir.join(table.name());
        if !table_dir.is_dir() {
            return Ok(None);
        }
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&table_dir).map_err(IngestError::io(&table_dir))? {
            let path = entry.map_err(IngestError::io(&table_dir))?.path();
            if path.extension().is_some_and(|e| e == "parquet") {
                files.push(path);
            }
        }
        files.sort();
        Ok(Some(Dataset { table, files }))
    }

    /// The part files in read order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Batches of the named columns (in schema order), file after file.
    pub fn batches(&self, columns: &[&str]) -> Result<Batches> {
        self.batches_from(columns, 0)
    }

    /// Like [`Dataset::batches`], starting after the first `skip_rows` rows (resuming a replay):
    /// whole files and row groups are skipped by their metadata, without decoding.
    pub fn batches_from(&self, columns: &[&str], skip_rows: u64) -> Result<Batches> {
        let schema = self.table.arrow_schema();
        let mut indices = Vec::with_capacity(columns.len());
        for name in columns {
            let i = schema.index_of(name).map_err(|_| {
                IngestError::Config(format!("table {} has no column {name}", self.table.name()))
            })?;
            indices.push(i);
        }
        Ok(Batches {
            table: self.table,
            files: self.files.clone().into_iter(),
            indices,
            current: None,
            path: PathBuf::new(),
            skip_rows,
        })
    }
}

/// Iterator over the batches of a [`Dataset`].
pub struct Batches {
    table: Table,
    files: std::vec::IntoIter<PathBuf>,
    indices: Vec<usize>,
    current: Option<ParquetRecordBatchReader>,
    path: PathBuf,
    /// Rows still to skip.
    skip_rows: u64,
}

impl Batches {
    fn open_next(&mut self) -> Result<bool> {
        let Some(path) = self.files.next() else {
            return Ok(false);
        };
        self.path.clone_from(&path);
        let parquet_err = |source| IngestError::Parquet {
            path: path.clone(),
            source,
        };
        let file = File::open(&path).map_err(IngestError::io(&path))?;
        let mut builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_err)?;
        if self.skip_rows > 0 {
            let mut groups = Vec::new();
            for (g, meta) in builder.metadata().row_groups().iter().enumerate() {
                let rows = meta.num_rows().max(0) as u64;
                if groups.is_empty() && self.skip_rows >= rows {
                    self.skip_rows -= rows;
                } else {
                    groups.push(g);
                }
            }
            builder = builder.with_row_groups(groups);
        }
        self.check_schema(&path, builder.schema())?;
        let mask = ProjectionMask::roots(builder.parquet_schema(), self.indices.iter().copied());
        let reader = builder
            .with_projection(mask)
            .with_batch_size(READ_BATCH_ROWS)
            .build()
            .map_err(parquet_err)?;
        self.current = Some(reader);
        Ok(true)
    }
}

impl Batches {
    /// Checks that the part at `path` holds the table's columns (names, types, nullability) in
    /// the table's order, so that a column read by position is the one meant.
    fn check_schema(&self, path: &Path, found: &Schema) -> Result<()> {
        let expected = self.table.arrow_schema();
        let problem = if found.fields().len() != expected.fields().len() {
            Some(format!(
                "{} columns, the table has {}",
                found.fields().len(),
                expected.fields().len()
            ))
        } else {
            expected
                .fields()
                .iter()
                .zip(found.fields())
                .find(|(want, have)| {
                    want.name() != have.name()
                        || want.data_type() != have.data_type()
                        || (have.is_nullable() && !want.is_nullable())
                })
                .map(|(want, have)| {
                    format!(
                        "column {} is {} {}, the table's {} is {} {}",
                        have.name(),
                        have.data_type(),
                        nullability(have),
                        want.name(),
                        want.data_type(),
                        nullability(want),
                    )
                })
        };
        match problem {
            None => Ok(()),
            Some(problem) => Err(IngestError::PartSchema {
                path: path.to_path_buf(),
                table: self.table.name(),
                problem,
            }),
        }
    }
}

/// How a column's nullability reads in errors.
fn nullability(field: &arrow_schema::Field) -> &'static str {
    if field.is_nullable() {
        "nullable"
    } else {
        "required"
    }
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    (payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    /// The next batch. The parquet crate panics on some malformed pages instead of returning an
    /// error; such a panic is caught here and becomes [`IngestError::DamagedPart`] naming the
    /// part (a panic in the replay's decoding thread would otherwise end the table early, in
    /// silence), and the iteration ends.
    fn next(&mut self) -> Option<Self::Item> {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.next_batch()));
        let next = caught.unwrap_or_else(|payload| {
            Some(Err(IngestError::DamagedPart {
                path: self.path.clone(),
                message: panic_message(payload.as_ref()),
            }))
        });
        if matches!(next, Some(Err(_))) {
            self.end();
        }
        next
    }
}

impl Batches {
    /// Ends the iteration: after an error the iteration is over (the parquet reader panics
    /// when asked for a batch after one of its errors: "current_encoding should be set").
    fn end(&mut self) {
        self.current = None;
        self.files = Vec::new().into_iter();
    }

    fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if let Some(reader) = &mut self.current {
                match reader.next() {
                    Some(Ok(batch)) if self.skip_rows > 0 => {
                        let skip = self.skip_rows.min(batch.num_rows() as u64);
                        self.skip_rows -= skip;
                        if skip < batch.num_rows() as u64 {
                            let rest = batch.num_rows() - skip as usize;
                            return Some(Ok(batch.slice(skip as usize, rest)));
                        }
                        continue; // the whole batch was skipped: read the next one
                    }
                    Some(Ok(batch)) => return Some(Ok(batch)),
                    Some(Err(source)) => {
                        return Some(Err(IngestError::Arrow {
                            path: self.path.clone(),
                            source,
                        }));
                    }
                    None => self.current = None,
                }
            }
            match self.open_next() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int32Array, Int64Array};
    use arrow_schema::{DataType, Field};
    use parquet::arrow::ArrowWriter;

    use super::*;

    /// Writes `columns` as `dir/machine_events/part-00000-of-00001.parquet`.
    fn write_part(dir: &Path, columns: Vec<(Field, ArrayRef)>) -> PathBuf {
        let table_dir = dir.join(Table::MachineEvents.name());
        std::fs::create_dir_all(&table_dir).unwrap();
        let path = table_dir.join("part-00000-of-00001.parquet");
        let (fields, arrays): (Vec<_>, Vec<_>) = columns.into_iter().unzip();
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap();
        let mut w =
            ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        path
    }

    fn first_error(dir: &Path) -> String {
        let ds = Dataset::open(dir, Table::MachineEvents).unwrap().unwrap();
        let mut batches = ds.batches(&["time"]).unwrap();
        batches.next().unwrap().unwrap_err().to_string()
    }

    /// A damaged part (an input the fuzzer made from an ingested task_events part) is an error
    /// naming the file, and the table ends there: asked again after such an error, the parquet
    /// reader panicked ("current_encoding should be set"), and the replay's decoding thread,
    /// which reads on after an error, died of it.
    #[test]
    fn a_damaged_part_is_an_error_naming_it_and_ends_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let table_dir = dir.path().join(Table::TaskEvents.name());
        std::fs::create_dir_all(&table_dir).unwrap();
        let path = table_dir.join("part-00000-of-00001.parquet");
        let damaged = include_bytes!("../tests/fixtures/damaged-page-task_events.parquet");
        std::fs::write(&path, damaged).unwrap();
        let ds = Dataset::open(dir.path(), Table::TaskEvents)
            .unwrap()
            .unwrap();
        // Each column alone, then all of them (the replay reads projections).
        let all: Vec<_> = Table::TaskEvents.columns().iter().map(|c| c.name).collect();
        let columns = all.iter().map(|name| vec![*name]);
        let mut refused = 0;
        for projection in columns.chain([all.clone()]) {
            let mut batches = ds.batches(&projection).unwrap();
            if let Some(e) = batches.find_map(|b| b.err()) {
                let e = e.to_string();
                assert!(e.starts_with(&path.display().to_string()), "{e}");
                assert!(
                    batches.next().is_none(),
                    "{projection:?}: the table ends at {e}"
                );
                refused += 1;
            }
        }
        assert_eq!(refused, 9, "all the columns and 8 of the 13 alone");
    }

    /// A part that is not an ingested part of its table (too few columns; the time key of
    /// another type; a nullable column the table requires) is refused naming the file and the
    /// column, before any value is read by position (the replay reads the time key as i64 and
    /// would panic on another type, or misread a null).
    #[test]
    fn a_part_with_other_columns_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_part(
            dir.path(),
            vec![(
                Field::new("time", DataType::Int64, false),
                Arc::new(Int64Array::from(vec![1])),
            )],
        );
        let e = first_error(dir.path());
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(
            e.contains("not an ingested machine_events part: 1 columns, the table has 6"),
            "{e}"
        );

        let schema = Table::MachineEvents.arrow_schema();
        let arrays = |time: ArrayRef| {
            let mut columns = vec![(
                schema
                    .field(0)
                    .clone()
                    .with_data_type(time.data_type().clone()),
                time,
            )];
            for f in &schema.fields()[1..] {
                columns.push((
                    f.as_ref().clone(),
                    arrow_array::new_empty_array(f.data_type()),
                ));
            }
            columns
        };
        let dir = tempfile::tempdir().unwrap();
        write_part(
            dir.path(),
            arrays(Arc::new(Int32Array::from(Vec::<i32>::new()))),
        );
        let e = first_error(dir.path());
        assert!(
            e.contains("column time is Int32 required, the table's time is Int64 required"),
            "{e}"
        );

        let dir = tempfile::tempdir().unwrap();
        let mut columns = arrays(Arc::new(Int64Array::from(Vec::<i64>::new())));
        columns[0].0 = columns[0].0.clone().with_nullable(true);
        write_part(dir.path(), columns);
        let e = first_error(dir.path());
        assert!(
            e.contains("column time is Int64 nullable, the table's time is Int64 required"),
            "{e}"
        );
    }
}
