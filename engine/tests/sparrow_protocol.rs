//! Sparrow's protocol (seed 002 steps 1-8 and its failure detector) on tiny hand-built cells,
//! each scenario asserting the exact message sequence round by round: late binding giving a
//! worker an older task than the one it was probed for, then a Cancel and the worker's retry;
//! a task left with no probe out by late binding waiting for a later confirmation (or, with
//! `reprobe`, probed again);
//! a worker dying with a probe queued (its master re-probes once the detector reports it); a
//! master dying with its place-holders queued at a worker (cancelled, the task issued again).
//!
//! Rounds last one network delay (0.5 ms), 20 to a 10 ms tick, numbered over the run. Agent 0
//! is the DATACENTER, agent n + 1 node n's peer. Nodes have 1.0 CPU and memory.

mod common;

use engine::active::RoundClock;
use engine::cell::{Cell, TaskState};
use engine::delay::DelayQueue;
use engine::executor::{Granularity, Mailbox, RoundScratch, run_round};
use engine::ids::{AgentIdx, NodeIdx, TaskIdx, Tick};
use engine::policy::{Due, Envelope, Policy, PolicyCounters};
use engine::queue_outputs::QueueOutputs;
use engine::replay::{MachineChange, TickEvents};
use engine::sparrow::sampling::Ring;
use engine::sparrow::{Action, MESSAGE_KINDS, Msg, Peer, Sparrow, SparrowConfig, agent_of};
use engine::units::to_units;
use ingest::codes::TRACE_START_US;

const ROUNDS: u32 = 20;
const TICK_US: i64 = 10_000;

struct Harness {
    cell: Cell,
    sparrow: Sparrow,
    agents: Vec<Peer>,
    mailbox: Mailbox<Msg>,
    scratch: RoundScratch<Msg, Action>,
    delays: DelayQueue<Msg>,
    g: u64,
    counters: PolicyCounters,
    /// (round, from, to, kind) of every message delivered.
    log: common::MessageLog,
    /// The next tick's events.
    events: TickEvents,
    /// Messages the harness delivers at the next tick's first round (the engine's notices).
    notices: Vec<Envelope<Msg>>,
}

impl Harness {
    fn new(nodes: u32, config: SparrowConfig) -> Harness {
        let mut cell = Cell::default();
        for n in 0..nodes {
            cell.add_machine(100 + n as u64, to_units(1.0), to_units(1.0));
        }
        Harness {
            cell,
            sparrow: Sparrow::new(config, QueueOutputs::default()),
            agents: Vec::new(),
            mailbox: Mailbox::new(0),
            scratch: RoundScratch::default(),
            delays: DelayQueue::default(),
            g: 0,
            counters: PolicyCounters::default(),
            log: Vec::new(),
            events: TickEvents::default(),
            notices: Vec::new(),
        }
    }

    fn clock() -> RoundClock {
        RoundClock {
            tick_us: TICK_US,
            rounds_per_tick: ROUNDS,
        }
    }

    /// A task of job `job` needing `cpu`, submitted at the start of the next round to run.
    fn submit(&mut self, job: u64, index: u32, cpu: f32) -> TaskIdx {
        let at = Harness::clock().start_us(self.g);
        let t = self.cell.tasks.alloc(job, index, 0, at);
        self.cell.set_request(t, to_units(cpu), to_units(0.1));
        self.events.submitted.push(t);
        t
    }

    /// A task outside the policy filling node `n`.
    fn blocker(&mut self, n: u32) -> TaskIdx {
        let t = self.cell.tasks.alloc(999, n, 0, 0);
        self.cell.set_request(t, to_units(1.0), to_units(0.1));
        self.cell.place(t, NodeIdx(n), 0);
        t
    }

    /// Ends blocker `t` on node `n`; its worker hears at the next tick.
    fn free(&mut self, t: TaskIdx, n: u32) {
        self.cell.end(t);
        self.notices.push(Envelope {
            from: AgentIdx(0),
            to: agent_of(NodeIdx(n)),
            msg: Msg::Finished,
        });
    }

    fn set_online(&mut self, n: u32, online: bool) {
        self.cell.set_machine(NodeIdx(n), online, None);
        self.events.machine_changes.push(MachineChange {
            node: NodeIdx(n),
            online,
            cpu_cap: to_units(1.0),
            mem_cap: to_units(1.0),
        });
    }

    fn round(&mut self) {
        let clock = Harness::clock();
        let (tick, r) = (
            (self.g / ROUNDS as u64) as u32,
            (self.g % ROUNDS as u64) as u32,
        );
        let end_us = TRACE_START_US + (tick as i64 + 1) * TICK_US;
        if r == 0 {
            let mut inject = std::mem::take(&mut self.notices);
            let events = std::mem::take(&mut self.events);
            self.sparrow.begin_tick(
                &mut self.cell,
                (Tick(tick), end_us),
                &events,
                &mut self.agents,
                &mut inject,
                &mut self.counters,
            );
            let mut all = self.mailbox.messages().to_vec();
            all.extend(inject);
            self.mailbox = Mailbox::group(&all, self.agents.len());
        }
        self.sparrow
            .begin_round(&mut self.cell, clock.start_us(self.g), &mut self.counters);
        self.delays
            .deliver_due(self.g, &mut self.mailbox, self.agents.len(), false);
        for e in self.mailbox.messages() {
            self.log
                .push((self.g, e.from.0, e.to.0, MESSAGE_KINDS[e.msg.kind()]));
        }
        let mut counts = vec![0; MESSAGE_KINDS.len()];
        run_round(
            &mut self.sparrow,
            &mut self.cell,
            &mut self.agents,
            &mut self.mailbox,
            &mut self.scratch,
            Tick(tick),
            r,
            end_us,
            1,
            Granularity::default(),
            &mut counts,
            &mut self.counters,
        );
        for (message, due) in self.scratch.take_delayed() {
            let at = match due {
                Due::At(at_us) => clock.first_at(at_us),
                Due::AfterRounds(k) => self.g + k as u64,
            };
            self.delays.push(at.max(self.g + 1), message);
        }
        self.cell.check().unwrap();
        self.g += 1;
    }

    /// Runs up to (not including) round `g`.
    fn until(&mut self, g: u64) {
        while self.g < g {
            self.round();
        }
    }

    fn messages_in(&self, round: u64) -> Vec<(u32, u32, &'static str)> {
        common::messages_in(&self.log, round)
    }

    fn running_on(&self, t: TaskIdx) -> Option<u32> {
        let i = t.index();
        (self.cell.tasks.state()[i] == TaskState::Running).then(|| self.cell.tasks.node()[i].0)
    }

    /// When `t` started, microseconds after the trace's start.
    fn started_at(&self, t: TaskIdx) -> i64 {
        self.cell.tasks.start_us()[t.index()] - TRACE_START_US
    }
}

/// The master of `job` among nodes `0..nodes` (machine IDs 100 + n), and the other two nodes.
fn roles(job: u64, nodes: u32) -> (u32, u32, u32) {
    let ring = Ring::new((0..nodes).map(|n| (n, 100 + n as u64)), 16);
    let m = ring.owner(job).unwrap();
    let others: Vec<u32> = (0..nodes).filter(|&n| n != m).collect();
    (m, others[0], others[1])
}

/// Peer agent of node `n`, as a number.
fn a(n: u32) -> u32 {
    n + 1
}

/// Late binding (step 5) and Cancel (step 7). T1 (0.2 CPU) arrives while W1 is full and W2
/// offline: its one probe waits at W1. W2 joins; T2 (0.5 CPU, same job, so the same master)
/// probes W1 and W2. W2 is free: it reserves T2's 0.5 and asks, and the master assigns the
/// oldest unassigned task that fits, T1. When W1 frees, it reserves both place-holders: T1's
/// (0.2) gets a Cancel (T2 needs more), T2's the assignment.
#[test]
fn late_binding_assigns_an_older_task_then_cancels_the_rest() {
    let job = 7;
    let (m, w1, w2) = roles(job, 3);
    let mut h = Harness::new(3, SparrowConfig::default());
    let b1 = h.blocker(w1);
    h.cell.set_machine(NodeIdx(w2), false, None);
    let t1 = h.submit(job, 0, 0.2);
    h.until(20);
    assert_eq!(h.messages_in(0), [(0, 0, "arrive")]);
    assert_eq!(h.messages_in(1), [(0, a(m), "submit")]);
    assert_eq!(h.messages_in(2), [(a(m), a(w1), "probe")]);
    assert_eq!(h.messages_in(3), [(a(w1), a(m), "probe_queued")]);
    assert!(h.log.iter().all(|e| e.0 <= 3), "W1 is full: nothing more");
    h.set_online(w2, true);
    let t2 = h.submit(job, 1, 0.5);
    h.until(40);
    assert_eq!(h.messages_in(20), [(0, 0, "arrive")]);
    assert_eq!(h.messages_in(21), [(0, a(m), "submit")]);
    assert_eq!(
        h.messages_in(22),
        [(a(m), a(w1), "probe"), (a(m), a(w2), "probe")]
    );
    assert_eq!(
        h.messages_in(23),
        [
            (a(w1), a(m), "probe_queued"),
            (a(w2), a(m), "confirm"),
            (a(w2), a(m), "probe_queued"),
        ]
    );
    assert_eq!(h.messages_in(24), [(a(m), a(w2), "assign")]);
    // W2 runs T1, probed for T2, from round 24 (12 ms): T1 queued 12 ms.
    assert_eq!(h.running_on(t1), Some(w2));
    assert_eq!(h.started_at(t1), 12_000);
    assert_eq!(h.running_on(t2), None);
    assert!(h.log.iter().all(|e| e.0 <= 24));
    h.free(b1, w1);
    h.until(60);
    assert_eq!(h.messages_in(40), [(0, a(w1), "finished")]);
    assert_eq!(
        h.messages_in(41),
        [(a(w1), a(m), "confirm"), (a(w1), a(m), "confirm")]
    );
    assert_eq!(
        h.messages_in(42),
        [(a(m), a(w1), "assign"), (a(m), a(w1), "cancel")]
    );
    assert_eq!(h.running_on(t2), Some(w1));
    assert_eq!(h.started_at(t2), 21_000);
    let w1_peer = &h.agents[a(w1) as usize];
    assert!(w1_peer.queue.is_empty() && w1_peer.reserved.is_empty());
    let master = &h.agents[a(m) as usize];
    assert!(master.pending.is_empty() && master.probes.is_empty());
}

/// Late binding leaves a task with no probe out, and seed 002's master then waits (no
/// re-probe by default, issue 59). One probe per task: T1 (0.2 CPU) waits at full W1; W2 joins
/// and T2 (0.2 CPU, same job) sends its one probe to W2 (the job is chosen among the first 50
/// so that the draw sends it there); W2 asks and the master binds the oldest task, T1, leaving T2
/// with none. By default nothing more is sent until W1 frees: its probe, sent for T1, asks
/// (round 41) and gets T2 (round 42, 21 ms). With `reprobe = true` the master probes T2 again at
/// once, beside the assignment (round 24): three probes in all, not two.
#[test]
fn a_task_whose_probes_went_to_older_tasks_waits_unless_reprobe() {
    let scenario = |job: u64, reprobe: bool| {
        let (m, w1, w2) = roles(job, 3);
        let config = SparrowConfig {
            probe_ratio: 1.0,
            reprobe,
            ..SparrowConfig::default()
        };
        let mut h = Harness::new(3, config);
        let b1 = h.blocker(w1);
        h.cell.set_machine(NodeIdx(w2), false, None);
        let t1 = h.submit(job, 0, 0.2);
        h.until(20);
        h.set_online(w2, true);
        let t2 = h.submit(job, 1, 0.2);
        h.until(40);
        (h, (m, w1, w2), (b1, t1, t2))
    };
    let job = (1..50)
        .find(|&job| {
            let (h, (m, _, w2), _) = scenario(job, false);
            h.messages_in(22) == [(a(m), a(w2), "probe")]
        })
        .expect("a job whose second probe goes to W2");
    let probes = |h: &Harness| h.log.iter().filter(|e| e.3 == "probe").count();

    let (mut h, (m, w1, w2), (b1, t1, t2)) = scenario(job, false);
    assert_eq!(h.messages_in(2), [(a(m), a(w1), "probe")]);
    assert_eq!(
        h.messages_in(23),
        [(a(w2), a(m), "confirm"), (a(w2), a(m), "probe_queued")]
    );
    assert_eq!(h.messages_in(24), [(a(m), a(w2), "assign")]);
    assert_eq!(h.running_on(t1), Some(w2));
    assert!(h.log.iter().all(|e| e.0 <= 24), "T2 waits: nothing is sent");
    assert_eq!(h.running_on(t2), None);
    h.free(b1, w1);
    h.until(60);
    assert_eq!(h.messages_in(40), [(0, a(w1), "finished")]);
    assert_eq!(h.messages_in(41), [(a(w1), a(m), "confirm")]);
    assert_eq!(h.messages_in(42), [(a(m), a(w1), "assign")]);
    assert_eq!(h.running_on(t2), Some(w1));
    assert_eq!(h.started_at(t2), 21_000);
    assert_eq!(probes(&h), 2);

    let (h, (m, _, w2), (_, t1, _)) = scenario(job, true);
    assert_eq!(h.running_on(t1), Some(w2));
    let round_24 = h.messages_in(24);
    assert_eq!(round_24.len(), 2, "{round_24:?}");
    assert!(round_24.contains(&(a(m), a(w2), "assign")));
    assert!(round_24.iter().any(|e| e.0 == a(m) && e.2 == "probe"));
    assert_eq!(probes(&h), 3);
}

/// A worker dies with T1's only probe queued: 3 s later (the detector's timeout) every live
/// peer hears, the master re-probes T1 (its only other choice, W2) and it runs there, 4 rounds
/// after the report.
#[test]
fn a_dead_workers_probes_are_sent_again_after_the_timeout() {
    let job = 11;
    let (m, w1, w2) = roles(job, 3);
    let mut h = Harness::new(3, SparrowConfig::default());
    h.blocker(w1);
    h.cell.set_machine(NodeIdx(w2), false, None);
    let t1 = h.submit(job, 0, 0.2);
    h.until(20);
    assert_eq!(h.messages_in(2), [(a(m), a(w1), "probe")]);
    h.set_online(w2, true);
    h.set_online(w1, false);
    // Reported at the end of tick 1 (20 ms) + 3 s: in tick 301 (3.01-3.02 s), round 6020.
    h.until(6_020);
    assert_eq!(h.running_on(t1), None);
    assert!(h.log.iter().all(|e| e.0 <= 3 || e.0 >= 6_020));
    h.until(6_040);
    let mut dead = vec![(0, a(m), "dead"), (0, a(w2), "dead")];
    dead.sort();
    assert_eq!(h.messages_in(6_020), dead);
    assert_eq!(h.messages_in(6_021), [(a(m), a(w2), "probe")]);
    assert_eq!(
        h.messages_in(6_022),
        [(a(w2), a(m), "confirm"), (a(w2), a(m), "probe_queued")]
    );
    assert_eq!(h.messages_in(6_023), [(a(m), a(w2), "assign")]);
    assert_eq!(h.running_on(t1), Some(w2));
    assert_eq!(h.started_at(t1), 3_011_500);
}

/// A master dies with T1's place-holder queued at a full worker: after the timeout the worker
/// drops it, and T1 (pending at the dead master) is issued again through the ring, whose owner
/// is now a live node; it runs once a worker has room.
#[test]
fn a_dead_masters_placeholders_are_cancelled_and_its_tasks_issued_again() {
    let job = 5;
    let (m, w1, w2) = roles(job, 3);
    let mut h = Harness::new(3, SparrowConfig::default());
    let b1 = h.blocker(w1);
    let b2 = h.blocker(w2);
    let t1 = h.submit(job, 0, 0.2);
    h.until(20);
    let queued = |h: &Harness, n: u32| h.agents[a(n) as usize].queue.len();
    assert_eq!((queued(&h, w1), queued(&h, w2)), (1, 1));
    h.set_online(m, false);
    h.until(6_020);
    assert_eq!((queued(&h, w1), queued(&h, w2)), (1, 1), "not yet detected");
    h.until(6_040);
    assert_eq!(
        h.messages_in(6_020),
        [(0, 0, "arrive"), (0, a(w1), "dead"), (0, a(w2), "dead")]
    );
    let from_dead = |h: &Harness, n: u32| {
        let peer = &h.agents[a(n) as usize];
        peer.queue.iter().any(|p| p.master == agent_of(NodeIdx(m)))
    };
    assert!(!from_dead(&h, w1) && !from_dead(&h, w2));
    let owner = Ring::new(
        [(w1, 100 + w1 as u64), (w2, 100 + w2 as u64)].into_iter(),
        16,
    )
    .owner(job)
    .unwrap();
    assert_eq!(h.messages_in(6_021), [(0, a(owner), "submit")]);
    h.free(b1, w1);
    h.free(b2, w2);
    h.until(6_100);
    assert!(h.running_on(t1).is_some());
    assert_ne!(h.running_on(t1), Some(m));
}

/// Step 4's queue order. Two nodes: the master M and a worker W with 0.5 CPU free. A job's
/// first task (0.8 CPU) probes W and heads its queue, never fitting; its second (0.3) queues
/// behind it. Under seed 002's FIFO the head blocks it; with `first-that-fits` W reserves the
/// second place-holder at once and the master binds it to the 0.3 task (the 0.8 one needs more),
/// 4 delays after its submission.
#[test]
fn a_head_that_never_fits_blocks_fifo_but_not_first_that_fits() {
    use engine::sparrow::QueueOrder;
    let job = 3;
    let ring = Ring::new((0..2).map(|n| (n, 100 + n as u64)), 16);
    let m = ring.owner(job).unwrap();
    let w = 1 - m;
    for order in [QueueOrder::Fifo, QueueOrder::FirstThatFits] {
        let config = SparrowConfig {
            queue_order: order,
            ..SparrowConfig::default()
        };
        let mut h = Harness::new(2, config);
        let half = h.cell.tasks.alloc(999, 0, 0, 0);
        h.cell.set_request(half, to_units(0.5), to_units(0.1));
        h.cell.place(half, NodeIdx(w), 0);
        let big = h.submit(job, 0, 0.8);
        h.until(20);
        let small = h.submit(job, 1, 0.3);
        h.until(40);
        assert_eq!(h.running_on(big), None, "{order:?}");
        match order {
            QueueOrder::Fifo => assert_eq!(h.running_on(small), None),
            QueueOrder::FirstThatFits => {
                assert_eq!(h.running_on(small), Some(w));
                assert_eq!(h.started_at(small), 10_000 + 2_000);
            }
        }
    }
}
