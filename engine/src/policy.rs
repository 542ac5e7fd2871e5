//! The scheduling-policy interface. The core knows nothing of any particular policy.
//!
//! A tick runs: trace events applied by the replay; [`Policy::begin_tick`] (sequential: sees the
//! tick's [`TickEvents`], may place tasks, resize its agent table, inject messages); R rounds,
//! each a parallel sweep calling [`Policy::step`] for every agent with the messages sent to it in
//! the previous round, then [`Policy::apply`] with the round's actions in agent order
//! (sequential: the only place besides the tick hooks where the cell changes); and
//! [`Policy::end_tick`].
//!
//! How the planned policies fit: MASB has one agent per node plus brokers, messages for the SAN
//! protocol and actions for placements and migration starts/ends. Sparrow runs with ticks of a
//! second or less: scheduler agents send probes, worker agents keep queues in their agent state
//! and answer with late binding. The federated ACO/PSO schedulers (seed 003) put partition heads
//! and hosts in one agent table; a probe latency of k rounds is a message that the receiver
//! holds in its state for k rounds. The Nash-bargaining controller (seed 004) re-solves job shares
//! in `begin_tick` when `TickEvents` reports arrivals, departures or capacity changes, and lets a
//! placer act on the result.
//!
//! Determinism: agents are stepped in fixed chunks whose outputs are concatenated in agent order,
//! so message and action order never depends on thread count; randomness comes from
//! [`StepCtx::rng`], a counter-based stream per (agent, tick, round).

use ingest::rng::{Rng, hash_keys};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::cell::Cell;
use crate::codec::{SectionReader, SectionWriter, SnapshotError};
use crate::ids::{AgentIdx, Tick};
use crate::replay::TickEvents;

/// What a policy may read of the run it is built for: the run's settings below the policies
/// (the full config, `config::RunConfig`, names the policy and so lives above them; it gives
/// these with `RunConfig::settings`).
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    /// Random seed of the policy's agents.
    pub seed: u64,
    /// Simulated time per tick.
    pub tick: crate::sim_time::SimDuration,
    /// Negotiation rounds per tick.
    pub rounds_per_tick: u32,
    /// Workload multiplication, percentage and compaction (`scale.rs`).
    pub scale: crate::scale::Scale,
    /// Deadlines and priorities for a trace without a scenario's side tables (`deadlines.rs`).
    pub deadlines: crate::deadlines::DeadlineModel,
    /// The run's node classification thresholds.
    pub classify: crate::classify::Thresholds,
}

/// A policy's own settings (its `[policy]` table), and how to build the policy from them. The
/// registry (`policies.rs`) lists every type implementing it.
pub trait PolicySpec:
    Default + Clone + PartialEq + std::fmt::Debug + Serialize + DeserializeOwned
{
    /// The policy built.
    type Policy: Policy;

    /// One line for `--policy`'s help.
    const ABOUT: &'static str;

    /// Whether the policy holds a MapReduce job's reduce tasks until its maps have ended
    /// (`phases.rs`); a policy that does not refuses a trace with reduce tasks.
    const HONOURS_PHASES: bool = false;

    /// Checks the settings against the run's (`run.tick` and the like); returns what is wrong,
    /// the key relative to the `[policy]` table.
    fn validate(&self, _run: &RunSettings) -> std::result::Result<(), String> {
        Ok(())
    }

    /// The policy for `run` (its seed, tick structure) replaying the ingested trace in
    /// `trace_dir` (a policy that reads more of the workload than the replay gives it, such as
    /// run times or a scenario's side tables, reads it here).
    fn build(
        &self,
        run: &RunSettings,
        trace_dir: &std::path::Path,
    ) -> crate::error::Result<Self::Policy>;
}

/// A message in flight.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Envelope<M> {
    /// Sender.
    pub from: AgentIdx,
    /// Receiver.
    pub to: AgentIdx,
    /// Payload (plain data).
    pub msg: M,
}

/// Where a step writes its messages and actions.
pub struct Outbox<'a, M, A> {
    pub(crate) from: AgentIdx,
    pub(crate) messages: &'a mut Vec<Envelope<M>>,
    pub(crate) actions: &'a mut Vec<(AgentIdx, A)>,
    /// Messages counted per kind without passing through the mailbox ([`Outbox::count_delivered`]).
    pub(crate) delivered: &'a mut [u64],
    /// Wake-ups asked for ([`Outbox::wake_at`]): the agent and the simulated time, microseconds.
    pub(crate) wakes: &'a mut Vec<(AgentIdx, i64)>,
    /// Messages sent with a delivery time ([`Outbox::send_at`], [`Outbox::send_after`]).
    pub(crate) delayed: &'a mut Vec<(Envelope<M>, Due)>,
}

/// When a message sent with a delay is delivered (never before the next round).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// In the first round that starts at or after this simulated time, microseconds.
    At(i64),
    /// This many rounds after the round it was sent in.
    AfterRounds(u32),
}

impl<M, A> Outbox<'_, M, A> {
    /// Sends `msg` to `to`, delivered next round.
    pub fn send(&mut self, to: AgentIdx, msg: M) {
        self.messages.push(Envelope {
            from: self.from,
            to,
            msg,
        });
    }

    /// Sends `msg` to `to`, delivered in the first round that starts at or after `at_us`
    /// (simulated microseconds; never before the next round): a network latency, a timer. The
    /// message is counted when sent, and waits in the run's delay queue (`delay.rs`, saved in
    /// snapshots) until then.
    pub fn send_at(&mut self, to: AgentIdx, msg: M, at_us: i64) {
        let envelope = Envelope {
            from: self.from,
            to,
            msg,
        };
        self.delayed.push((envelope, Due::At(at_us)));
    }

    /// Sends `msg` to `to`, delivered `rounds` rounds after this one (1 = next round, as
    /// [`Outbox::send`]; 0 counts as 1): a latency in rounds, whatever the tick's length. Counted
    /// when sent, held in the run's delay queue like [`Outbox::send_at`]'s.
    pub fn send_after(&mut self, to: AgentIdx, msg: M, rounds: u32) {
        let envelope = Envelope {
            from: self.from,
            to,
            msg,
        };
        self.delayed.push((envelope, Due::AfterRounds(rounds)));
    }

    /// Requests a change to the cell, applied after this round by [`Policy::apply`].
    pub fn act(&mut self, action: A) {
        self.actions.push((self.from, action));
    }

    /// Asks for this agent to be stepped again in the first round that starts at or after
    /// `at_us` (simulated microseconds; a time not after this round's start means the next
    /// round). Under active stepping ([`Policy::steps_every_agent`] false) an agent is stepped
    /// only in a round where it has messages or a wake-up falls due; a policy that steps every
    /// agent every round may ignore it.
    pub fn wake_at(&mut self, at_us: i64) {
        self.wakes.push((self.from, at_us));
    }

    /// Counts `n` messages of kind `kind` (an index into [`Policy::message_kinds`]) that the
    /// policy delivers through its own state rather than the mailbox (e.g. a broadcast every
    /// receiver reads from one shared copy): they appear in the tick's message counts as if
    /// sent this round.
    pub fn count_delivered(&mut self, kind: usize, n: u64) {
        if let Some(c) = self.delivered.get_mut(kind) {
            *c += n;
        }
    }
}

/// What a step may read.
pub struct StepCtx<'a> {
    /// The cell as of the start of the round.
    pub cell: &'a Cell,
    /// Current tick.
    pub tick: Tick,
    /// Round within the tick.
    pub round: u32,
    /// Simulated time at the end of the tick, microseconds.
    pub now_us: i64,
    /// Run seed.
    pub seed: u64,
}

impl StepCtx<'_> {
    /// The random stream of `agent` for this tick and round (independent of thread count):
    /// stream 0 of [`StepCtx::streams`].
    pub fn rng(&self, agent: AgentIdx) -> Rng {
        Rng::new(self.streams(agent), 0)
    }

    /// The seed of `agent`'s random streams for this tick and round: `Rng::new(seed, k)` is its
    /// stream `k`, independent of every other (stream 0 is [`StepCtx::rng`]).
    pub fn streams(&self, agent: AgentIdx) -> u64 {
        hash_keys(
            self.seed,
            &[agent.0 as u64, self.tick.0 as u64, self.round as u64],
        )
    }
}

/// A counter a policy declares ([`Policy::counter_kinds`]), as it declares its message kinds:
/// a `counters/` column per tick and a total in `summary.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterKind {
    /// The column's and the total's name.
    pub name: &'static str,
    /// An amount (a `Float64` column, e.g. MB) rather than a count (`UInt64`).
    pub amount: bool,
}

impl CounterKind {
    /// A count (`UInt64` column).
    pub const fn count(name: &'static str) -> CounterKind {
        CounterKind {
            name,
            amount: false,
        }
    }

    /// An amount (`Float64` column).
    pub const fn amount(name: &'static str) -> CounterKind {
        CounterKind { name, amount: true }
    }
}

/// A tick's counters, one value per kind the policy declares ([`Policy::counter_kinds`], by
/// index); counts are held exactly (as integers below 2^53).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PolicyCounters(Vec<f64>);

impl PolicyCounters {
    /// Adds `v` to counter `kind`.
    pub fn add(&mut self, kind: usize, v: f64) {
        if self.0.len() <= kind {
            self.0.resize(kind + 1, 0.0);
        }
        self.0[kind] += v;
    }

    /// Counter `kind` (0 when never added to).
    pub fn get(&self, kind: usize) -> f64 {
        self.0.get(kind).copied().unwrap_or(0.0)
    }
}

/// The type of a column of a table a policy declares ([`TableSpec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// `UInt32`.
    U32,
    /// `UInt64`.
    U64,
    /// `Int64` (times in microseconds).
    I64,
    /// `Float64`.
    F64,
    /// `Boolean`.
    Bool,
    /// `Utf8`: one of these names, written as [`Value::Code`] (its index).
    Name(&'static [&'static str]),
}

/// A column of a table a policy declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ColumnSpec {
    /// Its name (a duration or time in microseconds ends in `_us`).
    pub name: &'static str,
    /// Its type.
    pub ty: ColumnType,
    /// Whether it may hold [`Value::Null`].
    pub nullable: bool,
    /// `cellsim report` and the notebook summarise it (mean, median, 99th percentile over the
    /// run's rows; milliseconds for a `_us` column): a policy's headline measure, such as a
    /// task's queueing time.
    pub summarised: bool,
}

impl ColumnSpec {
    /// A column that is never null and not summarised.
    pub const fn new(name: &'static str, ty: ColumnType) -> ColumnSpec {
        ColumnSpec {
            name,
            ty,
            nullable: false,
            summarised: false,
        }
    }

    /// The column, nullable.
    pub const fn nullable(self) -> ColumnSpec {
        ColumnSpec {
            nullable: true,
            ..self
        }
    }

    /// The column, summarised by the report.
    pub const fn summarised(self) -> ColumnSpec {
        ColumnSpec {
            summarised: true,
            ..self
        }
    }
}

/// A table a policy writes ([`Policy::tables`]): `RUN/<name>/` Parquet parts, one per `part` of
/// simulated time, or sooner at `part_rows` rows (MASB's `migrations/`: millions a day at 8x),
/// kept across snapshots like the engine's own tables, and listed in the run's `schema.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TableSpec {
    /// The table's directory name (not one of the engine's: `ticks`, `nodes`, `timing`,
    /// `snapshots`, `synthetic`).
    pub name: &'static str,
    /// Its columns, in order.
    pub columns: &'static [ColumnSpec],
}

/// A value in a row of a policy's table.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    /// Absent (nullable columns only).
    Null,
    /// A [`ColumnType::U32`] value.
    U32(u32),
    /// A [`ColumnType::U64`] value.
    U64(u64),
    /// A [`ColumnType::I64`] value.
    I64(i64),
    /// A [`ColumnType::F64`] value.
    F64(f64),
    /// A [`ColumnType::Bool`] value.
    Bool(bool),
    /// A [`ColumnType::Name`] value: the index of its name.
    Code(u8),
}

/// The rows a policy adds to its tables in a tick ([`Policy::take_rows`]): per table (by index
/// into [`Policy::tables`]), its values row after row.
#[derive(Debug, Clone, Default)]
pub struct TableRows {
    pub(crate) values: Vec<Vec<Value>>,
}

impl TableRows {
    /// Appends `row` (one value per column, in order) to table `table`.
    pub fn push(&mut self, table: usize, row: &[Value]) {
        self.table(table).extend_from_slice(row);
    }

    /// Table `table`'s values, row after row, for a policy to append rows to in place.
    pub fn table(&mut self, table: usize) -> &mut Vec<Value> {
        if self.values.len() <= table {
            self.values.resize_with(table + 1, Vec::new);
        }
        &mut self.values[table]
    }
}

/// A scheduling policy. See the module doc for the tick structure.
pub trait Policy: Send + Sync {
    /// A message between agents (plain data, no heap); serialisable for snapshots.
    type Msg: Copy + Send + Sync + Serialize + DeserializeOwned;
    /// Per-agent state, stepped in parallel; serialisable for snapshots.
    type Agent: Send + Sync + Clone + Default + Serialize + DeserializeOwned;
    /// A requested change to the cell.
    type Action: Copy + Send + Sync;

    /// The policy's name in configs and outputs.
    fn name(&self) -> &'static str;

    /// The fit rule the policy's placements keep, given the run's `fit` (`fit_by.rs`): the cell
    /// is set to it, so the greedy building blocks and the watchdog's stall test
    /// (`watchdog.rs`) read the rule the policy places by. The run's `fit` by default; a policy
    /// with its own admission names the rule it keeps (MASB's node agents: usage).
    fn fit_rule(&self, fit: crate::fit_by::FitBy) -> crate::fit_by::FitBy {
        fit
    }

    /// What the policy admits a task to a node by, as `summary.json` and `report` say it: for the
    /// policies that place through the greedy fit rule (the default), the run's `fit`.
    fn admits_by(&self, fit: crate::fit_by::FitBy) -> String {
        format!("{} (fit)", fit.name())
    }

    /// True for a policy that follows the trace's recorded placements (borg-replay); every
    /// other policy replays the workload, its runs shifted to when it starts them (SPEC 5.5,
    /// `replay/deferred.rs`).
    fn replays_placements(&self) -> bool {
        false
    }

    /// True for a policy that takes over the trace's initial state: the tasks the trace shows
    /// running at its start come with their recorded placements (`TickEvents::placements` of
    /// the first tick), which the policy may follow.
    fn takes_initial_placements(&self) -> bool {
        false
    }

    /// How many leading agents do heavy work each round (MASB's brokers): the executor steps
    /// each of them as its own work item so they run on different threads.
    fn heavy_agents(&self) -> usize {
        0
    }

    /// True for a policy that plays its own messages in exact time (an event queue of its own,
    /// worked through in [`Policy::begin_tick`] up to the tick's end) and starts tasks at the
    /// exact times it decides: the engine runs no rounds for it, and the replay measures each
    /// run from the trace's exact SCHEDULE time (`replay/deferred.rs`), so a run lasts its
    /// recorded length from the policy's start whatever the tick. Such a policy reports the
    /// messages it sent through [`Policy::take_messages`].
    fn exact_time(&self) -> bool {
        false
    }

    /// Adds to `counts` (by [`Policy::message_kinds`] index) the messages the policy sent
    /// through its own queue since the last call (an [`Policy::exact_time`] policy's; called
    /// after [`Policy::begin_tick`]).
    fn take_messages(&mut self, _counts: &mut [u64]) {}

    /// True for a policy whose every agent is stepped in every round (MASB: its node agents
    /// report and keep timers every tick); false (the default) for active stepping: an agent is
    /// stepped only in a round where its inbox holds messages or a wake-up it asked for
    /// ([`Outbox::wake_at`]) falls due, so a round costs what its busy agents cost
    /// (`active.rs`). Agents a policy adds in `begin_tick` start asleep: it wakes them with a
    /// message.
    fn steps_every_agent(&self) -> bool {
        false
    }

    /// The counters the policy reports ([`PolicyCounters`] by index), written per tick as
    /// `counters/` columns and summed in the summary.
    fn counter_kinds(&self) -> &'static [CounterKind] {
        &[]
    }

    /// Names of the message types, counted per tick as `msg_<name>` columns (none by default:
    /// a policy without agents).
    fn message_kinds(&self) -> &'static [&'static str] {
        &[]
    }

    /// Index into [`Policy::message_kinds`] of a message.
    fn message_kind(&self, _msg: &Self::Msg) -> usize {
        0
    }

    /// Start of a tick, after the trace events are applied; `at` = (the tick, when it ends in
    /// microseconds). Messages pushed to `inject` are delivered in the tick's first round and
    /// counted by kind like those agents send.
    fn begin_tick(
        &mut self,
        cell: &mut Cell,
        at: (Tick, i64),
        events: &TickEvents,
        agents: &mut Vec<Self::Agent>,
        inject: &mut Vec<Envelope<Self::Msg>>,
        counters: &mut PolicyCounters,
    );

    /// One agent's turn in a round (never called for a policy without agents, which keeps the
    /// default).
    fn step(
        &self,
        _ctx: &StepCtx<'_>,
        _me: AgentIdx,
        _agent: &mut Self::Agent,
        _inbox: &[Envelope<Self::Msg>],
        _out: &mut Outbox<'_, Self::Msg, Self::Action>,
    ) {
    }

    /// Start of a round, before its agents step: `round_us` is when the round begins (the
    /// tick's start plus the rounds before it). For what happens at a time within the tick,
    /// such as a transfer that ends.
    fn begin_round(&mut self, _cell: &mut Cell, _round_us: i64, _counters: &mut PolicyCounters) {}

    /// Applies a run of a round's actions, in agent order: a round's actions come in several
    /// consecutive runs (one per work item), so applying them must not depend on where one run
    /// ends and the next begins.
    fn apply(
        &mut self,
        _cell: &mut Cell,
        _now_us: i64,
        _actions: &[(AgentIdx, Self::Action)],
        _counters: &mut PolicyCounters,
    ) {
    }

    /// Called once round `round` of `tick`'s last run of actions is applied ([`Policy::apply`]),
    /// before anything else reads the cell: a policy that gathers a round's actions across runs
    /// to apply them in one batch applies them here. Nothing by default.
    fn end_round(&mut self, _cell: &mut Cell, _round: (Tick, u32), _now_us: i64) {}

    /// What stopped the policy this tick, if anything did (a hosted decider's error or wrong
    /// decision, `hosted/`): asked after [`Policy::begin_tick`] and after
    /// [`Policy::save_state`]; the run then fails with it, naming the tick. None by default.
    fn take_failure(&mut self) -> Option<String> {
        None
    }

    /// End of a tick, before metrics are taken.
    fn end_tick(&mut self, _cell: &mut Cell, _now_us: i64, _counters: &mut PolicyCounters) {}

    /// Keeps in `waiting` (pending tasks) those the policy may start now, for the run's
    /// watchdog (`watchdog.rs`): a task the policy holds back by design (a reduce task waiting
    /// for its job's maps) is no sign of a stall. Every pending task by default.
    fn startable(&self, _cell: &Cell, _waiting: &mut Vec<crate::ids::TaskIdx>) {}

    /// Writes the policy's own state at a tick boundary for a snapshot (the run loop saves the
    /// agents and the messages in flight); stateless policies keep the default.
    fn save_state(&self, _w: &mut SectionWriter) {}

    /// Restores what [`Policy::save_state`] wrote.
    fn load_state(&mut self, _r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        Ok(())
    }

    /// The tables the policy writes besides the engine's (MASB's `migrations/`, a queueing
    /// policy's per-task `tasks/` and per-job `jobs/`).
    fn tables(&self) -> &'static [TableSpec] {
        &[]
    }

    /// Moves the rows of this tick for [`Policy::tables`] into `out` (after `end_tick`).
    fn take_rows(&mut self, _out: &mut TableRows) {}

    /// The wall time, milliseconds, its optimisation solver took this tick (`timing/`'s
    /// `solver_ms`; a wall time, so kept out of the deterministic outputs), then 0 until the next
    /// solve.
    fn take_solver_ms(&mut self) -> f64 {
        0.0
    }

    /// Moves the agents' sampled decision logs of this tick into `out`, one JSON object per line
    /// (for `samples.jsonl`), in agent order; policies that sample nothing keep the default.
    fn take_samples(&mut self, _agents: &mut [Self::Agent], _out: &mut Vec<String>) {}
}
