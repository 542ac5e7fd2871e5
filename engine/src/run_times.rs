//! What a task's run will take, known before it runs: the recorded run time of every task of a
//! trace, for a policy that is told the future (`omniscient`, seed 002: it "make\[s\] use of ...
//! the allocation time of each task"). A task's run time is its first recorded run in the
//! trace's `task_events`: from its first SCHEDULE to the next terminal event (EVICT, FAIL,
//! FINISH, KILL, LOST); a run the trace does not end is [`RunTimes::UNKNOWN`] (it runs past the
//! trace's end). A scenario's tasks are written with one run each, so theirs is the scenario's
//! length exactly.
//!
//! Invariant: `runs` is sorted by key, one entry per task that has a SCHEDULE. Built once per run
//! by one pass over `task_events` (a hash map of the open runs, not touched afterwards); looked
//! up by binary search, once per placement decision.

use std::path::Path;

use ingest::Table;
use ingest::codes::task_event;
use ingest::columns::{i64s, u8s, u32s, u64s};
use ingest::dataset::Dataset;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::Result;

/// Every task's recorded run time (module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunTimes {
    /// ((job ID, task index), run time in microseconds), by key.
    runs: Vec<((u64, u32), i64)>,
}

impl RunTimes {
    /// The run time of a task whose recorded run never ends, or that the trace never runs.
    pub const UNKNOWN: i64 = i64::MAX;

    /// The run times of the ingested trace in `dir` (none when it has no `task_events`).
    pub fn of_trace(dir: &Path) -> Result<RunTimes> {
        let Some(events) = Dataset::open(dir, Table::TaskEvents)? else {
            return Ok(RunTimes::default());
        };
        let mut scan = Scan::default();
        for batch in events.batches(&["time", "job_id", "task_index", "event_type"])? {
            let b = batch?;
            let (time, job, task, kind) = (i64s(&b, 0), u64s(&b, 1), u32s(&b, 2), u8s(&b, 3));
            for r in 0..b.num_rows() {
                scan.row(time[r], (job[r], task[r]), kind[r]);
            }
        }
        Ok(scan.finish())
    }

    /// Run times from `(time_us, (job ID, task index), event type)` rows in time order.
    pub fn of_rows(rows: impl IntoIterator<Item = (i64, (u64, u32), u8)>) -> RunTimes {
        let mut scan = Scan::default();
        for (time, key, kind) in rows {
            scan.row(time, key, kind);
        }
        scan.finish()
    }

    /// Task `(job_id, task_index)`'s run time, microseconds ([`RunTimes::UNKNOWN`] when the
    /// trace never ends or never runs it).
    pub fn of(&self, job_id: u64, task_index: u32) -> i64 {
        match self
            .runs
            .binary_search_by_key(&(job_id, task_index), |r| r.0)
        {
            Ok(i) => self.runs[i].1,
            Err(_) => RunTimes::UNKNOWN,
        }
    }

    /// (job ID, its tasks' longest run time), by job ID ([`RunTimes::UNKNOWN`] when one of its
    /// runs never ends): a job's critical path when its tasks run at once.
    pub fn longest_per_job(&self) -> Vec<(u64, i64)> {
        let mut out: Vec<(u64, i64)> = Vec::new();
        for &((job, _), run_us) in &self.runs {
            match out.last_mut() {
                Some(last) if last.0 == job => last.1 = last.1.max(run_us),
                _ => out.push((job, run_us)),
            }
        }
        out
    }

    /// Tasks with a recorded run.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// True when no task has a recorded run.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

/// The pass over the rows: open runs by key, finished ones listed.
#[derive(Default)]
struct Scan {
    /// Start of each task's first run, while it is open.
    open: FxHashMap<(u64, u32), i64>,
    /// Tasks whose first run was seen to start (so a second run is not taken for the first).
    started: FxHashSet<(u64, u32)>,
    runs: Vec<((u64, u32), i64)>,
}

impl Scan {
    fn row(&mut self, time_us: i64, key: (u64, u32), kind: u8) {
        if kind == task_event::SCHEDULE {
            if self.started.insert(key) {
                self.open.insert(key, time_us);
            }
        } else if task_event::is_terminal(kind)
            && let Some(start) = self.open.remove(&key)
        {
            self.runs.push((key, (time_us - start).max(0)));
        }
    }

    fn finish(mut self) -> RunTimes {
        self.runs
            .extend(self.open.into_keys().map(|k| (k, RunTimes::UNKNOWN)));
        self.runs.sort_unstable();
        RunTimes { runs: self.runs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ingest::codes::task_event::{EVICT, FINISH, KILL, SCHEDULE, SUBMIT};

    /// By hand: task (1, 0) runs 10..25 (15), is rescheduled and runs again (ignored); (1, 1) is
    /// scheduled and never ends; (2, 0) is killed while pending (no run); (3, 5) runs 0..7.
    #[test]
    fn the_first_recorded_run_of_each_task() {
        let rows = [
            (0, (3, 5), SCHEDULE),
            (0, (1, 0), SUBMIT),
            (7, (3, 5), FINISH),
            (10, (1, 0), SCHEDULE),
            (12, (1, 1), SCHEDULE),
            (13, (2, 0), SUBMIT),
            (14, (2, 0), KILL),
            (25, (1, 0), EVICT),
            (30, (1, 0), SCHEDULE),
            (90, (1, 0), FINISH),
        ];
        let times = RunTimes::of_rows(rows);
        assert_eq!(times.of(1, 0), 15);
        assert_eq!(times.of(1, 1), RunTimes::UNKNOWN);
        assert_eq!(times.of(2, 0), RunTimes::UNKNOWN);
        assert_eq!(times.of(3, 5), 7);
        assert_eq!(times.len(), 3);
    }

    #[test]
    fn a_trace_without_task_events_knows_no_run() {
        let times = RunTimes::of_trace(Path::new("/nonexistent-trace")).unwrap();
        assert!(times.is_empty());
    }
}
