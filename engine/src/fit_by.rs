//! What a placer admits a task by: the node's room in **requests** or in **usage** (`fit` in a
//! run's config; issue 57 item 5). One setting for every policy that places through the greedy
//! fit rule (`greedy/fit.rs`: first-fit, best-fit, random, the controlled placers, omniscient,
//! Sparrow's workers, the federation); MASB admits by its own node checks and borg-replay by the
//! trace's placements, each saying so in `report` ([`Policy::admits_by`](crate::policy::Policy::admits_by)).
//!
//! - `requests` (the default): a task fits when the requests of the node's tasks plus its own
//!   stay within the node's capacity. This is what every other simulator's first-fit and the
//!   seeds' baselines do (seed 002's slots, seed 004's shares, DSLab's FirstFit), and what a
//!   comparison with them needs: cellsim's first-fit matches DSLab's task by task only so.
//! - `usage`: a task fits when the node's usage plus the task's (its request until measured, or
//!   the usage model's share) stays within capacity, and a production task's requests with the
//!   node's production requests (seed 000's RUS rule, 6.4). Requests of non-production work may
//!   then exceed capacity, as Borg overcommits them; placers never queue while usage has room
//!   (first-fit on the real 8 h reaches 113 % of memory requested). cellsim's rule before
//!   issue 57.
//!
//! Invariant: the rule is fixed for a run: the cell holds the one the policy places by
//! ([`Policy::fit_rule`](crate::policy::Policy::fit_rule) of the config's `fit`), set each time
//! the run opens (not saved in snapshots, whose format version changed with the default).

use serde::{Deserialize, Serialize};

/// The fit rule's amounts (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitBy {
    /// Requests within capacity.
    #[default]
    Requests,
    /// Usage within capacity, and production requests within capacity.
    Usage,
}

impl FitBy {
    /// The name in configs and `report`.
    pub fn name(self) -> &'static str {
        match self {
            FitBy::Requests => "requests",
            FitBy::Usage => "usage",
        }
    }
}
