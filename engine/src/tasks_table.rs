//! The `tasks/` table every queueing policy writes (the greedy placers, `omniscient`): one row per
//! task run that ended, with its submit, start and end times and its queueing time, in
//! microseconds. A run that ended while still waiting has no start (null) and no queueing time.

use crate::policy::{ColumnSpec, ColumnType, TableSpec, Value};
use crate::replay::EndedTask;

const fn column(name: &'static str, ty: ColumnType, nullable: bool) -> ColumnSpec {
    ColumnSpec { name, ty, nullable }
}

/// The table's columns.
const COLUMNS: [ColumnSpec; 6] = [
    column("job_id", ColumnType::U64, false),
    column("task_index", ColumnType::U32, false),
    column("submit_us", ColumnType::I64, false),
    // The end of the tick the task was placed in; null when it ended while waiting.
    column("start_us", ColumnType::I64, true),
    column("end_us", ColumnType::I64, false),
    // start_us - submit_us.
    column("queue_us", ColumnType::I64, true),
];

/// The table, for [`Policy::tables`](crate::policy::Policy::tables).
pub const TASKS: TableSpec = TableSpec {
    name: "tasks",
    columns: &COLUMNS,
};

/// Appends the rows of the runs in `ended` to `rows` (the table's values, row after row).
pub fn push_ended(rows: &mut Vec<Value>, ended: &[EndedTask]) {
    for e in ended {
        let start = e.start_us.map_or(Value::Null, Value::I64);
        let queue = e
            .start_us
            .map_or(Value::Null, |s| Value::I64(s - e.submit_us));
        rows.extend([
            Value::U64(e.job_id),
            Value::U32(e.task_index),
            Value::I64(e.submit_us),
            start,
            Value::I64(e.end_us),
            queue,
        ]);
    }
}
