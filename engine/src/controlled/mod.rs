//! Controller + placer composition (issue 32): a controller decides how much of the cell each
//! job may use (its share), a placer puts tasks on nodes within those shares. Seed 004's
//! controllers (Nash bargaining, and its baselines Equal, Random and EDF) allocate shares "at
//! each job arrival and departure, or when cloud capacity changes"; any greedy placer
//! ([`NodeChoice`]) then places.
//!
//! Each tick, [`Controlled`] rebuilds the job table ([`Jobs`]: one row per job with a pending
//! or running task, by job ID), carries each job's share over from the last allocation, and asks
//! the controller to allocate again when the tick's events report an arrival, a departure or a
//! capacity change ([`TickEvents`]). It then offers the waiting tasks to the placer in the order
//! they became pending, admitting a task only while its job's running CPU plus the task's stays
//! within the job's share. Shares are applied in whole tasks (tasks are indivisible, as
//! Hadoop's map slots; [`whole_tasks`]). A MapReduce job's reduce tasks wait for its maps
//! (`phases.rs`): while they wait they are not part of its demand, only of its work.
//!
//! Invariant: `Jobs` rows are sorted by job ID, each job once; shares are CPU units.

pub mod clusters;
mod edf;
mod equal;
mod facts;
mod random;
mod whole;

use ingest::scenario::side::Deadline;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use clusters::{ClusterChoice, ClusterQuote, ClusterSettings, Clusters, NO_CLUSTER};
pub use edf::Edf;
pub use equal::{Equal, fill};
pub use facts::JobFacts;
pub use random::RandomShare;
pub use whole::whole_tasks;

use crate::cell::{Cell, TaskState};
use crate::greedy::{Admission, Greedy, NodeChoice};
use crate::ids::{TaskIdx, Tick};
use crate::phases::Gate;
use crate::policy::{CounterKind, Envelope, Policy, PolicyCounters, TableRows, TableSpec};
use crate::queue_outputs::QueueOutputs;
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};

/// The jobs with a pending or running task, one row each, by job ID (a struct of columns).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Jobs {
    /// Trace job ID (sorted, distinct).
    pub job_id: Vec<u64>,
    /// CPU requested by its running tasks, units.
    pub running_cpu: Vec<u64>,
    /// CPU requested by its pending tasks that may start, units.
    pub pending_cpu: Vec<u64>,
    /// Its share: the CPU its running tasks may request, units (set by the controller, then
    /// rounded to whole tasks, [`whole_tasks`]).
    pub share_cpu: Vec<u64>,
    /// CPU of its largest pending or running task, units (a share's whole-task unit).
    pub task_cpu: Vec<u64>,
    /// Its deadline, trace microseconds (scenario side tables; none without them), set by
    /// [`JobFacts::fill`] before the controller allocates.
    pub deadline: Vec<Deadline>,
    /// Its priority (the side tables' job weight; 1 without them).
    pub priority: Vec<f64>,
    /// The work it has left that may run now: CPU units x seconds over its pending tasks' run
    /// times and its running tasks' remaining times (recorded run times; 0 where unknown), not
    /// its reduce tasks that wait for its maps.
    pub work_cpu_s: Vec<f64>,
    /// The reduce phase it has still to come after that work: the longest recorded run of its
    /// reduce tasks that wait for its maps, seconds (0: none wait). Each reduce task takes a
    /// slot of its own, so the phase lasts its longest task.
    pub reduce_s: Vec<f64>,
    /// Its micro-cluster ([`clusters::NO_CLUSTER`] until one is chosen), carried over by job
    /// ID; unused with one cluster.
    pub cluster: Vec<u32>,
    /// The micro-clusters the cell is split into (0 or 1: none, the whole cell).
    pub clusters: u32,
}

impl Jobs {
    /// Rows in the table.
    pub fn len(&self) -> usize {
        self.job_id.len()
    }

    /// Each job's demand: the CPU its running and pending tasks request, units (not its
    /// reduce tasks that wait for its maps).
    pub fn demand(&self) -> Vec<u64> {
        (0..self.len())
            .map(|r| self.running_cpu[r] + self.pending_cpu[r])
            .collect()
    }

    /// True when no job is active.
    pub fn is_empty(&self) -> bool {
        self.job_id.is_empty()
    }

    /// The row of job `job_id`.
    pub fn row(&self, job_id: u64) -> Option<usize> {
        self.job_id.binary_search(&job_id).ok()
    }

    /// The table of `rows` only (ascending, so still by job ID).
    pub fn select(&self, rows: &[usize]) -> Jobs {
        fn pick<T: Clone>(column: &[T], rows: &[usize]) -> Vec<T> {
            rows.iter().map(|&r| column[r].clone()).collect()
        }
        Jobs {
            job_id: pick(&self.job_id, rows),
            running_cpu: pick(&self.running_cpu, rows),
            pending_cpu: pick(&self.pending_cpu, rows),
            share_cpu: pick(&self.share_cpu, rows),
            task_cpu: pick(&self.task_cpu, rows),
            deadline: pick(&self.deadline, rows),
            priority: pick(&self.priority, rows),
            work_cpu_s: pick(&self.work_cpu_s, rows),
            reduce_s: pick(&self.reduce_s, rows),
            cluster: pick(&self.cluster, rows),
            clusters: self.clusters,
        }
    }

    /// The active jobs of `cell`, with the shares of `previous` carried over by job ID (0 for
    /// a job it lacks); `gate` holds the reduce tasks that wait for their maps. `active` is
    /// scratch (its contents replaced).
    pub fn of_cell(
        cell: &Cell,
        (previous, gate): (&Jobs, &Gate),
        active: &mut Vec<ActiveTask>,
    ) -> Jobs {
        let tasks = &cell.tasks;
        // A reduce task the gate holds is not demand yet; its job has a map task active, so
        // the job has its row all the same.
        active.clear();
        crate::parallel_time::region(|| {
            active.par_extend((0..tasks.len()).into_par_iter().filter_map(|i| {
                let (job, running) = match tasks.state()[i] {
                    TaskState::Running => (tasks.job_id()[i], true),
                    TaskState::Pending => (tasks.job_id()[i], false),
                    TaskState::Free => return None,
                };
                let held = !running && gate.holds(job, tasks.task_index()[i]);
                (!held).then_some((job, tasks.cpu_req()[i] as u64, running))
            }));
        });
        // Unstable: a job's tasks in any order give the same sums and maxima below.
        crate::parallel_time::region(|| {
            active.par_sort_unstable_by_key(|a| a.0);
        });
        let mut jobs = Jobs {
            clusters: previous.clusters,
            ..Jobs::default()
        };
        for &(job, cpu, running) in active.iter() {
            if jobs.job_id.last() != Some(&job) {
                let before = previous.row(job);
                jobs.cluster
                    .push(before.map_or(clusters::NO_CLUSTER, |r| previous.cluster[r]));
                jobs.job_id.push(job);
                jobs.running_cpu.push(0);
                jobs.pending_cpu.push(0);
                jobs.task_cpu.push(0);
                jobs.share_cpu
                    .push(before.map_or(0, |r| previous.share_cpu[r]));
                jobs.deadline.push(Deadline::None);
                jobs.priority.push(1.0);
                jobs.work_cpu_s.push(0.0);
                jobs.reduce_s.push(0.0);
            }
            let last = jobs.len() - 1;
            jobs.task_cpu[last] = jobs.task_cpu[last].max(cpu);
            let sum = if running {
                &mut jobs.running_cpu[last]
            } else {
                &mut jobs.pending_cpu[last]
            };
            *sum += cpu;
        }
        jobs
    }
}

/// An active task as [`Jobs::of_cell`] reads it: job ID, CPU request, running.
pub type ActiveTask = (u64, u64, bool);

/// The placer admits a task while its job's running CPU with the task's stays within the
/// job's share.
impl Admission for Jobs {
    fn admits(&self, cell: &Cell, t: TaskIdx) -> bool {
        let (job, cpu) = (
            cell.tasks.job_id()[t.index()],
            cell.tasks.cpu_req()[t.index()],
        );
        self.row(job)
            .is_some_and(|r| self.running_cpu[r] + cpu as u64 <= self.share_cpu[r])
    }

    fn nodes(&self, cell: &Cell, t: TaskIdx) -> std::ops::Range<usize> {
        let all = 0..cell.nodes.len();
        if self.clusters <= 1 {
            return all;
        }
        match self.row(cell.tasks.job_id()[t.index()]) {
            Some(r) if self.cluster[r] != clusters::NO_CLUSTER => {
                clusters::node_range(self.cluster[r], self.clusters, cell.nodes.len())
            }
            _ => all,
        }
    }

    fn placed(&mut self, cell: &Cell, t: TaskIdx) {
        let (job, cpu) = (
            cell.tasks.job_id()[t.index()],
            cell.tasks.cpu_req()[t.index()],
        );
        if let Some(r) = self.row(job) {
            self.running_cpu[r] += cpu as u64;
            self.pending_cpu[r] = self.pending_cpu[r].saturating_sub(cpu as u64);
        }
    }
}

/// A share-allocating controller.
pub trait Controller: Clone + Send + Sync {
    /// Its name (the policy's, with the placer's).
    const NAME: &'static str;

    /// Whether it reads the jobs' deadlines, priorities and work ([`JobFacts::fill`]).
    const NEEDS_FACTS: bool = false;

    /// Whether its allocation at `now_us` reads the jobs' work left (with
    /// [`Controller::NEEDS_FACTS`]; the costly part of the facts).
    fn needs_work(&self, _now_us: i64) -> bool {
        Self::NEEDS_FACTS
    }

    /// Sets every job's `share_cpu` for a cell of `capacity_cpu` online CPU units at `now_us`.
    fn allocate(&mut self, jobs: &mut Jobs, capacity_cpu: u64, now_us: i64);

    /// The counters it reports (`counters/` columns, summed in the summary).
    const COUNTERS: &'static [CounterKind] = &[];

    /// Adds its counts since the last call to `counters` (by index into [`Controller::COUNTERS`])
    /// and returns its solver's wall time since then, ms.
    fn take_stats(&mut self, _counters: &mut PolicyCounters) -> f64 {
        0.0
    }

    /// The congestion price of a cluster of `capacity_cpu` online CPU units holding `jobs` at
    /// `now_us` (seed 004's step 2, asked for each new job by micro-clusters, `clusters.rs`),
    /// without allocating; None for a controller without prices, or when its solve failed.
    fn quote(&mut self, _jobs: &Jobs, _capacity_cpu: u64, _now_us: i64) -> Option<f64> {
        None
    }

    /// The congestion price of its allocations' solves since the last call (the latest), if
    /// any gave one.
    fn take_price(&mut self) -> Option<f64> {
        None
    }

    /// Writes the controller's own state for a snapshot (a stateless one keeps the default).
    fn save_state(&self, _w: &mut SectionWriter) {}

    /// Restores what [`Controller::save_state`] wrote.
    fn load_state(&mut self, _r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        Ok(())
    }
}

/// A controller `Ctl` driving the greedy placer `C` (module doc).
#[derive(Debug, Clone, Default)]
pub struct Controlled<Ctl, C> {
    controller: Ctl,
    placer: Greedy<C>,
    facts: JobFacts,
    jobs: Jobs,
    /// The controller allocated at least once.
    allocated: bool,
    /// Its solver's wall time this tick, ms.
    solver_ms: f64,
    /// The cell's micro-clusters, each with its own copy of `controller` (`clusters.rs`);
    /// none: the whole cell is one.
    clusters: Option<Clusters<Ctl>>,
    /// [`Jobs::of_cell`]'s list of active tasks, kept between ticks (a new one each tick
    /// was ~4 MB of fresh pages on a GCD cell).
    active: Vec<ActiveTask>,
}

impl<Ctl: Controller, C: NodeChoice> Controlled<Ctl, C> {
    /// `controller` with the run's seed (the placer's draws), told `facts` about the jobs, the
    /// placer writing `outputs`.
    pub fn new(
        controller: Ctl,
        facts: JobFacts,
        seed: u64,
        outputs: QueueOutputs,
    ) -> Controlled<Ctl, C> {
        Controlled {
            controller,
            placer: Greedy::new(seed, outputs),
            facts,
            jobs: Jobs::default(),
            allocated: false,
            solver_ms: 0.0,
            clusters: None,
            active: Vec::new(),
        }
    }

    /// The controller on micro-clusters (`clusters.rs`) under the run's `seed`; one cluster is
    /// the whole cell, as without.
    pub fn with_clusters(mut self, settings: ClusterSettings, seed: u64) -> Self {
        if settings.0 > 1 {
            self.clusters = Some(Clusters::new(&self.controller, settings, seed));
            self.jobs.clusters = settings.0;
        }
        self
    }

    /// The controller with `phases` instead of its job terms' (tests).
    #[cfg(test)]
    fn with_phases(mut self, phases: crate::phases::Phases) -> Self {
        self.placer = self.placer.with_phases(phases);
        self
    }

    /// The job table as of the last tick (with the shares the placer kept to).
    pub fn jobs(&self) -> &Jobs {
        &self.jobs
    }
}

/// A controlled policy's tables on micro-clusters: the placer's, then `clusters/`.
const CLUSTERED_TABLES: [TableSpec; 3] = [
    crate::queue_outputs::TABLES[0],
    crate::queue_outputs::TABLES[1],
    clusters::TABLE,
];

/// Online CPU capacity of the cell's nodes in `range` (`0..nodes`: the whole cell's), units.
fn capacity_cpu(cell: &Cell, range: std::ops::Range<usize>) -> u64 {
    let nodes = &cell.nodes;
    range
        .filter(|&n| nodes.online()[n])
        .map(|n| nodes.cpu_cap()[n] as u64)
        .sum()
}

impl<Ctl: Controller, C: NodeChoice> Policy for Controlled<Ctl, C> {
    type Msg = ();
    type Agent = ();
    type Action = ();

    fn name(&self) -> &'static str {
        Ctl::NAME
    }

    fn begin_tick(
        &mut self,
        cell: &mut Cell,
        at: (Tick, i64),
        events: &TickEvents,
        _agents: &mut Vec<()>,
        _inject: &mut Vec<Envelope<()>>,
        counters: &mut PolicyCounters,
    ) {
        let gate = self.placer.gate(cell);
        let previous = Jobs::of_cell(cell, (&self.jobs, &gate), &mut self.active);
        let previous = std::mem::replace(&mut self.jobs, previous);
        let changed = !events.submitted.is_empty()
            || !events.ended.is_empty()
            || !events.machine_changes.is_empty()
            || !events.displaced_tasks.is_empty();
        if changed || !self.allocated {
            if Ctl::NEEDS_FACTS {
                let work = match &self.clusters {
                    Some(c) => c.needs_work(at.1),
                    None => self.controller.needs_work(at.1),
                };
                self.facts.fill(cell, (&mut self.jobs, &gate), at.1, work);
            }
            match &mut self.clusters {
                Some(clusters) => {
                    let jobs = (&mut self.jobs, &previous);
                    clusters.allocate((cell, events), jobs, at.1, !self.allocated);
                }
                None => {
                    let capacity = capacity_cpu(cell, 0..cell.nodes.len());
                    self.controller.allocate(&mut self.jobs, capacity, at.1);
                    whole_tasks(&mut self.jobs, capacity);
                }
            }
            self.allocated = true;
        }
        self.placer
            .place_admitted(cell, (at.1, &gate), events, &mut self.jobs);
        self.solver_ms += match &mut self.clusters {
            Some(c) => c.take_stats(counters),
            None => self.controller.take_stats(counters),
        };
    }

    fn startable(&self, cell: &Cell, waiting: &mut Vec<TaskIdx>) {
        self.placer.startable(cell, waiting);
    }

    fn counter_kinds(&self) -> &'static [CounterKind] {
        Ctl::COUNTERS
    }

    fn take_solver_ms(&mut self) -> f64 {
        std::mem::take(&mut self.solver_ms)
    }

    fn tables(&self) -> &'static [TableSpec] {
        match self.clusters {
            Some(_) => &CLUSTERED_TABLES,
            None => self.placer.tables(),
        }
    }

    fn take_rows(&mut self, out: &mut TableRows) {
        self.placer.take_rows(out);
        if let Some(c) = &mut self.clusters {
            c.take_rows(CLUSTERED_TABLES.len() - 1, out);
        }
    }

    fn save_state(&self, w: &mut SectionWriter) {
        self.placer.save_state(w);
        let shares: Vec<(u64, u64)> = (self.jobs.job_id.iter().copied())
            .zip(self.jobs.share_cpu.iter().copied())
            .collect();
        w.serde(&(self.allocated, shares));
        self.controller.save_state(w);
        if let Some(c) = &self.clusters {
            c.save_state(&self.jobs, w);
        }
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        self.placer.load_state(r)?;
        let (allocated, shares): (bool, Vec<(u64, u64)>) = r.serde()?;
        self.allocated = allocated;
        let n = shares.len();
        self.jobs = Jobs {
            job_id: shares.iter().map(|s| s.0).collect(),
            share_cpu: shares.iter().map(|s| s.1).collect(),
            running_cpu: vec![0; n],
            pending_cpu: vec![0; n],
            task_cpu: vec![0; n],
            deadline: vec![Deadline::None; n],
            priority: vec![1.0; n],
            work_cpu_s: vec![0.0; n],
            reduce_s: vec![0.0; n],
            cluster: vec![NO_CLUSTER; n],
            clusters: self.jobs.clusters,
        };
        self.controller.load_state(r)?;
        match &mut self.clusters {
            Some(c) => c.load_state(&mut self.jobs, r),
            None => Ok(()),
        }
    }
}

/// `equal-share` has no settings of its own.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EqualShareConfig {}

impl crate::policy::PolicySpec for EqualShareConfig {
    type Policy = Controlled<Equal, crate::greedy::FirstFit>;

    const HONOURS_PHASES: bool = true;

    const ABOUT: &'static str = "controller + placer (seed 004's Equal baseline): every active job gets the same share of the cell's CPU, re-allocated at each arrival, departure or capacity change; first-fit places within the shares";

    fn build(
        &self,
        run: &crate::policy::RunSettings,
        trace_dir: &std::path::Path,
    ) -> crate::Result<Self::Policy> {
        Controlled::of_trace(Equal, run, trace_dir)
    }
}

impl<Ctl: Controller, C: NodeChoice> Controlled<Ctl, C> {
    /// `controller` for `run` on the trace in `trace_dir` (its jobs' terms and, for a
    /// controller that needs them, its run times).
    pub fn of_trace(
        controller: Ctl,
        run: &crate::policy::RunSettings,
        trace_dir: &std::path::Path,
    ) -> crate::Result<Self> {
        // The trace's run times are read once, for the facts and the deadline model alike.
        let run_times = if Ctl::NEEDS_FACTS {
            Some(crate::run_times::RunTimes::of_trace(trace_dir)?)
        } else {
            None
        };
        let terms =
            crate::deadlines::JobTerms::of_trace(&run.deadlines, trace_dir, run_times.as_ref())?;
        let facts = match run_times {
            Some(r) => JobFacts::new(terms.clone(), r),
            None => JobFacts::default(),
        };
        Ok(Controlled::new(
            controller,
            facts,
            run.seed,
            QueueOutputs::new(terms),
        ))
    }
}

/// `random-share` has no settings of its own.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomShareConfig {}

impl crate::policy::PolicySpec for RandomShareConfig {
    type Policy = Controlled<RandomShare, crate::greedy::FirstFit>;

    const HONOURS_PHASES: bool = true;

    const ABOUT: &'static str = "controller + placer (seed 004's Random baseline): each active job a random share of the cell's CPU (random weights, water-filled up to each job's demand), re-drawn at each arrival, departure or capacity change; first-fit places within the shares";

    fn build(
        &self,
        run: &crate::policy::RunSettings,
        trace_dir: &std::path::Path,
    ) -> crate::Result<Self::Policy> {
        Controlled::of_trace(RandomShare::new(run.seed), run, trace_dir)
    }
}

/// The settings of `edf`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EdfConfig {
    /// Process the jobs one at a time: the earliest-deadline job holds the whole cell, the
    /// others wait even where it leaves slots free (`edf.rs`). Off by default: seed 004 does not
    /// say its EDF left slots idle; `bench-results/nbs-edf-2026-11-30.md` measures both.
    pub one_job: bool,
}

impl crate::policy::PolicySpec for EdfConfig {
    type Policy = Controlled<Edf, crate::greedy::FirstFit>;

    const HONOURS_PHASES: bool = true;

    const ABOUT: &'static str = "controller + placer (seed 004's EDF baseline): jobs served in increasing order of deadline (scenario side tables; no deadline last), each up to its demand (one_job: the first holds the whole cell); first-fit places within the shares";

    fn build(
        &self,
        run: &crate::policy::RunSettings,
        trace_dir: &std::path::Path,
    ) -> crate::Result<Self::Policy> {
        Controlled::of_trace(
            Edf {
                one_job: self.one_job,
            },
            run,
            trace_dir,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::greedy::FirstFit;
    use crate::replay::EndedTask;

    /// By hand: a node of 200 CPU (four slots of 50); job 1 has maps 0-1 and a reduce 2, job
    /// 2 one map. Equal shares up to demand: job 1's demand is its two maps (100; its waiting
    /// reduce is not demand), job 2's 50, so both maps of job 1 and job 2's map run and the reduce
    /// waits though a slot is free. Once job 1's maps end, its reduce is its demand and runs.
    #[test]
    fn reduce_tasks_wait_for_their_maps() {
        let mut cell = Cell::with_machines(1, 200, 200);
        let task = |cell: &mut Cell, job: u64, i: u32| {
            let t = cell.tasks.alloc(job, i, 0, 0);
            cell.set_request(t, 50, 1);
            t
        };
        let maps: Vec<TaskIdx> = (0..2).map(|i| task(&mut cell, 1, i)).collect();
        let reduce = task(&mut cell, 1, 2);
        let other = task(&mut cell, 2, 0);
        let phases = crate::phases::Phases::new(vec![(1, 2)]);
        let mut policy = Controlled::<Equal, FirstFit>::new(
            Equal,
            JobFacts::default(),
            1,
            QueueOutputs::default(),
        )
        .with_phases(phases);
        let mut tick = |cell: &mut Cell, events: TickEvents, now_us: i64| {
            let (mut agents, mut inject) = (Vec::new(), Vec::new());
            let counters = &mut PolicyCounters::default();
            policy.begin_tick(
                cell,
                (Tick(0), now_us),
                &events,
                &mut agents,
                &mut inject,
                counters,
            );
            cell.check().unwrap();
            policy.jobs().clone()
        };
        let state = |cell: &Cell, t: TaskIdx| cell.tasks.state()[t.index()];
        let submitted = TickEvents {
            submitted: vec![maps[0], maps[1], reduce, other],
            ..TickEvents::default()
        };
        let jobs = tick(&mut cell, submitted, 0);
        assert_eq!(jobs.demand(), [100, 50]);
        assert_eq!(jobs.share_cpu, [100, 50]);
        assert!(maps.iter().all(|&m| state(&cell, m) == TaskState::Running));
        assert_eq!(state(&cell, other), TaskState::Running);
        assert_eq!(state(&cell, reduce), TaskState::Pending);
        let ended: Vec<EndedTask> = maps.iter().map(|&t| EndedTask::of(&cell, t, 10)).collect();
        maps.iter().for_each(|&t| cell.end(t));
        let jobs = tick(
            &mut cell,
            TickEvents {
                ended,
                ..TickEvents::default()
            },
            10_000_000,
        );
        assert_eq!(jobs.demand(), [50, 50]);
        assert_eq!(state(&cell, reduce), TaskState::Running);
    }

    /// By hand: two nodes of 100 CPU; job 1 submits five tasks of 50, job 2 two of 50. Equal
    /// shares of 200: 100 each, so job 1 runs two tasks (node 0) and job 2 both (node 1). Job
    /// 2's tasks end: job 1's share becomes 200 and two more of its tasks start on node 1; the
    /// fifth waits (it would exceed the share, and no node has room).
    #[test]
    fn the_placer_keeps_to_the_controllers_shares() {
        let mut cell = Cell::with_machines(2, 100, 100);
        let task = |cell: &mut Cell, job: u64, i: u32| {
            let t = cell.tasks.alloc(job, i, 0, 0);
            cell.set_request(t, 50, 1);
            t
        };
        let a: Vec<TaskIdx> = (0..5).map(|i| task(&mut cell, 1, i)).collect();
        let b: Vec<TaskIdx> = (0..2).map(|i| task(&mut cell, 2, i)).collect();
        let mut policy = Controlled::<Equal, FirstFit>::new(
            Equal,
            JobFacts::default(),
            1,
            QueueOutputs::default(),
        );
        let mut tick = |cell: &mut Cell, events: TickEvents, now_us: i64| {
            let (mut agents, mut inject) = (Vec::new(), Vec::new());
            let counters = &mut PolicyCounters::default();
            let at = (Tick(0), now_us);
            policy.begin_tick(cell, at, &events, &mut agents, &mut inject, counters);
            cell.check().unwrap();
            policy.jobs().clone()
        };
        let running = |cell: &Cell, ts: &[TaskIdx]| {
            ts.iter()
                .map(|t| {
                    (cell.tasks.state()[t.index()] == TaskState::Running)
                        .then(|| cell.tasks.node()[t.index()].0)
                })
                .collect::<Vec<_>>()
        };
        let submitted = TickEvents {
            submitted: [&a[..], &b[..]].concat(),
            ..TickEvents::default()
        };
        let jobs = tick(&mut cell, submitted, 0);
        assert_eq!(jobs.share_cpu, [100, 100]);
        assert_eq!(running(&cell, &a), [Some(0), Some(0), None, None, None]);
        assert_eq!(running(&cell, &b), [Some(1), Some(1)]);
        let ended: Vec<EndedTask> = b.iter().map(|&t| EndedTask::of(&cell, t, 60)).collect();
        b.iter().for_each(|&t| cell.end(t));
        let departures = TickEvents {
            ended,
            ..TickEvents::default()
        };
        let jobs = tick(&mut cell, departures, 60);
        assert_eq!(
            (jobs.job_id.clone(), jobs.share_cpu.clone()),
            (vec![1], vec![200])
        );
        assert_eq!(
            running(&cell, &a),
            [Some(0), Some(0), Some(1), Some(1), None]
        );
    }
}
