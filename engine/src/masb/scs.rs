//! Select Candidate Services (seed 000 section 5.1): which tasks an overloaded node moves out.
//!
//! A selection is **stable** when the tasks left behind fit the node (usage within capacity) and
//! their production requests fit too (the RUS rule), and it includes every **compulsory** task
//! (one whose constraints the node no longer satisfies). Its fitness is the node's allocation
//! score after the removal (SRAS on the remaining usage) divided by the total migration cost of
//! the selected tasks; an unstable selection has fitness -1. [`tabu_search`] explores selections
//! by single-task flips: `tabu_restarts` restarts from random selections, `tabu_steps` steps each
//! to the best unvisited neighbour, stopping after `tabu_patience` steps without improving the
//! best. Selecting every task always leaves the node stable, so it seeds the best and the search
//! always returns a stable selection. [`exhaustive`] checks all 2^n selections (tests, tiny nodes).

use std::collections::HashSet;

use ingest::rng::Rng;

use super::MasbConfig;
use super::score::{NodeState, score};

/// One task on the overloaded node, in normalised units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// CPU in use.
    pub cpu_use: f64,
    /// Memory in use.
    pub mem_use: f64,
    /// CPU requested.
    pub cpu_req: f64,
    /// Memory requested.
    pub mem_req: f64,
    /// Production task (its requests count in the RUS rule).
    pub production: bool,
    /// Migration cost, MB.
    pub cost_mb: f64,
    /// Must move (constraints no longer met).
    pub compulsory: bool,
}

/// A chosen set of tasks and its fitness.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// `chosen[i]`: task `i` moves out.
    pub chosen: Vec<bool>,
    /// Score after removal / total migration cost; -1 when unstable.
    pub fitness: f64,
    /// Total migration cost of the chosen tasks, MB.
    pub cost_mb: f64,
}

impl Selection {
    /// True when the node would be stable.
    pub fn stable(&self) -> bool {
        self.fitness >= 0.0
    }

    /// Better: higher fitness, then lower cost.
    fn beats(&self, other: &Selection) -> bool {
        self.fitness > other.fitness
            || (self.fitness == other.fitness && self.cost_mb < other.cost_mb)
    }
}

/// Evaluates a selection on a node of capacity `cpu_cap` / `mem_cap`.
pub fn evaluate(
    cpu_cap: f64,
    mem_cap: f64,
    tasks: &[Candidate],
    chosen: &[bool],
    c: &MasbConfig,
) -> Selection {
    let (mut cpu, mut mem, mut prod_cpu, mut prod_mem, mut cost) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut compulsory_left = false;
    for (t, &out) in tasks.iter().zip(chosen) {
        if out {
            cost += t.cost_mb;
        } else {
            cpu += t.cpu_use;
            mem += t.mem_use;
            if t.production {
                prod_cpu += t.cpu_req;
                prod_mem += t.mem_req;
            }
            compulsory_left |= t.compulsory;
        }
    }
    let stable = !compulsory_left
        && cpu <= cpu_cap
        && mem <= mem_cap
        && prod_cpu <= cpu_cap
        && prod_mem <= mem_cap;
    let fitness = match (stable, cost > 0.0) {
        (false, _) => -1.0,
        (true, false) => f64::INFINITY,
        (true, true) => {
            score(
                &c.sras,
                &NodeState {
                    cpu_cap,
                    mem_cap,
                    cpu,
                    mem,
                },
                c,
            ) / cost
        }
    };
    Selection {
        chosen: chosen.to_vec(),
        fitness,
        cost_mb: cost,
    }
}

/// The best selection by Tabu Search (see the module doc).
pub fn tabu_search(
    cpu_cap: f64,
    mem_cap: f64,
    tasks: &[Candidate],
    c: &MasbConfig,
    rng: &mut Rng,
) -> Selection {
    let n = tasks.len();
    let optional: Vec<usize> = (0..n).filter(|&i| !tasks[i].compulsory).collect();
    let mut best = evaluate(cpu_cap, mem_cap, tasks, &vec![true; n], c);
    let mut visited: HashSet<Vec<bool>> = HashSet::new();
    let mut without_improvement = 0;
    'restarts: for _ in 0..c.tabu_restarts {
        let mut current: Vec<bool> = tasks
            .iter()
            .map(|t| t.compulsory || rng.chance(0.25))
            .collect();
        let start = evaluate(cpu_cap, mem_cap, tasks, &current, c);
        if start.beats(&best) {
            best = start;
        }
        visited.insert(current.clone());
        for _ in 0..c.tabu_steps {
            let mut next: Option<Selection> = None;
            for &i in &optional {
                current[i] = !current[i];
                if !visited.contains(&current) {
                    let s = evaluate(cpu_cap, mem_cap, tasks, &current, c);
                    if next.as_ref().is_none_or(|b| s.beats(b)) {
                        next = Some(s);
                    }
                }
                current[i] = !current[i];
            }
            let Some(step) = next else { break };
            current.clone_from(&step.chosen);
            visited.insert(current.clone());
            if step.beats(&best) {
                best = step;
                without_improvement = 0;
            } else {
                without_improvement += 1;
                if without_improvement >= c.tabu_patience {
                    break 'restarts;
                }
            }
        }
    }
    best
}

/// The best selection over all 2^n subsets (n <= 20).
pub fn exhaustive(cpu_cap: f64, mem_cap: f64, tasks: &[Candidate], c: &MasbConfig) -> Selection {
    let n = tasks.len();
    assert!(n <= 20, "exhaustive search is for small nodes");
    let mut best = evaluate(cpu_cap, mem_cap, tasks, &vec![true; n], c);
    for mask in 0u32..(1 << n) {
        let chosen: Vec<bool> = (0..n).map(|i| mask & (1 << i) != 0).collect();
        let s = evaluate(cpu_cap, mem_cap, tasks, &chosen, c);
        if s.beats(&best) {
            best = s;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::masb::cost::migration_cost;

    /// A random overloaded node of `n` tasks on a 0.5 CPU / 0.5 memory machine (SCS only runs
    /// on overloaded nodes: drawn again until moving nothing is unstable).
    fn random_node(rng: &mut Rng, n: usize, c: &MasbConfig) -> Vec<Candidate> {
        loop {
            let tasks = random_tasks(rng, n, c);
            if !evaluate(0.5, 0.5, &tasks, &vec![false; n], c).stable() {
                return tasks;
            }
        }
    }

    fn random_tasks(rng: &mut Rng, n: usize, c: &MasbConfig) -> Vec<Candidate> {
        let scale = 1.3 / n as f64; // about 130 % of capacity in use
        (0..n)
            .map(|_| {
                let (cpu_use, mem_use) = (scale * rng.f64(), scale * rng.f64() * 0.8);
                Candidate {
                    cpu_use,
                    mem_use,
                    cpu_req: cpu_use * (1.0 + rng.f64()),
                    mem_req: mem_use * 1.1,
                    production: rng.chance(0.3),
                    cost_mb: migration_cost(cpu_use, mem_use, c).cost_mb,
                    compulsory: rng.chance(0.05),
                }
            })
            .collect()
    }

    #[test]
    fn small_hand_checked_node() {
        let c = MasbConfig::default();
        // A 0.5/0.5 node with three tasks using 0.225/0.225 each (135 %, overloaded). Moving any
        // one leaves 0.45/0.45 = 90 % used: SRAS 500^((0.1-0.6)^2) - 0.8 = 500^0.25 - 0.8 =
        // 3.93, its peak. Moving two leaves 45 % (SRAS 500^0.0025 - 0.8 = 0.22) and moving all
        // leaves an idle node (1.90), each at a higher cost. So the cheapest single task wins:
        // fitness 3.93 / 100.
        let t = |cost_mb| Candidate {
            cpu_use: 0.225,
            mem_use: 0.225,
            cpu_req: 0.225,
            mem_req: 0.225,
            production: false,
            cost_mb,
            compulsory: false,
        };
        let tasks = [t(300.0), t(100.0), t(200.0)];
        let best = exhaustive(0.5, 0.5, &tasks, &c);
        assert_eq!(best.chosen, vec![false, true, false]);
        assert!((best.fitness - (500f64.powf(0.25) - 0.8) / 100.0).abs() < 1e-12);
        let mut rng = Rng::new(1, 1);
        assert_eq!(
            tabu_search(0.5, 0.5, &tasks, &c, &mut rng).chosen,
            best.chosen
        );
    }

    #[test]
    fn compulsory_tasks_always_move() {
        let c = MasbConfig::default();
        let mut tasks = vec![Candidate {
            cpu_use: 0.01,
            mem_use: 0.01,
            cpu_req: 0.01,
            mem_req: 0.01,
            production: false,
            cost_mb: 5_000.0,
            compulsory: true,
        }];
        tasks.push(Candidate {
            compulsory: false,
            cost_mb: 100.0,
            ..tasks[0]
        });
        let s = tabu_search(0.5, 0.5, &tasks, &c, &mut Rng::new(2, 2));
        assert!(s.chosen[0] && s.stable());
        let unstable = evaluate(0.5, 0.5, &tasks, &[false, true], &c);
        assert!(!unstable.stable(), "leaving a compulsory task is unstable");
    }

    /// Mean of found / optimal fitness over 300 random overloaded nodes of 4..=14 tasks, and how
    /// often the optimum itself was found; asserts every selection is stable.
    fn compare_with_exhaustive(c: &MasbConfig) -> (f64, usize) {
        let mut rng = Rng::new(42, 0);
        let (mut ratio_sum, mut exact, trials) = (0.0, 0, 300);
        for trial in 0..trials {
            let n = 4 + trial % 11;
            let tasks = random_node(&mut rng, n, c);
            let optimum = exhaustive(0.5, 0.5, &tasks, c);
            let found = tabu_search(0.5, 0.5, &tasks, c, &mut Rng::new(7, trial as u64));
            assert!(found.stable(), "trial {trial}: unstable selection");
            assert!(found.fitness <= optimum.fitness + 1e-12);
            ratio_sum += if optimum.fitness > 0.0 {
                found.fitness / optimum.fitness
            } else {
                1.0
            };
            exact += usize::from(found.fitness == optimum.fitness);
        }
        (ratio_sum / trials as f64, exact)
    }

    /// Stated gap: with the paper's settings (25 restarts x 5 steps, stop after 6 steps without
    /// improvement) Tabu Search reaches on average >= 85 % of the optimal fitness (measured
    /// 86.6 %, optimum found in 172 of 300 nodes); the early stop is what costs: without it
    /// (all 25 restarts) it reaches >= 98 % (measured 99.3 %, 286 of 300).
    #[test]
    fn tabu_search_is_stable_and_within_the_stated_gap() {
        let (paper, exact) = compare_with_exhaustive(&MasbConfig::default());
        assert!(paper >= 0.85, "mean fitness ratio {paper}");
        assert!(exact >= 150, "optimum found in {exact} of 300");
        let no_early_stop = MasbConfig {
            tabu_patience: u32::MAX,
            ..MasbConfig::default()
        };
        let (full, exact) = compare_with_exhaustive(&no_early_stop);
        assert!(full >= 0.98, "mean fitness ratio {full}");
        assert!(exact >= 270, "optimum found in {exact} of 300");
    }
}
