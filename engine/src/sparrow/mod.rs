//! Policy `sparrow` (seed 002): decentralised scheduling by batch sampling and late binding,
//! with the seed's failure detector and its four improvements as switches ([`SparrowConfig`]).
//!
//! Agents: 0 is the DATACENTER, `n + 1` node `n`'s peer (task master and worker at once,
//! `peer.rs`). Each tick, after the trace's events, [`Sparrow::begin_tick`](Policy::begin_tick)
//! hands the tasks that became pending to the DATACENTER (an `Arrive` each, which it sends on to
//! the job's master on the consistent-hash ring, `sampling.rs`, arriving one network delay after
//! the task's submission), tells each worker whose task ended (`Finished`: step 8), and plays
//! the failure detector: `failure_timeout` after a node goes offline (a GCD machine REMOVE), every
//! live peer hears `Dead` (masters drop its probes and re-probe tasks left with none, workers
//! cancel its place-holders), the tasks it ran (displaced by the replay) arrive again, and so do
//! the tasks its master had not assigned (their placeholders elsewhere are cancelled: seed 002
//! does not say what becomes of them; re-issued through the ring, they are not lost). Pings are
//! modelled by that timeout, not sent. A peer whose failure was reported starts empty when its
//! node comes back; one back before the report keeps its state. The DATACENTER's ring follows
//! the cell's online nodes at once (new jobs never go to a dead master).
//!
//! Rounds carry the protocol; a task starts at the start of the round its assignment (or
//! self-assignment) is applied in, so with rounds of one network delay (the default experiment
//! settings: 10 ms ticks of 20 rounds, 0.5 ms delay) an unqueued task under base Sparrow waits
//! exactly 4 delays (submit, probe, confirmation request, assignment). Messages due within a round
//! arrive at its start (`Outbox::send_at`).
//!
//! Invariants: `queue_len[n]` is node `n`'s published queue length; `ring` and `online` are
//! the cell's online nodes (rebuilt when a machine changes, not saved).

mod config;
mod peer;
mod protocol;
pub mod sampling;
pub mod view;

pub use config::{QueueOrder, SparrowConfig, ViewKind};
pub use peer::{DATACENTER, MasterTask, Peer, Placeholder, ProbeRecord, agent_of, node_of};
pub use protocol::{Action, MESSAGE_KINDS, Msg};

use serde::{Deserialize, Serialize};

use sampling::Ring;

use crate::cell::{Cell, TaskState};
use crate::greedy::fit::{Need, fits};
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
    /// Start of the current round (set by `begin_round`), microseconds.
    round_us: i64,
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
}

impl Sparrow {
    /// The policy with `config`, writing `outputs`.
    pub fn new(config: SparrowConfig, outputs: QueueOutputs) -> Sparrow {
        Sparrow {
            config,
            outputs,
            ..Sparrow::default()
        }
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

    /// The failure detector: failures due by `end_us` are reported to every live peer, their
    /// tasks arrive again, and the dead peer's state is dropped.
    fn detect(
        &mut self,
        cell: &Cell,
        end_us: i64,
        agents: &mut [Peer],
        inject: &mut Vec<Envelope<Msg>>,
    ) {
        let (due, later): (Vec<Failure>, Vec<Failure>) = std::mem::take(&mut self.failures)
            .into_iter()
            .partition(|f| f.detect_at_us <= end_us);
        self.failures = later;
        for f in due {
            for &n in &self.online {
                inject.push(Envelope {
                    from: DATACENTER,
                    to: agent_of(NodeIdx(n)),
                    msg: Msg::Dead { node: f.node },
                });
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
                inject.push(arrive(task, generation));
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
        (_, end_us): (Tick, i64),
        events: &TickEvents,
        agents: &mut Vec<Peer>,
        inject: &mut Vec<Envelope<Msg>>,
        _counters: &mut PolicyCounters,
    ) {
        self.outputs.record(cell, events);
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
        for change in &events.machine_changes {
            let a = agent_of(change.node).index();
            if a < agents.len() && !change.online {
                // The tasks the tick's removals displaced arrive again with the first report.
                self.failures.push(Failure {
                    detect_at_us: end_us + self.config.failure_timeout.us(),
                    node: change.node,
                    displaced: std::mem::take(&mut displaced),
                });
            } else if a < agents.len() && change.online && agents[a].view.is_empty() && gossip {
                inject.push(Envelope {
                    from: DATACENTER,
                    to: AgentIdx(a as u32),
                    msg: Msg::Gossip,
                });
            }
        }
        // Displaced by a node this policy had no peer for yet: they arrive at once.
        inject.extend(displaced.into_iter().map(|(t, g)| arrive(t, g)));
        if agents.len() < nodes + 1 {
            let from = agents.len().max(1);
            agents.resize_with(nodes + 1, Peer::default);
            if gossip {
                for a in from..=nodes {
                    inject.push(Envelope {
                        from: DATACENTER,
                        to: AgentIdx(a as u32),
                        msg: Msg::Gossip,
                    });
                }
            }
        }
        self.detect(cell, end_us, agents, inject);
        // Step 8: a worker hears when a task it ran ends (once per tick).
        let mut freed: Vec<NodeIdx> = events
            .ended
            .iter()
            .map(|e| e.node)
            .filter(|n| n.is_some() && cell.nodes.online()[n.index()])
            .collect();
        freed.sort_unstable();
        freed.dedup();
        inject.extend(freed.into_iter().map(|n| Envelope {
            from: DATACENTER,
            to: agent_of(n),
            msg: Msg::Finished,
        }));
        for (task, generation) in std::mem::take(&mut self.retry) {
            inject.push(arrive(task, generation));
        }
        for &t in &events.submitted {
            if cell.tasks.state()[t.index()] == TaskState::Pending {
                inject.push(arrive(t, cell.tasks.generation()[t.index()]));
            }
        }
    }

    fn begin_round(&mut self, _cell: &mut Cell, round_us: i64, _counters: &mut PolicyCounters) {
        self.round_us = round_us;
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
            self.datacenter_step(ctx, inbox, out);
        } else {
            self.peer_step(ctx, me, agent, inbox, out);
        }
    }

    fn apply(
        &mut self,
        cell: &mut Cell,
        _now_us: i64,
        actions: &[(AgentIdx, Action)],
        _counters: &mut PolicyCounters,
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
                Action::QueueLength { node, length } => {
                    if let Some(q) = self.queue_len.get_mut(node.index()) {
                        *q = length;
                    }
                }
            }
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
        self.outputs.save_state(w);
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        (self.queue_len, self.failures, self.retry) = r.serde()?;
        self.outputs.load_state(r)?;
        self.topology_built = false;
        Ok(())
    }
}

/// The longest round Sparrow runs with, microseconds (checked by its `validate`).
const MAX_ROUND_US: i64 = 1_000_000;

impl crate::policy::PolicySpec for SparrowConfig {
    type Policy = Sparrow;

    const ABOUT: &'static str = "seed 002: Sparrow (batch sampling, late binding, failure detection) and its improvements (self-assignment, probe propagation, softmax next hops, Cyclon/Gradient views)";

    fn validate(&self, run: &crate::policy::RunSettings) -> Result<(), String> {
        self.problem().map_or(Ok(()), Err)?;
        // Every message hop takes at least a round: rounds of seconds turn a 0.5 ms network
        // into one of seconds, and put a trace's whole submission burst into one master's
        // queue at once (a 60 s tick of the GCD sample held tick 0 for over 11 minutes).
        let round_us = run.tick.us() / i64::from(run.rounds_per_tick.max(1));
        if round_us > MAX_ROUND_US {
            return Err(format!(
                "sparrow needs rounds of at most {} ms (a message hop takes at least a round; its network delay is {}), but tick {} with rounds_per_tick = {} makes rounds of {} ms: use e.g. --tick 10ms with rounds_per_tick = 20 (a round per 0.5 ms delay, seed 002's setting), or --tick 1s",
                MAX_ROUND_US / 1000,
                self.net_delay,
                run.tick,
                run.rounds_per_tick,
                round_us / 1000
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        run: &crate::policy::RunSettings,
        trace_dir: &std::path::Path,
    ) -> crate::Result<Sparrow> {
        let outputs = QueueOutputs::of_run(run, trace_dir)?;
        Ok(Sparrow::new(self.clone(), outputs))
    }
}
