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
