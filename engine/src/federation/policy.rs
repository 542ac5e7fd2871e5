//! Policy `federation`: seed 003's broker and infrastructure-level schedulers placing a GCD
//! cell's tasks (issue 35 item 7): tasks as VMs, machines as hosts, the cell split into
//! datacenters of `hosts_per_datacenter` consecutive machines (trace order), each with a
//! latency from `latency_ms` (cycled). Each job has its own broker ("a broker is created for
//! each user", [`Broker`]), which places the job's waiting tasks one at a time, in the order
//! they became pending: it asks datacenters in its policy's order, each request costing the
//! datacenter's latency. LLTF keeps the latency-sorted list, FLTF a random order of the job's
//! own; both stay at the datacenter where the broker last found room and move on only when it
//! is full ("selects the next datacenter in the list"), round the list. LTIR sends the job's
//! k-th VM to the k-th datacenter by latency, on round the list when full. In a datacenter with
//! a suitable host (room and the task's constraints) the scheduler (PSO, ACO, GA, Best Effort)
//! picks one, each message to a host costing the latency again. A broker is busy for the time
//! its requests and messages take: a job whose broker is busy past the tick's end waits for the
//! next tick, so the messages become queueing time, and a task starts when its own placement's
//! messages are done (at the end of the tick it is decided in, or later), then runs its
//! recorded time. Load for ACO and PSO is a host's CPU usage over its capacity, cores in use
//! (Best Effort) its CPU requests, VMs (GA) its task count.
//!
//! Invariants: `brokers` is sorted by job ID, each job once: the jobs with tasks waiting or a
//! broker busy past the last tick's end; `tables` has one load table per datacenter, sized to
//! it; `list` is the latency-sorted datacenter list for the current datacenter count.

use ingest::rng::{Rng, hash_keys};
use serde::{Deserialize, Serialize};

use super::aco::LoadTables;
use super::broker;
use super::config::{BrokerPolicy, SchedulerParams, VmScheduler};
use super::hosts::Hosts;
use crate::cell::{Cell, TaskState};
use crate::greedy::fit::{Amounts, Need};
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
    /// GA's generations after the first (chosen: 10).
    pub ga_generations: u32,
    /// GA's crossover probability (chosen: 0.9).
    pub ga_crossover: f64,
    /// GA's per-gene mutation probability (chosen: 0.1).
    pub ga_mutation: f64,
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
            ga_generations: p.ga_generations,
            ga_crossover: p.ga_crossover,
            ga_mutation: p.ga_mutation,
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
            ga_generations: self.ga_generations,
            ga_crossover: self.ga_crossover,
            ga_mutation: self.ga_mutation,
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
    /// The jobs' brokers, by job ID.
    brokers: Vec<Broker>,
}

/// A job's broker (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Broker {
    /// Its job.
    job: u64,
    /// When its requests and messages so far are done, microseconds.
    busy_until_us: i64,
    /// Where in its list it last found room (LLTF, FLTF).
    cursor: u32,
    /// VMs it has placed (LTIR's round).
    vms: u64,
    /// (tick end, amounts): in the tick ending then it went round every datacenter without
    /// room for a task without constraints needing these amounts. The cell only fills within a
    /// tick, so its broker, remembering, asks nothing more that tick for such a task needing
    /// as much or more.
    full: Option<(i64, Amounts)>,
}

/// The state saved in snapshots.
#[derive(Serialize, Deserialize)]
struct Saved {
    tables: Vec<LoadTables>,
    list: Vec<usize>,
    brokers: Vec<Broker>,
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
        // By latency (LLTF's order, LTIR's round); FLTF's orders are per user (`place_task`).
        self.list = broker::datacenter_list(BrokerPolicy::Lltf, &latency_s, &mut rng);
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
        let slot = self.brokers.binary_search_by_key(&job, |b| b.job);
        let mut broker = match slot {
            Ok(k) => self.brokers[k],
            Err(_) => Broker {
                job,
                busy_until_us: start_us,
                cursor: 0,
                vms: 0,
                full: None,
            },
        };
        let constrained = !cell.constraints_of(t).is_empty();
        let amounts = need.amounts();
        let known_full = broker.full.is_some_and(|(tick_end_us, smaller)| {
            let no_smaller = amounts.iter().zip(smaller).all(|(a, s)| *a >= s);
            tick_end_us == end_us && !constrained && no_smaller
        });
        if known_full {
            return;
        }
        let free_at = broker.busy_until_us.max(start_us);
        if free_at >= end_us {
            return;
        }
        let params = self.config.params();
        let (mut cost_us, mut chosen) = (0i64, None);
        let nodes = cell.nodes.len();
        let count = self.list.len();
        let policy = self.config.broker;
        // Its order: from where it last found room (LLTF, FLTF) or its VM count (LTIR).
        let from = match policy {
            BrokerPolicy::Ltir => (broker.vms % count.max(1) as u64) as usize,
            _ => broker.cursor as usize,
        };
        let (start, stride) = match policy {
            BrokerPolicy::Fltf => broker::user_order(hash_keys(self.seed, &[0xf17f, job]), count),
            _ => (0, 1),
        };
        for k in 0..count {
            let position = (from + k) % count;
            let d = match policy {
                BrokerPolicy::Fltf => (start + stride * position) % count,
                _ => self.list[position],
            };
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
                broker.cursor = position as u32;
                break;
            }
        }
        counters.add(2, cost_us as f64 / 1e6);
        broker.busy_until_us = free_at + cost_us;
        if chosen.is_none() && !constrained {
            broker.full = Some((end_us, amounts));
        }
        if let Some(n) = chosen {
            broker.vms += 1;
            // It starts once its own requests and messages are done, at a tick's end at the
            // earliest.
            cell.place(t, NodeIdx(n as u32), end_us.max(broker.busy_until_us));
            self.room.update(&cell.nodes, n);
        }
        match slot {
            Ok(k) => self.brokers[k] = broker,
            Err(k) => self.brokers.insert(k, broker),
        }
    }

    /// Keeps the brokers of jobs with tasks waiting or busy past `end_us`.
    fn prune_brokers(&mut self, cell: &Cell, end_us: i64) {
        let mut waiting: Vec<u64> = (self.waiting.tasks().iter())
            .map(|&(t, _)| cell.tasks.job_id()[t.index()])
            .collect();
        waiting.sort_unstable();
        waiting.dedup();
        self.brokers
            .retain(|b| b.busy_until_us > end_us || waiting.binary_search(&b.job).is_ok());
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
        self.prune_brokers(cell, now_us);
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
        });
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        self.waiting.load(r)?;
        self.outputs.load_state(r)?;
        let saved: Saved = r.serde()?;
        (self.tables, self.list, self.brokers) = (saved.tables, saved.list, saved.brokers);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::to_units;
    use ingest::codes::TRACE_START_US;

    const TICK_US: i64 = 1_000_000;

    /// Three datacenters of one host (1 CPU) each, latencies 1, 2 and 3 ms, Best Effort (one
    /// message per host asked), and `tasks` tasks of 0.6 CPU per job submitted at once, placed
    /// in one 1 s tick: the policy, the cell and the tasks.
    fn one_tick(
        broker: BrokerPolicy,
        jobs: &[u64],
        tasks: u32,
    ) -> (Federation, Cell, Vec<TaskIdx>, PolicyCounters) {
        one_tick_at(broker, &[1.0, 2.0, 3.0], jobs, tasks)
    }

    /// As [`one_tick`], with one single-host datacenter per latency in `latency_ms`.
    fn one_tick_at(
        broker: BrokerPolicy,
        latency_ms: &[f64],
        jobs: &[u64],
        tasks: u32,
    ) -> (Federation, Cell, Vec<TaskIdx>, PolicyCounters) {
        let mut cell = Cell::default();
        for m in 0..latency_ms.len() as u64 {
            cell.add_machine(100 + m, to_units(1.0), to_units(1.0));
        }
        let mut events = TickEvents::default();
        let mut all = Vec::new();
        for &job in jobs {
            for k in 0..tasks {
                let t = cell.tasks.alloc(job, k, 0, TRACE_START_US);
                cell.set_request(t, to_units(0.6), to_units(0.1));
                events.submitted.push(t);
                all.push(t);
            }
        }
        let mut policy = Federation {
            config: FederationConfig {
                broker,
                scheduler: VmScheduler::BestEffort,
                hosts_per_datacenter: 1,
                latency_ms: latency_ms.to_vec(),
                ..FederationConfig::default()
            },
            seed: 1,
            tick_us: TICK_US,
            ..Federation::default()
        };
        let mut counters = PolicyCounters::default();
        let end_us = TRACE_START_US + TICK_US;
        let (mut agents, mut inject) = (Vec::new(), Vec::new());
        let tick = (Tick(0), end_us);
        policy.begin_tick(
            &mut cell,
            tick,
            &events,
            &mut agents,
            &mut inject,
            &mut counters,
        );
        (policy, cell, all, counters)
    }

    /// LLTF by hand: VM 1 goes to D1 (1 request: 1 ms + 1 message x 1 ms = 2 ms); VM 2 finds
    /// D1 full (a full datacenter declines without asking its hosts: 1 ms) and takes D2 (2 + 2
    /// ms); VM 3 starts from D2, where its broker last found room (seed 003: the next
    /// datacenter only when that one is full), finds it full (2 ms) and takes D3 (3 + 3 ms): 5
    /// requests, not the 6 of starting from D1 every time, 3 host messages, 15 ms. Each VM
    /// starts when its own messages are done, the tick's end at the earliest: all within 15 ms,
    /// so at the end of the 1 s tick.
    #[test]
    fn lltf_moves_on_only_when_its_datacenter_is_full() {
        let (_, cell, tasks, counters) = one_tick(BrokerPolicy::Lltf, &[7], 3);
        let nodes: Vec<u32> = tasks
            .iter()
            .map(|t| cell.tasks.node()[t.index()].0)
            .collect();
        assert_eq!(nodes, [0, 1, 2]);
        assert_eq!(counters.get(1), 5.0, "datacenter requests");
        assert_eq!(counters.get(0), 3.0, "host messages");
        assert!((counters.get(2) - 0.015).abs() < 1e-9, "busy s");
        for t in tasks {
            assert_eq!(cell.tasks.start_us()[t.index()], TRACE_START_US + TICK_US);
        }
    }

    /// Remembering full datacenters: a broker that was told by every datacenter this tick that
    /// none has room for a VM of 0.6 CPU (PSO and ACO explore 60 % of a datacenter's hosts, so
    /// they can miss the room there is) asks nothing more that tick for a VM of its job needing
    /// as much or more (no request, no cost, it waits), but does ask for a smaller one, and for
    /// the same one the next tick.
    #[test]
    fn a_broker_told_every_datacenter_is_full_asks_no_more_that_tick() {
        let (mut policy, mut cell, _, _) = one_tick(BrokerPolicy::Lltf, &[7], 1);
        let end_us = TRACE_START_US + TICK_US;
        let need = |cell: &Cell, t: TaskIdx| Need::of(cell, t).amounts();
        let ask = |policy: &mut Federation, cell: &mut Cell, cpu: f32, end_us: i64| {
            let t = cell.tasks.alloc(7, 9, 0, TRACE_START_US);
            cell.set_request(t, to_units(cpu), to_units(0.1));
            let mut counters = PolicyCounters::default();
            policy.room.rebuild(&cell.nodes);
            let mut rng = Rng::new(1, 0);
            let window = (end_us - TICK_US, end_us);
            policy.place_task(cell, t, window, &mut rng, &mut counters);
            (t, counters.get(1))
        };
        let probe = cell.tasks.alloc(7, 8, 0, TRACE_START_US);
        cell.set_request(probe, to_units(0.6), to_units(0.1));
        policy.brokers = vec![Broker {
            job: 7,
            busy_until_us: 0,
            cursor: 0,
            vms: 1,
            full: Some((end_us, need(&cell, probe))),
        }];
        let (same, asked) = ask(&mut policy, &mut cell, 0.6, end_us);
        assert_eq!(asked, 0.0);
        assert_eq!(cell.tasks.state()[same.index()], TaskState::Pending);
        let (_, asked) = ask(&mut policy, &mut cell, 0.7, end_us);
        assert_eq!(asked, 0.0, "needing more");
        let (smaller, asked) = ask(&mut policy, &mut cell, 0.3, end_us);
        assert_eq!(asked, 1.0, "a smaller one is asked for, and fits D1");
        assert_eq!(cell.tasks.state()[smaller.index()], TaskState::Running);
        let (_, asked) = ask(&mut policy, &mut cell, 0.6, end_us + TICK_US);
        assert!(asked > 0.0, "the next tick it asks again");
    }

    /// LTIR's round is per user: two jobs of one task each both send their first VM to D1
    /// (the second finds it full and goes round to D2); with one round for everyone the second
    /// job's VM would have gone to D2 first.
    #[test]
    fn ltir_counts_each_users_vms() {
        let (policy, cell, tasks, counters) = one_tick(BrokerPolicy::Ltir, &[7, 8], 1);
        let nodes: Vec<u32> = tasks
            .iter()
            .map(|t| cell.tasks.node()[t.index()].0)
            .collect();
        assert_eq!(nodes, [0, 1]);
        assert_eq!(counters.get(1), 3.0, "job 8 asked D1, then D2");
        assert!(policy.brokers.iter().all(|b| b.vms == 1));
    }

    /// A task waits for its own placement's messages: with a latency of 600 ms its request and
    /// its one host message take 1.2 s, so it starts at 1.2 s, after the 1 s tick's end (not at
    /// the tick's end, as before), and its broker is still busy then (kept).
    #[test]
    fn a_tasks_own_messages_delay_its_start() {
        let (policy, cell, tasks, _) = one_tick_at(BrokerPolicy::Lltf, &[600.0], &[7], 1);
        let t = tasks[0];
        assert_eq!(cell.tasks.start_us()[t.index()], TRACE_START_US + 1_200_000);
        assert_eq!(policy.brokers.len(), 1, "busy past the tick's end");
    }
}
