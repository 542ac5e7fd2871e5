//! What the infrastructure-level schedulers see of a datacenter: its hosts by local index
//! (0..len), which can take the VM, their load and their VMs. The seed's federated cloud
//! (`cloud.rs`) and a GCD cell split into datacenters (`policy.rs`) both present their hosts
//! this way, so each algorithm is one pure function tested on hand-built datacenters.

/// A datacenter's hosts as a scheduler sees them (each query stands for what a message to the
/// host returns; the algorithms count those messages).
pub trait Hosts {
    /// Hosts in the datacenter.
    fn count(&self) -> usize;
    /// Whether host `h` can take the VM (room for its CPU, memory, storage and bandwidth).
    fn suitable(&self, h: usize) -> bool;
    /// Host `h`'s CPU load: the cores its VMs use over its cores (above 1 when oversubscribed,
    /// the CPU being time-shared). ACO's and PSO's measure.
    fn load(&self, h: usize) -> f64;
    /// Cores in use on host `h` (Best Effort's measure).
    fn cores_used(&self, h: usize) -> f64;
    /// VMs on host `h` (GA's load measure, and "a host with no VMs").
    fn vms(&self, h: usize) -> u32;
}

/// Where a scheduler put a VM and what asking cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The host (local index), `None` when no host is suitable.
    pub host: Option<usize>,
    /// Messages sent to hosts to decide (each costs the datacenter's latency).
    pub messages: u32,
}

/// The suitable hosts of `hosts`, in index order (the seed's "Get suitable hosts": the
/// datacenter's own list, no message).
pub fn suitable(hosts: &impl Hosts) -> Vec<usize> {
    (0..hosts.count()).filter(|&h| hosts.suitable(h)).collect()
}

/// `k` distinct members of `from` in random order (a partial Fisher-Yates shuffle of a copy).
pub fn distinct(from: &[usize], k: usize, rng: &mut ingest::rng::Rng) -> Vec<usize> {
    rng.first_shuffled(from.to_vec(), k)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A hand-built datacenter: cores, VMs and VM slots per host.
    #[derive(Debug, Clone)]
    pub struct Table {
        pub cores: Vec<u32>,
        pub vms: Vec<u32>,
        pub slots: Vec<u32>,
    }

    impl Table {
        pub fn new(cores: &[u32], vms: &[u32]) -> Table {
            Table {
                cores: cores.to_vec(),
                vms: vms.to_vec(),
                slots: cores.iter().map(|c| 2 * c).collect(),
            }
        }
    }

    impl Hosts for Table {
        fn count(&self) -> usize {
            self.cores.len()
        }
        fn suitable(&self, h: usize) -> bool {
            self.vms[h] < self.slots[h]
        }
        fn load(&self, h: usize) -> f64 {
            self.vms[h] as f64 / self.cores[h] as f64
        }
        fn cores_used(&self, h: usize) -> f64 {
            self.vms[h] as f64
        }
        fn vms(&self, h: usize) -> u32 {
            self.vms[h]
        }
    }

    #[test]
    fn distinct_draws_each_member_at_most_once() {
        let mut rng = ingest::rng::Rng::new(7, 0);
        let from = [3, 5, 8, 13, 21];
        let mut got = distinct(&from, 4, &mut rng);
        assert_eq!(got.len(), 4);
        got.sort_unstable();
        got.dedup();
        assert_eq!(got.len(), 4);
        assert!(got.iter().all(|g| from.contains(g)));
        assert_eq!(distinct(&from, 9, &mut rng).len(), 5);
    }
}
