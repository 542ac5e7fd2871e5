//! Particle swarm placement (seed 003, "Variant based on PSO"). A particle (the VM) starts on a
//! random suitable host; its neighbourhood is other suitable hosts drawn at random, without
//! revisits, so that start and neighbourhood together are the explored share of the datacenter
//! (12 of 20 hosts at 60 %). The particle visits its neighbours one message each; a host with no
//! VMs takes the VM at once ("Deliver VM to host"); otherwise the particle moves to the
//! neighbour with the least load, or stays where it started if every neighbour is busier, and
//! delivers the VM there. Ties keep the earlier visited host.

use ingest::rng::Rng;

use super::hosts::{Hosts, Placement, distinct, suitable};

/// Places one VM, exploring `explore` hosts at most.
pub fn place(hosts: &impl Hosts, explore: usize, rng: &mut Rng) -> Placement {
    let candidates = suitable(hosts);
    if candidates.is_empty() {
        return Placement {
            host: None,
            messages: 0,
        };
    }
    let visits = distinct(&candidates, explore.max(1), rng);
    let mut best = visits[0];
    let mut messages = 0;
    for &h in &visits {
        messages += 1;
        if hosts.vms(h) == 0 {
            best = h;
            break;
        }
        if hosts.load(h) < hosts.load(best) {
            best = h;
        }
    }
    Placement {
        host: Some(best),
        messages,
    }
}

#[cfg(test)]
mod tests {
    use super::super::hosts::tests::Table;
    use super::*;

    #[test]
    fn explores_its_neighbourhood_and_takes_the_least_loaded() {
        // Every host busy: the particle visits exactly `explore` hosts, and with all of them
        // explored it finds the least loaded (host 2: 1 VM on 4 cores).
        let dc = Table::new(&[2, 2, 4, 1, 2], &[2, 1, 1, 1, 3]);
        for seed in 0..20 {
            let mut rng = Rng::new(seed, 0);
            assert_eq!(
                place(&dc, 5, &mut rng),
                Placement {
                    host: Some(2),
                    messages: 5
                }
            );
            let mut rng = Rng::new(seed, 0);
            assert_eq!(place(&dc, 3, &mut rng).messages, 3);
        }
    }

    #[test]
    fn an_empty_host_takes_the_vm_at_once() {
        // Host 3 is empty: the particle stops there, after as many messages as hosts visited
        // up to it (1 to 4), never 5.
        let dc = Table::new(&[2, 2, 4, 1, 2], &[2, 1, 1, 0, 3]);
        let mut seen = [false; 5];
        for seed in 0..200 {
            let p = place(&dc, 5, &mut Rng::new(seed, 0));
            assert_eq!(p.host, Some(3));
            assert!((1..=5).contains(&p.messages));
            seen[p.messages as usize - 1] = true;
        }
        assert_eq!(seen, [true; 5]);
    }

    #[test]
    fn only_suitable_hosts_are_visited() {
        let mut dc = Table::new(&[2, 2, 4], &[1, 0, 3]);
        dc.slots = vec![2, 0, 3];
        let p = place(&dc, 3, &mut Rng::new(1, 0));
        assert_eq!(
            p,
            Placement {
                host: Some(0),
                messages: 1
            }
        );
    }
}
