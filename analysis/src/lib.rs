//! Reading what cellsim writes: statistics of ingested traces ([`stats`], `cellsim stats`) and
//! run reports ([`report`], `cellsim report`) with the settings that tell runs apart
//! ([`settings`]) and their wall-clock profile ([`timing`]).
#![deny(missing_docs)]

pub mod error;
pub mod report;
pub mod settings;
pub mod stats;
pub mod timing;

pub use error::{AnalysisError, Result};
