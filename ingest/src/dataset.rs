//! Reading an ingested table back: the part files of `DIR/<table>/` in name order (which is time
//! order when the ingest summary says `parts_in_time_order`), as Arrow batches of the columns
//! asked for. Memory: one batch at a time.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
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
        let schema = self.table.arrow_schema();
        let mut indices = Vec::with_capacity(columns.len());
        for name in columns {
            let i = schema.index_of(name).map_err(|_| {
                IngestError::Config(format!("table {} has no column {name}", self.table.name()))
            })?;
            indices.push(i);
        }
        Ok(Batches {
            files: self.files.clone().into_iter(),
            indices,
            current: None,
            path: PathBuf::new(),
        })
    }
}

/// Iterator over the batches of a [`Dataset`].
pub struct Batches {
    files: std::vec::IntoIter<PathBuf>,
    indices: Vec<usize>,
    current: Option<ParquetRecordBatchReader>,
    path: PathBuf,
}

impl Batches {
    fn open_next(&mut self) -> Result<bool> {
        let Some(path) = self.files.next() else {
            return Ok(false);
        };
        let parquet_err = |source| IngestError::Parquet {
            path: path.clone(),
            source,
        };
        let file = File::open(&path).map_err(IngestError::io(&path))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_err)?;
        let mask = ProjectionMask::roots(builder.parquet_schema(), self.indices.iter().copied());
        let reader = builder
            .with_projection(mask)
            .with_batch_size(READ_BATCH_ROWS)
            .build()
            .map_err(parquet_err)?;
        self.current = Some(reader);
        self.path = path;
        Ok(true)
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(reader) = &mut self.current {
                match reader.next() {
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
