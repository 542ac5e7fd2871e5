//! Reading what cellsim writes: statistics of ingested traces ([`stats`], `cellsim stats`).
#![deny(missing_docs)]

pub mod error;
pub mod stats;

pub use error::{AnalysisError, Result};
