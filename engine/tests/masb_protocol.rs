//! MASB's protocol on tiny hand-built cells, each scenario asserting the exact message sequence
//! round by round: a successful migration; a rejection then success; a collision of two
//! migrations on one target (one wins, the other retries); a forced migration for a task only
//! one full node can host; recommendations expiring, then SCS restarting; constraint changes
//! between ticks noticed by a node agent that had seen its tasks meet them; the tasks one SCS
//! selects negotiated in parallel; how many nodes a new task asks before it waits; the
//! trace's initial placements taken over; a stable node's offload.
//!
//! Agent 0 is the broker; agent 1 + n is the node agent of node n. Rounds are numbered globally
//! (6 per one-minute tick).

mod common;

use engine::cell::{Cell, Constraint, TaskState};
use engine::classify::Thresholds;
use engine::executor::{Granularity, Mailbox, RoundScratch, run_round};
use engine::ids::{NodeIdx, TaskIdx, Tick};
use engine::masb::agents::{MasbAgent, offload_phase};
use engine::masb::migrations::{MigrationOutcome, MigrationRecord};
use engine::masb::policy::{Masb, counter};
use engine::masb::protocol::{MESSAGE_KINDS, Msg};
use engine::masb::{InitialOrder, MasbConfig, SiasNodeLoad};
use engine::metrics::Classifier;
use engine::policy::{Policy, PolicyCounters};
use engine::replay::{Placement, TickEvents};
use engine::units::to_units;

struct Harness {
    cell: Cell,
    masb: Masb,
    agents: Vec<MasbAgent>,
    mailbox: Mailbox<Msg>,
    scratch: RoundScratch<Msg, engine::masb::protocol::Action>,
    tick: u32,
    round: u64,
    counters: PolicyCounters,
    /// (global round, from, to, kind) of every message except node reports, receiver-grouped.
    log: common::MessageLog,
    /// Message counts per tick and kind, as the run's ticks table has them.
    counts: Vec<Vec<u64>>,
    /// New tasks handed to MASB at the next tick's start.
    submitted: Vec<TaskIdx>,
    /// Recorded placements handed to MASB with them.
    placements: Vec<Placement>,
}

impl Harness {
    /// Nodes of 0.5 CPU / 0.5 memory, all online; fast migrations (little page dirtying).
    fn new(nodes: usize) -> Harness {
        let config = MasbConfig {
            dirty_mb_per_cpu_s: 100.0,
            ..MasbConfig::default()
        };
        Harness::with_config(nodes, config)
    }

    fn with_config(nodes: usize, config: MasbConfig) -> Harness {
        let mut cell = Cell::default();
        for n in 0..nodes {
            cell.add_machine(100 + n as u64, to_units(0.5), to_units(0.5));
        }
        Harness {
            cell,
            masb: Masb::new(config, 6, 60, 1),
            agents: Vec::new(),
            mailbox: Mailbox::new(0),
            scratch: RoundScratch::default(),
            tick: 0,
            round: 0,
            counters: PolicyCounters::default(),
            log: Vec::new(),
            counts: Vec::new(),
            submitted: Vec::new(),
            placements: Vec::new(),
        }
    }

    /// A running task using (and requesting) `cpu`/`mem` on node `n`.
    fn task(&mut self, n: u32, cpu: f32, mem: f32) -> TaskIdx {
        let t = self.cell.tasks.alloc(1, self.cell.tasks.len() as u32, 0, 0);
        self.cell.set_request(t, to_units(cpu), to_units(mem));
        self.cell.place(t, NodeIdx(n), 0);
        t
    }

    /// A new task requesting `cpu`/`mem`, waiting for MASB from the next tick on.
    fn submit(&mut self, cpu: f32, mem: f32) -> TaskIdx {
        let t = self.cell.tasks.alloc(2, self.cell.tasks.len() as u32, 0, 0);
        self.cell.set_request(t, to_units(cpu), to_units(mem));
        self.submitted.push(t);
        t
    }

    fn now_us(&self) -> i64 {
        600_000_000 + (self.tick as i64 + 1) * 60_000_000
    }

    fn begin(&mut self) {
        let now = self.now_us();
        let mut inject = Vec::new();
        let events = TickEvents {
            submitted: std::mem::take(&mut self.submitted),
            placements: std::mem::take(&mut self.placements),
            ..TickEvents::default()
        };
        self.masb.begin_tick(
            &mut self.cell,
            (Tick(self.tick), now),
            &events,
            &mut self.agents,
            &mut inject,
            &mut self.counters,
        );
    }

    /// One round; `between` may change the cell before it (a usage spike, a node going away).
    fn round(&mut self) {
        let r = (self.round % 6) as u32;
        if r == 0 {
            self.begin();
            self.counts.push(vec![0; MESSAGE_KINDS.len()]);
        }
        let now = self.now_us();
        // Rounds of 10 s: round r of the tick ending at `now` begins (6 - r) x 10 s before it.
        let round_us = now - (6 - i64::from(r)) * 10_000_000;
        self.masb
            .begin_round(&mut self.cell, round_us, &mut self.counters);
        let counts = self.counts.last_mut().expect("pushed at round 0");
        run_round(
            &mut self.masb,
            &mut self.cell,
            &mut self.agents,
            &mut self.mailbox,
            &mut self.scratch,
            Tick(self.tick),
            r,
            now,
            1,
            Granularity::default(),
            counts,
            &mut self.counters,
        );
        for e in self.mailbox.messages() {
            self.log
                .push((self.round, e.from.0, e.to.0, MESSAGE_KINDS[e.msg.kind()]));
        }
        if r == 5 {
            self.masb.end_tick(&mut self.cell, now, &mut self.counters);
            self.tick += 1;
        }
        self.round += 1;
        self.cell.check().unwrap();
    }

    fn rounds(&mut self, n: usize) {
        for _ in 0..n {
            self.round();
        }
    }

    /// The `migrations/` rows MASB recorded since the last call, each read by `row`.
    fn migration_rows<T>(&mut self, row: impl Fn(&MigrationRecord) -> T) -> Vec<T> {
        let mut records = Vec::new();
        self.masb.take_migrations(&mut records);
        records.iter().map(row).collect()
    }

    fn messages_in(&self, round: u64) -> Vec<(u32, u32, &'static str)> {
        common::messages_in(&self.log, round)
    }
}

const GET: &str = "get_candidate_nodes_request";
const CANDIDATES: &str = "get_candidate_nodes_response";
const REQUEST: &str = "task_migration_request";
const ACCEPT: &str = "task_migration_acceptance_response";
const REJECT: &str = "task_migration_rejection_response";
const PROCESS: &str = "task_migration_process_request";
const CONFIRM: &str = "task_migration_process_confirmation_response";
const ERROR: &str = "task_migration_process_error_response";

/// Node 0 holds three tasks of 0.2/0.2 (one at 0.2/0.19) on 0.5/0.5: overloaded at 120 %. SCS moves
/// the 0.19 one (leaving 80 %/82 % used: SRAS 500^(0.4*0.42) - 0.8 = 2.04, the best fitness).
fn overloaded_node_zero(h: &mut Harness) -> TaskIdx {
    h.task(0, 0.2, 0.2);
    let moving = h.task(0, 0.2, 0.19);
    h.task(0, 0.2, 0.2);
    moving
}

#[test]
fn successful_migration() {
    let mut h = Harness::new(3);
    let moving = overloaded_node_zero(&mut h);
    h.rounds(6);
    // Agents: broker 0, NA(node 0) = 1, NA(node 1) = 2, NA(node 2) = 3.
    assert_eq!(h.messages_in(0), vec![(1, 0, GET)]);
    assert_eq!(h.messages_in(1), vec![(0, 1, CANDIDATES)]);
    assert_eq!(h.messages_in(2), vec![(1, 2, REQUEST), (1, 3, REQUEST)]);
    assert_eq!(h.messages_in(3), vec![(2, 1, ACCEPT), (3, 1, ACCEPT)]);
    let process = h.messages_in(4);
    assert_eq!(process.len(), 1);
    let (_, target_agent, kind) = process[0];
    assert_eq!(kind, PROCESS);
    assert_eq!(h.messages_in(5), vec![(target_agent, 1, CONFIRM)]);
    // Started after round 5: counted on both nodes until the transfer ends.
    let target = NodeIdx(target_agent - 1);
    assert_eq!(h.cell.tasks.migrating_to()[moving.index()], target);
    assert_eq!((h.counters.get(counter::STARTED) as u64), 1);
    // An overloaded node's migration: no offload's.
    assert_eq!(h.counters.get(counter::OFFLOAD), 0.0);
    h.rounds(12);
    assert_eq!(h.cell.tasks.node()[moving.index()], target);
    assert_eq!(
        (
            (h.counters.get(counter::COMPLETED) as u64),
            (h.counters.get(counter::COLLISIONS) as u64),
            h.cell.migrating()
        ),
        (1, 0, 0)
    );
    assert!(
        h.log.iter().all(|e| e.0 <= 5),
        "node 0 is stable after the move: no new SAN"
    );
    // migrations.parquet rows: started, then completed, source machine 100 (node 0) to the target.
    let records = h.migration_rows(|r| *r);
    let outcomes: Vec<_> = records
        .iter()
        .map(|r| (r.outcome, r.source_machine, r.target_machine))
        .collect();
    let target_machine = Some(100 + target.0 as u64);
    assert_eq!(
        outcomes,
        vec![
            (MigrationOutcome::Started, 100, target_machine),
            (MigrationOutcome::Completed, 100, target_machine)
        ]
    );
    assert!(
        records[0].cost_mb > 100.0
            && records[0].cost_mb == records[1].cost_mb
            && !records[0].forced
    );
    assert!(
        records.iter().all(|r| !r.offload),
        "an overload's, not an offload's"
    );
}

#[test]
fn rejection_then_success() {
    let mut h = Harness::new(3);
    overloaded_node_zero(&mut h);
    h.rounds(2);
    // After the broker answered (from round-0 reports), node 2 gets busy: it will reject.
    h.task(2, 0.45, 0.45);
    h.rounds(4);
    assert_eq!(h.messages_in(2), vec![(1, 2, REQUEST), (1, 3, REQUEST)]);
    assert_eq!(h.messages_in(3), vec![(2, 1, ACCEPT), (3, 1, REJECT)]);
    assert_eq!(h.messages_in(4), vec![(1, 2, PROCESS)]);
    assert_eq!(h.messages_in(5), vec![(2, 1, CONFIRM)]);
}

#[test]
fn collision_on_one_target_one_wins_one_retries() {
    // Nodes 0 and 1 are overloaded alike; node 2 has room for one such task, not two. Each
    // overloaded node can hold the other's task in total capacity, so the broker adds it as a
    // forced candidate (fewer than 15 nodes have room), tried last.
    let mut h = Harness::new(3);
    overloaded_node_zero(&mut h);
    h.task(1, 0.2, 0.2);
    let loser = h.task(1, 0.2, 0.19);
    h.task(1, 0.2, 0.2);
    h.task(2, 0.25, 0.25);
    h.rounds(8);
    assert_eq!(h.messages_in(0), vec![(1, 0, GET), (2, 0, GET)]);
    assert_eq!(
        h.messages_in(1),
        vec![(0, 1, CANDIDATES), (0, 2, CANDIDATES)]
    );
    assert_eq!(
        h.messages_in(2),
        vec![
            (1, 2, REQUEST),
            (1, 3, REQUEST),
            (2, 1, REQUEST),
            (2, 3, REQUEST)
        ]
    );
    assert_eq!(
        h.messages_in(3),
        vec![
            (1, 2, ACCEPT),
            (2, 1, ACCEPT),
            (3, 1, ACCEPT),
            (3, 2, ACCEPT)
        ]
    );
    // Both pick node 2 (the only non-forced acceptor) and collide there.
    assert_eq!(h.messages_in(4), vec![(1, 3, PROCESS), (2, 3, PROCESS)]);
    // The first to arrive (sender order) wins; the other gets an error ...
    assert_eq!(h.messages_in(5), vec![(3, 1, CONFIRM), (3, 2, ERROR)]);
    // ... and, on receiving it, retries with its next candidate, the forced one (node 0) ...
    assert_eq!(h.messages_in(6), vec![(2, 1, PROCESS)]);
    // ... which takes it, checking only its total capacity.
    assert_eq!(h.messages_in(7), vec![(1, 2, CONFIRM)]);
    assert_eq!((h.counters.get(counter::COLLISIONS) as u64), 1);
    assert_eq!(
        (
            (h.counters.get(counter::STARTED) as u64),
            (h.counters.get(counter::FORCED) as u64)
        ),
        (2, 1)
    );
    assert_eq!(h.cell.tasks.migrating_to()[loser.index()], NodeIdx(0));
    let records = h.migration_rows(|r| *r);
    let outcomes: Vec<_> = records
        .iter()
        .map(|r| (r.outcome, r.source_machine, r.target_machine, r.forced))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (MigrationOutcome::Started, 100, Some(102), false),
            (MigrationOutcome::Collision, 101, Some(102), false),
            // The first transfer (1,850 MB at 125 MB/s: 14.8 s from round 5) ends before round 7.
            (MigrationOutcome::Completed, 100, Some(102), false),
            (MigrationOutcome::Started, 101, Some(100), true),
        ]
    );
    assert!(records.iter().all(|r| !r.offload));
}

#[test]
fn forced_migration_to_the_only_full_node_that_can_host() {
    // A task constrained to attribute 1 = 7 sits on node 0, which lost the attribute (compulsory);
    // only node 1 has it, and node 1 is full: the broker recommends it as forced.
    let mut h = Harness::new(3);
    let t = h.task(0, 0.05, 0.05);
    let constraint = Constraint {
        name: 1,
        op: ingest::codes::comparison::EQUAL,
        value: 2,
        value_int: Some(7),
    };
    h.cell.set_constraints(t, &[constraint]);
    h.cell.set_attribute(NodeIdx(1), 1, (2, Some(7)));
    h.task(1, 0.48, 0.48);
    h.rounds(6);
    assert_eq!(h.messages_in(0), vec![(1, 0, GET)]);
    assert_eq!(h.messages_in(1), vec![(0, 1, CANDIDATES)]);
    assert_eq!(h.messages_in(2), vec![(1, 2, REQUEST)]);
    assert_eq!(h.messages_in(3), vec![(2, 1, ACCEPT)]);
    assert_eq!(h.messages_in(4), vec![(1, 2, PROCESS)]);
    assert_eq!(h.messages_in(5), vec![(2, 1, CONFIRM)]);
    assert_eq!((h.counters.get(counter::FORCED) as u64), 1);
    // Started at round 5, 10 s before the tick ends: M = 0.05 x 2,490 = 124.5 MB dirtied at 3 M
    // per second does not converge, so 3.7 M + 100 = 560.7 MB go in 4.5 s, within the tick.
    assert_eq!(h.cell.tasks.node()[t.index()], NodeIdx(1));
    assert_eq!((h.counters.get(counter::COMPLETED) as u64), 1);
}

#[test]
fn recommendations_expire_then_scs_restarts() {
    let mut h = Harness::new(3);
    overloaded_node_zero(&mut h);
    h.rounds(4);
    // Both accepted (round 3); now every candidate becomes unreachable before the process request
    // is answered: node 0's agent waits until its recommendations expire (3 minutes = 18 rounds
    // after the request in round 0), then selects again.
    h.cell.set_machine(NodeIdx(1), false, None);
    h.cell.set_machine(NodeIdx(2), false, None);
    h.rounds(16);
    assert_eq!(h.messages_in(4).len(), 1);
    assert!(
        (5..18).all(|r| h.messages_in(r).is_empty()),
        "silence while waiting: {:?}",
        h.log
    );
    assert_eq!(h.messages_in(18), vec![(1, 0, GET)]);
}

/// Node 0 runs a task constrained to attribute 1 = 7, which both nodes have: its agent, having
/// seen the task meet its constraints, stays silent tick after tick. When node 0 loses the
/// attribute, or the task's constraints change to attribute 1 = 8, between two ticks, the task
/// becomes compulsory and the agent asks the broker for candidates in the next tick's first round.
#[test]
fn constraint_changes_between_ticks_are_noticed() {
    let wants_seven = Constraint {
        name: 1,
        op: ingest::codes::comparison::EQUAL,
        value: 2,
        value_int: Some(7),
    };
    for change in 0..3 {
        let mut h = Harness::new(2);
        for n in 0..2 {
            h.cell.set_attribute(NodeIdx(n), 1, (2, Some(7)));
        }
        let t = h.task(0, 0.05, 0.05);
        h.cell.set_constraints(t, &[wants_seven]);
        h.rounds(12);
        assert!(h.log.is_empty(), "{:?}", h.log);
        match change {
            0 => {}
            1 => h.cell.remove_attribute(NodeIdx(0), 1),
            _ => {
                let wants_eight = Constraint {
                    value: 3,
                    value_int: Some(8),
                    ..wants_seven
                };
                h.cell.set_constraints(t, &[wants_eight]);
            }
        }
        h.rounds(6);
        let expected = if change == 0 {
            vec![]
        } else {
            vec![(1, 0, GET)]
        };
        assert_eq!(h.messages_in(12), expected, "change {change}");
    }
}

/// Cache sharing among brokers: every node report is counted as shared with each other broker
/// (delivered through the brokers' shared cache rather than the mailbox), in the tick its broker
/// receives it. (That the shared cache gives every broker the view the messages gave is checked
/// by the runs' byte-identical outputs before and after the change, `bench-results`.)
#[test]
fn reports_are_shared_with_every_other_broker() {
    let config = MasbConfig {
        brokers_per_12500_nodes: 9_375, // 4 nodes -> 3 brokers
        ..MasbConfig::default()
    };
    let mut h = Harness::with_config(4, config);
    h.rounds(18);
    assert_eq!(h.masb.brokers, 3);
    let kind = |name: &str| MESSAGE_KINDS.iter().position(|k| *k == name).unwrap();
    for tick in &h.counts {
        assert_eq!(tick[kind("node_report")], 4);
        assert_eq!(tick[kind("cache_share")], 4 * 2);
    }
    assert!(
        h.log.iter().all(|e| e.3 != "cache_share"),
        "shares never pass through the mailbox"
    );
}

/// Initial allocation on a node whose tasks request much more than they use (non-production,
/// so the RUS rule reserves nothing): node 0 (0.5 / 0.5) holds a task requesting 0.45 CPU and
/// 0.1 memory that uses 0.05 and 0.1. A new task requesting 0.1 / 0.1 would leave 110 % of the
/// node's CPU requested (SIAS 0 under `sias_node_load = "requested"`: the broker asks nobody and
/// the task waits) but 30 % of its CPU and 40 % of its memory used (SIAS > 0 under the default
/// `"used"`: once the node's first report is in the broker's cache, the broker asks node 0 in the
/// second tick's round 0 (global round 6), its agent accepts in round 7 and the task runs).
#[test]
fn initial_allocation_on_a_node_whose_tasks_use_less_than_they_request() {
    for load in [SiasNodeLoad::Used, SiasNodeLoad::Requested] {
        let config = MasbConfig {
            sias_node_load: load,
            ..MasbConfig::default()
        };
        let mut h = Harness::with_config(1, config);
        let big = h.task(0, 0.45, 0.1);
        h.cell.set_usage(big, to_units(0.05), to_units(0.1));
        let new = h.submit(0.1, 0.1);
        h.rounds(12);
        let state = h.cell.tasks.state()[new.index()];
        if load == SiasNodeLoad::Used {
            assert_eq!(h.messages_in(6), vec![(0, 1, "allocation_request")]);
            assert_eq!(h.messages_in(7), vec![(1, 0, "allocation_answer")]);
            assert_eq!(state, TaskState::Running);
            assert_eq!(h.cell.tasks.node()[new.index()], NodeIdx(0));
        } else {
            assert!(
                h.log.iter().all(|e| e.3 != "allocation_request"),
                "{:?}",
                h.log
            );
            assert_eq!(state, TaskState::Pending);
        }
    }
}

/// A new task's asks depend on nothing but its own demand, its place in the broker's
/// assignment and the cache: each draws from a random stream of its own, which is what lets the
/// broker score its tasks in the order of their windows rather than the assignment's. Two cells
/// alike but for the size of one new task (the 6th of 24): every other task gets the same asks,
/// in the same order, at the tick the broker first offers them (global round 6; the cache is
/// empty before). The large 6th task fits on 2 nodes only (0 and 15 use at most 0.01 of each
/// resource), so it draws 2 asks instead of 10: with one stream shared by the broker's tasks,
/// those after it would draw differently.
#[test]
fn a_new_tasks_asks_do_not_depend_on_the_other_new_tasks() {
    let asks_of = |sixth: f32| {
        let mut h = Harness::new(30);
        for n in 0..30 {
            h.task(n, 0.01 * (n % 7) as f32, 0.015 * (n % 5) as f32);
        }
        let tasks: Vec<TaskIdx> = (0..24)
            .map(|k| match k {
                5 => h.submit(sixth, sixth),
                _ => h.submit(0.01 + 0.004 * k as f32, 0.02),
            })
            .collect();
        h.rounds(7);
        let b = h.agents[0].broker.as_ref().expect("agent 0 is the broker");
        let by_task: Vec<(TaskIdx, Vec<NodeIdx>)> = (b.allocations.iter())
            .map(|a| {
                // The node asked at round 0, then those still to ask, in order.
                let asked = b.asks[a.next as usize - 1];
                let asks = std::iter::once(asked).chain(a.asks_to_come(&b.asks));
                (a.task.0, asks.map(|r| r.node).collect())
            })
            .collect();
        (tasks, by_task)
    };
    let (tasks, small) = asks_of(0.02);
    let (_, large) = asks_of(0.44);
    assert_eq!(small.len(), 24, "every new task has nodes to ask");
    assert!(small.iter().all(|(_, asks)| asks.len() == 10));
    let others = |v: &[(TaskIdx, Vec<NodeIdx>)]| {
        v.iter()
            .filter(|(t, _)| *t != tasks[5])
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(others(&small), others(&large));
    let sixth = |v: &[(TaskIdx, Vec<NodeIdx>)]| v.iter().find(|(t, _)| *t == tasks[5]).cloned();
    assert_eq!(sixth(&large).map(|(_, a)| a.len()), Some(2));
    // The asks are in random order, not the ranking's: they differ between tasks.
    let orders: std::collections::HashSet<&Vec<NodeIdx>> = small.iter().map(|(_, a)| a).collect();
    assert!(orders.len() > 12);
}

/// Seed 000 section 5: "NA selects a number of tasks in the first step (SCS) and processes
/// their allocation in parallel". Node 0 holds four tasks of 0.2/0.2 on 0.5/0.5 (160 %): SCS
/// must move two of them (leaving 0.4/0.4, 80 %). Both SAN processes run at once, each step in
/// the same round: two candidate requests in round 0, both tasks' migration requests to the
/// three other nodes in round 2, both process requests in round 4 and both confirmations in
/// round 5 (one after another, the second task's candidate request would wait for round 6).
#[test]
fn the_tasks_one_scs_selects_are_negotiated_in_parallel() {
    let mut h = Harness::new(4);
    let on_zero: Vec<TaskIdx> = (0..4).map(|_| h.task(0, 0.2, 0.2)).collect();
    h.rounds(12);
    let twice = |m: &[(u32, u32, &'static str)]| -> Vec<(u32, u32, &'static str)> {
        m.iter().flat_map(|&x| [x, x]).collect()
    };
    assert_eq!(h.messages_in(0), twice(&[(1, 0, GET)]));
    assert_eq!(h.messages_in(1), twice(&[(0, 1, CANDIDATES)]));
    let requests = twice(&[(1, 2, REQUEST), (1, 3, REQUEST), (1, 4, REQUEST)]);
    assert_eq!(h.messages_in(2), requests);
    let accepts = twice(&[(2, 1, ACCEPT), (3, 1, ACCEPT), (4, 1, ACCEPT)]);
    assert_eq!(h.messages_in(3), accepts);
    let process = h.messages_in(4);
    assert_eq!(process.len(), 2);
    assert!(process.iter().all(|m| m.0 == 1 && m.2 == PROCESS));
    let confirms: Vec<_> = process.iter().map(|m| (m.1, 1, CONFIRM)).collect();
    assert_eq!(h.messages_in(5), confirms);
    assert!(
        (6..12).all(|r| h.messages_in(r).is_empty()),
        "node 0 is stable after both moves: {:?}",
        h.log
    );
    let still_on_zero = on_zero
        .iter()
        .filter(|t| h.cell.tasks.node()[t.index()] == NodeIdx(0));
    assert_eq!(still_on_zero.count(), 2);
    assert_eq!(
        (
            h.counters.get(counter::COMPLETED) as u64,
            h.counters.get(counter::COLLISIONS) as u64
        ),
        (2, 0)
    );
}

/// A target answers a migration request (step 3) with the tests it will apply to the process
/// request (step 5), the RUS rule included: node 1 has room in usage for node 0's production
/// task but its production requests (0.4 of 0.5 CPU) leave no room for the task's 0.2, so it
/// rejects at once; node 2 accepts and takes the move. (Accepting in step 3 and refusing in
/// step 5 turned 47 % of the process requests of a GCD day into collisions.)
#[test]
fn a_target_refuses_a_production_task_its_production_requests_cannot_take() {
    let mut h = Harness::new(3);
    let production = ingest::codes::PRODUCTION_PRIORITY;
    let moving = overloaded_node_zero(&mut h);
    let on_zero: Vec<TaskIdx> = (0..h.cell.tasks.len() as u32).map(TaskIdx).collect();
    for t in on_zero {
        h.cell.set_priority(t, production);
    }
    let busy = h.task(1, 0.4, 0.1);
    h.cell.set_priority(busy, production);
    h.cell.set_usage(busy, to_units(0.05), to_units(0.05));
    h.rounds(6);
    assert_eq!(h.messages_in(2), vec![(1, 2, REQUEST), (1, 3, REQUEST)]);
    assert_eq!(h.messages_in(3), vec![(2, 1, REJECT), (3, 1, ACCEPT)]);
    assert_eq!(h.messages_in(4), vec![(1, 3, PROCESS)]);
    assert_eq!(h.messages_in(5), vec![(3, 1, CONFIRM)]);
    assert_eq!(h.cell.tasks.migrating_to()[moving.index()], NodeIdx(2));
    assert_eq!(h.counters.get(counter::COLLISIONS) as u64, 0);
}

/// `accept_max_use` (not in the paper, off by default): five new tasks of 0.1 / 0.1 reach the
/// one empty node of 0.5 / 0.5 in the same round (the broker scores them all on the empty node's
/// report). By default the node takes all five, ending at 100 % of each resource (STA); with
/// the option it stops at four (80 %): a fifth would leave it above `max_use` (90 %), which
/// SIAS scores 0, and it is refused again for as long as it is asked.
#[test]
fn accept_max_use_keeps_a_burst_under_the_score_limit() {
    for accept_max_use in [false, true] {
        let config = MasbConfig {
            accept_max_use,
            ..MasbConfig::default()
        };
        let mut h = Harness::with_config(1, config);
        let new: Vec<TaskIdx> = (0..5).map(|_| h.submit(0.1, 0.1)).collect();
        h.rounds(18);
        let asked = h.log.iter().filter(|e| e.3 == "allocation_request").count();
        let running = (new.iter())
            .filter(|t| h.cell.tasks.state()[t.index()] == TaskState::Running)
            .count();
        // All five asked in the burst; the refused one again while the report is stale.
        assert!(asked >= 5, "{asked}");
        assert_eq!(running, if accept_max_use { 4 } else { 5 });
        let used = h.cell.nodes.cpu_used()[0] as f64 / h.cell.nodes.cpu_cap()[0] as f64;
        assert_eq!(used, if accept_max_use { 0.8 } else { 1.0 });
    }
}

/// `book_asks` (not in the paper, off by default): eight nodes of 0.5 / 0.5, four new tasks of
/// 0.3 / 0.3 at tick 0 and four more at tick 1. A node can hold one (two would be 120 %), and
/// SIAS scores a node holding one at 0 for a second (past `max_use`). At tick 1's first round
/// the broker still reads the reports made at tick 0's start (every node empty: reports are read
/// the round after they are made). With bookings each task's first ask goes to a node no task
/// before it booked, across the two ticks too, so the eight requests find eight different
/// nodes and none is refused; without, tasks scored on the same reports ask the same nodes and
/// the refused ones ask again (one still waits after three ticks).
#[test]
fn book_asks_sends_a_burst_to_distinct_nodes_across_ticks() {
    for book_asks in [false, true] {
        let config = MasbConfig {
            book_asks,
            ..MasbConfig::default()
        };
        let mut h = Harness::with_config(8, config);
        let mut new: Vec<TaskIdx> = (0..4).map(|_| h.submit(0.3, 0.3)).collect();
        h.rounds(6);
        new.extend((0..4).map(|_| h.submit(0.3, 0.3)));
        h.rounds(12);
        let requests: Vec<(u64, u32)> = (h.log.iter())
            .filter(|e| e.3 == "allocation_request")
            .map(|e| (e.0, e.2))
            .collect();
        let first_round: Vec<u32> = (requests.iter())
            .filter(|r| r.0 == 0 || r.0 == 6)
            .map(|r| r.1)
            .collect();
        let mut distinct = first_round.clone();
        distinct.sort();
        distinct.dedup();
        let running = (new.iter())
            .filter(|t| h.cell.tasks.state()[t.index()] == TaskState::Running)
            .count();
        assert_eq!(first_round.len(), 8, "{first_round:?}");
        if book_asks {
            assert_eq!(running, 8);
            assert_eq!(distinct.len(), 8, "{first_round:?}");
            assert_eq!(requests.len(), 8, "{requests:?}");
            // Tick 2's reports (made after the placements) caught up with every booking.
            let broker = h.agents[0].broker.as_ref().unwrap();
            assert!(broker.booked.is_empty(), "{:?}", broker.booked);
        } else {
            assert!(distinct.len() < 8, "{first_round:?}");
            assert!(requests.len() > 8, "{requests:?}");
            assert_eq!(running, 7);
        }
    }
}

/// `initial_asks`: how many of a new task's best nodes the broker asks before the task waits.
/// Two nodes of 0.5 / 0.5, node 1 running a task of 0.1 / 0.1; a new task of 0.1 / 0.1 arrives
/// at tick 0. The broker first scores it in tick 1's round 0 (global round 6) on the reports made
/// at tick 0's start: node 0 empty, so best in score order (SIAS, free fractions after the task:
/// 350^(0.5 x 0.5) - 0.8 = 3.53 against 350^(0.3 x 0.3) - 0.8 = 0.89 for node 1). Before that
/// round a task of 0.45 / 0.45 starts on node 0 (as a trace's placement would), so node 0's
/// agent refuses (0.55 > 0.5). Asking two, the broker asks node 1 next within tick 1 and the
/// task runs there; asking one, the task waits for tick 2, whose round 0 scores node 0 from its
/// new report (0.55 of 0.5 with the task: past `max_use`, score 0, not asked) and asks node 1.
#[test]
fn initial_asks_sets_how_many_nodes_are_asked_before_a_task_waits() {
    for asks in [1, 2] {
        let config = MasbConfig {
            initial_asks: asks,
            initial_order: InitialOrder::Score,
            ..MasbConfig::default()
        };
        let mut h = Harness::with_config(2, config);
        h.task(1, 0.1, 0.1);
        let new = h.submit(0.1, 0.1);
        h.rounds(6);
        h.task(0, 0.45, 0.45);
        h.rounds(6);
        let requests: Vec<(u64, u32)> = (h.log.iter())
            .filter(|e| e.3 == "allocation_request")
            .map(|e| (e.0, e.2))
            .collect();
        let running = h.cell.tasks.state()[new.index()] == TaskState::Running;
        if asks == 1 {
            assert_eq!(requests, [(6, 1)]);
            assert!(!running);
            h.rounds(6);
            let later: Vec<(u64, u32)> = (h.log.iter())
                .filter(|e| e.3 == "allocation_request" && e.0 >= 12)
                .map(|e| (e.0, e.2))
                .collect();
            assert_eq!(later, [(12, 2)]);
        } else {
            assert_eq!(requests.len(), 2, "{requests:?}");
            assert_eq!(requests[0], (6, 1));
            assert_eq!(requests[1].1, 2);
            assert!(requests[1].0 < 12, "{requests:?}");
        }
        assert_eq!(h.cell.tasks.state()[new.index()], TaskState::Running);
        assert_eq!(h.cell.tasks.node()[new.index()], NodeIdx(1));
    }
}

/// `initial_asks` is at least 1 and at most the room a broker keeps per offer.
#[test]
fn initial_asks_out_of_range_is_an_error_naming_it() {
    for (asks, ok) in [(0, false), (1, true), (10, true), (11, false)] {
        let config = MasbConfig {
            initial_asks: asks,
            ..MasbConfig::default()
        };
        let got = config.validate();
        assert_eq!(got.is_ok(), ok, "{asks}: {got:?}");
        if let Err(e) = got {
            assert!(e.contains("initial_asks"), "{e}");
        }
    }
}

/// `warm_start` (not in the paper, off by default): two nodes of 0.5 / 0.5 and two new tasks of
/// 0.1 / 0.1 at tick 0, the first with its recorded placement on node 1 (the trace's initial
/// state), the second without. Taking over the initial state, MASB starts the first on node 1
/// at tick 0's start, before any round, and asks nobody for it; the second it places itself
/// (its broker first scores it in tick 1's round 0). Without, both wait for the broker.
#[test]
fn warm_start_takes_over_the_recorded_initial_placements() {
    for warm_start in [false, true] {
        let config = MasbConfig {
            warm_start,
            ..MasbConfig::default()
        };
        let mut h = Harness::with_config(2, config);
        let (recorded, other) = (h.submit(0.1, 0.1), h.submit(0.1, 0.1));
        let generation = h.cell.tasks.generation()[recorded.index()];
        h.placements.push(Placement {
            task: recorded,
            generation,
            node: NodeIdx(1),
        });
        h.rounds(1);
        let state = |h: &Harness, t: TaskIdx| h.cell.tasks.state()[t.index()];
        assert_eq!(state(&h, other), TaskState::Pending);
        if warm_start {
            assert_eq!(state(&h, recorded), TaskState::Running);
            assert_eq!(h.cell.tasks.node()[recorded.index()], NodeIdx(1));
        } else {
            assert_eq!(state(&h, recorded), TaskState::Pending);
        }
        h.rounds(11);
        assert_eq!(state(&h, other), TaskState::Running);
        assert_eq!(state(&h, recorded), TaskState::Running);
        let asks = h.log.iter().filter(|e| e.3 == "allocation_request").count();
        assert_eq!(asks, if warm_start { 1 } else { 2 });
    }
}

/// `offload_every_s` (not in seed 000, off by default), with the default goal (leave a node
/// that is not DA) and SRAS as seed 000's logs read it (trace units): node 0 (0.5 / 0.5) runs A
/// (0.3 / 0.02) and B (0.05 / 0.02), 70 % / 8 % used: DA and stable. A and B cost the same
/// (same memory). Moving B leaves 60 % / 4 % (PA), SRAS 500^((0.2-0.6)(0.48-0.6)) - 0.8 =
/// 0.548 a migration; moving A leaves 10 % / 4 %, 500^((0.45-0.6)(0.48-0.6)) - 0.8 = 0.318;
/// both 500^0.01 - 0.8 = 0.264 for two: B alone moves. Nodes 1 and 2 each run a task of
/// `target` (CPU, memory). Period 120 s = 2 ticks: node 0's turn is the first round of every
/// tick `t` with `t % 2` its machine's phase ([`node_0_turns`]). Classes are taken at each
/// tick's start, as a run's classification leaves them.
fn offload_harness(every_s: u32, target: (f32, f32)) -> (Harness, TaskIdx, TaskIdx) {
    let config = MasbConfig {
        offload_every_s: every_s,
        ..MasbConfig::default()
    };
    let mut h = Harness::with_config(3, config);
    let (a, b) = (h.task(0, 0.3, 0.02), h.task(0, 0.05, 0.02));
    h.task(1, target.0, target.1);
    h.task(2, target.0, target.1);
    (h, a, b)
}

/// The global rounds of node 0's offload turns (period 2 ticks) in the harness's first `ticks`
/// ticks: its machine (100) drew its phase from the harness's seed (1).
fn node_0_turns(ticks: u64) -> Vec<u64> {
    let phase = offload_phase(1, 100, 2);
    (0..ticks)
        .filter(|t| t % 2 == phase)
        .map(|t| t * 6)
        .collect()
}

fn ticks_classified(h: &mut Harness, ticks: usize) {
    for _ in 0..ticks {
        Classifier::default().prime(&mut h.cell, &Thresholds::default());
        h.rounds(6);
    }
}

#[test]
fn a_stable_da_node_offloads_only_when_asked_to_and_only_on_its_turn() {
    // Nodes 1 and 2 at 20 % / 40 % (PA); B on either leaves it PA (30 % / 44 %), SRAS
    // 500^((0.35-0.6)(0.28-0.6)) - 0.8 = 0.844: a candidate with room.
    let room = (0.1, 0.2);
    // Off: a stable node never moves anything.
    let (mut h, _, b) = offload_harness(0, room);
    ticks_classified(&mut h, 4);
    assert!(h.log.is_empty(), "{:?}", h.log);
    assert_eq!(h.cell.tasks.node()[b.index()], NodeIdx(0));

    // On: B moves in node 0's first turn; A stays, and the node, PA now, moves nothing more;
    // nor does the target, PA too.
    let (mut h, a, b) = offload_harness(120, room);
    ticks_classified(&mut h, 4);
    let first_turn = node_0_turns(4)[0];
    assert_eq!(h.messages_in(first_turn), vec![(1, 0, GET)]);
    assert_ne!(h.cell.tasks.node()[b.index()], NodeIdx(0));
    assert_eq!(h.cell.tasks.node()[a.index()], NodeIdx(0));
    assert_eq!(h.counters.get(counter::COMPLETED) as u64, 1);
    // Counted apart as an offload's, with all of its cost: B's 0.02 of memory moved.
    assert_eq!(h.counters.get(counter::OFFLOAD) as u64, 1);
    let cost_mb = h.counters.get(counter::COST_MB);
    assert!(cost_mb > 0.0 && h.counters.get(counter::OFFLOAD_COST_MB) == cost_mb);
    let gets: Vec<u64> = h.log.iter().filter(|e| e.3 == GET).map(|e| e.0).collect();
    assert_eq!(gets, vec![first_turn]);
    // Its `migrations/` rows say so: B's start and completion, both an offload's.
    let rows = h.migration_rows(|r| (r.outcome, r.offload));
    let done = [MigrationOutcome::Started, MigrationOutcome::Completed];
    assert_eq!(rows, done.map(|o| (o, true)).to_vec());

    // Nodes 1 and 2 96 % used (STA): only forced candidates could take B, and an offload asks
    // none of them. Node 0 asks its broker again at each of its turns (every 12 rounds), never
    // in between, and B stays.
    let (mut h, _, b) = offload_harness(120, (0.48, 0.48));
    ticks_classified(&mut h, 5);
    let gets: Vec<u64> = h.log.iter().filter(|e| e.3 == GET).map(|e| e.0).collect();
    let turns = node_0_turns(5);
    assert!(turns.len() >= 2 && turns.windows(2).all(|w| w[1] == w[0] + 12));
    assert_eq!(gets, turns);
    assert!(h.log.iter().all(|e| e.3 != REQUEST), "{:?}", h.log);
    assert_eq!(h.cell.tasks.node()[b.index()], NodeIdx(0));
    assert_eq!(h.counters.get(counter::FORCED) as u64, 0);
    // Each turn's SAN ends with no candidate: a failed row, flagged as an offload's.
    let rows = h.migration_rows(|r| (r.outcome, r.offload));
    assert_eq!(rows, vec![(MigrationOutcome::Failed, true); turns.len()]);
}

/// Two stable DA nodes offloading in the same round onto the one node with room for only one
/// of their tasks. SRAS as in `offload_harness` (free resources, trace units). Nodes 0 and 1
/// (0.5 / 0.5) each run A (0.26 / 0.02) and B (0.1 / 0.02): 72 % / 8 %, DA. Moving B leaves
/// 52 % / 4 % (PA), SRAS 500^((0.24-0.6)(0.48-0.6)) - 0.8 = 0.51, above moving A (0.16) or
/// both (0.26): B moves. Node 2 runs 0.34 / 0.34 (68 %: PA, so it never offloads); a B there
/// leaves 88 % / 72 % (TA), SRAS 500^((0.06-0.6)(0.14-0.6)) - 0.8 = 3.9; two Bs would need
/// 0.54 CPU of its 0.5. Node 0 or 1 taking the other's B would reach 92 % CPU, above SRAS's
/// `max_use`: node 2 is each offload's only candidate. Period 60 s = 1 tick: every node's turn
/// is every tick's first round.
#[test]
fn two_offloads_onto_one_target_one_moves_and_the_other_fails_without_overloading_it() {
    let config = MasbConfig {
        offload_every_s: 60,
        ..MasbConfig::default()
    };
    let mut h = Harness::with_config(3, config);
    let (a0, b0) = (h.task(0, 0.26, 0.02), h.task(0, 0.1, 0.02));
    let (a1, b1) = (h.task(1, 0.26, 0.02), h.task(1, 0.1, 0.02));
    h.task(2, 0.34, 0.34);
    let cap = h.cell.nodes.cpu_cap()[2];
    let mut peak = 0;
    Classifier::default().prime(&mut h.cell, &Thresholds::default());
    for _ in 0..6 {
        h.rounds(1);
        peak = peak.max(h.cell.nodes.cpu_used()[2]);
    }
    // Agents: broker 0, NA(node n) = n + 1. Both ask in the first round, both are offered
    // node 2 alone, both ask it, both are accepted (nothing incoming yet) ...
    assert_eq!(h.messages_in(0), vec![(1, 0, GET), (2, 0, GET)]);
    assert_eq!(h.messages_in(2), vec![(1, 3, REQUEST), (2, 3, REQUEST)]);
    assert_eq!(h.messages_in(3), vec![(3, 1, ACCEPT), (3, 2, ACCEPT)]);
    assert_eq!(h.messages_in(4), vec![(1, 3, PROCESS), (2, 3, PROCESS)]);
    // ... the first to arrive (sender order) wins, the other gets an error ...
    assert_eq!(h.messages_in(5), vec![(3, 1, CONFIRM), (3, 2, ERROR)]);
    // ... and, with no forced candidate to fall back on, gives up at the next round (its
    // next turn of the period begins there too).
    Classifier::default().prime(&mut h.cell, &Thresholds::default());
    h.rounds(1);
    peak = peak.max(h.cell.nodes.cpu_used()[2]);
    assert_eq!(h.messages_in(6), vec![(2, 0, GET)]);
    assert!(peak <= cap, "node 2 used {peak} of {cap}");
    assert_eq!(h.cell.tasks.node()[b0.index()], NodeIdx(2));
    for (t, n) in [(a0, 0), (a1, 1), (b1, 1)] {
        assert_eq!(h.cell.tasks.node()[t.index()], NodeIdx(n));
    }
    assert_eq!(h.counters.get(counter::COLLISIONS) as u64, 1);
    assert_eq!(h.counters.get(counter::FORCED) as u64, 0);
    let rows = h.migration_rows(|r| (r.outcome, r.source_machine, r.offload));
    assert_eq!(
        rows,
        vec![
            (MigrationOutcome::Started, 100, true),
            (MigrationOutcome::Collision, 101, true),
            // B's transfer (its 0.02 of memory) ends before round 6.
            (MigrationOutcome::Completed, 100, true),
            (MigrationOutcome::Failed, 101, true),
        ]
    );
}
