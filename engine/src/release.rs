//! When a policy that places the workload itself may first start a task: `release` in a run's
//! config (issue 57 item 3).
//!
//! - `submit` (the default): at its SUBMIT, as every policy did before. A policy then runs
//!   work the trace's scheduler left waiting: on the real 8.5 h (`../shared/gcd-8h`) Borg
//!   leaves ~11.4k tasks waiting all along, a few jobs of 300-5,000 large tasks, and MASB runs
//!   them (memory requested 112 % of the cell against Borg's 95 %).
//! - `trace-schedule`: at the trace's SCHEDULE of it (or at its SUBMIT when that is later, for
//!   a task that was scheduled before, a machine removal made it wait again): the trace
//!   decides **when** a task may start, the policy only **where** (and, for MASB, where it
//!   moves). A task the trace never schedules waits, as it did in the trace. This is how seed
//!   000 sets its experiments up as we read it: MASB "allocating the same workload as Borg"
//!   (section 7.4 (ii)), its throughput "similar" to Borg's (7.8), Table 4 comparing where
//!   the same tasks ran; the seed does not say what its simulator did with tasks Borg never
//!   started. It is an option, off by default, and `report` lists it among the settings.
//!
//! Borg's replay starts every task at its SCHEDULE whatever this says. Invariant: the rule is
//! fixed for a run: the cell holds it (set each time the run opens, not saved in snapshots),
//! and a held task is one still waiting whose current run the trace has not scheduled
//! (`Tasks::trace_sched_us`, which snapshots save), so a resumed run holds the same tasks.

use serde::{Deserialize, Serialize};

/// When a task may first start (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Release {
    /// At its SUBMIT.
    #[default]
    Submit,
    /// At the trace's SCHEDULE of it.
    TraceSchedule,
}

impl Release {
    /// True for the default, [`Release::Submit`] (left out of a written config, so older
    /// configs hash the same).
    pub fn is_submit(&self) -> bool {
        *self == Release::Submit
    }
}
