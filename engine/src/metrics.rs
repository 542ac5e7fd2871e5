//! Per-tick metrics (SPEC 5.4 and 9): node classes with the RUS rule, usage, requested and
//! production-reserved ratios, task counts, policy counters, messages per type and wall time.
//!
//! Classification runs in parallel over node chunks and writes `Nodes::class`; the sums are
//! integers, so the result does not depend on chunking or thread count.
//!
//! [`Classifier`] does it incrementally: it keeps each node's contribution to the tick's
//! figures and, each tick, classifies again only the nodes whose columns changed
//! ([`Cell::take_touched`]), replacing their contributions in the totals. Integer totals make
//! that exactly the full pass's result (`check_invariants` compares the two every tick). A
//! first tick or a tick that touched many nodes runs the full parallel pass, which refills the
//! cache. The cache is not saved: a restored run refills it before its first tick
//! ([`Classifier::prime`]).
//!
//! **Usage rises** (seed 000 Table 2, "resource usage spikes"): per tick, the online nodes whose
//! CPU (as measured) or memory used share of capacity rose by more than each of
//! [`RISE_THRESHOLDS_PCT`] points since the previous tick, counted against the cached figures
//! of the previous tick. A node that was not online at the previous tick is not counted. A
//! restored run primes the cache from the restored cell ([`Classifier::prime`]), which is the
//! cell as the previous tick left it, so its rises equal an uninterrupted run's.

use rayon::prelude::*;

use crate::cell::Cell;
use crate::classify::{NodeClass, Thresholds, classify};
use crate::policy::PolicyCounters;

/// One row of `ticks/`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TickRow {
    /// Tick number from the start of the trace window.
    pub tick: u32,
    /// Simulated time at the end of the tick, microseconds.
    pub time_us: i64,
    /// Nodes online.
    pub nodes_online: u32,
    /// Tasks running.
    pub tasks_running: u64,
    /// Tasks submitted and not running.
    pub tasks_pending: u64,
    /// Online nodes per class, indexed by `NodeClass as usize` (offline stays 0).
    pub classes: [u32; 7],
    /// Nodes breaking the RUS rule.
    pub rus_breaches: u32,
    /// Online nodes whose CPU or memory use rose by more than each of [`RISE_THRESHOLDS_PCT`]
    /// points of capacity since the previous tick (module doc).
    pub usage_rises: [u32; RISES],
    /// Sums over online nodes, units: CPU/memory capacity, used, requested, production-requested.
    pub sums: [u64; 8],
    /// Policy counters.
    pub counters: PolicyCounters,
    /// Messages per kind.
    pub messages: Vec<u64>,
}

impl TickRow {
    /// `sums[a] / sums[b]`, 0 when the denominator is 0.
    pub fn ratio(&self, a: usize, b: usize) -> f64 {
        if self.sums[b] == 0 {
            0.0
        } else {
            self.sums[a] as f64 / self.sums[b] as f64
        }
    }
}

/// The thresholds of [`TickRow::usage_rises`], percentage points of a node's capacity: seed 000
/// Table 2's rows (its "RUS thresholds").
pub const RISE_THRESHOLDS_PCT: [u32; RISES] = [5, 10, 15, 20, 25];

/// How many rise thresholds there are.
pub const RISES: usize = 5;

/// Indices into [`TickRow::sums`].
pub mod sum {
    /// CPU capacity.
    pub const CPU_CAP: usize = 0;
    /// Memory capacity.
    pub const MEM_CAP: usize = 1;
    /// CPU used.
    pub const CPU_USED: usize = 2;
    /// Memory used.
    pub const MEM_USED: usize = 3;
    /// CPU requested.
    pub const CPU_REQ: usize = 4;
    /// Memory requested.
    pub const MEM_REQ: usize = 5;
    /// CPU requested by production tasks.
    pub const PROD_CPU_REQ: usize = 6;
    /// Memory requested by production tasks.
    pub const PROD_MEM_REQ: usize = 7;
}

/// Figures summed over nodes: nodes per class, RUS breaches, the column sums, tasks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Partial {
    classes: [u32; 7],
    rus: u32,
    sums: [u64; 8],
    running: u64,
}

impl Partial {
    /// Adds (`sign` 1) or takes away (-1) one node's contribution.
    fn add(&mut self, node: &NodeFigures, sign: i64) {
        if node.class == NodeClass::Offline {
            return;
        }
        let add64 = |s: &mut u64, v: u64| *s = (*s as i64 + sign * v as i64) as u64;
        let c = &mut self.classes[node.class as usize];
        *c = (*c as i64 + sign) as u32;
        self.rus = (self.rus as i64 + sign * node.rus as i64) as u32;
        for (s, v) in self.sums.iter_mut().zip(node.sums) {
            add64(s, v.into());
        }
        add64(&mut self.running, node.tasks.into());
    }

    fn merge(mut self, other: Partial) -> Partial {
        for k in 0..7 {
            self.classes[k] += other.classes[k];
        }
        for k in 0..8 {
            self.sums[k] += other.sums[k];
        }
        self.rus += other.rus;
        self.running += other.running;
        self
    }
}

/// One node's contribution to a tick's figures (nothing when its class is `Offline`, the
/// default).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct NodeFigures {
    class: NodeClass,
    rus: bool,
    sums: [u32; 8],
    tasks: u32,
}

impl NodeFigures {
    /// Node `i` of `view`, classified with `thresholds`.
    fn of(view: &crate::cell::Nodes, i: usize, thresholds: &Thresholds) -> NodeFigures {
        if !view.online()[i] {
            return NodeFigures::default();
        }
        let load = view.load(i);
        NodeFigures {
            class: classify(&load, thresholds),
            rus: load.breaks_rus(),
            sums: [
                view.cpu_cap()[i],
                view.mem_cap()[i],
                load.cpu_used,
                view.mem_used()[i],
                view.cpu_req()[i],
                view.mem_req()[i],
                view.prod_cpu_req()[i],
                view.prod_mem_req()[i],
            ],
            tasks: view.task_count()[i],
        }
    }
}

/// Per threshold, the nodes whose use rose by more than it (module doc).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Rises([u32; RISES]);

impl Rises {
    /// Counts node figures `now` against the same node's `before` (the previous tick's).
    fn count(&mut self, before: &NodeFigures, now: &NodeFigures) {
        if before.class == NodeClass::Offline || now.class == NodeClass::Offline {
            return;
        }
        // used / cap rose by more than pct points: 100 (u1 c0 - u0 c1) > pct c0 c1, exactly.
        let rise = |cap: usize, used: usize| {
            let (c0, u0) = (i128::from(before.sums[cap]), i128::from(before.sums[used]));
            let (c1, u1) = (i128::from(now.sums[cap]), i128::from(now.sums[used]));
            move |pct: u32| 100 * (u1 * c0 - u0 * c1) > i128::from(pct) * c0 * c1
        };
        let (cpu, mem) = (
            rise(sum::CPU_CAP, sum::CPU_USED),
            rise(sum::MEM_CAP, sum::MEM_USED),
        );
        for (n, pct) in self.0.iter_mut().zip(RISE_THRESHOLDS_PCT) {
            *n += u32::from(cpu(pct) || mem(pct));
        }
    }

    fn merge(mut self, other: Rises) -> Rises {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
        self
    }
}

/// Nodes per parallel work item when classifying.
const NODES_PER_CHUNK: usize = 512;

/// Classifies every node (writing `cell.nodes.class` and, per node, its figures into
/// `figures`, resized to the nodes) and returns the totals and the rises against the figures
/// `figures` held before.
fn classify_all(
    cell: &mut Cell,
    thresholds: &Thresholds,
    figures: &mut Vec<NodeFigures>,
) -> (Partial, Rises) {
    figures.resize(cell.nodes.len(), NodeFigures::default());
    // The class column is written while the other columns are read.
    let partials: Vec<(Partial, Rises)> = crate::parallel_time::region(|| {
        cell.classify_nodes(|classes, view| {
            classes
                .par_chunks_mut(NODES_PER_CHUNK)
                .zip(figures.par_chunks_mut(NODES_PER_CHUNK))
                .enumerate()
                .map(|(c, (out, figures))| {
                    let (mut p, mut rises) = (Partial::default(), Rises::default());
                    for (k, (slot, node)) in out.iter_mut().zip(figures).enumerate() {
                        let now = NodeFigures::of(view, c * NODES_PER_CHUNK + k, thresholds);
                        rises.count(node, &now);
                        *node = now;
                        *slot = node.class;
                        p.add(node, 1);
                    }
                    (p, rises)
                })
                .collect()
        })
    });
    partials
        .into_iter()
        .fold((Partial::default(), Rises::default()), |(p, r), (q, s)| {
            (p.merge(q), r.merge(s))
        })
}

/// Incremental classification across ticks (module doc). Not saved in snapshots.
#[derive(Debug, Default)]
pub struct Classifier {
    /// Each node's contribution, as of the last tick; empty before the first.
    figures: Vec<NodeFigures>,
    /// Their totals.
    total: Partial,
    /// The nodes touched this tick (a reused buffer).
    touched: Vec<u32>,
}

impl Classifier {
    /// Classifies the nodes (writing `cell.nodes.class`) and returns the tick's cell figures,
    /// classifying again only the nodes whose columns changed since the last call (every node
    /// on the first call, or when more than an eighth of them changed).
    pub fn measure(
        &mut self,
        cell: &mut Cell,
        thresholds: &Thresholds,
        tick: u32,
        time_us: i64,
    ) -> TickRow {
        cell.take_touched(&mut self.touched);
        let nodes = cell.nodes.len();
        let mut rises = Rises::default();
        if self.figures.is_empty() || self.touched.len() > nodes / 8 {
            (self.total, rises) = classify_all(cell, thresholds, &mut self.figures);
        } else {
            // Nodes added since the last tick are offline until touched: no contribution.
            self.figures.resize(nodes, NodeFigures::default());
            let touched = &self.touched;
            let (figures, total) = (&mut self.figures, &mut self.total);
            cell.classify_nodes(|classes, view| {
                for &n in touched {
                    let n = n as usize;
                    total.add(&figures[n], -1);
                    let node = NodeFigures::of(view, n, thresholds);
                    rises.count(&figures[n], &node);
                    classes[n] = node.class;
                    total.add(&node, 1);
                    figures[n] = node;
                }
            });
        }
        let mut row = row(cell, self.total, tick, time_us);
        row.usage_rises = rises.0;
        row
    }

    /// Fills the figures from `cell` as it is, counting nothing: a restored run's cell as the
    /// tick before the snapshot left it, so that the next tick's rises are counted against it.
    pub fn prime(&mut self, cell: &mut Cell, thresholds: &Thresholds) {
        self.figures.clear();
        (self.total, _) = classify_all(cell, thresholds, &mut self.figures);
    }

    /// Checks the incremental figures against the full pass (`check_invariants`): the totals,
    /// and every node's class column.
    pub fn check(&self, cell: &Cell, thresholds: &Thresholds) -> Result<(), String> {
        let mut scratch = cell.clone();
        let mut figures = Vec::new();
        let (total, _) = classify_all(&mut scratch, thresholds, &mut figures);
        if total != self.total {
            return Err(format!(
                "incremental metrics {:?} but the full pass gives {total:?}",
                self.total
            ));
        }
        let differs =
            (0..cell.nodes.len()).find(|&n| scratch.nodes.class()[n] != cell.nodes.class()[n]);
        match differs {
            Some(n) => Err(format!(
                "node {n} is classed {:?}, the full pass says {:?}",
                cell.nodes.class()[n],
                scratch.nodes.class()[n]
            )),
            None => Ok(()),
        }
    }
}

/// The tick's row from the nodes' totals.
fn row(cell: &Cell, total: Partial, tick: u32, time_us: i64) -> TickRow {
    let online: u32 = total.classes.iter().sum();
    // Running tasks on offline nodes (removed this tick) are displaced by the replay, so every
    // running task is on an online node; a migrating one is counted on both of its nodes.
    let running = total.running.saturating_sub(cell.migrating as u64);
    let live = cell.tasks.live() as u64;
    TickRow {
        tick,
        time_us,
        nodes_online: online,
        tasks_running: running,
        tasks_pending: live.saturating_sub(running),
        classes: total.classes,
        rus_breaches: total.rus,
        usage_rises: [0; RISES],
        sums: total.sums,
        counters: PolicyCounters::default(),
        messages: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::TaskIdx;

    /// A task of `cpu` and `mem` units running on node `n`.
    fn run_on(cell: &mut Cell, n: u32, cpu: u32, mem: u32) -> TaskIdx {
        let t = cell.tasks.alloc(u64::from(n), 0, 0, 0);
        cell.set_request(t, cpu, mem);
        cell.place(t, crate::ids::NodeIdx(n), 0);
        t
    }

    /// Four nodes of 1,000 units each: idle, PA (50 % / 50 %), STA (95 % CPU) and one offline.
    /// The incremental figures follow a usage change on one node and a machine leaving, as worked
    /// by hand, and equal the full pass each tick.
    #[test]
    fn incremental_classes_follow_the_changed_nodes_only() {
        let mut cell = Cell::default();
        for m in 0..4 {
            cell.add_machine(m, 1_000, 1_000);
        }
        cell.set_machine(crate::ids::NodeIdx(3), false, None);
        let pa = run_on(&mut cell, 1, 500, 500);
        run_on(&mut cell, 2, 950, 100);
        let t = Thresholds::default();
        let mut classifier = Classifier::default();
        let counts = |row: &TickRow| {
            [
                NodeClass::Idle,
                NodeClass::Pa,
                NodeClass::Da,
                NodeClass::Sta,
            ]
            .map(|c| row.classes[c as usize])
        };
        let row = classifier.measure(&mut cell, &t, 0, 0);
        assert_eq!((row.nodes_online, counts(&row)), (3, [1, 1, 0, 1]));
        assert_eq!(row.sums[sum::CPU_USED], 1_450);
        classifier.check(&cell, &t).unwrap();
        // 80 % CPU, 20 % memory: DA; only node 1 is classified again.
        cell.set_usage(pa, 800, 200);
        let mut touched = cell.touched.clone();
        touched.sort();
        assert_eq!(touched, [1]);
        let row = classifier.measure(&mut cell, &t, 1, 1);
        assert_eq!(counts(&row), [1, 0, 1, 1]);
        assert_eq!(cell.nodes.class()[1], NodeClass::Da);
        assert_eq!(row.sums[sum::CPU_USED], 1_750);
        classifier.check(&cell, &t).unwrap();
        // The STA node leaves: two online, its task no longer counted.
        cell.set_machine(crate::ids::NodeIdx(2), false, None);
        let row = classifier.measure(&mut cell, &t, 2, 2);
        assert_eq!((row.nodes_online, counts(&row)), (2, [1, 0, 1, 0]));
        assert_eq!(cell.nodes.class()[2], NodeClass::Offline);
        assert_eq!(row.sums[sum::CPU_USED], 800);
        classifier.check(&cell, &t).unwrap();
    }

    /// Seed 000 Table 2's rises, worked by hand on 1,000-unit nodes: CPU 10 -> 16 % (6 points,
    /// over 5 only), memory 20 -> 46 % (26: every threshold), memory 30 -> 40 % (exactly 10:
    /// over 5 only), a node coming online (not counted), a usage fall (not counted), then the
    /// same use on half the capacity (40 -> 80 %: 40 points). Counted by the incremental pass (5 of 40
    /// nodes touched), by the full pass against the same figures, and by a classifier primed
    /// from the cell as the tick before left it (a restored run's).
    #[test]
    fn usage_rises_count_points_of_capacity_since_the_last_tick() {
        let mut cell = Cell::default();
        for m in 0..40 {
            cell.add_machine(m, 1_000, 1_000);
        }
        cell.set_machine(crate::ids::NodeIdx(3), false, None);
        let a = run_on(&mut cell, 0, 100, 100);
        let b = run_on(&mut cell, 1, 100, 200);
        let c = run_on(&mut cell, 2, 100, 300);
        let d = run_on(&mut cell, 4, 500, 500);
        let t = Thresholds::default();
        let mut classifier = Classifier::default();
        let row = classifier.measure(&mut cell, &t, 0, 0);
        let none = [0; RISES];
        assert_eq!(row.usage_rises, none, "the first tick has no tick before");
        let mut primed = Classifier::default();
        primed.prime(&mut cell.clone(), &t);
        let mut full_pass_figures = classifier.figures.clone();
        cell.set_usage(a, 160, 100);
        cell.set_usage(b, 100, 460);
        cell.set_usage(c, 100, 400);
        cell.set_usage(d, 100, 100);
        cell.set_machine(crate::ids::NodeIdx(3), true, None);
        run_on(&mut cell, 3, 900, 900);
        let (mut copy, mut full) = (cell.clone(), cell.clone());
        let expected = [3, 1, 1, 1, 1];
        assert_eq!(
            classifier.measure(&mut cell, &t, 1, 1).usage_rises,
            expected
        );
        assert_eq!(primed.measure(&mut copy, &t, 1, 1).usage_rises, expected);
        let (_, rises) = classify_all(&mut full, &t, &mut full_pass_figures);
        assert_eq!(rises.0, expected);
        // Nothing changed: nothing rose.
        assert_eq!(classifier.measure(&mut cell, &t, 2, 2).usage_rises, none);
        // Node 2 (memory 400 of 1,000) shrinks to 500: 40 -> 80 % (the CPU 10 -> 20 %).
        cell.set_machine(crate::ids::NodeIdx(2), true, Some((500, 500)));
        assert_eq!(
            classifier.measure(&mut cell, &t, 3, 3).usage_rises,
            [1; RISES]
        );
        classifier.check(&cell, &t).unwrap();
    }

    /// `[usage] cpu_compressible`: a node whose tasks want 1,200 of its 1,000 CPU units is
    /// measured at 1,000 (throttled), so STA, not overloaded, and the tick's CPU used counts
    /// 1,000; memory over capacity still overloads; a placer and MASB's node agents still read
    /// the 1,200 wanted.
    #[test]
    fn throttled_cpu_is_measured_at_capacity() {
        let mut cell = Cell::default();
        for m in 0..2 {
            cell.add_machine(m, 1_000, 1_000);
        }
        run_on(&mut cell, 0, 1_200, 300);
        run_on(&mut cell, 1, 300, 1_100);
        let t = Thresholds::default();
        let classes = |cell: &mut Cell| {
            let row = Classifier::default().measure(cell, &t, 0, 0);
            let class = [0, 1].map(|n| cell.nodes.class()[n]);
            (class, row.sums[sum::CPU_USED])
        };
        assert_eq!(classes(&mut cell), ([NodeClass::Overloaded; 2], 1_500));
        cell.nodes.set_cpu_throttled_for_test(true);
        assert_eq!(
            classes(&mut cell),
            ([NodeClass::Sta, NodeClass::Overloaded], 1_300)
        );
        assert_eq!(cell.nodes.cpu_used()[0], 1_200);
        assert_eq!(cell.nodes.cpu_measured(0), 1_000);
        // MASB's node agent still relieves it: its tasks want more than it has.
        assert!(!cell.nodes.load(0).overloaded() && cell.nodes.load_wanted(0).overloaded());
    }
}
