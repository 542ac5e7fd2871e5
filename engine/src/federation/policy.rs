//! Policy `federation`: seed 003's broker and infrastructure-level schedulers placing a GCD
//! cell's tasks (issue 35 item 7): tasks as VMs, machines as hosts, the cell split into
//! datacenters of `hosts_per_datacenter` consecutive machines (trace order), each with a
//! latency from `latency_ms` (cycled). Each job has its own broker ("a broker is created for
//! each user"), which places the job's waiting tasks one at a time, in the order they became
//! pending: it asks datacenters in its policy's order (LLTF, FLTF, LTIR; each request costs the
//! datacenter's latency), and in a datacenter with a suitable host (room and the task's
//! constraints) the scheduler (PSO, ACO, GA, Best Effort) picks one, each message to a host
//! costing the latency again. A broker is busy for the time its requests and messages take: a
//! job whose broker is busy past the tick's end waits for the next tick, so the messages become
//! queueing time. A task starts at the end of the tick its placement is decided in, and runs its
//! recorded time. Load for ACO and PSO is a host's CPU usage over its capacity, cores in use
//! (Best Effort) its CPU requests, VMs (GA) its task count.
//!
//! Invariants: `brokers` is sorted by job ID, each job once, only jobs busy past the last tick's
//! start; `tables` has one load table per datacenter, sized to it; `list` is the broker's
//! datacenter list for the current datacenter count.

use ingest::rng::{Rng, hash_keys};
use serde::{Deserialize, Serialize};

use super::aco::LoadTables;
use super::broker;
use super::config::{BrokerPolicy, SchedulerParams, VmScheduler};
use super::hosts::Hosts;
use crate::cell::{Cell, TaskState};
use crate::greedy::fit::Need;
use crate::greedy::qualifies;
use crate::greedy::room::RoomIndex;
use crate::greedy::waiting::Waiting;
use crate::ids::{NodeIdx, TaskIdx, Tick};
use crate::policy::{CounterKind, Envelope, Policy, PolicyCounters, TableRows, TableSpec};
use crate::queue_outputs::QueueOutputs;
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

/// The settings of policy `federation` (defaults: the seed's, with latencies scaled to a cell).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FederationConfig {
    /// The brokers' datacenter policy.
    pub broker: BrokerPolicy,
    /// The infrastructure-level scheduler.
    pub scheduler: VmScheduler,
    /// Share of a datacenter's hosts explored (seed: 0.6).
    pub explore_fraction: f64,
    /// ACO's mutation rate (seed: 0.6).
    pub mutation_rate: f64,
    /// ACO's mutation decay per step (seed: 0.1).
    pub mutation_decay: f64,
    /// GA's population (seed: 100).
    pub ga_population: u32,
    /// Machines per datacenter (seed: 20), consecutive in trace order.
    pub hosts_per_datacenter: u32,
    /// Latency per datacenter, ms, cycled over the datacenters. Default: the seed's 1.5, 0.8,
    /// 1, 0.15 and 2 s read as milliseconds (a cell's network, not a WAN's).
    pub latency_ms: Vec<f64>,
}

impl Default for FederationConfig {
    fn default() -> Self {
        let p = SchedulerParams::default();
        FederationConfig {
            broker: BrokerPolicy::Lltf,
            scheduler: p.scheduler,
            explore_fraction: p.explore_fraction,
            mutation_rate: p.mutation_rate,
            mutation_decay: p.mutation_decay,
            ga_population: p.ga_population,
            hosts_per_datacenter: ingest::scenario::seed003::HOSTS_PER_DC,
            latency_ms: vec![1.5, 0.8, 1.0, 0.15, 2.0],
        }
    }
}

impl FederationConfig {
    /// The infrastructure-level parameters.
    pub fn params(&self) -> SchedulerParams {
        SchedulerParams {
            scheduler: self.scheduler,
            explore_fraction: self.explore_fraction,
            mutation_rate: self.mutation_rate,
            mutation_decay: self.mutation_decay,
            ga_population: self.ga_population,
        }
    }
}

impl crate::policy::PolicySpec for FederationConfig {
    type Policy = Federation;

    const ABOUT: &'static str = "seed 003: a broker per job (LLTF/FLTF/LTIR over the cell split into datacenters) and PSO/ACO/GA/Best Effort placing each task, paying messages x latency";

    fn validate(&self, _run: &crate::policy::RunSettings) -> Result<(), String> {
        self.params().check()?;
        if !(1..=100_000).contains(&self.hosts_per_datacenter) {
            return Err(format!(
                "hosts_per_datacenter must be 1..=100,000, got {}",
                self.hosts_per_datacenter
            ));
        }
        if self.latency_ms.is_empty()
            || self
                .latency_ms
                .iter()
                .any(|l| !(l.is_finite() && (0.0..=60_000.0).contains(l)))
        {
            return Err(format!(
                "latency_ms must list at least one latency of 0-60,000 ms, got {:?}",
                self.latency_ms
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        run: &crate::policy::RunSettings,
        trace_dir: &std::path::Path,
    ) -> crate::Result<Federation> {
        Ok(Federation {
            config: self.clone(),
            seed: run.seed,
            tick_us: run.tick.us(),
            outputs: QueueOutputs::of_run(run, trace_dir)?,
            ..Federation::default()
        })
    }
}

/// Counters: messages to hosts, requests to datacenters, and the brokers' busy time.
const COUNTERS: [CounterKind; 3] = [
    CounterKind::count("host_messages"),
    CounterKind::count("datacenter_requests"),
    CounterKind::amount("broker_busy_s"),
];

/// The policy (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Federation {
    config: FederationConfig,
    seed: u64,
    tick_us: i64,
    waiting: Waiting,
    room: RoomIndex,
    outputs: QueueOutputs,
    tables: Vec<LoadTables>,
    list: Vec<usize>,
    /// Jobs whose broker is busy: (job ID, busy until, microseconds), by job ID.
    brokers: Vec<(u64, i64)>,
    /// Requests so far (LTIR's round).
    requests: u64,
}

/// The state saved in snapshots.
#[derive(Serialize, Deserialize)]
struct Saved {
    tables: Vec<LoadTables>,
    list: Vec<usize>,
    brokers: Vec<(u64, i64)>,
    requests: u64,
}

/// A datacenter of the cell as a scheduler sees it, for task `t`.
struct CellDatacenter<'a> {
    cell: &'a Cell,
    first: usize,
    len: usize,
    task: TaskIdx,
    need: &'a Need,
}

impl Hosts for CellDatacenter<'_> {
    fn count(&self) -> usize {
        self.len
    }
    fn suitable(&self, h: usize) -> bool {
        qualifies(self.cell, self.task, self.need, self.first + h)
    }
    fn load(&self, h: usize) -> f64 {
        let n = &self.cell.nodes;
        n.cpu_used()[self.first + h] as f64 / n.cpu_cap()[self.first + h].max(1) as f64
    }
    fn cores_used(&self, h: usize) -> f64 {
        self.cell.nodes.cpu_req()[self.first + h] as f64
    }
    fn vms(&self, h: usize) -> u32 {
        self.cell.nodes.task_count()[self.first + h]
    }
}

impl Federation {
    fn latency_us(&self, d: usize) -> i64 {
        let l = &self.config.latency_ms;
        (l[d % l.len()] * 1e3).round() as i64
    }

    /// Datacenter `d`'s machines: (first, count).
    fn datacenter(&self, d: usize, nodes: usize) -> (usize, usize) {
        let per = self.config.hosts_per_datacenter as usize;
        let first = d * per;
        (first, per.min(nodes - first))
    }

    /// Resizes the load tables and the broker's list to the cell's machines.
    fn fit_datacenters(&mut self, nodes: usize) {
        let count = nodes.div_ceil(self.config.hosts_per_datacenter as usize);
        if count == self.list.len() && count == self.tables.len() {
            let last = count.saturating_sub(1);
            if count == 0 || self.tables[last].hosts() == self.datacenter(last, nodes).1 {
                return;
            }
        }
        self.tables.truncate(count);
        for d in 0..count {
            let size = self.datacenter(d, nodes).1;
            if d >= self.tables.len() {
                self.tables.push(LoadTables::new(size));
            } else if self.tables[d].hosts() != size {
                self.tables[d] = LoadTables::new(size);
            }
        }
        let latency_s: Vec<f64> = (0..count).map(|d| self.latency_us(d) as f64).collect();
        let mut rng = Rng::new(hash_keys(self.seed, &[0xfed, count as u64]), 0);
        self.list = broker::datacenter_list(self.config.broker, &latency_s, &mut rng);
    }

    /// Places task `t` if its job's broker is free before `end_us`, counting the cost.
    fn place_task(
        &mut self,
        cell: &mut Cell,
        t: TaskIdx,
        (start_us, end_us): (i64, i64),
        rng: &mut Rng,
        counters: &mut PolicyCounters,
    ) {
        let need = Need::of(cell, t);
        if !self.room.any(&need) {
            return;
        }
        let job = cell.tasks.job_id()[t.index()];
        let slot = self.brokers.binary_search_by_key(&job, |b| b.0);
        let free_at = slot.map_or(start_us, |k| self.brokers[k].1.max(start_us));
        if free_at >= end_us {
            return;
        }
        let params = self.config.params();
        let (mut cost_us, mut chosen) = (0i64, None);
        let nodes = cell.nodes.len();
        // The list is set aside while its datacenters are tried (no copy per task).
        let list = std::mem::take(&mut self.list);
        let vm = self.requests as usize;
        self.requests += 1;
        for d in broker::tries(self.config.broker, &list, vm) {
            let (first, len) = self.datacenter(d, nodes);
            let dc = CellDatacenter {
                cell,
                first,
                len,
                task: t,
                need: &need,
            };
            let placement = super::place(&params, &dc, &mut self.tables[d], rng);
            cost_us += self.latency_us(d) * (1 + placement.messages as i64);
            counters.add(0, placement.messages as f64);
            counters.add(1, 1.0);
            if let Some(h) = placement.host {
                chosen = Some(first + h);
                break;
            }
        }
        self.list = list;
        counters.add(2, cost_us as f64 / 1e6);
        let busy = (job, free_at + cost_us);
        match slot {
            Ok(k) => self.brokers[k] = busy,
            Err(k) => self.brokers.insert(k, busy),
        }
        if let Some(n) = chosen {
            cell.place(t, NodeIdx(n as u32), end_us);
            self.room.update(&cell.nodes, n);
        }
    }
}

impl Policy for Federation {
    type Msg = ();
    type Agent = ();
    type Action = ();

    fn name(&self) -> &'static str {
        "federation"
    }

    fn counter_kinds(&self) -> &'static [CounterKind] {
        &COUNTERS
    }

    fn begin_tick(
        &mut self,
        cell: &mut Cell,
        (_, now_us): (Tick, i64),
        events: &TickEvents,
        _agents: &mut Vec<()>,
        _inject: &mut Vec<Envelope<()>>,
        counters: &mut PolicyCounters,
    ) {
        self.waiting.update(cell, events);
        self.outputs.record(cell, events);
        self.fit_datacenters(cell.nodes.len());
        self.room.rebuild(&cell.nodes);
        let start_us = now_us - self.tick_us;
        self.brokers.retain(|b| b.1 > start_us);
        let mut rng = Rng::new(hash_keys(self.seed, &[0xfed_7a5c, now_us as u64]), 0);
        // The queue is set aside while its tasks are placed (no copy per tick).
        let waiting = std::mem::take(&mut self.waiting);
        for &(t, _) in waiting.tasks() {
            if cell.tasks.state()[t.index()] == TaskState::Pending {
                self.place_task(cell, t, (start_us, now_us), &mut rng, counters);
            }
        }
        self.waiting = waiting;
        self.waiting.keep_pending(cell);
    }

    fn tables(&self) -> &'static [TableSpec] {
        &crate::queue_outputs::TABLES
    }

    fn take_rows(&mut self, out: &mut TableRows) {
        self.outputs.take_rows(out);
    }

    fn save_state(&self, w: &mut SectionWriter) {
        self.waiting.save(w);
        self.outputs.save_state(w);
        w.serde(&Saved {
            tables: self.tables.clone(),
            list: self.list.clone(),
            brokers: self.brokers.clone(),
            requests: self.requests,
        });
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        self.waiting.load(r)?;
        self.outputs.load_state(r)?;
        let saved: Saved = r.serde()?;
        (self.tables, self.list, self.brokers, self.requests) =
            (saved.tables, saved.list, saved.brokers, saved.requests);
        Ok(())
    }
}
