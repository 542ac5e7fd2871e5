//! A policy defined outside the engine, in this file alone, runs through `engine::run` like the
//! registered ones (its agents, messages, message counts and snapshot state are the engine's
//! business, not an edit elsewhere), and active stepping steps exactly the agents with something
//! to do: of 10,000 agents, one that asks to be woken every tick is the only one stepped.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use engine::cell::Cell;
use engine::ids::{AgentIdx, Tick};
use engine::policy::{Envelope, Outbox, Policy, PolicyCounters, StepCtx};
use engine::replay::TickEvents;
use engine::{RunConfig, RunProgress};
use ingest::synth::{GenConfig, GenProgress, generate};

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

    fn end_tick(&mut self, _: &mut Cell, _: i64, _: &mut PolicyCounters) {}
}

#[test]
fn a_policy_from_outside_runs_and_only_active_agents_are_stepped() {
    let root = tempfile::tempdir().unwrap();
    let trace = root.path().join("trace");
    let gen_config = GenConfig {
        machines: 50,
        hours: 1.0,
        seed: 3,
        part_hours: 1.0,
    };
    generate(&trace, &gen_config, &GenProgress::default()).unwrap();
    let parquet = root.path().join("parquet");
    ingest_dir(&trace, &parquet);
    let mut config = RunConfig {
        hours: Some(0.5),
        ..RunConfig::default()
    };
    config.snapshot.every_sim_minutes = 10;
    let policy = Heartbeat::default();
    let (stepped, others) = (policy.stepped.clone(), policy.others.clone());
    let run = root.path().join("run");
    let summary = engine::run(
        &config,
        &parquet,
        &run,
        policy,
        &RunProgress::default(),
        None,
    )
    .unwrap()
    .complete()
    .unwrap();
    assert_eq!(summary.policy, "heartbeat");
    let ticks = summary.ticks;
    assert_eq!(ticks, 30);
    // The busy agent once a tick (its wake-up falls due in each tick's first round), agent 7
    // once a tick (in round 1, when the ping arrives): never any of the other 9,998.
    assert_eq!(others.load(Ordering::Relaxed), 0);
    assert_eq!(stepped.load(Ordering::Relaxed), 2 * ticks);
    // Messages counted are those agents send; one `begin_tick` injects is not.
    assert_eq!(summary.totals.messages["start"], 0);
    assert_eq!(summary.totals.messages["ping"], ticks);
    // The message counts are `ticks/` columns of the policy's own naming.
    let rows = read_parquet(&run.join("ticks"));
    assert!(rows.schema().index_of("msg_ping").is_ok());
    // Resumed from the snapshot before tick 20, the wake-up in flight there is restored: the
    // busy agent and agent 7 go on being stepped once a tick each, the outputs are the same.
    let before = deterministic_outputs(&run);
    let snapshot = engine::snapshot::list(&run).unwrap();
    let at_20 = snapshot
        .iter()
        .find(|p| p.ends_with(engine::snapshot::file_name(20)));
    let snapshot = engine::snapshot::Snapshot::open(at_20.unwrap()).unwrap();
    let policy = Heartbeat::default();
    let (stepped, others) = (policy.stepped.clone(), policy.others.clone());
    let progress = RunProgress::default();
    engine::run(&config, &parquet, &run, policy, &progress, Some(snapshot)).unwrap();
    assert_eq!(others.load(Ordering::Relaxed), 0);
    assert_eq!(stepped.load(Ordering::Relaxed), 2 * (ticks - 20));
    assert!(deterministic_outputs(&run) == before);
}
