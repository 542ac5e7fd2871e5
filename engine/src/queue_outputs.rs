//! The tables every queueing policy writes (the greedy placers, `omniscient`, a controller's
//! placer): `tasks/`, one row per task run that ended, with its submit, start and end times and
//! queueing time; and `jobs/`, one row per job once none of its tasks is pending or running
//! (makespan, flowtime, and, for a scenario with deadlines, the deadline and the latency).
//!
//! A job's makespan is from its first submission to its last end; its flowtime is the sum over
//! its task runs of the time each spent in the system (end - submit: waiting plus running,
//! seed 003's "total time that a job spends in the system"); its queue time the longest of its
//! runs' (when its last task started: the Sparrow paper's job wait); its latency is its last end minus
//! its deadline (seed 004: negative when met). Weight and deadline come from the run's
//! [`JobTerms`] (a scenario's side tables or the `[deadlines]` model; weight 1 and no deadline
//! without them).
//!
//! Queue times count from the task's submission, or from the trace window's start for a task of
//! the trace's initial state (submitted before the window: GCD's t = 0 tasks), when the run's
//! policy first saw it: their initial placement.
//!
//! Invariant: `open` holds one entry per job with a task submitted and not yet ended, by job ID,
//! with the count of its runs still open (submissions minus ends); a job's row is written in the
//! tick its count returns to 0. Jobs still open when the run ends have no row.

use std::collections::BTreeMap;
use std::path::Path;

use ingest::scenario::side::Deadline;
use serde::{Deserialize, Serialize};

use crate::cell::Cell;
use crate::deadlines::JobTerms;
use crate::error::Result;
use crate::policy::{ColumnSpec, ColumnType, TableRows, TableSpec, Value};
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

const TASK_COLUMNS: [ColumnSpec; 7] = [
    ColumnSpec::new("job_id", ColumnType::U64),
    ColumnSpec::new("task_index", ColumnType::U32),
    ColumnSpec::new("submit_us", ColumnType::I64),
    // The end of the tick the task was placed in; null when it ended while waiting.
    ColumnSpec::new("start_us", ColumnType::I64).nullable(),
    ColumnSpec::new("end_us", ColumnType::I64),
    // start_us - submit_us (from the window's start for a task of the trace's t = 0 state).
    ColumnSpec::new("queue_us", ColumnType::I64)
        .nullable()
        .summarised(),
    // The machine it ran on (the trace's machine ID); null when it ended while waiting.
    ColumnSpec::new("machine_id", ColumnType::U64).nullable(),
];

const JOB_COLUMNS: [ColumnSpec; 11] = [
    ColumnSpec::new("job_id", ColumnType::U64),
    ColumnSpec::new("tasks", ColumnType::U32),
    ColumnSpec::new("submit_us", ColumnType::I64),
    ColumnSpec::new("end_us", ColumnType::I64),
    ColumnSpec::new("makespan_us", ColumnType::I64).summarised(),
    ColumnSpec::new("flowtime_us", ColumnType::I64).summarised(),
    // The longest queue time of its task runs (when its last task started, from its
    // submission): the job's wait (the Sparrow paper's per-job measure); null when none ran.
    ColumnSpec::new("queue_us", ColumnType::I64)
        .nullable()
        .summarised(),
    ColumnSpec::new("weight", ColumnType::F64),
    ColumnSpec::new("deadline_us", ColumnType::I64).nullable(),
    // True for a hard deadline, false for a soft one, null without.
    ColumnSpec::new("deadline_hard", ColumnType::Bool).nullable(),
    ColumnSpec::new("latency_us", ColumnType::I64)
        .nullable()
        .summarised(),
];

/// The two tables, for [`Policy::tables`](crate::policy::Policy::tables) (in this order).
pub const TABLES: [TableSpec; 2] = [
    TableSpec {
        name: "tasks",
        columns: &TASK_COLUMNS,
    },
    TableSpec {
        name: "jobs",
        columns: &JOB_COLUMNS,
    },
];

/// When a task submitted at `submit_us` became known to the simulated scheduler: then, or at
/// the trace window's start for a task of the trace's initial state (GCD's tasks running at
/// t = 0 carry submission times before the window, when no policy of the run existed).
fn known_at(submit_us: i64) -> i64 {
    submit_us.max(ingest::codes::TRACE_START_US)
}

/// A job with runs still open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct OpenJob {
    /// Runs submitted and not ended.
    open: u32,
    /// Runs ended.
    ended: u32,
    first_submit_us: i64,
    last_end_us: i64,
    flowtime_us: i64,
    /// The longest queue time of its runs that started (-1: none yet).
    queue_us: i64,
}

/// The rows of both tables and the jobs still open (module doc).
#[derive(Debug, Clone, Default)]
pub struct QueueOutputs {
    terms: JobTerms,
    open: BTreeMap<u64, OpenJob>,
    task_rows: Vec<Value>,
    job_rows: Vec<Value>,
}

impl QueueOutputs {
    /// The outputs of `run` of the trace in `trace_dir` (its job terms: [`JobTerms::of_trace`]).
    pub fn of_run(run: &crate::policy::RunSettings, trace_dir: &Path) -> Result<QueueOutputs> {
        Ok(QueueOutputs::new(JobTerms::of_trace(
            &run.deadlines,
            trace_dir,
            None,
        )?))
    }

    /// The jobs' terms (priorities, deadlines and, through them, MapReduce phases).
    pub fn terms(&self) -> &JobTerms {
        &self.terms
    }

    /// The outputs with the jobs' `terms`.
    pub fn new(terms: JobTerms) -> QueueOutputs {
        QueueOutputs {
            terms,
            ..QueueOutputs::default()
        }
    }

    /// Counts this tick's submissions and ends (call before the cell changes in the tick).
    pub fn record(&mut self, cell: &Cell, events: &TickEvents) {
        for &t in &events.submitted {
            let (job, submit) = (
                cell.tasks.job_id()[t.index()],
                cell.tasks.submit_us()[t.index()],
            );
            let j = self.open.entry(job).or_insert(OpenJob {
                open: 0,
                ended: 0,
                first_submit_us: submit,
                last_end_us: submit,
                flowtime_us: 0,
                queue_us: -1,
            });
            j.open += 1;
            j.first_submit_us = j.first_submit_us.min(submit);
        }
        for e in &events.ended {
            let start = e.start_us.map_or(Value::Null, Value::I64);
            let queue = e
                .start_us
                .map_or(Value::Null, |s| Value::I64(s - known_at(e.submit_us)));
            self.task_rows.extend([
                Value::U64(e.job_id),
                Value::U32(e.task_index),
                Value::I64(e.submit_us),
                start,
                Value::I64(e.end_us),
                queue,
                match (e.start_us, cell.nodes.machine_id().get(e.node.index())) {
                    (Some(_), Some(&machine)) => Value::U64(machine),
                    _ => Value::Null,
                },
            ]);
            let Some(j) = self.open.get_mut(&e.job_id) else {
                continue; // submitted before the policy's first tick saw it: no row
            };
            j.open = j.open.saturating_sub(1);
            j.ended += 1;
            j.last_end_us = j.last_end_us.max(e.end_us);
            j.flowtime_us += e.end_us - e.submit_us;
            if let Some(start) = e.start_us {
                j.queue_us = j.queue_us.max(start - known_at(e.submit_us));
            }
            if j.open == 0 {
                let j = *j;
                self.open.remove(&e.job_id);
                self.job_row(e.job_id, &j);
            }
        }
    }

    fn job_row(&mut self, job_id: u64, j: &OpenJob) {
        let (weight, deadline) = self.terms.job(job_id);
        let at = deadline.at_us();
        self.job_rows.extend([
            Value::U64(job_id),
            Value::U32(j.ended),
            Value::I64(j.first_submit_us),
            Value::I64(j.last_end_us),
            Value::I64(j.last_end_us - j.first_submit_us),
            Value::I64(j.flowtime_us),
            if j.queue_us >= 0 {
                Value::I64(j.queue_us)
            } else {
                Value::Null
            },
            Value::F64(weight),
            at.map_or(Value::Null, Value::I64),
            match deadline {
                Deadline::None => Value::Null,
                Deadline::Soft(_) => Value::Bool(false),
                Deadline::Hard(_) => Value::Bool(true),
            },
            at.map_or(Value::Null, |d| Value::I64(j.last_end_us - d)),
        ]);
    }

    /// Hands this tick's rows over (tables 0 and 1 of [`TABLES`]).
    pub fn take_rows(&mut self, out: &mut TableRows) {
        out.push(0, &self.task_rows);
        out.push(1, &self.job_rows);
        self.task_rows.clear();
        self.job_rows.clear();
    }

    /// Saves the open jobs.
    pub fn save_state(&self, w: &mut SectionWriter) {
        let open: Vec<(u64, OpenJob)> = self.open.iter().map(|(k, v)| (*k, *v)).collect();
        w.serde(&open);
    }

    /// Restores the open jobs.
    pub fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        let open: Vec<(u64, OpenJob)> = r.serde()?;
        self.open = open.into_iter().collect();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ingest::scenario::side::SideTables;

    use super::*;
    use crate::replay::EndedTask;

    fn ended(job_id: u64, task_index: u32, submit_us: i64, start: i64, end_us: i64) -> EndedTask {
        EndedTask {
            task: crate::ids::TaskIdx(0),
            job_id,
            task_index,
            submit_us,
            start_us: Some(start),
            end_us,
            node: crate::ids::NodeIdx(0),
            freed: [0; 4],
        }
    }

    /// By hand, times after the window's start T0: job 7's two tasks are submitted at T0 and
    /// T0 + 10 and end at T0 + 50 (started at T0 + 20) and T0 + 80 (started at T0 + 30):
    /// makespan 80, flowtime 50 + 70 = 120, queue time the longer wait, 20; with a hard
    /// deadline at T0 + 60, a latency of 20. Its row is written when the second ends, not
    /// before. A task of the trace's initial state (submitted at 5, before the window) started
    /// at T0 + 7 waited 7.
    #[test]
    fn a_job_row_when_its_last_task_ends() {
        let t0 = ingest::codes::TRACE_START_US;
        let mut cell = Cell::default();
        let a = cell.tasks.alloc(7, 0, 0, t0);
        let b = cell.tasks.alloc(7, 1, 0, t0 + 10);
        let side = SideTables {
            task_key: vec![(7, 0), (7, 1)],
            length_mi: vec![None; 2],
            deadline: vec![Deadline::Hard(t0 + 60); 2],
            weight: vec![2.0; 2],
            ..SideTables::default()
        };
        let mut out = QueueOutputs::new(JobTerms::Side(Arc::new(side)));
        let submitted = TickEvents {
            submitted: vec![a, b],
            ..TickEvents::default()
        };
        out.record(&cell, &submitted);
        let first = TickEvents {
            ended: vec![ended(7, 0, t0, t0 + 20, t0 + 50)],
            ..TickEvents::default()
        };
        out.record(&cell, &first);
        assert!(out.job_rows.is_empty());
        assert_eq!(out.task_rows[5], Value::I64(20));
        let second = TickEvents {
            ended: vec![ended(7, 1, t0 + 10, t0 + 30, t0 + 80)],
            ..TickEvents::default()
        };
        out.record(&cell, &second);
        use Value::*;
        assert_eq!(
            out.job_rows,
            [
                U64(7),
                U32(2),
                I64(t0),
                I64(t0 + 80),
                I64(80),
                I64(120),
                I64(20),
                F64(2.0),
                I64(t0 + 60),
                Bool(true),
                I64(20)
            ]
        );
        let initial = TickEvents {
            ended: vec![ended(8, 0, 5, t0 + 7, t0 + 9)],
            ..TickEvents::default()
        };
        out.record(&cell, &initial);
        let columns = TASK_COLUMNS.len();
        assert_eq!(out.task_rows[columns * 2 + 5], Value::I64(7));
        // This cell has no node: the machine is unknown (null), not a wrong one.
        assert_eq!(out.task_rows[columns * 2 + 6], Value::Null);
        assert!(out.open.is_empty());
    }
}
