//! Ingest of the real GCD 2011 sample in `../shared/gcd-sample`, checked against counts taken
//! independently from the raw CSV files (issue 2) and against individual raw rows.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Int64Type, UInt8Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use ingest::{Dataset, IngestOptions, Progress, Table};

fn sample_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/gcd-sample")
}

/// Ingests the sample once for all tests of this file.
fn ingested() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = tempfile::tempdir().unwrap();
        ingest::ingest(
            &sample_dir(),
            out.path(),
            &IngestOptions::default(),
            &Progress::default(),
        )
        .expect("the real sample ingests");
        out
    })
    .path()
}

fn read_all(table: Table, columns: &[&str]) -> RecordBatch {
    let ds = Dataset::open(ingested(), table).unwrap().unwrap();
    let batches: Vec<RecordBatch> = ds.batches(columns).unwrap().map(Result::unwrap).collect();
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

#[test]
fn task_events_counts_match_the_raw_file() {
    let b = read_all(
        Table::TaskEvents,
        &[
            "time",
            "job_id",
            "task_index",
            "machine_id",
            "event_type",
            "cpu_request",
        ],
    );
    assert_eq!(b.num_rows(), 320_000);
    let time = b.column(0).as_primitive::<Int64Type>();
    let job = b.column(1).as_primitive::<UInt64Type>();
    let index = b.column(2).as_primitive::<UInt32Type>();
    let machine = b.column(3).as_primitive::<UInt64Type>();
    let event = b.column(4).as_primitive::<UInt8Type>();
    let cpu = b.column(5).as_primitive::<Float32Type>();
    let mut per_type: HashMap<u8, usize> = HashMap::new();
    for e in event.values() {
        *per_type.entry(*e).or_default() += 1;
    }
    let expected = [
        (0, 160_442),
        (1, 149_112),
        (2, 315),
        (3, 194),
        (4, 8_242),
        (5, 1_695),
    ];
    assert_eq!(
        per_type,
        expected.into_iter().collect::<HashMap<u8, usize>>()
    );
    let jobs: HashSet<u64> = job.values().iter().copied().collect();
    assert_eq!(jobs.len(), 4_235);
    let tasks: HashSet<(u64, u32)> = job
        .values()
        .iter()
        .copied()
        .zip(index.values().iter().copied())
        .collect();
    assert_eq!(tasks.len(), 158_771);
    let machines: HashSet<u64> = machine.iter().flatten().collect();
    assert_eq!(machines.len(), 12_489);
    assert_eq!(time.values().iter().filter(|t| **t == 0).count(), 277_321);
    assert_eq!(cpu.null_count(), 291, "empty CPU requests are nulls");
    assert!(
        cpu.iter().flatten().all(|c| (0.0..=1.0).contains(&c)),
        "requests are normalised"
    );
    assert!(time.values().is_sorted(), "sorted by time");
}

#[test]
fn machine_events_counts_match_the_raw_file() {
    let b = read_all(Table::MachineEvents, &["machine_id", "event_type", "cpus"]);
    assert_eq!(b.num_rows(), 37_780);
    let ids: HashSet<u64> = b
        .column(0)
        .as_primitive::<UInt64Type>()
        .values()
        .iter()
        .copied()
        .collect();
    assert_eq!(ids.len(), 12_583);
    let mut per_type = [0usize; 3];
    for e in b.column(1).as_primitive::<UInt8Type>().values() {
        per_type[*e as usize] += 1;
    }
    assert_eq!(per_type, [21_443, 8_957, 7_380]);
    assert_eq!(b.column(2).null_count(), 32);
}

#[test]
fn job_events_parts_keep_their_row_counts() {
    let ds = Dataset::open(ingested(), Table::JobEvents)
        .unwrap()
        .unwrap();
    let rows: Vec<usize> = ds
        .files()
        .iter()
        .map(|f| {
            let file = std::fs::File::open(f).unwrap();
            parquet::file::reader::FileReader::metadata(
                &parquet::file::serialized_reader::SerializedFileReader::new(file).unwrap(),
            )
            .file_metadata()
            .num_rows() as usize
        })
        .collect();
    assert_eq!(rows, vec![10_704, 3_099]);
}

/// Finds the row of a batch where `pred` holds; panics when none does.
fn row_where(b: &RecordBatch, pred: impl Fn(usize) -> bool) -> usize {
    (0..b.num_rows()).find(|&i| pred(i)).expect("row present")
}

fn dict_str(b: &RecordBatch, col: usize, row: usize) -> Option<String> {
    let d = b
        .column(col)
        .as_dictionary::<arrow_array::types::Int32Type>();
    if d.is_null(row) {
        return None;
    }
    let values = d.values().as_string::<i32>();
    Some(values.value(d.keys().value(row) as usize).to_string())
}

#[test]
fn spot_checked_task_rows_match_field_by_field() {
    let all: Vec<&str> = Table::TaskEvents.columns().iter().map(|c| c.name).collect();
    let b = read_all(Table::TaskEvents, &all);
    let u64s = |c: usize| b.column(c).as_primitive::<UInt64Type>().clone();
    let (job, machine) = (u64s(2), u64s(4));
    let index = b.column(3).as_primitive::<UInt32Type>().clone();
    let time = b.column(0).as_primitive::<Int64Type>().clone();
    let f32s = |c: usize| b.column(c).as_primitive::<Float32Type>().clone();
    let u8s = |c: usize| b.column(c).as_primitive::<UInt8Type>().clone();

    // 0,2,3418309,0,4155527081,0,70s3v5qR...,3,9,,,,
    let r = row_where(&b, |i| job.value(i) == 3_418_309 && index.value(i) == 0);
    assert_eq!(time.value(r), 0);
    assert_eq!(u8s(1).value(r), 2);
    assert_eq!(machine.value(r), 4_155_527_081);
    assert_eq!(u8s(5).value(r), 0);
    assert_eq!(
        dict_str(&b, 6, r).unwrap(),
        "70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo="
    );
    assert_eq!((u8s(7).value(r), u8s(8).value(r)), (3, 9));
    for c in 9..=12 {
        assert!(b.column(c).is_null(r), "column {c} is empty in the raw row");
    }

    // 0,,6221861800,19402,,0,huEqgBuT...,0,0,0.0125,0.0159,0.0004044,0
    let r = row_where(&b, |i| {
        job.value(i) == 6_221_861_800 && index.value(i) == 19_402
    });
    assert!(b.column(1).is_null(r) && machine.is_null(r));
    assert_eq!(
        (u8s(5).value(r), u8s(7).value(r), u8s(8).value(r)),
        (0, 0, 0)
    );
    assert_eq!(
        (f32s(9).value(r), f32s(10).value(r), f32s(11).value(r)),
        (0.0125, 0.0159, 0.0004044)
    );
    assert!(!b.column(12).as_boolean().value(r));

    // Last row: 1734478037,,6251717526,148,3349183774,4,fJYecl...,0,2,0.02499,0.03339,0.0003862,1
    let r = b.num_rows() - 1;
    assert_eq!(
        (time.value(r), job.value(r), index.value(r)),
        (1_734_478_037, 6_251_717_526, 148)
    );
    assert_eq!(
        (machine.value(r), u8s(5).value(r), u8s(8).value(r)),
        (3_349_183_774, 4, 2)
    );
    assert_eq!(f32s(10).value(r), 0.03339);
    assert!(b.column(12).as_boolean().value(r));
    assert_eq!(
        dict_str(&b, 6, r).unwrap(),
        "fJYeclskJqPWsAT6TX/r9X5OiIZpSEb2PBGliYAOMxM="
    );
}

#[test]
fn spot_checked_machine_and_job_rows() {
    let all: Vec<&str> = Table::MachineEvents
        .columns()
        .iter()
        .map(|c| c.name)
        .collect();
    let m = read_all(Table::MachineEvents, &all);
    let id = m.column(1).as_primitive::<UInt64Type>().clone();
    // 0,5,0,HofLGzk1...,0.5,0.2493 (the first row)
    assert_eq!(m.column(0).as_primitive::<Int64Type>().value(0), 0);
    assert_eq!(id.value(0), 5);
    assert_eq!(
        dict_str(&m, 3, 0).unwrap(),
        "HofLGzk1Or/8Ildj2+Lqv0UGGvY82NLoni8+J/Yy0RU="
    );
    assert_eq!(m.column(5).as_primitive::<Float32Type>().value(0), 0.2493);
    // 113019603442,6264344062,0,JQ1tVQBM...,, (empty capacities)
    let r = row_where(&m, |i| {
        id.value(i) == 6_264_344_062 && m.column(4).is_null(i)
    });
    assert_eq!(
        m.column(0).as_primitive::<Int64Type>().value(r),
        113_019_603_442
    );
    assert!(m.column(5).is_null(r));
    // Last row: 2506135493517,4246147567,1,HofLGzk1...,0.5,0.749
    let last = m.num_rows() - 1;
    assert_eq!(id.value(last), 4_246_147_567);
    assert_eq!(m.column(2).as_primitive::<UInt8Type>().value(last), 1);
    assert_eq!(m.column(4).as_primitive::<Float32Type>().value(last), 0.5);

    let all: Vec<&str> = Table::JobEvents.columns().iter().map(|c| c.name).collect();
    let j = read_all(Table::JobEvents, &all);
    let job = j.column(2).as_primitive::<UInt64Type>().clone();
    // Part 1, first row: 5620274759,,6252007148,4,AL1ptJgz...,0,v9ts2JYv...,8eJUX2sm...
    let r = row_where(&j, |i| {
        job.value(i) == 6_252_007_148 && j.column(3).as_primitive::<UInt8Type>().value(i) == 4
    });
    assert_eq!(
        j.column(0).as_primitive::<Int64Type>().value(r),
        5_620_274_759
    );
    assert!(j.column(1).is_null(r));
    assert_eq!(
        dict_str(&j, 4, r).unwrap(),
        "AL1ptJgzhEaoLf97k5xU6Uc2VO0yUaPQd/feJ5LMWhA="
    );
    assert_eq!(j.column(5).as_primitive::<UInt8Type>().value(r), 0);
    assert_eq!(
        dict_str(&j, 7, r).unwrap(),
        "8eJUX2smexw6vuP11WVFleSoOZQT7UEsTxYigrSyMjw="
    );
}

#[test]
fn unknown_machines_in_task_events_are_kept() {
    let machines: HashSet<u64> = {
        let b = read_all(Table::MachineEvents, &["machine_id"]);
        b.column(0)
            .as_primitive::<UInt64Type>()
            .values()
            .iter()
            .copied()
            .collect()
    };
    let b = read_all(Table::TaskEvents, &["machine_id"]);
    let mut unknown: Vec<u64> = b
        .column(0)
        .as_primitive::<UInt64Type>()
        .iter()
        .flatten()
        .filter(|m| !machines.contains(m))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    unknown.sort();
    assert_eq!(unknown, vec![294_935_191, 1_436_491_597, 4_284_920_557]);
}

/// The ingested files tell pandas the nullable dtypes of their optional integer and boolean
/// columns (the official schema's non-mandatory ones), so `pandas.read_parquet` keeps machine
/// IDs and codes exact instead of turning them into float64.
#[test]
fn ingested_files_name_pandas_nullable_dtypes() {
    let ds = Dataset::open(ingested(), Table::TaskEvents)
        .unwrap()
        .unwrap();
    let file = std::fs::File::open(&ds.files()[0]).unwrap();
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let dtypes = ingest::pandas::pandas_dtypes(reader.schema());
    let expected: HashMap<String, String> = [
        ("missing_info", "UInt8"),
        ("machine_id", "UInt64"),
        ("scheduling_class", "UInt8"),
        ("different_machines", "boolean"),
    ]
    .into_iter()
    .map(|(c, t)| (c.to_string(), t.to_string()))
    .collect();
    assert_eq!(dtypes, expected);
}

/// Tables ingested a few at a time into one directory are all listed in its summary (a second
/// ingest used to list only its own tables, leaving the first ones on disk but unlisted); an
/// ingest that fails while converting leaves the earlier tables and their summary as they were.
#[test]
fn tables_ingested_a_few_at_a_time_are_all_listed() {
    let out = tempfile::tempdir().unwrap();
    let ingest_into = |raw: &Path, tables: Vec<Table>| {
        let options = IngestOptions {
            tables,
            ..IngestOptions::default()
        };
        ingest::ingest(raw, out.path(), &options, &Progress::default())
    };
    let listed = || {
        let summary = ingest::IngestSummary::load(out.path()).unwrap();
        let rows = |t: &str| summary.tables.get(t).map(|t| t.rows);
        (rows("machine_events"), rows("job_events"))
    };
    ingest_into(&sample_dir(), vec![Table::MachineEvents]).unwrap();
    ingest_into(&sample_dir(), vec![Table::JobEvents]).unwrap();
    assert_eq!(listed(), (Some(37_780), Some(13_803)));

    let bad = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(bad.path().join("job_events")).unwrap();
    std::fs::write(
        bad.path().join("job_events/part-00000-of-00001.csv"),
        "0,,x,0,u,0,n,l\n",
    )
    .unwrap();
    ingest_into(bad.path(), vec![Table::JobEvents]).unwrap_err();
    assert_eq!(listed(), (Some(37_780), Some(13_803)));
}

/// A generated cell of `machines` over `hours` (seed `seed`) in `root/trace`, its machine and
/// task events ingested into `root/parquet`, which it returns.
fn generated_events(root: &Path, machines: u32, hours: f64, seed: u64) -> PathBuf {
    let (trace, out) = (root.join("trace"), root.join("parquet"));
    let config = ingest::synth::GenConfig {
        machines,
        hours,
        seed,
        part_hours: 1.0,
        held_jobs: true,
    };
    ingest::synth::generate(&trace, &config, &ingest::synth::GenProgress::default()).unwrap();
    let options = IngestOptions {
        tables: vec![Table::MachineEvents, Table::TaskEvents],
        ..IngestOptions::default()
    };
    ingest::ingest(&trace, &out, &options, &Progress::default()).unwrap();
    out
}

/// Task events after the t = 0 rows per minute and per machine of `dir`'s ingested trace, with
/// the SUBMITs among them: rows with a time in the window, over the minutes from the window's
/// start (600 s) to the last row; machines = those added at t = 0.
fn event_rates_per_machine_minute(dir: &Path) -> (f64, f64) {
    let open = |table| Dataset::open(dir, table).unwrap().unwrap();
    let machines: HashSet<u64> = open(Table::MachineEvents)
        .batches(&["time", "machine_id", "event_type"])
        .unwrap()
        .map(Result::unwrap)
        .flat_map(|b| {
            let time = b.column(0).as_primitive::<Int64Type>().clone();
            let id = b.column(1).as_primitive::<UInt64Type>().clone();
            let kind = b.column(2).as_primitive::<UInt8Type>().clone();
            (0..b.num_rows())
                .filter(move |&i| time.value(i) == 0 && kind.value(i) == 0)
                .map(move |i| id.value(i))
                .collect::<Vec<_>>()
        })
        .collect();
    let (mut events, mut submits, mut last_us) = (0u64, 0u64, 0i64);
    for b in open(Table::TaskEvents)
        .batches(&["time", "event_type"])
        .unwrap()
    {
        let b = b.unwrap();
        let time = b.column(0).as_primitive::<Int64Type>();
        let kind = b.column(1).as_primitive::<UInt8Type>();
        for i in (0..b.num_rows()).filter(|&i| time.value(i) > 0) {
            events += 1;
            submits += u64::from(kind.value(i) == 0);
            last_us = last_us.max(time.value(i));
        }
    }
    let machine_minutes = machines.len() as f64 * (last_us - 600_000_000) as f64 / 60e6;
    (
        events as f64 / machine_minutes,
        submits as f64 / machine_minutes,
    )
}

/// The synthetic cell's churn is the real cell's: its task events and SUBMITs per machine and
/// minute are within a factor 1.5 of the real 8.5 h's (`../shared/gcd-8h`): 809,669 task events
/// and 276,746 SUBMITs after t = 0 on 12,477 machines, 0.1295 and 0.0443 per machine-minute
/// (counted with pandas from the same files). The real sample's first 19 minutes are busier
/// (~0.18 and ~0.068). A generator whose running tasks all turn over within hours gives
/// several times as many (1.3 events per machine-minute before the services); the one
/// calibrated on the sample's first minutes gave twice the 8.5 h's SUBMITs.
#[test]
fn the_synthetic_cell_has_the_real_cells_event_rate() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real");
    let options = IngestOptions {
        tables: vec![Table::MachineEvents, Table::TaskEvents],
        ..IngestOptions::default()
    };
    let gcd_8h = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/gcd-8h");
    ingest::ingest(&gcd_8h, &real, &options, &Progress::default()).unwrap();
    let (real_events, real_submits) = event_rates_per_machine_minute(&real);
    assert!(
        (real_events - 0.1295).abs() < 5e-4 && (real_submits - 0.0443).abs() < 5e-4,
        "{real_events} {real_submits}"
    );
    let generated = tempfile::tempdir().unwrap();
    let out = generated_events(generated.path(), 1_000, 2.0, 3);
    let (events, submits) = event_rates_per_machine_minute(&out);
    let (events_ratio, submits_ratio) = (events / real_events, submits / real_submits);
    assert!(
        (1.0 / 1.5..1.5).contains(&events_ratio),
        "{events} {real_events}"
    );
    assert!(
        (1.0 / 1.5..1.5).contains(&submits_ratio),
        "{submits} {real_submits}"
    );
}

/// A generated cell of the real cell's size (12,583 machines, seed 1) over its first hour,
/// ingested once for the tests that compare its t = 0 tasks with the real sample's.
fn generated_real_size() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, out) = DIR.get_or_init(|| {
        let root = tempfile::tempdir().unwrap();
        let out = generated_events(root.path(), 12_583, 1.0, 1);
        (root, out)
    });
    out
}

/// `dir`'s task events at time 0 of `event_type` (0 SUBMIT, 1 SCHEDULE): each row's priority,
/// CPU request and memory request (`None` where the row has none).
fn t0_requests(dir: &Path, event_type: u8) -> Vec<(u8, Option<f32>, Option<f32>)> {
    let mut rows = Vec::new();
    let columns = [
        "time",
        "event_type",
        "priority",
        "cpu_request",
        "memory_request",
    ];
    for b in Dataset::open(dir, Table::TaskEvents)
        .unwrap()
        .unwrap()
        .batches(&columns)
        .unwrap()
    {
        let b = b.unwrap();
        let time = b.column(0).as_primitive::<Int64Type>();
        let kind = b.column(1).as_primitive::<UInt8Type>();
        let priority = b.column(2).as_primitive::<UInt8Type>();
        let cpu = b.column(3).as_primitive::<Float32Type>();
        let memory = b.column(4).as_primitive::<Float32Type>();
        let value = |c: &arrow_array::Float32Array, i| c.is_valid(i).then(|| c.value(i));
        rows.extend(
            (0..b.num_rows())
                .filter(|&i| time.value(i) == 0 && kind.value(i) == event_type)
                .map(|i| (priority.value(i), value(cpu, i), value(memory, i))),
        );
    }
    rows
}

/// The memory requests of `dir`'s t = 0 SUBMIT rows that carry one: their count, the share
/// above 0.2 (a fifth of the largest machine), their mean and their 99th percentile (the value
/// at index 0.99 n of the sorted requests).
fn t0_memory_requests(dir: &Path) -> (usize, f64, f64, f64) {
    let mut requests: Vec<f32> = (t0_requests(dir, 0).into_iter())
        .filter_map(|(_, _, memory)| memory)
        .collect();
    requests.sort_by(f32::total_cmp);
    let n = requests.len();
    let above = requests.iter().filter(|&&m| m > 0.2).count();
    let mean = requests.iter().map(|&m| m as f64).sum::<f64>() / n as f64;
    let p99 = requests[(0.99 * n as f64) as usize] as f64;
    (n, above as f64 / n as f64, mean, p99)
}

/// The synthetic cell's memory requests have the real cell's tail (issue 33 item 7): over the
/// t = 0 tasks of a cell of the real cell's size, the share above 0.2 is under twice the real
/// sample's and the 99th percentile within 20 % of it, at the mean within 15 %. A job's tasks
/// share one size, so t = 0 tails vary with the seed and the cell (p99 0.117 to 0.163 between
/// seeds and sizes; this cell's is 0.162). The real figures were taken from the raw CSV files
/// with pandas: 144,339 t = 0 SUBMIT rows, 144,048 with a memory request, 705 of
/// them above 0.2 (0.49 %), mean 0.04165, p99 0.1592. The generator's former sigma of 0.7 gave
/// 2.1 % above 0.2 and a p99 of 0.24: the large tasks its Borg left waiting, which MASB ran.
#[test]
fn the_synthetic_cells_memory_requests_have_the_real_tail() {
    let (n, real_above, real_mean, real_p99) = t0_memory_requests(ingested());
    assert_eq!(n, 144_048);
    assert_eq!((real_above * n as f64).round() as usize, 705);
    assert!((real_mean - 0.04165).abs() < 1e-4, "{real_mean}");
    assert!((real_p99 - 0.1592).abs() < 1e-4, "{real_p99}");

    let (_, above, mean, p99) = t0_memory_requests(generated_real_size());
    let line = format!("ours: {above:.4} above 0.2, mean {mean:.4}, p99 {p99:.4}");
    assert!(above < 2.0 * real_above, "{line}");
    assert!((p99 / real_p99 - 1.0).abs() < 0.20, "{line}");
    assert!((mean / real_mean - 1.0).abs() < 0.15, "{line}");
}

/// The tasks running at t = 0 in `dir` (its t = 0 SCHEDULE rows with both requests): their
/// count, the production (priority >= 9) share, and the ratio of a production task's mean CPU
/// and memory request to another's.
fn t0_running_production(dir: &Path) -> (usize, f64, f64, f64) {
    let (mut n, mut production) = (0usize, 0usize);
    let mut sums = [[0.0f64; 2]; 2]; // [production?][cpu, memory]
    for (priority, cpu, memory) in t0_requests(dir, 1) {
        let (Some(cpu), Some(memory)) = (cpu, memory) else {
            continue;
        };
        let is_production = priority >= 9;
        n += 1;
        production += usize::from(is_production);
        let sum = &mut sums[usize::from(is_production)];
        sum[0] += cpu as f64;
        sum[1] += memory as f64;
    }
    let other = (n - production) as f64;
    let ratio = |r: usize| (sums[1][r] / production as f64) / (sums[0][r] / other);
    (n, production as f64 / n as f64, ratio(0), ratio(1))
}

/// The synthetic cell's production tasks are the large ones, as the real cell's (issue 33
/// items 6-7): over the tasks running at t = 0, a production task requests 2.49 times the CPU
/// and 2.31 times the memory of another in the real sample; the generated cell's ratios are
/// within 20 % of those (they were 0.89 and 0.86 when production was many small services, which
/// made the long-running tasks the cheap ones to migrate). Production is 42 % of the real
/// tasks; the generated cell holds production's share of the resources at SPEC 3.1's figures,
/// which with those ratios makes it 54 % (`synth/model.rs` says why), so the test asks 40-60 %.
/// The real figures were taken from the raw CSV files with pandas: 132,982 t = 0 SCHEDULE rows,
/// 56,053 production; mean requests CPU 0.08621 / 0.03458, memory 0.06116 / 0.02652.
#[test]
fn the_synthetic_cells_production_tasks_are_the_large_ones() {
    let (n, real_share, real_cpu, real_memory) = t0_running_production(ingested());
    assert_eq!(n, 132_982);
    assert_eq!((real_share * n as f64).round() as usize, 56_053);
    assert!((real_cpu - 2.493).abs() < 1e-3, "{real_cpu}");
    assert!((real_memory - 2.306).abs() < 1e-3, "{real_memory}");

    let (_, share, cpu, memory) = t0_running_production(generated_real_size());
    let line = format!("ours: production {share:.3}, CPU x{cpu:.2}, memory x{memory:.2}");
    assert!((0.40..0.60).contains(&share), "{line}");
    assert!((cpu / real_cpu - 1.0).abs() < 0.20, "{line}");
    assert!((memory / real_memory - 1.0).abs() < 0.20, "{line}");
}
