//! Fair ties (issue 55 item 1): on a symmetric cell (identical nodes, identical tasks), where
//! every node is as good as any other, the work a policy gives each node must not depend on the
//! node's index. Until the fair inbox order, messages reaching an agent in one round were read
//! in sender index order, so Sparrow's master bound every task to the lowest-numbered worker
//! that confirmed: at 70 % load with 4 probes, machines 1-10 ran 3.5 tasks on average and
//! machines 41-50 1.5.
//!
//! Two checks. The mechanism: 20 identical senders message one agent every round, and the agent
//! takes the first message it reads; the winners must spread over the senders as uniform draws
//! do (a chi-square test). And Sparrow on seed 002's symmetric load cell: the Spearman rank
//! correlation between a worker's index and the tasks it ran, ~N(0, 1/sqrt(n - 1)) per run under
//! an assignment that ignores the index (n = 50 workers: sd 0.14), so its mean over 4 seeds has
//! sd 0.07; the bound 0.3 is four of those. The old sender order (`inbox_order = "sender"`,
//! kept to measure the bias) fails both, and both tests check that it does: every round goes to
//! sender 1, and on the load cell the first tenth of the workers runs about 26 tasks each
//! against 9 for the last.

mod common;

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use std::sync::{Arc, Mutex};

use common::{Stepped, read_parquet, run_policy, run_with, scenario_trace};
use engine::ids::AgentIdx;
use engine::policy::{Envelope, Outbox};
use engine::{InboxOrder, PolicyConfig, RunConfig};
use ingest::scenario::ScenarioConfig;

/// Seed 002's load scenario (50 identical workers of 4 slots, 1,000 one-task jobs of 10 s) at
/// `load_pct`, seed `seed`, ingested in `root`.
fn load_scenario(root: &Path, load_pct: u32, seed: u64) -> PathBuf {
    let config = ScenarioConfig {
        name: "sparrow-load".into(),
        load_pct,
        seed,
        ..ScenarioConfig::default()
    };
    scenario_trace(root, &format!("{load_pct}-{seed}"), &config)
}

/// Tasks run per machine (machine IDs ascending, as the trace adds them: node index order).
fn tasks_per_machine(run: &Path) -> Vec<f64> {
    let tasks = read_parquet(&run.join("tasks"));
    let machine = tasks.column(tasks.schema().index_of("machine_id").unwrap());
    let machine = machine.as_primitive::<UInt64Type>();
    let mut counts = std::collections::BTreeMap::<u64, f64>::new();
    for m in machine.iter().flatten() {
        *counts.entry(m).or_default() += 1.0;
    }
    counts.into_values().collect()
}

/// Ranks of `v` (average ranks for ties), from 1.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && v[order[j + 1]] == v[order[i]] {
            j += 1;
        }
        for &k in &order[i..=j] {
            r[k] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rank correlation of the node index with `per_node`.
fn index_correlation(per_node: &[f64]) -> f64 {
    let x = ranks(&(0..per_node.len()).map(|i| i as f64).collect::<Vec<_>>());
    let y = ranks(per_node);
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let cov: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum::<f64>().sqrt();
    let sy: f64 = y.iter().map(|b| (b - my).powi(2)).sum::<f64>().sqrt();
    cov / (sx * sy).max(1e-12)
}

/// The statistic itself, by hand: counts falling with the index correlate -1, rising +1.
#[test]
fn the_index_correlation_by_hand() {
    assert!((index_correlation(&[5.0, 4.0, 3.0, 1.0]) + 1.0).abs() < 1e-12);
    assert!((index_correlation(&[1.0, 2.0, 2.0, 3.0]) - 0.9486832980505138).abs() < 1e-12);
}

/// Sparrow at 70 % load with 4 probes per task (the case), seeds 1-4: the tasks each
/// worker ran do not fall with its index (mean Spearman correlation within +-0.3) and the first
/// and last tenths of the workers run alike. (Under the engine's old sender order of round
/// inboxes they fell, below -0.3; Sparrow now plays same-instant messages in sending order, so
/// the inbox order setting no longer reaches it.)
#[test]
fn sparrow_spreads_ties_over_a_symmetric_cell() {
    let root = tempfile::tempdir().unwrap();
    let policy = engine::sparrow::SparrowConfig {
        probe_ratio: 4.0,
        ..Default::default()
    };
    let traces: Vec<PathBuf> = (1..=4)
        .map(|seed| load_scenario(root.path(), 70, seed))
        .collect();
    let spread = |order: InboxOrder| {
        let (mut correlations, mut low, mut high) = (Vec::new(), 0.0, 0.0);
        for (seed, pq) in (1..=4).zip(&traces) {
            let config = RunConfig {
                policy: PolicyConfig::Sparrow(policy.clone()),
                tick: "10ms".parse().unwrap(),
                rounds_per_tick: 20,
                nodes_every: "1min".parse().unwrap(),
                part: "1min".parse().unwrap(),
                seed,
                threads: 2,
                inbox_order: order,
                ..RunConfig::default()
            };
            let run = root.path().join(format!("run-{order:?}-{seed}"));
            let summary = run_policy(&config, pq, &run);
            assert_eq!(summary.work_left.tasks_waiting, 0, "seed {seed}: all ran");
            let per = tasks_per_machine(&run);
            assert_eq!(per.len(), 50, "seed {seed}: every worker ran tasks");
            assert_eq!(per.iter().sum::<f64>(), 1_000.0);
            correlations.push(index_correlation(&per));
            low += per[..5].iter().sum::<f64>();
            high += per[45..].iter().sum::<f64>();
        }
        let mean = correlations.iter().sum::<f64>() / correlations.len() as f64;
        (correlations, mean, low, high)
    };
    let (correlations, mean, low, high) = spread(InboxOrder::Fair);
    assert!(
        mean.abs() < 0.3,
        "tasks per worker against its index: Spearman {correlations:?}, mean {mean:.3}"
    );
    // 200 tasks over each tenth of the workers on average: the two tenths within 40 %.
    assert!(
        (low - high).abs() < 0.4 * (low + high) / 2.0,
        "low tenth {low}, high tenth {high}"
    );
    // Sparrow plays its messages in exact time, in sending order (`sparrow/timeline.rs`), not
    // through the engine's inboxes: their order setting changes nothing.
    let sender = spread(InboxOrder::Sender);
    assert_eq!(sender.0, correlations, "tenths {low} / {high}");
}

const SENDERS: usize = 20;

/// Same-round messages from 20 identical senders: the first read is each sender's about
/// equally often (chi-square over 19 degrees of freedom below 50, where its 99.9 % point is
/// 43.8; the old sender order gave sender 1 every round, chi-square 3,400), and the same for
/// any thread count.
#[test]
fn same_round_messages_favour_no_sender_index() {
    let root = tempfile::tempdir().unwrap();
    let scenario = ScenarioConfig {
        name: "nbs-hadoop".into(),
        ..ScenarioConfig::default()
    };
    let pq = scenario_trace(root.path(), "hadoop", &scenario);
    let mut seen = Vec::new();
    for (threads, order) in [
        (1, InboxOrder::Fair),
        (2, InboxOrder::Fair),
        (2, InboxOrder::Sender),
    ] {
        let config = RunConfig {
            hours: Some(0.5),
            threads,
            inbox_order: order,
            ..RunConfig::default()
        };
        // Agent 0 notes the sender of the first message it reads each round; agents 1-20
        // message it every round.
        let wins = Arc::new(Mutex::new(vec![0u64; SENDERS + 1]));
        let noted = wins.clone();
        let step = move |me: AgentIdx, inbox: &[Envelope<()>], out: &mut Outbox<'_, (), ()>| match (
            me.0,
            inbox.first(),
        ) {
            (0, Some(first)) => noted.lock().unwrap()[first.from.0 as usize] += 1,
            (0, None) => {}
            _ => out.send(AgentIdx(0), ()),
        };
        let policy = Stepped {
            agents: SENDERS + 1,
            step,
        };
        let out = root.path().join(format!("run-{threads}-{order:?}"));
        run_with(&config, &pq, &out, policy);
        let wins = wins.lock().unwrap().clone();
        let rounds: u64 = wins.iter().sum();
        assert_eq!(rounds, 30 * 6 - 1, "a win per round after the first");
        let expected = rounds as f64 / SENDERS as f64;
        let chi2: f64 = wins[1..]
            .iter()
            .map(|&w| (w as f64 - expected).powi(2) / expected)
            .sum();
        if order == InboxOrder::Sender {
            assert_eq!(wins[1], rounds, "the old order: sender 1 first every round");
            continue;
        }
        assert!(
            chi2 < 50.0,
            "wins per sender {:?}: chi-square {chi2:.1}",
            &wins[1..]
        );
        seen.push(wins);
    }
    assert_eq!(seen[0], seen[1], "1 and 2 threads");
}

/// MASB on a symmetric cell: 100 identical idle machines, 20 identical one-task jobs at t = 0.
/// Every idle node scores the same for a new task, so until issue 55 the brokers' best 10 were
/// the 10 lowest-numbered nodes and every task landed among the first ~30 machines. Now the
/// machines holding a task after three ticks are spread like 20 draws without replacement
/// from 1-100: their mean machine ID over seeds 1-4 is within 12 of 50.5 (its sd there is 3.3),
/// and some of them are in the last third.
#[test]
fn masb_spreads_ties_over_a_symmetric_cell() {
    use arrow_array::types::UInt32Type;
    let root = tempfile::tempdir().unwrap();
    let trace = root.path().join("trace");
    let machines: String = (1..=100).map(|m| format!("0,{m},0,p,0.5,0.5\n")).collect();
    // time,missing,job,index,machine,event,user,class,priority,cpu,mem,disk,different-machines
    let tasks: String = (1..=20)
        .map(|j| format!("0,,{j},0,,0,u,0,0,0.05,0.05,0,0\n"))
        .collect();
    common::write_table(&trace, "machine_events", &machines);
    common::write_table(&trace, "task_events", &tasks);
    let pq = root.path().join("pq");
    common::ingest_dir(&trace, &pq);
    let (mut ids, mut last_third) = (Vec::new(), 0);
    for seed in 1..=4 {
        let config = RunConfig {
            policy: PolicyConfig::default_of("masb").unwrap(),
            hours: Some(3.0 / 60.0),
            nodes_every: "1min".parse().unwrap(),
            seed,
            threads: 2,
            ..RunConfig::default()
        };
        let run = root.path().join(format!("masb-{seed}"));
        run_policy(&config, &pq, &run);
        let nodes = read_parquet(&run.join("nodes"));
        let col = |name: &str| nodes.column(nodes.schema().index_of(name).unwrap()).clone();
        let (tick, machine, count) = (col("tick"), col("machine_id"), col("task_count"));
        let tick = tick.as_primitive::<UInt32Type>();
        let machine = machine.as_primitive::<UInt64Type>();
        let count = count.as_primitive::<UInt32Type>();
        // The last sample (the tasks run on: nothing ends).
        let last = (0..nodes.num_rows()).map(|r| tick.value(r)).max().unwrap();
        let held: Vec<u64> = (0..nodes.num_rows())
            .filter(|&r| tick.value(r) == last && count.value(r) > 0)
            .map(|r| machine.value(r))
            .collect();
        let tasks: u32 = (0..nodes.num_rows())
            .filter(|&r| tick.value(r) == last)
            .map(|r| count.value(r))
            .sum();
        assert_eq!(tasks, 20, "seed {seed}: every task placed by tick {last}");
        last_third += held.iter().filter(|&&m| m > 67).count();
        ids.extend(held);
    }
    let mean = ids.iter().sum::<u64>() as f64 / ids.len() as f64;
    assert!(
        (mean - 50.5).abs() < 12.0,
        "machines holding tasks {ids:?}: mean {mean:.1}"
    );
    assert!(last_third > 0, "{ids:?}");
}
