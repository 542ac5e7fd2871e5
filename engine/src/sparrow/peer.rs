//! What a Sparrow peer does in a round: as TASK MASTER it probes workers for the tasks the
//! DATACENTER gives it and binds tasks to workers late; as EXECUTOR (RmWorker) it queues
//! place-holders FIFO, reserves the head's REQUISITES when they fit and asks for confirmation
//! (seed 002 steps 2-8). Every message between peers takes the network delay.
//!
//! Invariants: a master's `pending` holds its unassigned tasks in arrival order; every probe it
//! sent that no worker has answered with a confirmation request is a [`ProbeRecord`]; a pending
//! task whose probes were lost with a dead worker is probed again (and, with `reprobe`, one whose
//! probes were bound to older tasks); the records always outnumber the pending tasks, so no
//! task is forgotten. A worker's `reserved` are the
//! place-holders it asked confirmation for; the node's free room as the worker counts it is the
//! cell's less those reservations.

use std::collections::VecDeque;

use ingest::rng::Rng;
use serde::{Deserialize, Serialize};

use super::Sparrow;
use super::config::{Binding, ProbeDraws, QueueOrder, Scheduler, ViewKind};
use super::exchanges::{ExchangeId, Exchanges};
use super::protocol::{Action, Msg};
use super::sampling::{distinct_accepted, distinct_uniform, probe_targets, softmax_distinct};
use super::view::{Exchanged, ViewEntry, best, cyclon_merge, oldest, shuffle_length, tman_merge};
use crate::cell::{Cell, TaskState};
use crate::greedy::fit::{Amounts, Need, covers, free_amounts};
use crate::ids::{AgentIdx, NodeIdx, TaskIdx};
use crate::policy::{Envelope, Outbox, StepCtx};

/// A probe held by a worker (queued or reserved).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Placeholder {
    /// The master that sent it.
    pub master: AgentIdx,
    /// The task it was sent for.
    pub task: TaskIdx,
    /// Its generation.
    pub generation: u32,
    /// Its REQUISITES.
    pub need: Need,
    /// The worker the master sent it to.
    pub first: AgentIdx,
}

/// A task a master has not assigned yet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MasterTask {
    /// The task.
    pub task: TaskIdx,
    /// Its generation.
    pub generation: u32,
    /// Its REQUISITES.
    pub need: Need,
}

/// A probe a master sent and no worker has asked confirmation for yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// Where the master sent it.
    pub first: AgentIdx,
    /// Where it is queued, once the worker said so (else `first`).
    pub worker: AgentIdx,
    /// The task it was sent for.
    pub task: TaskIdx,
    /// Its generation.
    pub generation: u32,
    /// The task's job (the probe's identity under per-job binding, after the task's slot is reused).
    pub job: u64,
}

/// One peer's state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Peer {
    /// Worker: place-holders waiting, FIFO.
    pub queue: VecDeque<Placeholder>,
    /// Worker: place-holders whose REQUISITES are reserved, awaiting the master's answer.
    pub reserved: Vec<Placeholder>,
    /// Worker: the queue length last published.
    pub published: u32,
    /// Master: unassigned tasks, arrival order.
    pub pending: Vec<MasterTask>,
    /// Master: probes out.
    pub probes: Vec<ProbeRecord>,
    /// Gossip view the next hops are drawn from (empty under `view = "uniform"`): the Cyclon
    /// view, or the Gradient (T-Man) view.
    pub view: Vec<ViewEntry>,
    /// Under Gradient, the Cyclon view underneath (its random samples).
    pub random: Vec<ViewEntry>,
    /// The nodes of the entries given in this node's shuffle awaiting an answer.
    pub sent: Vec<u32>,
    /// When the next view exchange is due, microseconds (0: none planned).
    pub next_gossip_us: i64,
    /// The one scheduler (the DATACENTER) under `draws = "radlab-*"`: the Sparrow authors'
    /// simulator's draws, from the first job on (`None` elsewhere).
    pub draws: Option<Box<ingest::pyrandom::RadlabDraws>>,
}

/// The agent of node `n`.
pub fn agent_of(n: NodeIdx) -> AgentIdx {
    AgentIdx(n.0 + 1)
}

/// The node of peer agent `a` (not the DATACENTER, agent 0).
pub fn node_of(a: AgentIdx) -> NodeIdx {
    NodeIdx(a.0 - 1)
}

/// The DATACENTER agent.
pub const DATACENTER: AgentIdx = AgentIdx(0);

/// Whether task slot `t` still holds generation `generation`, pending.
pub fn pending(cell: &Cell, t: TaskIdx, generation: u32) -> bool {
    t.index() < cell.tasks.len()
        && cell.tasks.generation()[t.index()] == generation
        && cell.tasks.state()[t.index()] == TaskState::Pending
}

fn sub(free: &mut Amounts, need: &Need) {
    for (f, x) in free.iter_mut().zip(need.amounts()) {
        *f -= x;
    }
}

fn add(free: &mut Amounts, need: &Need) {
    for (f, x) in free.iter_mut().zip(need.amounts()) {
        *f += x;
    }
}

/// What a peer's step works with besides its own state.
struct Turn<'a, 'b, 'c> {
    policy: &'a Sparrow,
    ctx: &'a StepCtx<'b>,
    me: AgentIdx,
    node: NodeIdx,
    rng: Rng,
    out: &'a mut Outbox<'c, Msg, Action>,
    /// The view exchanges in flight (`exchanges.rs`).
    exchanges: &'a mut Exchanges,
    /// The node's free room less the worker's reservations.
    free: Amounts,
}

impl Turn<'_, '_, '_> {
    fn send(&mut self, to: AgentIdx, msg: Msg) {
        self.out.send_at(
            to,
            msg,
            self.policy.round_us + self.policy.config.net_delay.us(),
        );
    }

    /// Node `n`'s descriptor as it would give it now (a bootstrap's introducer list).
    fn fresh(&self, n: u32) -> ViewEntry {
        let nodes = &self.ctx.cell.nodes;
        let i = n as usize;
        let charged = i64::from(crate::greedy::fit::charged(nodes, i).0);
        // Less the room of its tasks that end later in the tick (`play.rs`).
        let held = self.policy.held(NodeIdx(n))[0];
        let free = (i64::from(nodes.cpu_cap()[i]) - charged - held).max(0) as u32;
        ViewEntry {
            node: n,
            free_cpus: cpus(free, self.policy.config.cpus_per_machine),
            queue: self.policy.queue_len.get(i).copied().unwrap_or(0),
            at_us: self.policy.round_us,
        }
    }

    /// `count` peers to send probes to for `task`, never this node nor `avoid`, each meeting
    /// the task's constraints: from the view by softmax over cached free CPU, or uniformly over
    /// the online nodes without one (or when none in it qualifies).
    fn peers(
        &mut self,
        view: &[ViewEntry],
        task: TaskIdx,
        count: usize,
        avoid: Option<u32>,
    ) -> Vec<u32> {
        let cell = self.ctx.cell;
        let constrained = !cell.constraints_of(task).is_empty();
        let qualifies = |n: u32| {
            n != self.node.0
                && Some(n) != avoid
                && cell.nodes.online().get(n as usize) == Some(&true)
                && (!constrained || cell.satisfies(NodeIdx(n), task))
        };
        let usable: Vec<&ViewEntry> = view.iter().filter(|e| qualifies(e.node)).collect();
        if usable.is_empty() {
            let pool = &self.policy.online;
            return distinct_accepted(&mut self.rng, pool, self.node.0, count, qualifies);
        }
        let scores: Vec<f64> = usable.iter().map(|e| f64::from(e.free_cpus)).collect();
        softmax_distinct(
            &mut self.rng,
            &scores,
            self.policy.config.temperature,
            count,
        )
        .into_iter()
        .map(|k| usable[k].node)
        .collect()
    }

    /// Probes for `tasks` (one job's, in arrival order): targets by batch or per-task
    /// sampling, uniform or from the view; a task with constraints probes only nodes meeting
    /// them (per task).
    fn probe(&mut self, peer: &mut Peer, tasks: &[MasterTask]) {
        let config = &self.policy.config;
        let (ratio, batch) = (config.probe_ratio, config.batch_sampling);
        let cell = self.ctx.cell;
        let constrained = tasks
            .iter()
            .any(|t| !cell.constraints_of(t.task).is_empty());
        let targets: Vec<(usize, u32)> = if config.draws != ProbeDraws::Own {
            self.radlab_targets(peer, tasks.len())
        } else if peer.view.is_empty() && !constrained {
            let pool = &self.policy.online;
            probe_targets(
                &mut self.rng,
                pool,
                self.node.0,
                (tasks.len(), ratio, batch),
            )
        } else if batch && !constrained {
            let count = (ratio * tasks.len() as f64).ceil() as usize;
            let view = std::mem::take(&mut peer.view);
            let got = self.peers(&view, tasks[0].task, count, None);
            peer.view = view;
            got.into_iter()
                .enumerate()
                .map(|(k, w)| (k % tasks.len(), w))
                .collect()
        } else {
            let view = std::mem::take(&mut peer.view);
            let per_task = ratio.ceil() as usize;
            let got = (0..tasks.len())
                .flat_map(|k| {
                    let workers = self.peers(&view, tasks[k].task, per_task, None);
                    workers.into_iter().map(move |w| (k, w))
                })
                .collect();
            peer.view = view;
            got
        };
        for (k, w) in targets {
            let t = tasks[k];
            let to = agent_of(NodeIdx(w));
            peer.probes.push(ProbeRecord {
                first: to,
                worker: to,
                task: t.task,
                generation: t.generation,
                job: cell.tasks.job_id()[t.task.index()],
            });
            let probe = Msg::Probe {
                task: t.task,
                generation: t.generation,
                need: t.need,
                master: self.me,
                hops: 0,
                first: to,
            };
            self.send(to, probe);
        }
    }

    /// The probe targets of a job of `tasks` tasks drawn as the Sparrow authors' simulator
    /// draws them (`ProbeDraws`): the first ceil(d x tasks) of its shuffled worker list, worker
    /// i the i-th online node when the first job came (target k carries task k mod tasks).
    fn radlab_targets(&mut self, peer: &mut Peer, tasks: usize) -> Vec<(usize, u32)> {
        let config = &self.policy.config;
        let pool = &self.policy.online;
        let (seed, poisson) = (self.ctx.seed, config.draws == ProbeDraws::RadlabPoisson);
        let draws = peer.draws.get_or_insert_with(|| {
            // The gaps' values are the scenario's; here only their draws are consumed.
            let gap = poisson.then_some(1.0);
            Box::new(ingest::pyrandom::RadlabDraws::new(
                seed,
                pool.len() as u32,
                gap,
            ))
        });
        let count = (config.probe_ratio * tasks as f64).ceil() as usize;
        let (order, _) = draws.next_job();
        let workers = order.iter().filter_map(|&i| pool.get(i as usize).copied());
        workers
            .take(count)
            .enumerate()
            .map(|(k, w)| (k % tasks, w))
            .collect()
    }

    /// A job's tasks arrived (step 1): self-assigned where the worker has room (improvement
    /// 1), the rest queued as pending and probed.
    fn arrive(&mut self, peer: &mut Peer, job: &[(TaskIdx, u32)]) {
        let cell = self.ctx.cell;
        let mut to_probe = Vec::with_capacity(job.len());
        for &(task, generation) in job {
            let need = Need::of(cell, task);
            if self.policy.config.self_assignment
                && peer.queue.is_empty()
                && covers(&self.free, &need.amounts())
                && cell.satisfies(self.node, task)
            {
                sub(&mut self.free, &need);
                self.out.act(Action::Place {
                    task,
                    generation,
                    node: self.node,
                    master: self.me,
                });
                continue;
            }
            let t = MasterTask {
                task,
                generation,
                need,
            };
            peer.pending.push(t);
            to_probe.push(t);
        }
        if !to_probe.is_empty() {
            self.probe(peer, &to_probe);
        }
    }

    /// Probes again the pending tasks left with no probe out.
    fn reprobe_orphans(&mut self, peer: &mut Peer) {
        let cell = self.ctx.cell;
        peer.pending.retain(|t| pending(cell, t.task, t.generation));
        let orphans: Vec<MasterTask> = peer
            .pending
            .iter()
            .filter(|t| {
                !peer
                    .probes
                    .iter()
                    .any(|r| r.task == t.task && r.generation == t.generation)
            })
            .copied()
            .collect();
        for t in orphans {
            self.probe(peer, &[t]);
        }
    }

    /// A probe reached this worker: queued here (step 3), or passed on (improvement 2).
    fn probe_reached(&mut self, peer: &mut Peer, p: Placeholder, hops: u8) {
        let config = &self.policy.config;
        let runs_now = peer.queue.is_empty() && covers(&self.free, &p.need.amounts());
        if config.probe_propagation && hops < config.max_hops && !runs_now {
            let view = std::mem::take(&mut peer.view);
            let avoid = (p.master != DATACENTER).then(|| node_of(p.master).0);
            let next = self.peers(&view, p.task, 1, avoid);
            peer.view = view;
            if let Some(&w) = next.first() {
                let probe = Msg::Probe {
                    task: p.task,
                    generation: p.generation,
                    need: p.need,
                    master: p.master,
                    hops: hops + 1,
                    first: p.first,
                };
                self.send(agent_of(NodeIdx(w)), probe);
                return;
            }
        }
        peer.queue.push_back(p);
        self.out.act(Action::Deposited {
            ready: runs_now,
            hops,
        });
        let queued = Msg::ProbeQueued {
            task: p.task,
            generation: p.generation,
            first: p.first,
        };
        self.send(p.master, queued);
    }

    /// Step 4: while the queue head's REQUISITES fit, reserve them and ask its master (with
    /// `queue_order = "first-that-fits"`, any place-holder's, in queue order).
    fn dispatch(&mut self, peer: &mut Peer) {
        let any = self.policy.config.queue_order == QueueOrder::FirstThatFits;
        let mut k = 0;
        while let Some(p) = peer.queue.get(k).copied() {
            if !covers(&self.free, &p.need.amounts()) {
                if !any {
                    break;
                }
                k += 1;
                continue;
            }
            peer.queue.remove(k);
            sub(&mut self.free, &p.need);
            peer.reserved.push(p);
            let confirm = Msg::Confirm {
                task: p.task,
                generation: p.generation,
                need: p.need,
            };
            self.send(p.master, confirm);
        }
    }

    /// Releases the reservation of the probe for (`task`, `generation`) from `master`.
    fn release(&mut self, peer: &mut Peer, master: AgentIdx, task: TaskIdx, generation: u32) {
        let at = peer
            .reserved
            .iter()
            .position(|r| r.master == master && r.task == task && r.generation == generation);
        if let Some(at) = at {
            let r = peer.reserved.swap_remove(at);
            add(&mut self.free, &r.need);
        }
    }

    /// Step 5 at the master: a worker reserved `need` for a probe of `task`; assign it the
    /// oldest unassigned task needing no more (late binding), or cancel.
    fn confirm(
        &mut self,
        peer: &mut Peer,
        worker: AgentIdx,
        task: TaskIdx,
        generation: u32,
        need: Need,
    ) {
        let record = peer
            .probes
            .iter()
            .position(|r| r.worker == worker && r.task == task && r.generation == generation)
            .or_else(|| {
                let same = |r: &ProbeRecord| r.task == task && r.generation == generation;
                peer.probes
                    .iter()
                    .position(|r| same(r) && r.first == worker)
            });
        let probed_job = record.map(|at| peer.probes.remove(at).job);
        let cell = self.ctx.cell;
        let node = node_of(worker);
        peer.pending.retain(|t| pending(cell, t.task, t.generation));
        // Per-job binding: the probed job's next task only.
        let job = |t: TaskIdx| cell.tasks.job_id()[t.index()];
        let per_job = self.policy.config.binding == Binding::Job;
        let chosen = peer.pending.iter().position(|t| {
            need.at_least(&t.need)
                && cell.satisfies(node, t.task)
                && (!per_job || Some(job(t.task)) == probed_job)
        });
        let reply = match chosen {
            Some(at) => {
                let t = peer.pending.remove(at);
                Msg::Assign {
                    probe_task: task,
                    probe_generation: generation,
                    task: t.task,
                    generation: t.generation,
                }
            }
            None => Msg::Cancel { task, generation },
        };
        self.send(worker, reply);
        if self.policy.config.reprobe {
            self.reprobe_orphans(peer);
        }
    }

    /// The failure detector's verdict on `dead`.
    fn dead(&mut self, peer: &mut Peer, dead: NodeIdx) {
        let agent = agent_of(dead);
        peer.probes.retain(|r| r.worker != agent);
        peer.queue.retain(|p| p.master != agent);
        let lost: Vec<Placeholder> = peer
            .reserved
            .iter()
            .filter(|r| r.master == agent)
            .copied()
            .collect();
        for r in lost {
            self.release(peer, r.master, r.task, r.generation);
        }
        self.reprobe_orphans(peer);
    }

    /// This node's descriptor of itself now (its own free room and queue).
    fn descriptor(&self, peer: &Peer) -> ViewEntry {
        let free = self.free[0].clamp(0, i64::from(u32::MAX)) as u32;
        ViewEntry {
            node: self.node.0,
            free_cpus: cpus(free, self.policy.config.cpus_per_machine),
            queue: peer.queue.len() as u32,
            at_us: self.policy.round_us,
        }
    }

    /// Up to `count` entries of `view` drawn uniformly, never `exclude`'s.
    fn pick(&mut self, view: &[ViewEntry], count: usize, exclude: u32) -> Vec<ViewEntry> {
        let rest: Vec<ViewEntry> = view.iter().copied().filter(|e| e.node != exclude).collect();
        self.rng.first_shuffled(rest, count)
    }

    /// The view Cyclon keeps: the next-hop view itself, or the random layer under Gradient.
    fn random_view(peer: &mut Peer, gradient: bool) -> &mut Vec<ViewEntry> {
        if gradient {
            &mut peer.random
        } else {
            &mut peer.view
        }
    }

    /// A period's exchanges (`view.rs`): a Cyclon shuffle with the oldest neighbour and, for
    /// Gradient, a T-Man exchange with the best-ranked one; a node with an empty view starts
    /// from `view_size` random online peers' descriptors as of now (an introducer's list, the
    /// only time a view reads the cell). The next period is planned.
    fn gossip(&mut self, peer: &mut Peer) {
        let config = &self.policy.config;
        let size = config.view_size as usize;
        let shuffle = shuffle_length(size);
        let gradient = config.view == ViewKind::Gradient;
        let first = peer.next_gossip_us == 0;
        let me = self.node.0;
        if Self::random_view(peer, gradient).is_empty() {
            let pool = &self.policy.online;
            let known: Vec<ViewEntry> = distinct_uniform(&mut self.rng, pool, me, size)
                .into_iter()
                .map(|n| self.fresh(n))
                .collect();
            *Self::random_view(peer, gradient) = known;
        }
        let salt = crate::ties::peek_salt(&self.rng);
        let own = self.descriptor(peer);
        let mut random = std::mem::take(Self::random_view(peer, gradient));
        if let Some(q) = oldest(&random, salt) {
            let partner = random.remove(q).node;
            let others = self.pick(&random, shuffle - 1, partner);
            peer.sent = others.iter().map(|e| e.node).collect();
            let mut entries = vec![own];
            entries.extend(others);
            let msg = Msg::Shuffle {
                entries: self.exchange(&entries),
                reply: false,
            };
            self.send(agent_of(NodeIdx(partner)), msg);
        }
        *Self::random_view(peer, gradient) = random;
        if gradient {
            tman_merge(&mut peer.view, &peer.random, (size, me), salt);
            if let Some(b) = best(&peer.view, salt) {
                let partner = peer.view[b].node;
                let msg = Msg::Rank {
                    entries: self.ranked(peer, own, partner),
                    reply: false,
                };
                self.send(agent_of(NodeIdx(partner)), msg);
            }
        }
        let period = config.gossip_period.us();
        let next = if first {
            // Spread the peers' exchanges over the period.
            let phase = ingest::rng::hash_keys(0x6055, &[me as u64]) % period as u64;
            self.policy.round_us + phase as i64 + 1
        } else {
            self.policy.round_us + period
        };
        peer.next_gossip_us = next;
        self.out.wake_at(next);
    }

    /// This node's descriptor and its best-ranked entries but `partner`'s (T-Man's message).
    fn ranked(&mut self, peer: &Peer, own: ViewEntry, partner: u32) -> ExchangeId {
        let shuffle = shuffle_length(self.policy.config.view_size as usize);
        let mut entries = vec![own];
        let best = peer.view.iter().filter(|e| e.node != partner);
        entries.extend(best.take(shuffle - 1).copied());
        self.exchange(&entries)
    }

    /// Keeps the first [`super::view::MAX_EXCHANGED`] of `entries` for a message to carry.
    fn exchange(&mut self, entries: &[ViewEntry]) -> ExchangeId {
        self.exchanges.insert(Exchanged::of(entries))
    }

    /// A Cyclon shuffle from `from` (answered when it is a request) or its answer.
    fn shuffled(&mut self, peer: &mut Peer, from: AgentIdx, entries: &Exchanged, reply: bool) {
        let config = &self.policy.config;
        let size = config.view_size as usize;
        let gradient = config.view == ViewKind::Gradient;
        let me = self.node.0;
        let sent: Vec<u32> = if reply {
            std::mem::take(&mut peer.sent)
        } else {
            let view = Self::random_view(peer, gradient);
            let answer = self.pick(view, shuffle_length(size), node_of(from).0);
            let msg = Msg::Shuffle {
                entries: self.exchange(&answer),
                reply: true,
            };
            self.send(from, msg);
            answer.iter().map(|e| e.node).collect()
        };
        cyclon_merge(
            Self::random_view(peer, gradient),
            entries.entries(),
            &sent,
            (size, me),
        );
    }

    /// A T-Man exchange from `from` (answered when it is a request) or its answer.
    fn ranked_by(&mut self, peer: &mut Peer, from: AgentIdx, entries: &Exchanged, reply: bool) {
        let size = self.policy.config.view_size as usize;
        if !reply {
            let own = self.descriptor(peer);
            let msg = Msg::Rank {
                entries: self.ranked(peer, own, node_of(from).0),
                reply: true,
            };
            self.send(from, msg);
        }
        let salt = crate::ties::peek_salt(&self.rng);
        tman_merge(&mut peer.view, entries.entries(), (size, self.node.0), salt);
    }
}

/// `free` CPU units as CPUs of a machine of `cpus_per_machine`.
fn cpus(free: u32, cpus_per_machine: f64) -> f32 {
    (crate::units::to_normalised(free) * cpus_per_machine) as f32
}

impl Sparrow {
    /// The DATACENTER's instant: each arrival handed at once to its job's master (step 1); as
    /// the one scheduler ([`Scheduler::One`]) it masters them itself.
    pub(super) fn datacenter_step(
        &self,
        ctx: &StepCtx<'_>,
        peer: &mut Peer,
        inbox: &[Envelope<Msg>],
        out: &mut Outbox<'_, Msg, Action>,
        exchanges: &mut Exchanges,
    ) {
        if self.config.scheduler == Scheduler::One {
            let turn = Turn {
                policy: self,
                ctx,
                me: DATACENTER,
                node: NodeIdx::NONE,
                rng: ctx.rng(DATACENTER),
                out,
                exchanges,
                free: [0; 4],
            };
            turn.serve(peer, inbox);
            return;
        }
        for e in inbox {
            let Msg::Arrive { task, generation } = e.msg else {
                continue;
            };
            if !pending(ctx.cell, task, generation) {
                continue;
            }
            let job = ctx.cell.tasks.job_id()[task.index()];
            let Some(master) = self.ring.owner(job) else {
                continue; // no node online: it arrives again when one is (module doc)
            };
            let to = agent_of(NodeIdx(master));
            out.send_at(to, Msg::Submit { task, generation }, self.round_us);
        }
    }

    /// A peer's instant.
    pub(super) fn peer_step(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        peer: &mut Peer,
        inbox: &[Envelope<Msg>],
        out: &mut Outbox<'_, Msg, Action>,
        exchanges: &mut Exchanges,
    ) {
        let node = node_of(me);
        let nodes = &ctx.cell.nodes;
        if node.index() >= nodes.len() || !nodes.online()[node.index()] {
            // A dead node answers nothing; the tasks handed to it are lost there.
            for e in inbox {
                let (task, generation, master) = match e.msg {
                    Msg::Submit { task, generation } => (task, generation, DATACENTER),
                    Msg::Assign {
                        task, generation, ..
                    } => (task, generation, e.from),
                    _ => continue,
                };
                if pending(ctx.cell, task, generation) {
                    out.act(Action::Lost {
                        task,
                        generation,
                        node,
                        master,
                    });
                }
            }
            return;
        }
        let mut free = free_amounts(nodes, node.index());
        for r in &peer.reserved {
            sub(&mut free, &r.need);
        }
        for (f, h) in free.iter_mut().zip(self.held(node)) {
            *f -= h;
        }
        let turn = Turn {
            policy: self,
            ctx,
            me,
            node,
            rng: ctx.rng(me),
            out,
            exchanges,
            free,
        };
        turn.serve(peer, inbox);
    }
}

impl Turn<'_, '_, '_> {
    /// Handles `inbox` as master and worker, then dispatches the queue's head(s) (step 4) and
    /// publishes a changed queue length.
    fn serve(mut self, peer: &mut Peer, inbox: &[Envelope<Msg>]) {
        let (ctx, node) = (self.ctx, self.node);
        let mut arrivals: Vec<(TaskIdx, u32)> = Vec::new();
        for e in inbox {
            match e.msg {
                // A master's tasks: from the DATACENTER, or at the radlab scheduler itself.
                Msg::Submit { task, generation } | Msg::Arrive { task, generation }
                    if pending(ctx.cell, task, generation) =>
                {
                    arrivals.push((task, generation));
                }
                Msg::Probe {
                    task,
                    generation,
                    need,
                    master,
                    hops,
                    first,
                } => {
                    let p = Placeholder {
                        master,
                        task,
                        generation,
                        need,
                        first,
                    };
                    self.probe_reached(peer, p, hops);
                }
                Msg::ProbeQueued {
                    task,
                    generation,
                    first,
                } => {
                    let record = peer
                        .probes
                        .iter_mut()
                        .find(|r| r.first == first && r.task == task && r.generation == generation);
                    if let Some(r) = record {
                        r.worker = e.from;
                    }
                }
                Msg::Confirm {
                    task,
                    generation,
                    need,
                } => self.confirm(peer, e.from, task, generation, need),
                Msg::Assign {
                    probe_task,
                    probe_generation,
                    task,
                    generation,
                } => {
                    self.release(peer, e.from, probe_task, probe_generation);
                    let need = Need::of(ctx.cell, task);
                    if pending(ctx.cell, task, generation) {
                        // Step 6: the assigned task runs in the reservation's place.
                        sub(&mut self.free, &need);
                        self.out.act(Action::Place {
                            task,
                            generation,
                            node,
                            master: e.from,
                        });
                    }
                }
                Msg::Cancel { task, generation } => {
                    self.release(peer, e.from, task, generation); // step 7
                }
                Msg::Dead { node: dead } => self.dead(peer, dead),
                // A start, or a restart after the node was offline at its planned exchange.
                Msg::Gossip if peer.next_gossip_us <= self.policy.round_us => self.gossip(peer),
                Msg::Shuffle { entries, reply } => {
                    let entries = *self.exchanges.get(entries);
                    self.shuffled(peer, e.from, &entries, reply);
                }
                Msg::Rank { entries, reply } => {
                    let entries = *self.exchanges.get(entries);
                    self.ranked_by(peer, e.from, &entries, reply);
                }
                Msg::Finished | Msg::Submit { .. } | Msg::Arrive { .. } | Msg::Gossip => {}
            }
        }
        if peer.next_gossip_us > 0 && self.policy.round_us >= peer.next_gossip_us {
            self.gossip(peer); // woken for the next exchange
        }
        // Arrivals of one instant, grouped by job in arrival order (batch sampling).
        let mut from = 0;
        while from < arrivals.len() {
            let job = ctx.cell.tasks.job_id()[arrivals[from].0.index()];
            let mut to = from + 1;
            while to < arrivals.len() && ctx.cell.tasks.job_id()[arrivals[to].0.index()] == job {
                to += 1;
            }
            self.arrive(peer, &arrivals[from..to]);
            from = to;
        }
        self.dispatch(peer);
        let length = peer.queue.len() as u32;
        if length != peer.published {
            peer.published = length;
            self.out.act(Action::QueueLength { node, length });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_and_nodes_map_one_to_one() {
        for n in [0, 1, 12_582] {
            assert_eq!(node_of(agent_of(NodeIdx(n))), NodeIdx(n));
        }
        assert_ne!(agent_of(NodeIdx(0)), DATACENTER);
    }
}
