//! The GCD 2011 code tables: every integer code the trace uses, with its valid range and names.
//!
//! This module is the single place where a code value is given a meaning. The comparison-operator
//! mapping is recalled from the format document and not verified against it (SPEC section 3); if it
//! turns out wrong, this is the only table to change.

/// A closed set of integer codes: value `i` is valid when `i < labels.len()`, named `labels[i]`.
#[derive(Debug)]
pub struct CodeTable {
    /// What the code is, as used in error messages ("task event type").
    pub what: &'static str,
    /// Name of each code, indexed by its value.
    pub labels: &'static [&'static str],
}

impl CodeTable {
    /// Largest valid code.
    pub fn max(&self) -> u8 {
        (self.labels.len() - 1) as u8
    }

    /// Name of `code`, or `"?"` for a value outside the table.
    pub fn label(&self, code: u8) -> &'static str {
        self.labels.get(code as usize).copied().unwrap_or("?")
    }

    /// The valid range with names, for error messages: `0..=2 (ADD, REMOVE, UPDATE)`.
    pub fn describe(&self) -> String {
        format!(
            "{} 0..={} ({})",
            self.what,
            self.max(),
            self.labels.join(", ")
        )
    }
}

/// machine_events event type.
pub static MACHINE_EVENT: CodeTable = CodeTable {
    what: "machine event type",
    labels: &["ADD", "REMOVE", "UPDATE"],
};

/// job_events and task_events event type.
pub static TASK_EVENT: CodeTable = CodeTable {
    what: "event type",
    labels: &[
        "SUBMIT",
        "SCHEDULE",
        "EVICT",
        "FAIL",
        "FINISH",
        "KILL",
        "LOST",
        "UPDATE_PENDING",
        "UPDATE_RUNNING",
    ],
};

/// The missing-info field of job_events and task_events.
pub static MISSING_INFO: CodeTable = CodeTable {
    what: "missing info",
    labels: &[
        "SNAPSHOT_BUT_NO_TRANSITION",
        "NO_SNAPSHOT_OR_TRANSITION",
        "EXISTS_BUT_NO_CREATION",
    ],
};

/// Scheduling class, 3 = most latency-sensitive.
pub static SCHEDULING_CLASS: CodeTable = CodeTable {
    what: "scheduling class",
    labels: &["0", "1", "2", "3"],
};

/// Task priority 0..11; production is `>= PRODUCTION_PRIORITY`.
pub static PRIORITY: CodeTable = CodeTable {
    what: "priority",
    labels: &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"],
};

/// task_constraints comparison operator (recalled mapping, see the module doc).
pub static COMPARISON: CodeTable = CodeTable {
    what: "comparison operator",
    labels: &["LESS_THAN", "GREATER_THAN", "EQUAL", "NOT_EQUAL"],
};

/// Lowest priority of the production tier.
pub const PRODUCTION_PRIORITY: u8 = 9;

/// Highest priority of the gratis ("free") tier.
pub const GRATIS_MAX_PRIORITY: u8 = 1;

/// The tier of `priority` as the trace's documentation names them: 0 gratis (0-1), 1 middle
/// (2-8), 2 production (9-11).
pub fn priority_band(priority: u8) -> usize {
    if priority <= GRATIS_MAX_PRIORITY {
        0
    } else if priority < PRODUCTION_PRIORITY {
        1
    } else {
        2
    }
}

/// Machine event codes.
pub mod machine_event {
    /// The machine became available.
    pub const ADD: u8 = 0;
    /// The machine was removed (failure or maintenance).
    pub const REMOVE: u8 = 1;
    /// The machine's capacities changed.
    pub const UPDATE: u8 = 2;
}

/// Task and job event codes.
pub mod task_event {
    /// Became eligible for scheduling.
    pub const SUBMIT: u8 = 0;
    /// Placed on a machine.
    pub const SCHEDULE: u8 = 1;
    /// Descheduled by a higher-priority task, overcommit or machine loss.
    pub const EVICT: u8 = 2;
    /// Descheduled because of a task failure.
    pub const FAIL: u8 = 3;
    /// Completed normally.
    pub const FINISH: u8 = 4;
    /// Cancelled by the user or a driver program.
    pub const KILL: u8 = 5;
    /// Presumably terminated; the record is missing.
    pub const LOST: u8 = 6;
    /// Requests or constraints updated while pending.
    pub const UPDATE_PENDING: u8 = 7;
    /// Requests or constraints updated while running.
    pub const UPDATE_RUNNING: u8 = 8;

    /// True for the events that end a task's run (EVICT, FAIL, FINISH, KILL, LOST).
    pub fn is_terminal(code: u8) -> bool {
        (EVICT..=LOST).contains(&code)
    }
}

/// Comparison operator codes.
pub mod comparison {
    /// attribute < value (integer attributes).
    pub const LESS_THAN: u8 = 0;
    /// attribute > value (integer attributes).
    pub const GREATER_THAN: u8 = 1;
    /// attribute == value (empty value: attribute absent).
    pub const EQUAL: u8 = 2;
    /// attribute != value (empty value: attribute present).
    pub const NOT_EQUAL: u8 = 3;
}

/// Whether an attribute value satisfies `op want` — the one place the operators get meaning.
/// LESS_THAN and GREATER_THAN compare integer readings (false when either side has none, e.g. an
/// absent attribute); EQUAL and NOT_EQUAL compare values, where the caller passes its "absent"
/// value (empty text) for a machine without the attribute. Unknown operators never hold.
pub fn constraint_holds<V: PartialEq>(
    op: u8,
    have: V,
    have_int: Option<i64>,
    want: V,
    want_int: Option<i64>,
) -> bool {
    match (op, have_int, want_int) {
        (comparison::LESS_THAN, Some(a), Some(v)) => a < v,
        (comparison::GREATER_THAN, Some(a), Some(v)) => a > v,
        (comparison::EQUAL, ..) => have == want,
        (comparison::NOT_EQUAL, ..) => have != want,
        _ => false,
    }
}

/// The "after the trace window" timestamp, 2^63 - 1 microseconds.
pub const TIME_AFTER_TRACE_US: i64 = i64::MAX;

/// Start of the trace window: 600 s after the trace origin, in microseconds.
pub const TRACE_START_US: i64 = 600_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_tables_have_the_documented_ranges() {
        assert_eq!(MACHINE_EVENT.max(), 2);
        assert_eq!(TASK_EVENT.max(), 8);
        assert_eq!(
            TASK_EVENT.label(task_event::UPDATE_RUNNING),
            "UPDATE_RUNNING"
        );
        assert_eq!(PRIORITY.max(), 11);
        assert_eq!(COMPARISON.label(comparison::NOT_EQUAL), "NOT_EQUAL");
        assert_eq!(
            MACHINE_EVENT.describe(),
            "machine event type 0..=2 (ADD, REMOVE, UPDATE)"
        );
        // The trace documentation's tiers: 0-1 gratis, 2-8 middle, 9-11 production.
        let bands: Vec<usize> = (0..12).map(priority_band).collect();
        assert_eq!(bands, [0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2]);
        assert!(task_event::is_terminal(task_event::LOST));
        assert!(!task_event::is_terminal(task_event::SCHEDULE));
        assert!(!task_event::is_terminal(task_event::UPDATE_PENDING));
    }

    #[test]
    fn constraint_operators() {
        use comparison::*;
        assert!(constraint_holds(LESS_THAN, "3", Some(3), "4", Some(4)));
        assert!(!constraint_holds(LESS_THAN, "4", Some(4), "4", Some(4)));
        assert!(constraint_holds(GREATER_THAN, "5", Some(5), "4", Some(4)));
        assert!(
            !constraint_holds(GREATER_THAN, "", None, "4", Some(4)),
            "absent is not comparable"
        );
        assert!(
            !constraint_holds(LESS_THAN, "x", None, "4", Some(4)),
            "text is not comparable"
        );
        assert!(constraint_holds(EQUAL, "h", None, "h", None));
        assert!(
            constraint_holds(EQUAL, "", None, "", None),
            "EQUAL empty: attribute absent"
        );
        assert!(
            constraint_holds(NOT_EQUAL, "", None, "h", None),
            "absent differs from a value"
        );
        assert!(!constraint_holds(NOT_EQUAL, "", None, "", None));
        assert!(!constraint_holds(9, "h", None, "h", None));
    }
}
