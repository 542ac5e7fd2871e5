//! The data-oriented simulation core of cellsim, in layers: a module imports only from its own
//! layer (without a cycle) and the layers below it, checked by `tests/layers.rs`, which reads
//! this picture (per layer: `number name: modules`, then what the layer owns).
//!
//! ```text
//! 8 run:        run run_dir summary
//!               the run loop (run(), run_configured), the run directory, the run's summary
//! 7 registry:   policies config run_identity
//!               the registry of policies; the run's full config, which names one
//! 6 policies:   borg masb sparrow federation nbs omniscient hosted
//!               the policies of the seeds, each in its folder; a policy decided outside (Python)
//! 5 blocks:     greedy controlled match_memo
//!               shared building blocks: greedy placers, controllers over them, constraint matches
//! 4 mechanics:  executor active delay metrics output queue_outputs snapshot watchdog
//!               rounds and messages; what a run measures, writes and saves
//! 3 interface:  policy
//!               Policy, PolicySpec and RunSettings (what a policy may read of the run)
//! 2 cell:       cell replay deadlines phases
//!               the cell's columns, the trace replay driving them, the workload's terms
//! 1 rules:      trace scale classify fit_by release usage_model
//!               the trace's reader and the rules the cell applies
//! 0 base:       ids units sim_time ties csr error codec run_times preload surge parallel_time worker
//!               indices, units, time, errors, the snapshot file's encoding, the clock of parallel
//!               time, the helper threads beside the pool
//! ```
//!
//! - [`cell`]: node and task columns with their invariants; [`units`]: fixed-point amounts;
//!   [`match_memo`]: the nodes meeting each constraint set, memoised for the placers.
//! - [`trace`] and [`replay`]: streaming the ingested trace into the cell tick by tick.
//! - [`policy`] and [`executor`]: the policy interface and the parallel round executor;
//!   [`active`]: rounds that step only the agents with messages or a wake-up due; [`delay`]:
//!   messages delivered after a latency;
//!   [`preload`]: overlapping the cache misses of a batch of updates; [`surge`]: buffers giving
//!   back the room a surge left; [`worker`]: a helper thread handling requests in order.
//! - [`policies`]: the registry of the policies a run can be configured with; [`borg`]: the
//!   `borg-replay` policy; [`masb`]: seed 000's MASB; [`sparrow`]: seed 002's Sparrow;
//!   [`greedy`]: the first-fit, best-fit and random baselines.
//! - [`classify`], [`metrics`], [`output`], [`summary`]: what a run measures and writes.
//! - [`run()`]: the loop tying them together; [`config`]: its settings; [`snapshot`]: saving
//!   and resuming it ([`codec`]: the file's encoding); [`sim_time`]: simulated durations.
#![deny(missing_docs)]

pub mod active;
pub mod borg;
pub mod cell;
pub mod classify;
pub mod codec;
pub mod config;
pub mod controlled;
pub mod csr;
pub mod deadlines;
pub mod delay;
pub mod error;
pub mod executor;
pub mod federation;
pub mod fit_by;
pub mod greedy;
pub mod hosted;
pub mod ids;
pub mod masb;
pub mod match_memo;
pub mod metrics;
pub mod nbs;
pub mod omniscient;
pub mod output;
pub mod parallel_time;
pub mod phases;
pub mod policies;
pub mod policy;
pub mod preload;
pub mod queue_outputs;
pub mod release;
pub mod replay;
pub mod run;
pub mod run_dir;
pub mod run_identity;
pub mod run_times;
pub mod scale;
pub mod sim_time;
pub mod snapshot;
pub mod sparrow;
pub mod summary;
pub mod surge;
pub mod ties;
pub mod trace;
pub mod units;
pub mod usage_model;
pub mod watchdog;
pub mod worker;

pub use config::{InboxOrder, RunConfig};
pub use policies::PolicyConfig;

/// The build identity the binary hands over at start ([`set_build`]).
static BUILD: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// This build of cellsim: its version and, built from a git checkout, its commit (`modified`
/// when the tracked files differed from it), as the binary's `build.rs` found them and handed
/// them over ([`set_build`]); the engine's own version otherwise (tests, library use). Recorded
/// in every run's summary and snapshots, so a run resumed by another build says so. Not a
/// compile-time constant of the engine, so that a new commit recompiles only the binary.
pub fn build() -> &'static str {
    BUILD.get_or_init(|| format!("{} (engine library)", env!("CARGO_PKG_VERSION")))
}

/// Sets [`build`] (once, before any run; later calls change nothing).
pub fn set_build(identity: &str) {
    let _ = BUILD.set(identity.to_string());
}
pub use error::{EngineError, Result};
pub use run::{RunProgress, run, run_configured};
pub use summary::RunSummary;
