//! A node agent (NA): reports its node each tick (the report itself is taken by `begin_tick`,
//! `reports.rs`; the NA counts it as sent), answers allocation and migration requests on
//! the node's current load (a migration request with the tests its process request will meet),
//! and, when its node is overloaded, selects tasks by SCS and runs one SAN process per selected
//! task, all at once (candidates from its broker, requests to the targets, the move).

use super::*;

/// A node's load as its agent answers requests in a round: the cell's usage and production
/// requests, plus what the agent promised earlier in the round (accepted allocations and
/// migrations).
struct Promised {
    cpu_cap: f64,
    mem_cap: f64,
    cpu: f64,
    mem: f64,
    prod_cpu: f64,
    prod_mem: f64,
}

impl Promised {
    /// Capacities and usage, as requests are checked against and answers report.
    fn load(&self) -> NodeState {
        NodeState {
            cpu_cap: self.cpu_cap,
            mem_cap: self.mem_cap,
            cpu: self.cpu,
            mem: self.mem,
        }
    }

    /// A production task's requests fit with the production requests already on the node (RUS
    /// rule); any other task's always do.
    fn production_fits(&self, task: &Demand, production: bool) -> bool {
        !production
            || (self.prod_cpu + task.cpu_req <= self.cpu_cap
                && self.prod_mem + task.mem_req <= self.mem_cap)
    }

    /// Counts an accepted task on the node.
    fn take(&mut self, task: &Demand, production: bool) {
        (self.cpu, self.mem) = (self.cpu + task.cpu_use, self.mem + task.mem_use);
        if production {
            (self.prod_cpu, self.prod_mem) =
                (self.prod_cpu + task.cpu_req, self.prod_mem + task.mem_req);
        }
    }
}

/// Where a SAN process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Phase {
    /// Step 2: waiting for the broker's candidates.
    #[default]
    WaitCandidates,
    /// Step 3: waiting for answers to the migration requests.
    WaitAnswers,
    /// Step 5: waiting for the chosen target's confirmation.
    WaitConfirm,
    /// Ended (moved, given up or expired): dropped at the end of the agent's step.
    Ended,
}

/// One SAN process: moving one task SCS selected off the node (seed 000 section 5: "NA selects a
/// number of tasks in the first step ... and processes their allocation in parallel").
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct San {
    /// Where the process is.
    pub phase: Phase,
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
    /// Targets in the order to try.
    pub order: Vec<Recommendation>,
    /// Index of the next target in `order`.
    pub next: usize,
    /// Global round at which the 30 s wait ends.
    pub deadline: u64,
    /// Global round at which the recommendations expire (3 minutes).
    pub expires: u64,
    /// Started by a stable node's offload (`MasbConfig::offload_every_s`): its broker sends
    /// no forced candidates.
    pub offload: bool,
}

/// A node agent's state.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct NodeAgent {
    /// The SAN processes of the last SCS selection still running, in selection order (empty:
    /// idle, SCS may run).
    pub processes: Vec<San>,
    /// The node's [`Cell::constraint_stamp`](crate::cell::Cell::constraint_stamp) when every
    /// task of the tick's index still on the node was last seen to meet its constraints: true
    /// while the stamp stays (tasks placed or migrated here since were matched on arrival). A
    /// pure cache.
    #[serde(skip)]
    pub constraints_ok_stamp: Option<u64>,
}

impl NodeAgent {
    /// The running SAN process for `task` in `phase`, if any.
    fn process(&mut self, phase: Phase, task: (TaskIdx, u32)) -> Option<&mut San> {
        self.processes
            .iter_mut()
            .find(|p| p.phase == phase && p.task == task)
    }
}

impl Masb {
    /// A node agent's round.
    pub(in crate::masb) fn node_step(
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
        if i >= nodes.len() || !nodes.online()[i] {
            return; // an unreachable node answers nothing
        }
        if ctx.round == 0 {
            // The node's report, taken by `begin_tick` (`reports.rs`): counted as sent.
            out.count_delivered(NODE_REPORT_KIND, 1);
        }
        if inbox.is_empty() && na.processes.is_empty() {
            // Most agents in most rounds: nothing to answer, only SCS's cheap tests to run.
            self.select_and_start(ctx, n, na, samples, out);
            return;
        }
        let g = self.global_round(ctx);
        let mut promised = Promised {
            cpu_cap: to_normalised(nodes.cpu_cap()[i]),
            mem_cap: to_normalised(nodes.mem_cap()[i]),
            cpu: to_normalised(nodes.cpu_used()[i]),
            mem: to_normalised(nodes.mem_used()[i]),
            prod_cpu: to_normalised(nodes.prod_cpu_req()[i]),
            prod_mem: to_normalised(nodes.prod_mem_req()[i]),
        };
        let production = |t: TaskIdx| ctx.cell.tasks.production()[t.index()];
        for e in inbox {
            let load = promised.load();
            match e.msg {
                Msg::AllocationRequest {
                    slot,
                    task,
                    generation,
                    demand,
                } => {
                    // The load test first: it reads only the message and refuses most requests
                    // without touching the task's columns (all tests are pure). Accepted: the
                    // task's production flag.
                    let within_max_use = || {
                        let max = self.config.max_use;
                        load.cpu + demand.cpu_use <= max * load.cpu_cap
                            && load.mem + demand.mem_use <= max * load.mem_cap
                    };
                    let accepted = (accepts(&load, &demand)
                        && (!self.config.accept_max_use || within_max_use())
                        && Self::live(ctx, task, generation, TaskState::Pending)
                        && ctx.cell.satisfies(n, task))
                    .then(|| production(task))
                    .filter(|&prod| promised.production_fits(&demand, prod));
                    if let Some(prod) = accepted {
                        promised.take(&demand, prod);
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
                            accepted: accepted.is_some(),
                        },
                    );
                }
                Msg::TaskMigrationRequest {
                    task,
                    generation,
                    demand,
                    forced,
                } => {
                    // The same tests as the process request's (step 5), on the load now.
                    let ok = final_check(&load, &demand, forced)
                        && Self::live(ctx, task, generation, TaskState::Running)
                        && ctx.cell.satisfies(n, task)
                        && (forced || promised.production_fits(&demand, production(task)));
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
                    offload,
                } => {
                    let prod = production(task);
                    let ok = Self::live(ctx, task, generation, TaskState::Running)
                        && !ctx.cell.tasks.migrating_to()[task.index()].is_some()
                        && ctx.cell.satisfies(n, task)
                        && final_check(&load, &demand, forced)
                        && (forced || promised.production_fits(&demand, prod));
                    if ok {
                        promised.take(&demand, prod);
                        let source = ctx.cell.tasks.node()[task.index()];
                        out.act(Action::Migrate {
                            task,
                            generation,
                            source,
                            target: n,
                            forced,
                            offload,
                        });
                        out.send(
                            e.from,
                            Msg::TaskMigrationProcessConfirmationResponse { task, generation },
                        );
                    } else {
                        out.act(Action::Collision {
                            task,
                            target: n,
                            offload,
                        });
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
                } => {
                    let Some(p) = na.process(Phase::WaitCandidates, (task, generation)) else {
                        continue;
                    };
                    p.candidates = candidates.to_vec();
                    p.answers.clear();
                    p.answered = 0;
                    for r in &p.candidates {
                        out.send(
                            self.agent_of(r.node),
                            Msg::TaskMigrationRequest {
                                task,
                                generation,
                                demand: p.demand,
                                forced: r.forced,
                            },
                        );
                    }
                    p.phase = Phase::WaitAnswers;
                    p.deadline = g + self.rounds_for(self.config.answer_wait_s);
                }
                Msg::TaskMigrationAcceptanceResponse {
                    task,
                    generation,
                    load,
                } => {
                    let from = self.node_of(e.from);
                    if let Some(p) = na.process(Phase::WaitAnswers, (task, generation)) {
                        if let Some(r) = p.candidates.iter().find(|r| r.node == from) {
                            p.answers.push((*r, load));
                        }
                        p.answered += 1;
                    }
                }
                Msg::TaskMigrationRejectionResponse { task, generation } => {
                    if let Some(p) = na.process(Phase::WaitAnswers, (task, generation)) {
                        p.answered += 1;
                    }
                }
                Msg::TaskMigrationProcessConfirmationResponse { task, generation } => {
                    if let Some(p) = na.process(Phase::WaitConfirm, (task, generation)) {
                        p.phase = Phase::Ended;
                    }
                }
                Msg::TaskMigrationProcessErrorResponse { task, generation } => {
                    if let Some(p) = na.process(Phase::WaitConfirm, (task, generation)) {
                        self.try_next_target(p, out);
                    }
                }
                _ => {}
            }
        }
        let mut rng = None; // drawn from only by a process choosing its targets
        for p in &mut na.processes {
            if p.phase == Phase::WaitAnswers
                && (p.answered >= p.candidates.len() || g >= p.deadline)
            {
                let rng = rng.get_or_insert_with(|| ctx.rng(me));
                p.order = target_order(&p.answers, &p.demand, &self.config, rng);
                if sampled(ctx, 5_000, &[me.0 as u64, p.task.0.0 as u64, 3]) {
                    samples.push(target_selection_json(ctx, n, p));
                }
                p.next = 0;
                p.phase = Phase::WaitConfirm;
                self.try_next_target(p, out);
            }
            if p.phase != Phase::Ended && g >= p.expires {
                p.phase = Phase::Ended; // recommendations expired
            }
        }
        na.processes.retain(|p| p.phase != Phase::Ended);
        if na.processes.is_empty() {
            self.select_and_start(ctx, n, na, samples, out);
        }
    }

    /// Step 5 (again): the next target in order, or give up on this task.
    fn try_next_target(&self, p: &mut San, out: &mut Outbox<'_, Msg, Action>) {
        let (task, generation) = p.task;
        match p.order.get(p.next) {
            Some(r) => {
                p.next += 1;
                out.send(
                    self.agent_of(r.node),
                    Msg::TaskMigrationProcessRequest {
                        task,
                        generation,
                        demand: p.demand,
                        forced: r.forced,
                        offload: p.offload,
                    },
                );
            }
            None => {
                out.act(Action::MigrationFailed {
                    task,
                    offload: p.offload,
                });
                p.phase = Phase::Ended;
            }
        }
    }

    /// SAN step 2 for `task`: a process that asks the node's broker for candidate targets and
    /// waits for them (the recommendations expire after `recommendation_ttl_s`); an `offload`'s
    /// asks for no forced candidates.
    fn request_candidates(
        &self,
        ctx: &StepCtx<'_>,
        n: NodeIdx,
        out: &mut Outbox<'_, Msg, Action>,
        g: u64,
        (task, offload): ((TaskIdx, u32), bool),
    ) -> San {
        let demand = Self::demand(ctx.cell, task.0);
        out.send(
            self.broker_of(n),
            Msg::GetCandidateNodesRequest {
                task: task.0,
                generation: task.1,
                demand,
                offload,
            },
        );
        San {
            task,
            demand,
            expires: g + self.rounds_for(self.config.recommendation_ttl_s),
            offload,
            ..San::default()
        }
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
            ctx.cell.tasks.node()[t.index()] == n
                && ctx.cell.tasks.state()[t.index()] == TaskState::Running
        };
        let on_node = || self.tasks_on(n).iter().filter(running);
        // A stable node moves tasks only on its offload turn (`offload_every_s`, off by default).
        let mut offload = false;
        if !nodes.load_wanted(i).overloaded() {
            let stamp = ctx.cell.constraint_stamp(n);
            let constraints_ok = na.constraints_ok_stamp == Some(stamp)
                || on_node().all(|&t| ctx.cell.satisfies(n, t));
            if constraints_ok {
                na.constraints_ok_stamp = Some(stamp);
                if !self.offload_turn(ctx, n) {
                    return;
                }
                offload = true;
            }
        }
        if on_node().any(|t| ctx.cell.tasks.migrating_to()[t.index()].is_some()) {
            return;
        }
        let tasks: Vec<TaskIdx> = on_node().copied().collect();
        if tasks.is_empty() {
            return;
        }
        let load = NodeState {
            cpu_cap: to_normalised(nodes.cpu_cap()[i]),
            mem_cap: to_normalised(nodes.mem_cap()[i]),
            cpu: to_normalised(nodes.cpu_used()[i]),
            mem: to_normalised(nodes.mem_used()[i]),
        };
        let candidates: Vec<Candidate> = tasks
            .iter()
            .map(|&t| {
                let d = Self::demand(ctx.cell, t);
                Candidate {
                    cpu_use: d.cpu_use,
                    mem_use: d.mem_use,
                    cpu_req: d.cpu_req,
                    mem_req: d.mem_req,
                    production: ctx.cell.tasks.production()[t.index()],
                    cost_mb: crate::masb::cost::migration_cost(d.cpu_use, d.mem_use, &self.config)
                        .cost_mb,
                    compulsory: !ctx.cell.satisfies(n, t),
                }
            })
            .collect();
        // What an offload must leave besides a stable node (`scs` module doc).
        let goal = match (offload, self.config.offload_goal) {
            (false, _) => Goal::Stable,
            (true, OffloadGoal::NotDa) => Goal::NotDa(self.thresholds),
            (true, OffloadGoal::BetterScore) => Goal::BetterScore(scs::score_staying(
                load.cpu_cap,
                load.mem_cap,
                &candidates,
                &self.config,
            )),
        };
        // Overloaded only by migrations coming in (they count on both nodes): nothing of its own
        // needs to move; wait for the transfers to end. An offload whose node meets its goal as
        // it is (no longer DA by its current usage, say) moves nothing either.
        let nothing = vec![false; candidates.len()];
        let (cpu_cap, mem_cap) = (load.cpu_cap, load.mem_cap);
        if scs::evaluate_for(cpu_cap, mem_cap, &candidates, &nothing, goal, &self.config).stable() {
            return;
        }
        let mut rng: Rng = ctx.rng(self.agent_of(n));
        let _ = rng.next_u64(); // a stream distinct from the one used for target ordering
        let selection =
            scs::tabu_search_for(cpu_cap, mem_cap, &candidates, goal, &self.config, &mut rng);
        if !selection.stable() {
            return; // an offload that finds no selection meeting its goal moves nothing
        }
        if sampled(ctx, 50, &[n.0 as u64, 4]) {
            let listed: Vec<serde_json::Value> = tasks
                .iter()
                .zip(&candidates)
                .zip(&selection.chosen)
                .map(|((t, c), chosen)| {
                    serde_json::json!({
                        "job_id": ctx.cell.tasks.job_id()[t.index()],
                        "task_index": ctx.cell.tasks.task_index()[t.index()],
                        "cpu_use": c.cpu_use, "mem_use": c.mem_use,
                        "cpu_req": c.cpu_req, "mem_req": c.mem_req,
                        "production": c.production, "cost_mb": c.cost_mb,
                        "compulsory": c.compulsory, "chosen": chosen,
                    })
                })
                .collect();
            let mut line = serde_json::json!({
                "kind": "scs", "tick": ctx.tick.0, "round": ctx.round,
                "machine": ctx.cell.nodes.machine_id()[n.index()],
                "cpu_cap": load.cpu_cap, "mem_cap": load.mem_cap,
                "tasks": listed, "fitness": selection.fitness, "cost_mb": selection.cost_mb,
            });
            if offload {
                // Only an offload's line says so: other runs' samples stay byte-identical.
                line["offload"] = serde_json::Value::Bool(true);
            }
            samples.push(line.to_string());
        }
        let chosen = tasks.iter().zip(&selection.chosen).filter(|(_, c)| **c);
        for (&t, _) in chosen {
            let task = (t, ctx.cell.tasks.generation()[t.index()]);
            let process = self.request_candidates(ctx, n, out, g, (task, offload));
            na.processes.push(process);
        }
    }

    /// Whether node `n` offloads in this round: offloads are on, the node was DA at the last
    /// tick's end, this is a tick's first round and the node's turn of the period
    /// ([`offload_phase`]).
    fn offload_turn(&self, ctx: &StepCtx<'_>, n: NodeIdx) -> bool {
        let every_s = self.config.offload_every_s;
        if every_s == 0 || ctx.round != 0 {
            return false;
        }
        let tick_s = self.round_s * f64::from(self.rounds_per_tick);
        let period_ticks = ((f64::from(every_s) / tick_s).round() as u64).max(1);
        let machine = ctx.cell.nodes.machine_id()[n.index()];
        ctx.cell.nodes.class()[n.index()] == NodeClass::Da
            && u64::from(ctx.tick.0) % period_ticks
                == offload_phase(ctx.seed, machine, period_ticks)
    }
}

/// The tick of each offload period (`MasbConfig::offload_every_s`, in ticks) at which a machine
/// takes its turn: drawn from the run's seed and the machine's trace ID, so the turns are spread
/// over the period alike for every node index order, and a machine keeps its turn across
/// removals and snapshots. Not a tie-break: each machine takes exactly one turn a period.
pub fn offload_phase(seed: u64, machine_id: u64, period_ticks: u64) -> u64 {
    ingest::rng::hash_keys(seed ^ OFFLOAD_PHASE_SALT, &[machine_id]) % period_ticks.max(1)
}

/// Keeps [`offload_phase`]'s draws apart from the run's other hashes of the seed.
const OFFLOAD_PHASE_SALT: u64 = 0x00ff_10ad;

/// A sampled target selection (seed 000 section 5.4) as a JSON line.
fn target_selection_json(ctx: &StepCtx<'_>, n: NodeIdx, p: &San) -> String {
    let acceptors: Vec<serde_json::Value> = p
        .answers
        .iter()
        .map(|(r, l)| {
            serde_json::json!({
                "machine": ctx.cell.nodes.machine_id()[r.node.index()],
                "forced": r.forced, "cpu_used": l.cpu, "mem_used": l.mem,
                "cpu_cap": l.cpu_cap, "mem_cap": l.mem_cap,
            })
        })
        .collect();
    let line = serde_json::json!({
        "kind": "target_selection", "tick": ctx.tick.0, "round": ctx.round,
        "source_machine": ctx.cell.nodes.machine_id()[n.index()],
        "task": task_json(ctx, p.task.0, &p.demand),
        "candidates": p.candidates.len(),
        "acceptors": acceptors, "order": recs_json(ctx, &p.order),
    });
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::offload_phase;

    /// 12,500 machines (IDs spaced as the trace's are not: consecutive) over a 56-tick period
    /// (3360 s of 60 s ticks, the calibrated one).
    const MACHINES: u64 = 12_500;
    const PERIOD: u64 = 56;

    #[test]
    fn offload_phases_spread_over_the_period_whatever_the_machine_order() {
        let phases: Vec<u64> = (0..MACHINES).map(|m| offload_phase(7, m, PERIOD)).collect();
        let mut counts = [0u64; PERIOD as usize];
        for &p in &phases {
            counts[p as usize] += 1;
        }
        // Chi-square over 56 equally likely phases: 55 degrees of freedom, mean 55, sd 10.5;
        // 110 is about five sd above.
        let expected = MACHINES as f64 / PERIOD as f64;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 110.0, "chi-square {chi2:.1}: {counts:?}");
        // Not a stagger by ID (or index) order: consecutive machines take consecutive ticks
        // about 1 time in 56, not every time.
        let stepping = phases
            .windows(2)
            .filter(|w| w[1] == (w[0] + 1) % PERIOD)
            .count();
        assert!(
            stepping < 2 * MACHINES as usize / PERIOD as usize,
            "{stepping}"
        );
        // The seed draws them: another seed keeps about 1 machine in 56 at its tick.
        let same = (0..MACHINES)
            .filter(|&m| offload_phase(8, m, PERIOD) == phases[m as usize])
            .count();
        assert!(same < 2 * MACHINES as usize / PERIOD as usize, "{same}");
        // A one-tick period: every machine every tick.
        assert!((0..100).all(|m| offload_phase(7, m, 1) == 0));
    }
}
