//! What MASB's agents do in a round. Agents `0..B` are brokers (BA), agent `B + n` is the node
//! agent (NA) of node `n`. A step reads the agent's inbox and the cell as of the round's start,
//! updates the agent's own state, sends messages (delivered next round) and asks for actions.
//!
//! Simplifications, stated: an NA runs one SAN process at a time, taking the tasks SCS selected
//! one after another; it does not start SCS while one of its tasks is still migrating out. A BA
//! applies all reports in its inbox before answering requests.

use ingest::rng::Rng;

use super::MasbConfig;
use super::fit::FitIndex;
use super::memo::MatchMemo;
use super::policy::{Assigned, Masb};
use super::protocol::{Action, CandidateList, Msg};
use super::score::NodeState;
use super::scs::{Candidate, tabu_search};
use super::select::{
    CacheEntry, CacheView, Demand, Recommendation, ScoreScratch, accepts, final_check,
    initial_asks, migration_candidates, target_order,
};
use crate::cell::TaskState;
use crate::ids::{AgentIdx, NodeIdx, TaskIdx};
use crate::policy::{Envelope, Outbox, StepCtx};
use crate::units::UNITS;

/// Nodes a broker asks, in weighted order, for one new task.
const INITIAL_TOP: usize = 10;

fn norm(units: u32) -> f64 {
    units as f64 / UNITS as f64
}

/// A broker's state. Its cache is the brokers' shared cache (`Masb::cache`, the reports every
/// broker has heard of by this round) with the reports it received itself this round laid
/// over it ([`BrokerCache`]): the others hear of those one round later.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Broker {
    /// This round's own reports and what is derived from the cache (no state).
    #[serde(skip)]
    pub cache: BrokerCache,
    /// This tick's initial allocations, by slot. Answers name their slot, so finding one is
    /// O(1); cleared at each tick's first round.
    pub allocations: Vec<Allocation>,
    /// The nodes each allocation asks, in order (`Allocation::next..end`).
    pub asks: Vec<Recommendation>,
    /// Scoring buffers (no state).
    #[serde(skip)]
    pub scratch: ScoreScratch,
}

/// How a broker reads the cache in a round: the shared cache with its own reports of the round
/// laid over it, and the indexes over that cache (all pure caches, rebuilt on demand).
#[derive(Debug, Clone, Default)]
pub struct BrokerCache {
    /// Reports received this round (cleared at every step).
    pub fresh: Vec<CacheEntry>,
    /// The shared cache with `fresh` laid over it, when `fresh` is not empty and a selection
    /// reads the cache (`view_round` says for which round it is current).
    pub view: Vec<CacheEntry>,
    /// The global round `view` was built in.
    pub view_round: Option<u64>,
    /// Where unconstrained new tasks fit, rebuilt at each tick's first round.
    pub fit: FitIndex,
    /// Matching cache positions per constraint set, for the running tasks this broker finds
    /// migration candidates for (pending tasks read the policy's shared memo).
    pub memo: MatchMemo,
}

impl BrokerCache {
    /// The cache at global round `g`: `shared` alone, or with this round's own reports laid
    /// over it (built once per round, only when there are some).
    fn entries<'s>(&'s mut self, shared: &'s [CacheEntry], g: u64) -> &'s [CacheEntry] {
        self.build_view(shared, g);
        current(&self.fresh, &self.view, shared)
    }

    /// Lays this round's own reports over `shared` into `view`, once per global round `g` (only
    /// when there are some).
    fn build_view(&mut self, shared: &[CacheEntry], g: u64) {
        if !self.fresh.is_empty() && self.view_round != Some(g) {
            self.view.clear();
            self.view.extend_from_slice(shared);
            for e in &self.fresh {
                CacheEntry::store(&mut self.view, *e);
            }
            self.view_round = Some(g);
        }
    }

    /// Rebuilds the fit index over the cache at global round `g`, at `now_s`.
    fn rebuild_fit(
        &mut self,
        ctx: &StepCtx<'_>,
        (shared, g): (&[CacheEntry], u64),
        now_s: f64,
        config: &MasbConfig,
    ) {
        let online = |n: NodeIdx| ctx.cell.nodes.is_online(n);
        self.build_view(shared, g);
        let entries = current(&self.fresh, &self.view, shared);
        self.fit.rebuild(entries, now_s, config, &online);
    }

    /// The cache as migration candidates for task `t` are selected from, with the nodes meeting
    /// its constraints from the shared memo when it holds them this tick, else this broker's.
    fn view_for<'s>(
        &'s mut self,
        ctx: &StepCtx<'s>,
        (shared, g): (&'s [CacheEntry], u64),
        shared_memo: &'s MatchMemo,
        t: TaskIdx,
    ) -> CacheView<'s> {
        let meets = |n: NodeIdx| ctx.cell.satisfies(n, t);
        let changes = |since| ctx.cell.attribute_changes_since(since);
        let attributes = (ctx.cell.attributes_epoch(), &changes as &dyn Fn(u64) -> _);
        self.build_view(shared, g);
        let key = ctx.cell.constraints_of(t);
        let nodes = ctx.cell.nodes.len();
        let matching = match shared_memo.used(key) {
            Some(positions) => Some(positions),
            None => self.memo.positions(attributes, key, nodes, &meets),
        };
        CacheView {
            entries: current(&self.fresh, &self.view, shared),
            matching: matching.map(|p| (p, &ctx.cell.nodes.online[..])),
            fit: None,
            ok: None,
        }
    }

    /// The cache (as built for this round) as a pending task's initial allocation reads it,
    /// with the nodes meeting its constraints (`None`: it has none) and the fit index.
    fn initial_view<'s>(
        &'s self,
        ctx: &StepCtx<'s>,
        shared: &'s [CacheEntry],
        matching: Option<&'s [u32]>,
    ) -> CacheView<'s> {
        CacheView {
            entries: current(&self.fresh, &self.view, shared),
            matching: matching.map(|p| (p, &ctx.cell.nodes.online[..])),
            fit: matching.is_none().then_some(&self.fit),
            ok: Some(&self.fit),
        }
    }
}

/// The cache a broker reads: `shared`, or `view` when it has reports of its own this round.
fn current<'s>(
    fresh: &[CacheEntry],
    view: &'s [CacheEntry],
    shared: &'s [CacheEntry],
) -> &'s [CacheEntry] {
    if fresh.is_empty() { shared } else { view }
}

/// One initial allocation a broker runs in a tick.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Allocation {
    /// The task and its generation.
    pub task: (TaskIdx, u32),
    /// Its demand.
    pub demand: Demand,
    /// The next node to ask, in the broker's `asks`.
    pub next: u32,
    /// Past the last node to ask.
    pub end: u32,
}

/// Where a node agent is in its SAN process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Phase {
    /// No SAN process.
    #[default]
    Idle,
    /// Step 2: waiting for the broker's candidates.
    WaitCandidates,
    /// Step 3: waiting for answers to the migration requests.
    WaitAnswers,
    /// Step 5: waiting for the chosen target's confirmation.
    WaitConfirm,
}

/// A node agent's state.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct NodeAgent {
    /// SAN phase.
    pub phase: Phase,
    /// Tasks selected by SCS still to move (after the current one).
    pub queue: Vec<(TaskIdx, u32)>,
    /// The task being moved and its generation.
    pub task: (TaskIdx, u32),
    /// Its demand.
    pub demand: Demand,
    /// Recommendations from the broker.
    pub candidates: Vec<Recommendation>,
    /// Acceptances with the target's fresh load.
    pub answers: Vec<(Recommendation, NodeState)>,
    /// Answers (acceptances and rejections) received.
    pub answered: usize,
    /// Targets in the order to try, and the next one.
    pub order: Vec<Recommendation>,
    /// Index of the next target in `order`.
    pub next: usize,
    /// Global round at which the 30 s wait ends.
    pub deadline: u64,
    /// Global round at which the recommendations expire (3 minutes).
    pub expires: u64,
    /// The tick in which every task of the tick's index still on the node was seen to meet its
    /// constraints: true for the rest of the tick (constraints and attributes change only when
    /// the trace is applied; tasks placed since were matched on arrival). A pure cache.
    #[serde(skip)]
    pub constraints_ok_tick: Option<u32>,
}

/// One MASB agent: a broker or a node agent (the other part stays empty).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct MasbAgent {
    /// Broker state (brokers only).
    pub broker: Broker,
    /// Node agent state (node agents only).
    pub node: NodeAgent,
    /// Sampled decisions of this tick, as JSON lines (seed 000 sections 5.1-5.4, SPEC 6).
    pub samples: Vec<String>,
}

/// Whether a decision identified by `keys` (at most three) is sampled, one in `every`,
/// deterministically (no allocation: asked for every pending task every tick).
fn sampled(ctx: &StepCtx<'_>, every: u64, keys: &[u64]) -> bool {
    let mut all = [ctx.tick.0 as u64, ctx.round as u64, 0, 0, 0];
    let n = 2 + keys.len().min(3);
    all[2..n].copy_from_slice(&keys[..n - 2]);
    ingest::rng::hash_keys(ctx.seed ^ 0x5a3b1e, &all[..n]).is_multiple_of(every)
}

fn task_json(ctx: &StepCtx<'_>, t: TaskIdx, d: &Demand) -> serde_json::Value {
    serde_json::json!({
        "job_id": ctx.cell.tasks.job_id[t.index()],
        "task_index": ctx.cell.tasks.task_index[t.index()],
        "cpu_req": d.cpu_req, "mem_req": d.mem_req, "cpu_use": d.cpu_use, "mem_use": d.mem_use,
    })
}

fn recs_json(ctx: &StepCtx<'_>, recs: &[Recommendation]) -> serde_json::Value {
    recs.iter()
        .map(|r| serde_json::json!({"machine": ctx.cell.nodes.machine_id[r.node.index()], "score": r.score, "forced": r.forced}))
        .collect()
}

impl Masb {
    fn global_round(&self, ctx: &StepCtx<'_>) -> u64 {
        ctx.tick.0 as u64 * self.rounds_per_tick as u64 + ctx.round as u64
    }

    fn rounds_for(&self, seconds: u32) -> u64 {
        (seconds as f64 / self.round_s).ceil() as u64
    }

    fn now_s(&self, ctx: &StepCtx<'_>) -> f64 {
        ctx.tick.0 as f64 * self.round_s * self.rounds_per_tick as f64
            + ctx.round as f64 * self.round_s
    }

    fn broker_of(&self, n: NodeIdx) -> AgentIdx {
        AgentIdx(n.0 % self.brokers)
    }

    fn agent_of(&self, n: NodeIdx) -> AgentIdx {
        AgentIdx(self.brokers + n.0)
    }

    fn node_of(&self, a: AgentIdx) -> NodeIdx {
        NodeIdx(a.0 - self.brokers)
    }

    /// A task's demand from the cell (normalised).
    pub(super) fn demand(ctx: &StepCtx<'_>, t: TaskIdx) -> Demand {
        let tasks = &ctx.cell.tasks;
        let i = t.index();
        Demand {
            cpu_req: norm(tasks.cpu_req[i]),
            mem_req: norm(tasks.mem_req[i]),
            cpu_use: norm(tasks.cpu_use[i]),
            mem_use: norm(tasks.mem_use[i]),
        }
    }

    fn live(ctx: &StepCtx<'_>, t: TaskIdx, generation: u32, state: TaskState) -> bool {
        t.index() < ctx.cell.tasks.len()
            && ctx.cell.tasks.generation[t.index()] == generation
            && ctx.cell.tasks.state[t.index()] == state
    }

    /// Node `n` is online and meets task `t`'s constraints.
    fn can_host(ctx: &StepCtx<'_>, n: NodeIdx, t: TaskIdx) -> bool {
        ctx.cell.nodes.is_online(n) && ctx.cell.satisfies(n, t)
    }

    /// A broker's round.
    pub(super) fn broker_step(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        b: &mut Broker,
        samples: &mut Vec<String>,
        inbox: &[Envelope<Msg>],
        out: &mut Outbox<'_, Msg, Action>,
    ) {
        let mut rng = ctx.rng(me);
        let now_s = self.now_s(ctx);
        let g = self.global_round(ctx);
        let shared = (&self.cache[..], g);
        // A report updates this broker's cache now and every other broker's a round later: the
        // CacheShare messages of the protocol, counted, delivered through the shared cache.
        // A node reports once per tick, so an inbox holds at most one report per node.
        b.cache.fresh.clear();
        for e in inbox {
            if let Msg::NodeReport(entry) = e.msg {
                let newer = |c: &CacheEntry| entry.reported_s >= c.reported_s;
                if self.cache.get(entry.node.index()).is_none_or(newer) {
                    b.cache.fresh.push(entry);
                }
                out.act(Action::Publish(entry));
                let others = u64::from(self.brokers - 1);
                out.count_delivered(Msg::CacheShare(entry).kind(), others);
            }
        }
        // Unset entries (reported_s = -inf) and stale ones are skipped by the scans themselves.
        for e in inbox {
            match e.msg {
                Msg::AllocationAnswer {
                    slot,
                    task,
                    generation,
                    accepted,
                } => {
                    let Some(a) = b
                        .allocations
                        .get_mut(slot as usize)
                        .filter(|a| a.task == (task, generation))
                    else {
                        continue;
                    };
                    if accepted || a.next >= a.end {
                        // Placed, or unplaceable now: pending, retried next tick.
                        a.next = a.end;
                        continue;
                    }
                    let node = b.asks[a.next as usize].node;
                    a.next += 1;
                    out.send(
                        self.agent_of(node),
                        Msg::AllocationRequest {
                            slot,
                            task,
                            generation,
                            demand: a.demand,
                        },
                    );
                }
                Msg::GetCandidateNodesRequest {
                    task,
                    generation,
                    demand,
                } => {
                    let source = self.node_of(e.from);
                    let matches = |n: NodeIdx| Self::can_host(ctx, n, task);
                    let recs = migration_candidates(
                        b.cache.view_for(ctx, shared, &self.memo, task),
                        source,
                        &demand,
                        now_s,
                        &self.config,
                        &mut rng,
                        &matches,
                    );
                    if sampled(ctx, 5_000, &[me.0 as u64, task.0 as u64, 1]) {
                        let line = serde_json::json!({
                            "kind": "candidate_scoring", "tick": ctx.tick.0, "round": ctx.round,
                            "broker": me.0, "source_machine": ctx.cell.nodes.machine_id[source.index()],
                            "task": task_json(ctx, task, &demand), "cache_entries": b.cache.entries(shared.0, g).iter().filter(|c| c.reported_s.is_finite()).count(),
                            "candidates": recs_json(ctx, &recs),
                        });
                        samples.push(line.to_string());
                    }
                    out.send(
                        e.from,
                        Msg::GetCandidateNodesResponse {
                            task,
                            generation,
                            candidates: CandidateList::new(&recs),
                        },
                    );
                }
                _ => {}
            }
        }
        if ctx.round == 0 {
            b.allocations.clear();
            b.asks.clear();
            b.cache.rebuild_fit(ctx, shared, now_s, &self.config);
            b.cache.memo.trim();
            let assigned = self.assigned.get(me.index()).map_or(&[][..], |v| &v[..]);
            for &Assigned { task, set } in assigned {
                let (task, generation) = task;
                if !Self::live(ctx, task, generation, TaskState::Pending) {
                    continue;
                }
                let demand = Self::demand(ctx, task);
                let matches = |n: NodeIdx| Self::can_host(ctx, n, task);
                let (scratch, asks) = (&mut b.scratch, &mut b.asks);
                let start = asks.len();
                let matching = set.map(|i| self.memo.set(i));
                let view = b.cache.initial_view(ctx, shared.0, matching);
                let at = (now_s, &self.config);
                let top = INITIAL_TOP;
                initial_asks(view, &demand, at, &mut rng, &matches, top, scratch, asks);
                let order = &asks[start..];
                if sampled(ctx, 5_000, &[me.0 as u64, task.0 as u64, 2]) {
                    let line = serde_json::json!({
                        "kind": "initial_scoring", "tick": ctx.tick.0, "round": ctx.round, "broker": me.0,
                        "task": task_json(ctx, task, &demand), "scored": recs_json(ctx, scratch.ranked()),
                        "ask_order": recs_json(ctx, order),
                    });
                    samples.push(line.to_string());
                }
                if let Some(first) = order.first() {
                    let slot = b.allocations.len() as u32;
                    out.send(
                        self.agent_of(first.node),
                        Msg::AllocationRequest {
                            slot,
                            task,
                            generation,
                            demand,
                        },
                    );
                    b.allocations.push(Allocation {
                        task: (task, generation),
                        demand,
                        next: start as u32 + 1,
                        end: asks.len() as u32,
                    });
                }
            }
        }
    }

    /// A node agent's round.
    pub(super) fn node_step(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        na: &mut NodeAgent,
        samples: &mut Vec<String>,
        inbox: &[Envelope<Msg>],
        out: &mut Outbox<'_, Msg, Action>,
    ) {
        let n = self.node_of(me);
        let nodes = &ctx.cell.nodes;
        let i = n.index();
        if i >= nodes.len() || !nodes.online[i] {
            return; // an unreachable node answers nothing
        }
        if ctx.round != 0 && inbox.is_empty() && na.phase == Phase::Idle {
            // Most agents in most rounds: nothing to answer, only SCS's cheap tests to run.
            self.select_and_start(ctx, n, na, samples, out);
            return;
        }
        let g = self.global_round(ctx);
        let (cpu_cap, mem_cap) = (norm(nodes.cpu_cap[i]), norm(nodes.mem_cap[i]));
        // Resources promised this round (accepted allocations and migrations), on top of the cell.
        let (mut cpu, mut mem) = (norm(nodes.cpu_used[i]), norm(nodes.mem_used[i]));
        let (mut prod_cpu, mut prod_mem) =
            (norm(nodes.prod_cpu_req[i]), norm(nodes.prod_mem_req[i]));
        if ctx.round == 0 {
            let entry = CacheEntry {
                node: n,
                cpu_cap,
                mem_cap,
                cpu_req: norm(nodes.cpu_req[i]),
                mem_req: norm(nodes.mem_req[i]),
                cpu_used: cpu,
                mem_used: mem,
                reported_s: self.now_s(ctx),
            };
            out.send(self.broker_of(n), Msg::NodeReport(entry));
        }
        let production = |t: TaskIdx| ctx.cell.tasks.production[t.index()];
        for e in inbox {
            let load = NodeState {
                cpu_cap,
                mem_cap,
                cpu,
                mem,
            };
            match e.msg {
                Msg::AllocationRequest {
                    slot,
                    task,
                    generation,
                    demand,
                } => {
                    let prod = production(task);
                    let ok = Self::live(ctx, task, generation, TaskState::Pending)
                        && ctx.cell.satisfies(n, task)
                        && accepts(&load, &demand)
                        && (!prod
                            || (prod_cpu + demand.cpu_req <= cpu_cap
                                && prod_mem + demand.mem_req <= mem_cap));
                    if ok {
                        (cpu, mem) = (cpu + demand.cpu_use, mem + demand.mem_use);
                        if prod {
                            (prod_cpu, prod_mem) =
                                (prod_cpu + demand.cpu_req, prod_mem + demand.mem_req);
                        }
                        out.act(Action::Place {
                            task,
                            generation,
                            node: n,
                        });
                    }
                    out.send(
                        e.from,
                        Msg::AllocationAnswer {
                            slot,
                            task,
                            generation,
                            accepted: ok,
                        },
                    );
                }
                Msg::TaskMigrationRequest {
                    task,
                    generation,
                    demand,
                    forced,
                } => {
                    let ok = Self::live(ctx, task, generation, TaskState::Running)
                        && ctx.cell.satisfies(n, task)
                        && final_check(&load, &demand, forced);
                    let reply = if ok {
                        Msg::TaskMigrationAcceptanceResponse {
                            task,
                            generation,
                            load,
                        }
                    } else {
                        Msg::TaskMigrationRejectionResponse { task, generation }
                    };
                    out.send(e.from, reply);
                }
                Msg::TaskMigrationProcessRequest {
                    task,
                    generation,
                    demand,
                    forced,
                } => {
                    let prod = production(task);
                    let ok = Self::live(ctx, task, generation, TaskState::Running)
                        && !ctx.cell.tasks.migrating_to[task.index()].is_some()
                        && ctx.cell.satisfies(n, task)
                        && final_check(&load, &demand, forced)
                        && (forced
                            || !prod
                            || (prod_cpu + demand.cpu_req <= cpu_cap
                                && prod_mem + demand.mem_req <= mem_cap));
                    if ok {
                        (cpu, mem) = (cpu + demand.cpu_use, mem + demand.mem_use);
                        if prod {
                            (prod_cpu, prod_mem) =
                                (prod_cpu + demand.cpu_req, prod_mem + demand.mem_req);
                        }
                        let source = ctx.cell.tasks.node[task.index()];
                        out.act(Action::Migrate {
                            task,
                            generation,
                            source,
                            target: n,
                            forced,
                        });
                        out.send(
                            e.from,
                            Msg::TaskMigrationProcessConfirmationResponse { task, generation },
                        );
                    } else {
                        out.act(Action::Collision { task, target: n });
                        out.send(
                            e.from,
                            Msg::TaskMigrationProcessErrorResponse { task, generation },
                        );
                    }
                }
                Msg::GetCandidateNodesResponse {
                    task,
                    generation,
                    candidates,
                } if na.phase == Phase::WaitCandidates && na.task == (task, generation) => {
                    na.candidates = candidates.to_vec();
                    na.answers.clear();
                    na.answered = 0;
                    for r in &na.candidates {
                        out.send(
                            self.agent_of(r.node),
                            Msg::TaskMigrationRequest {
                                task,
                                generation,
                                demand: na.demand,
                                forced: r.forced,
                            },
                        );
                    }
                    na.phase = Phase::WaitAnswers;
                    na.deadline = g + self.rounds_for(self.config.answer_wait_s);
                }
                Msg::TaskMigrationAcceptanceResponse {
                    task,
                    generation,
                    load,
                } if na.phase == Phase::WaitAnswers && na.task == (task, generation) => {
                    let from = self.node_of(e.from);
                    if let Some(r) = na.candidates.iter().find(|r| r.node == from) {
                        na.answers.push((*r, load));
                    }
                    na.answered += 1;
                }
                Msg::TaskMigrationRejectionResponse { task, generation }
                    if na.phase == Phase::WaitAnswers && na.task == (task, generation) =>
                {
                    na.answered += 1;
                }
                Msg::TaskMigrationProcessConfirmationResponse { task, generation }
                    if na.phase == Phase::WaitConfirm && na.task == (task, generation) =>
                {
                    self.next_selected(ctx, n, na, out, g);
                }
                Msg::TaskMigrationProcessErrorResponse { task, generation }
                    if na.phase == Phase::WaitConfirm && na.task == (task, generation) =>
                {
                    self.try_next_target(na, out);
                }
                _ => {}
            }
        }
        if na.phase == Phase::WaitAnswers
            && (na.answered >= na.candidates.len() || g >= na.deadline)
        {
            let mut rng = ctx.rng(me);
            na.order = target_order(&na.answers, &na.demand, &self.config, &mut rng);
            if sampled(ctx, 5_000, &[me.0 as u64, na.task.0.0 as u64, 3]) {
                let acceptors: Vec<serde_json::Value> = na
                    .answers
                    .iter()
                    .map(|(r, l)| serde_json::json!({"machine": ctx.cell.nodes.machine_id[r.node.index()], "forced": r.forced, "cpu_used": l.cpu, "mem_used": l.mem, "cpu_cap": l.cpu_cap, "mem_cap": l.mem_cap}))
                    .collect();
                let line = serde_json::json!({
                    "kind": "target_selection", "tick": ctx.tick.0, "round": ctx.round,
                    "source_machine": ctx.cell.nodes.machine_id[n.index()],
                    "task": task_json(ctx, na.task.0, &na.demand), "candidates": na.candidates.len(),
                    "acceptors": acceptors, "order": recs_json(ctx, &na.order),
                });
                samples.push(line.to_string());
            }
            na.next = 0;
            na.phase = Phase::WaitConfirm;
            self.try_next_target(na, out);
        }
        if na.phase != Phase::Idle && g >= na.expires {
            na.phase = Phase::Idle; // recommendations expired: back to SCS
            na.queue.clear();
        }
        if na.phase == Phase::Idle {
            self.select_and_start(ctx, n, na, samples, out);
        }
    }

    /// Step 5 (again): the next target in order, or give up on this task.
    fn try_next_target(&self, na: &mut NodeAgent, out: &mut Outbox<'_, Msg, Action>) {
        let (task, generation) = na.task;
        match na.order.get(na.next) {
            Some(r) => {
                na.next += 1;
                out.send(
                    self.agent_of(r.node),
                    Msg::TaskMigrationProcessRequest {
                        task,
                        generation,
                        demand: na.demand,
                        forced: r.forced,
                    },
                );
            }
            None => {
                out.act(Action::MigrationFailed { task: na.task.0 });
                na.phase = Phase::Idle;
                na.queue.clear();
            }
        }
    }

    /// After a confirmation: the next task SCS selected, or idle.
    fn next_selected(
        &self,
        ctx: &StepCtx<'_>,
        n: NodeIdx,
        na: &mut NodeAgent,
        out: &mut Outbox<'_, Msg, Action>,
        g: u64,
    ) {
        na.phase = Phase::Idle;
        while let Some((task, generation)) = na.queue.pop() {
            if Self::live(ctx, task, generation, TaskState::Running)
                && ctx.cell.tasks.node[task.index()] == n
            {
                self.request_candidates(ctx, n, na, out, g, (task, generation));
                return;
            }
        }
    }

    fn request_candidates(
        &self,
        ctx: &StepCtx<'_>,
        n: NodeIdx,
        na: &mut NodeAgent,
        out: &mut Outbox<'_, Msg, Action>,
        g: u64,
        task: (TaskIdx, u32),
    ) {
        na.task = task;
        na.demand = Self::demand(ctx, task.0);
        na.phase = Phase::WaitCandidates;
        na.expires = g + self.rounds_for(self.config.recommendation_ttl_s);
        out.send(
            self.broker_of(n),
            Msg::GetCandidateNodesRequest {
                task: task.0,
                generation: task.1,
                demand: na.demand,
            },
        );
    }

    /// Step 1: if the node is overloaded or holds a task whose constraints it no longer meets (and
    /// nothing of it is migrating out), select tasks by SCS and ask the broker about the first.
    fn select_and_start(
        &self,
        ctx: &StepCtx<'_>,
        n: NodeIdx,
        na: &mut NodeAgent,
        samples: &mut Vec<String>,
        out: &mut Outbox<'_, Msg, Action>,
    ) {
        let g = self.global_round(ctx);
        let nodes = &ctx.cell.nodes;
        let i = n.index();
        // Cheap tests first: most node agents are idle in most rounds and allocate nothing.
        let running = |t: &&TaskIdx| {
            ctx.cell.tasks.node[t.index()] == n
                && ctx.cell.tasks.state[t.index()] == TaskState::Running
        };
        let on_node = || self.tasks_on(n).iter().filter(running);
        if !nodes.load(i).overloaded() {
            if na.constraints_ok_tick == Some(ctx.tick.0) {
                return;
            }
            if on_node().all(|&t| ctx.cell.satisfies(n, t)) {
                na.constraints_ok_tick = Some(ctx.tick.0);
                return;
            }
        }
        if on_node().any(|t| ctx.cell.tasks.migrating_to[t.index()].is_some()) {
            return;
        }
        let tasks: Vec<TaskIdx> = on_node().copied().collect();
        if tasks.is_empty() {
            return;
        }
        let load = NodeState {
            cpu_cap: norm(nodes.cpu_cap[i]),
            mem_cap: norm(nodes.mem_cap[i]),
            cpu: norm(nodes.cpu_used[i]),
            mem: norm(nodes.mem_used[i]),
        };
        let candidates: Vec<Candidate> = tasks
            .iter()
            .map(|&t| {
                let d = Self::demand(ctx, t);
                Candidate {
                    cpu_use: d.cpu_use,
                    mem_use: d.mem_use,
                    cpu_req: d.cpu_req,
                    mem_req: d.mem_req,
                    production: ctx.cell.tasks.production[t.index()],
                    cost_mb: super::cost::migration_cost(d.cpu_use, d.mem_use, &self.config)
                        .cost_mb,
                    compulsory: !ctx.cell.satisfies(n, t),
                }
            })
            .collect();
        // Overloaded only by migrations coming in (they count on both nodes): nothing of its own
        // needs to move; wait for the transfers to end.
        if super::scs::evaluate(
            load.cpu_cap,
            load.mem_cap,
            &candidates,
            &vec![false; candidates.len()],
            &self.config,
        )
        .stable()
        {
            return;
        }
        let mut rng: Rng = ctx.rng(self.agent_of(n));
        let _ = rng.next_u64(); // a stream distinct from the one used for target ordering
        let selection = tabu_search(
            load.cpu_cap,
            load.mem_cap,
            &candidates,
            &self.config,
            &mut rng,
        );
        if sampled(ctx, 50, &[n.0 as u64, 4]) {
            let listed: Vec<serde_json::Value> = tasks
                .iter()
                .zip(&candidates)
                .zip(&selection.chosen)
                .map(|((t, c), chosen)| {
                    serde_json::json!({
                        "job_id": ctx.cell.tasks.job_id[t.index()], "task_index": ctx.cell.tasks.task_index[t.index()],
                        "cpu_use": c.cpu_use, "mem_use": c.mem_use, "cpu_req": c.cpu_req, "mem_req": c.mem_req,
                        "production": c.production, "cost_mb": c.cost_mb, "compulsory": c.compulsory, "chosen": chosen,
                    })
                })
                .collect();
            let line = serde_json::json!({
                "kind": "scs", "tick": ctx.tick.0, "round": ctx.round,
                "machine": ctx.cell.nodes.machine_id[n.index()], "cpu_cap": load.cpu_cap, "mem_cap": load.mem_cap,
                "tasks": listed, "fitness": selection.fitness, "cost_mb": selection.cost_mb,
            });
            samples.push(line.to_string());
        }
        let mut chosen: Vec<(TaskIdx, u32)> = tasks
            .iter()
            .zip(&selection.chosen)
            .filter(|(_, c)| **c)
            .map(|(t, _)| (*t, ctx.cell.tasks.generation[t.index()]))
            .collect();
        chosen.reverse(); // popped from the back: first selected goes first
        na.queue = chosen;
        if let Some(first) = na.queue.pop() {
            self.request_candidates(ctx, n, na, out, g, first);
        }
    }
}
