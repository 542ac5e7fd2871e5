//! A task's usage and what applying a usage row reads of the task, in one 32-byte record per
//! task slot ([`UsageSlot`], the column [`Tasks::usage`](super::Tasks::usage)).
//!
//! A trace's task_usage rows (~130k every five simulated minutes on a 12.5k cell, over a million
//! at `--multiply 8`) each look their task up and set its usage, at random task slots. Kept as
//! separate columns, a row read and wrote about ten cache lines (state, generation, start and
//! trace schedule for its shift, node, migration target, CPU, memory, flag, sample end): the
//! apply was bound by those misses (`bench-results/first-fit-2026-11-29-23a734e.md`). In one
//! aligned record, two to a cache line, it touches one.
//!
//! Invariants: the usage (`cpu`, `mem`, `is_request`) lives only here; `state`, `generation`,
//! `node` and `migrating_to` are copies of the task columns of those names, and `shift_us` is
//! `start_us - trace_sched_us` (at least 0; 0 while the trace has not scheduled the run, or
//! no run started), all set by [`Tasks::mirror`](super::Tasks::mirror) after every change of
//! those columns, rebuilt after a snapshot is loaded, and checked by
//! [`Cell::check`](super::Cell::check). A snapshot holds the usage as the three columns it was
//! (`cpu_use`, `mem_use`, `use_is_request`; the sample's end, which nothing read, is no longer
//! kept: format 22).

use crate::codec::column::SnapshotColumn;
use crate::codec::{SectionReader, SectionWriter, SnapshotError};
use crate::ids::NodeIdx;

use super::columns::{NOT_SCHEDULED, TaskState};

/// One task slot's usage and the copies a usage row reads (module doc).
#[repr(C, align(32))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageSlot {
    /// How much later than the trace's SCHEDULE the current run started (module doc),
    /// microseconds: what a policy that replays the workload shifts its later rows by.
    pub(in crate::cell) shift_us: i64,
    /// Current CPU usage, units.
    pub(in crate::cell) cpu: u32,
    /// Current memory usage, units.
    pub(in crate::cell) mem: u32,
    /// Copy of [`Tasks::node`](super::Tasks::node).
    pub(in crate::cell) node: NodeIdx,
    /// Copy of [`Tasks::migrating_to`](super::Tasks::migrating_to).
    pub(in crate::cell) migrating_to: NodeIdx,
    /// Copy of [`Tasks::generation`](super::Tasks::generation).
    pub(in crate::cell) generation: u32,
    /// Copy of [`Tasks::state`](super::Tasks::state).
    pub(in crate::cell) state: TaskState,
    /// Usage is the request (no task_usage sample applies yet).
    pub(in crate::cell) is_request: bool,
}

/// A slot's record before any task: no usage, derived from the request until measured.
pub const UNUSED: UsageSlot = UsageSlot {
    shift_us: 0,
    cpu: 0,
    mem: 0,
    node: NodeIdx::NONE,
    migrating_to: NodeIdx::NONE,
    generation: 0,
    state: TaskState::Free,
    is_request: true,
};

impl Default for UsageSlot {
    fn default() -> Self {
        UNUSED
    }
}

impl UsageSlot {
    /// The shift of a run started at `start_us` that the trace scheduled at `trace_sched_us`
    /// ([`NOT_SCHEDULED`] when it has not): the module doc's rule.
    #[inline]
    pub(in crate::cell) fn shift(trace_sched_us: i64, start_us: i64) -> i64 {
        match trace_sched_us {
            NOT_SCHEDULED => 0,
            sched_us => (start_us - sched_us).max(0),
        }
    }

    /// Current CPU usage, units.
    #[inline]
    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Current memory usage, units.
    #[inline]
    pub fn mem(&self) -> u32 {
        self.mem
    }

    /// Whether the usage is still the request's (no task_usage sample applied yet).
    #[inline]
    pub fn is_request(&self) -> bool {
        self.is_request
    }

    /// How much later than the trace's SCHEDULE the current run started, microseconds (0
    /// before the trace schedules it; module doc).
    #[inline]
    pub fn shift_us(&self) -> i64 {
        self.shift_us
    }

    /// The slot's state (a copy of the task column).
    #[inline]
    pub fn state(&self) -> TaskState {
        self.state
    }

    /// The slot's generation (a copy of the task column).
    #[inline]
    pub fn generation(&self) -> u32 {
        self.generation
    }
}

/// Saved as the three columns the usage was, in their order: CPU, memory, the flag (the
/// copies are rebuilt after loading, [`Tasks::mirror_all`](super::Tasks::mirror_all)).
impl SnapshotColumn for UsageSlot {
    fn save(col: &[Self], w: &mut SectionWriter) {
        w.column(&col.iter().map(|s| s.cpu).collect::<Vec<u32>>());
        w.column(&col.iter().map(|s| s.mem).collect::<Vec<u32>>());
        bool::save(&col.iter().map(|s| s.is_request).collect::<Vec<bool>>(), w);
    }

    fn load(r: &mut SectionReader<'_>, len: usize) -> Result<Vec<Self>, SnapshotError> {
        let cpu = u32::load(r, len)?;
        let mem = u32::load(r, len)?;
        let is_request = bool::load(r, len)?;
        Ok((0..len)
            .map(|i| UsageSlot {
                cpu: cpu[i],
                mem: mem[i],
                is_request: is_request[i],
                ..UNUSED
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two records to a 64-byte cache line, never one across two.
    #[test]
    fn a_record_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<UsageSlot>(), 32);
        assert_eq!(std::mem::align_of::<UsageSlot>(), 32);
    }

    /// The record's copies follow the task through its life (hand-worked): allocation, the
    /// trace's SCHEDULE, placement 90 s after it, a migration begun and finished, a displacement
    /// that moves the SCHEDULE to the trace time reached, the end and the slot's reuse; and
    /// `Cell::check` tells a stale copy.
    #[test]
    fn the_copies_follow_the_task() {
        use crate::cell::Cell;
        let mut cell = Cell::with_machines(2, 100, 100);
        let (a, b) = (NodeIdx(0), NodeIdx(1));
        let t = cell.tasks.alloc(7, 0, 0, 0);
        let at = |cell: &Cell| cell.tasks.usage()[t.index()];
        let copies = |u: UsageSlot| (u.state, u.generation, u.node, u.migrating_to, u.shift_us);
        assert_eq!(
            copies(at(&cell)),
            (TaskState::Pending, 1, NodeIdx::NONE, NodeIdx::NONE, 0)
        );
        cell.record_trace_schedule(t, 60_000_000);
        assert_eq!(at(&cell).shift_us(), 0, "not started: no shift");
        cell.place(t, a, 150_000_000);
        assert_eq!(
            copies(at(&cell)),
            (TaskState::Running, 1, a, NodeIdx::NONE, 90_000_000)
        );
        cell.set_usage(t, 5, 6);
        assert_eq!(
            (at(&cell).cpu(), at(&cell).mem(), at(&cell).is_request()),
            (5, 6, false)
        );
        assert!(cell.start_migration(t, b));
        assert_eq!(copies(at(&cell)).3, b);
        cell.finish_migration(t);
        assert_eq!((at(&cell).node, at(&cell).migrating_to), (b, NodeIdx::NONE));
        cell.record_displaced_run(t, 100_000_000);
        assert_eq!(at(&cell).shift_us(), 50_000_000);
        cell.check().unwrap();
        cell.end(t);
        assert_eq!(at(&cell).state(), TaskState::Free);
        let u = cell.tasks.alloc(8, 0, 0, 0);
        assert_eq!(u, t, "the slot is reused");
        assert_eq!(
            copies(at(&cell)),
            (TaskState::Pending, 2, NodeIdx::NONE, NodeIdx::NONE, 0)
        );
        assert!(
            at(&cell).is_request(),
            "usage derives from the request again"
        );
        cell.check().unwrap();
        cell.tasks.usage[t.index()].generation = 1;
        let stale = cell.check().unwrap_err();
        assert!(stale.contains("does not copy its columns"), "{stale}");
    }
}
