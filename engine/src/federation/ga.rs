//! Genetic-algorithm placement, after Agostinho et al. as seed 003 describes it: the population
//! is sets of the datacenter's hosts (chromosomes, each gene a host), a chromosome's fitness the
//! inverse of its hosts' accumulated load, load the number of VMs on a host; one message per
//! host of each chromosome to learn it ("the number of messages sent by GA depends on both the
//! number of hosts within each chromosome and the population size": 100 x 12 = 1,200 per VM at
//! the seed's settings). The VM goes to the host with the fewest VMs in the fittest chromosome.
//!
//! Chosen where the seed is silent: one generation (the fitness evaluation is the cost the
//! seed describes; crossover and mutation would only re-rank the same hosts), chromosomes drawn
//! uniformly without repeated genes, fitness 1 / (1 + VMs) so that an empty chromosome is
//! finite, ties to the first chromosome and the first gene.

use ingest::rng::Rng;

use super::hosts::{Hosts, Placement, distinct, suitable};

/// Places one VM with a population of `population` chromosomes of `genes` hosts.
pub fn place(hosts: &impl Hosts, genes: usize, population: u32, rng: &mut Rng) -> Placement {
    let candidates = suitable(hosts);
    if candidates.is_empty() {
        return Placement {
            host: None,
            messages: 0,
        };
    }
    let genes = genes.clamp(1, candidates.len());
    let mut best: Option<(f64, Vec<usize>)> = None;
    for _ in 0..population {
        let chromosome = distinct(&candidates, genes, rng);
        let load: u64 = chromosome.iter().map(|&h| hosts.vms(h) as u64).sum();
        let fitness = 1.0 / (1.0 + load as f64);
        if best.as_ref().is_none_or(|(f, _)| fitness > *f) {
            best = Some((fitness, chromosome));
        }
    }
    let host = best.and_then(|(_, c)| c.into_iter().min_by_key(|&h| hosts.vms(h)));
    Placement {
        host,
        messages: population * genes as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::super::hosts::tests::Table;
    use super::*;

    #[test]
    fn one_message_per_gene_per_chromosome() {
        let dc = Table::new(&[4; 20], &[1; 20]);
        let p = place(&dc, 12, 100, &mut Rng::new(3, 0));
        assert_eq!(p.messages, 1_200);
        assert!(p.host.is_some());
    }

    #[test]
    fn the_fittest_chromosome_gives_its_emptiest_host() {
        // Chromosomes of all 3 suitable hosts: every chromosome is the same set, and its
        // emptiest host (host 3, 0 VMs; host 1 is full) takes the VM.
        let mut dc = Table::new(&[2, 2, 2, 2], &[3, 0, 1, 0]);
        dc.slots[1] = 0;
        for seed in 0..10 {
            let p = place(&dc, 3, 5, &mut Rng::new(seed, 0));
            assert_eq!(
                p,
                Placement {
                    host: Some(3),
                    messages: 15
                }
            );
        }
        // With one gene per chromosome and enough of them, the emptiest suitable host is met.
        let p = place(&dc, 1, 200, &mut Rng::new(1, 0));
        assert_eq!(p.host, Some(3));
    }
}
