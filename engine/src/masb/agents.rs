//! What MASB's agents do in a round. Agents `0..B` are brokers (BA), agent `B + n` is the node
//! agent (NA) of node `n`. A step reads the agent's inbox and the cell as of the round's start,
//! updates the agent's own state, sends messages (delivered next round) and asks for actions.
//! The node reports are the exception: taken from the cell for the NAs at the tick's first
//! round and read by the BAs at the next (`reports.rs`), counted as messages.
//!
//! An NA runs one SAN process per task SCS selected, all at once ("processes their allocation
//! in parallel", seed 000 section 5). Simplifications, stated: it runs SCS again only once every
//! process of the last selection has ended, and not while one of its tasks is still migrating
//! out. A BA applies all its reports due in a round before answering requests, and with
//! `book_asks` lays its bookings over them (`booking.rs`).

mod booking;
mod broker;
mod node;

pub use booking::Booking;
pub use broker::{Allocation, Broker, BrokerCache};
pub use node::{NodeAgent, Phase, San, offload_phase};

use ingest::rng::Rng;

use super::OffloadGoal;
use super::fit::FitIndex;
use super::policy::{Assigned, Masb};
use super::protocol::{Action, CACHE_SHARE_KIND, CandidateList, Msg, NODE_REPORT_KIND};
use super::reports;
use super::score::NodeState;
use super::scs::{self, Candidate, Goal};
use super::select::{
    CacheEntry, CacheView, Demand, MigrationScratch, Recommendation, ScoreScratch, accepts,
    draw_to_front, drawn_order, final_check, initial_asks, migration_candidates, target_order,
    window_offset,
};
use super::{InitialOrder, MasbConfig};
use crate::cell::{Cell, TaskState};
use crate::classify::NodeClass;
use crate::ids::{AgentIdx, NodeIdx, TaskIdx, Tick};
use crate::match_memo::MatchMemo;
use crate::policy::{Envelope, Outbox, StepCtx};
use crate::units::to_normalised;

/// One MASB agent: a broker or a node agent (the other part stays empty).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct MasbAgent {
    /// Broker state (brokers only, allocated at their first step): boxed so that the ~100k
    /// node agents a round sweeps stay a few cache lines apart.
    pub broker: Option<Box<Broker>>,
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
        "job_id": ctx.cell.tasks.job_id()[t.index()],
        "task_index": ctx.cell.tasks.task_index()[t.index()],
        "cpu_req": d.cpu_req, "mem_req": d.mem_req, "cpu_use": d.cpu_use, "mem_use": d.mem_use,
    })
}

fn recs_json(ctx: &StepCtx<'_>, recs: &[Recommendation]) -> serde_json::Value {
    recs.iter()
        .map(|r| {
            serde_json::json!({
                "machine": ctx.cell.nodes.machine_id()[r.node.index()],
                "score": r.score, "forced": r.forced,
            })
        })
        .collect()
}

impl Masb {
    fn global_round(&self, ctx: &StepCtx<'_>) -> u64 {
        self.global_round_of(ctx.tick, ctx.round)
    }

    /// Round `round` of `tick` counted over the run.
    pub(super) fn global_round_of(&self, tick: Tick, round: u32) -> u64 {
        tick.0 as u64 * self.rounds_per_tick as u64 + round as u64
    }

    fn rounds_for(&self, seconds: u32) -> u64 {
        (seconds as f64 / self.round_s).ceil() as u64
    }

    fn now_s(&self, ctx: &StepCtx<'_>) -> f64 {
        self.round_start_s(ctx.tick.0 as u64, ctx.round)
    }

    /// Simulated seconds at the start of round `round` of tick `tick` (what agents call now).
    pub(super) fn round_start_s(&self, tick: u64, round: u32) -> f64 {
        tick as f64 * self.round_s * self.rounds_per_tick as f64 + round as f64 * self.round_s
    }

    fn broker_of(&self, n: NodeIdx) -> AgentIdx {
        reports::broker_of(n, self.brokers)
    }

    fn agent_of(&self, n: NodeIdx) -> AgentIdx {
        AgentIdx(self.brokers + n.0)
    }

    fn node_of(&self, a: AgentIdx) -> NodeIdx {
        NodeIdx(a.0 - self.brokers)
    }

    /// A task's demand from the cell (normalised).
    pub(super) fn demand(cell: &Cell, t: TaskIdx) -> Demand {
        let tasks = &cell.tasks;
        let i = t.index();
        Demand {
            cpu_req: to_normalised(tasks.cpu_req()[i]),
            mem_req: to_normalised(tasks.mem_req()[i]),
            cpu_use: to_normalised(tasks.usage()[i].cpu()),
            mem_use: to_normalised(tasks.usage()[i].mem()),
        }
    }

    fn live(ctx: &StepCtx<'_>, t: TaskIdx, generation: u32, state: TaskState) -> bool {
        t.index() < ctx.cell.tasks.len()
            && ctx.cell.tasks.generation()[t.index()] == generation
            && ctx.cell.tasks.state()[t.index()] == state
    }

    /// Node `n` is online and meets task `t`'s constraints.
    fn can_host(ctx: &StepCtx<'_>, n: NodeIdx, t: TaskIdx) -> bool {
        ctx.cell.nodes.is_online(n) && ctx.cell.satisfies(n, t)
    }
}
