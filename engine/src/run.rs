//! The simulation loop: for each tick, apply the trace, run the policy's hooks and rounds, measure,
//! and write outputs; then the summary. See `policy.rs` for the tick structure.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ingest::IngestSummary;
use ingest::codes::TRACE_START_US;

use crate::cell::Cell;
use crate::config::RunConfig;
use crate::error::{EngineError, Result};
use crate::executor::{Granularity, Mailbox, run_round};
use crate::ids::Tick;
use crate::metrics::measure;
use crate::output::RunOutputs;
use crate::policy::{Policy, PolicyCounters};
use crate::replay::Replay;
use crate::summary::{Accumulator, RunSummary, peak_rss_mb};

/// Name of the summary file in a run directory.
pub const SUMMARY_FILE: &str = "summary.json";

/// Counters a caller can poll for progress.
#[derive(Debug, Default)]
pub struct RunProgress {
    /// Ticks to simulate.
    pub ticks_total: AtomicU64,
    /// Ticks done.
    pub ticks_done: AtomicU64,
}

/// Ticks to simulate: `hours` of the window, or up to the trace's last event.
pub fn ticks_to_run(config: &RunConfig, last_event_us: i64) -> u64 {
    let tick_us = config.tick_s as i64 * 1_000_000;
    match config.hours {
        Some(h) => ((h * 3600.0) / config.tick_s as f64).ceil().max(1.0) as u64,
        None => ((last_event_us - TRACE_START_US).max(0) / tick_us + 1) as u64,
    }
}

/// Replays the ingested trace in `trace_dir` under `policy`, writing outputs to `out_dir`.
pub fn run<P: Policy + Send>(
    config: &RunConfig,
    trace_dir: &Path,
    out_dir: &Path,
    policy: P,
    progress: &RunProgress,
) -> Result<RunSummary> {
    config.validate().map_err(|problem| EngineError::Config {
        path: "config".into(),
        problem,
    })?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .build()
        .map_err(|e| EngineError::Config {
            path: "threads".into(),
            problem: e.to_string(),
        })?;
    pool.install(|| run_in_pool(config, trace_dir, out_dir, policy, progress))
}

fn run_in_pool<P: Policy>(
    config: &RunConfig,
    trace_dir: &Path,
    out_dir: &Path,
    mut policy: P,
    progress: &RunProgress,
) -> Result<RunSummary> {
    let started = Instant::now();
    let ingest_summary = IngestSummary::load(trace_dir)?;
    let total = ticks_to_run(config, ingest_summary.last_event_us());
    progress.ticks_total.store(total, Ordering::Relaxed);
    std::fs::create_dir_all(out_dir).map_err(EngineError::io(out_dir))?;
    if out_dir.join(SUMMARY_FILE).exists() {
        return Err(EngineError::RunExists {
            path: out_dir.to_path_buf(),
        });
    }
    let mut replay = Replay::open(trace_dir)?;
    replay.set_workload_mode(!policy.replays_placements());
    let kinds = policy.message_kinds();
    let mut outputs = RunOutputs::create(out_dir, kinds)?;
    let mut cell = Cell::default();
    let mut agents: Vec<P::Agent> = Vec::new();
    let mut mailbox: Mailbox<P::Msg> = Mailbox::new(0);
    let mut acc = Accumulator::default();
    let mut migrations = Vec::new();
    let mut samples = Vec::new();
    let tick_us = config.tick_s as i64 * 1_000_000;
    for tick in 0..total as u32 {
        let tick_started = Instant::now();
        let end_us = TRACE_START_US + (tick as i64 + 1) * tick_us;
        let events = replay.advance(&mut cell, end_us)?;
        let mut counters = PolicyCounters::default();
        let mut counts = vec![0u64; kinds.len()];
        let mut inject = Vec::new();
        policy.begin_tick(
            &mut cell,
            end_us,
            &events,
            &mut agents,
            &mut inject,
            &mut counters,
        );
        if !inject.is_empty() {
            let mut all = mailbox.messages().to_vec();
            all.extend(inject);
            mailbox = Mailbox::group(&all, agents.len());
        }
        if !agents.is_empty() {
            for round in 0..config.rounds_per_tick {
                mailbox = run_round(
                    &mut policy,
                    &mut cell,
                    &mut agents,
                    &mailbox,
                    Tick(tick),
                    round,
                    end_us,
                    config.seed,
                    Granularity::default(),
                    &mut counts,
                    &mut counters,
                );
            }
        }
        policy.end_tick(&mut cell, end_us, &mut counters);
        policy.take_migrations(&mut migrations);
        outputs.migrations(&mut migrations);
        policy.take_samples(&mut agents, &mut samples);
        outputs.samples(&mut samples)?;
        if config.check_invariants {
            cell.check()
                .map_err(|problem| EngineError::Invariant { tick, problem })?;
        }
        let mut row = measure(&mut cell, &config.classify, tick, end_us);
        row.counters = counters;
        row.messages = counts;
        row.wall_ms = tick_started.elapsed().as_secs_f64() * 1e3;
        acc.add(&row, kinds);
        outputs.tick(row)?;
        if tick % config.nodes_every_ticks == 0 {
            outputs.node_snapshot(&cell, tick, end_us)?;
        }
        progress
            .ticks_done
            .store(tick as u64 + 1, Ordering::Relaxed);
    }
    outputs.finish()?;
    let ticks = acc.ticks();
    let (averages, totals) = acc.finish();
    let wall_s = started.elapsed().as_secs_f64();
    let simulated_s = ticks as f64 * config.tick_s as f64;
    let summary = RunSummary {
        version: env!("CARGO_PKG_VERSION").to_string(),
        policy: policy.name().to_string(),
        config: config.clone(),
        trace: trace_dir.display().to_string(),
        ticks,
        simulated_s,
        averages,
        totals,
        replay: replay.stats(),
        wall_s,
        speed_x_real_time: simulated_s / wall_s.max(1e-9),
        peak_rss_mb: peak_rss_mb(),
    };
    ingest::ingest::write_json_atomically(&out_dir.join(SUMMARY_FILE), &summary)?;
    Ok(summary)
}
