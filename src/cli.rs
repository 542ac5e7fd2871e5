//! The command line: subcommands and their flags, with help text. Parsing only; validation into
//! library settings happens in `commands.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Replays the Google Cluster Data 2011 trace (or a synthetic one in its format) through a
/// simulated computing cell.
#[derive(Debug, Parser)]
#[command(name = "cellsim", version = env!("CELLSIM_BUILD"), about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Convert a GCD 2011 trace directory (CSV or CSV.gz parts) to time-sorted Parquet datasets.
    Ingest(IngestArgs),
    /// Write a synthetic trace in the exact GCD 2011 CSV.gz layout (all six tables).
    Gen(GenArgs),
    /// Replay a trace through the simulated cell under a policy. With no arguments: generate a
    /// small synthetic cell, ingest it, replay it with borg-replay and print the summary table.
    Run(RunArgs),
    /// Continue a run from its newest usable snapshot (its config is the run's run.toml).
    /// Outputs are byte-identical to a run that never stopped. Exit code 75 means "stopped by a
    /// signal after a snapshot: resume again"; 0 means done.
    Resume(ResumeArgs),
    /// Print seed 000's Table 4 layout (average nodes per allocation class), the allocation score
    /// ratios, usage and migration figures for runs side by side; draw the classes over time.
    Report(ReportArgs),
    /// Say where each run stands (complete, stopped, failed, running or killed), how far it is
    /// kept and the last line of its log: a sweep's runs at a glance.
    Status(StatusArgs),
    /// Print the shape of an ingested trace: machine mix, running tasks, usage, durations,
    /// priorities, constraints and events per type.
    Stats(StatsArgs),
    /// Run one of the seeds' experiments (a grid of scenario runs under several policies) and
    /// write DIR/results.parquet, DIR/results.md (with the seed's reported results beside ours)
    /// and DIR/queue-times.svg.
    Experiment(ExperimentArgs),
}

/// `cellsim experiment`.
#[derive(Debug, Args)]
pub struct ExperimentArgs {
    /// The experiment.
    #[arg(value_parser = experiment_names())]
    pub name: String,
    /// Output directory (created; must not exist or be empty).
    #[arg(long)]
    pub out: PathBuf,
    /// Seeds per point (1..=N): each seed its own workload draw and policy randomness. Seed 002
    /// averages 5; a single seed's p99 at high load moves by seconds.
    #[arg(long, default_value_t = 5)]
    pub seeds: u64,
    /// How tasks arrive (Sparrow experiments): evenly spaced at the load's rate, or a Poisson
    /// process of that rate [default: even].
    #[arg(long, value_parser = ["even", "poisson"])]
    pub arrivals: Option<String>,
    /// Whose random numbers draw the arrivals and the `radlab-d*` rows' probe targets
    /// (sparrow-load): cellsim's own, or the Sparrow authors' simulator's for each seed
    /// (CPython's `random.seed(seed)`, draw for draw), to compare with that simulator run for
    /// run [default: own].
    #[arg(long, value_parser = ["own", "radlab"])]
    pub draws: Option<String>,
    /// One-way network delay of every message between nodes, ms (Sparrow experiments; the
    /// Sparrow paper's simulations: 0.5) [default: 0.5]. The federation experiments take their
    /// latencies from seed 003's topology.
    #[arg(long)]
    pub net_delay_ms: Option<f64>,
    /// Reduce tasks per job after its map tasks (seed 004 experiments; each starts once its
    /// job's map tasks have ended). The paper counts map tasks only [default: 0].
    #[arg(long)]
    pub reduce_tasks: Option<u32>,
    /// Run time of each map task, whole seconds (seed 004 experiments; the paper gives none)
    /// [default: 10, chosen].
    #[arg(long)]
    pub map_task_s: Option<u32>,
    /// Threads (runs are spread over them; 0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

/// `cellsim experiment`'s names, with their descriptions.
fn experiment_names() -> clap::builder::PossibleValuesParser {
    let values = analysis::experiment::NAMES
        .iter()
        .map(|&(name, about)| clap::builder::PossibleValue::new(name).help(about));
    clap::builder::PossibleValuesParser::new(values)
}

/// `cellsim status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Run directories, or directories holding runs (a sweep's `SWEEP_DIR`: its runs are
    /// listed in natural order).
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
}

/// `cellsim ingest`.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Trace directory holding machine_events/, task_events/, ... with part-*.csv[.gz] files.
    pub trace_dir: PathBuf,
    /// Output directory: one Parquet dataset per table plus ingest-summary.json.
    pub out_dir: PathBuf,
    /// Only these tables (comma-separated names); a listed table that is missing is an error.
    #[arg(long, value_delimiter = ',')]
    pub tables: Vec<String>,
    /// Count and skip malformed rows (reported in ingest-summary.json) instead of failing.
    #[arg(long)]
    pub skip_bad_rows: bool,
    /// Rows per Parquet row group: the unit the engine streams by time window.
    #[arg(long, default_value_t = 131_072)]
    pub rows_per_group: usize,
    /// Worker threads (default, or 0: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// `cellsim gen`.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// Output directory for the trace (machine_events/, task_events/, ...).
    pub out_dir: PathBuf,
    /// Machines in the cell (12,583 in the real 2011 cell).
    #[arg(long, default_value_t = 1000)]
    pub machines: u32,
    /// Simulated hours after the t = 0 snapshot.
    #[arg(long, default_value_t = 24.0)]
    pub hours: f64,
    /// Random seed; the same seed gives byte-identical files.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Simulated hours per part file of the time-sharded tables.
    #[arg(long, default_value_t = 1.0)]
    pub part_hours: f64,
    /// Leave out the jobs the real cell's scheduler holds waiting for hours (made by default:
    /// ~0.9 tasks a machine, 18 % of its memory requested; never placed, killed after 8 h and
    /// submitted again: bench-results/waiting-jobs-2026-12-03.md), as the generator did before
    /// model `real-gcd-8.5h-held-2026-12-03`.
    #[arg(long, conflicts_with = "scenario")]
    pub no_held_jobs: bool,
    /// Write one of the seeds' experiment workloads instead of a GCD-like cell (then ingest it
    /// like any trace); its side tables (task length, deadlines, weights, datacenters) go to
    /// OUT/scenario/.
    #[arg(long, value_parser = scenario_names(), conflicts_with_all = ["machines", "hours", "part_hours"])]
    pub scenario: Option<String>,
    /// Load, percent of the cell's CPUs (`--scenario sparrow-load`).
    #[arg(long, default_value_t = 80, requires = "scenario")]
    pub load: u32,
    /// Tasks (Sparrow scenarios) or jobs (nbs-hadoop) instead of the seed's number.
    #[arg(long, requires = "scenario")]
    pub tasks: Option<u32>,
    /// PSE size factor i: 25 i (pse-1) or 30 i (pse-2) jobs; the seed runs i = 40 ... 400.
    #[arg(long, default_value_t = 40, requires = "scenario")]
    pub jobs_factor: u32,
    /// How the Sparrow scenarios' tasks arrive: evenly spaced, or a Poisson process of the
    /// same rate.
    #[arg(long, default_value = "even", value_parser = ["even", "poisson"], requires = "scenario")]
    pub arrivals: String,
    /// Whose random numbers draw the arrivals (sparrow-load): cellsim's own, or the Sparrow
    /// authors' simulator's for --seed (CPython's `random.seed(seed)`, draw for draw; run it
    /// with `draws = "radlab-poisson"` or `"radlab-even"` to draw its probe targets too).
    #[arg(long, default_value = "own", value_parser = ["own", "radlab"], requires = "scenario")]
    pub draws: String,
    /// Nodes instead of the seed's 50 (`--scenario sparrow-random`: sets its load).
    #[arg(long, requires = "scenario")]
    pub nodes: Option<u32>,
    /// A failure of the scenario's failure list: machine M (from 0) removed T seconds after the
    /// start (`--fail 3@20`); repeat for more.
    #[arg(long, value_name = "M@T", value_parser = parse_failure, requires = "scenario")]
    pub fail: Vec<(u32, f64)>,
    /// Reduce tasks per job after its 3 map tasks (nbs-* scenarios; each starts once its job's
    /// map tasks have ended). Seed 004 counts map tasks only.
    #[arg(long, default_value_t = 0, requires = "scenario")]
    pub reduce_tasks: u32,
    /// Run time of each map task, whole seconds (nbs-* scenarios; seed 004 gives none)
    /// [default: 10, chosen].
    #[arg(long, requires = "scenario")]
    pub map_task_s: Option<u32>,
}

/// `M@T`: a machine index and a time in seconds.
fn parse_failure(text: &str) -> Result<(u32, f64), String> {
    let (m, t) = text
        .split_once('@')
        .ok_or_else(|| format!("{text:?} is not MACHINE@SECONDS (e.g. 3@20)"))?;
    let m = m
        .parse()
        .map_err(|_| format!("{m:?} is not a machine index"))?;
    let t: f64 = t
        .parse()
        .map_err(|_| format!("{t:?} is not a time in seconds"))?;
    Ok((m, t))
}

/// `--scenario`'s values, with their descriptions.
fn scenario_names() -> clap::builder::PossibleValuesParser {
    let values = ingest::scenario::NAMES
        .iter()
        .map(|&(name, about)| clap::builder::PossibleValue::new(name).help(about));
    clap::builder::PossibleValuesParser::new(values)
}

/// `cellsim stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Directory written by `cellsim ingest`.
    pub parquet_dir: PathBuf,
    /// Compare with this ingested trace (the real one, e.g. `../shared/gcd-8h` ingested):
    /// its workload beside this one's, figure by figure, with each figure's tolerance.
    #[arg(long, value_name = "INGESTED_DIR")]
    pub against: Option<PathBuf>,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// `cellsim run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Experiment config (TOML); flags override its values. `--print-config` shows every key.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Ingested trace directory (from `cellsim ingest`).
    #[arg(long, conflicts_with = "synthetic")]
    pub trace: Option<PathBuf>,
    /// Generate, ingest and replay a synthetic cell of this many machines instead of --trace.
    #[arg(long)]
    pub synthetic: Option<u32>,
    /// Scheduling policy (its settings from the config's `[policy]` table when it names the
    /// same kind, else the policy's defaults) [default: borg-replay, or the config's].
    #[arg(long, value_parser = policy_kinds())]
    pub policy: Option<String>,
    /// Simulated hours from the start of the trace window (default: the whole trace; 6 with
    /// --synthetic or no trace).
    #[arg(long, allow_negative_numbers = true)]
    pub hours: Option<f64>,
    /// Allow --hours to end well after the trace's last event (the cell runs on with no new
    /// work); refused otherwise.
    #[arg(long)]
    pub past_trace_end: bool,
    /// Exit with code 3 when the run stalled (its policy placed nothing for a span while
    /// waiting tasks fitted) or ended with work undone (the config's `[run] strict` or `[watchdog] strict`).
    #[arg(long)]
    pub strict: bool,
    /// Simulated time per tick ("60s", "100ms", "1ms"; the config's `tick`); every cadence
    /// must stay a whole number of ticks.
    #[arg(long)]
    pub tick: Option<engine::sim_time::SimDuration>,
    /// Random seed (policy agents; also the synthetic trace's seed) [default: 1, or the
    /// config's].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads (default, or 0: one per core); outputs are identical for any count. Beside
    /// them, each trace table is decoded ahead on a thread of its own, the next tick's usage
    /// rows are read on another while a tick runs, and output parts are written on a third.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Run directory for the outputs (ticks/, nodes/, migrations/, timing/ Parquet parts,
    /// samples.jsonl, summary.json) and snapshots/ (default: cellsim-runs/POLICY-SECONDS, the
    /// seconds since 1970).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue the run in --out from its newest usable snapshot if it has one (the config must
    /// be the same); start it otherwise; do nothing if it is complete. For batch scripts.
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// Snapshot every this many simulated minutes (0 = never; default from the config: 0).
    #[arg(long)]
    pub snapshot_every_sim_minutes: Option<u32>,
    /// Snapshot every this many wall-clock minutes (0 = never; default from the config: 10).
    #[arg(long)]
    pub snapshot_every_wall_minutes: Option<f64>,
    /// K copies of every machine and job, 1..=64, IDs derived by hash (SPEC 7; 8 = a
    /// 100k-machine cell from the 12.5k trace). Applied while streaming.
    #[arg(long, value_name = "K")]
    pub multiply: Option<u32>,
    /// Replay P % of the trace's tasks, 0..=1000: above 100, hash-selected tasks are duplicated;
    /// below, hash-selected tasks are dropped (0: the machines alone, a cell without tasks).
    #[arg(long, value_name = "P")]
    pub workload: Option<u32>,
    /// Keep P % of the machines, 1..=100 (hash-selected): cell compaction.
    #[arg(long, value_name = "P")]
    pub compact: Option<u32>,
    /// Print the effective config as TOML and exit.
    #[arg(long)]
    pub print_config: bool,
}

/// `cellsim resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run directory (holding run.toml and snapshots/).
    pub run_dir: PathBuf,
    /// Worker threads (default: the run's setting); outputs are identical for any count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// The ingested trace's new place, if it moved since the run started (the snapshots check
    /// that it is the same trace); recorded in run.toml for later resumes.
    #[arg(long, value_name = "PARQUET_DIR")]
    pub trace: Option<PathBuf>,
}

/// The `--policy` values: the engine's policy registry, each with its description.
fn policy_kinds() -> clap::builder::PossibleValuesParser {
    let values = engine::policies::KINDS
        .iter()
        .map(|&(kind, about)| clap::builder::PossibleValue::new(kind).help(about));
    clap::builder::PossibleValuesParser::new(values)
}

/// `cellsim report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directories (each with summary.json), or directories holding runs (a sweep's
    /// `SWEEP_DIR`: its runs side by side in natural order, those not finished left out).
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// Also print the wall-clock profile: the first tick and the median milliseconds per tick,
    /// whole and by phase, and the share that ran on one thread outside the parallel sweeps with
    /// Amdahl's speed-ups from it (from timing/).
    #[arg(long)]
    pub timing: bool,
    /// With --timing: the medians over the ticks from this one on (e.g. the window a run resumed
    /// from a snapshot ran), not over all ticks after the first.
    #[arg(long, value_name = "TICK", requires = "timing")]
    pub from_tick: Option<u32>,
    /// Also draw the nodes of each allocation class (STA, TA, PA, DA, idle, overloaded) over
    /// time, as seed 000's Figures 8 and 9, one panel per run, into FILE (.svg or .png). A run
    /// not finished yet is drawn from the parts written so far, and left out of the tables.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Also print, per run, seed 000's published values (Table 4 for borg-replay, Table 7 for
    /// MASB by its GAIN switches, Table 8 for MASB multiplied 2, 4 or 8 times) beside the run's,
    /// with the difference.
    #[arg(long)]
    pub paper: bool,
}
