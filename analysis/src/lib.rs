//! Reading what cellsim writes: statistics of ingested traces ([`stats`], `cellsim stats`) and
//! run reports ([`report`], `cellsim report`) with the settings that tell runs apart
//! ([`settings`]) and their allocation classes hour by hour ([`hourly`]), their wall-clock profile ([`timing`]) and the allocation-class figure
//! ([`figure`], `cellsim report --plot`); the seeds' experiments as grids of runs
//! ([`experiment`], `cellsim experiment`).
#![deny(missing_docs)]

pub mod deadlines;
pub mod error;
pub mod experiment;
pub mod figure;
pub mod hourly;
pub mod paper;
mod parts;
pub mod percentile;
pub mod policy_tables;
pub mod report;
pub mod settings;
pub mod stats;
pub mod timing;

pub use error::{AnalysisError, Result};
