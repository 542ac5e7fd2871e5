//! Seed 003's three-level federated scheduling: the broker picks datacenters by latency
//! (`broker.rs`: LLTF, FLTF, LTIR), an infrastructure-level scheduler maps each VM to a host of
//! that datacenter, paying for every message it sends to a host (`pso.rs`, `aco.rs`, `ga.rs`,
//! `best_effort.rs`, pure functions over a datacenter's [`hosts::Hosts`]), and the VM level hands
//! jobs to VMs by priority. `cloud.rs` runs the seed's experiments end to end on its federated
//! cloud with time-shared CPUs (`timeshare.rs`); `policy.rs` is policy `federation`, the same
//! schedulers placing a GCD cell's tasks (tasks as VMs, machines as hosts, the cell split into
//! datacenters).

pub mod aco;
pub mod best_effort;
pub mod broker;
pub mod cloud;
pub mod config;
pub mod ga;
pub mod hosts;
pub mod policy;
pub mod pso;
pub mod timeshare;

pub use config::{BrokerPolicy, SchedulerParams, VmScheduler};

use hosts::{Hosts, Placement};

/// Places one VM on `hosts` (a datacenter) with `params`' scheduler; `tables` are the
/// datacenter's ACO load tables (only ACO reads and updates them). The one dispatch both the
/// seed's cloud (`cloud.rs`) and the GCD policy (`policy.rs`) use.
pub fn place(
    params: &SchedulerParams,
    hosts: &impl Hosts,
    tables: &mut aco::LoadTables,
    rng: &mut ingest::rng::Rng,
) -> Placement {
    let explore = params.explored(hosts.count());
    match params.scheduler {
        VmScheduler::Pso => pso::place(hosts, explore, rng),
        VmScheduler::Aco => {
            let ant = aco::Ant {
                max_steps: explore,
                mutation_rate: params.mutation_rate,
                decay: params.mutation_decay,
            };
            aco::place(hosts, tables, ant, rng)
        }
        VmScheduler::Ga => ga::place(hosts, explore, params.evolution(), rng),
        VmScheduler::BestEffort => best_effort::place(hosts, crate::ties::peek_salt(rng)),
    }
}
pub use policy::{Federation, FederationConfig};
