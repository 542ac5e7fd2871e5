//! Policy `sparrow` (seed 002): decentralised scheduling by batch sampling and late binding,
//! with the seed's failure detector and its four improvements as switches ([`SparrowConfig`]).
//!
//! Agents: 0 is the DATACENTER, `n + 1` node `n`'s peer (task master and worker at once,
//! `peer.rs`). Each tick, after the trace's events, [`Sparrow::begin_tick`](Policy::begin_tick)
//! hands each task that became pending to the DATACENTER at its submission time (an `Arrive`,
//! which it hands on at once to the job's master on the consistent-hash ring, `sampling.rs`),
//! tells each worker whose task ended, at the task's end (`Finished`: step 8), and crashes the
//! nodes the trace removes: a removed node's peer loses its state at once and every peer that
//! subscribed it hears `Dead` at its own detector's verdict (`detector.rs`: the first ping to
//! miss it plus the 3 s timeout). Then masters drop its probes and re-probe tasks left with
//! none, workers cancel its place-holders, and the master of each task it ran (displaced by the
//! replay) or was being handed (`Action::Lost`) probes that task again. The tasks its own master
//! had not assigned are issued again through the ring at the DATACENTER's verdict (their
//! place-holders elsewhere are cancelled: seed 002 does not say what becomes of them; re-issued,
//! they are not lost). A node back online is a new incarnation and starts empty. The
//! DATACENTER's ring follows the cell's online nodes at once (new jobs never go to a dead
//! master). With one scheduler ([`Scheduler::One`], the Sparrow authors' simulator) the
//! DATACENTER masters every job itself.
//!
//! Time is exact (`play.rs`, `timeline.rs`), not the engine's rounds: every message between
//! nodes takes the network delay to the microsecond and a task starts when its assignment (or
//! self-assignment) arrives, whatever the tick, so an unqueued task under base Sparrow waits
//! exactly 3 delays (probe, confirmation request, assignment) and 0 with no delay.
//!
//! Invariants: `queue_len[n]` is node `n`'s published queue length; `failed_us[n]` when node
//! `n` last failed; `placed[t]` the master and node of task slot `t`'s last placement and its
//! rank among the run's `placements`; `ring`
//! and `online` are the cell's online nodes (rebuilt when a machine changes, not saved);
//! between ticks the timeline holds only items due at or after the tick's end.

mod config;
pub mod detector;
pub mod exchanges;
mod peer;
mod play;
mod protocol;
pub mod sampling;
pub mod timeline;
pub mod view;

pub use config::{Binding, ProbeDraws, QueueOrder, Scheduler, SparrowConfig, ViewKind};
pub use peer::{DATACENTER, MasterTask, Peer, Placeholder, ProbeRecord, agent_of, node_of};
pub use play::Delivery;
pub use protocol::{Action, MESSAGE_KINDS, Msg};

use exchanges::Exchanges;
use sampling::Ring;
use timeline::Timeline;

use crate::cell::{Cell, TaskState};
use crate::greedy::fit::{Amounts, Need, fits};
use crate::ids::{AgentIdx, NodeIdx, TaskIdx, Tick};
use crate::policy::{Envelope, Outbox, Policy, PolicyCounters, StepCtx, TableRows, TableSpec};
use crate::queue_outputs::QueueOutputs;
use crate::replay::{EndedTask, TickEvents};
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

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
    /// Per node: when it last failed, microseconds (`i64::MIN`: never).
    failed_us: Vec<i64>,
    /// Per task slot: the master and node of its last placement (`NodeIdx::NONE` before any)
    /// and its place in the order of all placements (`u64::MAX` before any).
    placed: Vec<(AgentIdx, NodeIdx, u64)>,
    /// Placements so far.
    placements: u64,
    /// Tasks a placement failed for (a race with the trace): they arrive again next tick.
    retry: Vec<(TaskIdx, u32)>,
    outputs: QueueOutputs,
    /// Messages and wake-ups not yet due (`timeline.rs`).
    timeline: Timeline,
    /// The entries of the view exchanges among them (`exchanges.rs`).
    exchanges: Exchanges,
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

    /// One agent's turn at an instant (`play.rs`; the engine runs no rounds for Sparrow, so
    /// never steps it): the exchanges it receives are read from, and those it sends kept in,
    /// `exchanges`.
    fn step_agent(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        agent: &mut Peer,
        inbox: &[Envelope<Msg>],
        out: &mut Outbox<'_, Msg, Action>,
        exchanges: &mut Exchanges,
    ) {
        if me == DATACENTER {
            self.datacenter_step(ctx, agent, inbox, out, exchanges);
        } else {
            self.peer_step(ctx, me, agent, inbox, out, exchanges);
        }
    }

    /// Whether the view exchanges held in the timeline name exactly the entries kept, each
    /// once (`exchanges.rs`'s invariant; a loaded snapshot is checked).
    fn check_exchanges(&self) -> Result<(), String> {
        let named = (self.timeline.items()).filter_map(|item| item.message()?.msg.exchange());
        self.exchanges.check_named(named)
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

    /// Nodes `failed` crashed at `failed_us` (module doc): their peers' state is lost, each of
    /// their subscribers hears `Dead` at its verdict, and their tasks are issued again, each at
    /// its re-issuer's verdict: the displaced (`displaced`, run there) by their masters, the
    /// unassigned by the DATACENTER.
    fn crash(
        &mut self,
        failed: &[NodeIdx],
        failed_us: i64,
        displaced: Vec<(TaskIdx, u32)>,
        agents: &mut [Peer],
    ) {
        for &n in failed {
            if self.failed_us.len() <= n.index() {
                self.failed_us.resize(n.index() + 1, i64::MIN);
            }
            self.failed_us[n.index()] = failed_us;
        }
        let crashed = |a: AgentIdx| failed.iter().any(|&n| agent_of(n) == a);
        let mut told = detector::subscribers(agents, failed);
        let mut again = Vec::with_capacity(displaced.len());
        for (task, generation) in displaced {
            // Its master subscribed the node it ran on; a crashed master's go to the ring.
            let (master, node) = (self.placed.get(task.index()))
                .map(|&(m, n, _)| (m, n))
                .filter(|&(m, n)| n.is_some() && !crashed(m))
                .unwrap_or((DATACENTER, NodeIdx::NONE));
            let peer = master != DATACENTER || self.config.scheduler == Scheduler::One;
            if node.is_some() && peer {
                told.push((master, node));
            }
            again.push((master, (task, generation)));
        }
        told.sort_unstable();
        told.dedup();
        for (a, n) in told {
            let at = detector::verdict_us(&self.config, self.seed, a, failed_us);
            let msg = Msg::Dead { node: n };
            self.post(
                at,
                Envelope {
                    from: a,
                    to: a,
                    msg,
                },
            );
        }
        for &n in failed {
            let peer = std::mem::take(&mut agents[agent_of(n).index()]);
            for t in peer.pending {
                self.reissue(DATACENTER, (t.task, t.generation), failed_us);
            }
        }
        for (master, task) in again {
            self.reissue(master, task, failed_us);
        }
    }

    /// Task `task` is issued again by `master` (the DATACENTER: through the ring) when its
    /// detector reports a failure of `failed_us` (never before the instant being played).
    fn reissue(&mut self, master: AgentIdx, (task, generation): (TaskIdx, u32), failed_us: i64) {
        let at = detector::verdict_us(&self.config, self.seed, master, failed_us);
        let envelope = if master == DATACENTER {
            arrive(task, generation)
        } else {
            Envelope {
                from: DATACENTER,
                to: master,
                msg: Msg::Submit { task, generation },
            }
        };
        self.post(at.max(self.round_us), envelope);
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
        let mut failed = Vec::new();
        for change in &events.machine_changes {
            let a = agent_of(change.node).index();
            if a < agents.len() && !change.online {
                failed.push(change.node);
            } else if a < agents.len()
                && change.online
                && agents[a].next_gossip_us <= from_us
                && gossip
            {
                self.post(from_us, gossip_start(AgentIdx(a as u32)));
            }
        }
        // The cell removed them as the tick began; the tasks its removals displaced are issued
        // again at their masters' verdicts.
        if !failed.is_empty() {
            failed.sort_unstable();
            failed.dedup();
            self.crash(&failed, from_us, std::mem::take(&mut displaced), agents);
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
        // Step 8: a worker hears when a task it ran ends, at its end; of the tasks ending at
        // one instant, the one placed first first (as the Sparrow authors' simulator, whose
        // events at one time run in the order they were made: a task's end when it started).
        let mut ended: Vec<&EndedTask> = (events.ended.iter())
            .filter(|e| e.node.is_some() && cell.nodes.online()[e.node.index()])
            .collect();
        let placed = |e: &EndedTask| self.placed.get(e.task.index()).map_or(u64::MAX, |p| p.2);
        ended.sort_by_key(|e| (e.end_us.max(from_us), placed(e)));
        for e in ended {
            self.hold_until_end(e, from_us);
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
                    master,
                } => {
                    if !peer::pending(cell, task, generation) {
                        continue;
                    }
                    let need = Need::of(cell, task);
                    if fits(&cell.nodes, node.index(), &need) && cell.satisfies(node, task) {
                        cell.place(task, node, self.round_us);
                        if self.placed.len() <= task.index() {
                            let never = (DATACENTER, NodeIdx::NONE, u64::MAX);
                            self.placed.resize(cell.tasks.len(), never);
                        }
                        self.placed[task.index()] = (master, node, self.placements);
                        self.placements += 1;
                    } else {
                        self.retry.push((task, generation));
                    }
                }
                Action::Lost {
                    task,
                    generation,
                    node,
                    master,
                } => {
                    // A node offline before this policy saw it fail: from now.
                    let failed_us = (self.failed_us.get(node.index()).copied())
                        .filter(|&t| t != i64::MIN)
                        .unwrap_or(self.round_us);
                    self.reissue(master, (task, generation), failed_us);
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
        w.serde(&(&self.queue_len, &self.failed_us, &self.retry, &self.placed));
        w.serde(&self.placements);
        w.serde(&(&self.timeline, self.round_us, self.instants));
        w.serde(&self.exchanges);
        self.outputs.save_state(w);
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        (self.queue_len, self.failed_us, self.retry, self.placed) = r.serde()?;
        self.placements = r.serde()?;
        (self.timeline, self.round_us, self.instants) = r.serde()?;
        self.exchanges = r.serde()?;
        self.check_exchanges()
            .map_err(|problem| r.corrupt(problem))?;
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
