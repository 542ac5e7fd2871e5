//! Seed 004's deadline-aware resource control by Nash bargaining: the deadline types as
//! weights on resource over time (`utility.rs`) and the optimisation over a horizon of slots,
//! solved as a conic program by Clarabel (`problem.rs`) or by an interior point that uses its
//! structure (`interior.rs`, both from `units.rs`'s scaled data), bargaining per class of jobs on large cells
//! (`classes.rs`), and controller `nbs` (`controller.rs`), which
//! re-solves it on arrivals, departures and capacity changes and hands its first slot to a
//! placer (`controlled/`).

pub mod classes;
pub mod controller;
mod dense;
mod interior;
pub mod problem;
mod scratch;
mod units;
pub mod utility;

pub use controller::{Nbs, NbsConfig};
pub use problem::{
    Allocation, Job, NbsError, Problem, Solver, fig_2_example, missed_hard_deadlines, solve,
    solve_by,
};
pub use utility::{Deadline, slot_weight};
