//! Controller `nbs`: at each arrival, departure or capacity change (`controlled/`), the jobs'
//! shares for now are the first slot of seed 004's optimisation over the next `horizon_slots`
//! slots of `slot_s` (`problem.rs`): each job's requirement is its work left (CPU x seconds,
//! from the recorded run times), its priority and deadline come from the scenario's side
//! tables (a MapReduce job whose reduce tasks wait for its maps bargains for its map work by
//! its deadline less its reduce phase, `Jobs::reduce_s`), the capacity is the cell's online CPU
//! in every slot. A share is at most the job's demand (what its tasks request: no more can
//! run); the bargain itself caps a job's rate by its demand and its total by its requirement
//! only as options (`rate_cap`, `requirement_cap`: not in eqs. 3-6). A hard deadline already passed, or that cannot be met,
//! bargains as soft (`problem.rs`); a solve that fails falls back to shares by priority
//! (water-filled), counted. With more than `classes_above_jobs` active jobs (a GCD cell), jobs
//! bargain per class (`classes.rs`: same deadline type, deadline slot and priority), which keeps
//! a solve to tens of milliseconds; the counters say how many bargained.
//!
//! Counters (`counters/`): `nbs_solves`, `nbs_failed_solves`, `nbs_bargainers` (jobs or classes in
//! the solves), `nbs_solver_iterations`, `nbs_hard_relaxed` (hard-deadline bargainers that
//! bargained as soft: infeasible, or all of them when the solver stalled with them); the
//! solver's wall time is `timing/`'s `solver_ms`.

use serde::{Deserialize, Serialize};

use super::classes::{Classes, group};
use super::problem::{Allocation, Job, Problem, Solver, solve_by};
use super::utility::Deadline;
use crate::controlled::clusters::{ClusterChoice, ClusterQuote, MAX_CLUSTERS};
use crate::controlled::{Controlled, Controller, Jobs, fill};
use crate::greedy::FirstFit;
use crate::policy::{CounterKind, PolicyCounters};
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};
use ingest::scenario::side::Deadline as SideDeadline;

/// The settings of controller `nbs`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NbsConfig {
    /// Slot length of the optimisation, seconds (the seed's "time slot"; chosen: 10 s).
    pub slot_s: f64,
    /// Slots in the horizon t_ref (chosen: 30, so 5 minutes at 10 s).
    pub horizon_slots: u32,
    /// Soft deadlines' decay per second, mu (chosen: 0.1).
    pub mu: f64,
    /// Weight of an earliness tie-break among (nearly) equal bargains (`Problem::earliness`):
    /// not in seed 004, so off (0, the seed's objective alone) by default. It decides seed 004's
    /// Figs. 4 and 6: with slack before every deadline the seed's objective is indifferent to
    /// who goes first, and only the tie-break serves high priorities first (1e-3 does;
    /// `problem.rs`'s worked case, `bench-results/nbs-earliness-2026-11-28.md`).
    pub earliness: f64,
    /// Cap each job's rate in the bargain by its demand (x_i(t) <= what its tasks request). Not
    /// in seed 004's eqs. 3-6, so off by default: as written, the bargain may give a job more
    /// than its tasks can use, and the share it gets is then its demand, the rest left idle
    /// until the next solve (`bench-results/nbs-caps-2026-11-28.md` measures both).
    pub rate_cap: bool,
    /// Cap each job's total in the bargain by its requirement (sum_t x_i(t) slot_s <= D_i). Not
    /// in eqs. 3-6, so off by default: as written, jobs without a hard deadline bargain for
    /// shares of the horizon by priority and deadline alone, whatever they need.
    pub requirement_cap: bool,
    /// The least time between two solves, seconds (chosen: 0, a solve at every arrival,
    /// departure or capacity change, the seed's rule). Within it, a job without a share gets one
    /// from the capacity the last bargain left, water-filled by priority; `scripts/nbs-gcd.sh`
    /// sets 300 on the GCD cell.
    pub min_resolve_s: f64,
    /// Above this many active jobs, jobs bargain per class (`classes.rs`; chosen: 64, so the
    /// seed's Hadoop experiments bargain per job, a GCD cell per class).
    pub classes_above_jobs: u32,
    /// The solver: "clarabel" (the general conic solver, the default) or "structured" (the
    /// interior point of `interior.rs` that uses the bargain's structure, O(jobs x slots^2) per
    /// iteration; Clarabel solves where it stalls, counted in `nbs_fallback_solves`).
    pub solver: Solver,
    /// Micro-clusters the cell is split into, each bargaining on its own (seed 004 section II;
    /// `controlled/clusters.rs`): 1, the default, is the whole cell as one cluster.
    pub clusters: u32,
    /// How a new job's cluster is chosen with more than one: "price" (the lowest congestion
    /// price quoted with the job, the seed's steps; the default) or "random" (price-blind).
    pub cluster_choice: ClusterChoice,
    /// What a cluster quotes by price: "with-job" (its price solved with the job, the seed's
    /// step 1: a solve per cluster per new job; the default) or "published" (its price from
    /// its latest solve, the chosen cluster re-solving with the job: one solve per new job).
    pub cluster_quote: ClusterQuote,
}

impl Default for NbsConfig {
    fn default() -> Self {
        NbsConfig {
            slot_s: 10.0,
            horizon_slots: 30,
            mu: 0.1,
            earliness: 0.0,
            rate_cap: false,
            requirement_cap: false,
            classes_above_jobs: 64,
            min_resolve_s: 0.0,
            solver: Solver::Clarabel,
            clusters: 1,
            cluster_choice: ClusterChoice::Price,
            cluster_quote: ClusterQuote::WithJob,
        }
    }
}

impl crate::policy::PolicySpec for NbsConfig {
    type Policy = Controlled<Nbs, FirstFit>;

    const HONOURS_PHASES: bool = true;

    const ABOUT: &'static str = "controller + placer (seed 004): shares maximising the Nash bargaining product of the jobs' deadline-aware utilities over a horizon (Clarabel, or `solver = \"structured\"`), re-solved at each arrival, departure or capacity change; first-fit places within the shares; `clusters` splits the cell into micro-clusters a new job chooses by congestion price";

    fn validate(&self, _run: &crate::policy::RunSettings) -> Result<(), String> {
        if !(self.slot_s.is_finite() && self.slot_s > 0.0) {
            return Err(format!("slot_s must be positive, got {}", self.slot_s));
        }
        if !(1..=1_000).contains(&self.horizon_slots) {
            return Err(format!(
                "horizon_slots must be 1..=1,000, got {}",
                self.horizon_slots
            ));
        }
        if !(self.mu.is_finite() && self.mu >= 0.0) {
            return Err(format!("mu must be finite and >= 0, got {}", self.mu));
        }
        if !(self.min_resolve_s.is_finite() && self.min_resolve_s >= 0.0) {
            return Err(format!(
                "min_resolve_s must be finite and >= 0, got {}",
                self.min_resolve_s
            ));
        }
        if self.classes_above_jobs == 0 {
            return Err("classes_above_jobs must be at least 1".into());
        }
        if !(self.earliness.is_finite() && (0.0..=1.0).contains(&self.earliness)) {
            return Err(format!("earliness must be 0..=1, got {}", self.earliness));
        }
        if !(1..=MAX_CLUSTERS).contains(&self.clusters) {
            return Err(format!(
                "clusters must be 1..={MAX_CLUSTERS}, got {}",
                self.clusters
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        run: &crate::policy::RunSettings,
        trace_dir: &std::path::Path,
    ) -> crate::Result<Self::Policy> {
        let policy = Controlled::of_trace(Nbs::new(*self), run, trace_dir)?;
        let clusters = (self.clusters, self.cluster_choice, self.cluster_quote);
        Ok(policy.with_clusters(clusters, run.seed))
    }
}

/// Counters, by index: [`SOLVES`], [`FAILED`], [`BARGAINERS`], [`ITERATIONS`],
/// [`HARD_RELAXED`] (hard-deadline bargainers that bargained as soft: `problem.rs`),
/// [`FALLBACKS`] (solves the structured solver left to Clarabel).
const COUNTERS: [CounterKind; 6] = [
    CounterKind::count("nbs_solves"),
    CounterKind::count("nbs_failed_solves"),
    CounterKind::count("nbs_bargainers"),
    CounterKind::count("nbs_solver_iterations"),
    CounterKind::count("nbs_hard_relaxed"),
    CounterKind::count("nbs_fallback_solves"),
];
const SOLVES: usize = 0;
const FAILED: usize = 1;
const BARGAINERS: usize = 2;
const ITERATIONS: usize = 3;
const HARD_RELAXED: usize = 4;
const FALLBACKS: usize = 5;

/// The NBS controller (module doc), with its solve statistics.
#[derive(Debug, Clone, Default)]
pub struct Nbs {
    config: NbsConfig,
    /// Solves and failed solves so far.
    stats: (u64, u64),
    /// Counts since the last [`Controller::take_stats`], by counter index.
    pending: [u64; 6],
    /// Solver wall time since then, seconds.
    pending_solve_s: f64,
    /// When it last solved, trace microseconds.
    last_solve_us: Option<i64>,
    /// The congestion price of its latest solve since [`Controller::take_price`].
    price: Option<f64>,
}

impl Nbs {
    /// The controller with `config`.
    pub fn new(config: NbsConfig) -> Nbs {
        Nbs {
            config,
            ..Nbs::default()
        }
    }

    /// Whether an allocation at `now_us` solves (`min_resolve_s` since the last solve).
    fn solves_at(&self, now_us: i64) -> bool {
        let min_gap_us = (self.config.min_resolve_s * 1e6) as i64;
        self.last_solve_us.is_none_or(|t| now_us - t >= min_gap_us)
    }

    /// (solves, failed solves) so far.
    pub fn stats(&self) -> (u64, u64) {
        self.stats
    }

    /// The bargain for `jobs` at `now_us` with `capacity_cpu`: its problem and, with more
    /// than `classes_above_jobs` jobs, their classes (whose problem is then the one solved).
    fn bargain(&self, jobs: &Jobs, capacity_cpu: u64, now_us: i64) -> (Problem, Option<Classes>) {
        let problem = self.problem(jobs, capacity_cpu, now_us);
        let classes =
            (jobs.len() > self.config.classes_above_jobs as usize).then(|| group(&problem));
        (problem, classes)
    }

    /// The problem for `jobs` at `now_us` with `capacity_cpu`.
    pub fn problem(&self, jobs: &Jobs, capacity_cpu: u64, now_us: i64) -> Problem {
        let c = self.config;
        let demand = jobs.demand();
        let horizon_s = c.slot_s * c.horizon_slots as f64;
        let relative = |t: i64| (t - now_us) as f64 / 1e6;
        Problem {
            slot_s: c.slot_s,
            capacity: vec![capacity_cpu as f64; c.horizon_slots as usize],
            mu: c.mu,
            earliness: c.earliness,
            requirement_cap: c.requirement_cap,
            jobs: (0..jobs.len())
                .map(|r| Job {
                    // A job whose work is unknown (a run the trace does not end) counts as
                    // needing its demand over the whole horizon.
                    requirement: if jobs.work_cpu_s[r] > 0.0 {
                        jobs.work_cpu_s[r]
                    } else {
                        (demand[r] as f64 * horizon_s).max(1.0)
                    },
                    priority: jobs.priority[r].max(1e-9),
                    // A MapReduce job whose reduce tasks wait bargains for its map work by its
                    // deadline less its reduce phase (the seed's problem has no precedence).
                    deadline: match jobs.deadline[r] {
                        SideDeadline::Hard(t) => Deadline::Hard(relative(t) - jobs.reduce_s[r]),
                        SideDeadline::Soft(t) => Deadline::Soft(relative(t) - jobs.reduce_s[r]),
                        SideDeadline::None => Deadline::None,
                    },
                    rate_cap: if c.rate_cap {
                        demand[r] as f64
                    } else {
                        f64::INFINITY
                    },
                })
                .collect(),
        }
    }
}

impl Controller for Nbs {
    const NAME: &'static str = "nbs";
    const NEEDS_FACTS: bool = true;

    fn allocate(&mut self, jobs: &mut Jobs, capacity_cpu: u64, now_us: i64) {
        if jobs.is_empty() {
            self.price = Some(0.0);
            return;
        }
        let demand = jobs.demand();
        if !self.solves_at(now_us) {
            top_up(jobs, &demand, capacity_cpu);
            return;
        }
        self.last_solve_us = Some(now_us);
        let (problem, classes) = self.bargain(jobs, capacity_cpu, now_us);
        let bargaining = classes.as_ref().map_or(&problem, |c| &c.problem);
        self.stats.0 += 1;
        self.pending[SOLVES] += 1;
        self.pending[BARGAINERS] += bargaining.jobs.len() as u64;
        match solve_by(bargaining, self.config.solver) {
            Ok(a) => {
                if a.solved_by != self.config.solver {
                    self.pending[FALLBACKS] += 1;
                }
                self.pending_solve_s += a.solve_s;
                self.pending[ITERATIONS] += a.iterations as u64;
                self.pending[HARD_RELAXED] += a.missed_hard.len() as u64;
                self.price = Some(congestion_price(bargaining, &a));
                let rates: Vec<f64> = match &classes {
                    Some(c) => c.first_slot_rates(&problem, &a),
                    None => (0..jobs.len()).map(|r| a.rate(r, 0)).collect(),
                };
                for ((share, want), rate) in jobs.share_cpu.iter_mut().zip(&demand).zip(rates) {
                    // Rounded to the nearest unit: the solver's rates are within 1e-8 of the
                    // optimum, so a job's whole demand is not lost to 0.999999.
                    *share = (rate.round().max(0.0) as u64).min(*want);
                }
                // A job the bargain leaves out (its soft deadline so long past that no slot
                // gives it value, e^-21 and less) would otherwise get nothing for ever, its
                // tasks waiting with the cell idle (issue 55): the left-out jobs share what the
                // bargain leaves idle, water-filled by priority, as jobs do between solves.
                if !a.left_out.is_empty() {
                    let mut out = vec![false; bargaining.jobs.len()];
                    a.left_out.iter().for_each(|&i| out[i] = true);
                    let left_out = |r: usize| match &classes {
                        Some(c) => out[c.class_of[r]],
                        None => out[r],
                    };
                    share_idle(jobs, &demand, capacity_cpu, left_out);
                }
            }
            Err(_) => {
                self.stats.1 += 1;
                self.pending[FAILED] += 1;
                jobs.share_cpu = fill(&demand, &jobs.priority, capacity_cpu);
            }
        }
    }

    fn needs_work(&self, now_us: i64) -> bool {
        self.solves_at(now_us)
    }

    /// The bargain with `jobs` solved as an allocation would (classes and all), its shares
    /// not kept: its congestion price (`Allocation::congestion_price`). Its solver time counts
    /// in `timing/`'s `solver_ms`, not in the solve counters.
    fn quote(&mut self, jobs: &Jobs, capacity_cpu: u64, now_us: i64) -> Option<f64> {
        let (problem, classes) = self.bargain(jobs, capacity_cpu, now_us);
        let bargaining = classes.as_ref().map_or(&problem, |c| &c.problem);
        let a = solve_by(bargaining, self.config.solver).ok()?;
        self.pending_solve_s += a.solve_s;
        Some(congestion_price(bargaining, &a))
    }

    fn take_price(&mut self) -> Option<f64> {
        self.price.take()
    }

    const COUNTERS: &'static [CounterKind] = &COUNTERS;

    fn take_stats(&mut self, counters: &mut PolicyCounters) -> f64 {
        for (k, n) in std::mem::take(&mut self.pending).into_iter().enumerate() {
            counters.add(k, n as f64);
        }
        std::mem::take(&mut self.pending_solve_s) * 1e3
    }

    fn save_state(&self, w: &mut SectionWriter) {
        w.serde(&(self.stats, self.last_solve_us));
    }

    fn load_state(&mut self, r: &mut SectionReader<'_>) -> Result<(), SnapshotError> {
        (self.stats, self.last_solve_us) = r.serde()?;
        Ok(())
    }
}

/// The congestion price of `a`, `p`'s solution (`Allocation::congestion_price`), with a price
/// within the solvers' tolerance of 0 (below 1e-9 of sum_i P_i over the largest capacity, the
/// price were every job uncapped and without deadlines) taken as 0: a cluster whose capacity
/// does not bind (its jobs capped, or their work done within the horizon) is not congested,
/// and the solver's leftovers there (1e-20 to 1e-17 on GCD clusters) must not order clusters.
fn congestion_price(p: &Problem, a: &Allocation) -> f64 {
    let priorities: f64 = p.jobs.iter().map(|j| j.priority).sum();
    let capacity = p.capacity.iter().copied().fold(0.0, f64::max);
    let price = a.congestion_price();
    if price < 1e-9 * priorities / capacity.max(1e-300) {
        0.0
    } else {
        price
    }
}

/// Between solves: the jobs without a share share what is idle of `capacity_cpu` (what the
/// last bargain left, or what the running tasks leave if more: shares a job cannot fill are not
/// held back), water-filled by priority up to their demand; the others keep theirs.
fn top_up(jobs: &mut Jobs, demand: &[u64], capacity_cpu: u64) {
    share_idle(jobs, demand, capacity_cpu, |_| true);
}

/// The jobs without a share that `sharing` picks share what is idle of `capacity_cpu` (as
/// [`top_up`]).
fn share_idle(jobs: &mut Jobs, demand: &[u64], capacity_cpu: u64, sharing: impl Fn(usize) -> bool) {
    let shared: u64 = jobs.share_cpu.iter().sum();
    let running: u64 = jobs.running_cpu.iter().sum();
    let held = shared.min(running);
    let new: Vec<usize> = (0..jobs.len())
        .filter(|&r| jobs.share_cpu[r] == 0 && sharing(r))
        .collect();
    let shares = fill(
        &new.iter().map(|&r| demand[r]).collect::<Vec<u64>>(),
        &new.iter().map(|&r| jobs.priority[r]).collect::<Vec<f64>>(),
        capacity_cpu.saturating_sub(held),
    );
    for (r, share) in new.into_iter().zip(shares) {
        jobs.share_cpu[r] = share;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Cell;
    use crate::controlled::{Clusters, NO_CLUSTER};
    use crate::policy::{TableRows, Value};
    use crate::replay::TickEvents;

    /// Jobs by hand without deadlines: (job ID, priority, demand in CPU units, cluster).
    fn jobs_of(rows: &[(u64, f64, u64, u32)]) -> Jobs {
        let n = rows.len();
        Jobs {
            job_id: rows.iter().map(|r| r.0).collect(),
            priority: rows.iter().map(|r| r.1).collect(),
            pending_cpu: rows.iter().map(|r| r.2).collect(),
            cluster: rows.iter().map(|r| r.3).collect(),
            clusters: 2,
            running_cpu: vec![0; n],
            share_cpu: vec![0; n],
            task_cpu: vec![10; n],
            deadline: vec![SideDeadline::None; n],
            work_cpu_s: vec![1e6; n],
            reduce_s: vec![0.0; n],
        }
    }

    /// Seed 004's steps by hand on two micro-clusters of two nodes of 100 CPU (200 each): job 1
    /// (priority 3) already in cluster 0; new jobs 2 and 3 (priority 1). The price of a cluster
    /// is sum P / C (`problem.rs`): job 2 is quoted 4/200 by cluster 0 and 1/200 by cluster 1,
    /// job 3 then 4/200 and 2/200, so both go to cluster 1; cluster 0 gives job 1 its demand
    /// (100), cluster 1 shares its 200 equally; the table's prices are 3/200 and 2/200, two
    /// quotes each (to 1e-6 by the structured solver, 1e-3 by Clarabel, whose duals stop at its
    /// feasibility tolerance). Price-blind, the clusters are drawn; equal prices are not all
    /// cluster 0's.
    #[test]
    fn new_jobs_go_to_the_cluster_with_the_lowest_price() {
        for (solver, tol) in [(Solver::Structured, 1e-6), (Solver::Clarabel, 1e-3)] {
            lowest_price_with(solver, tol);
        }
    }

    fn lowest_price_with(solver: Solver, tol: f64) {
        let cell = Cell::with_machines(4, 100, 100);
        let events = TickEvents::default();
        let nbs = Nbs::new(NbsConfig {
            solver,
            ..NbsConfig::default()
        });
        let mut clusters = Clusters::new(&nbs, (2, ClusterChoice::Price, ClusterQuote::WithJob), 7);
        let mut jobs = jobs_of(&[
            (1, 3.0, 100, 0),
            (2, 1.0, 100, NO_CLUSTER),
            (3, 1.0, 100, NO_CLUSTER),
        ]);
        clusters.allocate((&cell, &events), (&mut jobs, &Jobs::default()), 0, true);
        assert_eq!(jobs.cluster, [0, 1, 1]);
        assert_eq!(jobs.share_cpu, [100, 100, 100]);
        let mut rows = TableRows::default();
        clusters.take_rows(0, &mut rows);
        let rows = &rows.values[0];
        assert_eq!(rows.len(), 2 * 10);
        for (k, price) in [(0, 3.0 / 200.0), (1, 2.0 / 200.0)] {
            let row = &rows[k * 10..(k + 1) * 10];
            assert_eq!((row[1], row[2]), (Value::U32(k as u32), Value::Bool(true)));
            assert_eq!(
                (row[4], row[5]),
                (Value::U64(200), Value::U32(1 + k as u32))
            );
            let Value::F64(got) = row[8] else {
                panic!("{row:?}")
            };
            assert!((got - price).abs() < tol * price, "{solver:?} {k}: {got}");
            assert_eq!(row[9], Value::U32(2));
        }
        // A later tick: new job 4 is quoted 4/200 by cluster 0 and 3/200 by cluster 1, so it
        // goes to 1, which allocates; cluster 0 only quoted: a row of its state, not allocated.
        let before = jobs.clone();
        let mut jobs = jobs_of(&[
            (1, 3.0, 100, 0),
            (2, 1.0, 100, 1),
            (3, 1.0, 100, 1),
            (4, 1.0, 100, NO_CLUSTER),
        ]);
        jobs.share_cpu[..3].copy_from_slice(&before.share_cpu);
        clusters.allocate((&cell, &events), (&mut jobs, &before), 1, false);
        assert_eq!(jobs.cluster, [0, 1, 1, 1]);
        let mut rows = TableRows::default();
        clusters.take_rows(0, &mut rows);
        let rows = &rows.values[0];
        assert_eq!(rows.len(), 2 * 10);
        let expect = [(0, false, 1, 100), (1, true, 3, 200)];
        for (k, (cluster, allocated, jobs, share)) in expect.into_iter().enumerate() {
            let row = &rows[k * 10..(k + 1) * 10];
            assert_eq!(
                (row[1], row[2]),
                (Value::U32(cluster), Value::Bool(allocated))
            );
            assert_eq!(
                (row[5], row[7]),
                (Value::U32(jobs), Value::U64(share)),
                "{row:?}"
            );
            assert_eq!(row[9], Value::U32(1));
        }
        // Published prices: job 1 alone first (cluster 0 priced 3/200, the empty cluster 1 at
        // 0); then jobs 2 and 3 both go to cluster 1 (0, then 1/200 after it re-solved with
        // job 2, both below 3/200), quoted there only.
        let mut clusters =
            Clusters::new(&nbs, (2, ClusterChoice::Price, ClusterQuote::Published), 7);
        let mut alone = jobs_of(&[(1, 3.0, 100, 0)]);
        clusters.allocate((&cell, &events), (&mut alone, &Jobs::default()), 0, true);
        let mut jobs = jobs_of(&[
            (1, 3.0, 100, 0),
            (2, 1.0, 100, NO_CLUSTER),
            (3, 1.0, 100, NO_CLUSTER),
        ]);
        jobs.share_cpu[0] = alone.share_cpu[0];
        clusters.allocate((&cell, &events), (&mut jobs, &alone), 1, false);
        assert_eq!(jobs.cluster, [0, 1, 1]);
        let mut rows = TableRows::default();
        clusters.take_rows(0, &mut rows);
        // Rows: both clusters at the first allocation, cluster 1 alone at the second.
        let rows = &rows.values[0];
        assert_eq!(rows.len(), 3 * 10, "{rows:?}");
        assert_eq!(
            (rows[21], rows[25], rows[29]),
            (Value::U32(1), Value::U32(2), Value::U32(2))
        );
        // Three clusters on two nodes: cluster 0 has none ([0, 0)); no job is sent there,
        // though its empty bargain would quote 0.
        let two = Cell::with_machines(2, 100, 100);
        for choice in [ClusterChoice::Price, ClusterChoice::Random] {
            for quote in [ClusterQuote::WithJob, ClusterQuote::Published] {
                let mut clusters = Clusters::new(&nbs, (3, choice, quote), 7);
                let rows: Vec<(u64, f64, u64, u32)> =
                    (1..=20).map(|j| (j, 1.0, 10, NO_CLUSTER)).collect();
                let mut jobs = jobs_of(&rows);
                clusters.allocate((&two, &events), (&mut jobs, &Jobs::default()), 0, true);
                assert!(
                    !jobs.cluster.contains(&0),
                    "{choice:?} {quote:?}: {:?}",
                    jobs.cluster
                );
            }
        }
        // Equal prices (empty clusters alike) and price-blind draws: both clusters chosen.
        for choice in [ClusterChoice::Price, ClusterChoice::Random] {
            let mut to = [0u32; 2];
            for job in 1..=100 {
                let mut clusters = Clusters::new(&nbs, (2, choice, ClusterQuote::WithJob), 7);
                let mut jobs = jobs_of(&[(job, 1.0, 100, NO_CLUSTER)]);
                clusters.allocate((&cell, &events), (&mut jobs, &Jobs::default()), 0, true);
                to[jobs.cluster[0] as usize] += 1;
            }
            assert!(to.iter().all(|&n| n >= 30), "{choice:?}: {to:?}");
        }
    }

    /// A cell split into no cluster, or into more than `MAX_CLUSTERS`, is refused by name.
    #[test]
    fn cluster_counts_out_of_range_are_refused() {
        use crate::policy::PolicySpec;
        let run = crate::config::RunConfig::default().settings();
        for clusters in [0, MAX_CLUSTERS + 1] {
            let config = NbsConfig {
                clusters,
                ..NbsConfig::default()
            };
            let e = config.validate(&run).unwrap_err();
            assert!(e.contains("clusters must be 1..=1024"), "{e}");
        }
        let config = NbsConfig {
            clusters: MAX_CLUSTERS,
            ..NbsConfig::default()
        };
        assert_eq!(config.validate(&run), Ok(()));
    }

    /// By hand: 100 CPU units, two jobs of equal work and demand 100 each, priorities 1 and 3,
    /// no deadlines, work beyond the horizon: the first slot is shared 25 / 75 (the KKT
    /// solution of max log y1 + 3 log y2), caps or not. A hard deadline in 10 s for job 1 with
    /// work 800: with the caps it gets the 80 it needs now; as written (eqs. 3-6), its y counts
    /// all it gets before its deadline, worth 1/x1 to the bargain against job 2's 3/2,900 for
    /// the whole horizon, so it takes the whole first slot (100, its demand).
    #[test]
    fn shares_are_the_first_slot_of_the_bargain() {
        for capped in [false, true] {
            let mut jobs = Jobs {
                job_id: vec![1, 2],
                running_cpu: vec![0, 0],
                pending_cpu: vec![100, 100],
                task_cpu: vec![1, 1],
                share_cpu: vec![0, 0],
                deadline: vec![SideDeadline::None, SideDeadline::None],
                priority: vec![1.0, 3.0],
                work_cpu_s: vec![1e6, 1e6],
                reduce_s: vec![0.0, 0.0],
                ..Jobs::default()
            };
            let mut nbs = Nbs::new(NbsConfig {
                rate_cap: capped,
                requirement_cap: capped,
                ..NbsConfig::default()
            });
            nbs.allocate(&mut jobs, 100, 0);
            assert_eq!(jobs.share_cpu, [25, 75], "capped: {capped}");
            jobs.deadline[0] = SideDeadline::Hard(10_000_000);
            jobs.work_cpu_s[0] = 800.0;
            nbs.allocate(&mut jobs, 100, 0);
            assert_eq!(jobs.share_cpu[0], if capped { 80 } else { 100 });
            assert_eq!(nbs.stats().0, 2);
            assert_eq!(nbs.stats().1, 0);
        }
    }
}
