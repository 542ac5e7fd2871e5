//! The cell and the replay as snapshot sections: the cell's columns in the order
//! `cell/columns.rs` declares them (stored as `column.rs` says), with lengths, flag bytes, enum codes and indices checked before the state is
//! rebuilt, and the cell's invariants ([`Cell::check`]) verified after.

use std::collections::BTreeMap;

use rustc_hash::FxHashSet as HashSet;
use std::path::Path;

use crate::cell::{Cell, Constraint, Nodes, Tasks};
use crate::codec::column::SnapshotColumn;
use crate::codec::{SectionReader, SectionWriter, SnapshotError};
use crate::ids::{NodeIdx, TaskIdx};
use crate::replay::{AwaitingList, AwaitingStart, Deferred, Replay, ReplayStats};

type R<T> = Result<T, SnapshotError>;

/// Writes the cell's columns.
pub fn save_cell(cell: &Cell, w: &mut SectionWriter) {
    w.value(cell.nodes.len() as u64);
    cell.nodes.save_columns(w);
    let t = &cell.tasks;
    w.value(t.len() as u64);
    t.save_columns(w);
    w.column(&t.free);
    let c = &cell.constraints;
    w.value(c.len() as u64);
    w.column(&c.iter().map(|c| c.name).collect::<Vec<_>>());
    w.column(&c.iter().map(|c| c.op).collect::<Vec<_>>());
    w.column(&c.iter().map(|c| c.value).collect::<Vec<_>>());
    w.column(
        &c.iter()
            .map(|c| c.value_int.unwrap_or(0))
            .collect::<Vec<_>>(),
    );
    w.column(
        &c.iter()
            .map(|c| c.value_int.is_some() as u8)
            .collect::<Vec<_>>(),
    );
    let a = &cell.attributes;
    w.value(a.len() as u64);
    w.column(&a.keys().map(|k| k.0).collect::<Vec<NodeIdx>>());
    w.column(&a.keys().map(|k| k.1).collect::<Vec<u32>>());
    w.column(&a.values().map(|v| v.0).collect::<Vec<u32>>());
    w.column(&a.values().map(|v| v.1.unwrap_or(0)).collect::<Vec<i64>>());
    w.column(&a.values().map(|v| v.1.is_some() as u8).collect::<Vec<u8>>());
    w.value(cell.migrating);
}

fn read_len(r: &mut SectionReader<'_>) -> R<usize> {
    let len = r.value::<u64>()?;
    usize::try_from(len)
        .ok()
        .filter(|&l| l < u32::MAX as usize)
        .ok_or_else(|| r.corrupt(format!("impossible length {len}")))
}

fn read_nodes(r: &mut SectionReader<'_>) -> R<Nodes> {
    let len = read_len(r)?;
    Nodes::load_columns(r, len)
}

fn read_tasks(r: &mut SectionReader<'_>) -> R<Tasks> {
    let len = read_len(r)?;
    let mut tasks = Tasks::load_columns(r, len)?;
    tasks.mirror_all();
    // Constraint sets are numbered once the rows are read and checked (`load_cell`).
    tasks.free = r.column::<TaskIdx>()?.to_vec();
    if tasks.free.iter().any(|t| t.index() >= len) {
        return Err(r.corrupt("a free slot beyond the task table"));
    }
    Ok(tasks)
}

/// Reads the cell written by [`save_cell`] and checks it.
pub fn load_cell(r: &mut SectionReader<'_>) -> R<Cell> {
    let nodes = read_nodes(r)?;
    let tasks = read_tasks(r)?;
    let len = read_len(r)?;
    let (names, ops, values) = (
        r.column_of::<u32>(len)?,
        r.column_of::<u8>(len)?,
        r.column_of::<u32>(len)?,
    );
    let (ints, has_int) = (r.column_of::<i64>(len)?, bool::load(r, len)?);
    let constraints = (0..len)
        .map(|i| Constraint {
            name: names[i],
            op: ops[i],
            value: values[i],
            value_int: has_int[i].then_some(ints[i]),
        })
        .collect();
    let len = read_len(r)?;
    let (attr_nodes, attr_names) = (r.column_of::<NodeIdx>(len)?, r.column_of::<u32>(len)?);
    let attr_values = r.column_of::<u32>(len)?;
    let (ints, has_int) = (r.column_of::<i64>(len)?, bool::load(r, len)?);
    let attributes: BTreeMap<_, _> = (0..len)
        .map(|i| {
            (
                (attr_nodes[i], attr_names[i]),
                (attr_values[i], has_int[i].then_some(ints[i])),
            )
        })
        .collect();
    let migrating = r.value::<u32>()?;
    let mut cell = Cell {
        nodes,
        tasks,
        constraints,
        attributes,
        migrating,
        ..Cell::default()
    };
    cell.index_attributes();
    let (n, t, c) = (cell.nodes.len(), &cell.tasks, cell.constraints.len());
    for i in 0..t.len() {
        let end = t.constraint_start()[i] as usize + t.constraint_len()[i] as usize;
        let bad_node = |x: NodeIdx| x.is_some() && x.index() >= n;
        if end > c || bad_node(t.node()[i]) || bad_node(t.migrating_to()[i]) {
            return Err(r.corrupt(format!("task slot {i} refers beyond the tables")));
        }
    }
    cell.number_constraint_sets();
    cell.check()
        .map_err(|problem| r.corrupt(format!("cell invariant broken: {problem}")))?;
    Ok(cell)
}

/// Writes the replay's read positions, ID maps and deferred events.
pub fn save_replay(replay: &Replay, w: &mut SectionWriter) {
    w.column(&replay.rows);
    // Sorted by key (unique) as values, not as references into the map: at 8x a million
    // entries, whose comparisons would each chase two pointers.
    let mut tasks: Vec<((u64, u32), TaskIdx)> = Vec::with_capacity(replay.task_of.len());
    tasks.extend(replay.task_of.iter());
    tasks.sort_unstable_by_key(|e| e.0);
    w.column_iter(tasks.len(), tasks.iter().map(|e| e.0.0));
    w.column_iter(tasks.len(), tasks.iter().map(|e| e.0.1));
    w.column_iter(tasks.len(), tasks.iter().map(|e| e.1));
    let mut strings: Vec<(&String, &u32)> = replay.strings.iter().collect();
    strings.sort_by_key(|e| *e.1);
    w.serde(&strings.iter().map(|e| e.0.as_str()).collect::<Vec<&str>>());
    let mut unknown: Vec<u64> = replay.unknown.iter().copied().collect();
    unknown.sort();
    w.column(&unknown);
    w.serde(&replay.stats);
    w.value(replay.window_end_us);
    // References, sorted, encoded in chunks: at 8x the queue holds a million events.
    let mut deferred: Vec<&Deferred> = replay.deferred.iter().collect();
    deferred.sort_unstable();
    w.serde_items(&deferred);
    w.value(replay.deferred_seq);
    w.serde(&replay.awaiting.entries().collect::<Vec<_>>());
}

/// Reopens the trace in `dir` at the positions written by [`save_replay`], with its maps.
pub fn load_replay(
    dir: &Path,
    cell: &Cell,
    r: &mut SectionReader<'_>,
) -> crate::error::Result<Replay> {
    let consumed: [u64; 6] = r
        .column_of::<u64>(6)?
        .try_into()
        .expect("six positions read");
    let mut replay = Replay::open_at(dir, consumed)?;
    let jobs = r.column::<u64>()?;
    let (indices, slots) = (
        r.column_of::<u32>(jobs.len())?,
        r.column_of::<TaskIdx>(jobs.len())?,
    );
    if slots.iter().any(|t| t.index() >= cell.tasks.len()) {
        return Err(r.corrupt("a task ID maps beyond the task table").into());
    }
    replay.task_of = (0..jobs.len())
        .map(|i| ((jobs[i], indices[i]), slots[i]))
        .collect();
    let strings: Vec<String> = r.serde()?;
    replay.strings = strings
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s, i as u32))
        .collect();
    replay.unknown = r.column::<u64>()?.iter().copied().collect::<HashSet<_>>();
    replay.stats = r.serde::<ReplayStats>()?;
    replay.window_end_us = r.value()?;
    let deferred: Vec<Deferred> = r.serde()?;
    let awaiting_seq = r.value::<u64>()?;
    let awaiting: Vec<AwaitingStart> = r.serde()?;
    let slot_ok = |t: TaskIdx| t.index() < cell.tasks.len();
    if !deferred.iter().all(|d| slot_ok(d.task)) || !awaiting.iter().all(|a| slot_ok(a.task)) {
        return Err(r
            .corrupt("a deferred event names a task beyond the table")
            .into());
    }
    replay.deferred = deferred.into_iter().collect();
    replay.deferred_seq = awaiting_seq;
    replay.awaiting = AwaitingList::restored(awaiting);
    replay.node_of = cell
        .nodes
        .machine_id()
        .iter()
        .enumerate()
        .map(|(i, &m)| (m, NodeIdx(i as u32)))
        .collect();
    Ok(replay)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Header, Snapshot, SnapshotWriter};

    #[test]
    fn a_cell_survives_the_round_trip() {
        let mut cell = Cell::default();
        let (a, b) = (
            cell.add_machine(11, 1000, 1000),
            cell.add_machine(12, 1000, 1000),
        );
        cell.set_attribute(a, 1, (2, Some(7)));
        cell.set_attribute(b, 1, (3, None));
        let t = cell.tasks.alloc(5, 0, 9, 100);
        let u = cell.tasks.alloc(5, 1, 0, 100);
        let gone = cell.tasks.alloc(6, 0, 0, 100);
        cell.set_request(t, 10, 20);
        cell.set_request(u, 5, 5);
        cell.place(t, a, 200);
        cell.place(u, a, 200);
        cell.start_migration(u, b);
        cell.set_usage(t, 4, 8);
        cell.end(gone);
        let constraint = Constraint {
            name: 1,
            op: 0,
            value: 2,
            value_int: Some(7),
        };
        cell.set_constraints(t, &[constraint]);
        cell.record_trace_schedule(t, 60);
        cell.index_attributes();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let mut w = SnapshotWriter::create(&path, &["cell"]).unwrap();
        save_cell(&cell, w.section("cell"));
        w.finish(Header {
            tick: 1,
            config_hash: 0,
            trace_hash: 0,
            run_id: 0,
        })
        .unwrap();
        let snap = Snapshot::open(&path).unwrap();
        let mut back = load_cell(&mut snap.section("cell").unwrap()).unwrap();
        // Placements the replay has not taken yet are not saved (a restored replay looks at
        // every task awaiting its start), nor constraint stamps (nor what policies derive from
        // them), nor the nodes touched since the last metrics (a restored run classifies every
        // node), nor the log of waiting tasks' need changes (its readers start afresh); all
        // else comes back.
        let mut started = Vec::new();
        cell.take_started(&mut started);
        assert_eq!(started, [t, u]);
        assert_eq!(
            cell.take_placements(),
            2,
            "counted for the watchdog, not saved"
        );
        // Node a's stamp moved for an attribute and for the constraints of task t running there.
        assert_eq!(cell.constraint_stamp(a), 2);
        cell.constraint_stamps.clear();
        let mut touched = Vec::new();
        cell.take_touched(&mut touched);
        assert_eq!(touched.len(), 2, "both nodes touched");
        cell.touched_mark.clear();
        assert!(cell.need_changes_since(0).is_some_and(|c| c.contains(&t)));
        (cell.need_log, back.need_log) = Default::default();
        assert_eq!(format!("{back:?}"), format!("{cell:?}"));
        assert_eq!(
            back.tasks.alloc(7, 0, 0, 0),
            gone,
            "the free list came back too"
        );
    }
}
