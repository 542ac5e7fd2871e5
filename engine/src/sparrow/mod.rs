//! Policy `sparrow` (seed 002): decentralised scheduling by batch sampling and late binding,
//! with the seed's failure detector and its four improvements as switches ([`SparrowConfig`]).
//!
//! Agents: 0 is the DATACENTER, `n + 1` node `n`'s peer (task master and worker at once,
//! `peer.rs`). Each tick, after the trace's events, [`Sparrow::begin_tick`](Policy::begin_tick)
//! hands each task that became pending to the DATACENTER at its submission time (an `Arrive`,
//! which it hands on at once to the job's master on the consistent-hash ring, `sampling.rs`),
//! tells each worker whose task ended, at the task's end (`Finished`: step 8), and plays the
//! failure detector: `failure_timeout` after a node goes offline (a GCD machine REMOVE), every
//! live peer hears `Dead` (masters drop its probes and re-probe tasks left with none, workers
//! cancel its place-holders), the tasks it ran (displaced by the replay) arrive again, and so do
//! the tasks its master had not assigned (their placeholders elsewhere are cancelled: seed 002
//! does not say what becomes of them; re-issued through the ring, they are not lost). Pings are
//! modelled by that timeout, not sent. A peer whose failure was reported starts empty when its
//! node comes back; one back before the report keeps its state. The DATACENTER's ring follows
//! the cell's online nodes at once (new jobs never go to a dead master). With one scheduler
//! ([`Scheduler::One`], the Sparrow authors' simulator) the DATACENTER masters every job itself.
//!
//! Time is exact (`play.rs`, `timeline.rs`), not the engine's rounds: every message between
//! nodes takes the network delay to the microsecond and a task starts when its assignment (or
//! self-assignment) arrives, whatever the tick, so an unqueued task under base Sparrow waits
//! exactly 3 delays (probe, confirmation request, assignment) and 0 with no delay.
//!
//! Invariants: `queue_len[n]` is node `n`'s published queue length; `ring` and `online` are
//! the cell's online nodes (rebuilt when a machine changes, not saved); between ticks the
//! timeline holds only items due at or after the tick's end.

mod config;
mod peer;
mod play;
mod protocol;
pub mod sampling;
pub mod timeline;
pub mod view;

pub use config::{Binding, QueueOrder, Scheduler, SparrowConfig, ViewKind};
pub use peer::{DATACENTER, MasterTask, Peer, Placeholder, ProbeRecord, agent_of, node_of};
pub use play::Delivery;
pub use protocol::{Action, MESSAGE_KINDS, Msg};

use serde::{Deserialize, Serialize};

use sampling::Ring;
use timeline::Timeline;

use crate::cell::{Cell, TaskState};
use crate::greedy::fit::{Amounts, Need, fits};
use crate::ids::{AgentIdx, NodeIdx, TaskIdx, Tick};
use crate::policy::{Envelope, Outbox, Policy, PolicyCounters, StepCtx, TableRows, TableSpec};
use crate::queue_outputs::QueueOutputs;
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

/// A node failure the detector has not reported yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Failure {
    /// When the detector reports it, microseconds.
    detect_at_us: i64,
    node: NodeIdx,
    /// Tasks the replay took off the node, with their generations.
    displaced: Vec<(TaskIdx, u32)>,
}

/// The policy (module doc).
#[derive(Debug, Clone, Default)]
pub struct Sparrow {
    config: SparrowConfig,
    /// The instant being played (`play.rs`; between ticks, the last tick's end), microseconds.
    round_us: i64,
    /// The run's seed (the agents' random streams).
    seed: u64,
    /// Instants played since the run began (`play.rs`).
    instants: u64,
    ring: Ring,
    /// Online nodes, by index.
    online: Vec<u32>,
    /// Whether `ring` and `online` match the cell (false after a load).
    topology_built: bool,
    queue_len: Vec<u32>,
    failures: Vec<Failure>,
    /// Tasks a placement failed for (a race with the trace): they arrive again next tick.
    retry: Vec<(TaskIdx, u32)>,
    outputs: QueueOutputs,
    /// Messages and wake-ups not yet due (`timeline.rs`).
    timeline: Timeline,
    /// Per node: room of tasks ended later in the tick than the instant being played.
    held: Vec<Amounts>,
    /// (end, node, room) of those tasks.
    ending: Vec<(i64, NodeIdx, Amounts)>,
    /// Messages sent since the last [`Policy::take_messages`], by kind.
    sent: Vec<u64>,
    scratch: play::Scratch,
    /// Every delivery, when recorded ([`Sparrow::record_deliveries`]).
    deliveries: Option<Vec<Delivery>>,
}

impl Sparrow {
    /// The policy with `config`, writing `outputs`.
    pub fn new(config: SparrowConfig, outputs: QueueOutputs) -> Sparrow {
        Sparrow {
            config,
            outputs,
            sent: vec![0; MESSAGE_KINDS.len()],
            ..Sparrow::default()
        }
    }

    /// Keeps a record of every message delivered, with its time (for tests).
    pub fn record_deliveries(&mut self) {
        self.deliveries = Some(Vec::new());
    }

    /// The deliveries recorded since the last call.
    pub fn take_deliveries(&mut self) -> Vec<Delivery> {
        self.deliveries
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn build_topology(&mut self, cell: &Cell) {
        let nodes = &cell.nodes;
        self.online = (0..nodes.len() as u32)
            .filter(|&n| nodes.online()[n as usize])
            .collect();
        let ids = self
            .online
            .iter()
            .map(|&n| (n, nodes.machine_id()[n as usize]));
        self.ring = Ring::new(ids, self.config.ring_vnodes);
        self.topology_built = true;
    }

    /// The failure detector: failures reported before `end_us` reach every live peer at their
    /// report time (and the one scheduler, if so), their tasks arrive again then, and the
    /// dead peer's state is dropped.
    fn detect(&mut self, cell: &Cell, end_us: i64, agents: &mut [Peer]) {
        let (due, later): (Vec<Failure>, Vec<Failure>) = std::mem::take(&mut self.failures)
            .into_iter()
            .partition(|f| f.detect_at_us < end_us);
        self.failures = later;
        for f in due {
            let at = f.detect_at_us.max(self.round_us);
            let one = self.config.scheduler == Scheduler::One;
            let told = one.then_some(DATACENTER).into_iter();
            let peers = self.online.iter().map(|&n| agent_of(NodeIdx(n)));
            for to in told.chain(peers).collect::<Vec<_>>() {
                let msg = Msg::Dead { node: f.node };
                self.post(
                    at,
                    Envelope {
                        from: DATACENTER,
                        to,
                        msg,
                    },
                );
            }
            let dead = agent_of(f.node).index();
            let mut again = f.displaced;
            if let Some(peer) = agents.get_mut(dead)
                && !cell.nodes.online()[f.node.index()]
            {
                again.extend(peer.pending.iter().map(|t| (t.task, t.generation)));
                *peer = Peer::default();
            }
            for (task, generation) in again {
                self.post(at, arrive(task, generation));
            }
        }
    }
}

fn arrive(task: TaskIdx, generation: u32) -> Envelope<Msg> {
    Envelope {
        from: DATACENTER,
        to: DATACENTER,
        msg: Msg::Arrive { task, generation },
    }
}

impl Policy for Sparrow {
    type Msg = Msg;
    type Agent = Peer;
    type Action = Action;

    fn name(&self) -> &'static str {
        "sparrow"
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
        (tick, end_us): (Tick, i64),
        events: &TickEvents,
        agents: &mut Vec<Peer>,
        _inject: &mut Vec<Envelope<Msg>>,
        counters: &mut PolicyCounters,
    ) {
        self.outputs.record(cell, events);
        // The tick's start (the last instant played is never later).
        let tick_us = (end_us - ingest::codes::TRACE_START_US) / (i64::from(tick.0) + 1);
        let from_us = self.round_us.max(end_us - tick_us);
        let nodes = cell.nodes.len();
        let gossip = self.config.view != ViewKind::Uniform;
        if !self.topology_built || !events.machine_changes.is_empty() {
            self.build_topology(cell);
        }
        self.queue_len.resize(nodes, 0);
        let mut displaced: Vec<(TaskIdx, u32)> = {
            let g = |t: TaskIdx| cell.tasks.generation()[t.index()];
            events.displaced_tasks.iter().map(|&t| (t, g(t))).collect()
        };
        let gossip_start = |to: AgentIdx| Envelope {
            from: DATACENTER,
            to,
            msg: Msg::Gossip,
        };
        for change in &events.machine_changes {
            let a = agent_of(change.node).index();
            if a < agents.len() && !change.online {
                // The tasks the tick's removals displaced arrive again with the first report.
                self.failures.push(Failure {
                    detect_at_us: end_us + self.config.failure_timeout.us(),
                    node: change.node,
                    displaced: std::mem::take(&mut displaced),
                });
            } else if a < agents.len()
                && change.online
                && agents[a].next_gossip_us <= from_us
                && gossip
            {
                self.post(from_us, gossip_start(AgentIdx(a as u32)));
            }
        }
        // Displaced by a node this policy had no peer for yet: they arrive at once.
        for (t, g) in displaced {
            self.post(from_us, arrive(t, g));
        }
        if agents.len() < nodes + 1 {
            let from = agents.len().max(1);
            agents.resize_with(nodes + 1, Peer::default);
            if gossip {
                for a in from..=nodes {
                    self.post(from_us, gossip_start(AgentIdx(a as u32)));
                }
            }
        }
        self.detect(cell, end_us, agents);
        // Step 8: a worker hears when a task it ran ends, at its end.
        for e in &events.ended {
            if e.node.is_some() && cell.nodes.online()[e.node.index()] {
                self.hold_until_end(e, from_us);
            }
        }
        for (task, generation) in std::mem::take(&mut self.retry) {
            self.post(from_us, arrive(task, generation));
        }
        for &t in &events.submitted {
            if cell.tasks.state()[t.index()] == TaskState::Pending {
                let at = cell.tasks.submit_us()[t.index()].max(from_us);
                self.post(at, arrive(t, cell.tasks.generation()[t.index()]));
            }
        }
        self.play(cell, agents, (end_us, self.seed), counters);
    }

    fn step(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        agent: &mut Peer,
        inbox: &[Envelope<Msg>],
        out: &mut Outbox<'_, Msg, Action>,
    ) {
        if me == DATACENTER {
            self.datacenter_step(ctx, agent, inbox, out);
        } else {
            self.peer_step(ctx, me, agent, inbox, out);
        }
    }

    fn apply(
        &mut self,
        cell: &mut Cell,
        _now_us: i64,
        actions: &[(AgentIdx, Action)],
        counters: &mut PolicyCounters,
    ) {
        for &(_, action) in actions {
            match action {
                Action::Place {
                    task,
                    generation,
                    node,
                } => {
                    if !peer::pending(cell, task, generation) {
                        continue;
                    }
                    let need = Need::of(cell, task);
                    if fits(&cell.nodes, node.index(), &need) && cell.satisfies(node, task) {
                        cell.place(task, node, self.round_us);
                    } else {
                        self.retry.push((task, generation));
                    }
                }
                Action::Deposited { ready, hops } => {
                    counters.add(0, 1.0);
                    counters.add(1, if ready { 0.0 } else { 1.0 });
                    counters.add(2, f64::from(hops));
                }
                Action::QueueLength { node, length } => {
                    if let Some(q) = self.queue_len.get_mut(node.index()) {
                        *q = length;
                    }
                }
            }
        }
    }

    fn exact_time(&self) -> bool {
        true
    }

    fn counter_kinds(&self) -> &'static [crate::policy::CounterKind] {
        &protocol::COUNTERS
    }

    fn take_messages(&mut self, counts: &mut [u64]) {
        for (c, n) in counts.iter_mut().zip(&mut self.sent) {
            *c += std::mem::take(n);
        }
    }

    fn tables(&self) -> &'static [TableSpec] {
        &crate::queue_outputs::TABLES
    }

    fn take_rows(&mut self, out: &mut TableRows) {
        self.outputs.take_rows(out);
    }

    fn save_state(&self, w: &mut SectionWriter) {
        w.serde(&(&self.queue_len, &self.failures, &self.retry));
        w.serde(&(&self.timeline, self.round_us, self.instants));
        self.outputs.save_state(w);
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        (self.queue_len, self.failures, self.retry) = r.serde()?;
        (self.timeline, self.round_us, self.instants) = r.serde()?;
        self.outputs.load_state(r)?;
        self.topology_built = false;
        Ok(())
    }
}

impl crate::policy::PolicySpec for SparrowConfig {
    type Policy = Sparrow;

    const ABOUT: &'static str = "seed 002: Sparrow (batch sampling, late binding, failure detection) and its improvements (self-assignment, probe propagation, softmax next hops, Cyclon/Gradient views); binding = \"job\" with scheduler = \"one\" runs the Sparrow authors' simulator";

    /// Messages are exact in time whatever the tick (`play.rs`): any tick will do.
    fn validate(&self, _run: &crate::policy::RunSettings) -> Result<(), String> {
        self.problem().map_or(Ok(()), Err)
    }

    fn build(
        &self,
        run: &crate::policy::RunSettings,
        trace_dir: &std::path::Path,
    ) -> crate::Result<Sparrow> {
        let outputs = QueueOutputs::of_run(run, trace_dir)?;
        let mut sparrow = Sparrow::new(self.clone(), outputs);
        sparrow.seed = run.seed;
        Ok(sparrow)
    }
}
