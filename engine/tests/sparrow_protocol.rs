//! Sparrow's protocol (seed 002 steps 1-8 and its failure detector) on tiny hand-built cells,
//! each scenario asserting the exact message sequence, each message at its time: late binding giving a
//! worker an older task than the one it was probed for, then a Cancel and the worker's retry;
//! a task left with no probe out by late binding waiting for a later confirmation (or, with
//! `reprobe`, probed again);
//! a worker dying with a probe queued (its master re-probes at its detector's verdict: the first
//! ping to miss plus 3 s); a master dying with its place-holders queued at a worker (cancelled,
//! the task issued again); an assignment lost in flight to a dying worker.
//!
//! Time is exact (issue 59): every message between nodes takes the 0.5 ms network delay to
//! the microsecond and the DATACENTER hands a task to its master as it is submitted; ticks last
//! 10 ms. Times are microseconds after the trace's start. Agent 0 is the DATACENTER, agent
//! n + 1 node n's peer. Nodes have 1.0 CPU and memory.

mod common;

use engine::cell::{Cell, TaskState};
use engine::ids::{AgentIdx, NodeIdx, TaskIdx, Tick};
use engine::policy::{Policy, PolicyCounters};
use engine::queue_outputs::QueueOutputs;
use engine::replay::{EndedTask, MachineChange, TickEvents};
use engine::sparrow::sampling::Ring;
use engine::sparrow::{MESSAGE_KINDS, Peer, Sparrow, SparrowConfig, agent_of, detector};
use engine::units::to_units;
use ingest::codes::TRACE_START_US;

const TICK_US: i64 = 10_000;

struct Harness {
    cell: Cell,
    sparrow: Sparrow,
    agents: Vec<Peer>,
    /// Ticks run.
    tick: u32,
    counters: PolicyCounters,
    /// (time, from, to, kind) of every message delivered.
    log: common::MessageLog,
    /// Every message delivered, as recorded.
    deliveries: Vec<engine::sparrow::Delivery>,
    /// The next tick's events.
    events: TickEvents,
}

impl Harness {
    fn new(nodes: u32, config: SparrowConfig) -> Harness {
        let mut cell = Cell::default();
        for n in 0..nodes {
            cell.add_machine(100 + n as u64, to_units(1.0), to_units(1.0));
        }
        let mut sparrow = Sparrow::new(config, QueueOutputs::default());
        sparrow.record_deliveries();
        Harness {
            cell,
            sparrow,
            agents: Vec::new(),
            tick: 0,
            counters: PolicyCounters::default(),
            log: Vec::new(),
            deliveries: Vec::new(),
            events: TickEvents::default(),
        }
    }

    /// When the next tick starts, microseconds after the trace's start.
    fn now(&self) -> i64 {
        self.tick as i64 * TICK_US
    }

    /// A task of job `job` needing `cpu`, submitted at the start of the next tick.
    fn submit(&mut self, job: u64, index: u32, cpu: f32) -> TaskIdx {
        let t = (self.cell.tasks).alloc(job, index, 0, TRACE_START_US + self.now());
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

    /// Ends blocker `t` at the start of the next tick, as the replay does.
    fn free(&mut self, t: TaskIdx) {
        let ended = EndedTask::of(&self.cell, t, TRACE_START_US + self.now());
        self.events.ended.push(ended);
        self.cell.end(t);
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

    fn tick(&mut self) {
        let end_us = TRACE_START_US + self.now() + TICK_US;
        let events = std::mem::take(&mut self.events);
        self.sparrow.begin_tick(
            &mut self.cell,
            (Tick(self.tick), end_us),
            &events,
            &mut self.agents,
            &mut Vec::new(),
            &mut self.counters,
        );
        for d in self.sparrow.take_deliveries() {
            let at = (d.at_us - TRACE_START_US) as u64;
            self.log
                .push((at, d.from, d.to, MESSAGE_KINDS[d.msg.kind()]));
            self.deliveries.push(d);
        }
        self.cell.check().unwrap();
        self.tick += 1;
    }

    /// Runs the ticks that start before `t_us`.
    fn until(&mut self, t_us: i64) {
        while self.now() < t_us {
            self.tick();
        }
    }

    fn messages_at(&self, t_us: u64) -> Vec<(u32, u32, &'static str)> {
        common::messages_in(&self.log, t_us)
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
    h.until(10_000);
    assert_eq!(h.messages_at(0), [(0, 0, "arrive"), (0, a(m), "submit")]);
    assert_eq!(h.messages_at(500), [(a(m), a(w1), "probe")]);
    assert_eq!(h.messages_at(1_000), [(a(w1), a(m), "probe_queued")]);
    assert!(
        h.log.iter().all(|e| e.0 <= 1_000),
        "W1 is full: nothing more"
    );
    h.set_online(w2, true);
    let t2 = h.submit(job, 1, 0.5);
    h.until(20_000);
    assert_eq!(
        h.messages_at(10_000),
        [(0, 0, "arrive"), (0, a(m), "submit")]
    );
    assert_eq!(
        h.messages_at(10_500),
        [(a(m), a(w1), "probe"), (a(m), a(w2), "probe")]
    );
    assert_eq!(
        h.messages_at(11_000),
        [
            (a(w1), a(m), "probe_queued"),
            (a(w2), a(m), "confirm"),
            (a(w2), a(m), "probe_queued"),
        ]
    );
    assert_eq!(h.messages_at(11_500), [(a(m), a(w2), "assign")]);
    // W2 runs T1, probed for T2, from 11.5 ms (3 delays after T2's submission).
    assert_eq!(h.running_on(t1), Some(w2));
    assert_eq!(h.started_at(t1), 11_500);
    assert_eq!(h.running_on(t2), None);
    assert!(h.log.iter().all(|e| e.0 <= 11_500));
    h.free(b1);
    h.until(30_000);
    assert_eq!(h.messages_at(20_000), [(0, a(w1), "finished")]);
    assert_eq!(
        h.messages_at(20_500),
        [(a(w1), a(m), "confirm"), (a(w1), a(m), "confirm")]
    );
    assert_eq!(
        h.messages_at(21_000),
        [(a(m), a(w1), "assign"), (a(m), a(w1), "cancel")]
    );
    assert_eq!(h.running_on(t2), Some(w1));
    assert_eq!(h.started_at(t2), 21_000);
    let w1_peer = &h.agents[a(w1) as usize];
    assert!(w1_peer.queue.is_empty() && w1_peer.reserved.is_empty());
    let master = &h.agents[a(m) as usize];
    assert!(master.pending.is_empty() && master.probes.is_empty());
    // Counted: three probes deposited, two where their task could not start (W1 full).
    let counted = [0, 1, 2].map(|k| h.counters.get(k));
    assert_eq!(counted, [3.0, 2.0, 0.0]);
}

/// Late binding leaves a task with no probe out, and seed 002's master then waits (no
/// re-probe by default, issue 59). One probe per task: T1 (0.2 CPU) waits at full W1; W2 joins
/// and T2 (0.2 CPU, same job) sends its one probe to W2 (the job is chosen among the first 50
/// so that the draw sends it there); W2 asks and the master binds the oldest task, T1, leaving T2
/// with none. By default nothing more is sent until W1 frees: its probe, sent for T1, asks
/// (20.5 ms) and gets T2 (21 ms). With `reprobe = true` the master probes T2 again at once,
/// its probe arriving beside the assignment (11.5 ms): three probes in all, not two.
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
        h.until(10_000);
        h.set_online(w2, true);
        let t2 = h.submit(job, 1, 0.2);
        h.until(20_000);
        (h, (m, w1, w2), (b1, t1, t2))
    };
    let job = (1..50)
        .find(|&job| {
            let (h, (m, _, w2), _) = scenario(job, false);
            h.messages_at(10_500) == [(a(m), a(w2), "probe")]
        })
        .expect("a job whose second probe goes to W2");
    let probes = |h: &Harness| h.log.iter().filter(|e| e.3 == "probe").count();

    let (mut h, (m, w1, w2), (b1, t1, t2)) = scenario(job, false);
    assert_eq!(h.messages_at(500), [(a(m), a(w1), "probe")]);
    assert_eq!(
        h.messages_at(11_000),
        [(a(w2), a(m), "confirm"), (a(w2), a(m), "probe_queued")]
    );
    assert_eq!(h.messages_at(11_500), [(a(m), a(w2), "assign")]);
    assert_eq!(h.running_on(t1), Some(w2));
    assert!(
        h.log.iter().all(|e| e.0 <= 11_500),
        "T2 waits: nothing is sent"
    );
    assert_eq!(h.running_on(t2), None);
    h.free(b1);
    h.until(30_000);
    assert_eq!(h.messages_at(20_000), [(0, a(w1), "finished")]);
    assert_eq!(h.messages_at(20_500), [(a(w1), a(m), "confirm")]);
    assert_eq!(h.messages_at(21_000), [(a(m), a(w1), "assign")]);
    assert_eq!(h.running_on(t2), Some(w1));
    assert_eq!(h.started_at(t2), 21_000);
    assert_eq!(probes(&h), 2);

    let (h, (m, _, w2), (_, t1, _)) = scenario(job, true);
    assert_eq!(h.running_on(t1), Some(w2));
    let at_assign = h.messages_at(11_500);
    assert_eq!(at_assign.len(), 2, "{at_assign:?}");
    assert!(at_assign.contains(&(a(m), a(w2), "assign")));
    assert!(at_assign.iter().any(|e| e.0 == a(m) && e.2 == "probe"));
    assert_eq!(probes(&h), 3);
}

/// When agent `agent`'s detector (seed 0, pings every second at its phase, `delay_us` each way)
/// reports a node that failed `failed_us` after the trace's start: pings are sent one by one
/// until one arrives at the dead node; the verdict is 3 s after it.
fn verdict(agent: u32, failed_us: i64, delay_us: i64) -> i64 {
    let phase = detector::ping_phase_us(0, AgentIdx(agent), 1_000_000);
    let failed = TRACE_START_US + failed_us;
    let mut ping = phase;
    while ping + delay_us < failed {
        ping += 1_000_000;
    }
    ping + 3_000_000 - TRACE_START_US
}

/// A worker W1 dies (removed as the tick of 10 ms begins) with T1's only probe queued. Its
/// master M subscribed it when probing: M's detector reports it 3 s after its first ping to
/// miss, M re-probes T1 (its only other choice, W2) and it runs there, 3 delays after the
/// report. W2, which never dealt with W1, hears nothing. With `back`, W1 returns 10 ms later,
/// empty (a new incarnation, its queued probe lost), and is reported all the same.
#[test]
fn a_dead_workers_probes_are_sent_again_at_its_masters_verdict() {
    for back in [false, true] {
        let job = 11;
        let (m, w1, w2) = roles(job, 3);
        let mut h = Harness::new(3, SparrowConfig::default());
        h.blocker(w1);
        h.cell.set_machine(NodeIdx(w2), false, None);
        let t1 = h.submit(job, 0, 0.2);
        h.until(10_000);
        assert_eq!(h.messages_at(500), [(a(m), a(w1), "probe")]);
        assert_eq!(h.agents[a(w1) as usize].queue.len(), 1);
        h.set_online(w2, true);
        h.set_online(w1, false);
        h.until(20_000);
        assert!(h.agents[a(w1) as usize].queue.is_empty(), "crashed");
        if back {
            h.set_online(w1, true);
        }
        let at = verdict(a(m), 10_000, 500);
        assert!((3_009_500..4_009_500).contains(&at));
        h.until(at - at % TICK_US);
        assert_eq!(h.running_on(t1), None);
        assert!(h.log.iter().all(|e| e.0 <= 1_000), "back: {back}");
        h.until(at + 20_000);
        let dead: Vec<_> = h.log.iter().filter(|e| e.3 == "dead").copied().collect();
        assert_eq!(dead, [(at as u64, a(m), a(m), "dead")], "back: {back}");
        let (t, _, to, kind) = h.log[h.log.iter().position(|e| e.0 > at as u64).unwrap()];
        assert_eq!((t, kind), (at as u64 + 500, "probe"));
        if !back {
            assert_eq!(to, a(w2));
            assert_eq!(
                h.messages_at(at as u64 + 1_000),
                [(a(w2), a(m), "confirm"), (a(w2), a(m), "probe_queued")]
            );
            assert_eq!(h.messages_at(at as u64 + 1_500), [(a(m), a(w2), "assign")]);
        }
        assert!(h.running_on(t1).is_some(), "back: {back}");
        assert!(h.started_at(t1) >= at + 1_500);
    }
}

/// A master M dies with T1's place-holders queued at two full workers: each worker subscribed
/// M and drops its place-holder at its own detector's verdict; T1 (pending at the dead master)
/// is issued again through the ring at the DATACENTER's verdict, to a live owner (handed over
/// at once); it runs once a worker has room.
#[test]
fn a_dead_masters_placeholders_are_cancelled_and_its_tasks_issued_again() {
    let job = 5;
    let (m, w1, w2) = roles(job, 3);
    let mut h = Harness::new(3, SparrowConfig::default());
    let b1 = h.blocker(w1);
    let b2 = h.blocker(w2);
    let t1 = h.submit(job, 0, 0.2);
    h.until(10_000);
    let queued = |h: &Harness, n: u32| h.agents[a(n) as usize].queue.len();
    assert_eq!((queued(&h, w1), queued(&h, w2)), (1, 1));
    h.set_online(m, false);
    let (at1, at2, at0) = (
        verdict(a(w1), 10_000, 500),
        verdict(a(w2), 10_000, 500),
        verdict(0, 10_000, 500),
    );
    let first = at0.min(at1).min(at2);
    h.until(first - first % TICK_US);
    assert_eq!((queued(&h, w1), queued(&h, w2)), (1, 1), "not yet reported");
    h.until(at0.max(at1).max(at2) + 10_000);
    let owner = Ring::new(
        [(w1, 100 + w1 as u64), (w2, 100 + w2 as u64)].into_iter(),
        16,
    )
    .owner(job)
    .unwrap();
    let mut expected = vec![
        (at0 as u64, 0, 0, "arrive"),
        (at0 as u64, 0, a(owner), "submit"),
        (at1 as u64, a(w1), a(w1), "dead"),
        (at2 as u64, a(w2), a(w2), "dead"),
    ];
    expected.sort();
    let mut got: Vec<_> = h.log.iter().filter(|e| e.0 > 1_000).copied().collect();
    got.retain(|e| e.0 <= at0 as u64 || e.3 != "probe" && e.3 != "probe_queued");
    got.sort();
    assert_eq!(got, expected);
    let from_dead = |h: &Harness, n: u32| {
        let peer = &h.agents[a(n) as usize];
        peer.queue.iter().any(|p| p.master == agent_of(NodeIdx(m)))
    };
    assert!(!from_dead(&h, w1) && !from_dead(&h, w2));
    h.free(b1);
    h.free(b2);
    h.until(at0.max(at1).max(at2) + 100_000);
    assert!(h.running_on(t1).is_some());
    assert_ne!(h.running_on(t1), Some(m));
}

/// An assignment in flight to a worker that dies (4 ms delays, so the assignment sent at 8 ms
/// arrives at 12 ms, after the removal at 10 ms): the task is lost there, and its master, which
/// no longer held a probe at that worker, learns at its detector's verdict and probes it again.
#[test]
fn a_task_assigned_to_a_worker_that_died_is_probed_again_at_its_masters_verdict() {
    let job = 11;
    let (m, w1, w2) = roles(job, 3);
    let config = SparrowConfig {
        net_delay: engine::sim_time::SimDuration::from_us(4_000),
        ..SparrowConfig::default()
    };
    let mut h = Harness::new(3, config);
    let b2 = h.blocker(w2);
    let t1 = h.submit(job, 0, 0.2);
    h.until(10_000);
    assert!(h.messages_at(8_000).contains(&(a(w1), a(m), "confirm")));
    h.set_online(w1, false);
    h.until(20_000);
    assert_eq!(h.messages_at(12_000), [(a(m), a(w1), "assign")]);
    assert_eq!(h.running_on(t1), None);
    let at = verdict(a(m), 10_000, 4_000);
    h.until(at + 10_000);
    assert!(h.log.iter().all(|e| e.3 != "dead"), "M held no probe at W1");
    assert_eq!(h.messages_at(at as u64), [(0, a(m), "submit")]);
    assert_eq!(h.messages_at(at as u64 + 4_000), [(a(m), a(w2), "probe")]);
    h.free(b2);
    h.until(at + 100_000);
    assert_eq!(h.running_on(t1), Some(w2));
}

/// Step 4's queue order. Two nodes: the master M and a worker W with 0.5 CPU free. A job's
/// first task (0.8 CPU) probes W and heads its queue, never fitting; its second (0.3) queues
/// behind it. Under seed 002's FIFO the head blocks it; with `first-that-fits` W reserves the
/// second place-holder at once and the master binds it to the 0.3 task (the 0.8 one needs more),
/// 3 delays after its submission.
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
        h.until(10_000);
        let small = h.submit(job, 1, 0.3);
        h.until(20_000);
        assert_eq!(h.running_on(big), None, "{order:?}");
        match order {
            QueueOrder::Fifo => assert_eq!(h.running_on(small), None),
            QueueOrder::FirstThatFits => {
                assert_eq!(h.running_on(small), Some(w));
                assert_eq!(h.started_at(small), 10_000 + 1_500);
            }
        }
    }
}

/// A task ends within a tick: its worker counts its room as taken until the task's own end
/// time and hears then (step 8), so the place-holder waiting there starts 2 delays after the
/// end (confirmation request, assignment), not at the tick's start. W is full with a blocker
/// that ends at 14.2 ms (applied by the replay at the tick's start, 10 ms).
#[test]
fn a_task_ending_within_a_tick_frees_its_room_at_its_own_end() {
    let job = 9;
    let ring = Ring::new((0..2).map(|n| (n, 100 + n as u64)), 16);
    let m = ring.owner(job).unwrap();
    let w = 1 - m;
    let mut h = Harness::new(2, SparrowConfig::default());
    let b = h.blocker(w);
    let t = h.submit(job, 0, 0.5);
    h.until(10_000);
    assert_eq!(h.running_on(t), None);
    let ended = EndedTask::of(&h.cell, b, TRACE_START_US + 14_200);
    h.events.ended.push(ended);
    h.cell.end(b);
    h.until(20_000);
    assert_eq!(h.messages_at(14_200), [(0, a(w), "finished")]);
    assert_eq!(h.messages_at(14_700), [(a(w), a(m), "confirm")]);
    assert_eq!(h.running_on(t), Some(w));
    assert_eq!(h.started_at(t), 15_200);
}

/// Cyclon views kept by messages (issue 59): every shuffle is answered one delay after it
/// arrives, by the peer it was sent to; the descriptors age: node 2, full until 2 s, is still
/// in some view as full (0 free CPUs, cached before 2 s) at 2.5 s, though it has been free
/// since 2 s; by 6 s every view that holds it has it free. Four nodes, exchanges every second.
#[test]
fn cyclon_views_are_exchanged_by_messages_and_age() {
    use engine::sparrow::Msg;
    let mut h = Harness::new(4, SparrowConfig::random_walk());
    let b = h.blocker(2);
    h.until(2_000_000);
    h.free(b);
    h.until(2_500_000);
    let shuffles: Vec<_> = (h.deliveries.iter())
        .filter_map(|d| match d.msg {
            Msg::Shuffle { reply, .. } => Some((d.at_us, d.from, d.to, reply)),
            _ => None,
        })
        .collect();
    let requests = shuffles.iter().filter(|s| !s.3).count();
    assert!(
        requests >= 4,
        "every node shuffles about once a second: {requests}"
    );
    for &(at, from, to, reply) in &shuffles {
        if !reply && at + 500 < TRACE_START_US + 2_500_000 {
            assert!(
                shuffles.contains(&(at + 500, to, from, true)),
                "the shuffle {from} -> {to} at {at} is answered a delay later"
            );
        }
    }
    let views_of_2 = |h: &Harness| -> Vec<(f32, i64)> {
        (h.agents.iter().flat_map(|p| p.view.iter()))
            .filter(|e| e.node == 2)
            .map(|e| (e.free_cpus, e.at_us - TRACE_START_US))
            .collect()
    };
    let stale = views_of_2(&h);
    assert!(
        stale
            .iter()
            .any(|&(free, at)| free == 0.0 && at < 2_000_000),
        "a view still says node 2 is full: {stale:?}"
    );
    h.until(6_000_000);
    let fresh = views_of_2(&h);
    assert!(
        !fresh.is_empty() && fresh.iter().all(|&(free, _)| free == 8.0),
        "{fresh:?}"
    );
}
