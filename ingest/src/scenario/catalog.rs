//! The seeds' experiment workloads, as machines and tasks (pure functions of their settings and
//! seed). Where a seed leaves a constant out, the choice is named here and in the scenario's
//! `about`, with the seed's words beside it.

use super::side::{Deadline, Phase};
use super::{Arrivals, Draws, ScenarioConfig, ScenarioMachine, ScenarioTask, Workload};
use crate::pyrandom::RadlabDraws;
use crate::rng::Rng;

const S: i64 = 1_000_000;

fn machines(
    n: u32,
    cpus: impl Fn(u32) -> f64,
    datacenter: impl Fn(u32) -> u32,
) -> Vec<ScenarioMachine> {
    (0..n)
        .map(|m| ScenarioMachine {
            cpus: cpus(m),
            memory: cpus(m),
            datacenter: datacenter(m),
            mips: 0,
        })
        .collect()
}

fn task(
    job_id: u64,
    task_index: u32,
    submit_us: i64,
    (cpu, mem): (f64, f64),
    run_us: i64,
) -> ScenarioTask {
    ScenarioTask {
        job_id,
        task_index,
        submit_us,
        cpu,
        mem,
        run_us,
        length_mi: None,
        deadline: Deadline::None,
        weight: 1.0,
        phase: Phase::Map,
    }
}

/// Seed 002's load scenario: 50 homogeneous nodes, 1,000 tasks of 2 CPUs, 2 GB and 10 s, the
/// load setting the mean inter-arrival time from the cell's total CPUs (even gaps, or Poisson).
/// Node size (not in the seed): 8 CPUs and 32 GB, the unit of normalisation (cpus = memory =
/// 1.0).
pub fn sparrow_load(c: &ScenarioConfig) -> Workload {
    let (nodes, cores, tasks, run_s) = (50u32, 8.0, c.tasks.unwrap_or(1_000), 10.0);
    let load = c.load_pct as f64 / 100.0;
    // Each task keeps 2 of the cell's 400 CPUs busy for 10 s.
    let gap_us = 2.0 * run_s / (nodes as f64 * cores * load) * 1e6;
    let mut rng = Rng::new(c.seed, 0x5ba8);
    let times = match c.draws {
        Draws::Own => c.arrivals.times(tasks, gap_us, &mut rng),
        Draws::Radlab => radlab_times(c, tasks, nodes),
    };
    Workload {
        about: format!(
            "seed 002 load scenario: 50 nodes of 8 CPUs / 32 GB (node size chosen: the seed does not give it), {tasks} tasks of 2 CPUs / 2 GB / 10 s, {:?} arrivals every {:.0} us on average (load {}%), drawn by {}",
            c.arrivals,
            gap_us,
            c.load_pct,
            match c.draws {
                Draws::Own => "cellsim",
                Draws::Radlab => "the Sparrow authors' simulator (its Python stream)",
            }
        ),
        machines: machines(nodes, |_| 1.0, |_| 0),
        tasks: times
            .into_iter()
            .enumerate()
            .map(|(i, at)| task(i as u64 + 1, 0, at, (0.25, 2.0 / 32.0), 10 * S))
            .collect(),
        latency_us: vec![0],
    }
}

/// The arrival times the Sparrow authors' simulator draws for `c`'s seed, load and arrivals
/// (`Draws::Radlab`): its mean gap computed as it computes it (`Simulation.__init__`, 10 s tasks,
/// 4 slots on each worker), its times summed in ms, each rounded to the microsecond.
fn radlab_times(c: &ScenarioConfig, tasks: u32, workers: u32) -> Vec<i64> {
    let load = c.load_pct as f64 / 100.0;
    let mean_gap_ms = 1.0 * 10_000.0 * 1.0 / (load * 4.0 * workers as f64);
    let poisson = c.arrivals == Arrivals::Poisson;
    let mut draws = RadlabDraws::new(c.seed, workers, poisson.then_some(mean_gap_ms));
    let mut at_ms = 0.0;
    (0..tasks)
        .map(|_| {
            let t = (at_ms * 1e3_f64).round() as i64;
            at_ms += draws.next_job().1.unwrap_or(mean_gap_ms);
            t
        })
        .collect()
}

/// Seed 002's random scenario: heterogeneous nodes, 500 tasks of varied CPU and time, one every
/// half second (even, or Poisson at that rate). Chosen (the seed gives no numbers): 50 nodes
/// (`nodes` changes it, and so the load) of 4, 8 or 16 CPUs with 4 GB per CPU (16 CPUs = 1.0),
/// tasks of 1-4 CPUs, 2 GB, 1-20 s, uniformly drawn.
pub fn sparrow_random(c: &ScenarioConfig) -> Workload {
    let mut rng = Rng::new(c.seed, 0x5ba7);
    let count = c.nodes.unwrap_or(50);
    let sizes: Vec<f64> = (0..count)
        .map(|_| [0.25, 0.5, 1.0][rng.below(3) as usize])
        .collect();
    let tasks = c.tasks.unwrap_or(500);
    let times = c.arrivals.times(tasks, 500_000.0, &mut rng);
    Workload {
        about: format!(
            "seed 002 random scenario: {count} nodes of 4, 8 or 16 CPUs (4 GB each), {tasks} tasks of 1-4 CPUs / 2 GB / 1-20 s, {:?} arrivals every 0.5 s on average (sizes chosen: the seed gives none)",
            c.arrivals
        ),
        machines: machines(count, |m| sizes[m as usize], |_| 0),
        tasks: times
            .into_iter()
            .enumerate()
            .map(|(i, at)| {
                let cpus = 1 + rng.below(4);
                let run_s = 1 + rng.below(20) as i64;
                task(
                    i as u64 + 1,
                    0,
                    at,
                    (cpus as f64 / 16.0, 2.0 / 64.0),
                    run_s * S,
                )
            })
            .collect(),
        latency_us: vec![0],
    }
}

/// Seed 004's Hadoop experiment (Figs. 3 and 5): 3 machines with 6 map slots in all, ten
/// identical word-count jobs of 3 map tasks, submitted at once; at least a third with hard
/// deadlines (which jobs, drawn), the rest soft or none at random, deadlines random, every
/// priority 1. Chosen: 2 slots per machine (a map task is half a machine), 10 s per map task, a third of
/// the jobs (rounded up) hard, deadlines 20-80 s. `reduce_tasks` adds that many reduce tasks per
/// job ([`hadoop_jobs`]).
pub fn nbs_hadoop(c: &ScenarioConfig) -> Workload {
    let mut rng = Rng::new(c.seed, 0x4ad0);
    let jobs = c.tasks.unwrap_or(10) as u64;
    let hard = jobs.div_ceil(3);
    let mut order: Vec<u64> = (0..jobs).collect();
    shuffle(&mut order, &mut rng);
    let deadlines: Vec<Deadline> = (0..jobs)
        .map(|j| {
            let at = (20 + rng.below(61) as i64) * S;
            let is_hard = order
                .iter()
                .position(|&o| o == j)
                .is_some_and(|p| (p as u64) < hard);
            match (is_hard, rng.below(2)) {
                (true, _) => Deadline::Hard(at),
                (false, 0) => Deadline::Soft(at),
                (false, _) => Deadline::None,
            }
        })
        .collect();
    Workload {
        about: format!(
            "seed 004 Hadoop experiment: 3 machines x 2 map slots, {jobs} jobs x 3 map tasks of {} s{} submitted at once, {hard} with hard deadlines, the others soft or none, deadlines 20-80 s (slot count per machine, task time and deadline range chosen)",
            map_s(c),
            reduce_about(c.reduce_tasks)
        ),
        machines: machines(3, |_| 1.0, |_| 0),
        tasks: hadoop_jobs(&deadlines, &vec![1.0; jobs as usize], c),
        latency_us: vec![0],
    }
}

/// Seed 004's priority experiments on the same cell: every job soft with the deadline 65 s
/// ("job type of 1"). Fig. 4 (`random` false): ten jobs with priorities "from 300 to 30", the
/// first three at least 100; chosen: 300, 200, 100, then 90 down to 30 in tens (and 10 for any
/// job past the tenth). Fig. 6 (`random` true): priorities drawn uniformly in 2-256. The
/// order of submission (job IDs) is drawn in both: the seed does not give it, and schedulers
/// break ties by job ID.
pub fn nbs_priority(c: &ScenarioConfig, random: bool) -> Workload {
    let mut rng = Rng::new(c.seed, 0x4ad1);
    let jobs = c.tasks.unwrap_or(10) as usize;
    let mut priorities: Vec<f64> = (0..jobs)
        .map(|j| {
            if random {
                (2 + rng.below(255)) as f64
            } else {
                [300.0, 200.0, 100.0]
                    .get(j)
                    .copied()
                    .unwrap_or((120.0 - 10.0 * j as f64).max(10.0))
            }
        })
        .collect();
    shuffle(&mut priorities, &mut rng);
    Workload {
        about: format!(
            "seed 004 priority experiment: 3 machines x 2 map slots, {jobs} jobs x 3 map tasks of {} s{} submitted at once, all soft with the deadline 65 s, priorities {}",
            map_s(c),
            reduce_about(c.reduce_tasks),
            if random {
                "drawn in 2-256".to_string()
            } else {
                "300, 200, 100, 90 ... 30 (chosen)".to_string()
            }
        ),
        machines: machines(3, |_| 1.0, |_| 0),
        tasks: hadoop_jobs(&vec![Deadline::Soft(65 * S); jobs], &priorities, c),
        latency_us: vec![0],
    }
}

/// Fisher-Yates with `rng`.
fn shuffle<T>(items: &mut [T], rng: &mut Rng) {
    for k in (1..items.len()).rev() {
        items.swap(k, rng.below(k as u64 + 1) as usize);
    }
}

/// Run time of a reduce task, seconds. Chosen: as a map task's (the seed counts map tasks only;
/// word count's reduce adds up what the maps emitted). It moves every latency of a run with
/// reduce tasks by up to its length per wave of reduces.
pub const REDUCE_S: i64 = 10;

/// The description of `reduce_tasks` reduce tasks per job.
fn reduce_about(reduce_tasks: u32) -> String {
    match reduce_tasks {
        0 => String::new(),
        n => format!(
            " then {n} reduce task{} of {REDUCE_S} s (a slot each; chosen: the seed counts map tasks only)",
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// Run time of a map task of the `nbs-*` scenarios by default, seconds. Chosen: seed 004 gives
/// none (its word-count jobs ran on Hadoop); `--map-task-s` sets another.
pub const MAP_S: u32 = 10;

/// The map-task time of `c`, seconds.
fn map_s(c: &ScenarioConfig) -> u32 {
    c.map_task_s.unwrap_or(MAP_S)
}

/// Seed 004's word-count jobs: one per deadline and priority, each of 3 map tasks of half a
/// machine (a slot) and [`map_s`], then `c.reduce_tasks` reduce tasks of a slot and
/// [`REDUCE_S`] (which start once the job's map tasks have ended), all submitted at 0.
fn hadoop_jobs(
    deadlines: &[Deadline],
    priorities: &[f64],
    c: &ScenarioConfig,
) -> Vec<ScenarioTask> {
    let map_us = map_s(c) as i64 * S;
    let mut tasks = Vec::new();
    for (j, (&deadline, &weight)) in deadlines.iter().zip(priorities).enumerate() {
        for i in 0..3 + c.reduce_tasks {
            let (phase, run_us) = if i < 3 {
                (Phase::Map, map_us)
            } else {
                (Phase::Reduce, REDUCE_S * S)
            };
            let mut t = task(j as u64 + 1, i, 0, (0.5, 0.1), run_us);
            t.deadline = deadline;
            t.weight = weight;
            t.phase = phase;
            tasks.push(t);
        }
    }
    tasks
}

/// Seed 003's federated Cloud: 5 datacenters of 20 hosts with latencies 1.5, 0.8, 1, 0.15 and 2 s
/// (section 4), and a PSE of `base * jobs_factor` jobs, each of a length in MI drawn uniformly in
/// the seed's range (which reproduces its standard deviation: 19.7 % for PSE-1, 4.2-4.5 % for
/// PSE-2), weighted 1, 2 or 3 by length tercile ("the larger the estimated size ... the higher
/// priority"), all submitted at once. The hosts are [`super::seed003`]'s choice (Table 1 is not
/// in the text; `mips` is a core's); a job's recorded run time is its length at the reference
/// MIPS that gives the seed's mean time (235.12 s for PSE-1, 2,275.76 s for PSE-2), and it asks
/// for one core (t2.small-like VMs of one core each).
pub fn pse(c: &ScenarioConfig, second: bool) -> Workload {
    let mut rng = Rng::new(c.seed, 0x9e5e);
    let (base, lo, hi, mean_s) = if second {
        (30u64, 13_359_331u64, 15_603_487u64, 2_275.76)
    } else {
        (25, 1_333_293, 2_712_789, 235.12)
    };
    let reference_mips = (lo + hi) as f64 / 2.0 / mean_s;
    let base_lengths: Vec<u64> = (0..base).map(|_| lo + rng.below(hi - lo + 1)).collect();
    let (t1, t2) = (lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3);
    let jobs = base * c.jobs_factor as u64;
    let tasks = (0..jobs)
        .map(|j| {
            let mi = base_lengths[(j % base) as usize];
            let run_us = (mi as f64 / reference_mips * 1e6).round() as i64;
            let mut t = task(j + 1, 0, 0, (1.0 / MAX_CORES as f64, 0.05), run_us);
            t.length_mi = Some(mi);
            t.weight = if mi >= t2 {
                3.0
            } else if mi >= t1 {
                2.0
            } else {
                1.0
            };
            t
        })
        .collect();
    use super::seed003::{CORE_MIPS, HOST_CORES, HOSTS_PER_DC, MAX_CORES};
    let per_dc = HOSTS_PER_DC;
    let cores = |m: u32| HOST_CORES[(m % per_dc) as usize % HOST_CORES.len()];
    let mut machines = machines(
        per_dc * CORE_MIPS.len() as u32,
        |m| cores(m) as f64 / MAX_CORES as f64,
        |m| m / per_dc,
    );
    for m in &mut machines {
        m.mips = CORE_MIPS[m.datacenter as usize] as u64;
    }
    Workload {
        about: format!(
            "seed 003 PSE-{}: {jobs} jobs ({base} x {}), 5 datacenters x 20 hosts of 4-8 cores, latencies 1.5/0.8/1/0.15/2 s (host cores and MIPS chosen: Table 1 is not in the text)",
            if second { 2 } else { 1 },
            c.jobs_factor
        ),
        machines,
        tasks,
        latency_us: super::seed003::LATENCY_US.to_vec(),
    }
}
