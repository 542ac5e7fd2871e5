//! Property tests (proptest) of the engine's invariants:
//! - **one place per task**: after any sequence of cell changes, every live task is in exactly
//!   one place (pending; running on one node; or migrating, on its source and its target), as an
//!   independent model of the same changes says;
//! - **node sums**: every node's used, requested, production-requested amounts and task count
//!   equal the sums over its tasks, computed here from the model (not from `Cell::check`);
//! - **snapshot round trip**: a cell saved, loaded and saved again gives the same bytes; and a
//!   whole run restored from a snapshot and written again, before any tick, gives the snapshot's
//!   bytes, for every policy kind tried;
//! - **every tick of a real run** keeps the invariants (`check_invariants`): random small
//!   generated cells under random policies.

mod common;

use std::path::Path;

use common::*;
use engine::cell::{Cell, TaskState};
use engine::ids::{NodeIdx, TaskIdx};
use engine::sim_time::SimDuration;
use engine::snapshot::{Header, Snapshot, SnapshotWriter, state};
use engine::{PolicyConfig, RunConfig};
use proptest::prelude::*;

/// One change to a cell. Task and node operands are picked modulo what exists.
#[derive(Debug, Clone)]
enum Op {
    Submit { priority: u8, cpu: u32, mem: u32 },
    Place { task: usize, node: usize },
    Unplace { task: usize },
    StartMigration { task: usize, node: usize },
    FinishMigration { task: usize },
    AbortMigration { task: usize },
    End { task: usize },
    SetUsage { task: usize, cpu: u32, mem: u32 },
    SetRequest { task: usize, cpu: u32, mem: u32 },
    SetPriority { task: usize, priority: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    let amount = 0u32..5_000;
    prop_oneof![
        (0u8..12, amount.clone(), amount.clone()).prop_map(|(priority, cpu, mem)| Op::Submit {
            priority,
            cpu,
            mem
        }),
        (any::<usize>(), any::<usize>()).prop_map(|(task, node)| Op::Place { task, node }),
        any::<usize>().prop_map(|task| Op::Unplace { task }),
        (any::<usize>(), any::<usize>()).prop_map(|(task, node)| Op::StartMigration { task, node }),
        any::<usize>().prop_map(|task| Op::FinishMigration { task }),
        any::<usize>().prop_map(|task| Op::AbortMigration { task }),
        any::<usize>().prop_map(|task| Op::End { task }),
        (any::<usize>(), amount.clone(), amount.clone())
            .prop_map(|(task, cpu, mem)| Op::SetUsage { task, cpu, mem }),
        (any::<usize>(), amount.clone(), amount).prop_map(|(task, cpu, mem)| Op::SetRequest {
            task,
            cpu,
            mem
        }),
        (any::<usize>(), 0u8..12).prop_map(|(task, priority)| Op::SetPriority { task, priority }),
    ]
}

/// Where the model says a task is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    Pending,
    Running(usize),
    Migrating(usize, usize),
}

/// The model's view of one live task.
#[derive(Debug, Clone)]
struct ModelTask {
    slot: TaskIdx,
    place: Place,
    priority: u8,
    req: (u32, u32),
    /// Measured usage; none while usage is the request (the cell's default request use).
    measured: Option<(u32, u32)>,
}

impl ModelTask {
    fn usage(&self) -> (u32, u32) {
        self.measured.unwrap_or(self.req)
    }

    /// Amounts on a node: used CPU and memory, requested, production-requested, one task.
    fn amounts(&self) -> [u64; 7] {
        let prod = u64::from(self.priority >= 9);
        let (u, r) = (self.usage(), self.req);
        let (rc, rm) = (u64::from(r.0), u64::from(r.1));
        [u.0.into(), u.1.into(), rc, rm, prod * rc, prod * rm, 1]
    }
}

const NODES: usize = 4;

/// Applies `op` to the cell and the model alike (skipping what the model says is not allowed).
fn apply(cell: &mut Cell, model: &mut Vec<ModelTask>, op: &Op, now_us: i64) {
    let pick = |k: usize| (!model.is_empty()).then(|| k % model.len());
    let node = |k: usize| NodeIdx((k % NODES) as u32);
    match *op {
        Op::Submit { priority, cpu, mem } => {
            let slot = cell.tasks.alloc(model.len() as u64, 0, priority, now_us);
            cell.set_request(slot, cpu, mem);
            model.push(ModelTask {
                slot,
                place: Place::Pending,
                priority,
                req: (cpu, mem),
                measured: None,
            });
        }
        Op::Place { task, node: n } => {
            if let Some(k) = pick(task)
                && model[k].place == Place::Pending
            {
                cell.place(model[k].slot, node(n), now_us);
                model[k].place = Place::Running(n % NODES);
            }
        }
        Op::Unplace { task } => {
            if let Some(k) = pick(task) {
                cell.unplace(model[k].slot);
                model[k].place = Place::Pending;
            }
        }
        Op::StartMigration { task, node: n } => {
            if let Some(k) = pick(task) {
                let started = cell.start_migration(model[k].slot, node(n));
                let allowed = matches!(model[k].place, Place::Running(s) if s != n % NODES);
                assert_eq!(started, allowed, "start_migration of {:?} to {n}", model[k]);
                if let Place::Running(s) = model[k].place
                    && allowed
                {
                    model[k].place = Place::Migrating(s, n % NODES);
                }
            }
        }
        Op::FinishMigration { task } => {
            if let Some(k) = pick(task) {
                cell.finish_migration(model[k].slot);
                if let Place::Migrating(_, t) = model[k].place {
                    model[k].place = Place::Running(t);
                }
            }
        }
        Op::AbortMigration { task } => {
            if let Some(k) = pick(task) {
                cell.abort_migration(model[k].slot);
                if let Place::Migrating(s, _) = model[k].place {
                    model[k].place = Place::Running(s);
                }
            }
        }
        Op::End { task } => {
            if let Some(k) = pick(task) {
                cell.end(model[k].slot);
                model.swap_remove(k);
            }
        }
        Op::SetUsage { task, cpu, mem } => {
            if let Some(k) = pick(task) {
                cell.set_usage(model[k].slot, cpu, mem);
                model[k].measured = Some((cpu, mem));
            }
        }
        Op::SetRequest { task, cpu, mem } => {
            if let Some(k) = pick(task) {
                cell.set_request(model[k].slot, cpu, mem);
                model[k].req = (cpu, mem);
            }
        }
        Op::SetPriority { task, priority } => {
            if let Some(k) = pick(task) {
                cell.set_priority(model[k].slot, priority);
                model[k].priority = priority;
            }
        }
    }
}

/// The cell agrees with the model: each live task in its one place, each node's sums.
fn agrees(cell: &Cell, model: &[ModelTask]) -> Result<(), TestCaseError> {
    let tasks = &cell.tasks;
    prop_assert_eq!(tasks.live(), model.len());
    let mut sums = [[0u64; 7]; NODES];
    for t in model {
        let i = t.slot.index();
        let (state, node, target) = (tasks.state()[i], tasks.node()[i], tasks.migrating_to()[i]);
        let found = match (state, node.is_some(), target.is_some()) {
            (TaskState::Pending, false, false) => Place::Pending,
            (TaskState::Running, true, false) => Place::Running(node.index()),
            (TaskState::Running, true, true) => Place::Migrating(node.index(), target.index()),
            other => return Err(TestCaseError::fail(format!("task {t:?} is {other:?}"))),
        };
        prop_assert_eq!(found, t.place, "task {:?}", t);
        match t.place {
            Place::Pending => {}
            Place::Running(n) => add(&mut sums[n], t.amounts()),
            Place::Migrating(s, d) => {
                prop_assert_ne!(s, d);
                add(&mut sums[s], t.amounts());
                add(&mut sums[d], t.amounts());
            }
        }
    }
    let migrating = model
        .iter()
        .filter(|t| matches!(t.place, Place::Migrating(..)))
        .count();
    prop_assert_eq!(cell.migrating() as usize, migrating);
    let nodes = &cell.nodes;
    for (n, want) in sums.iter().enumerate() {
        let have = [
            nodes.cpu_used()[n],
            nodes.mem_used()[n],
            nodes.cpu_req()[n],
            nodes.mem_req()[n],
            nodes.prod_cpu_req()[n],
            nodes.prod_mem_req()[n],
            nodes.task_count()[n],
        ]
        .map(u64::from);
        prop_assert_eq!(&have, want, "node {}", n);
    }
    prop_assert_eq!(cell.check(), Ok(()));
    Ok(())
}

fn add(sum: &mut [u64; 7], amounts: [u64; 7]) {
    for (s, a) in sum.iter_mut().zip(amounts) {
        *s += a;
    }
}

/// The bytes of a snapshot holding only `cell`, written to `path`.
fn cell_bytes(cell: &Cell, path: &Path) -> Vec<u8> {
    let mut w = SnapshotWriter::create(path, &["cell"]).unwrap();
    state::save_cell(cell, w.section("cell"));
    let header = Header {
        tick: 1,
        config_hash: 2,
        trace_hash: 3,
        run_id: 4,
    };
    w.finish(header).unwrap();
    std::fs::read(path).unwrap()
}

/// `n` cases, failures reported with their shrunk input (not persisted: the tests are not in a
/// crate root proptest could find).
fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases(256))]

    /// Any sequence of cell changes keeps every task in exactly one place and every node's sums
    /// right, after each change; the final cell survives save -> load -> save unchanged.
    #[test]
    fn cell_changes_keep_one_place_per_task_and_exact_node_sums(
        ops in proptest::collection::vec(op(), 1..120)
    ) {
        let mut cell = Cell::default();
        for m in 0..NODES as u64 {
            cell.add_machine(m, 10_000, 10_000);
        }
        let mut model = Vec::new();
        for (k, op) in ops.iter().enumerate() {
            apply(&mut cell, &mut model, op, k as i64 * 1_000_000);
            agrees(&cell, &model)?;
        }
        let dir = tempfile::tempdir().unwrap();
        let first = cell_bytes(&cell, &dir.path().join("a.snap"));
        let snap = Snapshot::open(&dir.path().join("a.snap")).unwrap();
        let back = state::load_cell(&mut snap.section("cell").unwrap()).unwrap();
        agrees(&back, &model)?;
        let second = cell_bytes(&back, &dir.path().join("b.snap"));
        prop_assert!(first == second, "save -> load -> save changed the bytes");
    }
}

/// The policies the run properties draw from, with the tick each runs at.
const POLICIES: [(&str, u64); 8] = [
    ("borg-replay", 60_000),
    ("masb", 60_000),
    ("first-fit", 60_000),
    ("best-fit", 60_000),
    ("random", 60_000),
    ("omniscient", 60_000),
    ("equal-share", 60_000),
    ("sparrow", 1_000),
];

fn run_config(policy: usize, seed: u64) -> RunConfig {
    let (kind, tick_ms) = POLICIES[policy];
    RunConfig {
        policy: PolicyConfig::default_of(kind).unwrap(),
        seed,
        tick: SimDuration::from_us(tick_ms as i64 * 1_000),
        hours: Some(0.5),
        check_invariants: true,
        threads: 2,
        snapshot: engine::snapshot::SnapshotConfig {
            every_sim_minutes: 10,
            every_wall_minutes: 0.0,
            keep: 10,
        },
        ..RunConfig::default()
    }
}

proptest! {
    #![proptest_config(cases(12))]

    /// Random small cells under random policies: every tick keeps the cell's invariants (the
    /// run fails otherwise), and each snapshot restored and written again before any tick gives
    /// the same bytes (snapshot -> restore -> snapshot is the identity).
    #[test]
    fn runs_keep_invariants_and_snapshots_round_trip(
        machines in 50u32..150,
        trace_seed in 0u64..1_000,
        policy in 0..POLICIES.len(),
        seed in 0u64..1_000,
    ) {
        let root = tempfile::tempdir().unwrap();
        let parquet = generated_cell(root.path(), machines, 0.6, trace_seed);
        let config = run_config(policy, seed);
        let run = root.path().join("run");
        run_policy(&config, &parquet, &run);
        let snapshots = engine::run_dir::list(&run).unwrap();
        prop_assert!(!snapshots.is_empty(), "{}: no snapshot", POLICIES[policy].0);
        for path in snapshots {
            let snap = Snapshot::open(&path).unwrap();
            let again = root.path().join("again.snap");
            engine::run::resnapshot_configured(&config, &parquet, &run, &snap, &again)
                .unwrap();
            let (before, after) = (std::fs::read(&path).unwrap(), std::fs::read(&again).unwrap());
            prop_assert!(
                before == after,
                "{}: {} restored and written again differs",
                POLICIES[policy].0,
                path.display()
            );
        }
    }
}
