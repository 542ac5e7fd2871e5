//! A running task's migration (SPEC 6; seed 000 sections 5.2-5.6): the broker's candidates
//! (SRAS on actual usage, forced ones when short), a target's answers, the source's order of
//! trying the acceptors. Both draws weight targets by the score, or by `target_weighting`'s
//! ablation ([`TargetWeighting`]).

use ingest::rng::Rng;

use super::draw::{DrawScratch, weighted_order, weighted_order_into};
use super::{CacheView, Demand, Recommendation, scan};
use crate::ids::NodeIdx;
use crate::masb::score::{NodeState, Scored, ranking, sras_for_ranking};
use crate::masb::{MasbConfig, TargetWeighting};

/// Buffers a broker reuses for every migration request it answers (no state between calls).
#[derive(Debug, Clone, Default)]
pub struct MigrationScratch {
    positions: Vec<u32>,
    scores: Vec<Scored>,
    pool: Vec<Recommendation>,
    forced: Vec<Recommendation>,
    draw: DrawScratch,
    chosen: Vec<Recommendation>,
}

/// Candidates for migrating a task off `source`: up to `migration_candidates` drawn by SRAS
/// weight from at most `migration_scan` matching nodes, then, if short and `with_forced`,
/// forced candidates (a stable node's offload asks none: moving a task off a stable node must
/// not overload another). They live in `scratch` until its next use.
pub fn migration_candidates<'s>(
    cache: CacheView<'_>,
    (source, task, with_forced): (NodeIdx, &Demand, bool),
    (now_s, config): (f64, &MasbConfig),
    rng: &mut Rng,
    matches: &dyn Fn(NodeIdx) -> bool,
    scratch: &'s mut MigrationScratch,
) -> &'s [Recommendation] {
    let wanted = config.migration_candidates as usize;
    let MigrationScratch {
        positions,
        scores,
        pool,
        forced,
        draw,
        chosen,
    } = scratch;
    positions.clear();
    scan(
        cache,
        now_s,
        config.migration_scan,
        (config, source),
        rng,
        matches,
        positions,
    );
    let entry = |p: &u32| &cache.entries[*p as usize];
    scores.clear();
    let loads = positions.iter().map(|p| entry(p).used());
    sras_for_ranking(loads, (task.cpu_use, task.mem_use), config, scores);
    pool.clear();
    forced.clear();
    for (e, w) in positions
        .iter()
        .map(entry)
        .zip(target_weights(scores, config))
    {
        if w > 0.0 {
            pool.push(Recommendation {
                node: e.node,
                score: w,
                forced: false,
            });
        } else if e.cpu_cap >= task.cpu_req.max(task.cpu_use)
            && e.mem_cap >= task.mem_req.max(task.mem_use)
        {
            forced.push(Recommendation {
                node: e.node,
                score: 0.0,
                forced: true,
            });
        }
    }
    chosen.clear();
    weighted_order_into(pool, wanted, rng, draw, chosen);
    if with_forced && chosen.len() < wanted {
        // Forced candidates all carry the paper's minimal fitness (seed 000 section 5.2's
        // `fitnessValue=0.00000000001`): equal weights, so a uniform draw among them, never the
        // lowest node indices (issue 55: those few nodes took every forced migration).
        weighted_order_into(forced, wanted - chosen.len(), rng, draw, chosen);
    }
    chosen
}

/// The weights migration targets are drawn by: the re-allocation ranking (SRAS or SRAS_GAIN),
/// turned into `config.target_weighting`'s ablation. A candidate that does not rank (weight 0)
/// stays out under every weighting.
fn target_weights<'s>(scores: &'s [Scored], config: &MasbConfig) -> impl Iterator<Item = f64> + 's {
    let weighting = config.target_weighting;
    ranking(scores, config.sras_gain, config.gain_fallback).map(move |w| {
        match (w > 0.0, weighting) {
            (false, _) | (true, TargetWeighting::Score) => w,
            (true, TargetWeighting::Uniform) => 1.0,
            (true, TargetWeighting::Inverse) => 1.0 / w,
        }
    })
}

/// A target's answer to a migration request: its usage plus incoming migrations plus this task
/// fit its capacity (`load` holds usage including incoming).
pub fn accepts(load: &NodeState, task: &Demand) -> bool {
    load.cpu + task.cpu_use <= load.cpu_cap && load.mem + task.mem_use <= load.mem_cap
}

/// The target's last check before a migration starts: free resources as in [`accepts`], or for a
/// forced migration only the node's total capacity (constraints are checked by the caller).
pub fn final_check(load: &NodeState, task: &Demand, forced: bool) -> bool {
    if forced {
        task.cpu_use <= load.cpu_cap && task.mem_use <= load.mem_cap
    } else {
        accepts(load, task)
    }
}

/// The source's order of trying acceptors: re-scored with SRAS on their fresh usage, drawn by
/// weight; forced candidates after all others, in the broker's order.
pub fn target_order(
    acceptors: &[(Recommendation, NodeState)],
    task: &Demand,
    config: &MasbConfig,
    rng: &mut Rng,
) -> Vec<Recommendation> {
    let fresh: Vec<&(Recommendation, NodeState)> =
        acceptors.iter().filter(|(r, _)| !r.forced).collect();
    let mut scores = Vec::with_capacity(fresh.len());
    let loads = fresh.iter().map(|(_, load)| *load);
    sras_for_ranking(loads, (task.cpu_use, task.mem_use), config, &mut scores);
    let rescored: Vec<Recommendation> = fresh
        .iter()
        .zip(target_weights(&scores, config))
        .filter(|(_, w)| *w > 0.0)
        .map(|((r, _), w)| Recommendation { score: w, ..*r })
        .collect();
    let mut order = weighted_order(&rescored, rescored.len(), rng);
    order.extend(acceptors.iter().filter(|(r, _)| r.forced).map(|(r, _)| *r));
    order
}

#[cfg(test)]
mod tests {
    use super::super::CacheEntry;
    use super::super::test_cache::{entry, task};
    use super::*;

    #[test]
    fn migration_candidates_draw_fifteen_and_add_forced_when_short() {
        let c = MasbConfig::default();
        // A 0.05 task leaving node 0, drawn from `cache` with random stream `seed`, forced
        // candidates asked for or not.
        let candidates_or_not = |cache: &[CacheEntry], seed: u64, with_forced: bool| {
            let all = CacheView::all(cache);
            let mut rng = Rng::new(seed, seed);
            let mut scratch = MigrationScratch::default();
            let leaving = (NodeIdx(0), &task(0.05), with_forced);
            migration_candidates(all, leaving, (0.0, &c), &mut rng, &|_| true, &mut scratch)
                .to_vec()
        };
        let candidates = |cache: &[CacheEntry], seed: u64| candidates_or_not(cache, seed, true);
        // 40 nodes at 60 % use: taking a 0.05 task leaves 70 % used (SRAS > 0). The source (0)
        // is never a candidate.
        let cache: Vec<CacheEntry> = (0..40).map(|n| entry(n, 0.3, 0.0)).collect();
        let got = candidates(&cache, 3);
        assert_eq!(got.len(), 15);
        assert!(got.iter().all(|r| !r.forced && r.node != NodeIdx(0)));
        let distinct: std::collections::HashSet<_> = got.iter().map(|r| r.node).collect();
        assert_eq!(distinct.len(), 15);
        // Only 2 nodes have room; 3 are full but big enough (forced); 1 is too small in total.
        let mut cache = vec![entry(1, 0.1, 0.0), entry(2, 0.1, 0.0)];
        cache.extend((3..6).map(|n| entry(n, 0.48, 0.0)));
        cache.push(CacheEntry {
            cpu_cap: 0.04,
            ..entry(6, 0.0, 0.0)
        });
        let got = candidates(&cache, 4);
        assert_eq!(got.len(), 5);
        assert!(got[..2].iter().all(|r| !r.forced));
        let mut forced: Vec<(u32, bool)> = got[2..].iter().map(|r| (r.node.0, r.forced)).collect();
        forced.sort_unstable();
        assert_eq!(forced, vec![(3, true), (4, true), (5, true)]);
        // An offload's request (no forced candidates): the two with room, nothing more.
        let got = candidates_or_not(&cache, 4, false);
        let mut nodes: Vec<(u32, bool)> = got.iter().map(|r| (r.node.0, r.forced)).collect();
        nodes.sort_unstable();
        assert_eq!(nodes, vec![(1, false), (2, false)]);
    }

    #[test]
    fn forced_candidates_are_drawn_uniformly_not_by_index() {
        // 1 node with room, 6 full but big enough: 14 places left, so all six come, and which
        // comes first is a uniform draw (the lowest index came first every time before).
        let c = MasbConfig {
            migration_candidates: 3,
            ..MasbConfig::default()
        };
        let mut cache = vec![entry(1, 0.1, 0.0)];
        cache.extend((2..8).map(|n| entry(n, 0.48, 0.0)));
        let seeds = 6_000u64;
        let mut first = [0u32; 8];
        for seed in 0..seeds {
            let mut rng = Rng::new(seed, 11);
            let mut scratch = MigrationScratch::default();
            let leaving = (NodeIdx(0), &task(0.05), true);
            let all = CacheView::all(&cache);
            let got =
                migration_candidates(all, leaving, (0.0, &c), &mut rng, &|_| true, &mut scratch);
            assert_eq!(got.len(), 3);
            assert!(!got[0].forced && got[1].forced && got[2].forced);
            assert_ne!(got[1].node, got[2].node);
            first[got[1].node.index()] += 1;
        }
        // Each of the 6 forced nodes first with p = 1/6: 1,000 expected, sd 28.9; 5 sd bounds.
        for n in 2..8 {
            assert!(
                (855..=1_145).contains(&first[n]),
                "node {n} drawn first {} times of {seeds}: {first:?}",
                first[n]
            );
        }
    }

    #[test]
    fn target_checks_and_order() {
        let load = NodeState {
            cpu_cap: 0.5,
            mem_cap: 0.5,
            cpu: 0.4,
            mem: 0.1,
        };
        assert!(accepts(&load, &task(0.1)), "0.4 + 0.1 fits exactly");
        assert!(!accepts(&load, &task(0.11)));
        assert!(
            final_check(&load, &task(0.3), true),
            "forced: only the total capacity counts"
        );
        assert!(!final_check(&load, &task(0.6), true));
        let c = MasbConfig::default();
        let rec = |n, forced| Recommendation {
            node: NodeIdx(n),
            score: 1.0,
            forced,
        };
        let fresh = |used| NodeState {
            cpu_cap: 0.5,
            mem_cap: 0.5,
            cpu: used,
            mem: used,
        };
        let acceptors = [
            (rec(7, true), fresh(0.45)),
            (rec(1, false), fresh(0.3)),
            (rec(2, false), fresh(0.1)),
        ];
        let order = target_order(&acceptors, &task(0.05), &c, &mut Rng::new(5, 5));
        assert_eq!(order.len(), 3);
        assert_eq!((order[2].node.0, order[2].forced), (7, true), "forced last");
    }

    /// The ablation weightings on three candidates: SRAS 4 (gain 1), SRAS 1 (gain 0.5) and one
    /// that does not rank (SRAS 0), which stays out under every weighting.
    #[test]
    fn target_weightings_turn_the_score_around() {
        let scores =
            [(4.0, 1.0), (1.0, 0.5), (0.0, 0.0)].map(|(plain, gain)| Scored { plain, gain });
        let weights = |target_weighting, sras_gain| {
            let c = MasbConfig {
                target_weighting,
                sras_gain,
                ..MasbConfig::default()
            };
            target_weights(&scores, &c).collect::<Vec<_>>()
        };
        use TargetWeighting::*;
        assert_eq!(weights(Score, false), [4.0, 1.0, 0.0]);
        assert_eq!(weights(Uniform, false), [1.0, 1.0, 0.0]);
        assert_eq!(weights(Inverse, false), [0.25, 1.0, 0.0]);
        assert_eq!(weights(Score, true), [1.0, 0.5, 0.0]);
        assert_eq!(weights(Uniform, true), [1.0, 1.0, 0.0]);
        assert_eq!(weights(Inverse, true), [1.0, 2.0, 0.0]);
    }

    /// The source's order of two acceptors of 0.5 / 0.5 over 4,000 draws. By hand, SRAS in trace
    /// units of a 0.05 task: onto the fuller (0.35 used, 0.1 free after) 500^((0.1 - 0.6)^2) -
    /// 0.8 = 3.9287, onto the emptier (0.1 used, 0.35 free after) 500^((0.35 - 0.6)^2) - 0.8 =
    /// 0.6746. So the fuller comes first with probability 3.9287 / 4.6033 = 0.8535 by score,
    /// 0.5 uniformly and 0.1465 inversely (each within 3 standard deviations, at most 0.024).
    #[test]
    fn target_order_follows_the_weighting() {
        let rec = |n| Recommendation {
            node: NodeIdx(n),
            score: 1.0,
            forced: false,
        };
        let fresh = |used| NodeState {
            cpu_cap: 0.5,
            mem_cap: 0.5,
            cpu: used,
            mem: used,
        };
        let acceptors = [(rec(1), fresh(0.35)), (rec(2), fresh(0.1))];
        let fuller_first = |target_weighting| {
            let c = MasbConfig {
                target_weighting,
                ..MasbConfig::default()
            };
            let firsts = (0..4_000)
                .filter(|&s| {
                    let order = target_order(&acceptors, &task(0.05), &c, &mut Rng::new(s, 9));
                    order[0].node == NodeIdx(1)
                })
                .count();
            firsts as f64 / 4_000.0
        };
        let by_score = fuller_first(TargetWeighting::Score);
        let uniform = fuller_first(TargetWeighting::Uniform);
        let inverse = fuller_first(TargetWeighting::Inverse);
        assert!((by_score - 0.8535).abs() < 0.017, "{by_score}");
        assert!((uniform - 0.5).abs() < 0.024, "{uniform}");
        assert!((inverse - 0.1465).abs() < 0.017, "{inverse}");
    }
}
