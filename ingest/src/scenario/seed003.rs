//! Seed 003's federation as chosen where its text is silent (Table 1, the host specifications,
//! is not in it): the one place these constants live, read by the `pse-1`/`pse-2` scenarios and
//! by `engine::federation::cloud` (where each choice's effect on the results is documented).

/// Datacenters D1..D5's network latency, microseconds (seed 003, section 4.2).
pub const LATENCY_US: [i64; 5] = [1_500_000, 800_000, 1_000_000, 150_000, 2_000_000];
/// Hosts per datacenter in the seed's main experiments.
pub const HOSTS_PER_DC: u32 = 20;
/// Host core counts, repeated over each datacenter's hosts (chosen).
pub const HOST_CORES: [u32; 4] = [4, 6, 4, 8];
/// MIPS per core in D1..D5: one speed everywhere (the seed gives none, and nothing says its
/// datacenters differ but for latency), calibrated on one figure only, Fig. 4a: the speed that
/// makes the largest difference from its four LLTF makespans at 10,000 PSE-1 jobs (PSO, ACO,
/// BE, GA: 664.75, 692.81, 727.51, 952.65 min) smallest. Every other number of Figs. 4-7 and
/// Tables 3-4 is a prediction (`engine::federation::cloud`). Before issue 60 the speeds
/// differed per datacenter, fitted to the very FLTF and LTIR gaps compared.
pub const CORE_MIPS: [f64; 5] = [CALIBRATED_MIPS; 5];
/// The one speed (above), MIPS per core.
pub const CALIBRATED_MIPS: f64 = 5_720.0;
/// VM slots per host core: 4 GiB of memory per core for t2.small-like VMs of 2 GiB (chosen).
pub const SLOTS_PER_CORE: u32 = 2;
/// The largest host's cores (the normalisation unit of the scenarios' CPU columns).
pub const MAX_CORES: u32 = 8;
