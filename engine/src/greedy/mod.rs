//! Policies `first-fit`, `best-fit` and `random`: greedy placers, the baselines every scheduler
//! is measured against (issue 32), on GCD cells as on the seeds' scenarios.
//!
//! Each tick, after the trace's events, [`Greedy::begin_tick`](crate::policy::Policy::begin_tick)
//! takes the waiting tasks in the order they became pending (new, resubmitted, or displaced by a
//! machine removal) and places each on the node its [`NodeChoice`] picks among the online nodes
//! with room for it ([`fit`]) that meet its constraints. A task no node has room for waits for
//! the next tick. No agents, no messages, no migrations; like MASB, the policy replays the
//! trace's tasks, each running its recorded time from when it is placed (`replay/deferred.rs`).
//! Each ended task run is a row of the policy's `tasks/` table (submit, start, end and queueing
//! time, microseconds), each finished job one of `jobs/` (`queue_outputs.rs`). A MapReduce
//! job's reduce tasks wait until its map tasks have ended (`phases.rs`).
//!
//! Invariants: the queue is [`waiting::Waiting`]'s. Within a tick, a task that needs at least as
//! much as one no node had room for ([`fit::Need::at_least`]), with the same constraints or that
//! one with none, is not looked for: placements only take room away, so none would have it
//! (kept by need class, `classes.rs`, for a choice that draws nothing; across ticks, in
//! `class_queues.rs`, for the policies' own passes, which then look only at the classes still
//! alive instead of at every waiting task). For
//! the same reason, a choice that takes the first qualifying node ([`NodeChoice::TAKES_FIRST`])
//! looks for such a task only from the node the other was placed on: every node before it had
//! no room for the other then, so none has room for this one now (a job's many equal tasks no
//! longer search the cell's full prefix again each). A task no node has its CPU and memory free
//! for together is not looked for either (`staircase.rs`, kept exact through the pass; not for
//! a choice that draws, whose draws a skipped search would shift).
//! Across ticks, a task no node could take is looked for again only on the nodes changed since,
//! while its need and constraints stay ([`unplaced`]; not for a choice that draws). A task with
//! constraints is looked for only on the nodes meeting them, kept per constraint set in a
//! [`MatchMemo`] (which follows attribute changes node by node).

mod class_queues;
mod classes;
pub mod fit;
pub mod unplaced;
pub mod waiting;

mod choice;
pub(crate) mod room;
mod staircase;

use std::ops::Range;

use ingest::rng::{Rng, hash_keys};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub(crate) use choice::qualifies;
pub use choice::{BestFit, FirstFit, NodeChoice, Random, Search};
use class_queues::{ClassQueues, Outcome};
use classes::NeedClasses;
use fit::Need;
use room::RoomIndex;
use staircase::Staircase;
use unplaced::Unplaced;
use waiting::Waiting;

use crate::cell::{Cell, TaskState};
use crate::ids::{ConstraintSetIdx, NodeIdx, TaskIdx, Tick};
use crate::match_memo::MatchMemo;
use crate::phases::{Gate, Phases};
use crate::policy::{Envelope, Policy, PolicyCounters, TableRows, TableSpec};
use crate::queue_outputs::QueueOutputs;
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

/// Needs of tasks no node had room for this tick (with their constraint sets), kept to skip
/// the tasks needing more.
const FAILED_KEPT: usize = 32;

/// Placements of this tick (need, constraint set, node) kept to start later searches after.
const PLACED_KEPT: usize = 8;

/// A greedy placer choosing nodes by `C`.
#[derive(Debug, Clone, Default)]
pub struct Greedy<C> {
    choice: C,
    seed: u64,
    /// Pending tasks, in the order they became pending.
    waiting: Waiting,
    /// Room on the nodes (a pure cache: rebuilt every tick).
    room: RoomIndex,
    /// Which CPU and memory the nodes have free together (a pure cache: rebuilt every tick).
    stairs: Staircase,
    /// The `tasks/` and `jobs/` tables.
    outputs: QueueOutputs,
    /// The jobs' MapReduce phases (reduce tasks wait for their maps; `phases.rs`).
    phases: Phases,
    /// The waiting tasks no node could take in the last pass (a pure cache, not saved).
    unplaced: Unplaced,
    /// The waiting tasks' need classes, and which found no node this pass (a pure cache).
    classes: NeedClasses,
    /// The waiting tasks kept by need class across ticks (a pure cache, not saved; the
    /// placements of [`place_queued`] when it applies).
    queues: ClassQueues,
    /// The nodes meeting the waiting tasks' constraint sets (a pure cache, not saved).
    meeting: MatchMemo,
    /// Tests: search for every task from the first node, as without the pass's memories.
    exhaustive: bool,
}

impl<C: NodeChoice> Greedy<C> {
    /// The placer with the run's seed (random draws only), writing `outputs`.
    pub fn new(seed: u64, outputs: QueueOutputs) -> Greedy<C> {
        Greedy {
            choice: C::default(),
            seed,
            waiting: Waiting::default(),
            room: RoomIndex::default(),
            stairs: Staircase::default(),
            phases: Phases::of_terms(outputs.terms()),
            unplaced: Unplaced::default(),
            classes: NeedClasses::default(),
            queues: ClassQueues::default(),
            meeting: MatchMemo::default(),
            exhaustive: false,
            outputs,
        }
    }

    /// The placer with `phases` instead of its outputs' job terms' (tests).
    #[cfg(test)]
    pub(crate) fn with_phases(mut self, phases: Phases) -> Self {
        self.phases = phases;
        self
    }

    /// Forgets which waiting tasks no node could take, where this pass placed tasks, which
    /// nodes meet which constraints and which CPU and memory they have free together (tests: a
    /// pass then tests every node for every task from the first, as without `unplaced.rs`,
    /// [`PLACED_KEPT`], the match memo and `staircase.rs`).
    #[cfg(test)]
    fn search_exhaustively(&mut self) {
        self.unplaced = Unplaced::default();
        self.queues.clear();
        self.exhaustive = true;
    }

    /// This tick's gate of reduce tasks waiting for their maps (`phases.rs`).
    pub fn gate(&self, cell: &Cell) -> Gate {
        self.phases.gate(cell)
    }

    /// Tasks waiting to be placed in `cell` (in queue order).
    pub fn waiting(&self, cell: &Cell) -> Vec<(TaskIdx, u32)> {
        self.waiting.current(cell)
    }
}

/// Which waiting tasks a placer may place (a controller's shares, `controlled/`): asked before
/// a node is looked for, told of each placement.
pub trait Admission {
    /// True when [`Admission::nodes`] is every node for every task: what a task may use then
    /// depends on the cell alone, so waiting tasks can be kept by need class across ticks
    /// (`class_queues.rs`).
    const ALL_NODES: bool = false;

    /// Whether task `t` may be placed now.
    fn admits(&self, cell: &Cell, t: TaskIdx) -> bool;
    /// Task `t` was placed.
    fn placed(&mut self, cell: &Cell, t: TaskIdx);
    /// The nodes task `t` may be placed on, by index (a micro-cluster's,
    /// `controlled/clusters.rs`; by default every node).
    fn nodes(&self, cell: &Cell, _t: TaskIdx) -> Range<usize> {
        0..cell.nodes.len()
    }
}

/// Every task may be placed.
pub struct AdmitAll;

/// `admission`, except the reduce tasks `gate` holds back.
struct Gated<'a, A> {
    gate: &'a Gate,
    admission: &'a mut A,
}

impl<A: Admission> Admission for Gated<'_, A> {
    const ALL_NODES: bool = A::ALL_NODES;

    fn admits(&self, cell: &Cell, t: TaskIdx) -> bool {
        let (job, index) = (
            cell.tasks.job_id()[t.index()],
            cell.tasks.task_index()[t.index()],
        );
        !self.gate.holds(job, index) && self.admission.admits(cell, t)
    }

    fn placed(&mut self, cell: &Cell, t: TaskIdx) {
        self.admission.placed(cell, t);
    }

    fn nodes(&self, cell: &Cell, t: TaskIdx) -> Range<usize> {
        self.admission.nodes(cell, t)
    }
}

impl Admission for AdmitAll {
    const ALL_NODES: bool = true;

    fn admits(&self, _: &Cell, _: TaskIdx) -> bool {
        true
    }

    fn placed(&mut self, _: &Cell, _: TaskIdx) {}
}

/// The cell and the pass's indexes of it: room, free pairs, unplaceable tasks and need classes,
/// constraint matches.
type Indexes<'a> = (
    &'a mut Cell,
    (&'a mut RoomIndex, &'a mut Staircase),
    (&'a mut Unplaced, &'a mut NeedClasses),
    &'a mut MatchMemo,
);

/// A pass placing waiting tasks one at a time: the cell, its indexes, and what the pass
/// remembers of its failures and placements (each with the nodes the task might use,
/// `Admission::nodes`: a memory holds only for tasks confined to the same ones).
struct Pass<'a, C, A> {
    choice: &'a C,
    cell: &'a mut Cell,
    room: &'a mut RoomIndex,
    stairs: &'a mut Staircase,
    unplaced: &'a mut Unplaced,
    memo: &'a mut MatchMemo,
    rng: &'a mut Rng,
    admission: &'a mut A,
    now_us: i64,
    exhaustive: bool,
    /// Whether the pass's pruning memories (free pairs, need classes) are kept: not for a
    /// choice that draws (a skipped search would shift its draws), nor in tests searching
    /// exhaustively.
    prunes: bool,
    failed: Vec<(ConstraintSetIdx, Need, Range<usize>)>,
    placed: Vec<(ConstraintSetIdx, Need, usize, Range<usize>)>,
    placements: usize,
}

/// How a pass finds the room index and the free pairs ([`Pass::begin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rooms {
    /// Rebuilt from the nodes.
    Rebuild,
    /// Up to date: refreshed by the caller ([`refresh_rooms`]) from the nodes touched for the
    /// fit, which are every change the fit rule reads since the last pass (a greedy policy's
    /// own pass, `Staircase::refresh`).
    Current,
}

/// Brings the room index and the free pairs up to date from the nodes the cell touched for the
/// fit since the last pass (`Rooms::Current`).
fn refresh_rooms(cell: &Cell, (room, stairs): (&mut RoomIndex, &mut Staircase)) {
    room.refresh(&cell.nodes, cell.touched_for_fit());
    stairs.refresh(&cell.nodes, cell.touched_for_fit());
}

impl<'a, C: NodeChoice, A: Admission> Pass<'a, C, A> {
    /// Starts a pass: the room index and (when pruning) the free pairs rebuilt, or taken as
    /// they are (`rooms`); the unplaced marks and the constraint memo brought up to date.
    fn begin(
        choice: &'a C,
        (cell, (room, stairs), unplaced, memo): PassIndexes<'a>,
        (rng, admission): (&'a mut Rng, &'a mut A),
        (now_us, exhaustive, rooms): (i64, bool, Rooms),
    ) -> Self {
        let prunes = !C::DRAWS && !exhaustive;
        if rooms == Rooms::Rebuild {
            room.rebuild(&cell.nodes);
            match prunes {
                true => stairs.rebuild(&cell.nodes),
                false => stairs.forget(),
            }
        }
        unplaced.begin_pass(cell);
        // The memo follows attribute changes by epoch, which only the index counts (a no-op
        // when the replay has indexed them already).
        cell.index_attributes();
        memo.trim();
        Pass {
            choice,
            cell,
            room,
            stairs,
            unplaced,
            memo,
            rng,
            admission,
            now_us,
            exhaustive,
            prunes,
            failed: Vec::new(),
            placed: Vec::with_capacity(PLACED_KEPT),
            placements: 0,
        }
    }

    /// Looks for a node for admitted task `t`, which needs `need` and has constraint set `set`,
    /// among `nodes`, and places it there if one qualifies. `classed`: the caller keeps need
    /// classes (a failure kills the task's class there, not in this pass's own short list).
    fn consider(
        &mut self,
        t: TaskIdx,
        (need, set, nodes): (Need, ConstraintSetIdx, Range<usize>),
        classed: bool,
    ) -> Outcome {
        let cell = &mut *self.cell;
        // Every node that lacked room for `f` (with constraints `s`, among `r`) lacks it for
        // this task.
        let harder = |s: ConstraintSetIdx, f: &Need, r: &Range<usize>| {
            (s == set || s == ConstraintSetIdx::EMPTY) && need.at_least(f) && *r == nodes
        };
        // No node can take the task now. Only a task with constraints is asked about across
        // passes (`Unplaced::still_unplaceable`, below), so only its mark is kept (with ~170k
        // tasks waiting, a mark for each was 7 % of first-fit's time).
        let remember = |unplaced: &mut Unplaced, cell: &Cell| {
            if set != ConstraintSetIdx::EMPTY {
                unplaced.mark(cell, (t, set, &need));
            }
        };
        // The O(1) tests first (no node has room: the index's root; for a choice that draws, a
        // smaller need failed this pass), then whether any node has its CPU and memory free
        // together (`staircase.rs`, O(log nodes)), then, for a task with constraints, the
        // touched nodes (`unplaced.rs`): each only skips a task no node can take now, so their
        // order changes no placement. A task without constraints goes straight to the room
        // index, whose leaves have room exactly where the fit rule holds: its search answers
        // what the touched nodes would, in far fewer steps when thousands of nodes changed
        // (many tasks waiting on a cell whose requests are full, fitting by requests).
        if !self.room.any(&need)
            || (!classed && (self.failed.iter()).any(|(s, f, r)| harder(*s, f, r)))
            || (self.prunes && !self.stairs.may_fit(&need))
        {
            remember(self.unplaced, cell);
            return Outcome::Failed { searched: false };
        }
        if !C::DRAWS
            && set != ConstraintSetIdx::EMPTY
            && self.unplaced.still_unplaceable(cell, (t, set, &need))
        {
            return Outcome::Failed { searched: true };
        }
        let from = (self.placed.iter())
            .filter(|(s, f, _, r)| !self.exhaustive && harder(*s, f, r))
            .map(|p| p.2)
            .max()
            .unwrap_or(0)
            .max(nodes.start);
        let meeting = (set != ConstraintSetIdx::EMPTY && !self.exhaustive)
            .then(|| {
                let changes = |since| cell.attribute_changes_since(since);
                let meets = |n: NodeIdx| cell.meets(n, cell.constraints_of(t));
                let attributes = (cell.attributes_epoch(), &changes as _);
                let key = (set, cell.constraints_of(t));
                self.memo
                    .positions(attributes, key, cell.nodes.len(), &meets)
            })
            .flatten();
        let search = Search {
            need: &need,
            from,
            until: nodes.end,
            meeting,
        };
        match self.choice.choose((cell, self.room), t, search, self.rng) {
            Some(n) => {
                cell.place(t, n, self.now_us);
                self.admission.placed(cell, t);
                self.room.update(&cell.nodes, n.index());
                if self.prunes {
                    let after = staircase::free_pair(&cell.nodes, n.index());
                    self.stairs.update(n.index(), after);
                }
                if C::TAKES_FIRST {
                    let entry = (set, need, n.index(), nodes);
                    match self.placed.get_mut(self.placements % PLACED_KEPT) {
                        Some(slot) => *slot = entry,
                        None => self.placed.push(entry),
                    }
                    self.placements += 1;
                }
                Outcome::Placed
            }
            None => {
                remember(self.unplaced, cell);
                if !classed && self.failed.len() < FAILED_KEPT {
                    self.failed.push((set, need, nodes));
                }
                Outcome::Failed { searched: true }
            }
        }
    }
}

/// The cell and the indexes a [`Pass`] keeps up to date.
type PassIndexes<'a> = (
    &'a mut Cell,
    (&'a mut RoomIndex, &'a mut Staircase),
    &'a mut Unplaced,
    &'a mut MatchMemo,
);

/// Places each of `waiting` that is still pending (in its generation) and admitted where
/// `choice` picks, in order; `unplaced` remembers the tasks no node qualifies for (and, for a
/// choice that draws nothing, spares them a search while nothing that could change that has
/// happened: `unplaced.rs`).
/// Looks at every waiting task: for a choice that draws, for tasks whose admitted nodes may
/// change ([`Admission::ALL_NODES`] false), and in tests searching exhaustively
/// ([`place_queued`] otherwise).
fn place_waiting<C: NodeChoice>(
    choice: &C,
    (cell, rooms, (unplaced, classes), memo): Indexes<'_>,
    waiting: &[(TaskIdx, u32)],
    (rng, admission): (&mut Rng, &mut impl Admission),
    (now_us, exhaustive): (i64, bool),
) {
    let at = (now_us, exhaustive, Rooms::Rebuild);
    let mut pass = Pass::begin(choice, (cell, rooms, unplaced, memo), (rng, admission), at);
    if pass.prunes {
        classes.begin_pass(waiting.len());
    }
    for &(t, generation) in waiting {
        let cell = &*pass.cell;
        let (tasks, i) = (&cell.tasks, t.index());
        if tasks.generation()[i] != generation
            || tasks.state()[i] != TaskState::Pending
            || !pass.admission.admits(cell, t)
        {
            continue;
        }
        let need = Need::of(cell, t);
        let set = cell.constraint_set(t);
        let nodes = pass.admission.nodes(cell, t);
        let class = (pass.prunes).then(|| classes.class_of(t, (&need, set, &nodes)));
        // Its need class is dead (`classes.rs`): no node can take it.
        if class.is_some_and(|c| classes.dead(c)) {
            if set != ConstraintSetIdx::EMPTY {
                pass.unplaced.mark(cell, (t, set, &need));
            }
            continue;
        }
        let outcome = pass.consider(t, (need, set, nodes), class.is_some());
        if let (Some(class), Outcome::Failed { .. }) = (class, outcome) {
            classes.failed(class);
        }
    }
}

/// [`place_waiting`] for a choice that draws nothing, tasks that may use every node, and no
/// exhaustive search, over the waiting tasks kept by need class (`class_queues.rs`, brought up
/// to date with the queue before): the same placements, looking only at the tasks of classes
/// still alive.
fn place_queued<C: NodeChoice>(
    choice: &C,
    indexes: PassIndexes<'_>,
    (queues, waiting): (&mut ClassQueues, &mut Waiting),
    (rng, admission): (&mut Rng, &mut impl Admission),
    now_us: i64,
) {
    debug_assert!(!C::DRAWS);
    let at = (now_us, false, Rooms::Current);
    let mut pass = Pass::begin(choice, indexes, (rng, admission), at);
    // Only the room index's root at the start (O(1)): the staircase's O(log nodes) test, for
    // each of ~7k classes, cost more than it saved; most classes die of a failure first.
    queues.begin_pass(|need| pass.room.any(need));
    loop {
        let (room, stairs) = (&*pass.room, &*pass.stairs);
        let may_fit = |need: &Need| room.any(need) && stairs.may_fit(need);
        let Some((t, class, need)) = queues.next(pass.cell, may_fit) else {
            break;
        };
        let cell = &*pass.cell;
        debug_assert_eq!(need, Need::of(cell, t), "task {t:?}'s class is current");
        if !pass.admission.admits(cell, t) {
            queues.settle(class, Outcome::Skipped);
            continue;
        }
        let nodes = 0..cell.nodes.len();
        let outcome = pass.consider(t, (need, cell.constraint_set(t), nodes), true);
        if outcome == Outcome::Placed {
            waiting.leave(t);
        }
        queues.settle(class, outcome);
    }
    queues.end_pass();
}

impl<C: NodeChoice> Greedy<C> {
    /// A tick of the placer (its [`Policy::begin_tick`]) placing only what `admission` admits
    /// and `gate` (this tick's, [`Greedy::gate`]) does not hold back.
    pub fn place_admitted<A: Admission>(
        &mut self,
        cell: &mut Cell,
        (now_us, gate): (i64, &Gate),
        events: &TickEvents,
        admission: &mut A,
    ) {
        // Every pass skips entries no longer current: one pass over the queue a tick at most, at
        // its end (`waiting.rs`).
        let new_from = self.waiting.join(cell, events);
        let mut rng = Rng::new(hash_keys(self.seed, &[0x6772_6565_6479, now_us as u64]), 0);
        let admission = &mut Gated { gate, admission };
        if !C::DRAWS && !self.exhaustive && A::ALL_NODES {
            // Three parts that read the cell and write only their own: the class queues follow
            // the waiting tasks, the room index and free pairs the nodes, the tasks/jobs rows
            // the tick's events; on every thread (each as one thread would do it).
            let (queues, outputs, waiting) = (&mut self.queues, &mut self.outputs, &self.waiting);
            let (at, rooms) = (&*cell, (&mut self.room, &mut self.stairs));
            rayon::join(
                || queues.sync(at, waiting.tasks(), new_from),
                || rayon::join(|| refresh_rooms(at, rooms), || outputs.record(at, events)),
            );
            let rooms = (&mut self.room, &mut self.stairs);
            let at = (&mut *cell, rooms, &mut self.unplaced, &mut self.meeting);
            place_queued(
                &self.choice,
                at,
                (&mut self.queues, &mut self.waiting),
                (&mut rng, admission),
                now_us,
            );
            self.waiting.settle(cell);
        } else {
            self.outputs.record(cell, events);
            let rooms = (&mut self.room, &mut self.stairs);
            // Entries of tasks placed by a pass over classes (before a switch to searching
            // exhaustively) go first: this pass reads the entries alone.
            if self.waiting.has_left() {
                self.waiting.keep_pending(cell);
            }
            let at = (
                &mut *cell,
                rooms,
                (&mut self.unplaced, &mut self.classes),
                &mut self.meeting,
            );
            let (waiting, at_us) = (self.waiting.tasks(), (now_us, self.exhaustive));
            place_waiting(&self.choice, at, waiting, (&mut rng, admission), at_us);
            self.waiting.keep_pending(cell);
        }
    }
}

impl<C: NodeChoice> Policy for Greedy<C> {
    type Msg = ();
    type Agent = ();
    type Action = ();

    fn name(&self) -> &'static str {
        C::NAME
    }

    fn startable(&self, cell: &Cell, waiting: &mut Vec<TaskIdx>) {
        let gate = self.gate(cell);
        let tasks = &cell.tasks;
        waiting.retain(|t| !gate.holds(tasks.job_id()[t.index()], tasks.task_index()[t.index()]));
    }

    fn begin_tick(
        &mut self,
        cell: &mut Cell,
        (_, now_us): (Tick, i64),
        events: &TickEvents,
        _agents: &mut Vec<()>,
        _inject: &mut Vec<Envelope<()>>,
        _counters: &mut PolicyCounters,
    ) {
        let gate = self.gate(cell);
        self.place_admitted(cell, (now_us, &gate), events, &mut AdmitAll);
    }

    fn tables(&self) -> &'static [TableSpec] {
        &crate::queue_outputs::TABLES
    }

    fn take_rows(&mut self, out: &mut TableRows) {
        self.outputs.take_rows(out);
    }

    fn save_state(&self, w: &mut SectionWriter) {
        self.waiting.save(w);
        self.outputs.save_state(w);
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        self.waiting.load(r)?;
        self.outputs.load_state(r)
    }
}

/// Declares a greedy policy's (empty) settings type and its registry spec.
macro_rules! greedy_spec {
    ($config:ident, $choice:ty, $about:literal) => {
        #[doc = concat!("The settings of [`", stringify!($choice), "`]: none of its own.")]
        #[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $config {}

        impl crate::policy::PolicySpec for $config {
            type Policy = Greedy<$choice>;

            const ABOUT: &'static str = $about;

            const HONOURS_PHASES: bool = true;

            fn build(
                &self,
                run: &crate::policy::RunSettings,
                trace_dir: &std::path::Path,
            ) -> crate::Result<Greedy<$choice>> {
                Ok(Greedy::new(run.seed, QueueOutputs::of_run(run, trace_dir)?))
            }
        }
    };
}

greedy_spec!(
    FirstFitConfig,
    FirstFit,
    "baseline: each waiting task on the first node (in trace order) with room for it"
);
greedy_spec!(
    BestFitConfig,
    BestFit,
    "baseline: each waiting task on the node left with the least free CPU + memory share"
);
greedy_spec!(
    RandomConfig,
    Random,
    "baseline: each waiting task on a node drawn uniformly among those with room for it"
);

/// The waiting tasks the policy may start now that fit some online node by the fit rule
/// (the watchdog's stall test, `watchdog.rs`).
pub fn fitting_waiting_tasks<P: Policy>(cell: &Cell, policy: &P) -> u64 {
    let tasks = &cell.tasks;
    let mut waiting: Vec<TaskIdx> = (0..tasks.len())
        .filter(|&i| tasks.state()[i] == TaskState::Pending)
        .map(|i| TaskIdx(i as u32))
        .filter(|&t| !cell.held(t))
        .collect();
    policy.startable(cell, &mut waiting);
    crate::parallel_time::region(|| {
        (waiting.par_iter())
            .filter(|&&t| {
                let need = Need::of(cell, t);
                (0..cell.nodes.len()).any(|n| qualifies(cell, t, &need, n))
            })
            .count() as u64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two online nodes of capacity (100, 100), empty.
    fn cell() -> Cell {
        Cell::with_machines(2, 100, 100)
    }

    fn task(cell: &mut Cell, cpu: u32) -> TaskIdx {
        let t = cell.tasks.alloc(1, cell.tasks.len() as u32, 0, 0);
        cell.set_request(t, cpu, 10);
        t
    }

    fn tick(policy: &mut Greedy<FirstFit>, cell: &mut Cell, events: &TickEvents, at: u32) {
        let at = (Tick(at), at as i64 * 60_000_000);
        let counters = &mut PolicyCounters::default();
        policy.begin_tick(cell, at, events, &mut Vec::new(), &mut Vec::new(), counters);
    }

    /// Remembering unplaceable tasks (`unplaced.rs`) and starting first-fit's searches after
    /// earlier placements ([`PLACED_KEPT`]) change nothing: on random cells, passes of first-fit
    /// and best-fit with the memories place every task on the node passes without them (every
    /// task searched from the first node) choose ([`unplaced::same_placements_with_and_without`];
    /// starting one node too late fails it).
    #[test]
    fn the_passes_memories_change_no_placement() {
        fn check<C: NodeChoice>(seed: u64) -> usize {
            let policies = [0, 1].map(|_| Greedy::<C>::new(seed, QueueOutputs::default()));
            let forget = |p: &mut Greedy<C>| p.search_exhaustively();
            let waiting = |p: &Greedy<C>, cell: &Cell| p.waiting(cell).len();
            unplaced::same_placements_with_and_without(seed, policies, (forget, waiting))
        }
        let waited: usize = (0..30).map(check::<FirstFit>).sum::<usize>()
            + (0..30).map(check::<BestFit>).sum::<usize>();
        assert!(
            waited > 1_000,
            "tasks must wait for the memory to matter: {waited}"
        );
    }

    /// First-fit by hand: tasks of CPU 60, 60, 50, 30 on two nodes of 100 go to nodes 0, 1,
    /// (waits), 0; once the first ends, the waiting one takes its place, in queue order.
    #[test]
    fn waiting_tasks_are_placed_in_the_order_they_came_and_wait_for_room() {
        let mut cell = cell();
        let tasks: Vec<TaskIdx> = [60, 60, 50, 30].map(|c| task(&mut cell, c)).to_vec();
        let mut policy = Greedy::<FirstFit>::new(1, QueueOutputs::default());
        let events = TickEvents {
            // Submitted twice in one tick (a resubmission): queued once.
            submitted: [&tasks[..], &tasks[2..3]].concat(),
            ..TickEvents::default()
        };
        tick(&mut policy, &mut cell, &events, 1);
        let node = |c: &Cell, t: TaskIdx| c.tasks.node()[t.index()].0;
        assert_eq!(node(&cell, tasks[0]), 0);
        assert_eq!(node(&cell, tasks[1]), 1);
        assert_eq!(cell.tasks.state()[tasks[2].index()], TaskState::Pending);
        assert_eq!(node(&cell, tasks[3]), 0);
        assert_eq!(
            policy.waiting(&cell),
            [(tasks[2], cell.tasks.generation()[tasks[2].index()])]
        );
        cell.check().unwrap();
        // Nothing frees: it waits. Then task 1 ends: task 2 goes to node 1.
        tick(&mut policy, &mut cell, &TickEvents::default(), 2);
        assert_eq!(policy.waiting(&cell).len(), 1);
        cell.end(tasks[1]);
        tick(&mut policy, &mut cell, &TickEvents::default(), 3);
        assert_eq!(node(&cell, tasks[2]), 1);
        assert!(policy.waiting(&cell).is_empty());
        // A task displaced by a machine removal queues again.
        cell.unplace(tasks[3]);
        let events = TickEvents {
            displaced_tasks: vec![tasks[3]],
            ..TickEvents::default()
        };
        tick(&mut policy, &mut cell, &events, 4);
        assert_eq!(node(&cell, tasks[3]), 0);
        cell.check().unwrap();
    }

    /// Tasks confined to nodes (`Admission::nodes`, a micro-cluster's) by job: job 1 to nodes
    /// 2..4, job 2 to 0..2 of four nodes of 100.
    struct Confined;

    impl Admission for Confined {
        fn admits(&self, _: &Cell, _: TaskIdx) -> bool {
            true
        }

        fn placed(&mut self, _: &Cell, _: TaskIdx) {}

        fn nodes(&self, cell: &Cell, t: TaskIdx) -> std::ops::Range<usize> {
            match cell.tasks.job_id()[t.index()] {
                1 => 2..4,
                _ => 0..2,
            }
        }
    }

    /// By hand, on four empty nodes of 100: job 1's tasks of 60, 60, 60 go to nodes 2, 3 and
    /// wait (nodes 0 and 1 have room but are not theirs), then job 2's task of 60 still goes to
    /// node 0 (a need that failed on other nodes does not fail here) and its next to node 1
    /// (first-fit's search starts after a placement only among the same nodes); every choice
    /// keeps to the nodes, random's over 200 seeds.
    #[test]
    fn confined_tasks_are_placed_only_on_their_nodes() {
        fn pass<C: NodeChoice>(seed: u64) -> (Cell, Vec<TaskIdx>) {
            let mut cell = Cell::with_machines(4, 100, 100);
            let mut tasks = Vec::new();
            for (job, cpu) in [(1, 60), (1, 60), (1, 60), (2, 60), (2, 60)] {
                let t = cell.tasks.alloc(job, cell.tasks.len() as u32, 0, 0);
                cell.set_request(t, cpu, 10);
                tasks.push(t);
            }
            let generation = |t: TaskIdx| cell.tasks.generation()[t.index()];
            let waiting: Vec<(TaskIdx, u32)> = tasks.iter().map(|&t| (t, generation(t))).collect();
            let memories = (
                &mut RoomIndex::default(),
                &mut Staircase::default(),
                (&mut Unplaced::default(), &mut NeedClasses::default()),
                &mut MatchMemo::default(),
            );
            let (room, stairs, unplaced, memo) = memories;
            let mut rng = Rng::new(seed, 0);
            place_waiting(
                &C::default(),
                (&mut cell, (room, stairs), unplaced, memo),
                &waiting,
                (&mut rng, &mut Confined),
                (0, false),
            );
            (cell, tasks)
        }
        let node = |c: &Cell, t: TaskIdx| match c.tasks.state()[t.index()] {
            TaskState::Running => Some(c.tasks.node()[t.index()].0),
            _ => None,
        };
        let (cell, tasks) = pass::<FirstFit>(1);
        let got: Vec<Option<u32>> = tasks.iter().map(|&t| node(&cell, t)).collect();
        assert_eq!(got, [Some(2), Some(3), None, Some(0), Some(1)]);
        for seed in 0..200 {
            for (cell, tasks) in [pass::<Random>(seed), pass::<BestFit>(seed)] {
                let got: Vec<Option<u32>> = tasks.iter().map(|&t| node(&cell, t)).collect();
                let job_1: Vec<u32> = got[..3].iter().flatten().copied().collect();
                let job_2: Vec<u32> = got[3..].iter().flatten().copied().collect();
                assert_eq!((job_1.len(), job_2.len()), (2, 2), "seed {seed}: {got:?}");
                assert!(job_1.iter().all(|n| (2..4).contains(n)), "{got:?}");
                assert!(job_2.iter().all(|n| (0..2).contains(n)), "{got:?}");
            }
        }
    }

    /// The waiting queue survives a snapshot: saved and restored, it places as before.
    #[test]
    fn the_queue_round_trips_through_a_snapshot_section() {
        let mut cell = cell();
        let tasks: Vec<TaskIdx> = [90, 90, 90].map(|c| task(&mut cell, c)).to_vec();
        let mut policy = Greedy::<FirstFit>::new(1, QueueOutputs::default());
        let events = TickEvents {
            submitted: tasks.clone(),
            ..TickEvents::default()
        };
        tick(&mut policy, &mut cell, &events, 1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.snap");
        let mut w = crate::snapshot::SnapshotWriter::create(&path, &["policy"]).unwrap();
        policy.save_state(w.section("policy"));
        w.finish(crate::snapshot::Header {
            tick: 1,
            config_hash: 0,
            trace_hash: 0,
            run_id: 0,
        })
        .unwrap();
        let snap = crate::snapshot::Snapshot::open(&path).unwrap();
        let mut restored = Greedy::<FirstFit>::new(1, QueueOutputs::default());
        restored
            .load_state(&mut snap.section("policy").unwrap())
            .unwrap();
        assert_eq!(restored.waiting(&cell), policy.waiting(&cell));
        cell.end(tasks[0]);
        tick(&mut restored, &mut cell, &TickEvents::default(), 2);
        assert_eq!(cell.tasks.node()[tasks[2].index()].0, 0);
        assert_eq!(restored.waiting(&cell).len(), 0);
    }
}
