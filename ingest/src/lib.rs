//! GCD 2011 trace ingest and synthetic trace generation.
//!
//! - [`tables`] and [`codes`]: the trace's tables, columns and code values, in one place;
//!   [`columns`]: typed access to the ingested datasets' batches.
//! - [`ingest()`]: CSV(.gz) part files to time-sorted Parquet datasets (`cellsim ingest`).
//! - [`synth`]: a seeded synthetic cell written in the same CSV.gz layout (`cellsim gen`).
//! - [`scenario`]: the seeds' experiment workloads in the same layout, with side tables
//!   (`cellsim gen --scenario`).
//! - [`atomic_file`]: files written whole or not at all (summaries, run configs, snapshots).
#![deny(missing_docs)]

pub mod atomic_file;
pub mod chunk;
pub mod codes;
pub mod columns;
pub mod dataset;
pub mod error;
pub mod ingest;
pub mod pandas;
pub mod pyrandom;
pub mod rng;
pub mod scenario;
pub mod sort;
pub mod source;
pub mod synth;
pub mod tables;

pub use dataset::Dataset;
pub use error::{IngestError, Result};
pub use ingest::{IngestOptions, IngestSummary, Progress, ingest};
pub use tables::Table;
