//! Per-tick metrics (SPEC 5.4 and 9): node classes with the RUS rule, usage, requested and
//! production-reserved ratios, task counts, policy counters, messages per type and wall time.
//!
//! Classification runs in parallel over node chunks and writes `Nodes::class`; the sums are
//! integers, so the result does not depend on chunking or thread count.

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

#[derive(Default, Clone, Copy)]
struct Partial {
    classes: [u32; 7],
    rus: u32,
    sums: [u64; 8],
    running: u64,
}

/// Nodes per parallel work item when classifying.
const NODES_PER_CHUNK: usize = 512;

/// Classifies every node (writing `cell.nodes.class`) and returns the tick's cell figures.
pub fn measure(cell: &mut Cell, thresholds: &Thresholds, tick: u32, time_us: i64) -> TickRow {
    // The class column is written while the other columns are read.
    let partials: Vec<Partial> = cell.classify_nodes(|classes, view| {
        classes
            .par_chunks_mut(NODES_PER_CHUNK)
            .enumerate()
            .map(|(c, out)| {
                let mut p = Partial::default();
                for (k, slot) in out.iter_mut().enumerate() {
                    let i = c * NODES_PER_CHUNK + k;
                    if !view.online()[i] {
                        *slot = NodeClass::Offline;
                        continue;
                    }
                    let load = view.load(i);
                    *slot = classify(&load, thresholds);
                    p.classes[*slot as usize] += 1;
                    p.rus += load.breaks_rus() as u32;
                    for (s, v) in p.sums.iter_mut().zip([
                        view.cpu_cap()[i],
                        view.mem_cap()[i],
                        view.cpu_used()[i],
                        view.mem_used()[i],
                        view.cpu_req()[i],
                        view.mem_req()[i],
                        view.prod_cpu_req()[i],
                        view.prod_mem_req()[i],
                    ]) {
                        *s += v as u64;
                    }
                    p.running += view.task_count()[i] as u64;
                }
                p
            })
            .collect()
    });
    let mut total = Partial::default();
    for p in &partials {
        for k in 0..7 {
            total.classes[k] += p.classes[k];
        }
        for k in 0..8 {
            total.sums[k] += p.sums[k];
        }
        total.rus += p.rus;
        total.running += p.running;
    }
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
        sums: total.sums,
        counters: PolicyCounters::default(),
        messages: Vec::new(),
    }
}
