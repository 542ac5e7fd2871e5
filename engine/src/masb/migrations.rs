//! MASB's `migrations/` table (a table the policy declares, `Policy::tables`): one row per
//! migration attempt and outcome, the records the migration protocol keeps during a tick.
//!
//! Invariant: [`OUTCOMES`] lists the outcome names in code order, so a row's `outcome` code is
//! its [`MigrationOutcome`]'s `u8` value.

use crate::policy::{ColumnSpec, ColumnType, TableSpec, Value};

/// What happened to one migration attempt.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MigrationOutcome {
    /// The transfer started (resources now count on both nodes).
    Started = 0,
    /// The transfer finished; the task runs on the target.
    Completed = 1,
    /// The task ended, or a node went away, during the transfer.
    Aborted = 2,
    /// The target's final check refused it (usually two migrations colliding).
    Collision = 3,
    /// No candidate was left for the task.
    Failed = 4,
}

impl MigrationOutcome {
    /// Every outcome, in code order.
    pub const ALL: [MigrationOutcome; 5] = [
        MigrationOutcome::Started,
        MigrationOutcome::Completed,
        MigrationOutcome::Aborted,
        MigrationOutcome::Collision,
        MigrationOutcome::Failed,
    ];

    /// Lower-case name in outputs.
    pub fn name(self) -> &'static str {
        OUTCOMES[self as usize]
    }
}

/// One row of `migrations/`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MigrationRecord {
    /// Simulated time, microseconds: the start of the round it happened in (a completion: of the
    /// round after its transfer ended, or the end of the tick).
    pub time_us: i64,
    /// Trace job ID of the task.
    pub job_id: u64,
    /// Task index.
    pub task_index: u32,
    /// Machine ID of the source.
    pub source_machine: u64,
    /// Machine ID of the target, if one was chosen.
    pub target_machine: Option<u64>,
    /// Migration cost, MB (0 when no transfer started).
    pub cost_mb: f64,
    /// Forced migration.
    pub forced: bool,
    /// What happened.
    pub outcome: MigrationOutcome,
    /// Asked by a stable node's offload (`MasbConfig::offload_every_s`), not an overload.
    pub offload: bool,
}

/// The outcome names, in code order.
pub const OUTCOMES: [&str; 5] = ["started", "completed", "aborted", "collision", "failed"];

/// The columns; `offload` came last, after the others.
const COLUMNS: [ColumnSpec; 9] = [
    ColumnSpec::new("time_us", ColumnType::I64),
    ColumnSpec::new("job_id", ColumnType::U64),
    ColumnSpec::new("task_index", ColumnType::U32),
    ColumnSpec::new("source_machine", ColumnType::U64),
    ColumnSpec::new("target_machine", ColumnType::U64).nullable(),
    ColumnSpec::new("cost_mb", ColumnType::F64),
    ColumnSpec::new("forced", ColumnType::Bool),
    ColumnSpec::new("outcome", ColumnType::Name(&OUTCOMES)),
    ColumnSpec::new("offload", ColumnType::Bool),
];

/// The table.
pub const TABLE: TableSpec = TableSpec {
    name: "migrations",
    columns: &COLUMNS,
};

impl MigrationRecord {
    /// Appends the record as a row of [`TABLE`].
    pub fn push_row(&self, rows: &mut Vec<Value>) {
        rows.extend([
            Value::I64(self.time_us),
            Value::U64(self.job_id),
            Value::U32(self.task_index),
            Value::U64(self.source_machine),
            self.target_machine.map_or(Value::Null, Value::U64),
            Value::F64(self.cost_mb),
            Value::Bool(self.forced),
            Value::Code(self.outcome as u8),
            Value::Bool(self.offload),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_codes_name_their_outcomes() {
        for (code, outcome) in MigrationOutcome::ALL.into_iter().enumerate() {
            assert_eq!(outcome as usize, code);
            assert_eq!(OUTCOMES[code], outcome.name());
        }
    }
}
