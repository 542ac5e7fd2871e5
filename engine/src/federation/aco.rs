//! Ant colony placement (seed 003, "Variant based on ACO", Fig. 1's activity diagram). An ant
//! (the VM) starts on a random suitable host. Each step ("Get load information") is a message
//! to the host it stands on, whether it has just moved there or stays. On each host it reads the host's load into its private load table, then swaps tables with the host
//! (the pheromone trail: later ants read what earlier ones saw). A host with no VMs takes the VM
//! at once. Otherwise the ant moves, with the mutation probability to a random other suitable
//! host, else to the least-loaded suitable host in its table; the probability falls by the
//! decay after every step (0.6, 0.5, ..., 0 at the seed's 0.6 and 0.1). After maxSteps steps it
//! delivers the VM to the host it stands on.
//!
//! Chosen where the seed is silent: each record carries when it was read, and a swap keeps the
//! newer record on both sides (without ages, stale records pile VMs onto hosts that have filled
//! since: 8 VMs on a 4-core host in the seed's federation, ACO 18 % behind Best Effort instead
//! of the paper's 5 % ahead); a random move never picks the current host.
//!
//! Invariant: `LoadTables` is a dense hosts x hosts matrix per datacenter (row = the host's
//! table, NaN = no record), kept across VMs; its size is fixed when the datacenter's is.

use ingest::rng::Rng;

use crate::ties::{least_by, peek_salt};
use serde::{Deserialize, Serialize};

use super::hosts::{Hosts, Placement, suitable};

/// The load tables of a datacenter's hosts (the pheromone), kept from ant to ant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadTables {
    hosts: usize,
    /// Row-major: entry (h, k) is host h's record of host k's load, NaN when it has none.
    load: Vec<f64>,
    /// When each entry was read (the count of reads before it in this datacenter).
    read_at: Vec<u64>,
    /// Reads so far.
    reads: u64,
}

impl LoadTables {
    /// Empty tables for a datacenter of `hosts` hosts.
    pub fn new(hosts: usize) -> LoadTables {
        LoadTables {
            hosts,
            load: vec![f64::NAN; hosts * hosts],
            read_at: vec![0; hosts * hosts],
            reads: 0,
        }
    }

    /// Hosts in the datacenter.
    pub fn hosts(&self) -> usize {
        self.hosts
    }

    /// Host `h`'s table.
    pub fn row(&self, h: usize) -> &[f64] {
        &self.load[h * self.hosts..(h + 1) * self.hosts]
    }

    /// Host `h`'s table, loads and read times.
    fn row_mut(&mut self, h: usize) -> (&mut [f64], &mut [u64]) {
        let r = h * self.hosts..(h + 1) * self.hosts;
        (&mut self.load[r.clone()], &mut self.read_at[r])
    }
}

/// ACO's parameters for one datacenter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ant {
    /// Visits before the ant delivers (maxSteps).
    pub max_steps: usize,
    /// Probability of a random move at the first step.
    pub mutation_rate: f64,
    /// What the probability loses per step.
    pub decay: f64,
}

/// Places one VM; `tables` are the datacenter's load tables (updated).
pub fn place(hosts: &impl Hosts, tables: &mut LoadTables, ant: Ant, rng: &mut Rng) -> Placement {
    let candidates = suitable(hosts);
    if candidates.is_empty() {
        return Placement {
            host: None,
            messages: 0,
        };
    }
    debug_assert_eq!(tables.hosts, hosts.count());
    let mut known = vec![f64::NAN; hosts.count()];
    let mut known_at = vec![0u64; hosts.count()];
    let mut current = candidates[rng.below(candidates.len() as u64) as usize];
    let (mut messages, mut rate) = (1u32, ant.mutation_rate);
    loop {
        if hosts.vms(current) == 0 {
            break;
        }
        known[current] = hosts.load(current);
        tables.reads += 1;
        known_at[current] = tables.reads;
        let (row, row_at) = tables.row_mut(current);
        for k in 0..row.len() {
            // The newer record wins, on the ant and on the host.
            if known[k].is_nan() || (!row[k].is_nan() && row_at[k] > known_at[k]) {
                (known[k], known_at[k]) = (row[k], row_at[k]);
            } else {
                (row[k], row_at[k]) = (known[k], known_at[k]);
            }
        }
        if messages as usize >= ant.max_steps {
            break;
        }
        let next = if candidates.len() > 1 && rng.chance(rate) {
            let k = rng.below(candidates.len() as u64 - 1) as usize;
            let pick = candidates[k];
            if pick == current {
                candidates[candidates.len() - 1]
            } else {
                pick
            }
        } else {
            least_loaded_known(&known, &candidates, peek_salt(rng)).unwrap_or(current)
        };
        rate = (rate - ant.decay).max(0.0);
        current = next;
        messages += 1;
    }
    Placement {
        host: Some(current),
        messages,
    }
}

/// The suitable host with the least load in `known` (ties by [`tie_key`] under `salt`, not the
/// lowest index: issue 55).
fn least_loaded_known(known: &[f64], candidates: &[usize], salt: u64) -> Option<usize> {
    let seen = candidates.iter().copied().filter(|&h| !known[h].is_nan());
    least_by(seen, |&h| known[h], |&h| h as u64, salt)
}

#[cfg(test)]
mod tests {
    use super::super::hosts::tests::Table;
    use super::*;

    const NO_MUTATION: Ant = Ant {
        max_steps: 12,
        mutation_rate: 0.0,
        decay: 0.1,
    };

    /// Three busy hosts with loads 0.5, 0.75 and 1.0; every table holds a stale 0.1 for host 2.
    fn stale() -> (Table, LoadTables) {
        let dc = Table::new(&[4, 4, 4], &[2, 3, 4]);
        let mut tables = LoadTables::new(3);
        for h in 0..3 {
            tables.row_mut(h).0[2] = 0.1;
        }
        (dc, tables)
    }

    #[test]
    fn ants_follow_the_pheromone_and_correct_it() {
        // Worked by hand (no mutation, maxSteps 12: 12 messages, as no host is empty). From
        // host 0: its table sends the ant to host 2 (0.1, stale); there it reads 1.0 and goes
        // back to host 0, the least loaded it knows, and stays to the end. From host 1:
        // 1 -> 2 (stale 0.1, really 1.0) -> back to 1 (0.75, the least it knows; it never
        // learns of host 0). From host 2: it reads 1.0 itself, knows no other host, stays.
        let expected = [(0, 12), (1, 12), (2, 12)];
        let loads = [0.5, 0.75, 1.0];
        let mut starts = [false; 3];
        for seed in 0..40 {
            let (dc, mut tables) = stale();
            let mut rng = Rng::new(seed, 0);
            let start = candidates_start(&dc, seed);
            let p = place(&dc, &mut tables, NO_MUTATION, &mut rng);
            starts[start] = true;
            assert_eq!(
                (p.host.unwrap(), p.messages),
                expected[start],
                "from {start}"
            );
            if start != 2 {
                // The trail now holds the truth about the start and host 2 on both.
                for h in [start, 2] {
                    assert_eq!(tables.row(h)[start], loads[start]);
                    assert_eq!(tables.row(h)[2], 1.0);
                }
                // The host it never visited keeps its stale record.
                assert_eq!(tables.row(1 - start)[2], 0.1);
            }
        }
        assert_eq!(starts, [true; 3]);
    }

    /// The start host the ant of `seed` draws (the first draw of its stream).
    fn candidates_start(dc: &Table, seed: u64) -> usize {
        let c = suitable(dc);
        c[Rng::new(seed, 0).below(c.len() as u64) as usize]
    }

    #[test]
    fn max_steps_bounds_the_walk_and_an_empty_host_ends_it() {
        // Always mutating, the ant walks at random until maxSteps: exactly 4 messages.
        let dc = Table::new(&[4; 6], &[1, 2, 3, 4, 5, 6]);
        let wander = Ant {
            max_steps: 4,
            mutation_rate: 1.0,
            decay: 0.0,
        };
        for seed in 0..20 {
            let mut tables = LoadTables::new(6);
            let p = place(&dc, &mut tables, wander, &mut Rng::new(seed, 0));
            assert_eq!(p.messages, 4);
        }
        // An empty host takes the VM on arrival.
        let dc = Table::new(&[4; 6], &[1, 2, 0, 4, 5, 6]);
        for seed in 0..20 {
            let mut tables = LoadTables::new(6);
            let p = place(&dc, &mut tables, wander, &mut Rng::new(seed, 0));
            assert!(p.messages <= 4);
            if p.host == Some(2) {
                continue;
            }
            assert_eq!(
                p.messages, 4,
                "only maxSteps ends a walk that meets no empty host"
            );
        }
    }
}
