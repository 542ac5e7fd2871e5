//! Constraint statistics: how many tasks carry constraints, per operator, and how many have a
//! constraint set so restrictive that only a handful of machines satisfy it.
//!
//! Matching is `ingest::codes::constraint_holds`, an absent attribute reading as empty text.

use std::collections::HashMap;

use ingest::codes::constraint_holds;
use ingest::columns::ConstraintRow;
use ingest::{Dataset, Table};
use serde::Serialize;

use super::machines::AttrValue;
use crate::error::Result;

/// At most this many qualifying machines makes a constraint set "very restrictive".
pub const HANDFUL: usize = 5;

/// One constraint as written in the trace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Constraint {
    /// Comparison operator code.
    pub op: u8,
    /// Attribute name hash.
    pub name: String,
    /// Value text (empty when absent).
    pub value: String,
    /// Integer reading of the value.
    pub value_int: Option<i64>,
}

impl Constraint {
    /// Whether a machine with `attrs` satisfies the constraint.
    pub fn matches(&self, attrs: Option<&HashMap<String, AttrValue>>) -> bool {
        let have = attrs.and_then(|a| a.get(&self.name));
        let (text, int) = have.map_or(("", None), |h| (h.0.as_str(), h.1));
        constraint_holds(self.op, text, int, self.value.as_str(), self.value_int)
    }
}

/// What task_constraints says.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConstraintStats {
    /// Whether the trace has a task_constraints table at all.
    pub present: bool,
    /// Constraint rows.
    pub rows: u64,
    /// Rows per operator (LESS_THAN, GREATER_THAN, EQUAL, NOT_EQUAL).
    pub per_operator: [u64; 4],
    /// Distinct tasks with at least one constraint.
    pub constrained_tasks: u64,
    /// Distinct constraint sets.
    pub distinct_sets: u64,
    /// Tasks whose set is satisfied by at most [`HANDFUL`] machines.
    pub restrictive_tasks: u64,
}

/// Reads task_constraints and matches each distinct set against every known machine.
pub fn constraint_stats(
    dir: &std::path::Path,
    machines: &HashMap<u64, HashMap<String, AttrValue>>,
    machine_ids: &[u64],
) -> Result<ConstraintStats> {
    let mut stats = ConstraintStats::default();
    let Some(ds) = Dataset::open(dir, Table::TaskConstraints)? else {
        return Ok(stats);
    };
    stats.present = true;
    // The latest constraint set of each task: rows of one task at one time form its set.
    let mut sets: HashMap<(u64, u32), (i64, Vec<Constraint>)> = HashMap::new();
    for batch in ds.batches(&ConstraintRow::COLUMNS)? {
        let b = batch?;
        for row in 0..b.num_rows() {
            let r = ConstraintRow::read(&b, row);
            stats.rows += 1;
            stats.per_operator[r.op as usize] += 1;
            let c = Constraint {
                op: r.op,
                name: r.name.to_string(),
                value: r.value.to_string(),
                value_int: r.value_int,
            };
            let entry = sets
                .entry((r.job_id, r.task_index))
                .or_insert((r.time_us, Vec::new()));
            if entry.0 != r.time_us {
                *entry = (r.time_us, Vec::new());
            }
            entry.1.push(c);
        }
    }
    stats.constrained_tasks = sets.len() as u64;
    let mut qualifying: HashMap<Vec<Constraint>, usize> = HashMap::new();
    for (_, set) in sets.values_mut() {
        set.sort_by(|a, b| (a.op, &a.name, &a.value).cmp(&(b.op, &b.name, &b.value)));
        let n = match qualifying.get(set) {
            Some(n) => *n,
            None => {
                let n = machine_ids
                    .iter()
                    .filter(|m| set.iter().all(|c| c.matches(machines.get(m))))
                    .count();
                qualifying.insert(set.clone(), n);
                n
            }
        };
        if n <= HANDFUL {
            stats.restrictive_tasks += 1;
        }
    }
    stats.distinct_sets = qualifying.len() as u64;
    Ok(stats)
}
