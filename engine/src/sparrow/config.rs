//! `[policy] kind = "sparrow"`: every knob of seed 002's base and improved Sparrow, defaults as
//! in the seed (base Sparrow: batch sampling, late binding, 2 probes per task). Constants the seed
//! leaves out are chosen here, each with what it moves.

use serde::{Deserialize, Serialize};

use crate::sim_time::SimDuration;

/// Where a node finds the peers it probes or passes a probe on to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ViewKind {
    /// Every online node, drawn uniformly with no cached state (the Sparrow paper's random
    /// sampling; the softmax has nothing to rank, so every draw is uniform).
    #[default]
    Uniform,
    /// Cyclon's random partial view (`view.rs`): `view_size` peers' descriptors, every
    /// `gossip_period` half of them swapped with the oldest neighbour's by messages that take
    /// the network delay, each descriptor the peer's free CPU and queue length when it sent it.
    Cyclon,
    /// A Gradient view kept by T-Man on top of a Cyclon view (`view.rs`): every `gossip_period`
    /// the node swaps its best entries with its best-ranked neighbour and keeps the `view_size`
    /// ranked highest by U = free CPU - queue length (seed 002 eq. 1) among its view, the
    /// answer and its Cyclon view, each as old as its descriptor.
    Gradient,
}

/// Which place-holder a worker reserves for when resources free up (step 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueOrder {
    /// Seed 002's step 4: the queue head only; a head that does not fit waits, and so does
    /// everything behind it.
    #[default]
    Fifo,
    /// The first place-holder in queue order that fits (not in the seed): a head that cannot
    /// fit does not block smaller tasks behind it. For heterogeneous cells (GCD), where a big
    /// head may never fit beside a node's long-running services.
    FirstThatFits,
}

/// Which waiting task a master gives a worker that asks (step 5; late binding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Binding {
    /// Seed 002's step 5: the master's oldest waiting task that fits, whatever its job.
    #[default]
    Master,
    /// The Sparrow authors' (paper and simulator): the probed job's next unlaunched task, or a
    /// no-op when it has none left (the slot stays held for the round trip).
    Job,
}

/// Who masters a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheduler {
    /// Seed 002's step 1: the node closest to the job on the consistent-hash ring (every node
    /// is master and worker; a master never probes its own node).
    #[default]
    Ring,
    /// One scheduler apart from the workers (the DATACENTER), as the Sparrow authors' simulator
    /// runs it (`NUM_SCHEDULERS = 1`); a job reaches it at its submission.
    One,
}

/// Whose random stream the one scheduler draws its probe targets from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeDraws {
    /// cellsim's own streams (per agent and instant, from the run's seed).
    #[default]
    Own,
    /// The Sparrow authors' simulator's, draw for draw (`ingest::pyrandom::RadlabDraws`: CPython's
    /// Mersenne Twister seeded with the run's seed; per job a scheduler choice, a shuffle of
    /// the worker list kept from job to job, its first `d x tasks` probed, then the gap to the
    /// next arrival), for a workload generated from the same draws (`cellsim gen --scenario
    /// sparrow-load --draws radlab`, same seed and arrivals): the two simulators then run
    /// the same random numbers, so their results differ only where their models do. Worker i
    /// is the i-th online node at the first arrival (the peer's cell never changes). Needs
    /// `scheduler = "one"`.
    RadlabPoisson,
    /// As `radlab-poisson`, for even arrivals (no gap drawn).
    RadlabEven,
}

/// Sparrow's settings (`[policy]` keys).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SparrowConfig {
    /// Which waiting task a worker's request gets ([`Binding`]).
    pub binding: Binding,
    /// Who masters a job ([`Scheduler`]). `binding = "job"` with `scheduler = "one"` is the
    /// Sparrow authors' simulator (GitHub `radlab/sparrow`, `simulation_cancellation.py`
    /// without cancellation or work stealing, which its `run_simulation.py` runs as
    /// "Sparrow"; [`SparrowConfig::radlab`]).
    pub scheduler: Scheduler,
    /// Probes per task (d; seed 002: 2; the Sparrow paper's probe ratio).
    pub probe_ratio: f64,
    /// Batch sampling: a job's m tasks share ceil(d x m) distinct probes; false probes d
    /// workers per task independently.
    pub batch_sampling: bool,
    /// Improvement 1: a master whose own worker has room runs the task itself, unprobed.
    pub self_assignment: bool,
    /// Improvement 2: a probe is deposited only where its task can start now or after
    /// `max_hops` hops; otherwise it is passed on.
    pub probe_propagation: bool,
    /// Hops after which a propagated probe is deposited wherever it is (seed 002: 5).
    pub max_hops: u8,
    /// Improvement 3: softmax temperature of the next-hop choice over the cached free CPU, in
    /// CPUs (seed 002: 100 = random walk; low = greedy). Moves which peers are probed when a
    /// view caches their state.
    pub temperature: f64,
    /// Improvement 4 and the view the others read (`uniform` = base Sparrow).
    pub view: ViewKind,
    /// Peers in a gossip view. Chosen (not in seed 002): 10, a common Cyclon view size; a larger
    /// view makes greedy choices better informed, and a Gradient view converges more slowly.
    pub view_size: u32,
    /// How often a node exchanges its view. Chosen: 1 s; the age of cached values, which the
    /// seed blames for Gradient's results at high load.
    pub gossip_period: SimDuration,
    /// CPUs of the largest machine, the unit of the softmax and of U (seed 002 ranks in CPUs).
    /// Chosen: 8, the size of `sparrow-load`'s nodes (so temperature 100 is a random walk).
    pub cpus_per_machine: f64,
    /// One-way network delay of every message between nodes (the Sparrow paper's simulations:
    /// 0.5 ms), exact in time whatever the tick. Queue times include it: an unqueued task
    /// waits 3 delays under base Sparrow (probe, confirmation request, assignment; the
    /// DATACENTER hands a task to its master as it is submitted).
    pub net_delay: SimDuration,
    /// Failure detector timeout (seed 002: 3 s): a subscribed node that has not acknowledged a
    /// ping this long after it was sent is dead (its master re-probes its tasks, its workers
    /// cancel its place-holders).
    pub failure_timeout: SimDuration,
    /// How often a failure detector pings each node it subscribed. Chosen: 1 s (seed 002 gives
    /// only the 3 s timeout); each node pings at its own phase, drawn from the run's seed, so a
    /// failure is reported 3 to 4 s after it (`detector.rs`).
    pub ping_interval: SimDuration,
    /// Which place-holder a worker reserves for (seed 002: the FIFO head).
    pub queue_order: QueueOrder,
    /// Positions per node on the consistent-hash ring that maps jobs to task masters. Chosen:
    /// 16; moves only how evenly jobs spread over masters.
    pub ring_vnodes: u32,
    /// Probe a waiting task again at once when late binding gave the workers of all its probes
    /// to older tasks (not in seed 002, whose master waits for a later probe's confirmation;
    /// cellsim's behaviour before issue 59; off by default). A dead worker's probes are sent
    /// again either way (the failure detector, seed 002). Without it, when tasks are alike (seed
    /// 002's experiments) none is forgotten: each adds at least one probe (`probe_ratio` >= 1)
    /// and each confirmation binds one waiting task, so probes out are never fewer than tasks
    /// waiting. When sizes differ, a confirmation binds only a task its reservation holds, so a
    /// large task whose probes went to smaller ones can wait for a probe of its size; a GCD cell
    /// sets it (`scripts/sparrow-gcd.sh`).
    pub reprobe: bool,
    /// Whose random stream the one scheduler's probe targets come from ([`ProbeDraws`]; the
    /// peer's draws only to compare with it, run for run).
    pub draws: ProbeDraws,
}

impl Default for SparrowConfig {
    fn default() -> Self {
        SparrowConfig {
            binding: Binding::Master,
            scheduler: Scheduler::Ring,
            probe_ratio: 2.0,
            batch_sampling: true,
            self_assignment: false,
            probe_propagation: false,
            max_hops: 5,
            temperature: 100.0,
            view: ViewKind::Uniform,
            view_size: 10,
            gossip_period: SimDuration::from_secs(1),
            cpus_per_machine: 8.0,
            net_delay: SimDuration::from_us(500),
            failure_timeout: SimDuration::from_secs(3),
            ping_interval: SimDuration::from_secs(1),
            queue_order: QueueOrder::Fifo,
            ring_vnodes: 16,
            reprobe: false,
            draws: ProbeDraws::Own,
        }
    }
}

impl SparrowConfig {
    /// The Sparrow authors' simulator: per-job binding, one scheduler; 2 probes per task.
    pub fn radlab() -> SparrowConfig {
        SparrowConfig {
            binding: Binding::Job,
            scheduler: Scheduler::One,
            ..SparrowConfig::default()
        }
    }

    /// Seed 002's "Random Walk": self-assignment and probe propagation, next hops drawn at
    /// temperature 100 from a Cyclon view.
    pub fn random_walk() -> SparrowConfig {
        SparrowConfig {
            self_assignment: true,
            probe_propagation: true,
            view: ViewKind::Cyclon,
            temperature: 100.0,
            ..SparrowConfig::default()
        }
    }

    /// Seed 002's "Greedy Search": Random Walk with greedy next hops (temperature 0.5 CPU:
    /// chosen; a peer with one more free CPU is e^2 = 7.4 times as likely).
    pub fn greedy_search() -> SparrowConfig {
        SparrowConfig {
            temperature: 0.5,
            ..SparrowConfig::random_walk()
        }
    }

    /// Seed 002's "Gradient Search": Greedy Search on a Gradient view.
    pub fn gradient_search() -> SparrowConfig {
        SparrowConfig {
            view: ViewKind::Gradient,
            ..SparrowConfig::greedy_search()
        }
    }

    /// What is wrong with the settings, naming the key.
    pub fn problem(&self) -> Option<String> {
        if !(self.probe_ratio.is_finite() && self.probe_ratio >= 1.0 && self.probe_ratio <= 64.0) {
            return Some(format!(
                "probe_ratio: {} is not in [1, 64]",
                self.probe_ratio
            ));
        }
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Some(format!("temperature: {} is not > 0", self.temperature));
        }
        if !(self.cpus_per_machine.is_finite() && self.cpus_per_machine > 0.0) {
            return Some(format!(
                "cpus_per_machine: {} is not > 0",
                self.cpus_per_machine
            ));
        }
        if self.view != ViewKind::Uniform && self.view_size < 2 {
            return Some(format!("view_size: {} is below 2", self.view_size));
        }
        if self.view != ViewKind::Uniform && self.gossip_period.us() <= 0 {
            return Some("gossip_period: must be positive".into());
        }
        if self.failure_timeout.us() <= 0 {
            return Some("failure_timeout: must be positive".into());
        }
        if self.ping_interval.us() <= 0 {
            return Some("ping_interval: must be positive".into());
        }
        if self.net_delay.us() < 0 {
            return Some("net_delay: must not be negative".into());
        }
        let improved =
            self.self_assignment || self.probe_propagation || self.view != ViewKind::Uniform;
        if self.scheduler == Scheduler::One && improved {
            return Some(
                "scheduler: \"one\" masters every job at a scheduler apart from the workers, which seed 002's improvements need (a master that is a worker, gossip between masters): set self_assignment and probe_propagation to false and view to \"uniform\", or scheduler to \"ring\"".into(),
            );
        }
        if self.draws != ProbeDraws::Own && self.scheduler != Scheduler::One {
            return Some(
                "draws: the Sparrow authors' draws are their one scheduler's: set scheduler to \"one\", or draws to \"own\"".into(),
            );
        }
        None
    }
}
