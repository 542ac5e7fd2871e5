//! `RUN/schema.json`: what the run's policy declares beyond the engine's own tables — its
//! counters (the `counters/` columns after the tick's, summed in `summary.json`) and its tables
//! (`RUN/<table>/` parts, with their columns, types and which ones the report summarises) — so
//! that `cellsim report` and the notebook read whatever a policy writes without an edit of
//! their own. Written when a run starts (whole or not at all), rewritten by a resume.

use std::path::Path;

use serde::Serialize;

use crate::error::{EngineError, Result};
use crate::policy::{CounterKind, Policy, TableSpec};

/// What the run's policy declares, in the run directory (`run_dir.rs` lists the files).
pub const SCHEMA_FILE: &str = "schema.json";

/// A counter as the schema lists it.
#[derive(Debug, Clone, Serialize)]
pub struct CounterSchema {
    /// Its column and total name.
    pub name: &'static str,
    /// An amount (Float64) rather than a count (UInt64).
    pub amount: bool,
}

/// The content of `schema.json`.
#[derive(Debug, Clone, Serialize)]
pub struct RunSchema {
    /// The policy's name.
    pub policy: &'static str,
    /// Its counters, in column order.
    pub counters: Vec<CounterSchema>,
    /// Its tables.
    pub tables: &'static [TableSpec],
}

impl RunSchema {
    /// What `policy` declares.
    pub fn of<P: Policy>(policy: &P) -> RunSchema {
        let counter = |c: &CounterKind| CounterSchema {
            name: c.name,
            amount: c.amount,
        };
        RunSchema {
            policy: policy.name(),
            counters: policy.counter_kinds().iter().map(counter).collect(),
            tables: policy.tables(),
        }
    }

    /// Writes `RUN/schema.json`.
    pub fn write(&self, run_dir: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).expect("a schema serialises") + "\n";
        let path = run_dir.join(SCHEMA_FILE);
        ingest::atomic_file::write_atomically(&path, |w| w.write_all(text.as_bytes())).map_err(
            |e| EngineError::Io {
                path: e.path,
                source: e.source,
            },
        )
    }
}
