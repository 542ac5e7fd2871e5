//! A scenario's side tables: what the seeds' experiments give a task, a machine or a datacenter
//! that the GCD layout has no column for. Plain CSV with a header, in `scenario/` beside the
//! GCD tables of a generated scenario, copied by `cellsim ingest` into the ingested directory
//! after it parses them, and read by the policies that use them (`engine::scenario`).
//!
//! - `tasks.csv`: `job_id,task_index,length_mi,deadline_kind,deadline_us,weight,phase`: the
//!   task's length in million instructions (seed 003; empty when the scenario gives run times),
//!   its job's deadline (`none`, `soft` or `hard`, seed 004; `deadline_us` in trace time, empty
//!   for `none`), the job's weight (priority, seeds 003 and 004) and the task's phase (`map`,
//!   or `reduce`: it may start only once every map task of its job has ended, seed 004's
//!   MapReduce jobs). A file of an older cellsim without the `phase` column reads as all map.
//! - `machines.csv`: `machine_id,datacenter,mips`: the datacenter a machine belongs to and its
//!   speed (seed 003).
//! - `datacenters.csv`: `datacenter,latency_us`: each datacenter's network latency (seed 003).
//!
//! Invariants: `tasks` sorted by (job ID, task index), each once, a job's reduce tasks after
//! all its map tasks (so a job's reduce tasks are those from one task index on); `machines` sorted by machine
//! ID, each once; every machine's datacenter is listed in `datacenters`. A file that breaks one
//! is refused with its path and line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{IngestError, Result};

/// The directory of the side tables, in a trace directory.
pub const DIR: &str = "scenario";
/// Whether the trace directory `trace_dir` holds a scenario's side tables (a scenario's trace:
/// its work has an end).
pub fn present(trace_dir: &std::path::Path) -> bool {
    trace_dir.join(DIR).is_dir()
}

/// The file names, in the order they are written and read.
pub const FILES: [&str; 3] = ["tasks.csv", "machines.csv", "datacenters.csv"];

const TASK_HEADER: &str = "job_id,task_index,length_mi,deadline_kind,deadline_us,weight,phase";
/// `tasks.csv` as cellsim wrote it before the `phase` column (every task a map task).
const TASK_HEADER_WITHOUT_PHASE: &str =
    "job_id,task_index,length_mi,deadline_kind,deadline_us,weight";
const MACHINE_HEADER: &str = "machine_id,datacenter,mips";
const DATACENTER_HEADER: &str = "datacenter,latency_us";

/// A job's deadline (seed 004, section III).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// Resources are equally useful whenever they come.
    None,
    /// Useful after the deadline, with an exponentially decaying value.
    Soft(i64),
    /// Must be met: the job needs all its resources before it.
    Hard(i64),
}

impl Deadline {
    fn kind(&self) -> &'static str {
        match self {
            Deadline::None => "none",
            Deadline::Soft(_) => "soft",
            Deadline::Hard(_) => "hard",
        }
    }

    /// The deadline, microseconds of trace time (`None` for no deadline).
    pub fn at_us(&self) -> Option<i64> {
        match *self {
            Deadline::None => None,
            Deadline::Soft(t) | Deadline::Hard(t) => Some(t),
        }
    }
}

/// A task's phase in a MapReduce job (seed 004's Hadoop jobs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// A map task (and every task of a job that is not MapReduce).
    #[default]
    Map,
    /// A reduce task: it may start only once every map task of its job has ended.
    Reduce,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Map => "map",
            Phase::Reduce => "reduce",
        }
    }
}

/// A scenario's side tables, as columns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideTables {
    /// (job ID, task index) per task row.
    pub task_key: Vec<(u64, u32)>,
    /// Length in million instructions (`None`: not given).
    pub length_mi: Vec<Option<u64>>,
    /// Its job's deadline.
    pub deadline: Vec<Deadline>,
    /// Its job's weight.
    pub weight: Vec<f64>,
    /// Its phase.
    pub phase: Vec<Phase>,
    /// Machine ID per machine row.
    pub machine_id: Vec<u64>,
    /// Its datacenter.
    pub datacenter: Vec<u32>,
    /// Its speed, MIPS.
    pub mips: Vec<u64>,
    /// Network latency per datacenter (index = datacenter), microseconds.
    pub latency_us: Vec<i64>,
}

impl SideTables {
    /// Job `job_id`'s weight and deadline (those of its first task row; weight 1 and no
    /// deadline for a job the tables lack).
    pub fn job(&self, job_id: u64) -> (f64, Deadline) {
        let row = self.task_key.partition_point(|k| k.0 < job_id);
        match self.task_key.get(row) {
            Some(k) if k.0 == job_id => (self.weight[row], self.deadline[row]),
            _ => (1.0, Deadline::None),
        }
    }

    /// True when some job has reduce tasks (a policy must then keep them until their maps end).
    pub fn has_reduce_tasks(&self) -> bool {
        self.phase.contains(&Phase::Reduce)
    }

    /// Each job with reduce tasks and the task index they start from, by job ID.
    pub fn reduce_starts(&self) -> Vec<(u64, u32)> {
        let mut starts: Vec<(u64, u32)> = Vec::new();
        for (row, &(job, index)) in self.task_key.iter().enumerate() {
            let new_job = starts.last().is_none_or(|s| s.0 != job);
            if self.phase[row] == Phase::Reduce && new_job {
                starts.push((job, index));
            }
        }
        starts
    }

    /// The row of task (job, task index).
    pub fn task(&self, job_id: u64, task_index: u32) -> Option<usize> {
        self.task_key.binary_search(&(job_id, task_index)).ok()
    }

    /// The row of machine `machine_id`.
    pub fn machine(&self, machine_id: u64) -> Option<usize> {
        self.machine_id.binary_search(&machine_id).ok()
    }

    /// Writes the three files into `dir/scenario/`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let dir = dir.join(DIR);
        std::fs::create_dir_all(&dir).map_err(IngestError::io(&dir))?;
        let mut tasks = format!("{TASK_HEADER}\n");
        for i in 0..self.task_key.len() {
            let (job, index) = self.task_key[i];
            let length = self.length_mi[i].map(|l| l.to_string()).unwrap_or_default();
            let d = &self.deadline[i];
            let at = d.at_us().map(|t| t.to_string()).unwrap_or_default();
            let kind = d.kind();
            let weight = self.weight[i];
            let phase = self.phase[i].name();
            let _ = writeln!(tasks, "{job},{index},{length},{kind},{at},{weight},{phase}");
        }
        let mut machines = format!("{MACHINE_HEADER}\n");
        for i in 0..self.machine_id.len() {
            let (m, dc, mips) = (self.machine_id[i], self.datacenter[i], self.mips[i]);
            let _ = writeln!(machines, "{m},{dc},{mips}");
        }
        let mut datacenters = format!("{DATACENTER_HEADER}\n");
        for (dc, latency) in self.latency_us.iter().enumerate() {
            let _ = writeln!(datacenters, "{dc},{latency}");
        }
        for (name, text) in FILES.iter().zip([tasks, machines, datacenters]) {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(IngestError::io(&path))?;
        }
        Ok(())
    }

    /// Reads `dir/scenario/`; `Ok(None)` when `dir` has none.
    pub fn read(dir: &Path) -> Result<Option<SideTables>> {
        let dir = dir.join(DIR);
        if !dir.is_dir() {
            return Ok(None);
        }
        let mut t = SideTables::default();
        let path = dir.join(FILES[2]);
        for (line, f) in rows(&path, &[DATACENTER_HEADER])? {
            let dc: u32 = field(&path, line, &f, 0, "datacenter")?;
            if dc as usize != t.latency_us.len() {
                return Err(bad(
                    &path,
                    line,
                    1,
                    "datacenter",
                    "datacenters must be listed 0, 1, 2, ... in order",
                ));
            }
            t.latency_us.push(field(&path, line, &f, 1, "latency_us")?);
        }
        let path = dir.join(FILES[1]);
        for (line, f) in rows(&path, &[MACHINE_HEADER])? {
            let id: u64 = field(&path, line, &f, 0, "machine_id")?;
            if t.machine_id.last().is_some_and(|&last| last >= id) {
                return Err(bad(
                    &path,
                    line,
                    1,
                    "machine_id",
                    "machines must be sorted by ID, each once",
                ));
            }
            let dc: u32 = field(&path, line, &f, 1, "datacenter")?;
            if dc as usize >= t.latency_us.len() {
                return Err(bad(
                    &path,
                    line,
                    2,
                    "datacenter",
                    format!("datacenter {dc} is not in {}", FILES[2]),
                ));
            }
            t.machine_id.push(id);
            t.datacenter.push(dc);
            t.mips.push(field(&path, line, &f, 2, "mips")?);
        }
        let path = dir.join(FILES[0]);
        for (line, f) in rows(&path, &[TASK_HEADER, TASK_HEADER_WITHOUT_PHASE])? {
            let key = (
                field(&path, line, &f, 0, "job_id")?,
                field(&path, line, &f, 1, "task_index")?,
            );
            if t.task_key.last().is_some_and(|&last| last >= key) {
                return Err(bad(
                    &path,
                    line,
                    1,
                    "job_id",
                    "tasks must be sorted by (job_id, task_index), each once",
                ));
            }
            let length_mi = if f[2].is_empty() {
                None
            } else {
                Some(field(&path, line, &f, 2, "length_mi")?)
            };
            let at = || field::<i64>(&path, line, &f, 4, "deadline_us");
            let deadline = match f[3].as_str() {
                "none" if f[4].is_empty() => Deadline::None,
                "soft" => Deadline::Soft(at()?),
                "hard" => Deadline::Hard(at()?),
                other => {
                    let problem = format!(
                        "expected none (with no deadline_us), soft or hard, found {other:?}"
                    );
                    return Err(bad(&path, line, 4, "deadline_kind", problem));
                }
            };
            let weight: f64 = field(&path, line, &f, 5, "weight")?;
            if !(weight.is_finite() && weight > 0.0) {
                return Err(bad(
                    &path,
                    line,
                    6,
                    "weight",
                    format!("must be positive, found {weight}"),
                ));
            }
            let phase = match f.get(6).map(String::as_str) {
                None | Some("map") => Phase::Map,
                Some("reduce") => Phase::Reduce,
                Some(other) => {
                    let problem = format!("expected map or reduce, found {other:?}");
                    return Err(bad(&path, line, 7, "phase", problem));
                }
            };
            let same_job = t.task_key.last().is_some_and(|last| last.0 == key.0);
            if same_job && phase == Phase::Map && t.phase.last() == Some(&Phase::Reduce) {
                return Err(bad(
                    &path,
                    line,
                    7,
                    "phase",
                    "a job's map tasks must come before its reduce tasks (by task_index)",
                ));
            }
            t.task_key.push(key);
            t.phase.push(phase);
            t.length_mi.push(length_mi);
            t.deadline.push(deadline);
            t.weight.push(weight);
        }
        Ok(Some(t))
    }
}

fn bad(
    path: &Path,
    line: u64,
    column: usize,
    name: &'static str,
    problem: impl Into<String>,
) -> IngestError {
    IngestError::BadField {
        path: path.to_path_buf(),
        line,
        column,
        name,
        problem: problem.into(),
    }
}

/// The rows of a side table after its header (one of `headers`, the current first), as
/// (1-based line, fields), read by the csv crate (quoting and line ends as any CSV writer
/// leaves them).
fn rows(path: &PathBuf, headers: &[&str]) -> Result<Vec<(u64, Vec<String>)>> {
    let text = std::fs::read(path).map_err(IngestError::io(path))?;
    // A record's line from its start byte: the csv crate's own line count is off by one after
    // CRLF line ends (BurntSushi/rust-csv#395: it consumes the `\r` only, so a record "starts"
    // at the `\n` before it, which is why a line end at the start byte counts).
    let line_ends: Vec<usize> = memchr::memchr_iter(b'\n', &text).collect();
    let line_at = |byte: u64| line_ends.partition_point(|&end| (end as u64) <= byte) as u64 + 1;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(&text[..]);
    let mut records = reader.records();
    let first = records.next().transpose().map_err(|e| csv_error(path, e))?;
    let first = first.map(|r| r.iter().collect::<Vec<_>>().join(","));
    let Some(header) = headers.iter().find(|&&h| first.as_deref() == Some(h)) else {
        return Err(bad(
            path,
            1,
            1,
            "header",
            format!("expected the header {:?}", headers[0]),
        ));
    };
    let expected = header.split(',').count();
    let mut out = Vec::new();
    for record in records {
        let record = record.map_err(|e| csv_error(path, e))?;
        let line = record.position().map_or(0, |p| line_at(p.byte()));
        if record.len() != expected {
            return Err(IngestError::ColumnCount {
                path: path.clone(),
                line,
                expected,
                found: record.len(),
            });
        }
        out.push((line, record.iter().map(str::to_string).collect()));
    }
    Ok(out)
}

/// A side table the csv crate cannot read (unreadable file, invalid UTF-8), naming the file and
/// the line.
fn csv_error(path: &Path, e: csv::Error) -> IngestError {
    let line = e.position().map_or(0, |p| p.line());
    match e.into_kind() {
        csv::ErrorKind::Io(source) => IngestError::io(path)(source),
        other => bad(path, line, 1, "row", format!("{other:?}")),
    }
}

fn field<T: std::str::FromStr>(
    path: &Path,
    line: u64,
    f: &[String],
    i: usize,
    name: &'static str,
) -> Result<T> {
    f[i].parse()
        .map_err(|_| bad(path, line, i + 1, name, format!("cannot read {:?}", f[i])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SideTables {
        SideTables {
            task_key: vec![(1, 0), (1, 1), (2, 0)],
            length_mi: vec![Some(1_333_293), None, Some(7)],
            deadline: vec![Deadline::Hard(5_000_000), Deadline::Soft(9), Deadline::None],
            weight: vec![1.0, 2.5, 3.0],
            phase: vec![Phase::Map, Phase::Reduce, Phase::Map],
            machine_id: vec![10, 11],
            datacenter: vec![0, 1],
            mips: vec![1_000, 2_000],
            latency_us: vec![1_500_000, 800_000],
        }
    }

    #[test]
    fn round_trips_and_looks_up() {
        let dir = tempfile::tempdir().unwrap();
        let t = sample();
        t.write(dir.path()).unwrap();
        let back = SideTables::read(dir.path()).unwrap().unwrap();
        assert_eq!(back, t);
        assert_eq!(back.task(1, 1), Some(1));
        assert_eq!(back.task(3, 0), None);
        assert_eq!(back.machine(11), Some(1));
        assert_eq!(SideTables::read(&dir.path().join("none")).unwrap(), None);
        assert!(back.has_reduce_tasks());
        assert_eq!(back.reduce_starts(), [(1, 1)]);
    }

    /// A side table as a spreadsheet or pandas saves it (issue 56: `split(',')` read a quoted
    /// field as its quotes, a CRLF line's last field with its `\r`): quoted fields and CRLF
    /// line ends read as the plain file does, and a bad field is still named by its line.
    #[test]
    fn quoted_fields_and_crlf_lines_read_as_plain_ones() {
        let dir = tempfile::tempdir().unwrap();
        let t = sample();
        t.write(dir.path()).unwrap();
        let path = dir.path().join(DIR).join(FILES[1]);
        let plain = std::fs::read_to_string(&path).unwrap();
        let mut lines = plain.lines();
        let header = lines.next().unwrap();
        let quoted: Vec<String> = lines
            .map(|l| {
                l.split(',')
                    .map(|f| format!("\"{f}\""))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect();
        std::fs::write(&path, format!("{header}\r\n{}\r\n", quoted.join("\r\n"))).unwrap();
        assert_eq!(SideTables::read(dir.path()).unwrap().unwrap(), t);
        std::fs::write(
            &path,
            format!("{header}\r\n\"10\",0,1000\r\n\"x\",1,2000\r\n"),
        )
        .unwrap();
        let e = SideTables::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("machines.csv:3: column 1 (machine_id)"), "{e}");
    }

    /// A `tasks.csv` written before the `phase` column reads as map tasks only.
    #[test]
    fn tasks_without_a_phase_column_are_map_tasks() {
        let dir = tempfile::tempdir().unwrap();
        sample().write(dir.path()).unwrap();
        let path = dir.path().join(DIR).join(FILES[0]);
        let old = format!("{TASK_HEADER_WITHOUT_PHASE}\n1,0,,hard,5000000,1\n1,1,,none,,2.5\n");
        std::fs::write(&path, old).unwrap();
        let back = SideTables::read(dir.path()).unwrap().unwrap();
        assert_eq!(back.phase, [Phase::Map, Phase::Map]);
        assert!(!back.has_reduce_tasks());
        assert_eq!(back.deadline[0], Deadline::Hard(5_000_000));
    }

    /// Each broken file is refused with its path, line and column.
    #[test]
    fn bad_rows_are_named_by_file_and_line() {
        let cases = [
            (
                0,
                "1,0,,late,,1,map",
                "tasks.csv:2: column 4 (deadline_kind)",
            ),
            (0, "1,0,,hard,,1,map", "tasks.csv:2: column 5 (deadline_us)"),
            (0, "1,0,,none,,0,map", "tasks.csv:2: column 6 (weight)"),
            (0, "1,0,,none,,1,shuffle", "tasks.csv:2: column 7 (phase)"),
            (
                0,
                "1,0,,none,,1,reduce\n1,1,,none,,1,map",
                "tasks.csv:3: column 7 (phase)",
            ),
            (0, "1,0,,none,", "tasks.csv:2: expected 7 columns, found 5"),
            (1, "5,7,100", "machines.csv:2: column 2 (datacenter)"),
            (2, "1,10", "datacenters.csv:2: column 1 (datacenter)"),
        ];
        for (file, row, expected) in cases {
            let dir = tempfile::tempdir().unwrap();
            sample().write(dir.path()).unwrap();
            let path = dir.path().join(DIR).join(FILES[file]);
            let header = std::fs::read_to_string(&path).unwrap();
            let header = header.lines().next().unwrap();
            std::fs::write(&path, format!("{header}\n{row}\n")).unwrap();
            let e = SideTables::read(dir.path()).unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }
}
