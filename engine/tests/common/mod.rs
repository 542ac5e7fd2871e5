//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use engine::{PolicyConfig, RunConfig, RunProgress, RunSummary};
use ingest::synth::{GenConfig, GenProgress, generate};
use ingest::{IngestOptions, Progress};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Writes `rows` as `dir/<table>/part-00000-of-00001.csv`.
pub fn write_table(dir: &Path, table: &str, rows: &str) {
    let t = dir.join(table);
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("part-00000-of-00001.csv"), rows).unwrap();
}

/// Ingests `trace` into `out`.
pub fn ingest_dir(trace: &Path, out: &Path) {
    ingest::ingest(trace, out, &IngestOptions::default(), &Progress::default()).unwrap();
}

/// A generated trace of `machines` machines over `hours` from `seed` (hourly parts) in
/// `root/trace`, as CSV: the directory.
pub fn generated_trace(root: &Path, machines: u32, hours: f64, seed: u64) -> PathBuf {
    let trace = root.join("trace");
    let config = GenConfig {
        machines,
        hours,
        seed,
        part_hours: 1.0,
        held_jobs: true,
    };
    generate(&trace, &config, &GenProgress::default()).unwrap();
    trace
}

/// [`generated_trace`] ingested into `root/parquet`: the Parquet directory.
pub fn generated_cell(root: &Path, machines: u32, hours: f64, seed: u64) -> PathBuf {
    let trace = generated_trace(root, machines, hours, seed);
    let parquet = root.join("parquet");
    ingest_dir(&trace, &parquet);
    parquet
}

/// Runs the policy `config` names.
pub fn run_policy(config: &RunConfig, trace: &Path, out: &Path) -> RunSummary {
    engine::run_configured(config, trace, out, &RunProgress::default(), None)
        .unwrap()
        .complete()
        .unwrap()
}

/// The snapshot run `run` took before tick `tick`.
pub fn snapshot_at(run: &Path, tick: u64) -> engine::snapshot::Snapshot {
    let at = engine::run_dir::list(run)
        .unwrap()
        .into_iter()
        .find(|p| p.ends_with(engine::run_dir::file_name(tick)))
        .unwrap_or_else(|| panic!("a snapshot at tick {tick} in {}", run.display()));
    engine::snapshot::Snapshot::open(&at).unwrap()
}

/// Resumes run `run` (of the policy `config` names) from its snapshot at tick `tick` to the end.
pub fn resume_from(config: &RunConfig, trace: &Path, run: &Path, tick: u64) {
    let snapshot = snapshot_at(run, tick);
    engine::run_configured(config, trace, run, &RunProgress::default(), Some(snapshot)).unwrap();
}

/// Runs `policy` (one not in the registry: a test's own) to completion.
pub fn run_with<P: engine::policy::Policy + Send>(
    config: &RunConfig,
    trace: &Path,
    out: &Path,
    policy: P,
) -> RunSummary {
    engine::run(config, trace, out, policy, &RunProgress::default(), None)
        .unwrap()
        .complete()
        .unwrap()
}

/// Runs borg-replay (whatever policy `config` names).
pub fn run_borg(config: &RunConfig, trace: &Path, out: &Path) -> RunSummary {
    let config = RunConfig {
        policy: PolicyConfig::default_of("borg-replay").unwrap(),
        ..config.clone()
    };
    run_policy(&config, trace, out)
}

/// Runs MASB: `config`'s settings when it names MASB, the defaults otherwise.
pub fn run_masb(config: &RunConfig, trace: &Path, out: &Path) -> RunSummary {
    let mut config = config.clone();
    if config.policy.kind() != "masb" {
        config.policy = PolicyConfig::default_of("masb").unwrap();
    }
    run_policy(&config, trace, out)
}

/// Seed 000 7.8's aggregates hold for a run: CPU used at 40-50 % of capacity, memory at 60-70 %.
pub fn assert_usage_as_in_the_paper(summary: &RunSummary) {
    let a = &summary.averages;
    let (cpu, mem) = (a.cpu_used_ratio, a.mem_used_ratio);
    assert!((0.40..0.50).contains(&cpu), "CPU used {cpu}");
    assert!((0.60..0.70).contains(&mem), "memory used {mem}");
}

/// MASB's configuration of record on the real trace, as shipped to users in
/// `slurm/masb-real-trace.toml` (read through `cellsim run --config`'s loader).
pub fn masb_of_record() -> RunConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../slurm/masb-real-trace.toml");
    RunConfig::from_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The default config with MASB.
pub fn masb_config() -> RunConfig {
    RunConfig {
        policy: PolicyConfig::default_of("masb").unwrap(),
        ..RunConfig::default()
    }
}

/// The Parquet files of a run's table directory, in name (= tick) order.
pub fn parts(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    files
}

/// Every batch of a Parquet file, or of every part of a table directory, concatenated.
pub fn read_parquet(path: &Path) -> RecordBatch {
    let files = if path.is_dir() {
        parts(path)
    } else {
        vec![path.to_path_buf()]
    };
    let mut batches = Vec::new();
    for f in files {
        let file = std::fs::File::open(f).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        batches.extend(reader.map(Result::unwrap));
    }
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

/// The bytes of every output file of a run that must not depend on threads or interruptions:
/// the parts of every deterministic table (`engine::output::deterministic_tables`: ticks/, nodes/
/// and the policy's own, such as migrations/), and samples.jsonl, with their names.
pub fn deterministic_outputs(run: &Path) -> Vec<(String, Vec<u8>)> {
    outputs_read_by(run, |part| std::fs::read(part).unwrap())
}

/// [`deterministic_outputs`] with each Parquet part re-encoded without the run's `cellsim.`
/// key-value metadata (`engine::output::without_file_metadata`: the bytes a build before issue
/// 61 wrote): for two runs whose configs differ only in a setting that must leave the data
/// alone, and for references recorded by such builds.
pub fn outputs_without_metadata(run: &Path) -> Vec<(String, Vec<u8>)> {
    outputs_read_by(run, |part| {
        engine::output::without_file_metadata(part).unwrap()
    })
}

/// The deterministic outputs of `run`, each Parquet part's bytes as `read` gives them.
fn outputs_read_by(run: &Path, read: impl Fn(&Path) -> Vec<u8>) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for table in engine::output::deterministic_tables(run).unwrap() {
        for f in parts(&run.join(&table)) {
            let name = format!("{table}/{}", f.file_name().unwrap().to_string_lossy());
            out.push((name, read(&f)));
        }
    }
    out.push((
        "samples.jsonl".into(),
        std::fs::read(run.join("samples.jsonl")).unwrap(),
    ));
    out
}

/// A protocol test's message log: (round, from agent, to agent, kind) per message delivered.
pub type MessageLog = Vec<(u64, u32, u32, &'static str)>;

/// The messages of `log` delivered in `round`, as (from, to, kind), sorted.
pub fn messages_in(log: &MessageLog, round: u64) -> Vec<(u32, u32, &'static str)> {
    let mut m: Vec<_> = log
        .iter()
        .filter(|e| e.0 == round)
        .map(|e| (e.1, e.2, e.3))
        .collect();
    m.sort();
    m
}

/// Runs `config` with 1 and 2 threads into `root/run-NAME-T`, asserts the same bytes, resumes
/// the 2-thread run from its snapshot at `resume_tick` and asserts the same bytes again; returns
/// the summaries.
pub fn threads_and_resume_agree(
    root: &Path,
    parquet: &Path,
    (name, config): (&str, &RunConfig),
    resume_tick: u64,
) -> Vec<RunSummary> {
    let (mut outputs, mut summaries) = (Vec::new(), Vec::new());
    for threads in [1, 2] {
        let run = root.join(format!("run-{name}-{threads}"));
        let threaded = RunConfig {
            threads,
            ..config.clone()
        };
        summaries.push(run_policy(&threaded, parquet, &run));
        outputs.push(deterministic_outputs(&run));
    }
    assert!(outputs[0] == outputs[1], "{name}: 1 and 2 threads");
    let run = root.join(format!("run-{name}-2"));
    resume_from(config, parquet, &run, resume_tick);
    assert!(deterministic_outputs(&run) == outputs[0], "{name}: resumed");
    summaries
}

/// `config`'s scenario written to `root/raw-TAG` and ingested into `root/pq-TAG`: the Parquet
/// directory.
pub fn scenario_trace(
    root: &Path,
    tag: &str,
    config: &ingest::scenario::ScenarioConfig,
) -> PathBuf {
    let raw = root.join(format!("raw-{tag}"));
    ingest::scenario::generate_scenario(&raw, config).unwrap();
    let pq = root.join(format!("pq-{tag}"));
    ingest_dir(&raw, &pq);
    pq
}

/// A step that captures nothing ([`Stepped`]).
pub type PlainStep = fn(
    engine::ids::AgentIdx,
    &[engine::policy::Envelope<()>],
    &mut engine::policy::Outbox<'_, (), ()>,
);

/// A test's own mechanism as a policy: `agents` stateless agents, stepped every round, each
/// step running `step` on the agent's index, inbox and outbox (no agents: a policy that never
/// does anything, nor places a task).
#[derive(Clone)]
pub struct Stepped<F> {
    /// Agents, from the first tick on.
    pub agents: usize,
    /// What a step does.
    pub step: F,
}

impl<F> engine::policy::Policy for Stepped<F>
where
    F: Fn(
            engine::ids::AgentIdx,
            &[engine::policy::Envelope<()>],
            &mut engine::policy::Outbox<'_, (), ()>,
        ) + Send
        + Sync,
{
    type Msg = ();
    type Agent = ();
    type Action = ();

    fn name(&self) -> &'static str {
        "stepped"
    }

    fn steps_every_agent(&self) -> bool {
        true
    }

    fn begin_tick(
        &mut self,
        _: &mut engine::cell::Cell,
        _: (engine::ids::Tick, i64),
        _: &engine::replay::TickEvents,
        agents: &mut Vec<()>,
        _: &mut Vec<engine::policy::Envelope<()>>,
        _: &mut engine::policy::PolicyCounters,
    ) {
        agents.resize(self.agents, ());
    }

    fn step(
        &self,
        _: &engine::policy::StepCtx<'_>,
        me: engine::ids::AgentIdx,
        _: &mut (),
        inbox: &[engine::policy::Envelope<()>],
        out: &mut engine::policy::Outbox<'_, (), ()>,
    ) {
        (self.step)(me, inbox, out);
    }
}
