//! Seed 003's experiments on its federated cloud (`engine::federation::cloud`): every case (PSE,
//! broker policy, VM scheduler, priorities, jobs, hosts per datacenter) and seed is one
//! simulation, measured for makespan, weighted flowtime, VM creation time and messages.
//!
//! - `federation-jobs`: Figs. 4-5 and Tables 3-4. PSE-1 (25 i jobs) and PSE-2 (30 i jobs),
//!   i = 40, 80, ..., 400, on 5 datacenters of 20 hosts, 100 VMs; 3 broker policies x 4
//!   schedulers with priorities, and LLTF x 4 schedulers without them (Table 4).
//! - `federation-hosts`: Figs. 6-7. 10 i hosts per datacenter and 100 i VMs, i = 1..10, LLTF,
//!   4 schedulers, 10,000 PSE-1 jobs and 12,000 PSE-2 jobs.
//!
//! Outputs: `results.parquet` (one row per case and seed), `results.md` (the tables, and the
//! seed's published values beside ours, each difference stated), and the figures
//! (`makespan.svg`/`flowtime.svg`, or `hosts.svg`, each with a `.png`), `results.md` last.
//! Determinism: rows depend only on the experiment and the seeds (each simulation is
//! sequential; rows are kept in case order whatever the threads).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use engine::federation::cloud::{Cloud, Job, Request, simulate};
use engine::federation::{BrokerPolicy, SchedulerParams, VmScheduler};
use ingest::scenario::ScenarioConfig;

use super::output::{RESULTS_MD, RESULTS_PARQUET, batch_of, parquet_bytes, write_file};
use super::panels::{Line, Panel};
use crate::error::{AnalysisError, Result};

/// The jobs factors i of the seed (25 i or 30 i jobs).
pub const FACTORS: [u32; 10] = [40, 80, 120, 160, 200, 240, 280, 320, 360, 400];

/// One simulation's settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Case {
    /// 1 or 2.
    pub pse: u8,
    /// The broker policy.
    pub broker: BrokerPolicy,
    /// The VM scheduler.
    pub scheduler: VmScheduler,
    /// The VM level orders jobs by priority.
    pub priorities: bool,
    /// Jobs factor i.
    pub factor: u32,
    /// Hosts per datacenter.
    pub hosts_per_dc: u32,
    /// VMs requested.
    pub vms: u32,
}

impl Case {
    /// Jobs in the PSE.
    pub fn jobs(&self) -> u32 {
        self.factor * if self.pse == 1 { 25 } else { 30 }
    }
}

/// One simulation measured.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FedRow {
    /// Its settings.
    pub case: Case,
    /// The seed (workload draw and the schedulers' randomness).
    pub seed: u64,
    /// Makespan, minutes.
    pub makespan_min: f64,
    /// Weighted flowtime, seconds.
    pub weighted_flowtime_s: f64,
    /// VM creation time, minutes.
    pub creation_min: f64,
    /// Messages to hosts.
    pub messages: u64,
}

/// The cases of experiment `name`; `None` for a name not in [`NAMES`](super::NAMES).
pub fn cases(name: &str) -> Option<Vec<Case>> {
    let case = |pse, broker, scheduler, priorities, factor, hosts_per_dc, vms| Case {
        pse,
        broker,
        scheduler,
        priorities,
        factor,
        hosts_per_dc,
        vms,
    };
    let mut out = Vec::new();
    match name {
        "federation-jobs" => {
            for pse in [1, 2] {
                for broker in BrokerPolicy::ALL {
                    for scheduler in VmScheduler::ALL {
                        for factor in FACTORS {
                            out.push(case(pse, broker, scheduler, true, factor, 20, 100));
                        }
                    }
                }
                for scheduler in VmScheduler::ALL {
                    for factor in FACTORS {
                        let lltf = BrokerPolicy::Lltf;
                        out.push(case(pse, lltf, scheduler, false, factor, 20, 100));
                    }
                }
            }
        }
        "federation-hosts" => {
            for pse in [1, 2] {
                for scheduler in VmScheduler::ALL {
                    for i in 1..=10 {
                        let factor = 400;
                        let lltf = BrokerPolicy::Lltf;
                        out.push(case(pse, lltf, scheduler, true, factor, 10 * i, 100 * i));
                    }
                }
            }
        }
        _ => return None,
    }
    Some(out)
}

/// The PSE's jobs for `seed` (the `pse-1`/`pse-2` scenario's draw).
fn jobs(pse: u8, factor: u32, seed: u64) -> Result<Vec<Job>> {
    let scenario = ScenarioConfig {
        name: format!("pse-{pse}"),
        seed,
        jobs_factor: factor,
        ..ScenarioConfig::default()
    };
    Ok(scenario
        .workload()?
        .tasks
        .iter()
        .map(|t| Job {
            length_mi: t.length_mi.unwrap_or(0),
            weight: t.weight,
        })
        .collect())
}

/// One case and seed.
fn run_case(case: &Case, seed: u64) -> Result<FedRow> {
    let request = Request {
        vms: case.vms,
        broker: case.broker,
        params: SchedulerParams {
            scheduler: case.scheduler,
            ..SchedulerParams::default()
        },
        priorities: case.priorities,
        seed,
    };
    let cloud = Cloud::seed_003(case.hosts_per_dc);
    let o = simulate(&cloud, &jobs(case.pse, case.factor, seed)?, &request)
        .map_err(|e| AnalysisError::Experiment(format!("{case:?} seed {seed}: {e}")))?;
    Ok(FedRow {
        case: *case,
        seed,
        makespan_min: o.makespan_s / 60.0,
        weighted_flowtime_s: o.weighted_flowtime_s,
        creation_min: o.creation_s / 60.0,
        messages: o.messages,
    })
}

/// Runs experiment `name` for seeds 1..=`seeds` on `threads` (0: all cores), calling
/// `progress` now and then.
pub fn run(
    name: &str,
    seeds: u64,
    (threads, keep): (usize, &super::keep::Keep),
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Vec<FedRow>> {
    let cases = cases(name).ok_or_else(|| {
        AnalysisError::Experiment(format!("{name:?} is not a federation experiment"))
    })?;
    // A case's seeds are kept together: thousands of simulations of milliseconds each.
    let items: Vec<(usize, Case)> = cases.iter().copied().enumerate().collect();
    let total = items.len() as u64 * seeds;
    let done = AtomicUsize::new(keep.kept() * seeds as usize);
    let key = |(k, _): &(usize, Case)| format!("case-{k}");
    let rows = super::keep::measure_all(&items, threads, keep, key, |(_, case)| {
        let rows: Result<Vec<FedRow>> = (1..=seeds).map(|seed| run_case(case, seed)).collect();
        let n = done.fetch_add(seeds as usize, Ordering::Relaxed) as u64 + seeds;
        if n % 100 < seeds || n == total {
            progress(&format!("[{n}/{total}] simulations done"));
        }
        rows
    });
    Ok(rows?.into_iter().flatten().collect())
}

/// Mean of `measure` over the rows that `keep`; NaN without any.
pub fn mean(rows: &[FedRow], keep: impl Fn(&Case) -> bool, measure: fn(&FedRow) -> f64) -> f64 {
    let (sum, n) = rows
        .iter()
        .filter(|r| keep(&r.case))
        .fold((0.0, 0u32), |(s, n), r| (s + measure(r), n + 1));
    if n == 0 { f64::NAN } else { sum / n as f64 }
}

fn makespan(r: &FedRow) -> f64 {
    r.makespan_min
}

fn flowtime(r: &FedRow) -> f64 {
    r.weighted_flowtime_s
}

/// Weighted flowtime in 10^6 s (the figures' unit).
fn flowtime_e6(r: &FedRow) -> f64 {
    r.weighted_flowtime_s / 1e6
}

/// The rows as one Arrow batch.
fn batch(name: &str, rows: &[FedRow]) -> RecordBatch {
    let f64s = |f: fn(&FedRow) -> f64| -> ArrayRef {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f)))
    };
    let u32s = |f: fn(&FedRow) -> u32| -> ArrayRef {
        Arc::new(UInt32Array::from_iter_values(rows.iter().map(f)))
    };
    let strs = |f: fn(&FedRow) -> &'static str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "experiment",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| name))),
        ),
        ("pse", u32s(|r| r.case.pse as u32)),
        ("broker", strs(|r| r.case.broker.name())),
        ("scheduler", strs(|r| r.case.scheduler.name())),
        (
            "priorities",
            Arc::new(BooleanArray::from_iter(
                rows.iter().map(|r| Some(r.case.priorities)),
            )),
        ),
        ("jobs", u32s(|r| r.case.jobs())),
        ("hosts_per_dc", u32s(|r| r.case.hosts_per_dc)),
        ("vms", u32s(|r| r.case.vms)),
        (
            "seed",
            Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.seed))),
        ),
        ("makespan_min", f64s(makespan)),
        ("weighted_flowtime_s", f64s(flowtime)),
        ("creation_min", f64s(|r| r.creation_min)),
        (
            "messages",
            Arc::new(UInt64Array::from_iter_values(
                rows.iter().map(|r| r.messages),
            )),
        ),
    ];
    batch_of(columns, &[])
}

/// A figure panel's size, pixels.
const PANEL: (u32, u32) = (420, 340);

/// Writes `results.parquet`, the figures and, last, `results.md` into `dir`.
pub fn write_outputs(name: &str, rows: &[FedRow], seeds: u64, dir: &Path) -> Result<()> {
    let bytes = parquet_bytes(&batch(name, rows)).map_err(|problem| AnalysisError::Figure {
        path: dir.join(RESULTS_PARQUET),
        problem,
    })?;
    write_file(&dir.join(RESULTS_PARQUET), &bytes)?;
    if name == "federation-hosts" {
        super::panels::write(dir, "hosts", ((2, 2), PANEL), &host_panels(rows))?;
    } else {
        for (stem, measure, label) in [
            ("makespan", makespan as fn(&FedRow) -> f64, "makespan (min)"),
            ("flowtime", flowtime_e6, "weighted flowtime (10^6 s)"),
        ] {
            let panels = job_panels(rows, measure, label);
            super::panels::write(dir, stem, ((2, 3), PANEL), &panels)?;
        }
    }
    write_file(
        &dir.join(RESULTS_MD),
        super::federation_paper::markdown(name, rows, seeds).as_bytes(),
    )
}

/// Figs. 4-5: per PSE (rows) and broker (columns), one line per scheduler against jobs, the
/// paper's makespans at the largest job count as crosses.
fn job_panels(rows: &[FedRow], measure: fn(&FedRow) -> f64, label: &str) -> Vec<Panel> {
    let mut panels = Vec::new();
    for pse in [1u8, 2] {
        for broker in BrokerPolicy::ALL {
            let mut panel = Panel {
                title: format!("PSE-{pse}, {}", broker.name()),
                x_label: "jobs".into(),
                y_label: label.into(),
                ..Panel::default()
            };
            for (k, scheduler) in VmScheduler::ALL.into_iter().enumerate() {
                let points = FACTORS
                    .iter()
                    .map(|&factor| {
                        let keep = |c: &Case| {
                            c.pse == pse
                                && c.broker == broker
                                && c.scheduler == scheduler
                                && c.priorities
                                && c.factor == factor
                        };
                        let jobs = factor * if pse == 1 { 25 } else { 30 };
                        (jobs as f64, mean(rows, keep, measure))
                    })
                    .collect();
                panel.lines.push(Line {
                    name: scheduler.name().into(),
                    points,
                });
                if label.starts_with("makespan") {
                    let paper = super::federation_paper::makespan_at_max(pse, broker, scheduler);
                    let jobs = if pse == 1 { 10_000.0 } else { 12_000.0 };
                    panel.marks.push((k, jobs, paper));
                }
            }
            panels.push(panel);
        }
    }
    panels
}

/// Figs. 6-7: per PSE (rows), makespan and flowtime (columns) against hosts per datacenter.
fn host_panels(rows: &[FedRow]) -> Vec<Panel> {
    let mut panels = Vec::new();
    for pse in [1u8, 2] {
        for (measure, label) in [
            (makespan as fn(&FedRow) -> f64, "makespan (min)"),
            (flowtime_e6, "weighted flowtime (10^6 s)"),
        ] {
            let mut panel = Panel {
                title: format!("PSE-{pse}, LLTF"),
                x_label: "hosts per datacenter".into(),
                y_label: label.into(),
                ..Panel::default()
            };
            for scheduler in VmScheduler::ALL {
                let points = (1..=10)
                    .map(|i| {
                        let keep = |c: &Case| {
                            c.pse == pse && c.scheduler == scheduler && c.hosts_per_dc == 10 * i
                        };
                        ((10 * i) as f64, mean(rows, keep, measure))
                    })
                    .collect();
                panel.lines.push(Line {
                    name: scheduler.name().into(),
                    points,
                });
            }
            panels.push(panel);
        }
    }
    panels
}
