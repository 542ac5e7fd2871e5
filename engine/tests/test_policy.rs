//! A policy defined outside the engine, in this file alone, runs through `engine::run` like the
//! registered ones (its agents, messages, message counts, counters and snapshot state are the
//! engine's business, not an edit elsewhere), and active stepping steps exactly the agents with something
//! to do: of 10,000 agents, one that asks to be woken every tick is the only one stepped. A
//! message sent with a delivery time arrives in the round it is due.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use engine::cell::Cell;
use engine::ids::{AgentIdx, Tick};
use engine::policy::{CounterKind, Envelope, Outbox, Policy, PolicyCounters, StepCtx};
use engine::replay::TickEvents;
use engine::{RunConfig, RunProgress};

const AGENTS: usize = 10_000;
const BUSY: u32 = 4_242;

/// One agent, woken by a message at the first tick, asks to be stepped again at the start of
/// every next tick; every tick it also pings agent 7, which answers nothing.
#[derive(Clone, Default)]
struct Heartbeat {
    /// Agents stepped, and how many of them were neither the busy agent nor agent 7.
    stepped: Arc<AtomicU64>,
    others: Arc<AtomicU64>,
}

impl Policy for Heartbeat {
    type Msg = u8;
    type Agent = u32;
    type Action = ();

    fn name(&self) -> &'static str {
        "heartbeat"
    }

    fn counter_kinds(&self) -> &'static [CounterKind] {
        &BEAT_SECONDS
    }

    fn message_kinds(&self) -> &'static [&'static str] {
        &["start", "ping"]
    }

    fn message_kind(&self, msg: &u8) -> usize {
        *msg as usize
    }

    fn begin_tick(
        &mut self,
        _: &mut Cell,
        (tick, _): (Tick, i64),
        _: &TickEvents,
        agents: &mut Vec<u32>,
        inject: &mut Vec<Envelope<u8>>,
        _: &mut PolicyCounters,
    ) {
        agents.resize(AGENTS, 0);
        if tick.0 == 0 {
            inject.push(Envelope {
                from: AgentIdx(0),
                to: AgentIdx(BUSY),
                msg: 0,
            });
        }
    }

    fn step(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        steps: &mut u32,
        _: &[Envelope<u8>],
        out: &mut Outbox<'_, u8, ()>,
    ) {
        *steps += 1;
        self.stepped.fetch_add(1, Ordering::Relaxed);
        if me.0 == BUSY {
            // `now_us` is the tick's end: the next tick's first round.
            out.wake_at(ctx.now_us);
            if ctx.round == 0 {
                out.send(AgentIdx(7), 1);
            }
        } else if me.0 != 7 {
            self.others.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn apply(&mut self, _: &mut Cell, _: i64, _: &[(AgentIdx, ())], _: &mut PolicyCounters) {}

    fn end_tick(&mut self, _: &mut Cell, _: i64, counters: &mut PolicyCounters) {
        counters.add(0, 0.5);
    }
}

/// Heartbeat's one counter: half a second a tick.
const BEAT_SECONDS: [CounterKind; 1] = [CounterKind::amount("beat_seconds")];

/// A small generated cell, ingested: its Parquet directory.
fn small_trace(root: &std::path::Path) -> std::path::PathBuf {
    generated_cell(root, 50, 1.0, 3)
}

/// Agent 1, started by a message at the first tick, sends agent 2 a message delivered 150 ms
/// after its tick's end and one delivered 4 rounds later; agent 2 notes the ticks they arrive
/// in.
#[derive(Clone, Default)]
struct Latency {
    arrived_at_tick: Arc<AtomicU64>,
    after_rounds_at_tick: Arc<AtomicU64>,
}

impl Policy for Latency {
    type Msg = u8;
    type Agent = ();
    type Action = ();

    fn name(&self) -> &'static str {
        "latency"
    }

    fn message_kinds(&self) -> &'static [&'static str] {
        &["start", "late", "after_rounds"]
    }

    fn message_kind(&self, msg: &u8) -> usize {
        *msg as usize
    }

    fn begin_tick(
        &mut self,
        _: &mut Cell,
        (tick, _): (Tick, i64),
        _: &TickEvents,
        agents: &mut Vec<()>,
        inject: &mut Vec<Envelope<u8>>,
        _: &mut PolicyCounters,
    ) {
        agents.resize(3, ());
        if tick.0 == 0 {
            inject.push(Envelope {
                from: AgentIdx(0),
                to: AgentIdx(1),
                msg: 0,
            });
        }
    }

    fn step(
        &self,
        ctx: &StepCtx<'_>,
        me: AgentIdx,
        _: &mut (),
        inbox: &[Envelope<u8>],
        out: &mut Outbox<'_, u8, ()>,
    ) {
        for e in inbox {
            match (me.0, e.msg) {
                (1, 0) => {
                    out.send_at(AgentIdx(2), 1, ctx.now_us + 150_000);
                    out.send_after(AgentIdx(2), 2, 4);
                }
                (2, 1) => self
                    .arrived_at_tick
                    .store(ctx.tick.0 as u64, Ordering::Relaxed),
                (2, 2) => self
                    .after_rounds_at_tick
                    .store(ctx.tick.0 as u64, Ordering::Relaxed),
                _ => panic!("unexpected message {e:?} to {me:?}"),
            }
        }
    }

    fn apply(&mut self, _: &mut Cell, _: i64, _: &[(AgentIdx, ())], _: &mut PolicyCounters) {}

    fn end_tick(&mut self, _: &mut Cell, _: i64, _: &mut PolicyCounters) {}
}

/// At 100 ms ticks of one round, a message sent in tick 0 (which ends at 100 ms) for 250 ms is
/// delivered in the first round that starts at or after 250 ms: tick 3, which starts at 300 ms;
/// one sent 4 rounds ahead, in round 4: tick 4. Both are counted when sent.
#[test]
fn a_message_with_a_delivery_time_arrives_in_the_round_it_is_due() {
    let root = tempfile::tempdir().unwrap();
    let parquet = small_trace(root.path());
    let config = RunConfig {
        tick: "100ms".parse().unwrap(),
        rounds_per_tick: 1,
        nodes_every: "1min".parse().unwrap(),
        part: "1min".parse().unwrap(),
        hours: Some(1.0 / 60.0),
        ..RunConfig::default()
    };
    let policy = Latency::default();
    let arrived = policy.arrived_at_tick.clone();
    let after_rounds = policy.after_rounds_at_tick.clone();
    let run = root.path().join("run");
    let summary = run_with(&config, &parquet, &run, policy);
    assert_eq!(summary.ticks, 600);
    assert_eq!(arrived.load(Ordering::Relaxed), 3);
    assert_eq!(after_rounds.load(Ordering::Relaxed), 4);
    assert_eq!(summary.totals.messages["late"], 1);
    assert_eq!(summary.totals.messages["after_rounds"], 1);
}

#[test]
fn a_policy_from_outside_runs_and_only_active_agents_are_stepped() {
    let root = tempfile::tempdir().unwrap();
    let parquet = small_trace(root.path());
    let mut config = RunConfig {
        hours: Some(0.5),
        ..RunConfig::default()
    };
    config.snapshot.every_sim_minutes = 10;
    let policy = Heartbeat::default();
    let (stepped, others) = (policy.stepped.clone(), policy.others.clone());
    let run = root.path().join("run");
    let summary = run_with(&config, &parquet, &run, policy);
    assert_eq!(summary.policy, "heartbeat");
    let ticks = summary.ticks;
    assert_eq!(ticks, 30);
    // The busy agent once a tick (its wake-up falls due in each tick's first round), agent 7
    // once a tick (in round 1, when the ping arrives): never any of the other 9,998.
    assert_eq!(others.load(Ordering::Relaxed), 0);
    assert_eq!(stepped.load(Ordering::Relaxed), 2 * ticks);
    // Messages are counted by kind, those agents send and the one `begin_tick` injects alike.
    assert_eq!(summary.totals.messages["start"], 1);
    assert_eq!(summary.totals.messages["ping"], ticks);
    // The message counts are `counters/` columns of the policy's own naming; `ticks/` has the
    // engine's columns only (the schema every policy's runs share).
    let rows = read_parquet(&run.join("counters"));
    let engine_ticks = read_parquet(&run.join("ticks"));
    assert_eq!(engine_ticks.schema(), engine::output::ticks_schema());
    assert_eq!(rows.num_rows(), engine_ticks.num_rows());
    assert!(rows.schema().index_of("msg_ping").is_ok());
    // Its counter too, of its own type, and its total in the summary; none of MASB's.
    let beats = rows.column(rows.schema().index_of("beat_seconds").unwrap());
    let beats = arrow_array::cast::AsArray::as_primitive::<arrow_array::types::Float64Type>(beats);
    assert!(beats.iter().all(|b| b == Some(0.5)));
    assert_eq!(summary.totals.counters["beat_seconds"], 0.5 * ticks as f64);
    assert!(rows.schema().index_of("migrations_started").is_err());
    // Resumed from the snapshot before tick 20, the wake-up in flight there is restored: the
    // busy agent and agent 7 go on being stepped once a tick each, the outputs are the same.
    let before = deterministic_outputs(&run);
    let snapshot = snapshot_at(&run, 20);
    let policy = Heartbeat::default();
    let (stepped, others) = (policy.stepped.clone(), policy.others.clone());
    let progress = RunProgress::default();
    engine::run(&config, &parquet, &run, policy, &progress, Some(snapshot)).unwrap();
    assert_eq!(others.load(Ordering::Relaxed), 0);
    assert_eq!(stepped.load(Ordering::Relaxed), 2 * (ticks - 20));
    assert!(deterministic_outputs(&run) == before);
}
