//! The engine's check of a decider's answer, applied as it is checked: each placement and
//! migration in order, each against the cell as the ones before it left it.
//!
//! Evictions apply first (their room is free for the placements), then placements, then
//! migrations. An eviction must name a running task; it is displaced as by a machine removal
//! (`replay::displace`: its run restarts when placed again). A placement must name a node that
//! exists, is online, meets the task's constraints and has room for it under the run's fit rule
//! (`greedy::fit`, as every placer keeps it), for a task still pending (not placed twice). A
//! migration must name a running task, not migrating, and an online node other than its own
//! that meets its constraints and has room for it. The first decision that breaks one of these
//! stops the tick: what was applied before it stays (the run then fails, so nothing is written
//! as if the tick had completed).

use crate::cell::{Cell, TaskState};
use crate::greedy::fit::{Need, charged, fits};
use crate::ids::{NodeIdx, TaskIdx};

use super::host::Decisions;

/// Places and migrates as `decisions` say, checking each; or returns what
/// is wrong with the first wrong decision (naming the task by job and index).
pub fn apply(
    cell: &mut Cell,
    view: (&[TaskIdx], i64),
    decisions: &Decisions,
) -> Result<(), String> {
    let (waiting, now_us) = view;
    for &slot in &decisions.evictions {
        let t = running_task(cell, slot, "eviction")?;
        // Policy `python` replays the workload, as every policy but borg-replay does.
        crate::replay::displace(true, cell, t, now_us);
    }
    if decisions.nodes.len() != waiting.len() {
        return Err(format!(
            "it gave {} nodes for {} waiting tasks (one per waiting task, -1 to leave it waiting)",
            decisions.nodes.len(),
            waiting.len()
        ));
    }
    for (position, (&t, &node)) in waiting.iter().zip(&decisions.nodes).enumerate() {
        if node == -1 {
            continue;
        }
        let what = || format!("waiting task {position} ({})", name(cell, t));
        if cell.tasks.state()[t.index()] != TaskState::Pending {
            return Err(format!("{}: placed twice in one tick", what()));
        }
        let n = room_on(cell, t, node).map_err(|why| format!("{}: node {node} {why}", what()))?;
        cell.place(t, n, now_us);
    }
    for &(slot, node) in &decisions.migrations {
        let t = running_task(cell, slot, "migration")?;
        let what = || format!("migration of task slot {slot} ({})", name(cell, t));
        if cell.tasks.node()[t.index()].0 as i64 == node {
            return Err(format!("{}: it already runs on node {node}", what()));
        }
        let n = room_on(cell, t, node).map_err(|why| format!("{}: node {node} {why}", what()))?;
        if cell.tasks.migrating_to()[t.index()].is_some() {
            return Err(format!("{}: the task is migrating already", what()));
        }
        cell.start_migration(t, n);
        cell.finish_migration(t);
    }
    Ok(())
}

/// Task `t` as a researcher finds it in the trace: job ID and task index.
fn name(cell: &Cell, t: TaskIdx) -> String {
    let i = t.index();
    format!(
        "job {} task {}",
        cell.tasks.job_id()[i],
        cell.tasks.task_index()[i]
    )
}

/// The running task in slot `slot`, for the decision `what` (a migration, an eviction).
fn running_task(cell: &Cell, slot: i64, what: &str) -> Result<TaskIdx, String> {
    let t = (0..cell.tasks.len() as i64)
        .contains(&slot)
        .then_some(TaskIdx(slot as u32))
        .ok_or_else(|| format!("{what} of task slot {slot}: no such slot"))?;
    if cell.tasks.state()[t.index()] != TaskState::Running {
        return Err(format!(
            "{what} of task slot {slot} ({}): the task is not running",
            name(cell, t)
        ));
    }
    Ok(t)
}

/// Node `node` if task `t` may go there: it exists, is online, meets `t`'s constraints and has
/// room for it; else why not.
fn room_on(cell: &Cell, t: TaskIdx, node: i64) -> Result<NodeIdx, String> {
    if !(0..cell.nodes.len() as i64).contains(&node) {
        return Err(format!(
            "does not exist (the cell has nodes 0 to {}; -1 leaves a task waiting)",
            cell.nodes.len() as i64 - 1
        ));
    }
    let (n, i) = (NodeIdx(node as u32), node as usize);
    if !cell.nodes.online()[i] {
        return Err("is offline".into());
    }
    if !cell.meets(n, cell.constraints_of(t)) {
        return Err("does not meet the task's constraints".into());
    }
    let need = Need::of(cell, t);
    if !fits(&cell.nodes, i, &need) {
        let (cpu, mem) = charged(&cell.nodes, i);
        let nodes = &cell.nodes;
        return Err(format!(
            "has no room for it by {}: CPU {cpu} + {} of {}, memory {mem} + {} of {}, production requests CPU {} + {} and memory {} + {} (units of 1e-6 of the largest machine)",
            nodes.fit_by().name(),
            need.cpu,
            nodes.cpu_cap()[i],
            need.mem,
            nodes.mem_cap()[i],
            nodes.prod_cpu_req()[i],
            if need.production { need.cpu_req } else { 0 },
            nodes.prod_mem_req()[i],
            if need.production { need.mem_req } else { 0 },
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Constraint;

    /// Three nodes of (100, 100), node 2 offline; tasks of CPU 60, 60, 30 (memory 10) of job 7,
    /// the last one asking for attribute 1 = value 1, which only node 1 has.
    fn cell() -> (Cell, Vec<TaskIdx>) {
        let mut cell = Cell::with_machines(3, 100, 100);
        cell.set_machine(NodeIdx(2), false, None);
        cell.set_attribute(NodeIdx(1), 1, (1, None));
        let tasks: Vec<TaskIdx> = [60, 60, 30]
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                let t = cell.tasks.alloc(7, i as u32, 0, 0);
                cell.set_request(t, cpu, 10);
                t
            })
            .collect();
        let only_node_1 = Constraint {
            name: 1,
            op: ingest::codes::comparison::EQUAL,
            value: 1,
            value_int: None,
        };
        cell.set_constraints(tasks[2], &[only_node_1]);
        cell.index_attributes();
        (cell, tasks)
    }

    fn answer(nodes: &[i64]) -> Decisions {
        Decisions {
            nodes: nodes.to_vec(),
            ..Decisions::default()
        }
    }

    /// By hand: 60 on node 0, 60 on node 1, the constrained 30 on node 1 (90 of 100) is right;
    /// each wrong answer is refused with the task's job and index and the reason.
    #[test]
    fn right_decisions_apply_and_wrong_ones_name_the_task() {
        let (mut cell, tasks) = cell();
        assert_eq!(apply(&mut cell, (&tasks, 5), &answer(&[0, 1, 1])), Ok(()));
        let on = |c: &Cell, t: TaskIdx| c.tasks.node()[t.index()].0;
        assert_eq!(
            tasks.iter().map(|&t| on(&cell, t)).collect::<Vec<_>>(),
            [0, 1, 1]
        );
        assert_eq!(cell.tasks.start_us()[tasks[0].index()], 5);
        cell.check().unwrap();

        let refused = |nodes: &[i64]| {
            let (mut cell, tasks) = self::cell();
            apply(&mut cell, (&tasks, 5), &answer(nodes)).unwrap_err()
        };
        assert_eq!(
            refused(&[0, 0, -1]),
            "waiting task 1 (job 7 task 1): node 0 has no room for it by requests: CPU 60 + 60 of 100, memory 10 + 10 of 100, production requests CPU 0 + 0 and memory 0 + 0 (units of 1e-6 of the largest machine)"
        );
        assert_eq!(
            refused(&[2, -1, -1]),
            "waiting task 0 (job 7 task 0): node 2 is offline"
        );
        assert_eq!(
            refused(&[-1, -1, 0]),
            "waiting task 2 (job 7 task 2): node 0 does not meet the task's constraints"
        );
        assert_eq!(
            refused(&[3, -1, -1]),
            "waiting task 0 (job 7 task 0): node 3 does not exist (the cell has nodes 0 to 2; -1 leaves a task waiting)"
        );
        assert!(refused(&[-2, -1, -1]).contains("node -2 does not exist"));
        assert_eq!(
            refused(&[0, 1]),
            "it gave 2 nodes for 3 waiting tasks (one per waiting task, -1 to leave it waiting)"
        );
        // The same task twice in the list (a host's bug) is placed once.
        let (mut cell, tasks) = self::cell();
        let twice = [tasks[0], tasks[0]];
        assert_eq!(
            apply(&mut cell, (&twice, 5), &answer(&[0, 1])).unwrap_err(),
            "waiting task 1 (job 7 task 0): placed twice in one tick"
        );
    }

    /// By hand: task 0 (CPU 60) runs on node 0; evicting it frees node 0 for task 1 (CPU 60) in
    /// the same answer, and task 0 is pending again, off its node. Evicting a task that does not
    /// run, or a slot that does not exist, is refused.
    #[test]
    fn evictions_free_their_room_before_the_placements() {
        let (mut cell, tasks) = cell();
        apply(&mut cell, (&tasks[..1], 5), &answer(&[0])).unwrap();
        let evicting = |slot: i64, nodes: &[i64]| Decisions {
            nodes: nodes.to_vec(),
            evictions: vec![slot],
            ..Decisions::default()
        };
        let slot = tasks[0].0 as i64;
        let next = [tasks[1]];
        let mut full = cell.clone();
        assert!(
            apply(&mut full, (&next, 6), &answer(&[0])).is_err(),
            "node 0 is full"
        );
        assert_eq!(apply(&mut cell, (&next, 6), &evicting(slot, &[0])), Ok(()));
        assert_eq!(cell.tasks.state()[tasks[0].index()], TaskState::Pending);
        assert!(!cell.tasks.node()[tasks[0].index()].is_some());
        assert_eq!(cell.tasks.node()[tasks[1].index()], NodeIdx(0));
        assert_eq!(cell.nodes.cpu_req()[0], 60);
        cell.check().unwrap();
        let refused = |slot: i64| {
            let none: [TaskIdx; 0] = [];
            apply(&mut cell.clone(), (&none, 7), &evicting(slot, &[])).unwrap_err()
        };
        assert_eq!(
            refused(slot),
            format!("eviction of task slot {slot} (job 7 task 0): the task is not running")
        );
        assert_eq!(refused(99), "eviction of task slot 99: no such slot");
    }

    /// Migrations move a running task at once to a node with room; a pending task, its own
    /// node, a full node or a slot that does not exist are refused.
    #[test]
    fn migrations_move_running_tasks_to_nodes_with_room() {
        let (mut cell, tasks) = cell();
        apply(&mut cell, (&tasks, 5), &answer(&[0, 1, -1])).unwrap();
        let moving = |migrations: Vec<(i64, i64)>| Decisions {
            nodes: vec![-1],
            migrations,
            ..Decisions::default()
        };
        let pending = [tasks[2]];
        let mut moved = cell.clone();
        let slot = tasks[0].0 as i64;
        let moves = moving(vec![(slot, 1)]);
        // Node 1 holds 60 of 100: no room for another 60.
        assert!(
            apply(&mut moved, (&pending, 6), &moves)
                .unwrap_err()
                .starts_with(&format!(
                    "migration of task slot {slot} (job 7 task 0): node 1 has no room"
                ))
        );
        cell.end(tasks[1]);
        assert_eq!(apply(&mut cell, (&pending, 6), &moves), Ok(()));
        assert_eq!(cell.tasks.node()[tasks[0].index()], NodeIdx(1));
        assert_eq!(cell.nodes.cpu_req()[..2], [0, 60]);
        assert_eq!(cell.migrating(), 0);
        cell.check().unwrap();
        let refused =
            |m: (i64, i64)| apply(&mut cell.clone(), (&pending, 6), &moving(vec![m])).unwrap_err();
        assert!(
            refused((slot, 1)).ends_with("it already runs on node 1"),
            "{}",
            refused((slot, 1))
        );
        let waiting = tasks[2].0 as i64;
        assert_eq!(
            refused((waiting, 0)),
            format!("migration of task slot {waiting} (job 7 task 2): the task is not running")
        );
        assert_eq!(refused((99, 0)), "migration of task slot 99: no such slot");
    }
}
