//! The simulation loop: for each tick, apply the trace, run the policy's hooks and rounds, measure,
//! and write outputs; then the summary. See `policy.rs` for the tick structure.
//!
//! Between ticks the loop snapshots the whole simulation when a trigger fires (`snapshot/`):
//! every N simulated minutes, every W wall minutes, or when [`RunProgress::stop`] is set (by the
//! binary's signal handler), after which the run returns [`RunOutcome::Snapshotted`]. A run
//! started from a snapshot continues exactly where the snapshot was taken: its outputs are
//! byte-identical to an uninterrupted run's. A periodic snapshot that cannot be written is
//! reported through [`RunProgress::warnings`] and the run goes on (writing one changes
//! nothing in the state); one requested through `stop` that fails ends the run with its error.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use ingest::codes::TRACE_START_US;
use ingest::{IngestSummary, Table};

use crate::active::{ActiveScratch, RoundClock, WakeQueue, run_active_round};
use crate::cell::Cell;
use crate::config::RunConfig;
use crate::delay::{DelayQueue, SavedDelays};
use crate::error::{EngineError, Result};
use crate::executor::{Granularity, Mailbox, RoundScratch, fair_order_key, run_round};
use crate::ids::Tick;
use crate::output::{FileMetadata, OutputState, RunOutputs, TickTiming};
use crate::parallel_time::parallel_ns;
use crate::policies::WithPolicy;
use crate::policy::{Due, Envelope, Policy, PolicyCounters, TableRows};
use crate::replay::Replay;
use crate::run_dir::RunSection;
use crate::run_identity::RunRecord;
use crate::snapshot::{self, Header, Snapshot, SnapshotError, SnapshotWriter, state};
use crate::summary::{Accumulator, BuildSpan, RunSummary, WorkLeft, peak_rss_mb};
use crate::watchdog::Watchdog;

pub use crate::run_dir::{CONFIG_FILE, SUMMARY_FILE};

/// Counters a caller can poll for progress.
#[derive(Debug, Default)]
pub struct RunProgress {
    /// Ticks to simulate; 0 until the run is under way (see [`RunProgress::under_way`]).
    pub ticks_total: AtomicU64,
    /// Ticks done (including those done before a resume).
    pub ticks_done: AtomicU64,
    /// The tick this process started at (non-zero after a resume).
    pub first_tick: AtomicU64,
    /// Set to stop after the current tick with a snapshot (a signal handler's flag).
    pub stop: Arc<AtomicBool>,
    /// Milliseconds it took to restore the state from a snapshot, at least 1 (0 for a fresh run
    /// or before the restore is done).
    pub restore_ms: AtomicU64,
    /// Warnings for the caller to show (and take): periodic snapshots that failed (to be
    /// written, or to prune older ones), and a resume by another build than the snapshot's. A
    /// failed periodic snapshot (a full disk, a quota) does not end the run: it goes on, the next
    /// trigger tries again, and the newest snapshot written stays the one to resume from. A
    /// snapshot requested through `stop` that fails ends the run with its error.
    pub warnings: Mutex<Vec<String>>,
}

impl RunProgress {
    /// True once the run has started simulating: its output directory was accepted and its
    /// state built or restored.
    pub fn under_way(&self) -> bool {
        self.ticks_total.load(Ordering::Relaxed) > 0
    }
}

/// How a run ended.
#[derive(Debug)]
pub enum RunOutcome {
    /// Every tick done; outputs and `summary.json` written.
    Complete(Box<RunSummary>),
    /// Stopped on request after a snapshot; resume to continue.
    Snapshotted {
        /// The tick the run continues at.
        next_tick: u64,
        /// The snapshot written.
        path: PathBuf,
    },
    /// Stopped on request inside a tick whose remaining rounds would have taken longer than
    /// [`STOP_WITHIN_S`]: the tick was left undone, and a resume continues from the newest
    /// snapshot (none: from the beginning).
    Abandoned {
        /// The tick left undone.
        tick: u64,
        /// The newest snapshot, with the tick it continues at.
        snapshot: Option<(u64, PathBuf)>,
    },
}

/// A stop request seen between the rounds of a tick ends the tick as usual (then snapshots)
/// when its remaining rounds, at the pace of its rounds so far, take at most this many wall
/// seconds; otherwise the tick is abandoned at once ([`RunOutcome::Abandoned`]). So a run stops
/// within about this long plus one round and a snapshot's writing, however slow its ticks.
pub const STOP_WITHIN_S: f64 = 5.0;

/// How a tick ended.
enum TickEnd {
    /// Every round done, the tick's outputs written.
    Done,
    /// Left undone on a stop request ([`STOP_WITHIN_S`]).
    Abandoned,
}

impl RunOutcome {
    /// The summary of a complete run.
    pub fn complete(self) -> Option<RunSummary> {
        match self {
            RunOutcome::Complete(s) => Some(*s),
            RunOutcome::Snapshotted { .. } | RunOutcome::Abandoned { .. } => None,
        }
    }
}

/// A run of a scenario's trace without `hours` goes on until its work is done: at most this
/// many ticks (the run's own bound, `Simulation::run`).
pub const OPEN_ENDED_TICKS: u32 = u32::MAX;

/// Ticks to simulate: `hours` of the window, or up to the trace's last event; for a scenario's
/// trace (`scenario`: side tables) without `hours`, [`OPEN_ENDED_TICKS`]: the run ends when its
/// work is done.
///
/// A length of more ticks than a run holds (u32) is an error, and so is one ending more than an
/// hour, or a tenth of the trace if more, after the trace's last event unless
/// `past_trace_end` allows it (the cell would run on with no new work, writing outputs), and a
/// scenario's `hours` ending before its last submission (its work cannot be done by then).
pub fn ticks_to_run(config: &RunConfig, last_event_us: i64, scenario: bool) -> Result<u32> {
    let tick_us = config.tick.us();
    let trace_s = (last_event_us - TRACE_START_US).max(0) as f64 / 1e6;
    let ticks = match config.hours {
        Some(h) if scenario && h * 3600.0 < trace_s => {
            return Err(EngineError::RunLength(format!(
                "hours = {h} ends before the scenario's last submission ({:.4} h in), so its work cannot be done; leave hours out to run until every job has finished",
                trace_s / 3600.0
            )));
        }
        Some(h) => {
            let margin_s = (trace_s / 10.0).max(3_600.0);
            if h * 3600.0 > trace_s + margin_s && !config.past_trace_end && !scenario {
                return Err(EngineError::RunLength(format!(
                    "hours = {h} ends {:.1} h after the trace's last event ({:.1} h in); set past_trace_end = true (or --past-trace-end) to run on with no new work",
                    h - trace_s / 3600.0,
                    trace_s / 3600.0
                )));
            }
            ((h * 3600.0) / config.tick.secs_f64()).ceil().max(1.0)
        }
        None if scenario => return Ok(OPEN_ENDED_TICKS),
        None => ((last_event_us - TRACE_START_US).max(0) / tick_us + 1) as f64,
    };
    if ticks > u32::MAX as f64 {
        return Err(EngineError::RunLength(format!(
            "the run would be {ticks:.0} ticks of {}, more than the {} a run holds; ask for fewer hours or longer ticks",
            config.tick,
            u32::MAX
        )));
    }
    Ok(ticks as u32)
}

/// Writes `config` as the run's `run.toml` in `out_dir` (what `cellsim resume` reads), with
/// `trace_dir` made absolute as its trace, whole or not at all.
fn save_config(config: &RunConfig, trace_dir: &Path, out_dir: &Path) -> Result<()> {
    let mut saved = config.clone();
    saved.trace = Some(std::path::absolute(trace_dir).map_err(EngineError::io(trace_dir))?);
    let text = toml::to_string(&saved).expect("a config serialises");
    let path = out_dir.join(CONFIG_FILE);
    ingest::atomic_file::write_atomically(&path, |w| w.write_all(text.as_bytes())).map_err(|e| {
        EngineError::Io {
            path: e.path,
            source: e.source,
        }
    })
}

/// Replays the ingested trace in `trace_dir` under `policy`, writing outputs to `out_dir`; from
/// `resume` (see [`crate::run_dir::choose`]) when given, else from the beginning.
pub fn run<P: Policy + Send>(
    config: &RunConfig,
    trace_dir: &Path,
    out_dir: &Path,
    policy: P,
    progress: &RunProgress,
    resume: Option<Snapshot>,
) -> Result<RunOutcome> {
    config.validate().map_err(|problem| EngineError::Config {
        path: "config".into(),
        problem,
    })?;
    crate::run_dir::remove_temporaries(out_dir)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .build()
        .map_err(|e| EngineError::Config {
            path: "threads".into(),
            problem: e.to_string(),
        })?;
    pool.install(|| {
        let sim = match resume {
            Some(snap) => {
                let t = Instant::now();
                let sim = Simulation::restore(config, trace_dir, out_dir, policy, &snap)?;
                let ms = t.elapsed().as_millis() as u64;
                progress.restore_ms.store(ms.max(1), Ordering::Relaxed);
                if let [.., before, now] = sim.builds.as_slice()
                    && now.from_tick == sim.next_tick as u64
                {
                    let warning = format!(
                        "the snapshot was written by cellsim {}, this is {}: the run's outputs from tick {} on come from this build (summary.json lists the builds)",
                        before.build, now.build, now.from_tick
                    );
                    warn(progress, warning);
                }
                sim
            }
            None => Simulation::start(config, trace_dir, out_dir, policy)?,
        };
        // With task_usage, the model only stands in before a task's first sample (the default:
        // the report's "usage from" says "task_usage + model"); without it, it is all there is.
        let stats = &sim.replay.stats;
        if stats.usage_model && !stats.usage_from_trace {
            let u = &config.usage;
            warn(
                progress,
                format!(
                    "the trace has no task_usage: tasks use the usage model's share of their requests (CPU {:?}, memory {:?} for priorities 0-1, 2-8, 9-11{}{}; [usage] in the config, source = \"requests\" to use requests)",
                    u.cpu_ratio,
                    u.mem_ratio,
                    if u.per_task { ", each task its own share around them" } else { "" },
                    if u.cpu_compressible { ", CPU past the request throttled at each node's capacity" } else { "" },
                ),
            );
        }
        sim.run(progress)
    })
}

/// Runs `config`'s policy ([`run()`] with the policy its `[policy]` table configures).
pub fn run_configured(
    config: &RunConfig,
    trace_dir: &Path,
    out_dir: &Path,
    progress: &RunProgress,
    resume: Option<Snapshot>,
) -> Result<RunOutcome> {
    /// [`run()`] with the policy built.
    struct Runs<'a>(
        &'a RunConfig,
        &'a Path,
        &'a Path,
        &'a RunProgress,
        Option<Snapshot>,
    );
    impl WithPolicy for Runs<'_> {
        type Output = RunOutcome;
        fn with<P: Policy + Send>(self, policy: P) -> Result<RunOutcome> {
            let Runs(config, trace_dir, out_dir, progress, resume) = self;
            run(config, trace_dir, out_dir, policy, progress, resume)
        }
    }
    let runs = Runs(config, trace_dir, out_dir, progress, resume);
    config
        .policy
        .build_with(&config.settings(), trace_dir, runs)
}

/// [`restore_and_resnapshot`] with the policy `config`'s `[policy]` table configures: restores
/// the run in `out_dir` from `snap` and writes it again to `to`.
pub fn resnapshot_configured(
    config: &RunConfig,
    trace_dir: &Path,
    out_dir: &Path,
    snap: &Snapshot,
    to: &Path,
) -> Result<()> {
    /// [`restore_and_resnapshot`] with the policy built.
    struct Resnapshots<'a>(&'a RunConfig, &'a Path, &'a Path, &'a Snapshot, &'a Path);
    impl WithPolicy for Resnapshots<'_> {
        type Output = ();
        fn with<P: Policy + Send>(self, policy: P) -> Result<()> {
            let Resnapshots(config, trace_dir, out_dir, snap, to) = self;
            restore_and_resnapshot(config, trace_dir, out_dir, policy, snap, to)
        }
    }
    let resnapshots = Resnapshots(config, trace_dir, out_dir, snap, to);
    config
        .policy
        .build_with(&config.settings(), trace_dir, resnapshots)
}

/// Restores the run in `out_dir` from `snap` (as [`run`] does to resume it) and, without
/// simulating anything, writes the restored state as a snapshot to `to`: for tests of the
/// snapshot round trip (the bytes must equal `snap`'s when the same build restores it). Like a
/// resume it reopens the run's outputs, discarding parts written after `snap`: restore a run's
/// snapshots newest first.
pub fn restore_and_resnapshot<P: Policy + Send>(
    config: &RunConfig,
    trace_dir: &Path,
    out_dir: &Path,
    policy: P,
    snap: &Snapshot,
    to: &Path,
) -> Result<()> {
    let mut sim = Simulation::restore(config, trace_dir, out_dir, policy, snap)?;
    let wall_s = sim.wall_before_s;
    sim.write_snapshot(wall_s, to)
}

/// Adds `warning` to those the caller shows ([`RunProgress::warnings`]).
fn warn(progress: &RunProgress, warning: String) {
    (progress.warnings.lock())
        .unwrap_or_else(PoisonError::into_inner)
        .push(warning);
}

/// Everything a run holds between ticks (what a snapshot saves).
struct Simulation<'a, P: Policy> {
    config: &'a RunConfig,
    trace_dir: &'a Path,
    out_dir: &'a Path,
    policy: P,
    kinds: &'static [&'static str],
    replay: Replay,
    cell: Cell,
    agents: Vec<P::Agent>,
    mailbox: Mailbox<P::Msg>,
    /// Wake-ups the agents asked for (active stepping, `active.rs`).
    wakes: WakeQueue,
    /// Messages sent with a delivery time (`delay.rs`).
    delays: DelayQueue<P::Msg>,
    active: ActiveScratch,
    scratch: RoundScratch<P::Msg, P::Action>,
    /// Scratch: the policy's table rows of a tick (emptied into the outputs, room kept).
    table_rows: TableRows,
    acc: Accumulator,
    /// The metrics' incremental node classification (not saved: a restore classifies afresh).
    classifier: crate::metrics::Classifier,
    outputs: RunOutputs,
    next_tick: u32,
    total: u32,
    wall_before_s: f64,
    /// The builds that simulated the run so far, the last this one.
    builds: Vec<BuildSpan>,
    header: Header,
    /// Stalls noticed so far (`watchdog.rs`).
    watchdog: Watchdog,
    /// Ticks a stall spans at least.
    stall_span: u32,
    /// The trace is a scenario's (side tables): the run goes on until its work is done.
    scenario: bool,
    /// The trace's last event, microseconds.
    last_event_us: i64,
    /// The last tick's waiting and running tasks.
    work: (u64, u64),
}

/// The part of a run a snapshot restores (empty at the start).
struct State<P: Policy> {
    replay: Replay,
    cell: Cell,
    agents: Vec<P::Agent>,
    messages: Vec<Envelope<P::Msg>>,
    wakes: WakeQueue,
    delays: DelayQueue<P::Msg>,
    acc: Accumulator,
    outputs: OutputState,
    next_tick: u32,
    wall_before_s: f64,
    builds: Vec<BuildSpan>,
    watchdog: Watchdog,
}

impl<'a, P: Policy> Simulation<'a, P> {
    /// The run of `config` over `trace_dir` into `out_dir` continuing from `state`: the replay
    /// set up for the policy and scaling, the outputs opened (parts after `state` discarded).
    fn assemble(
        (config, trace_dir, out_dir): (&'a RunConfig, &'a Path, &'a Path),
        policy: P,
        state: State<P>,
        (total, header, last_event_us): (u32, Header, i64),
    ) -> Result<Self> {
        let kinds = policy.message_kinds();
        let counter_kinds = policy.counter_kinds();
        let mut replay = state.replay;
        replay.set_workload_mode(!policy.replays_placements());
        replay.set_initial_placements(policy.takes_initial_placements());
        replay.set_exact_schedule(policy.exact_time());
        replay.set_scale(config.scale);
        let mut cell = state.cell;
        let scenario = ingest::scenario::side::present(trace_dir);
        cell.set_request_use(config.usage.request_use(scenario, config.seed));
        cell.set_cpu_throttled(
            config
                .usage
                .throttles_cpu(scenario, replay.stats.usage_from_trace),
        );
        cell.set_fit_by(policy.fit_rule(config.fit));
        cell.set_hold_for_trace_schedule(
            config.release == crate::release::Release::TraceSchedule
                && !policy.replays_placements(),
        );
        replay.stats.usage_model = config.usage.applies(scenario);
        let mut outputs = RunOutputs::open(
            out_dir,
            (counter_kinds, kinds),
            policy.tables(),
            (config.part_ticks(), config.part_rows),
            state.outputs,
        )?;
        outputs.describe(&FileMetadata {
            policy: config.policy.kind().to_string(),
            seed: config.seed,
            config_hash: header.config_hash,
            trace_hash: header.trace_hash,
            build: crate::build().to_string(),
        });
        Ok(Simulation {
            outputs,
            mailbox: Mailbox::group_as(
                !policy.steps_every_agent(),
                &state.messages,
                state.agents.len(),
            ),
            wakes: state.wakes,
            delays: state.delays,
            active: ActiveScratch::default(),
            scratch: RoundScratch::default(),
            table_rows: TableRows::default(),
            config,
            trace_dir,
            out_dir,
            policy,
            kinds,
            replay,
            cell,
            agents: state.agents,
            acc: state.acc,
            classifier: crate::metrics::Classifier::default(),
            next_tick: state.next_tick,
            total,
            wall_before_s: state.wall_before_s,
            builds: state.builds,
            header,
            watchdog: state.watchdog,
            stall_span: config.watchdog.span_ticks(config.tick.us()),
            scenario,
            last_event_us,
            work: (0, 0),
        })
    }

    fn identity(
        config: &RunConfig,
        trace_dir: &Path,
        next_tick: u32,
    ) -> Result<(u32, Header, i64)> {
        let ingest_summary = IngestSummary::load(trace_dir)?;
        ingest_summary.check_parts(trace_dir)?;
        let machine_events = ingest_summary.tables.get(Table::MachineEvents.name());
        if machine_events.is_none_or(|t| t.rows == 0) {
            return Err(EngineError::NoMachines {
                trace: trace_dir.to_path_buf(),
            });
        }
        let scenario = ingest::scenario::side::present(trace_dir);
        let last_event_us = ingest_summary.last_event_us();
        let total = ticks_to_run(config, last_event_us, scenario)?;
        let header = Header {
            tick: next_tick as u64,
            config_hash: crate::config::config_hash(config),
            trace_hash: snapshot::trace_hash(trace_dir)?,
            run_id: config.run.as_ref().map_or(0, RunRecord::id_u64),
        };
        Ok((total, header, last_event_us))
    }

    fn start(
        config: &'a RunConfig,
        trace_dir: &'a Path,
        out_dir: &'a Path,
        policy: P,
    ) -> Result<Self> {
        let identity = Self::identity(config, trace_dir, 0)?;
        std::fs::create_dir_all(out_dir).map_err(EngineError::io(out_dir))?;
        if out_dir.join(SUMMARY_FILE).exists() {
            return Err(EngineError::RunExists {
                path: out_dir.to_path_buf(),
            });
        }
        if !crate::run_dir::list(out_dir)?.is_empty() {
            return Err(EngineError::RunUnfinished {
                path: out_dir.to_path_buf(),
            });
        }
        let tables = crate::output::TABLES.into_iter();
        let tables: Vec<&str> = tables
            .chain(policy.tables().iter().map(|t| t.name))
            .collect();
        crate::run_dir::check_fresh(out_dir, config, &tables)?;
        save_config(config, trace_dir, out_dir)?;
        crate::output::schema::RunSchema::of(&policy).write(out_dir)?;
        let state = State {
            replay: Replay::open(trace_dir)?,
            cell: Cell::default(),
            agents: Vec::new(),
            messages: Vec::new(),
            wakes: WakeQueue::default(),
            delays: DelayQueue::default(),
            acc: Accumulator::default(),
            outputs: OutputState::default(),
            next_tick: 0,
            wall_before_s: 0.0,
            builds: vec![BuildSpan {
                build: crate::build().to_string(),
                from_tick: 0,
            }],
            watchdog: Watchdog::default(),
        };
        Self::assemble((config, trace_dir, out_dir), policy, state, identity)
    }

    fn restore(
        config: &'a RunConfig,
        trace_dir: &'a Path,
        out_dir: &'a Path,
        mut policy: P,
        snap: &Snapshot,
    ) -> Result<Self> {
        let next_tick = u32::try_from(snap.header().tick).map_err(|_| SnapshotError::Corrupt {
            path: snap.path().to_path_buf(),
            problem: format!("impossible tick {}", snap.header().tick),
        })?;
        let identity = Self::identity(config, trace_dir, next_tick)?;
        let header = identity.1;
        let found = snap.header();
        if (header.config_hash, header.trace_hash, header.run_id)
            != (found.config_hash, found.trace_hash, found.run_id)
        {
            return Err(SnapshotError::Mismatch {
                path: snap.path().to_path_buf(),
                problem:
                    "taken with another configuration or trace than this run's, or by another run"
                        .into(),
            }
            .into());
        }
        // The trace, checked above, may have moved since the run started (`cellsim resume
        // --trace`): later resumes read it from where it is now.
        let mut recorded = RunConfig::from_file(&out_dir.join(CONFIG_FILE))?;
        let trace_now = std::path::absolute(trace_dir).map_err(EngineError::io(trace_dir))?;
        if recorded.trace.as_deref() != Some(trace_now.as_path()) {
            recorded.run.clone_from(&config.run);
            save_config(&recorded, trace_dir, out_dir)?;
        }
        crate::output::schema::RunSchema::of(&policy).write(out_dir)?;
        let cell = state::load_cell(&mut snap.section("cell")?)?;
        let replay = state::load_replay(trace_dir, &cell, &mut snap.section("replay")?)?;
        let mut r = snap.section("policy")?;
        policy.load_state(&mut r)?;
        let agents: Vec<P::Agent> = r.serde()?;
        let messages: Vec<Envelope<P::Msg>> = r.serde()?;
        let wakes: Vec<(u64, u32)> = r.serde()?;
        let delays: SavedDelays<P::Msg> = r.serde()?;
        if messages.iter().any(|m| m.to.index() >= agents.len())
            || wakes.iter().any(|w| w.1 as usize >= agents.len())
            || delays.0.iter().any(|d| d.2.to.index() >= agents.len())
        {
            return Err(r
                .corrupt("a message or wake-up for an agent that does not exist")
                .into());
        }
        let (acc, outputs, wall_before_s, builds, watchdog): RunSection =
            snap.section("run")?.serde()?;
        let builds = BuildSpan::resumed_by(builds, crate::build(), next_tick as u64);
        let state = State {
            replay,
            cell,
            agents,
            messages,
            wakes: WakeQueue::from_sorted(wakes),
            delays: DelayQueue::restore(delays),
            acc,
            outputs,
            next_tick,
            wall_before_s,
            builds,
            watchdog,
        };
        let mut sim = Self::assemble((config, trace_dir, out_dir), policy, state, identity)?;
        // The metrics count usage rises against the tick before the snapshot (`metrics.rs`).
        sim.classifier.prime(&mut sim.cell, &config.classify);
        Ok(sim)
    }

    /// Writes a snapshot of the state before `self.next_tick` and prunes old ones.
    fn snapshot(&mut self, wall_s: f64) -> Result<PathBuf> {
        let dir = self.out_dir.join(crate::run_dir::SNAPSHOT_DIR);
        std::fs::create_dir_all(&dir).map_err(EngineError::io(&dir))?;
        let path = dir.join(crate::run_dir::file_name(self.next_tick as u64));
        self.write_snapshot(wall_s, &path)?;
        crate::run_dir::prune(self.out_dir, self.config.snapshot.keep)?;
        Ok(path)
    }

    /// Writes a snapshot of the state before `self.next_tick` to `path`.
    fn write_snapshot(&mut self, wall_s: f64, path: &Path) -> Result<()> {
        let mut w = SnapshotWriter::create(path, &["cell", "replay", "policy", "run"])?;
        state::save_cell(&self.cell, w.section("cell"));
        state::save_replay(&self.replay, w.section("replay"));
        let p = w.section("policy");
        self.policy.save_state(p);
        if let Some(problem) = self.policy.take_failure() {
            let tick = self.next_tick.saturating_sub(1);
            return Err(EngineError::Policy { tick, problem });
        }
        p.serde(&self.agents);
        p.serde(&self.mailbox.messages());
        p.serde(&self.wakes.to_sorted());
        p.serde(&self.delays.save());
        let outputs = self.outputs.state()?;
        w.section("run")
            .serde(&(&self.acc, outputs, wall_s, &self.builds, &self.watchdog));
        let header = Header {
            tick: self.next_tick as u64,
            ..self.header
        };
        Ok(w.finish(header)?)
    }

    fn run(mut self, progress: &RunProgress) -> Result<RunOutcome> {
        let started = Instant::now();
        let mut last_snapshot = Instant::now();
        // An open-ended run shows the trace's span as its length until it runs past it.
        let open_ended = self.total == OPEN_ENDED_TICKS;
        let trace_ticks = ((self.last_event_us - TRACE_START_US).max(0) / self.config.tick.us() + 1)
            .min(u32::MAX as i64) as u64;
        let total = self.total as u64;
        let shown_total = |next_tick: u32| match open_ended {
            true => trace_ticks.max(next_tick as u64 + 1),
            false => total,
        };
        progress
            .ticks_total
            .store(shown_total(self.next_tick), Ordering::Relaxed);
        progress
            .first_tick
            .store(self.next_tick as u64, Ordering::Relaxed);
        progress
            .ticks_done
            .store(self.next_tick as u64, Ordering::Relaxed);
        let snap = self.config.snapshot;
        let sim_every_us = snap.every_sim_minutes as i64 * 60_000_000;
        while self.next_tick < self.total {
            let stalls_before = self.watchdog.stalls().len();
            if let TickEnd::Abandoned = self.tick(&progress.stop)? {
                let newest = crate::run_dir::list(self.out_dir)?.into_iter().next();
                return Ok(RunOutcome::Abandoned {
                    tick: self.next_tick as u64,
                    snapshot: newest.and_then(|p| Some((crate::run_dir::tick_of(&p)?, p))),
                });
            }
            self.warn_of_new_stall(progress, stalls_before);
            progress
                .ticks_done
                .store(self.next_tick as u64, Ordering::Relaxed);
            progress
                .ticks_total
                .store(shown_total(self.next_tick), Ordering::Relaxed);
            if self.next_tick == self.total || (open_ended && self.work_ended()) {
                break;
            }
            let stop = progress.stop.load(Ordering::Relaxed);
            let simulated_us = self.next_tick as i64 * self.config.tick.us();
            let sim_due = sim_every_us > 0 && simulated_us % sim_every_us == 0;
            let wall_due = snap.every_wall_minutes > 0.0
                && last_snapshot.elapsed().as_secs_f64() >= snap.every_wall_minutes * 60.0;
            if stop || sim_due || wall_due {
                let t = Instant::now();
                match self.snapshot(self.wall_before_s + started.elapsed().as_secs_f64()) {
                    Ok(path) if stop => {
                        return Ok(RunOutcome::Snapshotted {
                            next_tick: self.next_tick as u64,
                            path,
                        });
                    }
                    Ok(_) => self
                        .outputs
                        .note_snapshot_ms(t.elapsed().as_secs_f64() * 1e3),
                    // A policy that cannot save its state fails the run (`hosted/`): its
                    // snapshots could never be resumed.
                    Err(e) if !stop && !matches!(e, EngineError::Policy { .. }) => {
                        let message = format!(
                            "the snapshot before tick {} failed; the run goes on and tries again at the next snapshot: {e}",
                            self.next_tick
                        );
                        warn(progress, message);
                    }
                    Err(e) => return Err(e),
                }
                last_snapshot = Instant::now();
            }
        }
        let wall_s = self.wall_before_s + started.elapsed().as_secs_f64();
        let summary = self.finish(wall_s)?;
        Ok(RunOutcome::Complete(Box::new(summary)))
    }

    /// Tells the caller when the watchdog noticed a stall in the tick just done (beyond the
    /// first `stalls_before`), so a batch job's log says so while the run can still be stopped;
    /// the summary and `report` give every stall again at the end.
    fn warn_of_new_stall(&self, progress: &RunProgress, stalls_before: usize) {
        let Some(stall) = self.watchdog.stalls().get(stalls_before) else {
            return;
        };
        let tick_s = self.config.tick.secs_f64();
        warn(
            progress,
            format!(
                "{}; the run goes on (--strict makes it exit {} at its end)",
                stall.describe(u64::from(self.next_tick), tick_s, false),
                crate::watchdog::EXIT_UNFINISHED,
            ),
        );
    }

    /// Whether an open-ended run (a scenario's, without `hours`) ends after the tick just done:
    /// past the trace's last event, with no task left, or with none running and none placed
    /// for a stall's span (what waits then would wait for ever: a stall the watchdog recorded,
    /// or tasks no node can hold).
    fn work_ended(&self) -> bool {
        let end_us = TRACE_START_US + self.next_tick as i64 * self.config.tick.us();
        let (waiting, running) = self.work;
        let tick = self.next_tick - 1;
        end_us > self.last_event_us
            && running == 0
            && (waiting == 0 || self.watchdog.quiet_ticks(tick) >= self.stall_span)
    }

    fn tick(&mut self, stop: &AtomicBool) -> Result<TickEnd> {
        let config = self.config;
        let tick = self.next_tick;
        let t0 = Instant::now();
        let p0 = parallel_ns();
        let tick_us = config.tick.us();
        let end_us = TRACE_START_US + (tick as i64 + 1) * tick_us;
        self.cell.enter_usage_window(tick as i64 * tick_us);
        let events = self.replay.advance(&mut self.cell, end_us)?;
        if tick + 1 < self.total {
            // The next tick's usage rows are read while this one's policy runs.
            self.replay.read_usage_ahead(end_us + tick_us);
        }
        let (t1, p1) = (Instant::now(), parallel_ns());
        let mut counters = PolicyCounters::default();
        let mut counts = vec![0u64; self.kinds.len()];
        let mut inject = Vec::new();
        let (cell, agents) = (&mut self.cell, &mut self.agents);
        self.policy.begin_tick(
            cell,
            (Tick(tick), end_us),
            &events,
            agents,
            &mut inject,
            &mut counters,
        );
        if let Some(problem) = self.policy.take_failure() {
            return Err(EngineError::Policy { tick, problem });
        }
        self.policy.take_messages(&mut counts);
        if !inject.is_empty() {
            // Injected messages are counted by kind like those agents send.
            for e in &inject {
                if let Some(c) = counts.get_mut(self.policy.message_kind(&e.msg)) {
                    *c += 1;
                }
            }
            let mut all = self.mailbox.messages().to_vec();
            all.extend(inject);
            let sparse = !self.policy.steps_every_agent();
            self.mailbox = Mailbox::group_as(sparse, &all, agents.len());
        }
        let clock = RoundClock {
            tick_us,
            rounds_per_tick: config.rounds_per_tick,
        };
        let sparse = !self.policy.steps_every_agent();
        let rounds = if agents.is_empty() || self.policy.exact_time() {
            0
        } else {
            config.rounds_per_tick
        };
        let rounds_started = Instant::now();
        for round in 0..rounds {
            if round > 0 && stop.load(Ordering::Relaxed) {
                let per_round_s = rounds_started.elapsed().as_secs_f64() / f64::from(round);
                if per_round_s * f64::from(rounds - round) > STOP_WITHIN_S {
                    return Ok(TickEnd::Abandoned);
                }
            }
            let g = clock.global(Tick(tick), round);
            let round_us = end_us - tick_us + tick_us * i64::from(round) / i64::from(rounds);
            self.policy.begin_round(cell, round_us, &mut counters);
            self.delays
                .deliver_due(g, &mut self.mailbox, agents.len(), sparse);
            if config.inbox_order.is_fair() {
                self.mailbox.shuffle_inboxes(fair_order_key(config.seed, g));
            }
            if sparse {
                run_active_round(
                    &mut self.policy,
                    cell,
                    agents,
                    &mut self.mailbox,
                    &mut self.scratch,
                    (&mut self.wakes, &mut self.active),
                    (Tick(tick), round, clock),
                    (end_us, config.seed),
                    Granularity::default(),
                    &mut counts,
                    &mut counters,
                );
            } else {
                run_round(
                    &mut self.policy,
                    cell,
                    agents,
                    &mut self.mailbox,
                    &mut self.scratch,
                    Tick(tick),
                    round,
                    end_us,
                    config.seed,
                    Granularity::default(),
                    &mut counts,
                    &mut counters,
                );
            }
            for (message, due) in self.scratch.delayed.drain(..) {
                let round = match due {
                    Due::At(at_us) => clock.first_at(at_us),
                    Due::AfterRounds(k) => g + k as u64,
                };
                self.delays.push(round.max(g + 1), message);
            }
        }
        self.policy.end_tick(cell, end_us, &mut counters);
        let mut samples = Vec::new();
        self.policy.take_samples(agents, &mut samples);
        let mut rows = std::mem::take(&mut self.table_rows);
        self.policy.take_rows(&mut rows);
        let (t2, p2) = (Instant::now(), parallel_ns());
        if config.check_invariants {
            cell.check()
                .map_err(|problem| EngineError::Invariant { tick, problem })?;
        }
        let mut row = self
            .classifier
            .measure(cell, &config.classify, tick, end_us);
        if config.check_invariants {
            (self.classifier.check(cell, &config.classify))
                .map_err(|problem| EngineError::Invariant { tick, problem })?;
        }
        row.counters = counters;
        row.messages = counts;
        self.work = (row.tasks_pending, row.tasks_running);
        let placed = self.cell.take_placements();
        let (cell, policy) = (&self.cell, &self.policy);
        (self.watchdog).observe(tick, (placed, row.tasks_pending), self.stall_span, || {
            crate::greedy::fitting_waiting_tasks(cell, policy)
        });
        self.acc
            .add(&row, (self.policy.counter_kinds(), self.kinds));
        let (t3, p3) = (Instant::now(), parallel_ns());
        self.outputs.samples(&mut samples)?;
        if tick.is_multiple_of(config.nodes_every_ticks()) {
            self.outputs.node_snapshot(cell, tick, end_us)?;
        }
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        let (t4, p4) = (Instant::now(), parallel_ns());
        let parallel_ms = |a: u64, b: u64| (b - a) as f64 / 1e6;
        let timing = TickTiming {
            tick,
            wall_ms: ms(t0, t4),
            apply_ms: ms(t0, t1),
            policy_ms: ms(t1, t2),
            metrics_ms: ms(t2, t3),
            output_ms: ms(t3, t4),
            snapshot_ms: 0.0,
            solver_ms: self.policy.take_solver_ms(),
            parallel_ms: [
                parallel_ms(p0, p1),
                parallel_ms(p1, p2),
                parallel_ms(p2, p3),
                parallel_ms(p3, p4),
            ],
        };
        let written = self.outputs.tick(row, timing, &mut rows);
        self.table_rows = rows;
        written?;
        self.next_tick += 1;
        Ok(TickEnd::Done)
    }

    fn finish(self, wall_s: f64) -> Result<RunSummary> {
        self.outputs.finish()?;
        let acc = self.acc;
        let ticks = acc.ticks();
        let (averages, totals) = acc.finish();
        let simulated_s = ticks as f64 * self.config.tick.secs_f64();
        let summary = RunSummary {
            version: env!("CARGO_PKG_VERSION").to_string(),
            builds: self.builds.clone(),
            policy: self.policy.name().to_string(),
            admits_by: self.policy.admits_by(self.config.fit),
            config: self.config.clone(),
            trace: match &self.config.run {
                Some(run) => run.trace.display().to_string(),
                None => self.trace_dir.display().to_string(),
            },
            ticks,
            simulated_s,
            averages,
            totals,
            replay: self.replay.stats(),
            work_left: WorkLeft {
                tasks_waiting: self.work.0,
                tasks_running: self.work.1,
                scenario: self.scenario,
            },
            stalls: self.watchdog.stalls().to_vec(),
            wall_s,
            speed_x_real_time: simulated_s / wall_s.max(1e-9),
            peak_rss_mb: peak_rss_mb(),
        };
        ingest::ingest::write_json_atomically(&self.out_dir.join(SUMMARY_FILE), &summary)?;
        Ok(summary)
    }
}
