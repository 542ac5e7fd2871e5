//! The tasks whose recorded run ended while they were still pending in the policy (workload
//! mode, `deferred.rs`): each finishes its recorded run time after the policy starts it.
//!
//! Looking at all of them every tick would cost in proportion to the policy's waiting backlog;
//! [`AwaitingList::take_started`] looks only at the tasks the cell says were placed since
//! ([`Cell::take_started`]), and hands the started ones out in the order they began to wait,
//! which is the order a scan of the whole list gives. Invariants: `pos[t]` is the index in
//! `entries` of slot `t`'s latest entry (or [`NONE`]); removed entries are `None` until the list
//! is compacted (order kept); `live` counts the `Some` entries. After a restore the first call
//! looks at every entry (the placements before the snapshot are not known).

use super::deferred::AwaitingStart;
use crate::cell::{Cell, TaskState};
use crate::ids::TaskIdx;

/// No entry.
const NONE: u32 = u32::MAX;

/// The tasks awaiting their start, in the order they began to wait.
#[derive(Debug, Clone, Default)]
pub struct AwaitingList {
    entries: Vec<Option<AwaitingStart>>,
    /// Each task slot's entry, by slot.
    pos: Vec<u32>,
    live: usize,
    /// Look at every entry at the next call (after a restore).
    rescan: bool,
    /// Scratch: entry indices to look at.
    hits: Vec<u32>,
}

impl AwaitingList {
    /// The list of a restored run: `entries` in order; the next call looks at them all.
    pub fn restored(entries: Vec<AwaitingStart>) -> AwaitingList {
        let mut list = AwaitingList {
            rescan: true,
            ..AwaitingList::default()
        };
        for w in entries {
            list.push(w);
        }
        list
    }

    /// The entries in order (what a snapshot saves).
    pub fn entries(&self) -> impl Iterator<Item = &AwaitingStart> {
        self.entries.iter().flatten()
    }

    /// Task `w.task` awaits its start from now on.
    pub fn push(&mut self, w: AwaitingStart) {
        let i = w.task.index();
        if self.pos.len() <= i {
            self.pos.resize(i + 1, NONE);
        }
        self.pos[i] = self.entries.len() as u32;
        self.entries.push(Some(w));
        self.live += 1;
    }

    /// Moves to `out` (in waiting order) the entries whose tasks are running now, among those
    /// of the tasks in `started` (or all after a restore); entries whose slot has been reused or
    /// freed are dropped on the way, as a scan of the whole list would drop them.
    pub fn take_started(&mut self, cell: &Cell, started: &[TaskIdx], out: &mut Vec<AwaitingStart>) {
        let mut hits = std::mem::take(&mut self.hits);
        hits.clear();
        if std::mem::take(&mut self.rescan) {
            hits.extend(0..self.entries.len() as u32);
        } else {
            hits.extend(started.iter().filter_map(|t| {
                let p = *self.pos.get(t.index())?;
                (p != NONE).then_some(p)
            }));
            hits.sort_unstable();
            hits.dedup();
        }
        for &p in &hits {
            let Some(w) = self.entries[p as usize] else {
                continue;
            };
            let i = w.task.index();
            let stale = cell.tasks.generation()[i] != w.generation
                || cell.tasks.state()[i] == TaskState::Free;
            if stale || cell.tasks.state()[i] == TaskState::Running {
                if !stale {
                    out.push(w);
                }
                self.entries[p as usize] = None;
                self.live -= 1;
                if self.pos.get(i) == Some(&p) {
                    self.pos[i] = NONE;
                }
            }
        }
        self.hits = hits;
        if self.entries.len() > 2 * self.live + 1024 {
            self.compact(cell);
        }
    }

    /// Drops the removed entries and those whose slot was freed or reused, keeping the order.
    fn compact(&mut self, cell: &Cell) {
        let current = |w: &AwaitingStart| {
            let i = w.task.index();
            cell.tasks.generation()[i] == w.generation && cell.tasks.state()[i] != TaskState::Free
        };
        self.entries.retain(|e| e.as_ref().is_some_and(current));
        self.live = self.entries.len();
        self.pos.fill(NONE);
        for (p, w) in self.entries.iter().flatten().enumerate() {
            self.pos[w.task.index()] = p as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a scan of the whole list (what the replay did before): over random placements,
    /// slot reuse and restores, the same entries come out in the same order and the same stay.
    #[test]
    fn started_tasks_come_out_as_a_full_scan_gives_them() {
        let mut r = ingest::rng::Rng::new(3, 0);
        let mut cell = Cell::default();
        let node = cell.nodes.push(1);
        let (mut list, mut scanned) = (AwaitingList::default(), Vec::<AwaitingStart>::new());
        let mut pushed = 0;
        for round in 0..300 {
            // New tasks, some of them awaiting their start.
            for _ in 0..r.below(20) {
                let t = cell.tasks.alloc(round, 0, 0, 0);
                if r.chance(0.7) {
                    let w = AwaitingStart {
                        task: t,
                        generation: cell.tasks.generation()[t.index()],
                        run_us: r.below(1000) as i64,
                    };
                    list.push(w);
                    scanned.push(w);
                    pushed += 1;
                }
            }
            // Some pending tasks start, some running ones end (their slots are reused).
            for i in 0..cell.tasks.len() {
                let t = TaskIdx(i as u32);
                match cell.tasks.state()[i] {
                    TaskState::Pending if r.chance(0.1) => cell.place(t, node, 0),
                    TaskState::Running if r.chance(0.05) => cell.end(t),
                    _ => {}
                }
            }
            if round % 97 == 96 {
                list = AwaitingList::restored(list.entries().copied().collect());
            }
            let mut started = Vec::new();
            cell.take_started(&mut started);
            let mut got = Vec::new();
            list.take_started(&cell, &started, &mut got);
            // The full scan: drop stale entries, hand out the running ones, keep the rest.
            let mut expected = Vec::new();
            scanned.retain(|w| {
                let i = w.task.index();
                if cell.tasks.generation()[i] != w.generation
                    || cell.tasks.state()[i] == TaskState::Free
                {
                    return false;
                }
                if cell.tasks.state()[i] == TaskState::Running {
                    expected.push(*w);
                    return false;
                }
                true
            });
            assert_eq!(got, expected, "round {round}");
            let kept: Vec<AwaitingStart> = list.entries().copied().collect();
            let pending: Vec<AwaitingStart> = kept
                .iter()
                .copied()
                .filter(|w| {
                    let i = w.task.index();
                    cell.tasks.generation()[i] == w.generation
                        && cell.tasks.state()[i] == TaskState::Pending
                })
                .collect();
            assert_eq!(pending, scanned, "round {round}: the ones still waiting");
        }
        assert!(
            pushed > 1500 && list.entries.len() < pushed / 2,
            "compacted"
        );
    }
}
