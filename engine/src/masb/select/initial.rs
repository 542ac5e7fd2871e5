//! A new task's initial allocation (SPEC 6; seed 000 sections 6.1-6.2): SIAS over at most
//! `initial_candidates` fresh, matching cache entries (or the fit index's window for an
//! unconstrained task), the best few asked in a score-weighted random order.

use ingest::rng::Rng;

use super::draw::draw_to_front;
use super::{CacheView, Demand, Recommendation, scan};
use crate::ids::NodeIdx;
use crate::masb::fit::LoadShare;
use crate::masb::score::{self, ranking, sias_for_ranking};
use crate::masb::{MasbConfig, ScoreReading, ScoreUnits};

/// A bound on the error of an exponent or load share computed from [`LoadShare`]s (a few
/// roundings of numbers near 1, ~1e-15), far below the margins it is compared with.
const SHARE_ERROR: f64 = 1e-9;

/// Buffers a broker reuses for every task it scores (no allocation per task).
#[derive(Debug, Clone, Default)]
pub struct ScoreScratch {
    positions: Vec<u32>,
    exponents: Vec<(f64, u32)>,
    kept: Vec<u32>,
    ranked: Vec<Recommendation>,
}

impl ScoreScratch {
    /// The ranking of the last [`initial_asks`] (best first, at most `top`).
    pub fn ranked(&self) -> &[Recommendation] {
        &self.ranked
    }
}

/// Where the window of an offer over `cache`'s fit index starts: [`initial_top`]'s first draw
/// from `rng` (`None`, drawing nothing, without a fit index or with an empty cache). Offers
/// that know it in advance can be scored in the order of their windows.
pub fn window_offset(cache: &CacheView<'_>, rng: &mut Rng) -> Option<usize> {
    let n = cache.entries.len();
    (cache.fit.is_some() && n > 0).then(|| rng.below(n as u64) as usize)
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
/// error) keeps every entry that could tie with or beat the `top`-th. With the view's index (in
/// fraction units) the exponents are first estimated from its load shares ([`near_best`]) and
/// computed exactly only for the entries the estimate keeps. The result and the random draws are
/// those of scoring every entry (tested).
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
            let offset = window_offset(&cache, rng).unwrap_or(0);
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
            .sias_load(config.sias_node_load)
            .plus(task.cpu_req, task.mem_req)
    };
    let shape = &config.sias;
    let recommend = |p: u32, score: f64| {
        (score > 0.0).then_some(Recommendation {
            node: entries[p as usize].node,
            score,
            forced: false,
        })
    };
    // Exponents this close to the `top`-th best may still score as high (module doc of
    // `initial_top`): a relative score difference of 1e-6.
    let power = score::Power::of(shape);
    let margin = 1e-6 / power.ln_steep();
    // Under a GAIN ranking, or a score that does not rise with its exponent, every candidate is
    // scored (two vectors per task; neither is the default).
    if config.sias_gain || shape.steep <= 1.0 {
        let mut scores = Vec::with_capacity(positions.len());
        let loads =
            (positions.iter()).map(|&p| entries[p as usize].sias_load(config.sias_node_load));
        sias_for_ranking(loads, (task.cpu_req, task.mem_req), config, &mut scores);
        let weights = ranking(&scores, config.sias_gain);
        out.extend(
            positions
                .iter()
                .zip(weights)
                .filter_map(|(&p, w)| recommend(p, w)),
        );
    } else if let Some(index) = cache
        .ok
        .filter(|_| config.score_units == ScoreUnits::Fraction)
    {
        let (exponents, kept) = (&mut scratch.exponents, &mut scratch.kept);
        near_best(
            index.shares(),
            positions,
            task,
            (config, top, margin),
            exponents,
            kept,
        );
        out.extend(
            kept.iter().filter_map(|&p| {
                recommend(p, power.at(score::exponent(shape, &after(p), config)?))
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
        keep_near_top(exponents, top, margin);
        out.extend((exponents.iter()).filter_map(|&(e, p)| recommend(p, power.at(e))));
    }
    // Nodes are distinct, so the order is total.
    out.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(a.node.cmp(&b.node)));
    out.truncate(top);
}

/// The positions among `positions` that may be among the `top` best SIAS exponents, into `kept`
/// (cleared), estimated from the entries' load shares without a division (`exponents` is a
/// buffer). An entry whose estimated load is beyond `max_use` by more than the estimate's error is
/// left out (its score is surely 0), one within the error of it is kept whatever its exponent;
/// of the others, those within the exact path's `margin` (plus twice the error) of the `top`-th
/// best estimate are kept. So `kept` holds every entry the exact path keeps ([`initial_top`]).
/// Fraction units only (where the exponent's factors are `1 - bias - share` or `share - bias`).
fn near_best(
    shares: &[LoadShare],
    positions: &[u32],
    task: &Demand,
    (config, top, margin): (&MasbConfig, usize, f64),
    exponents: &mut Vec<(f64, u32)>,
    kept: &mut Vec<u32>,
) {
    let shape = &config.sias;
    let limit = config.max_use + 1e-12;
    let (base, sign) = match config.score_reading {
        ScoreReading::Free => (1.0 - shape.bias, -1.0),
        ScoreReading::Used => (-shape.bias, 1.0),
    };
    kept.clear();
    // Written at `n` whether or not in, `n` advanced only when in: no branch to mispredict.
    exponents.clear();
    exponents.resize(positions.len(), (0.0, 0));
    let mut n = 0;
    for &p in positions {
        let s = &shares[p as usize];
        let cpu = s.cpu + task.cpu_req * s.per_cpu;
        let mem = s.mem + task.mem_req * s.per_mem;
        let high = cpu.max(mem);
        if (high - limit).abs() <= SHARE_ERROR {
            kept.push(p); // too close to call (rare): the exact test decides
        }
        exponents[n] = ((base + sign * cpu) * (base + sign * mem), p);
        n += usize::from(high < limit - SHARE_ERROR);
    }
    exponents.truncate(n);
    keep_near_top(exponents, top, margin + 2.0 * SHARE_ERROR);
    kept.extend(exponents.iter().map(|e| e.1));
}

/// Keeps the exponents within `margin` of the `top`-th largest (all of them when there are no
/// more than `top`).
fn keep_near_top(exponents: &mut Vec<(f64, u32)>, top: usize, margin: f64) {
    if top > 0 && exponents.len() > top {
        let (_, kth, _) = exponents.select_nth_unstable_by(top - 1, |a, b| b.0.total_cmp(&a.0));
        let cut = kth.0 - margin;
        exponents.retain(|&(e, _)| e >= cut);
    }
}

/// Initial allocation of one task: the best `top` SIAS-scored nodes ([`initial_top`]), appended
/// to `asks` with the first node of a score-weighted random order in front and the others in
/// ranking order; `rng` is left where the rest of that order is to be drawn from, one node when it
/// is needed ([`draw_to_front`]): with six rounds a tick a broker seldom asks more than four.
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
    let start = asks.len();
    asks.extend_from_slice(&ranked);
    draw_to_front(&mut asks[start..], rng);
    scratch.ranked = ranked;
}

#[cfg(test)]
mod tests {
    use super::super::test_cache::{entry, task};
    use super::*;
    use crate::masb::SiasNodeLoad;
    use crate::masb::select::CacheEntry;

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

    /// SIAS adds the new task's request to the node's actual usage by default (`sias_node_load =
    /// "used"`), or to its requested totals under `"requested"`. Hand-worked on a 1.0 x 1.0 node
    /// with 85 % of its CPU requested but 30 % used (20 % memory both ways) and a task requesting
    /// 0.1 of each: requested reading, 95 % CPU after the placement: above 90 %, score 0, no
    /// candidate; used reading, 40 % CPU and 30 % memory used after it: r = the free shares 0.6
    /// and 0.7, SIAS = 350^((0.6 - 0.3)(0.7 - 0.3)) - 0.8 = 350^0.12 - 0.8 = 1.21971.
    #[test]
    fn sias_reads_the_nodes_requests_or_its_usage() {
        let cache = [CacheEntry {
            node: NodeIdx(0),
            cpu_cap: 1.0,
            mem_cap: 1.0,
            cpu_req: 0.85,
            mem_req: 0.2,
            cpu_used: 0.3,
            mem_used: 0.2,
            reported_s: 0.0,
        }];
        let task = Demand {
            cpu_req: 0.1,
            mem_req: 0.1,
            cpu_use: 0.05,
            mem_use: 0.05,
        };
        let pick = |sias_node_load| {
            let c = MasbConfig {
                sias_node_load,
                ..MasbConfig::default()
            };
            let all = CacheView::all(&cache);
            initial_candidates(all, &task, 0.0, &c, &mut Rng::new(1, 1), &|_| true)
        };
        assert!(pick(SiasNodeLoad::Requested).is_empty());
        let used = pick(SiasNodeLoad::Used);
        assert_eq!(used.len(), 1);
        assert!((used[0].score - 1.219_71).abs() < 1e-5, "{used:?}");
    }

    /// The estimate from the index's load shares keeps exactly what scoring every entry keeps
    /// when placements land on the 90 % limit or within rounding of it (the exact test, with its
    /// 1e-12 tolerance, decides those), on nodes of several sizes, for several `top`.
    #[test]
    fn estimated_exponents_keep_the_entries_on_the_limit() {
        use crate::masb::fit::FitIndex;
        let config = MasbConfig::default();
        let task = Demand {
            cpu_req: 0.1,
            mem_req: 0.05,
            cpu_use: 0.0,
            mem_use: 0.0,
        };
        let offsets = [-1e-9, -1e-11, -1e-13, 0.0, 1e-13, 5e-13, 2e-12, 1e-11, 1e-9];
        let mut cache = Vec::new();
        for (k, &cap) in [1.0, 0.5, 0.25, 0.3].iter().enumerate() {
            for (j, &off) in offsets.iter().enumerate() {
                // After the task: 90 % of both resources, plus `off` and another offset (both
                // factors of the exponent -0.2: a score of 350^0.04 - 0.8 = 0.464 > 0); every
                // third node has 10 % more CPU free (a higher score).
                let node = NodeIdx((k * offsets.len() + j) as u32);
                let roomier = if j % 3 == 0 { 0.1 * cap } else { 0.0 };
                let cpu = 0.9 * cap - 0.1 + off - roomier;
                let mem = 0.9 * cap - 0.05 + offsets[(j + k + 3) % offsets.len()];
                cache.push(CacheEntry {
                    node,
                    cpu_cap: cap,
                    mem_cap: cap,
                    cpu_req: cpu,
                    mem_req: mem,
                    cpu_used: cpu,
                    mem_used: mem,
                    reported_s: 0.0,
                });
            }
        }
        let mut fit = FitIndex::default();
        fit.rebuild(&cache, 0.0, &config, &|_| true);
        let (mut scratch, mut plain, mut estimated) = (ScoreScratch::default(), vec![], vec![]);
        for top in [1, 3, 10, 100] {
            let indexed = CacheView {
                ok: Some(&fit),
                ..CacheView::all(&cache)
            };
            for (view, out) in [
                (CacheView::all(&cache), &mut plain),
                (indexed, &mut estimated),
            ] {
                let at = (0.0, &config);
                let mut rng = Rng::new(3, 0);
                initial_top(view, &task, at, &mut rng, &|_| true, top, &mut scratch, out);
            }
            assert_eq!(plain, estimated, "top {top}");
        }
        // Placements within the exact test's tolerance of 90 % score; those beyond it do not.
        assert!(
            plain.len() > 10 && plain.len() < cache.len(),
            "{}",
            plain.len()
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
        // With one node above 70 % used on both resources, adding load raises its SIAS: it alone
        // gains.
        cache[3] = entry(3, 0.4, 0.0); // 80 % requested -> 90 % after the task
        let got = pick(&cache);
        assert_eq!(got.iter().map(|r| r.node.0).collect::<Vec<_>>(), vec![3]);
    }
}
