//! Bad input never panics and never leaves output that looks complete; `--skip-bad-rows` counts
//! instead. Also: out-of-order rows are sorted with ties in file order, and special values survive.

use std::io::Write;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt64Type};
use ingest::{Dataset, IngestError, IngestOptions, Progress, Table};

const MACHINE_ROWS: &str = "0,1,0,p,0.5,0.5\n0,2,0,p,1,1\n";

fn write(dir: &Path, rel: &str, body: &[u8]) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

fn gzip(text: &str) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap()
}

fn run(
    trace: &Path,
    out: &Path,
    options: &IngestOptions,
) -> Result<ingest::IngestSummary, IngestError> {
    ingest::ingest(trace, out, options, &Progress::default())
}

/// Runs an ingest expected to fail, checks the message, and that nothing looks complete.
fn expect_failure(trace: &Path, expected: &str) {
    let out = tempfile::tempdir().unwrap();
    let err = run(trace, out.path(), &IngestOptions::default()).unwrap_err();
    let message = err
        .to_string()
        .replace(&trace.display().to_string(), "TRACE");
    assert_eq!(message, expected);
    assert!(!out.path().join("ingest-summary.json").exists());
    let leftovers: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

#[test]
fn wrong_column_count_names_file_and_line() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "machine_events/part-00000-of-00001.csv",
        b"0,1,0,p,0.5,0.5\n0,2,0,p,1\n",
    );
    expect_failure(
        t.path(),
        "TRACE/machine_events/part-00000-of-00001.csv:2: expected 6 columns, found 5",
    );
}

/// Blank lines count: the error names the file's own line, not the csv reader's count (which
/// leaves out the blank lines it skips and would say 2 here).
#[test]
fn a_bad_row_after_blank_lines_names_its_own_line() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "machine_events/part-00000-of-00001.csv.gz",
        &gzip("0,1,0,p,0.5,0.5\n\n\r\n0,2,0,p,1\n"),
    );
    expect_failure(
        t.path(),
        "TRACE/machine_events/part-00000-of-00001.csv.gz:4: expected 6 columns, found 5",
    );
}

#[test]
fn unparsable_number_names_line_and_column() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "machine_events/part-00000-of-00001.csv.gz",
        &gzip("0,1,0,p,0.5,0.5\n5,2,0,p,half,1\n"),
    );
    expect_failure(
        t.path(),
        "TRACE/machine_events/part-00000-of-00001.csv.gz:2: column 5 (cpus): cannot parse \"half\" as a number",
    );
}

#[test]
fn unknown_event_code_is_rejected() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "task_events/part-00000-of-00001.csv",
        b"0,,7,0,,0,u,0,0,0.1,0.1,0,0\n10,,7,0,,9,u,0,0,0.1,0.1,0,0\n",
    );
    expect_failure(
        t.path(),
        "TRACE/task_events/part-00000-of-00001.csv:2: column 6 (event_type): unknown code 9, expected event type 0..=8 (SUBMIT, SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST, UPDATE_PENDING, UPDATE_RUNNING)",
    );
}

#[test]
fn empty_mandatory_field_is_rejected() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "machine_events/part-00000-of-00001.csv",
        b",1,0,p,0.5,0.5\n",
    );
    expect_failure(
        t.path(),
        "TRACE/machine_events/part-00000-of-00001.csv:1: column 1 (time): empty, but this column is mandatory",
    );
}

#[test]
fn truncated_gzip_is_a_clear_error() {
    let t = tempfile::tempdir().unwrap();
    let text: String = (0..20_000)
        .map(|i| format!("{i},{i},0,p,0.5,0.5\n"))
        .collect();
    let full = gzip(&text);
    write(
        t.path(),
        "machine_events/part-00000-of-00001.csv.gz",
        &full[..full.len() / 2],
    );
    let out = tempfile::tempdir().unwrap();
    let err = run(t.path(), out.path(), &IngestOptions::default()).unwrap_err();
    assert!(matches!(err, IngestError::Corrupt { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("part-00000-of-00001.csv.gz: corrupt or truncated input after line"),
        "{message}"
    );
    assert!(!out.path().join("ingest-summary.json").exists());
    assert!(!out.path().join("machine_events").exists());
}

#[test]
fn missing_directory_and_missing_tables() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("nope");
    let err = run(&missing, &t.path().join("out"), &IngestOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "trace directory {} does not exist or is not a directory",
            missing.display()
        )
    );

    let err = run(t.path(), &t.path().join("out"), &IngestOptions::default()).unwrap_err();
    assert!(matches!(err, IngestError::NoTables { .. }), "{err}");

    write(
        t.path(),
        "machine_events/part-00000-of-00001.csv",
        MACHINE_ROWS.as_bytes(),
    );
    let options = IngestOptions {
        tables: vec![Table::MachineEvents, Table::TaskUsage],
        ..IngestOptions::default()
    };
    let err = run(t.path(), &t.path().join("out"), &options).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "table task_usage has no .csv or .csv.gz files in {}",
            t.path().join("task_usage").display()
        )
    );
}

#[test]
fn one_bad_part_fails_the_whole_ingest_and_keeps_the_old_output_incomplete_looking() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "machine_events/part-00000-of-00001.csv",
        MACHINE_ROWS.as_bytes(),
    );
    write(
        t.path(),
        "job_events/part-00000-of-00002.csv",
        b"0,,1,0,u,0,n,l\n",
    );
    write(
        t.path(),
        "job_events/part-00001-of-00002.csv",
        b"5,,1,1,u,0,n\n",
    );
    let out = tempfile::tempdir().unwrap();
    run(t.path(), out.path(), &IngestOptions::default()).unwrap_err();
    assert!(!out.path().join("ingest-summary.json").exists());
    assert!(
        !out.path().join("machine_events").exists(),
        "good tables are not published either"
    );
    assert!(!out.path().join("job_events.partial").exists());
}

#[test]
fn skip_bad_rows_counts_and_reports() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "machine_events/part-00000-of-00001.csv",
        b"0,1,0,p,0.5,0.5\n0,2,7,p,1,1\n0,3,0,p\n9,4,2,p,x,1\n10,5,1,,,\n",
    );
    let out = tempfile::tempdir().unwrap();
    let options = IngestOptions {
        skip_bad_rows: true,
        ..IngestOptions::default()
    };
    let summary = run(t.path(), out.path(), &options).unwrap();
    let m = &summary.tables["machine_events"];
    assert_eq!((m.rows, m.bad_rows), (2, 3));
    assert_eq!(summary.bad_row_examples.len(), 3);
    assert!(summary.bad_row_examples[1].ends_with(":3: expected 6 columns, found 4"));
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("ingest-summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["tables"]["machine_events"]["bad_rows"], 3);
}

#[test]
fn unsorted_rows_are_sorted_with_ties_in_file_order_across_row_groups() {
    let t = tempfile::tempdir().unwrap();
    // Machine id records the file position; times go down and repeat.
    let times = [50i64, 10, 30, 10, 0, 50, 20, 10, i64::MAX, 0, 30];
    let text: String = times
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{t},{i},0,p,0.5,0.5\n"))
        .collect();
    write(
        t.path(),
        "machine_events/part-00000-of-00001.csv",
        text.as_bytes(),
    );
    let out = tempfile::tempdir().unwrap();
    let options = IngestOptions {
        rows_per_group: 3,
        ..IngestOptions::default()
    };
    let summary = run(t.path(), out.path(), &options).unwrap();
    assert!(summary.tables["machine_events"].parts[0].merged);
    let ds = Dataset::open(out.path(), Table::MachineEvents)
        .unwrap()
        .unwrap();
    let (mut got_t, mut got_i) = (Vec::new(), Vec::new());
    for b in ds.batches(&["time", "machine_id"]).unwrap() {
        let b = b.unwrap();
        got_t.extend(
            b.column(0)
                .as_primitive::<Int64Type>()
                .values()
                .iter()
                .copied(),
        );
        got_i.extend(
            b.column(1)
                .as_primitive::<UInt64Type>()
                .values()
                .iter()
                .copied(),
        );
    }
    let mut expected: Vec<(i64, u64)> = times
        .iter()
        .enumerate()
        .map(|(i, t)| (*t, i as u64))
        .collect();
    expected.sort_by_key(|(t, _)| *t); // stable: ties keep file order
    assert_eq!(got_t, expected.iter().map(|e| e.0).collect::<Vec<_>>());
    assert_eq!(got_i, expected.iter().map(|e| e.1).collect::<Vec<_>>());
    assert_eq!(summary.tables["machine_events"].max_time_us, Some(i64::MAX));
}

#[test]
fn attribute_values_keep_text_and_integer() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "machine_attributes/part-00000-of-00001.csv",
        b"0,1,a,17,0\n0,1,b,xyz=,0\n5,1,a,,1\n",
    );
    let out = tempfile::tempdir().unwrap();
    run(t.path(), out.path(), &IngestOptions::default()).unwrap();
    let ds = Dataset::open(out.path(), Table::MachineAttributes)
        .unwrap()
        .unwrap();
    let b = ds
        .batches(&[
            "attribute_value",
            "attribute_value_int",
            "attribute_deleted",
        ])
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let ints = b.column(1).as_primitive::<Int64Type>();
    assert_eq!(ints.iter().collect::<Vec<_>>(), vec![Some(17), None, None]);
    assert_eq!(b.column(0).null_count(), 1);
    assert!(b.column(2).as_boolean().value(2));
}

/// Tables ingested a few at a time into one directory stay listed in its summary; when the
/// earlier summary cannot be read (damaged, or an older cellsim's), the ingest is refused before
/// any work, naming it, instead of writing a summary that no longer lists the earlier tables.
#[test]
fn an_unreadable_earlier_summary_is_refused_before_any_work() {
    let trace = tempfile::tempdir().unwrap();
    write(
        trace.path(),
        "machine_events/part-00000-of-00001.csv",
        MACHINE_ROWS.as_bytes(),
    );
    write(
        trace.path(),
        "job_events/part-00000-of-00001.csv",
        b"5,,7,0,u,1,n,l\n",
    );
    let out = tempfile::tempdir().unwrap();
    let only = |t: Table| IngestOptions {
        tables: vec![t],
        ..Default::default()
    };
    run(trace.path(), out.path(), &only(Table::MachineEvents)).unwrap();
    let summary = out.path().join("ingest-summary.json");
    std::fs::write(&summary, "{\"version\": \"0.0.1\"").unwrap();
    let err = run(trace.path(), out.path(), &only(Table::JobEvents)).unwrap_err();
    assert!(matches!(err, IngestError::EarlierSummary { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "{}: the summary of an earlier ingest there cannot be read (",
            summary.display()
        )) && message
            .ends_with("remove it and ingest every table there again, or give another directory"),
        "{message}"
    );
    assert!(!out.path().join("job_events").exists());
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        "{\"version\": \"0.0.1\""
    );
    // Removed as the message says: the next ingest lists what it ingests.
    std::fs::remove_file(&summary).unwrap();
    let summary = run(trace.path(), out.path(), &only(Table::JobEvents)).unwrap();
    assert_eq!(summary.tables.keys().collect::<Vec<_>>(), ["job_events"]);
}
