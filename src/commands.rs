//! Runs each subcommand: turns parsed flags into library settings, starts progress display,
//! calls the library and prints results.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};

use ingest::synth::{self, GenConfig, GenProgress};
use ingest::{IngestOptions, Progress, Table};

use crate::cli::{Cli, Command, GenArgs, IngestArgs, StatsArgs};
use crate::console::{errln, out, outln};
use crate::progress::{Reporter, Sample, rate};

/// Dispatches a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Ingest(args) => run_ingest(args),
        Command::Gen(args) => run_gen(args),
        Command::Stats(args) => run_stats(args),
        Command::Run(args) => crate::run_cmd::run(args),
        Command::Resume(args) => crate::run_cmd::resume(args),
        Command::Report(args) => crate::run_cmd::report(args),
        Command::Status(args) => crate::status::status(args),
        Command::Experiment(args) => run_experiment(args),
    }
}

/// Sets `stop` on SIGTERM, SIGUSR1 and SIGINT; a SIGINT while a stop is under way (Ctrl-C
/// pressed twice) exits at once (code 1). TERM and USR1 only set the flag: a SLURM job's
/// `scancel` sends TERM to cellsim and to its batch script, which forwards it as USR1, and the
/// two together must still end in a snapshot (SLURM's SIGKILL after its `KillWait` is the hard
/// stop). The work polls the flag and ends early: a run with a snapshot, a generation or ingest
/// keeping nothing of its own.
///
/// Embedded in another program (`crate::set_embedded`: the Python package) it installs no
/// handler: the host sets the flag through `crate::request_stop` on its own interrupt.
pub fn stop_on(stop: &Arc<AtomicBool>) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};
    if crate::embedded() {
        crate::watch(stop);
        return Ok(());
    }
    signal_hook::flag::register_conditional_shutdown(SIGINT, 1, stop.clone())
        .context("installing signal handlers")?;
    for signal in [SIGTERM, SIGUSR1, SIGINT] {
        signal_hook::flag::register(signal, stop.clone()).context("installing signal handlers")?;
    }
    Ok(())
}

/// A pool of `threads` workers; none or 0 = one per core (as `run --threads 0`).
fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .context("starting the worker threads")
}

fn run_ingest(args: IngestArgs) -> Result<()> {
    let mut tables = Vec::new();
    for name in &args.tables {
        match Table::from_name(name) {
            Some(t) => tables.push(t),
            None => bail!(
                "unknown table {name:?}; the tables are {}",
                Table::ALL.map(Table::name).join(", ")
            ),
        }
    }
    let options = IngestOptions {
        tables,
        skip_bad_rows: args.skip_bad_rows,
        rows_per_group: args.rows_per_group,
    };
    let pool = thread_pool(args.threads)?;
    let progress = Arc::new(Progress::default());
    stop_on(&progress.stop)?;
    let reporter = ingest_reporter(&progress);
    let result =
        pool.install(|| ingest::ingest(&args.trace_dir, &args.out_dir, &options, &progress));
    reporter.finish();
    let summary = result.with_context(|| {
        format!(
            "ingesting {} into {}",
            args.trace_dir.display(),
            args.out_dir.display()
        )
    })?;
    outln!(
        "{:<20} {:>5} {:>12} {:>9} {:>10} {:>10}",
        "table",
        "files",
        "rows",
        "bad rows",
        "MB in",
        "MB out"
    );
    for (name, t) in &summary.tables {
        outln!(
            "{:<20} {:>5} {:>12} {:>9} {:>10.1} {:>10.1}",
            name,
            t.files,
            t.rows,
            t.bad_rows,
            t.bytes_in as f64 / 1e6,
            t.bytes_out as f64 / 1e6
        );
        if !t.parts_in_time_order {
            errln!("warning: the parts of {name} overlap in time; read them merged by time");
        }
    }
    for example in &summary.bad_row_examples {
        errln!("skipped: {example}");
    }
    outln!(
        "{:.1} s; summary in {}",
        summary.seconds,
        args.out_dir.join(ingest::ingest::SUMMARY_FILE).display()
    );
    Ok(())
}

fn run_gen(args: GenArgs) -> Result<()> {
    if let Some(name) = &args.scenario {
        let config = ingest::scenario::ScenarioConfig {
            name: name.clone(),
            seed: args.seed,
            load_pct: args.load,
            tasks: args.tasks,
            jobs_factor: args.jobs_factor,
            arrivals: args.arrivals.parse().map_err(anyhow::Error::msg)?,
            nodes: args.nodes,
            failures: args.fail.clone(),
            reduce_tasks: args.reduce_tasks,
            map_task_s: args.map_task_s,
            draws: args.draws.parse().map_err(anyhow::Error::msg)?,
        };
        let summary = ingest::scenario::generate_scenario(&args.out_dir, &config)
            .with_context(|| format!("writing scenario {name} to {}", args.out_dir.display()))?;
        outln!("{}", summary.about);
        outln!(
            "{} machines, {} jobs, {} tasks, seed {}: written to {} (next: cellsim ingest {} PARQUET_DIR)",
            summary.machines,
            summary.jobs,
            summary.tasks,
            config.seed,
            args.out_dir.display(),
            args.out_dir.display()
        );
        return Ok(());
    }
    let config = GenConfig {
        machines: args.machines,
        hours: args.hours,
        seed: args.seed,
        part_hours: args.part_hours,
        held_jobs: !args.no_held_jobs,
    };
    let progress = Arc::new(GenProgress::default());
    stop_on(&progress.stop)?;
    let reporter = gen_reporter(&progress, &config);
    let result = synth::generate(&args.out_dir, &config, &progress);
    reporter.finish();
    let summary =
        result.with_context(|| format!("generating a trace in {}", args.out_dir.display()))?;
    for (table, rows) in &summary.rows {
        outln!("{table:<20} {rows:>12} rows");
    }
    outln!(
        "{} machines, {} h, seed {}: {:.1} s; written to {}",
        config.machines,
        config.hours,
        config.seed,
        summary.seconds,
        args.out_dir.display()
    );
    Ok(())
}

/// Shows an ingest's progress: compressed bytes read of the total, rows and rates.
pub fn ingest_reporter(progress: &Arc<Progress>) -> Reporter {
    let shown = progress.clone();
    Reporter::start("ingest", "bytes", move |elapsed| {
        let read = shown.bytes_read.load(Ordering::Relaxed);
        let rows = shown.rows.load(Ordering::Relaxed);
        Sample {
            done: read,
            total: shown.total_bytes.load(Ordering::Relaxed),
            done_before: 0,
            message: format!(
                "{rows} rows, {} rows/s, {}B/s in",
                rate(rows, elapsed),
                rate(read, elapsed)
            ),
            notes: Vec::new(),
        }
    })
}

/// Shows a generation's progress: simulated seconds done (the warm-up's included) of
/// `config`'s.
pub fn gen_reporter(progress: &Arc<GenProgress>, config: &GenConfig) -> Reporter {
    let shown = progress.clone();
    let total_s = config.simulated_us() / 1_000_000;
    Reporter::start("gen", "simulated seconds", move |elapsed| {
        let done_s = shown.simulated_us.load(Ordering::Relaxed) / 1_000_000;
        Sample {
            done: done_s,
            total: total_s,
            done_before: 0,
            message: format!("{}x real time", rate(done_s, elapsed)),
            notes: Vec::new(),
        }
    })
}

fn run_stats(args: StatsArgs) -> Result<()> {
    let stats = analysis::stats::trace_stats(&args.parquet_dir)
        .with_context(|| format!("reading the trace in {}", args.parquet_dir.display()))?;
    out!("{}", analysis::stats::render(&stats));
    if let Some(real_dir) = &args.against {
        let real = analysis::stats::trace_stats(real_dir)
            .with_context(|| format!("reading the trace in {}", real_dir.display()))?;
        let rows = analysis::stats::compare(&stats, &real);
        out!(
            "\n{}",
            analysis::stats::render_comparison(&rows, real.span_h, stats.span_h)
        );
    }
    if let Some(path) = &args.json {
        // Through a temporary file: a file at `path` is always whole.
        ingest::ingest::write_json_atomically(path, &stats)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// What an experiment's output directory records of the command that started it
/// (`DIR/experiment.json`): the same command again continues it.
const EXPERIMENT_FILE: &str = "experiment.json";

/// Prepares the experiment's output directory and returns where its points are kept (with the
/// stop flag SIGTERM, SIGUSR1 and SIGINT set): a new or empty directory is created and the
/// command recorded; a directory holding the same experiment stopped part way goes on (its
/// measured points kept); anything else is refused, saying what it holds.
fn experiment_out(args: &crate::cli::ExperimentArgs) -> Result<analysis::experiment::keep::Keep> {
    let out = &args.out;
    let identity = serde_json::json!({
        "experiment": args.name, "seeds": args.seeds, "arrivals": args.arrivals, "draws": args.draws,
        "net_delay_ms": args.net_delay_ms, "reduce_tasks": args.reduce_tasks,
        "map_task_s": args.map_task_s,
    });
    let recorded = std::fs::read_to_string(out.join(EXPERIMENT_FILE)).ok();
    let recorded: Option<serde_json::Value> = recorded.and_then(|t| serde_json::from_str(&t).ok());
    match recorded {
        Some(_) if out.join("results.md").exists() => bail!(
            "{} holds a finished experiment (results.md); give a new --out",
            out.display()
        ),
        Some(r) if r != identity => bail!(
            "{} holds another experiment, stopped part way ({r}); continue it with its own command, or give a new --out",
            out.display()
        ),
        Some(_) => {}
        None => {
            let non_empty = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some());
            if non_empty {
                bail!(
                    "{} exists and is not empty; give a new --out (an experiment never mixes its results with another's)",
                    out.display()
                );
            }
            std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
            let path = out.join(EXPERIMENT_FILE);
            ingest::ingest::write_json_atomically(&path, &identity)
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    stop_on(&stop)?;
    let keep = analysis::experiment::keep::Keep::in_dir(out, stop)?;
    if keep.kept() > 0 {
        errln!(
            "continuing the experiment in {}: {} points already measured",
            out.display(),
            keep.kept()
        );
    }
    Ok(keep)
}

/// The end of an experiment's measuring: a stop by a signal exits with code 75 (as a run that
/// snapshotted: `slurm/` requeues on it), saying how to go on.
fn measured<T>(result: analysis::Result<T>, args: &crate::cli::ExperimentArgs) -> Result<T> {
    match result {
        Err(e @ analysis::AnalysisError::Stopped { .. }) => Err(crate::Exit::noted(
            engine::snapshot::EXIT_SNAPSHOTTED,
            format!(
                "experiment {}: {e}, kept in {}; the same command again measures the rest; exit code {}",
                args.name,
                args.out.display(),
                engine::snapshot::EXIT_SNAPSHOTTED
            ),
        )),
        other => other.with_context(|| format!("running experiment {}", args.name)),
    }
}

fn run_experiment(args: crate::cli::ExperimentArgs) -> Result<()> {
    use analysis::experiment;
    let nbs = experiment::nbs::Experiment::of_name(&args.name);
    // The MapReduce jobs' settings are seed 004's experiments' alone.
    let mapreduce = [
        ("--reduce-tasks", args.reduce_tasks.is_some()),
        ("--map-task-s", args.map_task_s.is_some()),
    ];
    if let (Some((flag, _)), None) = (mapreduce.iter().find(|m| m.1), nbs) {
        anyhow::bail!(
            "{} takes no {flag}: it sets seed 004's MapReduce jobs (nbs-hard, nbs-priority, nbs-jobs)",
            args.name
        );
    }
    if experiment::federation::cases(&args.name).is_some() {
        return run_federation(args);
    }
    if let Some(nbs) = nbs {
        return run_nbs(nbs, args);
    }
    let options = experiment::Options {
        seeds: args.seeds,
        arrivals: args
            .arrivals
            .as_deref()
            .unwrap_or("even")
            .parse()
            .map_err(anyhow::Error::msg)?,
        net_delay_ms: args.net_delay_ms.unwrap_or(0.5),
        threads: args.threads,
        draws: (args.draws.as_deref().unwrap_or("own"))
            .parse()
            .map_err(anyhow::Error::msg)?,
    };
    if options.draws != ingest::scenario::Draws::Own && args.name != "sparrow-load" {
        anyhow::bail!(
            "{} takes no --draws: the Sparrow authors' draws are for sparrow-load (their simulator's cell)",
            args.name
        );
    }
    let spec = experiment::experiment(&args.name, &options)?;
    let out = &args.out;
    let keep = experiment_out(&args)?;
    let runs = spec.points.len() * spec.configurations.len() * options.seeds as usize;
    errln!(
        "experiment {}: {} points x {} configurations x {} seeds = {runs} runs into {}",
        args.name,
        spec.points.len(),
        spec.configurations.len(),
        options.seeds,
        out.display()
    );
    let summary = experiment::run_experiment(&spec, &options, (out, &keep), &|line| {
        crate::console::status(format_args!("{line}"))
    });
    let summary = measured(summary, &args)?;
    experiment::write_outputs(&spec, &summary, out)
        .with_context(|| format!("writing the results to {}", out.display()))?;
    keep.finish();
    out!("{}", experiment::markdown(&spec, &summary));
    outln!(
        "\nwritten: {0}/results.parquet, {0}/results.md, {0}/queue-times.svg",
        out.display()
    );
    Ok(())
}

/// Refuses the Sparrow-only options and no seeds for an experiment whose workload fixes them
/// (`why`), then prepares its output directory ([`experiment_out`]).
fn no_sparrow_options(
    args: &crate::cli::ExperimentArgs,
    why: &str,
) -> Result<analysis::experiment::keep::Keep> {
    if args.arrivals.is_some() || args.net_delay_ms.is_some() || args.draws.is_some() {
        anyhow::bail!(
            "{} takes no --arrivals, --net-delay-ms or --draws: {why}",
            args.name
        );
    }
    if args.seeds == 0 {
        anyhow::bail!("--seeds must be at least 1");
    }
    experiment_out(args)
}

/// A seed 004 experiment: its Hadoop cell under the four controllers, case by case and seed
/// by seed.
fn run_nbs(
    experiment: analysis::experiment::nbs::Experiment,
    args: crate::cli::ExperimentArgs,
) -> Result<()> {
    use analysis::experiment::nbs;
    let keep = no_sparrow_options(&args, "its jobs are submitted at once on one cell")?;
    let name = experiment.name();
    errln!(
        "experiment {name}: {} cases x {} seeds x {} controllers (NBS as written and with {} options, {} baseline option) into {}",
        experiment.cases().len(),
        args.seeds,
        nbs::all_policies().count(),
        nbs::NBS_OPTIONS.len(),
        nbs::BASELINE_OPTIONS.len(),
        args.out.display()
    );
    let rows = nbs::run(
        experiment,
        (args.seeds, args.reduce_tasks.unwrap_or(0), args.map_task_s),
        (args.threads, &keep),
        &args.out.join("work"),
        &|line| crate::console::status(format_args!("{line}")),
    );
    let rows = measured(rows, &args)?;
    nbs::write_outputs(experiment, &rows, args.seeds, &args.out)
        .with_context(|| format!("writing the results to {}", args.out.display()))?;
    keep.finish();
    out!("{}", nbs::markdown(experiment, &rows, args.seeds));
    outln!(
        "\nwritten: {0}/results.parquet, {0}/results.md, {0}/latency.svg (and .png)",
        args.out.display()
    );
    Ok(())
}

/// A seed 003 experiment: simulations of its federated cloud (no trace, no runs on disk).
fn run_federation(args: crate::cli::ExperimentArgs) -> Result<()> {
    use analysis::experiment::federation;
    let keep = no_sparrow_options(
        &args,
        "its jobs are submitted at once and its latencies are seed 003's (1.5, 0.8, 1, 0.15 and 2 s)",
    )?;
    let cases = federation::cases(&args.name).map_or(0, |c| c.len());
    errln!(
        "experiment {}: {cases} cases x {} seeds = {} simulations into {}",
        args.name,
        args.seeds,
        cases as u64 * args.seeds,
        args.out.display()
    );
    let rows = federation::run(&args.name, args.seeds, (args.threads, &keep), &|line| {
        crate::console::status(format_args!("{line}"))
    });
    let rows = measured(rows, &args)?;
    federation::write_outputs(&args.name, &rows, args.seeds, &args.out)
        .with_context(|| format!("writing the results to {}", args.out.display()))?;
    keep.finish();
    let md = std::fs::read_to_string(args.out.join("results.md"))
        .with_context(|| format!("reading {}", args.out.join("results.md").display()))?;
    out!("{md}");
    let figures = if args.name == "federation-hosts" {
        "hosts.svg"
    } else {
        "makespan.svg, {0}/flowtime.svg"
    };
    outln!(
        "\nwritten: {0}/results.parquet, {0}/results.md, {0}/{1} (and .png)",
        args.out.display(),
        figures.replace("{0}", &args.out.display().to_string())
    );
    Ok(())
}
