//! `cellsim run` and `cellsim report`: builds the run config from the TOML file and flags,
//! prepares the trace (ingested, or a generated synthetic cell), runs the engine with progress
//! display and prints the report table.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result, bail};
use engine::borg::BorgReplay;
use engine::masb::policy::Masb;
use engine::{PolicyName, RunConfig, RunProgress};
use ingest::synth::{GenConfig, GenProgress};
use ingest::{IngestOptions, Progress};

use crate::cli::{PolicyArg, ReportArgs, RunArgs};
use crate::progress::{Reporter, Sample};

/// Machines of the embedded default cell.
const DEFAULT_MACHINES: u32 = 500;
/// Simulated hours of a synthetic run when none are given.
const DEFAULT_SYNTHETIC_HOURS: f64 = 6.0;

fn effective_config(args: &RunArgs) -> Result<RunConfig> {
    let mut config = match &args.config {
        Some(path) => RunConfig::from_file(path)?,
        None => RunConfig::default(),
    };
    if let Some(t) = &args.trace {
        config.trace = Some(t.clone());
    }
    if let Some(p) = args.policy {
        config.policy = match p {
            PolicyArg::BorgReplay => PolicyName::BorgReplay,
            PolicyArg::Masb => PolicyName::Masb,
        };
    }
    if let Some(h) = args.hours {
        config.hours = Some(h);
    }
    if let Some(s) = args.seed {
        config.seed = s;
    }
    if let Some(t) = args.threads {
        config.threads = t;
    }
    if args.synthetic.is_some() || config.trace.is_none() {
        config.trace = None;
        config.hours.get_or_insert(DEFAULT_SYNTHETIC_HOURS);
    }
    config
        .validate()
        .map_err(|problem| anyhow::anyhow!("invalid settings: {problem}"))?;
    Ok(config)
}

/// Generates and ingests a synthetic cell into `work`; returns the Parquet directory.
fn synthetic_trace(work: &Path, machines: u32, hours: f64, seed: u64) -> Result<PathBuf> {
    let trace = work.join("trace");
    let gen_config = GenConfig {
        machines,
        hours: hours.ceil(),
        seed,
        part_hours: 1.0,
    };
    eprintln!(
        "generating a synthetic cell: {machines} machines, {} h, seed {seed}",
        gen_config.hours
    );
    ingest::synth::generate(&trace, &gen_config, &GenProgress::default())
        .context("generating the synthetic trace")?;
    let parquet = work.join("parquet");
    ingest::ingest(
        &trace,
        &parquet,
        &IngestOptions::default(),
        &Progress::default(),
    )
    .context("ingesting the synthetic trace")?;
    Ok(parquet)
}

/// Runs `cellsim run`.
pub fn run(args: RunArgs) -> Result<()> {
    let config = effective_config(&args)?;
    if args.print_config {
        print!("{}", toml_text(&config)?);
        return Ok(());
    }
    let work = tempfile::tempdir().context("creating a temporary directory")?;
    let trace = match &config.trace {
        Some(t) => t.clone(),
        None => synthetic_trace(
            work.path(),
            args.synthetic.unwrap_or(DEFAULT_MACHINES),
            config.hours.unwrap_or(DEFAULT_SYNTHETIC_HOURS),
            config.seed,
        )?,
    };
    let out = match &args.out {
        Some(o) => o.clone(),
        None => {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            PathBuf::from("cellsim-runs").join(format!("{}-{secs}", config.policy.as_str()))
        }
    };
    let progress = Arc::new(RunProgress::default());
    let shown = progress.clone();
    let tick_s = config.tick_s as u64;
    let reporter = Reporter::start("run", "ticks", move |elapsed| {
        let done = shown.ticks_done.load(Ordering::Relaxed);
        let speed = (done * tick_s) as f64 / elapsed.as_secs_f64().max(1e-9);
        Sample {
            done,
            total: shown.ticks_total.load(Ordering::Relaxed),
            message: format!(
                "simulated {:.1} h, {speed:.0}x real time",
                (done * tick_s) as f64 / 3600.0
            ),
        }
    });
    let result = match config.policy {
        PolicyName::BorgReplay => engine::run(&config, &trace, &out, BorgReplay, &progress),
        PolicyName::Masb => {
            let masb = Masb::new(
                config.masb.clone(),
                config.rounds_per_tick,
                config.tick_s,
                config.seed,
            );
            engine::run(&config, &trace, &out, masb, &progress)
        }
    };
    reporter.finish();
    let summary = result
        .with_context(|| format!("running {} on {}", config.policy.as_str(), trace.display()))?;
    print!(
        "{}",
        analysis::report::render(&[out.display().to_string()], &[summary])
    );
    println!("outputs in {}", out.display());
    Ok(())
}

fn toml_text(config: &RunConfig) -> Result<String> {
    let mut shown = config.clone();
    if shown.trace.is_none() {
        shown.trace = Some(PathBuf::from("PARQUET_DIR"));
    }
    toml::to_string(&shown).context("encoding the config")
}

/// Runs `cellsim report`.
pub fn report(args: ReportArgs) -> Result<()> {
    let mut runs = Vec::new();
    for dir in &args.runs {
        runs.push(
            analysis::report::load_run(dir)
                .with_context(|| format!("reading run {}", dir.display()))?,
        );
    }
    if runs.is_empty() {
        bail!("give at least one run directory");
    }
    let names: Vec<String> = args.runs.iter().map(|d| d.display().to_string()).collect();
    print!("{}", analysis::report::render(&names, &runs));
    Ok(())
}
