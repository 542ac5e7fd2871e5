//! Sparrow's messages (seed 002 section I.A's steps 1-8, the failure detector's verdicts and the
//! engine's notices to a node) and the actions its agents ask for. Plain `Copy` data.
//!
//! Agent 0 is the DATACENTER that issues tasks; agent `n + 1` is node `n`'s peer, both a TASK
//! MASTER (ResourceManager) and an EXECUTOR (RmWorker).

use super::exchanges::ExchangeId;
use crate::greedy::fit::Need;
use crate::ids::{AgentIdx, NodeIdx, TaskIdx};

/// A message between Sparrow agents.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Msg {
    /// Engine -> DATACENTER: a task became pending (new, resubmitted, or displaced by a failed
    /// node once the failure is detected).
    Arrive {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
    },
    /// Step 1, DATACENTER -> TASK MASTER: schedule this task.
    Submit {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
    },
    /// Step 2, TASK MASTER -> worker (or worker -> next hop, probe propagation): hold a place
    /// for a task needing `need`.
    Probe {
        /// The task the probe was sent for.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// Its REQUISITES.
        need: Need,
        /// The master.
        master: AgentIdx,
        /// Hops so far (0 when sent by the master).
        hops: u8,
        /// The worker the master sent it to (its record of the probe).
        first: AgentIdx,
    },
    /// Step 3, worker -> master: the probe is queued here (`first` names the master's record).
    ProbeQueued {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// The worker the master sent it to.
        first: AgentIdx,
    },
    /// Step 4, worker -> master: resources for the probe of `task` are reserved; which task?
    Confirm {
        /// The task of the probe.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// The resources reserved (the probe's REQUISITES).
        need: Need,
    },
    /// Step 5, master -> worker: run `task` (late binding: may differ from the probe's).
    Assign {
        /// The probe's task (names the reservation).
        probe_task: TaskIdx,
        /// Its generation.
        probe_generation: u32,
        /// The task to run.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
    },
    /// Step 5, master -> worker: nothing left that fits; release the reservation.
    Cancel {
        /// The probe's task.
        task: TaskIdx,
        /// Its generation.
        generation: u32,
    },
    /// Engine -> worker: a task running here ended (step 8).
    Finished,
    /// A peer's failure detector -> the peer: `node`, which it subscribed, missed a ping by the
    /// timeout (`detector.rs`).
    Dead {
        /// The dead node.
        node: NodeIdx,
    },
    /// Engine -> peer: time to exchange the gossip view.
    Gossip,
    /// Cyclon's shuffle (`view.rs`): a peer's own descriptor and some of its random view to its
    /// oldest neighbour (`reply` false), or the neighbour's answer (`reply` true).
    Shuffle {
        /// The entries given (`exchanges.rs`).
        entries: ExchangeId,
        /// Whether this answers a shuffle.
        reply: bool,
    },
    /// T-Man's exchange (`view.rs`): a peer's own descriptor and its best-ranked entries to its
    /// best-ranked neighbour, or the neighbour's answer.
    Rank {
        /// The entries given (`exchanges.rs`).
        entries: ExchangeId,
        /// Whether this answers an exchange.
        reply: bool,
    },
}

/// Message kind names, in [`Msg::kind`] order (columns `msg_<name>` of ticks.parquet).
pub const MESSAGE_KINDS: [&str; 12] = [
    "arrive",
    "submit",
    "probe",
    "probe_queued",
    "confirm",
    "assign",
    "cancel",
    "finished",
    "dead",
    "gossip",
    "shuffle",
    "rank",
];

impl Msg {
    /// The view exchange's entries it names, for a Cyclon or T-Man exchange (`exchanges.rs`).
    pub fn exchange(&self) -> Option<ExchangeId> {
        match *self {
            Msg::Shuffle { entries, .. } | Msg::Rank { entries, .. } => Some(entries),
            _ => None,
        }
    }

    /// Index into [`MESSAGE_KINDS`].
    pub fn kind(&self) -> usize {
        match self {
            Msg::Arrive { .. } => 0,
            Msg::Submit { .. } => 1,
            Msg::Probe { .. } => 2,
            Msg::ProbeQueued { .. } => 3,
            Msg::Confirm { .. } => 4,
            Msg::Assign { .. } => 5,
            Msg::Cancel { .. } => 6,
            Msg::Finished => 7,
            Msg::Dead { .. } => 8,
            Msg::Gossip => 9,
            Msg::Shuffle { .. } => 10,
            Msg::Rank { .. } => 11,
        }
    }
}

/// Sparrow's counters (`counters/` columns and summary totals): probes deposited, those deposited
/// where their task could not start at once (they queue: how well the views find room), and
/// the propagation hops they took.
pub const COUNTERS: [crate::policy::CounterKind; 3] = [
    crate::policy::CounterKind::count("probes_deposited"),
    crate::policy::CounterKind::count("probes_queued"),
    crate::policy::CounterKind::count("probe_hops"),
];

/// A change a Sparrow agent asks for, applied after the instant in agent order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Start a pending task on a node (an assignment or a self-assignment).
    Place {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// The node.
        node: NodeIdx,
        /// The task's master (who re-probes it if the node fails while it runs).
        master: AgentIdx,
    },
    /// A task handed to a failed node (a submission to a dead master, an assignment to a dead
    /// worker) is lost there: `master` learns at its detector's verdict on `node` and probes it
    /// again (the DATACENTER: issues it again through the ring).
    Lost {
        /// The task.
        task: TaskIdx,
        /// Its slot generation.
        generation: u32,
        /// The failed node.
        node: NodeIdx,
        /// Who issues it again.
        master: AgentIdx,
    },
    /// A probe was deposited at a worker (counted: [`COUNTERS`]): `ready` when its task could
    /// start there at once, after `hops` propagation hops.
    Deposited {
        /// Whether it found room (nothing queued, its REQUISITES free).
        ready: bool,
        /// Hops it was passed on before.
        hops: u8,
    },
    /// A worker's queue length changed (what gossip exchanges read).
    QueueLength {
        /// The node.
        node: NodeIdx,
        /// Place-holders waiting there.
        length: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Envelope;

    /// A message is held in the timeline until due (`timeline.rs`), hundreds of thousands at
    /// once in a GCD cell's first tick: a probe (its task, master and REQUISITES) makes the
    /// largest; a view exchange's descriptors wait beside it (`exchanges.rs`).
    #[test]
    fn envelopes_stay_small() {
        assert!(std::mem::size_of::<Envelope<Msg>>() <= 48);
    }
}
