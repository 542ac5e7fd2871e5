//! Seed 003's federation as chosen where its text is silent (Table 1, the host specifications,
//! is not in it): the one place these constants live, read by the `pse-1`/`pse-2` scenarios and
//! by `engine::federation::cloud` (where each choice's effect on the results is documented).

/// Datacenters D1..D5's network latency, microseconds (seed 003, section 4.2).
pub const LATENCY_US: [i64; 5] = [1_500_000, 800_000, 1_000_000, 150_000, 2_000_000];
/// Hosts per datacenter in the seed's main experiments.
pub const HOSTS_PER_DC: u32 = 20;
/// Host core counts, repeated over each datacenter's hosts (chosen).
pub const HOST_CORES: [u32; 4] = [4, 6, 4, 8];
/// MIPS per core in D1..D5 (chosen; calibrated, see `engine::federation::cloud`).
pub const CORE_MIPS: [f64; 5] = [5_000.0, 5_350.0, 5_150.0, 5_700.0, 4_800.0];
/// VM slots per host core: 4 GiB of memory per core for t2.small-like VMs of 2 GiB (chosen).
pub const SLOTS_PER_CORE: u32 = 2;
/// The largest host's cores (the normalisation unit of the scenarios' CPU columns).
pub const MAX_CORES: u32 = 8;
