//! Seed 003's federated cloud, end to end: a user's broker asks for VMs one at a time, each
//! placed by the broker policy and the infrastructure-level scheduler at the cost of the
//! messages it sends (each costs its datacenter's latency, one more for the request to the
//! datacenter); once every VM exists (CloudSim's broker submits its cloudlets then) the VM level
//! hands the jobs to the VMs round-robin, by priority, and the jobs run time-shared
//! (`timeshare.rs`). Makespan = the last completion after the user's request; weighted
//! flowtime = sum of weight x (completion - the user's request): seed 003 defines flowtime as
//! "the total time that a job spends in the system, i.e., waiting time plus effective
//! processing time", and a job waits while its VMs are created, so the schedulers' messages
//! count in it (its formula's A_j, "the starting execution time", read as the time the job
//! enters the system: with A_j the time it starts running, flowtime would leave out the
//! waiting its own definition counts; before issue 60 it did, and the four schedulers' flowtimes
//! under LTIR came out equal).
//!
//! Table 1 (host specifications) is not in the seed's text: [`Cloud::seed_003`] documents the
//! choice and which results it moves. Not modelled: the 1 Gbps links' transfer of each job's
//! input file (291.7 KB for PSE-1, 249.9 KB for PSE-2: 2.3 and 2.0 ms, against jobs of minutes).

use ingest::rng::Rng;

use super::aco::LoadTables;
use super::broker;
use super::config::{BrokerPolicy, SchedulerParams};
use super::hosts::Hosts;
use super::timeshare;

/// A federation of datacenters, hosts as columns (a datacenter's hosts contiguous).
#[derive(Debug, Clone, PartialEq)]
pub struct Cloud {
    /// Cores per host.
    pub cores: Vec<u32>,
    /// MIPS of each of a host's cores.
    pub core_mips: Vec<f64>,
    /// VMs a host has memory for (a VM is suitable only on a host with a free slot).
    pub vm_slots: Vec<u32>,
    /// Each datacenter's first host, and one past the last host at the end.
    pub dc_start: Vec<usize>,
    /// One-way network latency per datacenter, seconds.
    pub latency_s: Vec<f64>,
}

pub use ingest::scenario::seed003::{CORE_MIPS, HOST_CORES, SLOTS_PER_CORE};

impl Cloud {
    /// The seed's federation with `hosts_per_dc` hosts in each of its 5 datacenters (20 in
    /// the seed; 10-100 in Figs. 6-7). Chosen, as Table 1 is not in the text:
    /// - hosts of 4, 6, 4 and 8 cores in turn ([`HOST_CORES`]): heterogeneous within a
    ///   datacenter, so placement decides how many VMs share a core. Best Effort evens out VM
    ///   counts (5 per host for 100 VMs on 20 hosts), so its 4-core hosts run at 4/5: this sets
    ///   BE's (and GA's) distance to PSO (25 % here, 9 % in the paper);
    /// - 4 GiB of memory per core: 2 slots of a 2 GiB t2.small-like VM per core
    ///   ([`SLOTS_PER_CORE`]), so all 100 VMs fit in one datacenter;
    /// - one speed per core everywhere ([`CORE_MIPS`]), calibrated on Fig. 4a's four LLTF
    ///   makespans at 10,000 PSE-1 jobs and on nothing else; every other number is a
    ///   prediction. (Before issue 60, D4 was faster and the others 6-16 % slower, fitted to
    ///   the paper's FLTF and LTIR gaps on PSE-2, 7.3 % and 7.6 %, the very numbers compared;
    ///   with one speed, latency and placement alone separate the brokers.)
    pub fn seed_003(hosts_per_dc: u32) -> Cloud {
        let mut cloud = Cloud {
            cores: Vec::new(),
            core_mips: Vec::new(),
            vm_slots: Vec::new(),
            dc_start: vec![0],
            latency_s: ingest::scenario::seed003::LATENCY_US
                .iter()
                .map(|&us| us as f64 / 1e6)
                .collect(),
        };
        for mips in CORE_MIPS {
            for h in 0..hosts_per_dc as usize {
                let cores = HOST_CORES[h % HOST_CORES.len()];
                cloud.cores.push(cores);
                cloud.core_mips.push(mips);
                cloud.vm_slots.push(cores * SLOTS_PER_CORE);
            }
            cloud.dc_start.push(cloud.cores.len());
        }
        cloud
    }

    /// Datacenters.
    pub fn datacenters(&self) -> usize {
        self.latency_s.len()
    }

    /// Hosts in all.
    pub fn hosts(&self) -> usize {
        self.cores.len()
    }
}

/// A PSE job: its length and priority weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Job {
    /// Million instructions.
    pub length_mi: u64,
    /// Priority weight (heavier runs first at the VM level).
    pub weight: f64,
}

/// What the user asks for and how the three levels decide.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// VMs (one core each).
    pub vms: u32,
    /// The broker's datacenter policy.
    pub broker: BrokerPolicy,
    /// The infrastructure level.
    pub params: SchedulerParams,
    /// The VM level orders jobs by weight (heavier first); false: in submission order.
    pub priorities: bool,
    /// The run's seed.
    pub seed: u64,
}

/// The measured result of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// From the user's request to the last job's completion, seconds.
    pub makespan_s: f64,
    /// Sum over jobs of weight x (completion - start), seconds.
    pub weighted_flowtime_s: f64,
    /// Time to create the VMs (messages x latency), seconds.
    pub creation_s: f64,
    /// Messages the schedulers sent to hosts.
    pub messages: u64,
    /// VMs created per datacenter.
    pub vms_per_dc: Vec<u32>,
}

/// A datacenter's hosts as the schedulers see them.
struct Datacenter<'a> {
    cloud: &'a Cloud,
    first: usize,
    len: usize,
    vms: &'a [u32],
}

impl Hosts for Datacenter<'_> {
    fn count(&self) -> usize {
        self.len
    }
    fn suitable(&self, h: usize) -> bool {
        self.vms[self.first + h] < self.cloud.vm_slots[self.first + h]
    }
    fn load(&self, h: usize) -> f64 {
        self.vms[self.first + h] as f64 / self.cloud.cores[self.first + h] as f64
    }
    fn cores_used(&self, h: usize) -> f64 {
        self.vms[self.first + h] as f64
    }
    fn vms(&self, h: usize) -> u32 {
        self.vms[self.first + h]
    }
}

/// Runs `jobs` on `cloud` as `request` says; an error when no VM can be created.
pub fn simulate(cloud: &Cloud, jobs: &[Job], request: &Request) -> Result<Outcome, String> {
    let params = request.params;
    params.check()?;
    let mut rng = Rng::new(request.seed, 0xfed);
    let list = broker::datacenter_list(request.broker, &cloud.latency_s, &mut rng);
    let mut vms = vec![0u32; cloud.hosts()];
    let mut tables: Vec<LoadTables> = (0..cloud.datacenters())
        .map(|d| LoadTables::new(cloud.dc_start[d + 1] - cloud.dc_start[d]))
        .collect();
    let mut vm_host = Vec::with_capacity(request.vms as usize);
    let (mut clock_s, mut messages) = (0.0f64, 0u64);
    let mut vms_per_dc = vec![0u32; cloud.datacenters()];
    for vm in 0..request.vms as usize {
        for d in broker::tries(request.broker, &list, vm) {
            let (first, len) = (cloud.dc_start[d], cloud.dc_start[d + 1] - cloud.dc_start[d]);
            let dc = Datacenter {
                cloud,
                first,
                len,
                vms: &vms,
            };
            let placement = super::place(&params, &dc, &mut tables[d], &mut rng);
            // The request to the datacenter, then the scheduler's messages to its hosts.
            clock_s += cloud.latency_s[d] * (1 + placement.messages) as f64;
            messages += placement.messages as u64;
            if let Some(h) = placement.host {
                vms[first + h] += 1;
                vm_host.push(first + h);
                vms_per_dc[d] += 1;
                break;
            }
        }
    }
    if vm_host.is_empty() {
        return Err(format!(
            "no VM could be created: the federation's {} hosts have no room",
            cloud.hosts()
        ));
    }
    // The VM level: by weight, heavier first (stable: submission order within a weight).
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    if request.priorities {
        order.sort_by(|&a, &b| jobs[b].weight.total_cmp(&jobs[a].weight));
    }
    let mut vm_jobs = vec![Vec::new(); vm_host.len()];
    for (k, &j) in order.iter().enumerate() {
        vm_jobs[k % vm_host.len()].push((jobs[j].length_mi as f64, j));
    }
    let done = timeshare::completion_times(
        &cloud.cores,
        &cloud.core_mips,
        &vm_host,
        &vm_jobs,
        jobs.len(),
    );
    let last = done.iter().copied().fold(0.0, f64::max);
    // Each job waited for the VMs' creation, then ran (module doc).
    let weighted_flowtime_s = (jobs.iter().zip(&done))
        .map(|(j, t)| j.weight * (clock_s + t))
        .sum();
    Ok(Outcome {
        makespan_s: clock_s + last,
        weighted_flowtime_s,
        creation_s: clock_s,
        messages,
        vms_per_dc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::federation::VmScheduler;

    /// One datacenter of two 1-core hosts of 100 MIPS, no latency, room for one VM each.
    fn tiny() -> Cloud {
        Cloud {
            cores: vec![1, 1],
            core_mips: vec![100.0, 100.0],
            vm_slots: vec![1, 1],
            dc_start: vec![0, 2],
            latency_s: vec![0.0],
        }
    }

    #[test]
    fn three_jobs_on_two_vms_worked_by_hand() {
        // Jobs of 1,000, 3,000 and 2,000 MI, weights 1, 3, 2; one VM per host at 100 MIPS.
        // With priorities the VM level takes job 1 (w 3) to VM 0, job 2 (w 2) to VM 1, job 0
        // (w 1) to VM 0. VM 0 shares 100 MIPS between 3,000 and 1,000 MI: job 0 ends at 20 s
        // (2 x 1,000 / 100), job 1 has 1,000 MI done and 2,000 left alone: 40 s. VM 1: job 2
        // at 20 s. Makespan 40 s; weighted flowtime 1 x 20 + 3 x 40 + 2 x 20 = 180 s.
        // Without priorities: job 0 and job 2 on VM 0 (ends 20 s and 30 s), job 1 alone on
        // VM 1 (30 s): makespan 30 s, flowtime 1 x 20 + 3 x 30 + 2 x 30 = 170 s.
        let jobs = [
            Job {
                length_mi: 1_000,
                weight: 1.0,
            },
            Job {
                length_mi: 3_000,
                weight: 3.0,
            },
            Job {
                length_mi: 2_000,
                weight: 2.0,
            },
        ];
        for scheduler in VmScheduler::ALL {
            let request = Request {
                vms: 2,
                broker: BrokerPolicy::Lltf,
                params: SchedulerParams {
                    scheduler,
                    ..Default::default()
                },
                priorities: true,
                seed: 1,
            };
            let o = simulate(&tiny(), &jobs, &request).unwrap();
            assert!((o.makespan_s - 40.0).abs() < 1e-6, "{scheduler:?} {o:?}");
            assert!((o.weighted_flowtime_s - 180.0).abs() < 1e-6);
            assert_eq!(o.vms_per_dc, [2]);
            let plain = Request {
                priorities: false,
                ..request
            };
            let o = simulate(&tiny(), &jobs, &plain).unwrap();
            assert!((o.makespan_s - 30.0).abs() < 1e-6, "{o:?}");
            assert!((o.weighted_flowtime_s - 170.0).abs() < 1e-6);
        }
    }

    #[test]
    fn creation_costs_messages_times_latency_and_full_datacenters_pass_the_vm_on() {
        // Two datacenters of two 1-slot hosts, latencies 1 s and 0.5 s; Best Effort asks both
        // hosts of a datacenter per VM. LLTF: VMs 1-2 in the 0.5 s one (1 + 2 messages, 1.5 s
        // each), VM 3 tries it (full: the request alone, 0.5 s) then the 1 s one (3 s): 6.5 s.
        let cloud = Cloud {
            cores: vec![1; 4],
            core_mips: vec![100.0; 4],
            vm_slots: vec![1; 4],
            dc_start: vec![0, 2, 4],
            latency_s: vec![1.0, 0.5],
        };
        let request = Request {
            vms: 3,
            broker: BrokerPolicy::Lltf,
            params: SchedulerParams {
                scheduler: VmScheduler::BestEffort,
                ..Default::default()
            },
            priorities: true,
            seed: 1,
        };
        let jobs = [Job {
            length_mi: 100,
            weight: 1.0,
        }];
        let o = simulate(&cloud, &jobs, &request).unwrap();
        assert_eq!(o.vms_per_dc, [1, 2]);
        assert_eq!(o.messages, 6);
        assert!((o.creation_s - 6.5).abs() < 1e-9, "{o:?}");
        assert!((o.makespan_s - 7.5).abs() < 1e-9);
        // The job waited the 6.5 s of creation, then ran 1 s (100 MI at 100 MIPS): weight 1.
        assert!((o.weighted_flowtime_s - 7.5).abs() < 1e-9, "{o:?}");
        // A request no datacenter has room for creates nothing; with no VM at all it fails.
        let more = Request { vms: 5, ..request };
        assert_eq!(simulate(&cloud, &jobs, &more).unwrap().vms_per_dc, [2, 2]);
        let none = Cloud {
            vm_slots: vec![0; 4],
            ..cloud
        };
        assert!(
            simulate(&none, &jobs, &request)
                .unwrap_err()
                .contains("no room")
        );
    }
}
