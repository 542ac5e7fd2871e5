//! `cellsim ingest`: a trace directory of CSV(.gz) part files to one Parquet dataset per table.
//!
//! Output layout: `OUT/<table>/part-NNNNN-of-MMMMM.parquet`, one file per input part, each sorted
//! by time (ties in file order) in row groups of [`IngestOptions::rows_per_group`] rows, plus
//! `OUT/ingest-summary.json`. Completeness: tables are written under `OUT/<table>.partial/` and
//! renamed into place only when every part of every table succeeded, and the summary is removed
//! before the first table is replaced and written last (temp file + rename); so a directory with
//! a summary is complete, and a failed ingest leaves no `OUT/<table>` it did not finish (nor
//! touches an earlier ingest's tables and summary). Tables may be ingested a few at a time into
//! one `OUT`: the summary lists the tables of earlier ingests there that were not replaced (an
//! earlier summary that cannot be read is refused before any work). [`Progress::stop`] ends an
//! ingest early as a failure does.
//! Memory: per worker thread, one chunk of `rows_per_group` rows (two when a part needs its row
//! groups merged).

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use csv::ByteRecord;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::chunk::Chunk;
use crate::error::{IngestError, Result};
use crate::sort::{merge_row_groups, sort_chunk};
use crate::source::PartReader;
use crate::tables::Table;

/// Name of the summary written last into the output directory.
pub const SUMMARY_FILE: &str = "ingest-summary.json";

/// How many row errors are kept verbatim in the summary when skipping bad rows.
const BAD_ROW_EXAMPLES: usize = 20;

/// Settings of one ingest.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Tables to ingest; empty = every table present in the trace directory.
    pub tables: Vec<Table>,
    /// Count and skip malformed rows instead of failing.
    pub skip_bad_rows: bool,
    /// Rows per Parquet row group (and per sort chunk).
    pub rows_per_group: usize,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            tables: Vec::new(),
            skip_bad_rows: false,
            rows_per_group: 128 * 1024,
        }
    }
}

/// Shared counters a caller can poll to show progress while [`ingest`] runs, and a flag to stop
/// it early.
#[derive(Debug, Default)]
pub struct Progress {
    /// Compressed bytes of all input files (known after discovery).
    pub total_bytes: AtomicU64,
    /// Compressed bytes read so far.
    pub bytes_read: AtomicU64,
    /// Rows parsed so far.
    pub rows: AtomicU64,
    /// Set (by a signal handler, say) to stop: [`ingest`] then returns [`IngestError::Stopped`]
    /// within a row group of each part being converted, as after any failure (nothing of it
    /// kept, an earlier ingest's tables untouched).
    pub stop: Arc<AtomicBool>,
}

/// [`IngestError::Stopped`] once `stop` (a [`Progress`]'s or a generation's flag) is set.
pub(crate) fn check_stop(stop: &AtomicBool) -> Result<()> {
    match stop.load(Ordering::Relaxed) {
        true => Err(IngestError::Stopped),
        false => Ok(()),
    }
}

/// What happened to one input part file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartSummary {
    /// Input file name.
    pub input: String,
    /// Output file name (within the table's directory).
    pub output: String,
    /// Rows written.
    pub rows: u64,
    /// Rows skipped as malformed.
    pub bad_rows: u64,
    /// Smallest time key, if any rows.
    pub min_time_us: Option<i64>,
    /// Largest time key, if any rows.
    pub max_time_us: Option<i64>,
    /// True when the rows had to be reordered by an external merge.
    pub merged: bool,
    /// Input bytes (compressed).
    pub bytes_in: u64,
    /// Output bytes.
    pub bytes_out: u64,
    /// CRC-32 of the output file, checked when a run starts or resumes (a bit flipped in a part
    /// of unchanged size changes results; issue 56). Absent in an older ingest's summary, whose
    /// parts are checked by size and rows only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crc32: Option<u32>,
}

/// Totals of one table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableSummary {
    /// Input part files.
    pub files: usize,
    /// Rows written.
    pub rows: u64,
    /// Rows skipped as malformed.
    pub bad_rows: u64,
    /// Input bytes (compressed).
    pub bytes_in: u64,
    /// Output bytes.
    pub bytes_out: u64,
    /// Smallest time key.
    pub min_time_us: Option<i64>,
    /// Largest time key.
    pub max_time_us: Option<i64>,
    /// True when each part starts no earlier than the previous one ends, so reading the parts
    /// in name order yields the whole table in time order.
    pub parts_in_time_order: bool,
    /// Per input file.
    pub parts: Vec<PartSummary>,
}

/// The content of `ingest-summary.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IngestSummary {
    /// cellsim version that wrote it.
    pub version: String,
    /// Trace directory read.
    pub input: String,
    /// Whether malformed rows were skipped.
    pub skip_bad_rows: bool,
    /// Rows per row group.
    pub rows_per_group: usize,
    /// Wall time of the ingest in seconds.
    pub seconds: f64,
    /// Per table, by name.
    pub tables: BTreeMap<String, TableSummary>,
    /// The first few skipped-row errors verbatim.
    pub bad_row_examples: Vec<String>,
}

impl IngestSummary {
    /// Reads `dir/ingest-summary.json`, the marker of a complete ingest (a directory of CSV
    /// parts without it is named as a raw trace).
    pub fn load(dir: &Path) -> Result<IngestSummary> {
        let path = dir.join(SUMMARY_FILE);
        let text = fs::read_to_string(&path).map_err(|source| {
            let parent = dir.parent().filter(|p| p.join(SUMMARY_FILE).is_file());
            let table = dir.file_name().map(|n| n.to_string_lossy().into_owned());
            match (parent, table) {
                (Some(trace), Some(table)) => IngestError::TableDir {
                    path: dir.to_path_buf(),
                    table,
                    trace: trace.to_path_buf(),
                },
                _ if discover(dir, &[]).is_ok() => IngestError::RawTrace {
                    path: dir.to_path_buf(),
                },
                _ => IngestError::NotIngested {
                    path: path.clone(),
                    source,
                },
            }
        })?;
        serde_json::from_str(&text).map_err(|e| IngestError::BadSummary {
            path,
            problem: e.to_string(),
        })
    }

    /// Checks that trace directory `dir` (which this summary was loaded from) holds exactly the
    /// parts it lists, each with the listed size, CRC-32 and row count (from its Parquet footer), and
    /// no other part in a table's directory; the error lists every difference (at most a few
    /// per table).
    pub fn check_parts(&self, dir: &Path) -> Result<()> {
        const SHOWN_PER_TABLE: usize = 3;
        // The CRC-32s first, the parts read in parallel (0.16-0.2 s for the 1.4 GB of a day of
        // the 12.5k cell on 2 cores; bench-results/hardening-2026-11-27.md).
        let recorded: Vec<(PathBuf, u32)> = (self.tables.iter())
            .flat_map(|(table, t)| t.parts.iter().map(move |p| (table, p)))
            .filter_map(|(table, p)| Some((dir.join(table).join(&p.output), p.crc32?)))
            .filter(|(path, _)| path.is_file())
            .collect();
        let crc_now: BTreeMap<PathBuf, u32> = recorded
            .par_iter()
            .map(|(path, _)| Ok((path.clone(), crc32_of_file(path)?)))
            .collect::<Result<_>>()?;
        let mut problems = Vec::new();
        for table in Table::ALL {
            let table_dir = dir.join(table.name());
            let listed = self
                .tables
                .get(table.name())
                .map_or(&[][..], |t| &t.parts[..]);
            let mut found = parquet_names(&table_dir)?;
            let mut table_problems = Vec::new();
            for part in listed {
                let path = table_dir.join(&part.output);
                match found.iter().position(|name| *name == part.output) {
                    Some(at) => {
                        found.swap_remove(at);
                    }
                    None => {
                        table_problems.push(format!("{} is missing", path.display()));
                        continue;
                    }
                }
                let bytes = fs::metadata(&path).map_err(IngestError::io(&path))?.len();
                let changed = |crc32| crc_now.get(&path) != Some(&crc32);
                if bytes == part.bytes_out && part.crc32.is_some_and(changed) {
                    table_problems.push(format!(
                        "{} changed since it was ingested (same size, CRC-32 differs): ingest the trace again",
                        path.display()
                    ));
                    continue;
                }
                if bytes != part.bytes_out {
                    table_problems.push(format!(
                        "{} has {bytes} bytes, {} when ingested",
                        path.display(),
                        part.bytes_out
                    ));
                    continue;
                }
                let rows = footer_rows(&path)?;
                if rows != part.rows {
                    table_problems.push(format!(
                        "{} has {rows} rows, {} when ingested",
                        path.display(),
                        part.rows
                    ));
                }
            }
            found.sort();
            for extra in found {
                let path = table_dir.join(extra);
                table_problems.push(format!("{} is not from the ingest", path.display()));
            }
            let more = table_problems.len().saturating_sub(SHOWN_PER_TABLE);
            table_problems.truncate(SHOWN_PER_TABLE);
            if more > 0 {
                table_problems.push(format!("{more} more in {}", table.name()));
            }
            problems.extend(table_problems);
        }
        match problems.is_empty() {
            true => Ok(()),
            false => Err(IngestError::PartsChanged {
                trace: dir.to_path_buf(),
                problems: problems.join("; "),
            }),
        }
    }

    /// The end of the replayable span: the last finite time of task_events, or of any table when
    /// there is none (2^63-1, "after the trace", is not a time in the span).
    pub fn last_event_us(&self) -> i64 {
        let finite_max = |t: &TableSummary| t.max_time_us.filter(|t| *t < i64::MAX);
        match self.tables.get(Table::TaskEvents.name()) {
            Some(task_events) => finite_max(task_events),
            None => self.tables.values().filter_map(finite_max).max(),
        }
        .unwrap_or(0)
    }
}

/// Names of the `.parquet` files in `dir` (none when it does not exist).
fn parquet_names(dir: &Path) -> Result<Vec<String>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(IngestError::io(dir))? {
        let name = entry.map_err(IngestError::io(dir))?.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".parquet") {
            names.push(name.into_owned());
        }
    }
    Ok(names)
}

/// The row count a Parquet file's footer records.
fn footer_rows(path: &Path) -> Result<u64> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let file = File::open(path).map_err(IngestError::io(path))?;
    let reader = SerializedFileReader::new(file).map_err(IngestError::parquet(path))?;
    Ok(reader.metadata().file_metadata().num_rows().max(0) as u64)
}

/// One part file to convert.
struct Job {
    table: Table,
    input: PathBuf,
    output: PathBuf,
    /// Size of the input file, read once.
    bytes_in: u64,
}

/// Lists `.csv` / `.csv.gz` files of `dir`, sorted by name.
pub fn part_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(IngestError::io(dir))? {
        let path = entry.map_err(IngestError::io(dir))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_file() && (name.ends_with(".csv") || name.ends_with(".csv.gz")) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Tables present in `trace_dir` with their part files; checks the requested ones exist.
fn discover(trace_dir: &Path, wanted: &[Table]) -> Result<Vec<(Table, Vec<PathBuf>)>> {
    if !trace_dir.is_dir() {
        return Err(IngestError::MissingDir {
            path: trace_dir.to_path_buf(),
        });
    }
    let mut found = Vec::new();
    for table in Table::ALL {
        let dir = trace_dir.join(table.name());
        let files = if dir.is_dir() {
            part_files(&dir)?
        } else {
            Vec::new()
        };
        let asked = wanted.contains(&table);
        if files.is_empty() {
            if asked {
                return Err(IngestError::MissingTable {
                    table: table.name().to_string(),
                    path: dir,
                });
            }
        } else if wanted.is_empty() || asked {
            found.push((table, files));
        }
    }
    if found.is_empty() {
        return Err(IngestError::NoTables {
            path: trace_dir.to_path_buf(),
        });
    }
    Ok(found)
}

fn output_name(input: &Path) -> String {
    let name = input.file_name().and_then(|n| n.to_str()).unwrap_or("part");
    let stem = name
        .strip_suffix(".csv.gz")
        .or_else(|| name.strip_suffix(".csv"))
        .unwrap_or(name);
    format!("{stem}.parquet")
}

fn partial_dir(out_dir: &Path, table: Table) -> PathBuf {
    out_dir.join(format!("{}.partial", table.name()))
}

fn writer_properties(rows_per_group: usize) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(rows_per_group))
        .set_created_by(format!("cellsim {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Converts `trace_dir` to Parquet under `out_dir`; see the module doc for layout and guarantees.
pub fn ingest(
    trace_dir: &Path,
    out_dir: &Path,
    options: &IngestOptions,
    progress: &Progress,
) -> Result<IngestSummary> {
    let started = Instant::now();
    let tables = discover(trace_dir, &options.tables)?;
    // A generated scenario's side tables, checked before any work and copied with the tables.
    let side = crate::scenario::side::SideTables::read(trace_dir)?;
    if options.rows_per_group == 0 {
        return Err(IngestError::Config(
            "rows per group must be positive".into(),
        ));
    }
    // An earlier ingest's summary lists its tables, which stay listed: one that cannot be read
    // would lose them, so it is refused before any work (an older cellsim's, or damaged).
    let summary_path = out_dir.join(SUMMARY_FILE);
    let earlier = match summary_path.exists() {
        true => Some(IngestSummary::load(out_dir).map_err(|e| {
            let problem = match e {
                IngestError::BadSummary { problem, .. } => problem,
                other => other.to_string(),
            };
            IngestError::EarlierSummary {
                path: summary_path.clone(),
                problem,
            }
        })?),
        false => None,
    };
    if out_dir.exists() && !out_dir.is_dir() {
        return Err(IngestError::OutIsFile {
            path: out_dir.to_path_buf(),
        });
    }
    // A directory this ingest creates is removed again if it fails: no empty or half-filled
    // OUT is left behind to look like a trace.
    let mut created = CreatedDir((!out_dir.exists()).then_some(out_dir));
    fs::create_dir_all(out_dir).map_err(IngestError::io(out_dir))?;
    let mut jobs = Vec::new();
    let mut total_bytes = 0;
    for (table, files) in &tables {
        let partial = partial_dir(out_dir, *table);
        if partial.exists() {
            fs::remove_dir_all(&partial).map_err(IngestError::io(&partial))?;
        }
        fs::create_dir_all(&partial).map_err(IngestError::io(&partial))?;
        for input in files {
            let bytes_in = fs::metadata(input).map_err(IngestError::io(input))?.len();
            total_bytes += bytes_in;
            jobs.push(Job {
                table: *table,
                output: partial.join(output_name(input)),
                input: input.clone(),
                bytes_in,
            });
        }
    }
    progress.total_bytes.store(total_bytes, Ordering::Relaxed);
    let examples = Mutex::new(Vec::new());
    // Biggest files first so the pool is not left waiting on one large part at the end, and one
    // part per work item: rayon's default splitting would hand a thread a run of big parts to do
    // sequentially while the other, done with the small ones, has nothing left to steal.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].bytes_in));
    let results: Vec<(usize, Result<PartSummary>)> = order
        .par_iter()
        .with_max_len(1)
        .map(|&i| (i, convert_part(&jobs[i], options, progress, &examples)))
        .collect();
    let mut parts: Vec<Option<PartSummary>> = vec![None; jobs.len()];
    let mut first_error = None;
    for (i, result) in results {
        match result {
            Ok(p) => parts[i] = Some(p),
            Err(e) if first_error.is_none() => first_error = Some((i, e)),
            Err(_) => {}
        }
    }
    if let Some((_, e)) = first_error {
        for (table, _) in &tables {
            let _ = fs::remove_dir_all(partial_dir(out_dir, *table));
        }
        return Err(e);
    }
    let mut summary_tables = BTreeMap::new();
    let mut parts = parts.into_iter().map(|p| p.expect("every job succeeded"));
    for (table, files) in &tables {
        let table_parts: Vec<PartSummary> = parts.by_ref().take(files.len()).collect();
        summary_tables.insert(table.name().to_string(), table_summary(table_parts));
    }
    // The tables an earlier ingest into `out_dir` finished stay listed unless replaced (tables
    // may be ingested a few at a time). Until here they and their summary are untouched.
    if let Some(earlier) = earlier {
        for (name, table) in earlier.tables {
            if out_dir.join(&name).is_dir() {
                summary_tables.entry(name).or_insert(table);
            }
        }
        fs::remove_file(&summary_path).map_err(IngestError::io(&summary_path))?;
    }
    for (table, _) in &tables {
        let final_dir = out_dir.join(table.name());
        if final_dir.exists() {
            fs::remove_dir_all(&final_dir).map_err(IngestError::io(&final_dir))?;
        }
        fs::rename(partial_dir(out_dir, *table), &final_dir)
            .map_err(IngestError::io(&final_dir))?;
    }
    let side_dir = out_dir.join(crate::scenario::side::DIR);
    if side_dir.exists() {
        fs::remove_dir_all(&side_dir).map_err(IngestError::io(&side_dir))?;
    }
    if let Some(side) = side {
        side.write(out_dir)?;
    }
    let summary = IngestSummary {
        version: env!("CARGO_PKG_VERSION").to_string(),
        input: trace_dir.display().to_string(),
        skip_bad_rows: options.skip_bad_rows,
        rows_per_group: options.rows_per_group,
        seconds: started.elapsed().as_secs_f64(),
        tables: summary_tables,
        bad_row_examples: examples.into_inner().unwrap_or_default(),
    };
    write_json_atomically(&summary_path, &summary)?;
    created.0 = None;
    Ok(summary)
}

/// A directory removed with everything in it when this is dropped, unless taken out first.
struct CreatedDir<'a>(Option<&'a Path>);

impl Drop for CreatedDir<'_> {
    fn drop(&mut self) {
        if let Some(dir) = self.0 {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

fn table_summary(parts: Vec<PartSummary>) -> TableSummary {
    let mut in_order = true;
    let mut last_max: Option<i64> = None;
    for p in &parts {
        if let (Some(prev), Some(min)) = (last_max, p.min_time_us)
            && min < prev
        {
            in_order = false;
        }
        last_max = p.max_time_us.or(last_max);
    }
    TableSummary {
        files: parts.len(),
        rows: parts.iter().map(|p| p.rows).sum(),
        bad_rows: parts.iter().map(|p| p.bad_rows).sum(),
        bytes_in: parts.iter().map(|p| p.bytes_in).sum(),
        bytes_out: parts.iter().map(|p| p.bytes_out).sum(),
        min_time_us: parts.iter().filter_map(|p| p.min_time_us).min(),
        max_time_us: parts.iter().filter_map(|p| p.max_time_us).max(),
        parts_in_time_order: in_order,
        parts,
    }
}

/// Writes `value` as pretty JSON to `path`, whole or not at all ([`crate::atomic_file`]).
pub fn write_json_atomically<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value).expect("summaries serialize");
    crate::atomic_file::write_atomically(path, |w| w.write_all((text + "\n").as_bytes())).map_err(
        |e| IngestError::Io {
            path: e.path,
            source: e.source,
        },
    )
}

/// Converts one part file; writes `<output>.tmp` then renames it to `<output>`.
fn convert_part(
    job: &Job,
    options: &IngestOptions,
    progress: &Progress,
    examples: &Mutex<Vec<String>>,
) -> Result<PartSummary> {
    check_stop(&progress.stop)?;
    let path = job.input.as_path();
    let tmp = job.output.with_extension("parquet.tmp");
    let parquet_err = IngestError::parquet;
    let file = File::create(&tmp).map_err(IngestError::io(&tmp))?;
    let props = writer_properties(options.rows_per_group);
    let mut writer = ArrowWriter::try_new(file, job.table.arrow_schema(), Some(props.clone()))
        .map_err(parquet_err(&tmp))?;
    let mut reader = PartReader::open(path, &progress.bytes_read)?;
    let mut record = ByteRecord::new();
    let mut chunk = Chunk::new(job.table, options.rows_per_group);
    let (mut rows, mut bad_rows) = (0u64, 0u64);
    let (mut min_time, mut max_time) = (None::<i64>, None::<i64>);
    let mut in_order = true;
    let mut write_chunk = |chunk: &mut Chunk, writer: &mut ArrowWriter<File>| -> Result<()> {
        let times = chunk.times().to_vec();
        let (lo, hi) = (*times.iter().min().unwrap(), *times.iter().max().unwrap());
        if max_time.is_some_and(|m| lo < m) {
            in_order = false;
        }
        min_time = Some(min_time.map_or(lo, |m| m.min(lo)));
        max_time = Some(max_time.map_or(hi, |m| m.max(hi)));
        check_stop(&progress.stop)?;
        let batch = sort_chunk(chunk.finish(), &times, path)?;
        progress
            .rows
            .fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
        writer.write(&batch).map_err(parquet_err(&tmp))?;
        writer.flush().map_err(parquet_err(&tmp))
    };
    while let Some(line) = reader.next(&mut record)? {
        match chunk.push(&record, path, line) {
            Ok(()) => rows += 1,
            Err(e) if options.skip_bad_rows && e.is_row_error() => {
                bad_rows += 1;
                let mut kept = examples.lock().expect("no panics while holding the lock");
                if kept.len() < BAD_ROW_EXAMPLES {
                    kept.push(e.to_string());
                }
            }
            Err(e) => {
                drop(writer);
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
        }
        if chunk.len() == options.rows_per_group {
            write_chunk(&mut chunk, &mut writer)?;
        }
    }
    if !chunk.is_empty() {
        write_chunk(&mut chunk, &mut writer)?;
    }
    writer.close().map_err(parquet_err(&tmp))?;
    let merged = !in_order;
    if merged {
        let merged_tmp = job.output.with_extension("parquet.merge");
        let file = File::create(&merged_tmp).map_err(IngestError::io(&merged_tmp))?;
        let mut out = ArrowWriter::try_new(file, job.table.arrow_schema(), Some(props))
            .map_err(parquet_err(&merged_tmp))?;
        merge_row_groups(&tmp, &mut out, options.rows_per_group, 8192)?;
        out.close().map_err(parquet_err(&merged_tmp))?;
        fs::remove_file(&tmp).map_err(IngestError::io(&tmp))?;
        fs::rename(&merged_tmp, &job.output).map_err(IngestError::io(&job.output))?;
    } else {
        fs::rename(&tmp, &job.output).map_err(IngestError::io(&job.output))?;
    }
    let written = fs::read(&job.output).map_err(IngestError::io(&job.output))?;
    let (bytes_out, crc32) = (written.len() as u64, crc32fast::hash(&written));
    Ok(PartSummary {
        input: path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        output: output_name(path),
        rows,
        bad_rows,
        min_time_us: min_time,
        max_time_us: max_time,
        merged,
        bytes_in: job.bytes_in,
        bytes_out,
        crc32: Some(crc32),
    })
}

/// CRC-32 of the file at `path`, read in 1 MiB pieces.
pub fn crc32_of_file(path: &Path) -> Result<u32> {
    let file = File::open(path).map_err(IngestError::io(path))?;
    crc32_and_len(file)
        .map(|(crc, _)| crc)
        .map_err(IngestError::io(path))
}

/// CRC-32 and length of what `reader` yields, read in 1 MiB pieces (never the whole in memory):
/// the one checksum pass of the trace's parts, a run's output parts and its samples file.
pub fn crc32_and_len(mut reader: impl std::io::Read) -> std::io::Result<(u32, u64)> {
    let (mut hasher, mut buf, mut len) = (crc32fast::Hasher::new(), vec![0u8; 1 << 20], 0u64);
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok((hasher.finalize(), len)),
            Ok(n) => {
                hasher.update(&buf[..n]);
                len += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}
