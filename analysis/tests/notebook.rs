//! The notebook `analysis/notebooks/run-overview.ipynb` against the outputs cellsim writes: it is
//! a clean nbformat 4 notebook (no outputs kept), every column it reads is in the table's schema,
//! every column it subscripts is one it read or made, and the classes and migration outcomes it
//! names are those cellsim writes. (Executing it needs pandas, pyarrow and matplotlib, which CI
//! does not have: `scripts/check-notebook.sh` runs it on real runs where they are installed.)

use std::collections::BTreeSet;

use engine::classify::NodeClass;
use engine::masb::migrations::{self, MigrationOutcome};
use engine::masb::policy::counter;
use engine::output::{counters_schema, nodes_schema, policy_table_schema, ticks_schema};

const NOTEBOOK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/notebooks/run-overview.ipynb");

/// The code cells' sources.
fn code_cells() -> Vec<String> {
    let text = std::fs::read_to_string(NOTEBOOK).unwrap();
    let notebook: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(notebook["nbformat"], 4);
    let cells = notebook["cells"].as_array().unwrap();
    let code: Vec<_> = cells
        .iter()
        .filter(|c| c["cell_type"] == "code")
        .map(|c| {
            assert_eq!(
                c["outputs"],
                serde_json::json!([]),
                "committed without outputs"
            );
            assert!(c["execution_count"].is_null());
            match &c["source"] {
                serde_json::Value::String(s) => s.clone(),
                lines => lines
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| l.as_str().unwrap())
                    .collect(),
            }
        })
        .collect();
    assert!(code.len() >= 6, "{} code cells", code.len());
    code
}

/// The quoted names in `text` (single or double quotes).
fn quoted(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(['"', '\'']) {
        let quote = rest.as_bytes()[start] as char;
        let after = &rest[start + 1..];
        let Some(end) = after.find(quote) else { break };
        names.push(after[..end].to_string());
        rest = &after[end + 1..];
    }
    names
}

/// The literal list or dict assigned to `name` at the start of a line: the text up to the first
/// line that closes it.
fn assigned<'a>(code: &'a [String], name: &str) -> &'a str {
    let start = format!("{name} = ");
    for cell in code {
        if let Some(at) = cell.find(&start)
            && (at == 0 || cell.as_bytes()[at - 1] == b'\n')
        {
            let text = &cell[at + start.len()..];
            let closing = if text.starts_with('{') { "\n}" } else { "]" };
            return &text[..text.find(closing).unwrap() + closing.len()];
        }
    }
    panic!("{name} is not assigned in the notebook");
}

fn field_names(schema: &arrow_schema::Schema) -> BTreeSet<String> {
    schema.fields().iter().map(|f| f.name().clone()).collect()
}

/// Every object key of the `schema.json` a baseline writes (its `tasks/` and `jobs/` tables).
fn schema_keys() -> BTreeSet<String> {
    let policy = engine::greedy::Greedy::<engine::greedy::FirstFit>::new(1, Default::default());
    let schema = engine::output::schema::RunSchema::of(&policy);
    let value = serde_json::to_value(&schema).unwrap();
    let mut keys = BTreeSet::new();
    let mut stack = vec![&value];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(map) => {
                keys.extend(map.keys().cloned());
                stack.extend(map.values());
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    keys
}

#[test]
fn the_notebook_reads_what_cellsim_writes() {
    let code = code_cells();
    // COLUMNS: one line per table, each column in that table's schema.
    let columns = assigned(&code, "COLUMNS");
    let schemas = [
        // The notebook's `ticks` joins `ticks/` and `counters/` on the tick.
        (
            "ticks",
            (field_names(&ticks_schema()).into_iter())
                .chain(field_names(&counters_schema(&counter::KINDS, &[])))
                .collect(),
        ),
        ("nodes", field_names(&nodes_schema())),
        (
            "migrations",
            field_names(&policy_table_schema(&migrations::TABLE)),
        ),
    ];
    let mut read = BTreeSet::new();
    let table_lines: Vec<&str> = columns.lines().filter(|l| l.contains(": [")).collect();
    assert_eq!(table_lines.len(), schemas.len(), "{columns}");
    for ((table, fields), line) in schemas.iter().zip(&table_lines) {
        let names = quoted(line);
        assert_eq!(&names[0], table, "{line}");
        assert!(names.len() > 3, "{line}");
        for column in &names[1..] {
            assert!(fields.contains(column), "{table} has no column {column}");
            read.insert(column.clone());
        }
    }
    // Every subscript by a literal name is a column read, a table or one the notebook makes.
    let all = code.concat();
    let mut known: BTreeSet<String> = read.clone();
    // The keys of a run's schema.json, which it reads to find the policy's own tables.
    known.extend(schema_keys());
    assert!(
        all.contains("\"schema.json\""),
        "the notebook reads the declared tables"
    );
    known.extend(schemas.iter().map(|(t, _)| t.to_string()));
    for assignment in all
        .split("] = ")
        .map(|before| before.rsplit('[').next().unwrap())
    {
        known.extend(quoted(assignment));
    }
    let mut subscripts = BTreeSet::new();
    for piece in all.split('[').skip(1) {
        let inner = piece.split(']').next().unwrap().trim();
        let is_literal = inner.len() > 2
            && (inner.starts_with('"') && inner.ends_with('"')
                || inner.starts_with('\'') && inner.ends_with('\''))
            && !inner[1..inner.len() - 1].contains(['"', '\'', ',']);
        if is_literal {
            subscripts.insert(inner[1..inner.len() - 1].to_string());
        }
    }
    assert!(subscripts.contains("pa") || all.contains("CLASSES]"));
    let unknown: Vec<_> = subscripts.difference(&known).collect();
    assert!(unknown.is_empty(), "subscripts of no column: {unknown:?}");
    // The classes it draws are those `ticks/` counts and `nodes/` names.
    let classes: BTreeSet<String> = quoted(assigned(&code, "CLASSES")).into_iter().collect();
    let written: BTreeSet<String> = NodeClass::ALL[1..]
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(classes, written);
    // The outcomes it compares with are those `migrations/` writes.
    let outcomes: BTreeSet<&str> = [
        MigrationOutcome::Started,
        MigrationOutcome::Completed,
        MigrationOutcome::Aborted,
        MigrationOutcome::Collision,
        MigrationOutcome::Failed,
    ]
    .map(MigrationOutcome::name)
    .into_iter()
    .collect();
    let compared: Vec<&str> = all
        .split("[\"outcome\"] == ")
        .skip(1)
        .map(|after| after.split('"').nth(1).unwrap())
        .collect();
    assert!(compared.len() >= 2, "{compared:?}");
    for outcome in compared {
        assert!(outcomes.contains(outcome), "no outcome {outcome}");
    }
}
