//! The choices a broker agent (BA) and a node agent (NA) make in MASB's protocol, as pure
//! functions of a broker's cache and a random stream (SPEC 6, seed 000 sections 4-5):
//!
//! - [`initial_candidates`]: for a new task, score at most `initial_candidates` (200) matching,
//!   fresh cache entries from a random offset with SIAS (on *requested* resources); the BA then
//!   asks the best nodes in a score-weighted random order ([`weighted_order`]).
//! - [`migration_candidates`]: for a task leaving an overloaded node, score at most
//!   `migration_scan` (2,000) matching entries with SRAS (on *actual* usage), draw
//!   `migration_candidates` (15) by score weight, and add **forced** candidates (total capacity and
//!   constraints fit, free resources do not) when too few nodes can take the task.
//! - [`accepts`] / [`final_check`]: a target's answer to a migration request and to the process
//!   request; [`target_order`]: the source's re-scoring of acceptors with fresh usage, forced
//!   candidates last.

use ingest::rng::Rng;

use super::MasbConfig;
use super::score::{self, NodeState, ranking, sias_for_ranking, sras_for_ranking};
use crate::ids::NodeIdx;

/// What a broker knows of a node (normalised units), from the node's last report.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct CacheEntry {
    /// The node.
    pub node: NodeIdx,
    /// Capacity.
    pub cpu_cap: f64,
    /// Memory capacity.
    pub mem_cap: f64,
    /// Requested by its tasks (and incoming migrations).
    pub cpu_req: f64,
    /// Memory requested.
    pub mem_req: f64,
    /// Used by its tasks (and incoming migrations).
    pub cpu_used: f64,
    /// Memory used.
    pub mem_used: f64,
    /// When the report was made, seconds of simulated time.
    pub reported_s: f64,
}

impl CacheEntry {
    /// A node not heard of yet (`reported_s` = -inf: never fresh).
    pub fn unset() -> CacheEntry {
        CacheEntry {
            reported_s: f64::NEG_INFINITY,
            ..CacheEntry::default()
        }
    }

    /// Keeps `entry` in `cache` (indexed by node, grown as needed) unless the cache holds a
    /// newer report of its node.
    pub fn store(cache: &mut Vec<CacheEntry>, entry: CacheEntry) {
        let i = entry.node.index();
        if cache.len() <= i {
            cache.resize(i + 1, CacheEntry::unset());
        }
        if entry.reported_s >= cache[i].reported_s {
            cache[i] = entry;
        }
    }

    /// The node as its requested totals (what SIAS scores).
    pub fn requested(&self) -> NodeState {
        NodeState {
            cpu_cap: self.cpu_cap,
            mem_cap: self.mem_cap,
            cpu: self.cpu_req,
            mem: self.mem_req,
        }
    }

    /// The node as its actual usage (what SRAS scores).
    pub fn used(&self) -> NodeState {
        NodeState {
            cpu_cap: self.cpu_cap,
            mem_cap: self.mem_cap,
            cpu: self.cpu_used,
            mem: self.mem_used,
        }
    }
}

/// A task's demand (normalised units).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Demand {
    /// CPU requested.
    pub cpu_req: f64,
    /// Memory requested.
    pub mem_req: f64,
    /// CPU in use.
    pub cpu_use: f64,
    /// Memory in use.
    pub mem_use: f64,
}

/// A scored candidate node.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Recommendation {
    /// The node.
    pub node: NodeIdx,
    /// Its score (0 for forced candidates).
    pub score: f64,
    /// Forced: the node must take the task though its free resources do not fit.
    pub forced: bool,
}

/// A broker's cache as the selections read it: the entries, and when known the positions of
/// those whose nodes can host the task (from a [`MatchMemo`](super::memo::MatchMemo); ascending).
#[derive(Debug, Clone, Copy)]
pub struct CacheView<'a> {
    /// The cache, by node index.
    pub entries: &'a [CacheEntry],
    /// Positions in `entries` of the nodes meeting the task's constraints, if known, with which
    /// nodes are online: a scan over them need not test the constraints again.
    pub matching: Option<(&'a [u32], &'a [bool])>,
    /// Where unconstrained tasks fit, when current (initial allocation only).
    pub fit: Option<&'a super::fit::FitIndex>,
    /// An index current for this round, to tell which entries are fresh and whose nodes are
    /// online without reading them (initial allocation only: scans that exclude no node).
    pub ok: Option<&'a super::fit::FitIndex>,
}

impl<'a> CacheView<'a> {
    /// The whole cache, matching unknown.
    pub fn all(entries: &'a [CacheEntry]) -> Self {
        CacheView {
            entries,
            matching: None,
            fit: None,
            ok: None,
        }
    }
}

/// Positions of the entries fresh at `now_s`, matching `matches` (online, meeting the
/// constraints, not `exclude`), at most `limit` of them, in cache order from a random offset,
/// appended to `out`. With the view's matching positions only those are visited, tested for
/// being fresh, online and not `exclude` (by the view's `ok` index, without reading the entries,
/// when it is given and nothing is excluded); the entries and the random draw are the same as
/// without.
fn scan(
    view: CacheView<'_>,
    now_s: f64,
    limit: u32,
    (config, exclude): (&MasbConfig, NodeIdx),
    rng: &mut Rng,
    matches: &dyn Fn(NodeIdx) -> bool,
    out: &mut Vec<u32>,
) {
    let cache = view.entries;
    let n = cache.len();
    let offset = if n == 0 {
        0
    } else {
        rng.below(n as u64) as usize
    };
    let ttl = config.cache_ttl_s as f64;
    let fresh = |e: &CacheEntry| now_s - e.reported_s <= ttl && e.node != exclude;
    match view.matching {
        None => out.extend(
            (0..n)
                .map(|k| (offset + k) % n)
                .filter(|&p| fresh(&cache[p]) && matches(cache[p].node))
                .take(limit as usize)
                .map(|p| p as u32),
        ),
        Some((p, online)) => {
            let index = view.ok.filter(|_| !exclude.is_some());
            let ok = |&x: &u32| match index {
                Some(index) => index.is_ok(x as usize),
                None => {
                    let e = &cache[x as usize];
                    fresh(e) && online.get(e.node.index()) == Some(&true)
                }
            };
            let p = &p[..p.partition_point(|&x| (x as usize) < n)];
            let start = p.partition_point(|&x| (x as usize) < offset);
            out.extend(
                p[start..]
                    .iter()
                    .chain(&p[..start])
                    .copied()
                    .filter(ok)
                    .take(limit as usize),
            );
        }
    }
}

/// Buffers a broker reuses for every task it scores (no allocation per task).
#[derive(Debug, Clone, Default)]
pub struct ScoreScratch {
    positions: Vec<u32>,
    exponents: Vec<(f64, u32)>,
    ranked: Vec<Recommendation>,
    weights: Vec<f64>,
    left: Vec<Recommendation>,
}

impl ScoreScratch {
    /// The ranking of the last [`initial_asks`] (best first, at most `top`).
    pub fn ranked(&self) -> &[Recommendation] {
        &self.ranked
    }
}

/// SIAS-scored nodes for a new task, best first (ties by node index); zero scores left out.
pub fn initial_candidates(
    cache: CacheView<'_>,
    task: &Demand,
    now_s: f64,
    config: &MasbConfig,
    rng: &mut Rng,
    matches: &dyn Fn(NodeIdx) -> bool,
) -> Vec<Recommendation> {
    let mut scratch = ScoreScratch::default();
    let mut out = Vec::new();
    initial_top(
        cache,
        task,
        (now_s, config),
        rng,
        matches,
        usize::MAX,
        &mut scratch,
        &mut out,
    );
    out
}

/// The first `top` of [`initial_candidates`], into `out` (cleared), using `scratch`.
///
/// Under the plain ranking (`sias_gain` off) with `F_STEEP > 1` a score rises with its exponent,
/// so only the entries whose exponent is within a margin of the `top`-th largest are raised to
/// the power: the margin (a relative score difference of 1e-6, far above the power's rounding
/// error) keeps every entry that could tie with or beat the `top`-th. The result and the random
/// draws are those of scoring every entry (tested).
#[allow(clippy::too_many_arguments)]
pub fn initial_top(
    cache: CacheView<'_>,
    task: &Demand,
    (now_s, config): (f64, &MasbConfig),
    rng: &mut Rng,
    matches: &dyn Fn(NodeIdx) -> bool,
    top: usize,
    scratch: &mut ScoreScratch,
    out: &mut Vec<Recommendation>,
) {
    out.clear();
    let positions = &mut scratch.positions;
    positions.clear();
    match cache.fit {
        Some(fit) => {
            let n = cache.entries.len();
            let offset = if n == 0 {
                0
            } else {
                rng.below(n as u64) as usize
            };
            let (head, tail) = fit.window(offset, task.cpu_req);
            positions.extend_from_slice(head);
            positions.extend_from_slice(tail);
        }
        None => {
            scan(
                cache,
                now_s,
                config.initial_candidates,
                (config, NodeIdx::NONE),
                rng,
                matches,
                positions,
            );
            // Entries whose headroom is surely short score 0: not read at all.
            if let Some(index) = cache.ok {
                positions.retain(|&p| index.may_fit(p as usize, task.cpu_req));
            }
        }
    }
    let entries = cache.entries;
    let after = |p: u32| {
        entries[p as usize]
            .requested()
            .plus(task.cpu_req, task.mem_req)
    };
    let shape = &config.sias;
    // Under a GAIN ranking, or a score that does not rise with its exponent, every candidate is
    // scored (two vectors per task; neither is the default).
    if config.sias_gain || shape.steep <= 1.0 {
        let scores: Vec<_> = positions
            .iter()
            .map(|&p| {
                sias_for_ranking(
                    &entries[p as usize].requested(),
                    task.cpu_req,
                    task.mem_req,
                    config,
                )
            })
            .collect();
        out.extend(
            positions
                .iter()
                .zip(ranking(&scores, config.sias_gain))
                .filter(|(_, w)| *w > 0.0)
                .map(|(&p, w)| Recommendation {
                    node: entries[p as usize].node,
                    score: w,
                    forced: false,
                }),
        );
    } else {
        let exponents = &mut scratch.exponents;
        exponents.clear();
        exponents.extend(
            positions
                .iter()
                .filter_map(|&p| score::exponent(shape, &after(p), config).map(|e| (e, p))),
        );
        if exponents.len() > top {
            let (_, kth, _) = exponents.select_nth_unstable_by(top - 1, |a, b| b.0.total_cmp(&a.0));
            let cut = kth.0 - 1e-6 / shape.steep.ln();
            exponents.retain(|&(e, _)| e >= cut);
        }
        out.extend(exponents.iter().filter_map(|&(e, p)| {
            let s = score::of_exponent(shape, e);
            (s > 0.0).then_some(Recommendation {
                node: entries[p as usize].node,
                score: s,
                forced: false,
            })
        }));
    }
    // Nodes are distinct, so the order is total.
    out.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(a.node.cmp(&b.node)));
    out.truncate(top);
}

/// The first `limit` items of a score-weighted random order of `items` (drawing without
/// replacement: higher scores tend to come first, no item twice).
pub fn weighted_order(
    items: &[Recommendation],
    limit: usize,
    rng: &mut Rng,
) -> Vec<Recommendation> {
    let mut order = Vec::with_capacity(limit.min(items.len()));
    weighted_order_into(items, limit, rng, &mut ScoreScratch::default(), &mut order);
    order
}

/// [`weighted_order`], appended to `out`, using `scratch`'s buffers.
pub fn weighted_order_into(
    items: &[Recommendation],
    limit: usize,
    rng: &mut Rng,
    scratch: &mut ScoreScratch,
    out: &mut Vec<Recommendation>,
) {
    let (left, weights) = (&mut scratch.left, &mut scratch.weights);
    left.clear();
    left.extend_from_slice(items);
    weights.clear();
    weights.extend(left.iter().map(|r| r.score.max(1e-12)));
    let mut drawn = 0;
    while !left.is_empty() && drawn < limit {
        let k = rng.weighted(weights);
        weights.remove(k);
        out.push(left.remove(k));
        drawn += 1;
    }
}

/// Initial allocation of one task: the best `top` SIAS-scored nodes ([`initial_top`]) in a
/// score-weighted random order, appended to `asks`.
#[allow(clippy::too_many_arguments)]
pub fn initial_asks(
    cache: CacheView<'_>,
    task: &Demand,
    at: (f64, &MasbConfig),
    rng: &mut Rng,
    matches: &dyn Fn(NodeIdx) -> bool,
    top: usize,
    scratch: &mut ScoreScratch,
    asks: &mut Vec<Recommendation>,
) {
    let mut ranked = std::mem::take(&mut scratch.ranked);
    initial_top(cache, task, at, rng, matches, top, scratch, &mut ranked);
    weighted_order_into(&ranked, ranked.len(), rng, scratch, asks);
    scratch.ranked = ranked;
}

/// Candidates for migrating a task off `source`: up to `migration_candidates` drawn by SRAS
/// weight from at most `migration_scan` matching nodes, then forced candidates if short.
pub fn migration_candidates(
    cache: CacheView<'_>,
    source: NodeIdx,
    task: &Demand,
    now_s: f64,
    config: &MasbConfig,
    rng: &mut Rng,
    matches: &dyn Fn(NodeIdx) -> bool,
) -> Vec<Recommendation> {
    let wanted = config.migration_candidates as usize;
    let mut pool = Vec::new();
    let mut forced = Vec::new();
    let mut positions = Vec::new();
    scan(
        cache,
        now_s,
        config.migration_scan,
        (config, source),
        rng,
        matches,
        &mut positions,
    );
    let entries: Vec<&CacheEntry> = positions
        .iter()
        .map(|&p| &cache.entries[p as usize])
        .collect();
    let scores: Vec<_> = entries
        .iter()
        .map(|e| sras_for_ranking(&e.used(), task.cpu_use, task.mem_use, config))
        .collect();
    for (e, w) in entries.iter().zip(ranking(&scores, config.sras_gain)) {
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
    let mut chosen = weighted_order(&pool, wanted, rng);
    if chosen.len() < wanted {
        forced.sort_by_key(|r| r.node);
        chosen.extend(forced.into_iter().take(wanted - chosen.len()));
    }
    chosen
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
    let scores: Vec<_> = fresh
        .iter()
        .map(|(_, load)| sras_for_ranking(load, task.cpu_use, task.mem_use, config))
        .collect();
    let rescored: Vec<Recommendation> = fresh
        .iter()
        .zip(ranking(&scores, config.sras_gain))
        .filter(|(_, w)| *w > 0.0)
        .map(|((r, _), w)| Recommendation { score: w, ..*r })
        .collect();
    let mut order = weighted_order(&rescored, rescored.len(), rng);
    order.extend(acceptors.iter().filter(|(r, _)| r.forced).map(|(r, _)| *r));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(node: u32, used: f64, reported_s: f64) -> CacheEntry {
        CacheEntry {
            node: NodeIdx(node),
            cpu_cap: 0.5,
            mem_cap: 0.5,
            cpu_req: used,
            mem_req: used,
            cpu_used: used,
            mem_used: used,
            reported_s,
        }
    }

    fn task(amount: f64) -> Demand {
        Demand {
            cpu_req: amount,
            mem_req: amount,
            cpu_use: amount,
            mem_use: amount,
        }
    }

    #[test]
    fn initial_scan_respects_limit_staleness_and_constraints() {
        let c = MasbConfig {
            initial_candidates: 3,
            ..MasbConfig::default()
        };
        // Nodes 0..6 idle; node 2 reported 301 s ago (stale); odd nodes fail the constraints.
        let cache: Vec<CacheEntry> = (0..7)
            .map(|n| entry(n, 0.0, if n == 2 { 0.0 } else { 300.0 }))
            .collect();
        let even = |n: NodeIdx| n.0.is_multiple_of(2);
        for seed in 0..20 {
            let got = initial_candidates(
                CacheView::all(&cache),
                &task(0.05),
                301.0,
                &c,
                &mut Rng::new(seed, 0),
                &even,
            );
            assert!(got.len() <= 3);
            assert!(
                got.iter().all(|r| r.node.0 % 2 == 0 && r.node.0 != 2),
                "{got:?}"
            );
            assert!(got.windows(2).all(|w| w[0].score >= w[1].score));
        }
        // SIAS prefers the emptier node: 10 % vs 60 % requested after placement on a 0.5 node.
        let cache = [entry(0, 0.25, 0.0), entry(1, 0.0, 0.0)];
        let got = initial_candidates(
            CacheView::all(&cache),
            &task(0.05),
            0.0,
            &MasbConfig::default(),
            &mut Rng::new(1, 1),
            &|_| true,
        );
        assert_eq!(got.iter().map(|r| r.node.0).collect::<Vec<_>>(), vec![1, 0]);
        // A placement leaving more than 90 % requested scores 0 and is left out.
        let full = [entry(0, 0.44, 0.0)];
        assert!(
            initial_candidates(
                CacheView::all(&full),
                &task(0.05),
                0.0,
                &MasbConfig::default(),
                &mut Rng::new(1, 1),
                &|_| true
            )
            .is_empty()
        );
    }

    /// Regression: with the free reading SIAS falls as a node fills, so SIAS_GAIN is 0 on an idle
    /// cell; the ranking falls back to plain SIAS instead of placing nothing.
    #[test]
    fn sias_gain_still_places_on_an_idle_cell() {
        let c = MasbConfig {
            sias_gain: true,
            ..MasbConfig::default()
        };
        let pick = |cache: &[CacheEntry]| {
            let all = CacheView::all(cache);
            initial_candidates(all, &task(0.05), 0.0, &c, &mut Rng::new(1, 1), &|_| true)
        };
        let mut cache: Vec<CacheEntry> = (0..5).map(|n| entry(n, 0.0, 0.0)).collect();
        assert_eq!(pick(&cache).len(), 5);
        // With one node above 70 % used on both resources, adding load raises its SIAS: it alone gains.
        cache[3] = entry(3, 0.4, 0.0); // 80 % requested -> 90 % after the task
        let got = pick(&cache);
        assert_eq!(got.iter().map(|r| r.node.0).collect::<Vec<_>>(), vec![3]);
    }

    #[test]
    fn weighted_order_follows_the_scores() {
        let items = [
            Recommendation {
                node: NodeIdx(0),
                score: 3.0,
                forced: false,
            },
            Recommendation {
                node: NodeIdx(1),
                score: 1.0,
                forced: false,
            },
        ];
        let mut rng = Rng::new(9, 9);
        let firsts = (0..10_000)
            .filter(|_| weighted_order(&items, 2, &mut rng)[0].node.0 == 0)
            .count();
        assert_eq!(weighted_order(&items, 1, &mut rng).len(), 1);
        // Expected 3/4 of 10,000; 4 standard deviations is ~170.
        assert!((7_330..=7_670).contains(&firsts), "{firsts}");
    }

    #[test]
    fn migration_candidates_draw_fifteen_and_add_forced_when_short() {
        let c = MasbConfig::default();
        // 40 nodes at 60 % use: taking a 0.05 task leaves 70 % used (SRAS > 0). The source (0)
        // is never a candidate.
        let cache: Vec<CacheEntry> = (0..40).map(|n| entry(n, 0.3, 0.0)).collect();
        let got = migration_candidates(
            CacheView::all(&cache),
            NodeIdx(0),
            &task(0.05),
            0.0,
            &c,
            &mut Rng::new(3, 3),
            &|_| true,
        );
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
        let got = migration_candidates(
            CacheView::all(&cache),
            NodeIdx(0),
            &task(0.05),
            0.0,
            &c,
            &mut Rng::new(4, 4),
            &|_| true,
        );
        assert_eq!(got.len(), 5);
        assert!(got[..2].iter().all(|r| !r.forced));
        assert_eq!(
            got[2..]
                .iter()
                .map(|r| (r.node.0, r.forced))
                .collect::<Vec<_>>(),
            vec![(3, true), (4, true), (5, true)]
        );
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
}
