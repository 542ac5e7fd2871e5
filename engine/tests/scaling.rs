//! Workload scaling while streaming (SPEC 7): `multiply` doubles every per-tick count of a
//! borg-replay run exactly, with distinct machine IDs; `workload_pct` and `compact_pct` select
//! exactly the tasks and machines their documented hash rule names (re-implemented here from
//! the rule, tick by tick against the unscaled replay), deterministically.

mod common;

use engine::sim_time::SimDuration;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type};
use common::*;
use engine::RunConfig;
use engine::cell::{Cell, TaskState};
use engine::replay::Replay;
use engine::scale::{COMPACT_SALT, Scale, WORKLOAD_SALT};
use ingest::rng::hash_keys;

fn generated(root: &Path) -> PathBuf {
    generated_cell(root, 300, 2.0, 9)
}

/// The documented rule: the hash falls in the first `pct` %.
fn in_first(salt: u64, keys: &[u64], pct: u64) -> bool {
    hash_keys(salt, keys) % 1_000_000 < pct * 10_000
}

#[test]
fn multiply_two_doubles_every_count_with_distinct_ids() {
    let root = tempfile::tempdir().unwrap();
    let parquet = generated(root.path());
    let run = |multiply: u32, name: &str| {
        let config = RunConfig {
            nodes_every: SimDuration::from_secs(40 * 60),
            scale: Scale {
                multiply,
                ..Scale::default()
            },
            ..RunConfig::default()
        };
        let out = root.path().join(name);
        run_borg(&config, &parquet, &out);
        out
    };
    let (one, two) = (run(1, "x1"), run(2, "x2"));
    let (a, b) = (
        read_parquet(&one.join("ticks")),
        read_parquet(&two.join("ticks")),
    );
    assert_eq!(a.num_rows(), b.num_rows());
    for name in [
        "nodes_online",
        "idle",
        "overloaded",
        "sta",
        "ta",
        "pa",
        "da",
        "rus_breaches",
    ] {
        let col = |x: &arrow_array::RecordBatch| -> Vec<u32> {
            let c = x.column(x.schema().index_of(name).unwrap());
            c.as_primitive::<UInt32Type>().values().to_vec()
        };
        let doubled: Vec<u32> = col(&a).iter().map(|v| 2 * v).collect();
        assert_eq!(col(&b), doubled, "{name}");
    }
    for name in ["tasks_running", "tasks_pending"] {
        let col = |x: &arrow_array::RecordBatch| -> Vec<u64> {
            let c = x.column(x.schema().index_of(name).unwrap());
            c.as_primitive::<UInt64Type>().values().to_vec()
        };
        let doubled: Vec<u64> = col(&a).iter().map(|v| 2 * v).collect();
        assert_eq!(col(&b), doubled, "{name}");
        if name == "tasks_running" {
            assert!(col(&a).iter().sum::<u64>() > 100_000, "a busy cell");
        }
    }
    // Machine IDs in the node samples: the originals plus as many distinct copies.
    let ids = |run: &Path| -> Vec<u64> {
        let nodes = read_parquet(&run.join("nodes"));
        let c = nodes.column(nodes.schema().index_of("machine_id").unwrap());
        c.as_primitive::<UInt64Type>().values().to_vec()
    };
    let (ids1, ids2) = (ids(&one), ids(&two));
    let set1: BTreeSet<u64> = ids1.iter().copied().collect();
    let set2: BTreeSet<u64> = ids2.iter().copied().collect();
    assert_eq!(ids2.len(), 2 * ids1.len());
    assert_eq!(set2.len(), 2 * set1.len(), "copies have distinct IDs");
    assert!(set1.is_subset(&set2), "copy 0 keeps the trace's IDs");
}

/// Replays `parquet` tick by tick with borg-replay placements; returns, per tick, the online
/// machine IDs and the running tasks' (job, index).
type TickState = (BTreeSet<u64>, BTreeSet<(u64, u32)>);

fn replay(parquet: &Path, scale: Scale) -> Vec<TickState> {
    let mut replay = Replay::open(parquet).unwrap();
    replay.set_scale(scale);
    let mut cell = Cell::default();
    let mut out = Vec::new();
    for k in 0..120i64 {
        let end_us = 600_000_000 + (k + 1) * 60_000_000;
        let events = replay.advance(&mut cell, end_us).unwrap();
        for p in &events.placements {
            let i = p.task.index();
            let ok = cell.tasks.generation()[i] == p.generation
                && cell.tasks.state()[i] == TaskState::Pending
                && p.node.is_some()
                && cell.nodes.online()[p.node.index()];
            if ok {
                cell.place(p.task, p.node, end_us);
            }
        }
        let n = &cell.nodes;
        let machines = (0..n.len())
            .filter(|&i| n.online()[i])
            .map(|i| n.machine_id()[i])
            .collect();
        let t = &cell.tasks;
        let tasks = (0..t.len())
            .filter(|&i| t.state()[i] == TaskState::Running)
            .map(|i| (t.job_id()[i], t.task_index()[i]))
            .collect();
        out.push((machines, tasks));
    }
    out
}

#[test]
fn workload_and_compaction_select_what_the_rule_says() {
    let root = tempfile::tempdir().unwrap();
    let parquet = generated(root.path());
    let base = replay(&parquet, Scale::default());
    let more = Scale {
        workload_pct: 102,
        ..Scale::default()
    };
    let more_tasks = replay(&parquet, more);
    assert_eq!(more_tasks, replay(&parquet, more), "deterministic");
    let (mut originals, mut duplicates) = (0, 0);
    for (tick, ((machines, tasks), (m2, t2))) in base.iter().zip(&more_tasks).enumerate() {
        assert_eq!(machines, m2, "tick {tick}: workload leaves machines alone");
        let mut expected = tasks.clone();
        for &(job, index) in tasks {
            if in_first(WORKLOAD_SALT, &[job, index as u64], 2) {
                expected.insert((hash_keys(WORKLOAD_SALT, &[job, 1]), index));
                duplicates += 1;
            }
        }
        originals += tasks.len();
        assert_eq!(t2, &expected, "tick {tick}");
    }
    let share = duplicates as f64 / originals as f64;
    assert!(
        (0.01..0.03).contains(&share),
        "about 2 % duplicated: {share}"
    );

    let fewer = Scale {
        workload_pct: 98,
        ..Scale::default()
    };
    for ((_, tasks), (_, t2)) in base.iter().zip(&replay(&parquet, fewer)) {
        let kept: BTreeSet<_> = tasks
            .iter()
            .copied()
            .filter(|&(j, i)| in_first(WORKLOAD_SALT, &[j, i as u64], 98))
            .collect();
        assert_eq!(t2, &kept);
    }

    let compact = Scale {
        compact_pct: 98,
        ..Scale::default()
    };
    let compacted = replay(&parquet, compact);
    assert_eq!(compacted, replay(&parquet, compact), "deterministic");
    for ((machines, _), (m2, _)) in base.iter().zip(&compacted) {
        let kept: BTreeSet<u64> = machines
            .iter()
            .copied()
            .filter(|&m| in_first(COMPACT_SALT, &[m], 98))
            .collect();
        assert_eq!(m2, &kept);
        assert!(kept.len() < machines.len() && kept.len() * 100 >= machines.len() * 95);
    }
}
