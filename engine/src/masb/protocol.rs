//! MASB's messages (seed 000 Table 1, plus the node report, the brokers' cache exchange and the
//! initial-allocation request/answer) and the actions agents ask the core to apply. All plain
//! `Copy` data: no heap, no closures.

use super::score::NodeState;
use super::select::{Demand, Recommendation};
use crate::ids::{NodeIdx, TaskIdx};

/// Candidates a GetCandidateNodesResponse can carry (the paper's 15).
pub const MAX_CANDIDATES: usize = 15;

/// The most nodes a broker asks, one after another, for one new task (`initial_asks`, at most
/// this): the room a broker keeps per offer.
pub const MAX_INITIAL_ASKS: usize = 10;

/// Up to [`MAX_CANDIDATES`] recommended nodes in compact form (nodes, forced flags as a bit
/// mask): the largest message payload, kept small because every message of a round is moved
/// through the mailboxes. The broker's scores do not travel: the source re-scores acceptors on
/// their fresh load (`select::target_order`) and reads only the nodes and which are forced.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CandidateList {
    count: u8,
    forced: u16,
    nodes: [NodeIdx; MAX_CANDIDATES],
}

impl CandidateList {
    /// The first [`MAX_CANDIDATES`] of `recs`.
    pub fn new(recs: &[Recommendation]) -> CandidateList {
        let mut list = CandidateList {
            count: recs.len().min(MAX_CANDIDATES) as u8,
            forced: 0,
            nodes: [NodeIdx::NONE; MAX_CANDIDATES],
        };
        for (k, r) in recs.iter().take(MAX_CANDIDATES).enumerate() {
            list.nodes[k] = r.node;
            list.forced |= u16::from(r.forced) << k;
        }
        list
    }

    /// The recommendations, in order, with score 0 (not carried).
    pub fn to_vec(&self) -> Vec<Recommendation> {
        (0..self.count as usize)
            .map(|k| Recommendation {
                node: self.nodes[k],
                score: 0.0,
                forced: self.forced & (1 << k) != 0,
            })
            .collect()
    }
}

/// A message between MASB agents that passes through the mailbox. `task` + `generation`
/// identify a task slot's current owner. Two kinds of the protocol are counted but delivered
/// otherwise: the node report (NA -> its BA, every tick: the node's state; taken from the cell
/// at the round it is sent, `reports.rs`) and the cache share (BA -> the other BAs: a report
/// they did not receive themselves; every broker would hold the same copy one round after the
/// report's own broker, so it goes through the brokers' shared cache, `Reports::store_due`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Msg {
    /// BA -> NA: take this new task?
    AllocationRequest {
        /// The broker's allocation slot (echoed in the answer).
        slot: u32,
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// Its demand.
        demand: Demand,
    },
    /// NA -> BA: the answer.
    AllocationAnswer {
        /// The broker's allocation slot from the request.
        slot: u32,
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// Whether the node took it.
        accepted: bool,
    },
    /// NA -> BA: where could this task go?
    GetCandidateNodesRequest {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// Its demand.
        demand: Demand,
        /// A stable node's offload (`MasbConfig::offload_every_s`) asks: no forced candidates.
        offload: bool,
    },
    /// BA -> NA: up to 15 recommendations, forced ones last.
    GetCandidateNodesResponse {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// Recommendations, forced ones last.
        candidates: CandidateList,
    },
    /// NA -> candidate NA: would you take this task?
    TaskMigrationRequest {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// Its demand.
        demand: Demand,
        /// Forced migration.
        forced: bool,
    },
    /// Candidate -> source: yes, and this is my current load.
    TaskMigrationAcceptanceResponse {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// The target's current load.
        load: NodeState,
    },
    /// Candidate -> source: no.
    TaskMigrationRejectionResponse {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
    },
    /// Source -> chosen target: migrate it now.
    TaskMigrationProcessRequest {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// Its demand.
        demand: Demand,
        /// Forced migration.
        forced: bool,
        /// A stable node's offload (`MasbConfig::offload_every_s`) asks: counted apart.
        offload: bool,
    },
    /// Target -> source: the migration has started.
    TaskMigrationProcessConfirmationResponse {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
    },
    /// Target -> source: the final check failed (usually a collision).
    TaskMigrationProcessErrorResponse {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
    },
}

/// Message kind names, in [`Msg::kind`] order (columns `msg_<name>` of ticks.parquet).
pub const MESSAGE_KINDS: [&str; 12] = [
    "node_report",
    "cache_share",
    "allocation_request",
    "allocation_answer",
    "get_candidate_nodes_request",
    "get_candidate_nodes_response",
    "task_migration_request",
    "task_migration_acceptance_response",
    "task_migration_rejection_response",
    "task_migration_process_request",
    "task_migration_process_confirmation_response",
    "task_migration_process_error_response",
];

/// [`MESSAGE_KINDS`] index of the node reports (counted, delivered by `reports.rs`).
pub const NODE_REPORT_KIND: usize = 0;

/// [`MESSAGE_KINDS`] index of the cache shares (counted, delivered by the shared cache).
pub const CACHE_SHARE_KIND: usize = 1;

impl Msg {
    /// Index into [`MESSAGE_KINDS`].
    pub fn kind(&self) -> usize {
        match self {
            Msg::AllocationRequest { .. } => 2,
            Msg::AllocationAnswer { .. } => 3,
            Msg::GetCandidateNodesRequest { .. } => 4,
            Msg::GetCandidateNodesResponse { .. } => 5,
            Msg::TaskMigrationRequest { .. } => 6,
            Msg::TaskMigrationAcceptanceResponse { .. } => 7,
            Msg::TaskMigrationRejectionResponse { .. } => 8,
            Msg::TaskMigrationProcessRequest { .. } => 9,
            Msg::TaskMigrationProcessConfirmationResponse { .. } => 10,
            Msg::TaskMigrationProcessErrorResponse { .. } => 11,
        }
    }
}

/// A change an agent asks for; applied after the round in agent order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Start a pending task on a node (initial allocation accepted).
    Place {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// The node.
        node: NodeIdx,
    },
    /// Start migrating a running task (process request confirmed by the target).
    Migrate {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// Where the task runs.
        source: NodeIdx,
        /// Where it goes.
        target: NodeIdx,
        /// Forced migration.
        forced: bool,
        /// Started by a stable node's offload (`MasbConfig::offload_every_s`).
        offload: bool,
    },
    /// A process request failed its final check at the target.
    Collision {
        /// The task.
        task: TaskIdx,
        /// The refusing target.
        target: NodeIdx,
        /// An offload asked (`Msg::TaskMigrationProcessRequest`'s).
        offload: bool,
    },
    /// A SAN attempt ran out of candidates for a task.
    MigrationFailed {
        /// The task.
        task: TaskIdx,
        /// The SAN process was an offload's.
        offload: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Envelope;

    #[test]
    fn candidate_lists_keep_nodes_order_and_forced_flags() {
        let recs: Vec<Recommendation> = (0..20)
            .map(|k| Recommendation {
                node: NodeIdx(100 + k),
                score: k as f64,
                forced: k % 3 == 0,
            })
            .collect();
        let back = CandidateList::new(&recs).to_vec();
        assert_eq!(back.len(), MAX_CANDIDATES);
        for (r, b) in recs.iter().zip(&back) {
            assert_eq!((b.node, b.forced, b.score), (r.node, r.forced, 0.0));
        }
        assert!(CandidateList::new(&[]).to_vec().is_empty());
    }

    /// Every message of a round is copied into a chunk buffer and once more into the mailbox:
    /// the envelope stays within 88 bytes (a cache report plus tag and addresses).
    #[test]
    fn envelopes_stay_small() {
        assert!(std::mem::size_of::<Envelope<Msg>>() <= 88);
    }
}
