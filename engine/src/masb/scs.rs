//! Select Candidate Services (seed 000 section 5.1): which tasks an overloaded node moves out
//! (and, under the offload option below, a stable DA node).
//!
//! A selection is **stable** when the tasks left behind fit the node (usage within capacity) and
//! their production requests fit within `scs_rus_limit` of it (the RUS rule, with headroom), and it includes every **compulsory** task
//! (one whose constraints the node no longer satisfies). Its fitness is the node's allocation
//! score after the removal (SRAS on the remaining usage) divided by the total migration cost of
//! the selected tasks; an unstable selection has fitness -1. [`tabu_search`] explores selections
//! by single-task flips: `tabu_restarts` restarts from random selections, `tabu_steps` steps each
//! to the best unvisited neighbour, stopping after `tabu_patience` steps without improving the
//! best. Selecting every task always leaves the node stable, so it seeds the best and the search
//! always returns a stable selection. [`exhaustive`] checks all 2^n selections (tests, tiny nodes).
//!
//! The `_for` forms serve a stable node's offload (`MasbConfig::offload_every_s`, not in seed
//! 000) with a [`Goal`] besides stability: what stays must score strictly more under SRAS than
//! the node does now, or must not be DA. Moving nothing never meets the first, nor, on a DA
//! node, the second; moving everything may meet neither, so their search can return an
//! unstable selection, which moves nothing.

use ingest::rng::Rng;
use rustc_hash::FxHashSet;

use super::MasbConfig;
use super::score::{NodeState, score};
use crate::classify::{NodeClass, NodeLoad, Thresholds, classify};
use crate::units::to_units;

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
        beats((self.fitness, self.cost_mb), (other.fitness, other.cost_mb))
    }
}

/// What a selection must leave behind besides a stable node (module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// Only stability: an overloaded node's SCS (seed 000 section 5.1).
    Stable,
    /// An SRAS score above this: the node's score now, [`score_staying`].
    BetterScore(f64),
    /// A node that [`classify`] does not call DA under these thresholds (the run's).
    NotDa(Thresholds),
}

/// What a selection leaves on a node of capacity `cpu_cap` / `mem_cap`, in normalised units.
#[derive(Debug, Clone, Copy, Default)]
struct Staying {
    cpu_cap: f64,
    mem_cap: f64,
    cpu: f64,
    mem: f64,
    prod_cpu: f64,
    prod_mem: f64,
    tasks: u32,
}

impl Goal {
    /// Whether a stable remainder, scoring `score` (SRAS), meets the goal.
    fn met(self, staying: &Staying, score: f64) -> bool {
        match self {
            Goal::Stable => true,
            Goal::BetterScore(above) => score > above,
            Goal::NotDa(thresholds) => {
                // Sums of unit amounts: back to the units classification reads, exactly.
                let units = |v: f64| to_units(v as f32);
                let load = NodeLoad {
                    cpu_cap: units(staying.cpu_cap),
                    mem_cap: units(staying.mem_cap),
                    cpu_used: units(staying.cpu),
                    mem_used: units(staying.mem),
                    prod_cpu_req: units(staying.prod_cpu),
                    prod_mem_req: units(staying.prod_mem),
                    tasks: staying.tasks,
                };
                classify(&load, &thresholds) != NodeClass::Da
            }
        }
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
    evaluate_for(cpu_cap, mem_cap, tasks, chosen, Goal::Stable, c)
}

/// [`evaluate`], stable only if what stays meets `goal` too (module doc).
pub fn evaluate_for(
    cpu_cap: f64,
    mem_cap: f64,
    tasks: &[Candidate],
    chosen: &[bool],
    goal: Goal,
    c: &MasbConfig,
) -> Selection {
    let (fitness, cost_mb) = measure(cpu_cap, mem_cap, tasks, chosen, goal, c);
    Selection {
        chosen: chosen.to_vec(),
        fitness,
        cost_mb,
    }
}

/// The SRAS score of the node with every task staying: what [`Goal::BetterScore`] must beat.
pub fn score_staying(cpu_cap: f64, mem_cap: f64, tasks: &[Candidate], c: &MasbConfig) -> f64 {
    let (cpu, mem) = tasks.iter().fold((0.0, 0.0), |(cpu, mem), t| {
        (cpu + t.cpu_use, mem + t.mem_use)
    });
    sras_of(cpu_cap, mem_cap, cpu, mem, c)
}

/// SRAS of a node of the given capacity and usage.
fn sras_of(cpu_cap: f64, mem_cap: f64, cpu: f64, mem: f64, c: &MasbConfig) -> f64 {
    let state = NodeState {
        cpu_cap,
        mem_cap,
        cpu,
        mem,
    };
    score(&c.sras, &state, c)
}

/// A selection's (fitness, cost in MB), as [`evaluate_for`] gives them, without copying it.
fn measure(
    cpu_cap: f64,
    mem_cap: f64,
    tasks: &[Candidate],
    chosen: &[bool],
    goal: Goal,
    c: &MasbConfig,
) -> (f64, f64) {
    let mut left = Staying {
        cpu_cap,
        mem_cap,
        ..Staying::default()
    };
    let (mut cost, mut compulsory_left) = (0.0, false);
    for (t, &out) in tasks.iter().zip(chosen) {
        if out {
            cost += t.cost_mb;
        } else {
            left.cpu += t.cpu_use;
            left.mem += t.mem_use;
            left.tasks += 1;
            if t.production {
                left.prod_cpu += t.cpu_req;
                left.prod_mem += t.mem_req;
            }
            compulsory_left |= t.compulsory;
        }
    }
    let stable = !compulsory_left
        && left.cpu <= cpu_cap
        && left.mem <= mem_cap
        && left.prod_cpu <= c.scs_rus_limit * cpu_cap
        && left.prod_mem <= c.scs_rus_limit * mem_cap;
    if !stable {
        return (-1.0, cost);
    }
    let staying = sras_of(cpu_cap, mem_cap, left.cpu, left.mem, c);
    let fitness = if !goal.met(&left, staying) {
        -1.0
    } else if cost > 0.0 {
        staying / cost
    } else {
        f64::INFINITY
    };
    (fitness, cost)
}

/// True when (fitness, cost) `a` is better than `b` ([`Selection::beats`]).
fn beats(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
}

/// The best selection by Tabu Search (see the module doc).
pub fn tabu_search(
    cpu_cap: f64,
    mem_cap: f64,
    tasks: &[Candidate],
    c: &MasbConfig,
    rng: &mut Rng,
) -> Selection {
    tabu_search_for(cpu_cap, mem_cap, tasks, Goal::Stable, c, rng)
}

/// [`tabu_search`] for selections that meet `goal` too (module doc).
pub fn tabu_search_for(
    cpu_cap: f64,
    mem_cap: f64,
    tasks: &[Candidate],
    goal: Goal,
    c: &MasbConfig,
    rng: &mut Rng,
) -> Selection {
    let n = tasks.len();
    let optional: Vec<usize> = (0..n).filter(|&i| !tasks[i].compulsory).collect();
    let evaluate = |chosen: &[bool]| evaluate_for(cpu_cap, mem_cap, tasks, chosen, goal, c);
    let mut best = evaluate(&vec![true; n]);
    let mut visited: FxHashSet<Vec<bool>> = FxHashSet::default();
    let mut without_improvement = 0;
    'restarts: for _ in 0..c.tabu_restarts {
        let mut current: Vec<bool> = tasks
            .iter()
            .map(|t| t.compulsory || rng.chance(0.25))
            .collect();
        let start = evaluate(&current);
        if start.beats(&best) {
            best = start;
        }
        visited.insert(current.clone());
        for _ in 0..c.tabu_steps {
            // The best unvisited neighbour (the first of equals): (flip, fitness, cost).
            let mut next: Option<(usize, (f64, f64))> = None;
            for &i in &optional {
                current[i] = !current[i];
                if !visited.contains(&current) {
                    let m = measure(cpu_cap, mem_cap, tasks, &current, goal, c);
                    if next.is_none_or(|(_, b)| beats(m, b)) {
                        next = Some((i, m));
                    }
                }
                current[i] = !current[i];
            }
            let Some((flip, (fitness, cost_mb))) = next else {
                break;
            };
            current[flip] = !current[flip];
            let step = Selection {
                chosen: current.clone(),
                fitness,
                cost_mb,
            };
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
    exhaustive_for(cpu_cap, mem_cap, tasks, Goal::Stable, c)
}

/// [`exhaustive`] for selections that meet `goal` too.
pub fn exhaustive_for(
    cpu_cap: f64,
    mem_cap: f64,
    tasks: &[Candidate],
    goal: Goal,
    c: &MasbConfig,
) -> Selection {
    let n = tasks.len();
    assert!(n <= 20, "exhaustive search is for small nodes");
    let evaluate = |chosen: &[bool]| evaluate_for(cpu_cap, mem_cap, tasks, chosen, goal, c);
    let mut best = evaluate(&vec![true; n]);
    for mask in 0u32..(1 << n) {
        let chosen: Vec<bool> = (0..n).map(|i| mask & (1 << i) != 0).collect();
        let s = evaluate(&chosen);
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
        // one leaves 0.45/0.45 used, 0.05 free: SRAS 500^((0.05-0.6)^2) - 0.8 = 500^0.3025 -
        // 0.8 = 5.75. Moving two leaves 0.275 free (500^0.1056 - 0.8 = 1.13) and moving all
        // leaves 0.5 free (500^0.01 - 0.8 = 0.26), each at a higher cost. So the cheapest single
        // task wins: fitness 5.75 / 100.
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
        assert!((best.fitness - (500f64.powf(0.3025) - 0.8) / 100.0).abs() < 1e-12);
        let mut rng = Rng::new(1, 1);
        assert_eq!(
            tabu_search(0.5, 0.5, &tasks, &c, &mut rng).chosen,
            best.chosen
        );
    }

    /// A stable node's offload (`offload_every_s`): a 0.5/0.5 node using 0.4/0.04 (DA) of
    /// tasks A (0.3/0.02, 100 MB) and B (0.1/0.02, 400 MB).
    ///
    /// Goal "better score", SRAS read as fractions: the node scores 500^((0.2-0.6)(0.92-0.6)) -
    /// 0.8 < 0, so 0. Moving B leaves 0.4/0.96 free, 500^(-0.072) - 0.8 < 0: no better, not a
    /// selection. Moving A leaves 0.8/0.96 free, 500^0.072 - 0.8 = 0.764, fitness 0.764 / 100;
    /// moving both 500^0.16 - 0.8 = 1.903 / 500 = 0.0038 < 0.0076. So A moves, and moving
    /// nothing never counts. In trace units (the default) the node scores 500^((0.1-0.6)(0.46-0.6))
    /// - 0.8 = 0.745 and every remainder less (a fuller node scores higher there): nothing moves.
    ///
    /// Goal "not DA", trace units: moving A leaves 20 % / 4 % (PA), scoring 500^((0.4-0.6)(0.48-
    /// 0.6)) - 0.8 = 0.361, fitness 0.361 / 100; moving B leaves 60 % / 4 % (PA), 500^((0.2-0.6)
    /// (0.48-0.6)) - 0.8 = 0.548 / 400; both 500^0.01 - 0.8 = 0.264 / 500. A moves.
    #[test]
    fn an_offload_moves_only_to_meet_its_goal() {
        let t = |cpu_use, mem_use, cost_mb| Candidate {
            cpu_use,
            mem_use,
            cpu_req: cpu_use,
            mem_req: mem_use,
            production: false,
            cost_mb,
            compulsory: false,
        };
        let tasks = [t(0.3, 0.02, 100.0), t(0.1, 0.02, 400.0)];
        let fraction = MasbConfig {
            sras: crate::masb::ScoreShape {
                units: Some(crate::masb::ScoreUnits::Fraction),
                ..MasbConfig::default().sras
            },
            ..MasbConfig::default()
        };
        let above = score_staying(0.5, 0.5, &tasks, &fraction);
        assert_eq!(above, 0.0);
        let better = Goal::BetterScore(above);
        let best = exhaustive_for(0.5, 0.5, &tasks, better, &fraction);
        assert_eq!(best.chosen, vec![true, false]);
        let want = (500f64.powf(0.2 * 0.36) - 0.8) / 100.0;
        assert!((best.fitness - want).abs() < 1e-12, "{}", best.fitness);
        let nothing = evaluate_for(0.5, 0.5, &tasks, &[false, false], better, &fraction);
        assert!(!nothing.stable());
        let mut rng = Rng::new(1, 1);
        let found = tabu_search_for(0.5, 0.5, &tasks, better, &fraction, &mut rng);
        assert_eq!(found.chosen, best.chosen);

        let trace = MasbConfig::default();
        let above = score_staying(0.5, 0.5, &tasks, &trace);
        assert!(
            (above - (500f64.powf(0.5 * 0.14) - 0.8)).abs() < 1e-12,
            "{above}"
        );
        let better = Goal::BetterScore(above);
        assert!(!exhaustive_for(0.5, 0.5, &tasks, better, &trace).stable());
        assert!(!tabu_search_for(0.5, 0.5, &tasks, better, &trace, &mut rng).stable());

        let not_da = Goal::NotDa(Thresholds::default());
        let nothing = evaluate_for(0.5, 0.5, &tasks, &[false, false], not_da, &trace);
        assert!(!nothing.stable());
        let best = exhaustive_for(0.5, 0.5, &tasks, not_da, &trace);
        assert_eq!(best.chosen, vec![true, false]);
        let want = (500f64.powf(0.2 * 0.12) - 0.8) / 100.0;
        assert!((best.fitness - want).abs() < 1e-12, "{}", best.fitness);
        let found = tabu_search_for(0.5, 0.5, &tasks, not_da, &trace, &mut rng);
        assert_eq!(found.chosen, best.chosen);
    }

    /// On 300 random stable nodes per goal (SRAS as fractions for "better score", where such
    /// offloads happen; trace units for "not DA"), Tabu Search's offload is never worse than the
    /// exhaustive optimum, leaves a node meeting the goal whenever it moves anything, and moves
    /// nothing exactly when no subset would do.
    #[test]
    fn offload_selections_meet_their_goal_and_match_exhaustive_search_on_whether_to_move() {
        let fraction = MasbConfig {
            sras: crate::masb::ScoreShape {
                units: Some(crate::masb::ScoreUnits::Fraction),
                ..MasbConfig::default().sras
            },
            ..MasbConfig::default()
        };
        let trace = MasbConfig::default();
        for (goal_name, c) in [("better score", &fraction), ("not DA", &trace)] {
            let mut rng = Rng::new(43, 0);
            let (mut moved, mut trials) = (0, 0);
            while trials < 300 {
                let n = 2 + trials % 9;
                let mut tasks = random_tasks(&mut rng, n, c);
                // Stable nodes from near idle to tight (a tight node may score more than any of
                // its remainders; an emptier one less than the empty node): nothing compulsory.
                let (cpu, mem) = tasks
                    .iter()
                    .fold((0.0, 0.0), |(c, m), t| (c + t.cpu_use, m + t.mem_use));
                // Every other node used within 75-90 % of both (tight), the rest 5-95 %.
                let (low, span) = if trials % 2 == 0 {
                    (0.75, 0.15)
                } else {
                    (0.05, 0.9)
                };
                let (kc, km) = (
                    0.5 * (low + span * rng.f64()) / cpu,
                    0.5 * (low + span * rng.f64()) / mem,
                );
                for t in &mut tasks {
                    (t.cpu_use, t.mem_use, t.compulsory) = (t.cpu_use * kc, t.mem_use * km, false);
                }
                if !evaluate(0.5, 0.5, &tasks, &vec![false; n], c).stable() {
                    continue;
                }
                let goal = if goal_name == "not DA" {
                    Goal::NotDa(Thresholds::default())
                } else {
                    Goal::BetterScore(score_staying(0.5, 0.5, &tasks, c))
                };
                let optimum = exhaustive_for(0.5, 0.5, &tasks, goal, c);
                let mut search_rng = Rng::new(7, trials as u64);
                let found = tabu_search_for(0.5, 0.5, &tasks, goal, c, &mut search_rng);
                assert_eq!(
                    found.stable(),
                    optimum.stable(),
                    "{goal_name}, trial {trials}"
                );
                assert!(found.fitness <= optimum.fitness + 1e-12);
                if found.stable() && found.chosen.iter().any(|&out| out) {
                    // Measured again without the goal: the selection is stable, and what
                    // stays scores more than before, or is not DA by the classifier's own test.
                    let plain = evaluate(0.5, 0.5, &tasks, &found.chosen, c);
                    assert!(plain.stable(), "{goal_name}");
                    let staying: Vec<Candidate> = tasks
                        .iter()
                        .zip(&found.chosen)
                        .filter(|(_, out)| !**out)
                        .map(|(t, _)| *t)
                        .collect();
                    match goal {
                        Goal::BetterScore(above) => {
                            assert!(score_staying(0.5, 0.5, &staying, c) > above)
                        }
                        _ => {
                            let (cpu, mem) = staying
                                .iter()
                                .fold((0.0, 0.0), |(c, m), t| (c + t.cpu_use, m + t.mem_use));
                            let (u, v) = (cpu / 0.5, mem / 0.5);
                            let (high, low) = (u.max(v), u.min(v));
                            assert!(!((0.7..0.9).contains(&high) && low < 0.7), "{goal_name}");
                        }
                    }
                    moved += 1;
                }
                trials += 1;
            }
            // Both outcomes occur (the test can fail either way).
            assert!(
                moved > 30 && moved < 270,
                "{goal_name}: moved on {moved} of 300 nodes"
            );
        }
    }

    /// Seed 000 section 5.1's sample: node 2274790707 (capacity 0.5 CPU, 0.2493 memory) runs 13
    /// tasks using 0.5598619 CPU (overloaded). The logged usage, requests, production flags and
    /// migration costs are the candidates; the paper's SCS chose tasks 243, 1447, 88 and 159.
    ///
    /// Worked by hand: leaving the paper's set leaves [0.322095, 0.173887] in use and production
    /// requests [0.440646, 0.198338] (the log's lines). Before, production CPU requests are at
    /// 0.481296 / 0.5 = 96 %: within a 100 % RUS limit, so only a limit below 96 % forces a
    /// production task out, as the paper's set does (hence `scs_rus_limit` 0.9). The paper's set is
    /// stable but not the best: every reading of SRAS scores a fuller node at least as high as
    /// the paper's remainder at less than half its cost, and its Tabu Search examines 2-7 % of
    /// the selections. Exhaustive search (checked independently in Python over all 8,192
    /// subsets, every reading, both limits) gives tasks 243 and 88 under the defaults, a subset
    /// of the paper's set: the production task the RUS limit needs and the one task that brings
    /// CPU use under 90 % (`max_use`), for 235.63 MB against the paper's 463.72 MB. So the test
    /// pins cellsim's choice; the paper's set is what a Tabu Search stopped early returns.
    #[test]
    fn section_5_1_sample() {
        let c = MasbConfig::default();
        // (task, cpu_use, mem_use, cpu_req, mem_req, production, cost_mb), in the logged order.
        let logged = [
            ("1081", 0.01498, 0.02692, 0.006248, 0.001457, true, 6876.02),
            ("3147", 0.01053, 0.02509, 0.006248, 0.001457, true, 3820.05),
            ("38", 0.168, 0.07617, 0.3125, 0.1592, true, 69139054863.11),
            ("7", 0.01682, 0.005814, 0.0625, 0.007767, true, 106.72),
            ("243", 0.005684, 0.005798, 0.04065, 0.02069, true, 106.69),
            ("959", 0.008255, 0.005791, 0.04065, 0.02069, true, 106.67),
            ("1447", 0.0007629, 0.007675, 0.0625, 0.0318, false, 112.37),
            ("137", 0.04224, 0.005592, 0.0125, 0.007767, true, 106.25),
            ("1615", 0.02917, 0.0135, 0.02499, 0.02545, false, 183.40),
            ("686", 0.0321, 0.01501, 0.02499, 0.03339, false, 236.79),
            ("88", 0.1665, 0.01027, 0.02499, 0.02545, false, 128.94),
            ("159", 0.06482, 0.008408, 0.02499, 0.07959, false, 115.72),
            ("2072", 0.0, 0.0, 0.02499, 0.07959, false, 101.00),
        ];
        let tasks: Vec<Candidate> = logged
            .iter()
            .map(
                |&(_, cpu_use, mem_use, cpu_req, mem_req, production, cost_mb)| Candidate {
                    cpu_use,
                    mem_use,
                    cpu_req,
                    mem_req,
                    production,
                    cost_mb,
                    compulsory: false,
                },
            )
            .collect();
        let (cpu_cap, mem_cap) = (0.5, 0.2493);
        let set =
            |names: &[&str]| -> Vec<bool> { logged.iter().map(|t| names.contains(&t.0)).collect() };
        let left = |chosen: &[bool], f: fn(&Candidate) -> (f64, f64)| {
            let kept = tasks.iter().zip(chosen).filter(|(_, out)| !**out);
            kept.map(|(t, _)| f(t))
                .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
        };
        let close =
            |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6;

        let paper = set(&["243", "1447", "88", "159"]);
        assert!(close(
            left(&paper, |t| (t.cpu_use, t.mem_use)),
            (0.322095, 0.173887)
        ));
        let prod = |t: &Candidate| {
            if t.production {
                (t.cpu_req, t.mem_req)
            } else {
                (0.0, 0.0)
            }
        };
        assert!(close(left(&paper, prod), (0.440646, 0.198338)));
        assert!(close(left(&set(&[]), prod), (0.481296, 0.219028)));
        let paper = evaluate(cpu_cap, mem_cap, &tasks, &paper, &c);
        assert!(paper.stable());
        assert!((paper.cost_mb - 463.72).abs() < 1e-9, "{}", paper.cost_mb);

        let ours = set(&["243", "88"]);
        let best = exhaustive(cpu_cap, mem_cap, &tasks, &c);
        assert_eq!(best.chosen, ours);
        assert!((best.cost_mb - 235.63).abs() < 1e-9);
        assert!(
            best.fitness > 2.0 * paper.fitness,
            "{} vs {}",
            best.fitness,
            paper.fitness
        );
        // Tabu Search with the paper's settings stops after 6 steps without improvement: from 20
        // seeds it finds this optimum 11 times (measured), and otherwise stable sets as far from
        // it as the paper's own (tasks 243, 959, 686, 159 at half its fitness; even task 38
        // alone, the 6.9e10 MB one, when the first restart happens to start there).
        let mut optimal = 0;
        for seed in 0..20 {
            let found = tabu_search(cpu_cap, mem_cap, &tasks, &c, &mut Rng::new(seed, 5));
            assert!(found.stable(), "seed {seed}");
            optimal += usize::from(found.chosen == ours);
        }
        assert!((8..20).contains(&optimal), "optimum in {optimal} of 20");
        // Under the 6.4 text's 100 % limit no production task has to move: task 88 alone.
        let full = MasbConfig {
            scs_rus_limit: 1.0,
            ..MasbConfig::default()
        };
        assert_eq!(
            exhaustive(cpu_cap, mem_cap, &tasks, &full).chosen,
            set(&["88"])
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
