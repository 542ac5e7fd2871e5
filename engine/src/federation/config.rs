//! The federation's settings: the broker's datacenter policy, the infrastructure-level VM
//! scheduler and its parameters (seed 003, section 4.3), and whether the VM level orders jobs
//! by priority. Defaults are the seed's.

use serde::{Deserialize, Serialize};

/// How the broker picks datacenters (seed 003, "Scheduler at the Broker level").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BrokerPolicy {
    /// Lowest-Latency-Time-First: datacenters by increasing latency, the next when one is full.
    #[default]
    Lltf,
    /// First-Latency-Time-First: datacenters in a random (seeded) order, the next when full.
    Fltf,
    /// Latency-Time-In-Round: datacenters by increasing latency, VM k to the k-th in circular
    /// order (the next with room when that one is full).
    Ltir,
}

/// The infrastructure-level VM-to-host scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VmScheduler {
    /// Particle swarm: the least-loaded host of a random neighbourhood, no revisits.
    #[default]
    Pso,
    /// Ant colony: an ant walks hosts guided by their load tables (pheromone).
    Aco,
    /// Genetic algorithm: the best of a population of random host sets.
    Ga,
    /// Best Effort: asks every host, takes the one with the fewest cores in use.
    BestEffort,
}

impl BrokerPolicy {
    /// Every broker policy, in the seed's order.
    pub const ALL: [BrokerPolicy; 3] = [BrokerPolicy::Lltf, BrokerPolicy::Fltf, BrokerPolicy::Ltir];

    /// The seed's name.
    pub fn name(self) -> &'static str {
        match self {
            BrokerPolicy::Lltf => "LLTF",
            BrokerPolicy::Fltf => "FLTF",
            BrokerPolicy::Ltir => "LTIR",
        }
    }
}

impl VmScheduler {
    /// Every scheduler, in the seed's order (best to worst in its results).
    pub const ALL: [VmScheduler; 4] = [
        VmScheduler::Pso,
        VmScheduler::Aco,
        VmScheduler::BestEffort,
        VmScheduler::Ga,
    ];

    /// The seed's name.
    pub fn name(self) -> &'static str {
        match self {
            VmScheduler::Pso => "PSO",
            VmScheduler::Aco => "ACO",
            VmScheduler::Ga => "GA",
            VmScheduler::BestEffort => "BE",
        }
    }
}

/// The infrastructure-level parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerParams {
    /// The scheduler.
    pub scheduler: VmScheduler,
    /// Fraction of a datacenter's hosts an algorithm explores: ACO's maxSteps, PSO's
    /// neighbourhood (with its start host), GA's chromosome size (seed: 0.6).
    pub explore_fraction: f64,
    /// ACO: probability of a random move at an ant's first step (seed: 0.6).
    pub mutation_rate: f64,
    /// ACO: what the mutation rate loses after every step (seed: 0.1; the seed says only that
    /// it "decreases with a decay rate factor": chosen linear, so that at the seed's settings
    /// an ant moves at random in its first 6 steps at most and ends on the least-loaded host
    /// it knows; a factor (0.6 x 0.9^k) leaves a random last move one time in five).
    pub mutation_decay: f64,
    /// GA: chromosomes in the population (seed: 100).
    pub ga_population: u32,
    /// GA: generations after the first (chosen: 10; `ga.rs`).
    pub ga_generations: u32,
    /// GA: probability that two parents cross over (chosen: 0.9).
    pub ga_crossover: f64,
    /// GA: probability that a gene mutates (chosen: 0.1).
    pub ga_mutation: f64,
}

impl Default for SchedulerParams {
    fn default() -> Self {
        SchedulerParams {
            scheduler: VmScheduler::Pso,
            explore_fraction: 0.6,
            mutation_rate: 0.6,
            mutation_decay: 0.1,
            ga_population: 100,
            ga_generations: 10,
            ga_crossover: 0.9,
            ga_mutation: 0.1,
        }
    }
}

impl SchedulerParams {
    /// GA's evolution settings.
    pub fn evolution(&self) -> super::ga::Evolution {
        super::ga::Evolution {
            population: self.ga_population,
            generations: self.ga_generations,
            crossover: self.ga_crossover,
            mutation: self.ga_mutation,
        }
    }

    /// Hosts explored in a datacenter of `hosts` (at least 1): 12 of 20 at the seed's 60 %.
    pub fn explored(&self, hosts: usize) -> usize {
        ((self.explore_fraction * hosts as f64).round() as usize).clamp(1, hosts.max(1))
    }

    /// What is wrong with the parameters, the key named.
    pub fn check(&self) -> Result<(), String> {
        let unit = |name: &str, v: f64| {
            if v.is_finite() && (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} must be within 0..=1, got {v}"))
            }
        };
        unit("explore_fraction", self.explore_fraction)?;
        if self.explore_fraction == 0.0 {
            return Err("explore_fraction must be above 0".into());
        }
        unit("mutation_rate", self.mutation_rate)?;
        unit("mutation_decay", self.mutation_decay)?;
        unit("ga_crossover", self.ga_crossover)?;
        unit("ga_mutation", self.ga_mutation)?;
        if self.ga_generations > 1_000 {
            return Err(format!(
                "ga_generations must be 0..=1,000, got {}",
                self.ga_generations
            ));
        }
        if !(1..=10_000).contains(&self.ga_population) {
            return Err(format!(
                "ga_population must be 1..=10,000, got {}",
                self.ga_population
            ));
        }
        Ok(())
    }
}
