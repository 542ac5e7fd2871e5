//! `cellsim run`, `cellsim resume` and `cellsim report`: builds the run config from the TOML file
//! and flags, prepares the trace (ingested, or a generated synthetic cell kept in the run
//! directory so the run can be resumed), runs the engine with progress display and signal
//! handling (SIGTERM, SIGUSR1, SIGINT: finish the tick, snapshot, exit with
//! [`EXIT_SNAPSHOTTED`]; a second SIGINT exits at once) and the run's log, and prints the
//! report table (and, with `--plot`, draws the classes over time).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use analysis::AnalysisError;
use anyhow::{Context, Result, bail};
use engine::run::{CONFIG_FILE, RunOutcome, STOP_WITHIN_S, SUMMARY_FILE};
use engine::run_identity::RunRecord;
use engine::snapshot::EXIT_SNAPSHOTTED;
use engine::watchdog::EXIT_UNFINISHED;
use engine::{PolicyConfig, RunConfig, RunProgress};
use ingest::synth::{GenConfig, GenProgress};
use ingest::{IngestError, IngestOptions, Progress};

use crate::Exit;
use crate::cli::{ReportArgs, ResumeArgs, RunArgs};
use crate::commands::{gen_reporter, ingest_reporter, stop_on};
use crate::console::{self, errln, out, outln};
use crate::progress::{Reporter, Sample};
use crate::run_log::{LOG_FILE, STOPPED_BY_A_SIGNAL};
use crate::{run_lock, run_log};

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
    if let Some(kind) = &args.policy
        && config.policy.kind() != kind
    {
        config.policy =
            PolicyConfig::default_of(kind).with_context(|| format!("no policy named {kind}"))?;
    }
    config.past_trace_end |= args.past_trace_end;
    config.watchdog.strict |= args.strict || config.run.as_ref().is_some_and(|r| r.strict);
    if let Some(h) = args.hours {
        config.hours = Some(h);
    }
    if let Some(t) = args.tick {
        config.tick = t;
    }
    if let Some(s) = args.seed {
        config.seed = s;
    }
    if let Some(t) = args.threads {
        config.threads = t;
    }
    if let Some(k) = args.multiply {
        config.scale.multiply = k;
    }
    if let Some(p) = args.workload {
        config.scale.workload_pct = p;
    }
    if let Some(p) = args.compact {
        config.scale.compact_pct = p;
    }
    if let Some(m) = args.snapshot_every_sim_minutes {
        config.snapshot.every_sim_minutes = m;
    }
    if let Some(m) = args.snapshot_every_wall_minutes {
        config.snapshot.every_wall_minutes = m;
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

/// The settings of a run's synthetic cell, next to it in the run directory (`synthetic/`).
const SYNTHETIC_SETTINGS: &str = "settings.json";

/// Generates and ingests a synthetic cell into `work`; returns the Parquet directory. A run
/// started again in the same directory (resumed, or restarted after it was killed while its cell
/// was being made) reuses what was finished: the ingested cell, else the generated CSV (written
/// whole or not at all, `ingest::synth::generate`), whose ingest is redone; its settings are
/// recorded first and must match. Setting `stop` ends the generation or ingest early with
/// [`IngestError::Stopped`], keeping what was finished.
fn synthetic_trace(work: &Path, gen_config: &GenConfig, stop: &Arc<AtomicBool>) -> Result<PathBuf> {
    let (trace, parquet) = (work.join("trace"), work.join("parquet"));
    let GenConfig { machines, seed, .. } = *gen_config;
    let settings = serde_json::json!({
        "machines": machines, "hours": gen_config.hours, "seed": seed,
    });
    let settings_path = work.join(SYNTHETIC_SETTINGS);
    match std::fs::read_to_string(&settings_path) {
        Ok(text) => {
            let earlier: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is damaged", settings_path.display()))?;
            if earlier != settings {
                bail!(
                    "{} holds a synthetic cell made with {earlier}, not {settings}; give a new output directory",
                    work.display()
                );
            }
        }
        // Before any cell was made, or by a cellsim that did not record its settings.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", settings_path.display())),
    }
    if parquet.join(ingest::ingest::SUMMARY_FILE).exists() {
        // Made by the run being resumed (its CSV left only if that run was killed right after
        // the ingest).
        if trace.exists() {
            std::fs::remove_dir_all(&trace).context("removing the generated CSV")?;
        }
        return Ok(parquet);
    }
    std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
    ingest::ingest::write_json_atomically(&settings_path, &settings)
        .with_context(|| format!("writing {}", settings_path.display()))?;
    if !trace.exists() {
        errln!(
            "generating a synthetic cell: {machines} machines, {} h, seed {seed}",
            gen_config.hours
        );
        let progress = Arc::new(GenProgress {
            stop: stop.clone(),
            ..GenProgress::default()
        });
        let reporter = gen_reporter(&progress, gen_config);
        let generated = ingest::synth::generate(&trace, gen_config, &progress);
        reporter.finish();
        generated.context("generating the synthetic trace")?;
    }
    let progress = Arc::new(Progress {
        stop: stop.clone(),
        ..Progress::default()
    });
    let reporter = ingest_reporter(&progress);
    let ingested = ingest::ingest(&trace, &parquet, &IngestOptions::default(), &progress);
    reporter.finish();
    ingested.context("ingesting the synthetic trace")?;
    std::fs::remove_dir_all(&trace).context("removing the generated CSV")?;
    Ok(parquet)
}

/// Where a run's trace comes from.
enum TraceSource {
    /// An ingested trace (`--trace`, or the config's `trace`).
    Ingested(PathBuf),
    /// A synthetic cell made in the run directory (`--synthetic`, or no trace at all).
    Synthetic(GenConfig),
}

/// Runs `cellsim run`.
pub fn run(args: RunArgs) -> Result<()> {
    let config = effective_config(&args)?;
    if args.print_config {
        out!("{}", toml_text(&config)?);
        out!("{}", RunConfig::unwritten_keys_toml());
        return Ok(());
    }
    // A Python scheduler's object comes from the package (`engine/src/hosted/`): without one,
    // fail before a synthetic cell is made or anything is written.
    if let engine::PolicyConfig::Python(spec) = &config.policy
        && !engine::hosted::has_decider()
    {
        bail!("policy: {}", engine::hosted::no_host(&spec.class));
    }
    let out = match &args.out {
        Some(o) => o.clone(),
        None => {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            PathBuf::from("cellsim-runs").join(format!("{}-{secs}", config.policy.kind()))
        }
    };
    if out.exists() && !out.is_dir() {
        bail!(
            "{} is a file; give a directory for the run's outputs",
            out.display()
        );
    }
    // A synthetic cell's settings are checked before anything is written: a directory holding
    // the settings of a cell that cannot be made would refuse the corrected command.
    let source = match &config.trace {
        Some(t) => TraceSource::Ingested(t.clone()),
        None => {
            let gen_config = GenConfig {
                machines: args.synthetic.unwrap_or(DEFAULT_MACHINES),
                hours: config.hours.unwrap_or(DEFAULT_SYNTHETIC_HOURS).ceil(),
                seed: config.seed,
                part_hours: 1.0,
                held_jobs: true,
            };
            gen_config
                .validate()
                .context("the synthetic cell (--synthetic, --hours)")?;
            TraceSource::Synthetic(gen_config)
        }
    };
    let _lock = run_lock::lock(&out)?;
    run_log::open(&out);
    let progress = stop_on_signals()?;
    let trace = match source {
        TraceSource::Ingested(trace) => trace,
        TraceSource::Synthetic(gen_config) => {
            let cell = out.join(engine::run_dir::SYNTHETIC_DIR);
            match synthetic_trace(&cell, &gen_config, &progress.stop) {
                Err(e) if matches!(e.downcast_ref(), Some(IngestError::Stopped)) => {
                    // No run.toml yet, so not `cellsim resume`: slurm/run.sbatch requeues on
                    // this code and starts the same command again, as a user would.
                    return Err(Exit::noted(
                        EXIT_SNAPSHOTTED,
                        format!(
                            "{STOPPED_BY_A_SIGNAL} while making the synthetic cell ({} keeps what was finished); start the same command again to go on; exit code {EXIT_SNAPSHOTTED}",
                            cell.display()
                        ),
                    ));
                }
                made => made?,
            }
        }
    };
    let mut config = config;
    config.run = Some(match recorded_run(&out, args.resume) {
        Some(run) => run,
        None => RunRecord::new(&trace),
    });
    execute(&config, &trace, &out, args.resume, progress)
}

/// The identity recorded in `out`'s `run.toml` when `run --resume` continues a run that
/// started; `None` for a new run.
fn recorded_run(out: &Path, resume: bool) -> Option<RunRecord> {
    let path = out.join(CONFIG_FILE);
    (resume && path.is_file())
        .then(|| RunConfig::from_file(&path).ok()?.run)
        .flatten()
}

/// The progress of a run about to start, whose `stop` flag SIGTERM, SIGUSR1 and SIGINT set (a
/// SIGINT while a stop is under way exits at once, `commands::stop_on`). Installed before a synthetic
/// cell is made, so a signal then stops the making (and is not the default: killed, no
/// requeue).
fn stop_on_signals() -> Result<Arc<RunProgress>> {
    let progress = Arc::new(RunProgress::default());
    stop_on(&progress.stop)?;
    Ok(progress)
}

/// Runs `cellsim resume RUN_DIR`: the run's own config (`run.toml`), from its newest usable
/// snapshot.
pub fn resume(args: ResumeArgs) -> Result<()> {
    let path = args.run_dir.join(CONFIG_FILE);
    let dir = args.run_dir.display();
    if !path.is_file() {
        let outputs = [SUMMARY_FILE, engine::run_dir::SNAPSHOT_DIR, "ticks"];
        if let Some(found) = outputs.iter().find(|o| args.run_dir.join(o).exists()) {
            bail!(
                "{dir} holds a run's outputs ({found}) but not its {CONFIG_FILE}, the configuration a resume continues with: restore it from a copy, or start the run again into a new directory"
            );
        }
        if let Some(command) = run_log::first_run_command(&args.run_dir) {
            let when = match args.run_dir.join(engine::run_dir::SYNTHETIC_DIR).is_dir() {
                true => {
                    "while its synthetic cell was being made; the command keeps what was finished"
                }
                false => "while its trace was being checked, before it wrote its config",
            };
            bail!(
                "{dir} has no {CONFIG_FILE}: its run was stopped before it started ({when}); start it again with the command that started it: {command}"
            );
        }
        bail!("{dir} is not a cellsim run directory (it has no {CONFIG_FILE})");
    }
    let _lock = run_lock::lock(&args.run_dir)?;
    run_log::open(&args.run_dir);
    let mut config =
        RunConfig::from_file(&path).with_context(|| format!("resuming {dir}: its config"))?;
    if let Some(t) = args.threads {
        config.threads = t;
    }
    if let Some(t) = &args.trace {
        config.trace = Some(t.clone());
        if let Some(run) = &mut config.run {
            run.trace.clone_from(t);
        }
    }
    let trace = config
        .trace
        .clone()
        .with_context(|| format!("{}: no trace recorded", path.display()))?;
    if !trace.join(ingest::ingest::SUMMARY_FILE).is_file() {
        bail!(
            "resuming {dir}: its trace {} is not there (no {}); if it moved, give its new place: `cellsim resume {dir} --trace PARQUET_DIR`",
            trace.display(),
            ingest::ingest::SUMMARY_FILE
        );
    }
    execute(&config, &trace, &args.run_dir, true, stop_on_signals()?)
}

/// Runs (or, with `resume`, continues) the run in `out`; exits the process with
/// [`EXIT_SNAPSHOTTED`] when a signal stopped it after a snapshot.
fn execute(
    config: &RunConfig,
    trace: &Path,
    out: &Path,
    resume: bool,
    progress: Arc<RunProgress>,
) -> Result<()> {
    let mut from = None;
    if resume {
        if out.join(SUMMARY_FILE).exists() {
            let changes = engine::run_dir::config_changes(out, config);
            if !changes.is_empty() {
                bail!(
                    "{} is complete, but under another configuration than this command's ({}); run these settings into a new output directory",
                    out.display(),
                    changes.join(", ")
                );
            }
            let done = format!(
                "{} is complete ({SUMMARY_FILE}); nothing to resume",
                out.display()
            );
            run_log::append(&done);
            outln!("{done}");
            return Ok(());
        }
        let chosen = engine::run_dir::choose(out, config, trace)
            .with_context(|| format!("resuming {}", out.display()))?;
        for why in &chosen.skipped {
            errln!("skipping snapshot {why}");
        }
        match &chosen.snapshot {
            Some(s) => errln!(
                "resuming from {} (tick {})",
                s.path().display(),
                s.header().tick
            ),
            None => errln!(
                "no snapshot in {}: starting from the beginning",
                out.display()
            ),
        }
        from = chosen.snapshot;
    }
    // Shown once the run is under way, not above a refusal of the output directory.
    let past_the_trace = Mutex::new(hours_past_the_trace(config, trace));
    let shown = progress.clone();
    let tick_s = config.tick.secs_f64();
    let restore_shown = AtomicBool::new(false);
    let ticks_per_day = (86_400.0 / tick_s).max(1.0) as u64;
    // The simulated days done when last noted (a resumed run's restored days count as noted).
    let days_noted = AtomicU64::new(0);
    // The speed is the summary's (simulated time over the wall time of the simulation, not of
    // making a synthetic cell or opening the trace): measured from when the run is under way,
    // and the summary's own figure once the run is complete (issue 56: the bar said 108,225x
    // where the table said 195,841x).
    let under_way_at = std::sync::OnceLock::<std::time::Duration>::new();
    let final_speed = Arc::new(AtomicU64::new(0));
    let final_shown = final_speed.clone();
    let reporter = Reporter::start("run", "ticks", move |elapsed| {
        let done = shown.ticks_done.load(Ordering::Relaxed);
        let done_before = shown.first_tick.load(Ordering::Relaxed).min(done);
        let fresh = done - done_before;
        let since = match shown.under_way() {
            true => elapsed.saturating_sub(*under_way_at.get_or_init(|| elapsed)),
            false => elapsed,
        };
        let speed = match f64::from_bits(final_shown.load(Ordering::Relaxed)) {
            0.0 => fresh as f64 * tick_s / since.as_secs_f64().max(1e-9),
            summary => summary,
        };
        // Once the run is under way: the hours past its trace's events, a line per simulated
        // day done (a long run's history of speed, and what `cellsim status` shows of a run that
        // is going) and the restore's time (so the run's log has it when it happened); then the
        // run's warnings as they come.
        let mut notes = Vec::new();
        let total = shown.ticks_total.load(Ordering::Relaxed);
        if shown.under_way() {
            let mut past = past_the_trace
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            notes.extend(past.take());
            let days = done / ticks_per_day;
            let noted = days_noted
                .load(Ordering::Relaxed)
                .max(done_before / ticks_per_day);
            days_noted.store(days.max(noted), Ordering::Relaxed);
            if days > noted {
                notes.push(format!(
                    "simulated day {days} done (tick {done} of {total}), {speed:.0}x real time so far"
                ));
            }
        }
        let restore_ms = shown.restore_ms.load(Ordering::Relaxed);
        if restore_ms > 0 && !restore_shown.swap(true, Ordering::Relaxed) {
            notes.push(format!(
                "state restored from the snapshot in {restore_ms} ms"
            ));
        }
        let mut warnings = shown
            .warnings
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        notes.extend(warnings.drain(..).map(|w| format!("warning: {w}")));
        Sample {
            done,
            total,
            done_before,
            message: format!(
                "simulated {:.1} h, {speed:.0}x real time",
                done as f64 * tick_s / 3600.0
            ),
            notes,
        }
    });
    let result = engine::run_configured(config, trace, out, &progress, from);
    if let Ok(RunOutcome::Complete(summary)) = &result {
        final_speed.store(summary.speed_x_real_time.to_bits(), Ordering::Relaxed);
    }
    reporter.finish();
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(e) => {
            let e = anyhow::Error::new(e).context(format!(
                "running {} on {}",
                config.policy.kind(),
                trace.display()
            ));
            let Some(hint) = resume_hint(config, trace, out, &progress) else {
                return Err(e);
            };
            console::print_error(&e);
            errln!("{hint}");
            let message = format!("{}\n{hint}", console::error_text(&e));
            return Err(Exit { code: 1, message }.into());
        }
    };
    match outcome {
        RunOutcome::Complete(summary) => {
            let troubles = analysis::report::liveness_lines(&summary);
            let ended = match troubles.is_empty() {
                true => "complete",
                false => "ended with work undone or stalled",
            };
            run_log::append(&format!(
                "{ended}: {} ticks ({:.1} simulated hours); {SUMMARY_FILE} written",
                summary.ticks,
                summary.simulated_s / 3600.0
            ));
            for line in &troubles {
                errln!("warning: {line}");
            }
            if let Some(odd) = summary.replay.machine_event_oddities() {
                run_log::append(&format!("warning: {odd}"));
                errln!("warning: {odd}");
            }
            let strict = summary.config.watchdog.strict;
            let names = [out.display().to_string()];
            out!("{}", analysis::report::render(&names, &[*summary]));
            let settings = [load_settings(out)?];
            out!("{}", analysis::settings::render_settings(&names, &settings));
            outln!("outputs in {}", out.display());
            if strict && !troubles.is_empty() {
                return Err(Exit::noted(
                    EXIT_UNFINISHED,
                    format!(
                        "strict: the run stalled or left work undone (above); exit code {EXIT_UNFINISHED}"
                    ),
                ));
            }
            Ok(())
        }
        RunOutcome::Abandoned { tick, snapshot } => {
            let from = match &snapshot {
                Some((next_tick, path)) => format!(
                    "resume with `cellsim resume {}` from snapshot {} (tick {next_tick})",
                    out.display(),
                    path.display()
                ),
                None => format!(
                    "no snapshot yet: `cellsim resume {}` starts it again",
                    out.display()
                ),
            };
            Err(Exit::noted(
                EXIT_SNAPSHOTTED,
                format!(
                    "{STOPPED_BY_A_SIGNAL} inside tick {tick}, whose remaining rounds would have taken more than {STOP_WITHIN_S} s: the tick is left undone; {from}; exit code {EXIT_SNAPSHOTTED}"
                ),
            ))
        }
        RunOutcome::Snapshotted { next_tick, path } => Err(Exit::noted(
            EXIT_SNAPSHOTTED,
            format!(
                "{STOPPED_BY_A_SIGNAL}: snapshot {} (continues at tick {next_tick}); resume with `cellsim resume {}`; exit code {EXIT_SNAPSHOTTED}",
                path.display(),
                out.display()
            ),
        )),
    }
}

/// After a run stopped by an error while simulating: the snapshot `cellsim resume` would
/// continue from, so a researcher sees that the days before it are kept (a full disk, a damaged
/// trace part or a killed node need not cost the run). `None` when the run has no usable
/// snapshot (starting again is then the same as resuming), and for errors before the first
/// tick (a refused output directory, a failed restore), which say what to do themselves.
fn resume_hint(
    config: &RunConfig,
    trace: &Path,
    out: &Path,
    progress: &RunProgress,
) -> Option<String> {
    if !progress.under_way() {
        return None;
    }
    let snapshot = engine::run_dir::choose(out, config, trace).ok()?.snapshot?;
    let tick = snapshot.header().tick;
    Some(format!(
        "note: the run is kept up to its snapshot {} (tick {tick}, {:.1} simulated h); once the cause is fixed, `cellsim resume {}` continues from there",
        snapshot.path().display(),
        tick as f64 * config.tick.secs_f64() / 3600.0,
        out.display()
    ))
}

/// A note when the run asks for more hours than the trace has events for: the cell then goes
/// on with no new events (a short trace given by mistake would otherwise pass unnoticed).
fn hours_past_the_trace(config: &RunConfig, trace: &Path) -> Option<String> {
    let (Some(hours), Ok(summary)) = (config.hours, ingest::IngestSummary::load(trace)) else {
        return None; // the engine reports an unreadable trace
    };
    let trace_end_us = summary.last_event_us() - ingest::codes::TRACE_START_US;
    let trace_hours = trace_end_us.max(0) as f64 / 3.6e9;
    (hours * 3600.0 > trace_hours * 3600.0 + config.tick.secs_f64()).then(|| {
        format!(
            "note: the trace's events end at {trace_hours:.2} h; the run's last {:.2} h have no new events",
            hours - trace_hours
        )
    })
}

fn toml_text(config: &RunConfig) -> Result<String> {
    let mut shown = config.clone();
    if shown.trace.is_none() {
        shown.trace = Some(PathBuf::from("PARQUET_DIR"));
    }
    toml::to_string(&shown).context("encoding the config")
}

/// The settings `dir`'s summary records.
fn load_settings(dir: &Path) -> Result<analysis::settings::Settings> {
    analysis::settings::load_settings(dir).with_context(|| format!("reading run {}", dir.display()))
}

/// Longest panel title, characters (about the figure's width).
const TITLE_CHARS: usize = 110;

/// A run's panel title: its directory, then its policy and the settings it changed from the
/// defaults (what tells the runs of a sweep apart), or that it has not finished.
fn panel_title(dir: &Path, finished: Option<&FinishedRun>) -> String {
    let Some(run) = finished else {
        return format!("{} (not finished)", dir.display());
    };
    let mut about = vec![run.summary.policy.clone()];
    about.extend(analysis::settings::changed(&run.settings));
    let title = format!("{} ({})", dir.display(), about.join(", "));
    console::shortened(&title, TITLE_CHARS)
}

/// A finished run as `report` reads it: its summary and its recorded settings.
struct FinishedRun {
    summary: engine::RunSummary,
    settings: analysis::settings::Settings,
}

/// Runs `cellsim report`.
pub fn report(args: ReportArgs) -> Result<()> {
    if let Some(plot) = &args.plot {
        analysis::figure::FigureFormat::of(plot)?;
    }
    // Each run, finished (with its summary and settings) or, with --plot, still going (or
    // stopped): drawn from the parts it has written, and left out of the tables. Without
    // --plot an unfinished run found in a sweep's directory is left out with a note (one named
    // itself is an error).
    let (mut runs, mut left_out) = (Vec::new(), 0);
    let mut loaded: Vec<Option<FinishedRun>> = Vec::new();
    for (dir, found) in engine::run_dir::expand(&args.runs) {
        match analysis::report::load_run(&dir) {
            Ok(summary) => loaded.push(Some(FinishedRun {
                summary,
                settings: load_settings(&dir)?,
            })),
            Err(AnalysisError::Unfinished { .. }) if args.plot.is_some() => {
                errln!(
                    "{} has not finished: left out of the tables; the figure shows the ticks of its parts written so far (one per simulated day by default)",
                    dir.display()
                );
                loaded.push(None);
            }
            Err(AnalysisError::Unfinished { .. }) if found => {
                errln!(
                    "{} has not finished: left out (`cellsim status` shows where it stands)",
                    dir.display()
                );
                left_out += 1;
                continue;
            }
            // A run of a sweep refused before it started (a bad line of flags): its log says
            // why, and the others are still reported.
            Err(AnalysisError::NotARun { .. })
                if found && !dir.join(CONFIG_FILE).exists() && dir.join(LOG_FILE).exists() =>
            {
                let log = std::fs::read_to_string(dir.join(LOG_FILE)).unwrap_or_default();
                let last = log.lines().last().map_or("", run_log::message);
                errln!(
                    "{} never started (no {CONFIG_FILE}; its log ends: {last}): left out",
                    dir.display()
                );
                left_out += 1;
                continue;
            }
            Err(e) => return Err(e).with_context(|| format!("reading run {}", dir.display())),
        }
        runs.push(dir);
    }
    if runs.is_empty() {
        bail!(
            "no finished run among the {left_out} found; `cellsim status` shows where they stand"
        );
    }
    // The figure before the tables: a reader of the tables that stops early (`| head`) ends
    // the command, and must not leave the figure unwritten.
    if let Some(plot) = &args.plot {
        let mut series = Vec::new();
        for dir in &runs {
            let points = analysis::figure::POINTS_PER_PANEL;
            series.push(
                analysis::figure::class_series(dir, points)
                    .with_context(|| format!("reading run {}", dir.display()))?,
            );
        }
        let titles: Vec<String> = (runs.iter().zip(&loaded))
            .map(|(dir, run)| panel_title(dir, run.as_ref()))
            .collect();
        analysis::figure::write_figure(plot, &titles, &series)?;
        errln!("figure written to {}", plot.display());
    }
    // The tables, of the finished runs.
    let (mut dirs, mut summaries, mut settings) = (Vec::new(), Vec::new(), Vec::new());
    for (dir, run) in runs.iter().zip(loaded) {
        if let Some(FinishedRun {
            summary,
            settings: s,
        }) = run
        {
            dirs.push(dir);
            summaries.push(summary);
            settings.push(s);
        }
    }
    if dirs.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    out!("{}", analysis::report::render(&names, &summaries));
    for (name, summary) in names.iter().zip(&summaries) {
        for line in analysis::report::liveness_lines(summary) {
            outln!("{name}: {line}");
        }
    }
    // The tables each run's policy declares (its schema.json), summarised.
    let mut declared = Vec::new();
    for dir in &dirs {
        let summaries = match analysis::policy_tables::declared(dir)? {
            Some(d) => analysis::policy_tables::summaries(dir, &d)
                .with_context(|| format!("reading the policy tables of {}", dir.display()))?,
            None => Vec::new(),
        };
        declared.push(summaries);
    }
    out!(
        "{}",
        analysis::report::render_policy_tables(&names, &declared)
    );
    let mut deadlines = Vec::new();
    let mut solver_ms = Vec::new();
    for (dir, summary) in dirs.iter().zip(&summaries) {
        let read = || format!("reading the deadlines of {}", dir.display());
        deadlines.push(analysis::deadlines::of_run(dir).with_context(read)?);
        let solves = summary.totals.counters.get("nbs_solves").copied();
        solver_ms.push(
            analysis::deadlines::solver_ms_per_solve(dir, solves.unwrap_or(0.0))
                .with_context(read)?,
        );
    }
    out!(
        "{}",
        analysis::deadlines::render(&names, &deadlines, &solver_ms)
    );
    out!("{}", analysis::settings::render_settings(&names, &settings));
    if args.paper {
        // The classes hour by hour, from the ticks, of each run shorter than the paper's month
        // (its average can hide a trend); none read for the others.
        let mut hours = Vec::new();
        for (dir, summary) in dirs.iter().zip(&summaries) {
            let tick_us = u64::try_from(summary.config.tick.us()).unwrap_or(0);
            hours.push(match analysis::paper::shows_hours(summary) {
                true => analysis::hourly::class_shares_by_hour(dir, tick_us)
                    .with_context(|| format!("reading run {}", dir.display()))?,
                false => Vec::new(),
            });
        }
        out!("{}", analysis::paper::render(&names, &summaries, &hours));
    }
    if args.timing {
        // A run without timing to show gets "-" and a note saying why.
        let timing_of = |d: &&PathBuf| match analysis::timing::phase_medians(d, args.from_tick) {
            Ok(t) => Some(t),
            Err(e) => {
                errln!("no timing for {}: {e}", d.display());
                None
            }
        };
        let timings: Vec<_> = dirs.iter().map(timing_of).collect();
        out!("{}", analysis::report::render_timing(&names, &timings));
    }
    Ok(())
}
