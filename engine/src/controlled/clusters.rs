//! Seed 004's distributed framework (section II, issue 60 item 3): the cell split into
//! micro-clusters, each bargaining on its own over its own capacity, and a coordinator sending
//! each new job to a cluster by the seed's three steps: "a cluster controller submits the client
//! jobs to all the clusters to obtain a congestion price", "each cluster calculates the
//! congestion price based on the NBS solution", and the job goes to the cluster with the lowest
//! ([`Controller::quote`]; for NBS the capacity price summed over the horizon,
//! `Allocation::congestion_price`, 0 where the capacity does not bind). That costs a solve per
//! cluster per new job; [`ClusterQuote::Published`] quotes instead each cluster's price as of
//! its latest solve, the chosen cluster re-solving with the job (one solve per new job).
//! Price-blind choice ([`ClusterChoice::Random`]) draws the cluster from the job ID under the
//! run's seed instead, for comparison.
//!
//! What the seed leaves open, chosen here: cluster k of K holds the nodes `[k N / K, (k+1) N /
//! K)` of the cell's N by index (the order the trace adds machines; a machine added later
//! shifts the bounds); a job stays in the cluster it was sent
//! to while it has a task pending or running (one that comes back after all ended, a
//! resubmission, is new again), and its tasks are placed only on that cluster's nodes
//! ([`super::Admission`]); new jobs of
//! a tick are sent in job-ID order, each quoted with the ones sent before it; a quote is not
//! throttled by a controller's least time between solves (every new job gets its prices); equal
//! prices go by [`tie_key`] under a salt of the seed and the job, never to the lowest cluster.
//! Each cluster has its own controller (its state, its cadence) and allocates, as the seed's
//! one cluster does, when something of its own changes: a job sent to it, a task of one of its
//! jobs submitted, ended or displaced, its online capacity changed; its shares are then rounded
//! to whole tasks within its capacity ([`whole_tasks`]).
//!
//! A new job's quotes, and the allocations of the clusters something changed for, run on every
//! thread: each cluster's bargain reads only its own jobs and changes only its own controller,
//! and the results are taken in cluster order, so a run is the same for any number of threads.
//!
//! Each tick in which a cluster allocated or quoted is a row of the `clusters/` table
//! ([`TABLE`]), so no quote is held over a snapshot. Invariant: every job in the
//! table once sent has a cluster below the count, and the cluster's shares sum to at most its
//! capacity or to what its controller gave, as [`whole_tasks`] keeps.

use std::ops::Range;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Controller, Jobs, capacity_cpu, whole_tasks};
use crate::cell::Cell;
use crate::parallel_time::region;
use crate::policy::{ColumnSpec, ColumnType, PolicyCounters, TableRows, TableSpec, Value};
use crate::replay::TickEvents;
use crate::snapshot::{SectionReader, SectionWriter, SnapshotError};
use crate::ties::{least_by, tie_key};
use ingest::rng::hash_keys;

/// A job not yet sent to a cluster.
pub const NO_CLUSTER: u32 = u32::MAX;

/// The most clusters a cell is split into.
pub const MAX_CLUSTERS: u32 = 1_024;

/// How a new job's cluster is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClusterChoice {
    /// The lowest congestion price with the job (seed 004's steps).
    #[default]
    Price,
    /// Drawn uniformly from the job ID and the run's seed: price-blind, for comparison.
    Random,
}

/// What a cluster quotes a new job (with [`ClusterChoice::Price`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClusterQuote {
    /// Its price solved with the job added (seed 004's step 1: the job submitted to every
    /// cluster): a solve per cluster per new job.
    #[default]
    WithJob,
    /// Its published price, from its latest solve (the seed's earlier framework: "clients
    /// obtain estimates of computational congestion price ... from reachable clusters"); the
    /// chosen cluster then re-solves with the job, so the next job sees the price it left: one
    /// solve per new job.
    Published,
}

/// How new jobs are sent to clusters: the count, the choice and, by price, the quote.
pub type ClusterSettings = (u32, ClusterChoice, ClusterQuote);

/// The nodes of cluster `k` of `clusters` on a cell of `nodes` nodes (module doc).
pub fn node_range(k: u32, clusters: u32, nodes: usize) -> Range<usize> {
    let (k, count) = (k as usize, clusters.max(1) as usize);
    k * nodes / count..(k + 1) * nodes / count
}

const COLUMNS: [ColumnSpec; 10] = [
    ColumnSpec::new("time_us", ColumnType::I64),
    ColumnSpec::new("cluster", ColumnType::U32),
    // Whether it allocated (else it only quoted new jobs this tick; its shares as they were).
    ColumnSpec::new("allocated", ColumnType::Bool),
    ColumnSpec::new("nodes", ColumnType::U32),
    ColumnSpec::new("capacity_cpu", ColumnType::U64),
    ColumnSpec::new("jobs", ColumnType::U32),
    // What its jobs' tasks request, and the shares it gave them, CPU units.
    ColumnSpec::new("demand_cpu", ColumnType::U64),
    ColumnSpec::new("share_cpu", ColumnType::U64),
    // Its congestion price as of its last solve (null: none yet, or its solves failed).
    ColumnSpec::new("price", ColumnType::F64).nullable(),
    // Quotes it gave new jobs this tick (solves with each job added).
    ColumnSpec::new("quotes", ColumnType::U32),
];

/// The `clusters/` table: a row per cluster per tick in which it allocated or quoted.
pub const TABLE: TableSpec = TableSpec {
    name: "clusters",
    columns: &COLUMNS,
};

/// The micro-clusters of a controlled policy (module doc).
#[derive(Debug, Clone)]
pub struct Clusters<Ctl> {
    count: u32,
    choice: ClusterChoice,
    quote: ClusterQuote,
    seed: u64,
    /// One controller per cluster.
    controllers: Vec<Ctl>,
    /// Each cluster's online CPU at its last allocation, units.
    capacity: Vec<u64>,
    /// Each cluster's price from its last solve that gave one.
    price: Vec<Option<f64>>,
    /// Quotes each cluster gave this tick.
    quotes: Vec<u32>,
    /// This tick's `clusters/` rows.
    rows: Vec<Value>,
}

/// A cluster's price (its `controller`'s quote) for its jobs `own` (`jobs`' rows, ascending)
/// with new job `r` added, still by job ID; `None` when its solve failed.
fn quote_with<Ctl: Controller>(
    controller: &mut Ctl,
    (jobs, own): (&Jobs, &[usize]),
    r: usize,
    capacity: u64,
    now_us: i64,
) -> Option<f64> {
    let at = own.partition_point(|&m| m < r);
    let rows: Vec<usize> = (own[..at].iter().copied())
        .chain([r])
        .chain(own[at..].iter().copied())
        .collect();
    controller.quote(&jobs.select(&rows), capacity, now_us)
}

impl<Ctl: Controller> Clusters<Ctl> {
    /// `count` clusters, each with a copy of `controller`, choosing by `choice` (quoting by
    /// `quote`) under `seed`.
    pub fn new(controller: &Ctl, (count, choice, quote): ClusterSettings, seed: u64) -> Self {
        let k = count as usize;
        Clusters {
            count,
            choice,
            quote,
            seed,
            controllers: vec![controller.clone(); k],
            capacity: vec![0; k],
            price: vec![None; k],
            quotes: vec![0; k],
            rows: Vec::new(),
        }
    }

    /// Whether any cluster's next allocation at `now_us` reads the jobs' work.
    pub fn needs_work(&self, now_us: i64) -> bool {
        self.controllers.iter().any(|c| c.needs_work(now_us))
    }

    /// Each cluster's online CPU, units.
    fn capacities(&self, cell: &Cell) -> Vec<u64> {
        (0..self.count)
            .map(|k| capacity_cpu(cell, node_range(k, self.count, cell.nodes.len())))
            .collect()
    }

    /// The tick's allocation (module doc): sends `jobs`' new jobs to clusters, then lets every
    /// cluster something of its own changed for (since `previous`, by `events`; every cluster
    /// on the `first` allocation) allocate its jobs' shares.
    pub fn allocate(
        &mut self,
        (cell, events): (&Cell, &TickEvents),
        (jobs, previous): (&mut Jobs, &Jobs),
        now_us: i64,
        first: bool,
    ) {
        let capacity = self.capacities(cell);
        let mut touched: Vec<bool> = (capacity.iter().zip(&self.capacity))
            .map(|(now, before)| first || now != before)
            .collect();
        self.capacity = capacity;
        // Departures: jobs gone from the table.
        for (r, &job) in previous.job_id.iter().enumerate() {
            if jobs.row(job).is_none() && previous.cluster[r] != NO_CLUSTER {
                touched[previous.cluster[r] as usize] = true;
            }
        }
        let tasks = &cell.tasks;
        let task_jobs = (events.submitted.iter().chain(&events.displaced_tasks))
            .map(|t| tasks.job_id()[t.index()])
            .chain(events.ended.iter().map(|e| e.job_id));
        for job in task_jobs {
            if let Some(r) = jobs.row(job).filter(|&r| jobs.cluster[r] != NO_CLUSTER) {
                touched[jobs.cluster[r] as usize] = true;
            }
        }
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); self.count as usize];
        for r in 0..jobs.len() {
            match jobs.cluster[r] {
                NO_CLUSTER => {
                    let k = self.choose(jobs, &members, r, now_us);
                    jobs.cluster[r] = k;
                    touched[k as usize] = true;
                    members[k as usize].push(r);
                }
                k => members[k as usize].push(r),
            }
        }
        // The clusters something changed for allocate, each on its own (on every thread: a
        // cluster's bargain reads only its jobs and changes only its controller).
        let capacity = &self.capacity;
        let allocated: Vec<Option<(Jobs, Option<f64>)>> = region(|| {
            (self.controllers.par_iter_mut().enumerate())
                .map(|(k, controller)| {
                    touched[k].then(|| {
                        let mut own = jobs.select(&members[k]);
                        controller.allocate(&mut own, capacity[k], now_us);
                        whole_tasks(&mut own, capacity[k]);
                        (own, controller.take_price())
                    })
                })
                .collect()
        });
        for (k, allocation) in allocated.into_iter().enumerate() {
            // A cluster that neither allocates nor quoted this tick has no row.
            if !touched[k] && self.quotes[k] == 0 {
                continue;
            }
            let own = match allocation {
                Some((own, price)) => {
                    for (&r, &share) in members[k].iter().zip(&own.share_cpu) {
                        jobs.share_cpu[r] = share;
                    }
                    if let Some(p) = price {
                        self.price[k] = Some(p);
                    }
                    own
                }
                None => jobs.select(&members[k]),
            };
            let range = node_range(k as u32, self.count, cell.nodes.len());
            self.rows.extend([
                Value::I64(now_us),
                Value::U32(k as u32),
                Value::Bool(touched[k]),
                Value::U32(range.len() as u32),
                Value::U64(self.capacity[k]),
                Value::U32(own.len() as u32),
                Value::U64(own.demand().iter().sum()),
                Value::U64(own.share_cpu.iter().sum()),
                self.price[k].map_or(Value::Null, Value::F64),
                Value::U32(std::mem::take(&mut self.quotes[k])),
            ]);
        }
    }

    /// The cluster for new job `r` of `jobs`, the clusters holding `members` so far (rows,
    /// ascending): the lowest price quoted with it, or price-blind a draw.
    fn choose(&mut self, jobs: &Jobs, members: &[Vec<usize>], r: usize, now_us: i64) -> u32 {
        let job = jobs.job_id[r];
        let salt = tie_key(hash_keys(self.seed, &[0x0063_6c75_7374_6572]), job);
        // A cluster without online capacity (more clusters than nodes, or its nodes all
        // removed) takes no job while another has some: its bargain gives nothing, so it would
        // quote 0, the price of no congestion.
        let open: Vec<u32> = (0..self.count)
            .filter(|&k| self.capacity[k as usize] > 0)
            .collect();
        let open = if open.is_empty() {
            (0..self.count).collect()
        } else {
            open
        };
        if self.choice == ClusterChoice::Random {
            return open[(salt % open.len() as u64) as usize];
        }
        let quotes: Vec<(u32, f64)> = match self.quote {
            // A cluster whose solve failed quotes no price: it is taken last.
            // Every open cluster's quote, each on its own (on every thread), in cluster order.
            ClusterQuote::WithJob => {
                let mut is_open = vec![false; self.count as usize];
                for &k in &open {
                    is_open[k as usize] = true;
                    self.quotes[k as usize] += 1;
                }
                let capacity = &self.capacity;
                region(|| {
                    (self.controllers.par_iter_mut().enumerate())
                        .filter(|(k, _)| is_open[*k])
                        .map(|(k, c)| {
                            let own = (jobs, &members[k][..]);
                            let price = quote_with(c, own, r, capacity[k], now_us);
                            (k as u32, price.unwrap_or(f64::INFINITY))
                        })
                        .collect()
                })
            }
            // A cluster that never solved has had no jobs: nothing congests it.
            ClusterQuote::Published => (open.iter())
                .map(|&k| (k, self.price[k as usize].unwrap_or(0.0)))
                .collect(),
        };
        let k = least_by(quotes, |q| q.1, |q| u64::from(q.0), salt).map_or(0, |q| q.0);
        if self.quote == ClusterQuote::Published {
            let (c, own) = (k as usize, (jobs, &members[k as usize][..]));
            self.quotes[c] += 1;
            let price = quote_with(&mut self.controllers[c], own, r, self.capacity[c], now_us);
            if let Some(p) = price {
                self.price[c] = Some(p);
            }
        }
        k
    }

    /// Adds every cluster's counts to `counters` (summed, by the controller's counter index)
    /// and returns their solvers' wall time, ms.
    pub fn take_stats(&mut self, counters: &mut PolicyCounters) -> f64 {
        (self.controllers.iter_mut())
            .map(|c| c.take_stats(counters))
            .sum()
    }

    /// Hands this tick's rows to table `table` of `out`.
    pub fn take_rows(&mut self, table: usize, out: &mut TableRows) {
        out.push(table, &self.rows);
        self.rows.clear();
    }

    /// Writes the clusters' state: the jobs' clusters (`jobs`' rows in order), the capacities
    /// and prices, every controller's own.
    pub fn save_state(&self, jobs: &Jobs, w: &mut SectionWriter) {
        w.serde(&(&jobs.cluster, &self.capacity, &self.price));
        for c in &self.controllers {
            c.save_state(w);
        }
    }

    /// Restores what [`Clusters::save_state`] wrote, the clusters into `jobs` (rows as saved).
    pub fn load_state(
        &mut self,
        jobs: &mut Jobs,
        r: &mut SectionReader<'_>,
    ) -> Result<(), SnapshotError> {
        let (cluster, capacity, price): (Vec<u32>, Vec<u64>, Vec<Option<f64>>) = r.serde()?;
        let k = self.count as usize;
        let valid = |c: &u32| *c == NO_CLUSTER || *c < self.count;
        if cluster.len() != jobs.len()
            || capacity.len() != k
            || price.len() != k
            || !cluster.iter().all(valid)
        {
            return Err(r.corrupt(format!(
                "micro-clusters: {} jobs' clusters for {} jobs, {} capacities for {k} clusters",
                cluster.len(),
                jobs.len(),
                capacity.len()
            )));
        }
        (jobs.cluster, jobs.clusters) = (cluster, self.count);
        (self.capacity, self.price) = (capacity, price);
        for c in &mut self.controllers {
            c.load_state(r)?;
        }
        Ok(())
    }
}
