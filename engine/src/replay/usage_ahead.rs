//! Reading the next tick's usage rows while this tick's policy runs ([`Replay::read_usage_ahead`]).
//!
//! A tick's usage rows (~130k every fifth tick on a 12.5k cell) are read
//! ([`UsageRows::read_before`]: decoded rows copied out and expanded to their scaled instances)
//! beside the task events' apply, which takes a fraction of that time: the tick waited for the
//! read. The read touches only the table's cursor and buffers of its own, so the run hands them
//! to a thread of this module's (`worker.rs`) after the trace's apply, with the next tick's end;
//! the thread reads while the policy, the metrics and the outputs run, and the next apply takes
//! the rows back ([`Replay::take_usage_read`]), waiting only if the read is not done.
//!
//! Nothing depends on timing: the rows are the same whoever reads them, and read rows count as
//! consumed (a snapshot's `rows`) only once applied, as before. A read error comes back with
//! the rows, in the apply's order of errors. Without the thread (it could not be started, or a
//! replay that is never asked to read ahead) the tick reads its rows itself, as before.
//! Invariant: while a read is out, `Replay::usage` is empty and `ahead_to` holds the bound it
//! reads to; the next [`Replay::advance`] is to that bound.

use super::Replay;
use super::usage::UsageRows;
use crate::error::{EngineError, Result};
use crate::scale::Scale;
use crate::worker::Worker;

/// A read handed to the thread: the rows' cursor and buffers, the scaling, the bound.
type Request = (UsageRows, Scale, i64);

/// The reading thread's end of the hand-over (module doc); the thread ends when this is dropped.
pub(crate) struct AheadReader {
    worker: Worker<Request, (UsageRows, Result<u64>)>,
    /// The bound of the read out, if one is.
    ahead_to: Option<i64>,
}

impl AheadReader {
    /// Starts the thread; `None` if the system would not start one.
    fn spawn() -> Option<AheadReader> {
        let read = |(mut rows, scale, end_us): Request| {
            let read = rows.read_before(&scale, end_us);
            (rows, read)
        };
        let worker = Worker::spawn("usage-ahead", 1, read)?;
        Some(AheadReader {
            worker,
            ahead_to: None,
        })
    }
}

impl Replay {
    /// Starts reading the usage rows before `end_us`, the next [`Replay::advance`]'s bound, on
    /// the reading thread (module doc). Does nothing without task_usage, with a read out, or
    /// when the cursor knows there is no row to read (short ticks between a scenario's rows,
    /// or past the table's end: a hand-over each tick cost two thread wake-ups for nothing).
    pub fn read_usage_ahead(&mut self, end_us: i64) {
        let cursor = &self.usage.cursor;
        if !cursor.present() || cursor.none_before(end_us) || self.usage_read_out() {
            return;
        }
        if self.ahead.is_none() {
            self.ahead = AheadReader::spawn();
        }
        let Some(ahead) = self.ahead.as_mut() else {
            return;
        };
        let rows = std::mem::take(&mut self.usage);
        match ahead.worker.send((rows, self.scale, end_us)) {
            Ok(()) => ahead.ahead_to = Some(end_us),
            Err(returned) => self.usage = returned.0,
        }
    }

    /// Whether a read is out.
    pub(super) fn usage_read_out(&self) -> bool {
        self.ahead.as_ref().is_some_and(|a| a.ahead_to.is_some())
    }

    /// The read out ([`Replay::usage_read_out`]), started for `end_us`, waited for and its rows
    /// back in `Replay::usage`: the trace rows it read, or its error.
    pub(super) fn take_usage_read(&mut self, end_us: i64) -> Result<u64> {
        let internal = |problem: String| Err(EngineError::Internal(problem));
        let out = (self.ahead.as_mut()).and_then(|a| Some((a.ahead_to.take()?, a.worker.recv())));
        let Some((ahead_to, done)) = out else {
            return internal("no usage read is out".into());
        };
        let Some((rows, read)) = done else {
            return internal("the usage rows' reading thread ended with a read out".into());
        };
        self.usage = rows;
        if ahead_to != end_us {
            return internal(format!(
                "usage rows were read ahead to {ahead_to} us, the replay advanced to {end_us} us"
            ));
        }
        read
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{Cell, TaskState};
    use crate::ids::{NodeIdx, TaskIdx};

    // time,missing,job,index,machine,event,user,class,priority,cpu,mem,disk,different-machines
    const TASKS: &str = "\
0,,1,0,,0,u,0,0,0.1,0.1,0,0
0,,1,1,,0,u,0,0,0.1,0.1,0,0
0,,2,0,,0,u,0,0,0.2,0.1,0,0
0,,1,0,1,1,u,0,0,0.1,0.1,0,0
70000000,,2,0,1,1,u,0,0,0.2,0.1,0,0
130000000,,1,1,1,1,u,0,0,0.1,0.1,0,0
200000000,,1,0,1,4,u,0,0,,,,
";
    // start,end,job,index,machine,cpu,mem,... (rows in three ticks and one past the trace's
    // tasks; one for a task never submitted)
    const USAGE: &str = "\
0,60000000,1,0,1,0.01,0.02,0,0,0,0,0,0,0,0,1,0,1,0,0
10000000,60000000,1,1,1,0.03,0.01,0,0,0,0,0,0,0,0,1,0,1,0,0
60000000,120000000,1,0,1,0.04,0.02,0,0,0,0,0,0,0,0,1,0,1,0,0
70000000,120000000,2,0,1,0.05,0.05,0,0,0,0,0,0,0,0,1,0,1,0,0
80000000,120000000,9,0,1,0.05,0.05,0,0,0,0,0,0,0,0,1,0,1,0,0
150000000,180000000,1,1,1,0.06,0.01,0,0,0,0,0,0,0,0,1,0,1,0,0
190000000,240000000,1,0,1,0.07,0.03,0,0,0,0,0,0,0,0,1,0,1,0,0
";

    /// The trace of [`TASKS`] and [`USAGE`] on one machine, ingested.
    fn trace() -> tempfile::TempDir {
        super::super::ingested(&[
            ("machine_events", "0,1,0,p,1,1\n"),
            ("task_events", TASKS),
            ("task_usage", USAGE),
        ])
    }

    /// Replays ticks of 60 s to 300 s in workload mode, the stand-in policy starting every
    /// pending task on node 0 at each tick's end from the second on (1/0, scheduled in the
    /// first, starts 60 s late: its later rows are deferred); reads each next tick's usage rows ahead when
    /// `ahead` (none once the table has ended). Returns per tick the usage records and the replay's counts.
    fn replay(ahead: bool) -> Vec<(Vec<crate::cell::UsageSlot>, super::super::ReplayStats)> {
        let dir = trace();
        let mut replay = Replay::open(&dir.path().join("parquet")).unwrap();
        replay.set_workload_mode(true);
        let mut cell = Cell::default();
        let mut seen = Vec::new();
        for tick in 1..=5 {
            let end_us = tick * 60_000_000;
            replay.advance(&mut cell, end_us).unwrap();
            if ahead {
                replay.read_usage_ahead(end_us + 60_000_000);
                // Tick 3's read reached the table's end: nothing is handed over after it.
                let out = replay.usage_read_out();
                assert_eq!(out, tick < 4, "tick {tick}: a read is out until the end");
            }
            for i in 0..cell.tasks.len() {
                if tick >= 2 && cell.tasks.state()[i] == TaskState::Pending {
                    cell.place(TaskIdx(i as u32), NodeIdx(0), end_us);
                }
            }
            cell.check().unwrap();
            seen.push((cell.tasks.usage().to_vec(), replay.stats()));
        }
        seen
    }

    /// Rows read ahead apply as rows read in their tick: the same usage (deferred by the start
    /// shifts the placements make) and the same counts, every tick; rows count as consumed only
    /// once applied.
    #[test]
    fn rows_read_ahead_apply_as_rows_read_in_their_tick() {
        let (in_turn, ahead) = (replay(false), replay(true));
        assert_eq!(ahead, in_turn);
        let late = |k: usize| in_turn[k].0.iter().map(|u| u.shift_us()).max();
        assert_eq!(late(1), Some(60_000_000), "1/0 started 60 s late");
        let rows = |k: usize| in_turn[k].1.rows["task_usage"];
        assert_eq!([rows(0), rows(1), rows(2), rows(3)], [2, 5, 6, 7]);
        // Job 9 was never submitted; 1/0's 190 s row comes in the tick whose task events end
        // it (FINISH at 200 s, applied first).
        assert_eq!(in_turn[4].1.usage_rows_unmatched, 2);
    }

    /// An advance to another bound than the read out is an internal error, not rows applied
    /// early or a panic.
    #[test]
    fn an_advance_past_another_bound_is_an_error() {
        let dir = trace();
        let mut replay = Replay::open(&dir.path().join("parquet")).unwrap();
        let mut cell = Cell::default();
        replay.advance(&mut cell, 60_000_000).unwrap();
        replay.read_usage_ahead(120_000_000);
        let error = replay.advance(&mut cell, 180_000_000).err().unwrap();
        assert!(matches!(error, EngineError::Internal(_)), "{error}");
    }
}
