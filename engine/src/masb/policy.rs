//! Policy `masb`: MASB's agents on the round executor.
//!
//! Each tick, `begin_tick` sizes the agent table (brokers first, then one node agent per node),
//! indexes running tasks by node, takes the node reports (`reports.rs`), and hands every
//! pending task (new, resubmitted or displaced by a machine removal) to a random broker for
//! initial allocation; unplaced tasks come back the next tick. Rounds run the agents
//! (`agents.rs`). `apply` starts placements and migrations; `end_tick` completes migrations whose
//! transfer time (cost / bandwidth) has passed.
//!
//! Workload: MASB replays the trace's tasks, not Google's placements: each runs its recorded run
//! time from when MASB starts it (the replay's workload mode, `replay/deferred.rs`).

use ingest::rng::Rng;

use super::MasbConfig;
use super::agents::MasbAgent;
use super::cost::migration_cost;
use super::fit::FitIndex;
use super::migrations::{self, MigrationOutcome, MigrationRecord};
use super::protocol::{Action, MESSAGE_KINDS, Msg};
use super::reports::Reports;
use super::select::{CacheEntry, Demand};
use crate::cell::{Cell, PlaceBatch, PlaceRequest, TaskState};
use crate::csr::Grouping;
use crate::ids::{AgentIdx, ConstraintSetIdx, NodeIdx, TaskIdx, Tick};
use crate::match_memo::MatchMemo;
use crate::policy::{
    CounterKind, Envelope, Outbox, Policy, PolicyCounters, StepCtx, TableRows, TableSpec,
};
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};
use crate::surge::{AGENT_BUFFER_BYTES, PeakWindow, release_surge};
use crate::units::to_normalised;

/// MASB's counters ([`Policy::counter_kinds`]), by index.
pub mod counter {
    use crate::policy::CounterKind;

    /// Migrations started.
    pub const STARTED: usize = 0;
    /// Migrations completed.
    pub const COMPLETED: usize = 1;
    /// Migrations that found no candidate.
    pub const FAILED: usize = 2;
    /// Migration cost of the started migrations, MB.
    pub const COST_MB: usize = 3;
    /// Forced migrations started.
    pub const FORCED: usize = 4;
    /// Colliding migration requests on one target.
    pub const COLLISIONS: usize = 5;
    /// Migrations started by a stable node's offload (`MasbConfig::offload_every_s`; 0
    /// without it), counted in `migrations_started` too.
    pub const OFFLOAD: usize = 7;
    /// Their migration cost, MB (counted in `migration_cost_mb` too).
    pub const OFFLOAD_COST_MB: usize = 8;

    /// The kinds, in `counters/` column order. `placements_skipped` (borg-replay's counter,
    /// always 0 here) kept MASB's `ticks/` parts byte-identical with those of runs from before
    /// counters were the policy's (`engine/tests/masb_reference.rs`); the offload's two came
    /// after it.
    pub const KINDS: [CounterKind; 9] = [
        CounterKind::count("migrations_started"),
        CounterKind::count("migrations_completed"),
        CounterKind::count("migrations_failed"),
        CounterKind::amount("migration_cost_mb"),
        CounterKind::count("forced_migrations"),
        CounterKind::count("collisions"),
        CounterKind::count("placements_skipped"),
        CounterKind::count("offload_migrations"),
        CounterKind::amount("offload_cost_mb"),
    ];
}

/// A migration in flight.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InFlight {
    /// The task and its generation.
    pub task: TaskIdx,
    /// Slot generation at the start.
    pub generation: u32,
    /// Where it comes from.
    pub source: NodeIdx,
    /// Where it goes.
    pub target: NodeIdx,
    /// When the transfer ends, microseconds.
    pub end_us: i64,
    /// Its cost, MB.
    pub cost_mb: f64,
    /// Forced migration.
    pub forced: bool,
    /// Asked by a stable node's offload.
    pub offload: bool,
    /// The task's trace identity, kept in case its slot is reused before the record is written.
    pub job_id: u64,
    /// Task index.
    pub task_index: u32,
}

/// A pending task a broker offers this tick (and its generation), with the index of its
/// constraint set in the shared match memo (`None`: no constraints) and its demand. Pending in
/// that generation when `begin_tick` made the list, hence in the tick's first round, which offers
/// it; the demand is read there, in task order, rather than task by task in a broker's offers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Assigned {
    pub task: (TaskIdx, u32),
    pub set: Option<u32>,
    pub demand: Demand,
}

/// Task slots per part of the running-task index's grouping (`csr.rs`).
const TASKS_PER_PART: usize = 1 << 16;

/// The MASB policy's shared state.
#[derive(Debug, Clone)]
pub struct Masb {
    /// Parameters.
    pub config: MasbConfig,
    /// Broker agents.
    pub brokers: u32,
    /// Rounds per tick.
    pub rounds_per_tick: u32,
    /// The run's classification thresholds (what an offload's "not DA" goal reads).
    pub thresholds: crate::classify::Thresholds,
    /// Simulated seconds per round.
    pub round_s: f64,
    seed: u64,
    node_task_offsets: Vec<u32>,
    node_tasks: Vec<TaskIdx>,
    /// Scratch of the running-task index's grouping.
    node_task_grouping: Grouping<TaskIdx>,
    /// Each broker's pending tasks of this tick, with their constraint sets in `memo`.
    pub(super) assigned: Vec<Vec<Assigned>>,
    /// The brokers' shared match memo: current in every round for the constraint sets of the
    /// tick's pending tasks (a pure cache).
    pub(super) memo: MatchMemo,
    /// Where unconstrained tasks fit in the shared cache at the start of the tick's first round
    /// (`fit_at_s`), built once for every broker that has no reports of its own then (a pure
    /// cache: the same index each broker would build).
    pub(super) fit: FitIndex,
    pub(super) fit_at_s: Option<f64>,
    pending: Vec<(TaskIdx, u32)>,
    /// The most waiting tasks of a tick lately: what `pending` and `assigned` keep room for.
    pending_peak: PeakWindow,
    /// Migrations in flight.
    pub in_flight: Vec<InFlight>,
    /// The brokers' shared cache: each node's last report every broker has heard of, by node
    /// index (`agents.rs`, [`Broker`](super::agents::Broker)).
    pub(super) cache: Vec<CacheEntry>,
    /// The node reports of the tick's first round, read by the brokers at the round after
    /// (`reports.rs`).
    pub(super) reports: Reports,
    /// The first global round of the tick after the current one (set by `begin_tick`): reports
    /// due from it on are in flight at the tick boundary.
    next_round: u64,
    records: Vec<MigrationRecord>,
    /// When the current round began ([`Policy::begin_round`]): migrations start then and end
    /// their transfer `cost / bandwidth` later. Not saved: set before any round's actions.
    round_us: i64,
    /// The round's placements not yet applied (`apply` gathers them across the round's runs of
    /// actions; `end_round` or an action that reads the cell applies them, on every thread), with
    /// the batch's buffers. Empty between rounds: not saved.
    places: Vec<PlaceRequest>,
    place_batch: PlaceBatch,
}

impl Masb {
    /// Moves this tick's migration records into `out` (what [`Policy::take_rows`] writes as
    /// `migrations/` rows; for tests that read them as records).
    pub fn take_migrations(&mut self, out: &mut Vec<MigrationRecord>) {
        out.append(&mut self.records);
    }

    /// MASB with the run's tick structure; the broker count is fixed at the first tick from the
    /// nodes known then (`brokers_per_12500_nodes`, at least one).
    pub fn new(config: MasbConfig, rounds_per_tick: u32, tick_s: u32, seed: u64) -> Masb {
        Masb {
            config,
            brokers: 0,
            rounds_per_tick: rounds_per_tick.max(1),
            thresholds: crate::classify::Thresholds::default(),
            round_s: tick_s as f64 / rounds_per_tick.max(1) as f64,
            seed,
            node_task_offsets: Vec::new(),
            node_tasks: Vec::new(),
            node_task_grouping: Grouping::default(),
            assigned: Vec::new(),
            memo: MatchMemo::default(),
            fit: FitIndex::default(),
            fit_at_s: None,
            pending: Vec::new(),
            pending_peak: PeakWindow::default(),
            in_flight: Vec::new(),
            cache: Vec::new(),
            reports: Reports::default(),
            next_round: 0,
            records: Vec::new(),
            round_us: 0,
            places: Vec::new(),
            place_batch: PlaceBatch::default(),
        }
    }

    /// Places the gathered placements (`places`) that still hold: the task's slot still holds
    /// its generation and is pending, the node is online ([`Cell::place_batch`], as one by one).
    fn place_gathered(&mut self, cell: &mut Cell, now_us: i64) {
        cell.place_batch(&self.places, now_us, &mut self.place_batch);
        self.places.clear();
    }

    /// Applies an action that reads the cell (a migration started, a collision or a failure
    /// recorded); placements are [`Policy::apply`]'s own.
    fn apply_reading(&mut self, cell: &mut Cell, action: Action, counters: &mut PolicyCounters) {
        match action {
            Action::Place { .. } => {}
            Action::Migrate {
                task,
                generation,
                source,
                target,
                forced,
                offload,
            } => {
                let i = task.index();
                let ok = cell.tasks.generation()[i] == generation
                    && cell.tasks.node()[i] == source
                    && cell.nodes.online()[target.index()];
                if ok && cell.start_migration(task, target) {
                    let (cpu, mem) = (
                        to_normalised(cell.tasks.usage()[i].cpu()),
                        to_normalised(cell.tasks.usage()[i].mem()),
                    );
                    let cost = migration_cost(cpu, mem, &self.config);
                    let end_us = self.round_us + (cost.duration_s * 1e6) as i64;
                    let (job_id, task_index) = (cell.tasks.job_id()[i], cell.tasks.task_index()[i]);
                    self.in_flight.push(InFlight {
                        task,
                        generation,
                        source,
                        target,
                        end_us,
                        cost_mb: cost.cost_mb,
                        forced,
                        offload,
                        job_id,
                        task_index,
                    });
                    let r = self.record(cell, task, target, MigrationOutcome::Started);
                    (r.cost_mb, r.forced, r.offload) = (cost.cost_mb, forced, offload);
                    counters.add(counter::STARTED, 1.0);
                    counters.add(counter::COST_MB, cost.cost_mb);
                    counters.add(counter::FORCED, f64::from(u8::from(forced)));
                    if offload {
                        counters.add(counter::OFFLOAD, 1.0);
                        counters.add(counter::OFFLOAD_COST_MB, cost.cost_mb);
                    }
                }
            }
            Action::Collision {
                task,
                target,
                offload,
            } => {
                counters.add(counter::COLLISIONS, 1.0);
                self.record(cell, task, target, MigrationOutcome::Collision)
                    .offload = offload;
            }
            Action::MigrationFailed { task, offload } => {
                counters.add(counter::FAILED, 1.0);
                self.record(cell, task, NodeIdx::NONE, MigrationOutcome::Failed)
                    .offload = offload;
            }
        }
    }

    /// Appends a migration record, at the current round's time, for `task` leaving its current
    /// node towards `target` (NONE when none was chosen), with no cost, not forced and not an
    /// offload's; returns it to complete.
    fn record(
        &mut self,
        cell: &Cell,
        task: TaskIdx,
        target: NodeIdx,
        outcome: MigrationOutcome,
    ) -> &mut MigrationRecord {
        let machine = |n: NodeIdx| n.is_some().then(|| cell.nodes.machine_id()[n.index()]);
        self.records.push(MigrationRecord {
            time_us: self.round_us,
            job_id: cell.tasks.job_id()[task.index()],
            task_index: cell.tasks.task_index()[task.index()],
            source_machine: machine(cell.tasks.node()[task.index()]).unwrap_or(0),
            target_machine: machine(target),
            cost_mb: 0.0,
            forced: false,
            outcome,
            offload: false,
        });
        self.records.last_mut().expect("just pushed")
    }

    /// Running tasks on node `n` at the start of the tick (the tick's index).
    pub(super) fn tasks_on(&self, n: NodeIdx) -> &[TaskIdx] {
        match (
            self.node_task_offsets.get(n.index()),
            self.node_task_offsets.get(n.index() + 1),
        ) {
            (Some(&s), Some(&e)) => &self.node_tasks[s as usize..e as usize],
            _ => &[],
        }
    }

    /// Brings the waiting tasks up to date with `events` (new and displaced tasks in, tasks no
    /// longer pending in their generation out, in task order) and assigns each to a broker drawn
    /// from the tick's stream (`brokers`, `seed`, `now_us`), with its demand and its constraint
    /// set's slot in `memo`, which then matches the sets now in use.
    fn assign_waiting(
        cell: &Cell,
        events: &TickEvents,
        (pending, pending_peak): (&mut Vec<(TaskIdx, u32)>, &mut PeakWindow),
        assigned: &mut Vec<Vec<Assigned>>,
        memo: &mut MatchMemo,
        (brokers, seed, now_us): (u32, u64, i64),
    ) {
        for &t in events.submitted.iter().chain(&events.displaced_tasks) {
            pending.push((t, cell.tasks.generation()[t.index()]));
        }
        pending.retain(|&(t, g)| {
            cell.tasks.generation()[t.index()] == g
                && cell.tasks.state()[t.index()] == TaskState::Pending
        });
        // Last tick's waiting tasks are still in order, the new ones follow: the stable sort
        // merges the two runs in linear time (equal entries are identical, so no order is lost).
        pending.sort();
        pending.dedup();
        assigned.resize_with(brokers as usize, Vec::new);
        for a in assigned.iter_mut() {
            a.clear();
        }
        let mut rng = Rng::new(ingest::rng::hash_keys(seed, &[0xba, now_us as u64]), 0);
        memo.trim();
        // The tasks of a job are mostly neighbours, with the same constraints.
        let mut last = (ConstraintSetIdx::EMPTY, None);
        for &task in pending.iter() {
            let constraint_set = cell.constraint_set(task.0);
            if constraint_set != last.0 {
                let key = cell.constraints_of(task.0);
                last = (constraint_set, memo.slot(constraint_set, key));
            }
            let (set, demand) = (last.1, Self::demand(cell, task.0));
            let broker = rng.below(brokers as u64) as usize;
            assigned[broker].push(Assigned { task, set, demand });
        }
        if let Some(most) = pending_peak.note(pending.len()) {
            // Tasks go to brokers uniformly at random: a broker's share of the peak is what
            // its own buffer needs (the whole peak would let each keep the whole surge).
            let share = most.div_ceil(assigned.len().max(1));
            for a in assigned.iter_mut() {
                release_surge(a, share, AGENT_BUFFER_BYTES);
            }
            release_surge(pending, most, AGENT_BUFFER_BYTES);
        }
        memo.refresh_used(cell);
    }

    /// Rebuilds the per-node index of running tasks (`csr.rs`, over the pool by parts of
    /// [`TASKS_PER_PART`] task slots) into `offsets` and `out`, the buffers of the last tick
    /// (`grouping`: scratch).
    fn index_tasks(
        cell: &Cell,
        offsets: &mut Vec<u32>,
        grouping: &mut Grouping<TaskIdx>,
        out: &mut Vec<TaskIdx>,
    ) {
        let tasks = &cell.tasks;
        let parts = tasks.len().div_ceil(TASKS_PER_PART);
        let running = |p: usize| {
            (p * TASKS_PER_PART..tasks.len().min((p + 1) * TASKS_PER_PART))
                .filter(|&i| tasks.state()[i] == TaskState::Running)
                .map(|i| (tasks.node()[i].index(), TaskIdx(i as u32)))
        };
        let nodes = cell.nodes.len();
        crate::csr::group_by_key(nodes, (parts, running), offsets, grouping, out);
    }

    /// Completes the migrations whose transfer has ended by `now_us` (cost / bandwidth after they
    /// started, so most within the round after) and records those that ended otherwise.
    fn settle_migrations(&mut self, cell: &mut Cell, now_us: i64, counters: &mut PolicyCounters) {
        let mut in_flight = std::mem::take(&mut self.in_flight);
        in_flight.retain(|m| {
            let i = m.task.index();
            let still = cell.tasks.generation()[i] == m.generation
                && cell.tasks.migrating_to()[i] == m.target;
            let outcome = if !still {
                // The task ended (its slot may hold another task now) or a node went away.
                MigrationOutcome::Aborted
            } else if m.end_us <= now_us {
                cell.finish_migration(m.task);
                counters.add(counter::COMPLETED, 1.0);
                MigrationOutcome::Completed
            } else {
                return true;
            };
            let machine = |n: NodeIdx| cell.nodes.machine_id()[n.index()];
            self.records.push(MigrationRecord {
                time_us: now_us,
                job_id: m.job_id,
                task_index: m.task_index,
                source_machine: machine(m.source),
                target_machine: Some(machine(m.target)),
                cost_mb: m.cost_mb,
                forced: m.forced,
                outcome,
                offload: m.offload,
            });
            false
        });
        self.in_flight = in_flight;
    }
}

impl Policy for Masb {
    type Msg = Msg;
    type Agent = MasbAgent;
    type Action = Action;

    fn name(&self) -> &'static str {
        "masb"
    }

    fn heavy_agents(&self) -> usize {
        self.brokers as usize
    }

    fn takes_initial_placements(&self) -> bool {
        self.config.warm_start
    }

    /// The node agents accept a task when its usage fits and, for a production task, its
    /// requests fit with the production requests: the greedy rule by usage, whatever `fit`.
    fn fit_rule(&self, _: crate::fit_by::FitBy) -> crate::fit_by::FitBy {
        crate::fit_by::FitBy::Usage
    }

    /// Seed 000's node checks, not the greedy rule: usage within capacity and production
    /// requests within capacity (RUS, 6.4); SIAS scores the node's load as `sias_node_load`
    /// reads it (`config.rs` says why `used` is the default).
    fn admits_by(&self, _: crate::fit_by::FitBy) -> String {
        let load = match self.config.sias_node_load {
            crate::masb::SiasNodeLoad::Used => "used",
            crate::masb::SiasNodeLoad::Requested => "requested",
        };
        format!(
            "usage + production requests (MASB's node checks; SIAS reads the node's {load} load)"
        )
    }

    fn steps_every_agent(&self) -> bool {
        true
    }

    fn counter_kinds(&self) -> &'static [CounterKind] {
        &counter::KINDS
    }

    fn message_kinds(&self) -> &'static [&'static str] {
        &MESSAGE_KINDS
    }

    fn message_kind(&self, msg: &Msg) -> usize {
        msg.kind()
    }

    fn begin_tick(
        &mut self,
        cell: &mut Cell,
        (tick, now_us): (Tick, i64),
        events: &TickEvents,
        agents: &mut Vec<MasbAgent>,
        _inject: &mut Vec<Envelope<Msg>>,
        _counters: &mut PolicyCounters,
    ) {
        if self.brokers == 0 {
            let per = self.config.brokers_per_12500_nodes as u64;
            self.brokers = ((cell.nodes.len() as u64 * per).div_ceil(12_500) as u32).max(1);
        }
        agents.resize(
            self.brokers as usize + cell.nodes.len(),
            MasbAgent::default(),
        );
        if self.config.warm_start {
            // The initial state's recorded placements (first tick only; an offline machine's
            // task stays pending and is placed below like any other).
            events.follow_placements(cell, now_us);
        }
        let round_0_s = self.round_start_s(u64::from(tick.0), 0);
        let first_round = u64::from(tick.0) * u64::from(self.rounds_per_tick);
        self.next_round = first_round + u64::from(self.rounds_per_tick);
        let cell = &*cell;
        let Masb {
            node_task_offsets,
            node_tasks,
            node_task_grouping,
            pending,
            pending_peak,
            assigned,
            memo,
            fit,
            cache,
            reports,
            config,
            brokers,
            seed,
            ..
        } = self;
        // Three independent parts, spread over the threads: the running-task index; the waiting
        // tasks assigned to brokers with the match memo; the fit index.
        let online = |n: NodeIdx| cell.nodes.is_online(n);
        rayon::join(
            || Self::index_tasks(cell, node_task_offsets, node_task_grouping, node_tasks),
            || {
                rayon::join(
                    || {
                        let draw = (*brokers, *seed, now_us);
                        let pending = (pending, pending_peak);
                        Self::assign_waiting(cell, events, pending, assigned, memo, draw);
                    },
                    || {
                        fit.rebuild(cache, round_0_s, config, &online);
                        reports.take(cell, *brokers, round_0_s, first_round + 1);
                    },
                )
            },
        );
        self.fit_at_s = Some(round_0_s);
    }

    fn step(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        agent: &mut MasbAgent,
        inbox: &[Envelope<Msg>],
        out: &mut Outbox<'_, Msg, Action>,
    ) {
        if me.0 < self.brokers {
            let broker = agent.broker.get_or_insert_with(Box::default);
            self.broker_step(ctx, me, broker, &mut agent.samples, inbox, out);
        } else {
            self.node_step(ctx, me, &mut agent.node, &mut agent.samples, inbox, out);
        }
    }

    fn apply(
        &mut self,
        cell: &mut Cell,
        now_us: i64,
        actions: &[(AgentIdx, Action)],
        counters: &mut PolicyCounters,
    ) {
        for (_, action) in actions {
            match *action {
                Action::Place {
                    task,
                    generation,
                    node,
                } => self.places.push(PlaceRequest {
                    task,
                    generation,
                    node,
                }),
                // The others read the cell: the placements gathered before them first.
                reading => {
                    self.place_gathered(cell, now_us);
                    self.apply_reading(cell, reading, counters);
                }
            }
        }
    }

    fn end_round(&mut self, cell: &mut Cell, (tick, round): (Tick, u32), now_us: i64) {
        self.place_gathered(cell, now_us);
        let g = self.global_round_of(tick, round);
        self.reports.store_due(g, &mut self.cache);
    }

    fn begin_round(&mut self, cell: &mut Cell, round_us: i64, counters: &mut PolicyCounters) {
        self.round_us = round_us;
        self.settle_migrations(cell, round_us, counters);
    }

    fn end_tick(&mut self, cell: &mut Cell, now_us: i64, counters: &mut PolicyCounters) {
        self.settle_migrations(cell, now_us, counters);
    }

    fn save_state(&self, w: &mut SectionWriter) {
        // The per-tick index and broker assignments are rebuilt by `begin_tick`; migration
        // records are taken every tick.
        // Reports still due (with one round per tick, the last tick's) are in flight.
        let reports = self.reports.due_from(self.next_round);
        let state = (self.brokers, &self.pending, &self.in_flight, &self.cache);
        w.serde(&(state, reports));
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        let reports;
        (
            (self.brokers, self.pending, self.in_flight, self.cache),
            reports,
        ) = r.serde()?;
        self.reports.restore(reports);
        Ok(())
    }

    fn tables(&self) -> &'static [TableSpec] {
        &[migrations::TABLE]
    }

    fn take_rows(&mut self, out: &mut TableRows) {
        let values = out.table(0);
        values.reserve(self.records.len() * migrations::TABLE.columns.len());
        for r in self.records.drain(..) {
            r.push_row(values);
        }
    }

    fn take_samples(&mut self, agents: &mut [MasbAgent], out: &mut Vec<String>) {
        for a in agents {
            out.append(&mut a.samples);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The node reports taken as a tick begins (its first round, where the node agents send
    /// them) reach the brokers' shared cache at the end of the round after, where every
    /// broker's CacheShare messages would have delivered them: after global round g the cache
    /// holds the report of the last tick whose first round is before g (none before round 1),
    /// with 3 rounds a tick and with 1 (a tick's reports then wait for the next tick's round).
    #[test]
    fn reports_reach_the_shared_cache_the_round_after() {
        let tick_s = 60u32;
        for rounds in [3u32, 1] {
            let mut masb = Masb::new(MasbConfig::default(), rounds, tick_s, 1);
            let mut cell = Cell::default();
            cell.add_machine(1, 1_000, 1_000);
            let (mut agents, mut counters) = (Vec::new(), PolicyCounters::default());
            for tick in 0..3u32 {
                let tick_us = i64::from(tick_s) * 1_000_000;
                let end_us = ingest::codes::TRACE_START_US + (i64::from(tick) + 1) * tick_us;
                let events = TickEvents::default();
                let (agents, inject) = (&mut agents, &mut Vec::new());
                let at = (Tick(tick), end_us);
                masb.begin_tick(&mut cell, at, &events, agents, inject, &mut counters);
                for round in 0..rounds {
                    masb.end_round(&mut cell, (Tick(tick), round), end_us);
                    let g = tick * rounds + round;
                    let want = (g >= 1).then(|| f64::from((g - 1) / rounds * tick_s));
                    let cached = masb.cache.first().map(|e| e.reported_s);
                    let cached = cached.filter(|s| s.is_finite());
                    assert_eq!(cached, want, "{rounds} rounds a tick: after round {g}");
                }
            }
        }
    }

    /// The fit index `begin_tick` builds is for the start of the tick's first round, the moment
    /// the brokers read it at (else each broker builds its own), not the tick's end, for any
    /// tick length and round count.
    #[test]
    fn the_shared_fit_index_is_for_the_first_round() {
        for (tick_s, rounds) in [(60, 6), (60, 7), (300, 1)] {
            let mut masb = Masb::new(MasbConfig::default(), rounds, tick_s, 1);
            let mut cell = Cell::default();
            cell.nodes.push(1);
            let mut agents = Vec::new();
            for tick in [0u32, 1, 1_000] {
                let tick_us = i64::from(tick_s) * 1_000_000;
                let end_us = ingest::codes::TRACE_START_US + (i64::from(tick) + 1) * tick_us;
                let at = (Tick(tick), end_us);
                let events = TickEvents::default();
                let mut counters = PolicyCounters::default();
                let (agents, inject) = (&mut agents, &mut Vec::new());
                masb.begin_tick(&mut cell, at, &events, agents, inject, &mut counters);
                let want =
                    f64::from(tick) * f64::from(tick_s) / f64::from(rounds) * f64::from(rounds);
                assert_eq!(masb.fit_at_s, Some(want), "tick {tick} of {tick_s} s");
            }
        }
    }
}
