//! Reading what cellsim writes: statistics of ingested traces ([`stats`], `cellsim stats`) and
//! run reports ([`report`], `cellsim report`).
#![deny(missing_docs)]

pub mod error;
pub mod report;
pub mod stats;

pub use error::{AnalysisError, Result};
