//! Genetic-algorithm placement, after Agostinho et al. as seed 003 describes it: the population
//! is sets of the datacenter's hosts (chromosomes, each gene a host), a chromosome's fitness the
//! inverse of its hosts' accumulated load, load the number of VMs on a host; one message per
//! host of each chromosome of the first population to learn it ("the number of messages sent by
//! GA depends on both the number of hosts within each chromosome and the population size": 100 x
//! 12 = 1,200 per VM at the seed's settings). The VM goes to the host with the fewest VMs in the
//! fittest chromosome of the last generation.
//!
//! Chosen where the seed is silent ([`Evolution`], each a setting): `ga_generations` (10)
//! generations after the first; each keeps its fittest chromosome (elitism) and breeds the rest
//! from parents picked by binary tournaments, with one-point crossover (probability
//! `ga_crossover`, 0.9; a gene its chromosome already has is replaced by a host it lacks) and
//! per-gene mutation to a host the chromosome lacks (`ga_mutation`, 0.1). A host's load, once
//! learned, is known for the rest of the placement: a later generation sends a message only for
//! a host no chromosome had yet. Chromosomes are drawn uniformly without repeated genes,
//! fitness 1 / (1 + VMs) so that an empty chromosome is finite, ties to the first chromosome
//! and the first gene.

use ingest::rng::Rng;

use super::hosts::{Hosts, Placement, distinct, suitable};

/// How a population evolves after the first (module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evolution {
    /// Chromosomes in each population.
    pub population: u32,
    /// Generations after the first.
    pub generations: u32,
    /// Probability that two parents cross over.
    pub crossover: f64,
    /// Probability that a gene mutates.
    pub mutation: f64,
}

/// Places one VM with chromosomes of `genes` hosts evolved by `evolution`.
pub fn place(hosts: &impl Hosts, genes: usize, evolution: Evolution, rng: &mut Rng) -> Placement {
    let candidates = suitable(hosts);
    if candidates.is_empty() {
        return Placement {
            host: None,
            messages: 0,
        };
    }
    let genes = genes.clamp(1, candidates.len());
    let size = evolution.population.max(1) as usize;
    // Genes are positions in `candidates`; `known` says whose load a message has brought.
    let positions: Vec<usize> = (0..candidates.len()).collect();
    let mut known = vec![false; candidates.len()];
    let mut messages = 0u32;
    let mut population: Vec<Vec<usize>> = (0..size)
        .map(|_| distinct(&positions, genes, rng))
        .collect();
    for c in &population {
        messages += c.len() as u32;
        c.iter().for_each(|&g| known[g] = true);
    }
    let vms = |g: usize| u64::from(hosts.vms(candidates[g]));
    let fitness = |c: &[usize]| 1.0 / (1.0 + c.iter().map(|&g| vms(g)).sum::<u64>() as f64);
    // The fittest (the first of equals).
    let fittest =
        |fit: &[f64]| (0..fit.len()).fold(0, |best, k| if fit[k] > fit[best] { k } else { best });
    let mut fit: Vec<f64> = population.iter().map(|c| fitness(c)).collect();
    let mut in_child = vec![false; candidates.len()];
    for _ in 0..evolution.generations {
        let elite = fittest(&fit);
        let mut next = vec![population[elite].clone()];
        let mut next_fit = vec![fit[elite]];
        while next.len() < size {
            let mut pick = || {
                let (a, b) = (
                    rng.below(size as u64) as usize,
                    rng.below(size as u64) as usize,
                );
                if fit[b] > fit[a] { b } else { a }
            };
            let (mother, father) = (pick(), pick());
            let mut child = population[mother].clone();
            if rng.chance(evolution.crossover) && genes > 1 {
                let cut = 1 + rng.below(genes as u64 - 1) as usize;
                child[cut..].copy_from_slice(&population[father][cut..]);
            }
            // A repeated gene, or one that mutates, becomes a host the child lacks.
            in_child.iter_mut().for_each(|x| *x = false);
            let lacking = candidates.len() - genes;
            for k in 0..genes {
                let repeated = in_child[child[k]];
                if (repeated || rng.chance(evolution.mutation)) && lacking > 0 {
                    let mut g = rng.below(candidates.len() as u64) as usize;
                    while in_child[g] || child[k + 1..].contains(&g) {
                        g = rng.below(candidates.len() as u64) as usize;
                    }
                    child[k] = g;
                }
                in_child[child[k]] = true;
            }
            for &g in &child {
                if !known[g] {
                    known[g] = true;
                    messages += 1;
                }
            }
            next_fit.push(fitness(&child));
            next.push(child);
        }
        population = next;
        fit = next_fit;
    }
    let best = &population[fittest(&fit)];
    let host = best
        .iter()
        .copied()
        .min_by_key(|&g| vms(g))
        .map(|g| candidates[g]);
    Placement { host, messages }
}

#[cfg(test)]
mod tests {
    use super::super::hosts::tests::Table;
    use super::*;

    fn evolution(population: u32, generations: u32) -> Evolution {
        Evolution {
            population,
            generations,
            crossover: 0.9,
            mutation: 0.1,
        }
    }

    /// The first population asks every gene's host: 100 x 12 messages; with 20 hosts every one
    /// is then known, so the 10 generations after it ask nothing more.
    #[test]
    fn one_message_per_gene_of_the_first_population() {
        let dc = Table::new(&[4; 20], &[1; 20]);
        let p = place(&dc, 12, evolution(100, 10), &mut Rng::new(3, 0));
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
            let p = place(&dc, 3, evolution(5, 10), &mut Rng::new(seed, 0));
            assert_eq!(
                p,
                Placement {
                    host: Some(3),
                    messages: 15
                }
            );
        }
    }

    /// Evolution finds what one generation misses: 12 hosts, one of them empty, the others
    /// with 3 VMs; chromosomes of 2 genes, a population of 2. One population (no generation
    /// after it) holds the empty host 1 - (5/6)^2 = 31 % of the time (a chromosome lacks it with
    /// probability 11/12 x 10/11); 150 generations of mutation (a gene turns into a given
    /// lacking host with probability 1 %) and selection (elitism keeps it once met) find it in
    /// nearly every run, each new host met costing one message.
    #[test]
    fn generations_find_the_empty_host_one_population_misses() {
        let mut loads = [3u32; 12];
        loads[7] = 0;
        let dc = Table::new(&[8; 12], &loads);
        let found = |generations| {
            (0..200u64)
                .filter(|&s| {
                    place(&dc, 2, evolution(2, generations), &mut Rng::new(s, 9)).host == Some(7)
                })
                .count()
        };
        let (once, evolved) = (found(0), found(150));
        assert!((40..=85).contains(&once), "{once}");
        assert!(evolved >= 180, "{evolved}");
        let p = place(&dc, 2, evolution(2, 150), &mut Rng::new(1, 9));
        assert!((4..=12).contains(&p.messages), "{p:?}");
    }
}
