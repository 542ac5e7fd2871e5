//! Score-weighted random orders: drawing items without replacement, each draw picking one of the
//! items not yet drawn with probability proportional to its score (scores below 1e-12 count as
//! 1e-12, so every item can come out). Used for a new task's asks, a migration's candidates and a
//! source's order of trying acceptors.
//!
//! Up to [`SEQUENTIAL_UP_TO`] items (a new task's 10 best nodes, a source's acceptors), each draw
//! is one pass over the scores of the items left. Beyond, drawing without replacement is done as
//! drawing *with* replacement and redrawing whenever an item comes out a second time: conditioned
//! on being new, an item's chance is its score over the scores of the items not yet drawn, the
//! same distribution. So one pass builds the cumulative scores, and each draw is a uniform number
//! and a binary search over them (a migration draws 15 of up to 2,000 nodes: one pass instead of
//! one per draw). When drawn items hold most of the weight, redraws pile up; after
//! [`REBUILD_AFTER`] in a row the cumulative scores are rebuilt with the drawn items at zero.
//! Invariant: `cumulative[i]` is the sum of the scores of the items `0..=i` not drawn at the last
//! rebuild, so it never decreases and an item drawn before that rebuild (zero width) can never be
//! found again.

use ingest::rng::Rng;

use super::Recommendation;

/// Redraws in a row after which the drawn items are taken out of the cumulative scores.
pub const REBUILD_AFTER: u32 = 4;
/// Up to this many items, each draw is one pass over the scores of the items left.
pub const SEQUENTIAL_UP_TO: usize = 64;

/// Buffers for [`weighted_order_into`] (no state between calls).
#[derive(Debug, Clone, Default)]
pub struct DrawScratch {
    cumulative: Vec<f64>,
    drawn: Vec<bool>,
}

/// The first `limit` items of a score-weighted random order of `items` (module doc).
pub fn weighted_order(
    items: &[Recommendation],
    limit: usize,
    rng: &mut Rng,
) -> Vec<Recommendation> {
    let mut order = Vec::with_capacity(limit.min(items.len()));
    weighted_order_into(items, limit, rng, &mut DrawScratch::default(), &mut order);
    order
}

/// [`weighted_order`], appended to `out`, using `scratch`'s buffers.
pub fn weighted_order_into(
    items: &[Recommendation],
    limit: usize,
    rng: &mut Rng,
    scratch: &mut DrawScratch,
    out: &mut Vec<Recommendation>,
) {
    let limit = limit.min(items.len());
    if limit == 0 {
        return;
    }
    if items.len() <= SEQUENTIAL_UP_TO {
        sequential_draws(items, limit, rng, out);
    } else {
        redrawing_draws(items, limit, rng, scratch, out);
    }
}

/// Draws with replacement from the cumulative scores, redrawing repeats (module doc).
fn redrawing_draws(
    items: &[Recommendation],
    limit: usize,
    rng: &mut Rng,
    scratch: &mut DrawScratch,
    out: &mut Vec<Recommendation>,
) {
    let DrawScratch {
        cumulative, drawn, ..
    } = scratch;
    drawn.clear();
    drawn.resize(items.len(), false);
    rebuild(items, drawn, cumulative);
    let (mut count, mut redraws) = (0, 0);
    while count < limit {
        let x = rng.f64() * cumulative[items.len() - 1];
        let k = cumulative.partition_point(|&c| c <= x);
        // k == len only when rounding lifts x to the total: a redraw like any other.
        if k < items.len() && !drawn[k] {
            drawn[k] = true;
            out.push(items[k]);
            (count, redraws) = (count + 1, 0);
            continue;
        }
        redraws += 1;
        if redraws == REBUILD_AFTER {
            rebuild(items, drawn, cumulative);
            redraws = 0;
        }
    }
}

/// Draws from the items not yet drawn, one pass over their scores per draw (module doc), each
/// drawn to the front of those left ([`draw_to_front`]).
fn sequential_draws(
    items: &[Recommendation],
    limit: usize,
    rng: &mut Rng,
    out: &mut Vec<Recommendation>,
) {
    let start = out.len();
    out.extend_from_slice(items);
    draw_first(&mut out[start..], limit, rng);
    out.truncate(start + limit);
}

/// Draws the next item of a score-weighted random order from `remaining`, the items not drawn
/// yet in their original order, and moves it to the front, the others keeping their order.
/// This is the draw over all the items with the drawn ones at weight 0 (a zero weight adds
/// nothing to the total and is never landed on: [`Rng::weighted`]), so an order drawn one item
/// at a time, each when it is needed, is the order drawn at once (tested).
pub fn draw_to_front(remaining: &mut [Recommendation], rng: &mut Rng) {
    if remaining.is_empty() {
        return;
    }
    let k = rng.weighted_by(remaining.len(), |i| remaining[i].score.max(1e-12));
    remaining[..=k].rotate_right(1);
}

/// The first `count` of `remaining` drawn one after another with [`draw_to_front`] (the rest
/// left in their order, to be drawn later).
fn draw_first(remaining: &mut [Recommendation], count: usize, rng: &mut Rng) {
    for i in 0..count.min(remaining.len()) {
        draw_to_front(&mut remaining[i..], rng);
    }
}

/// `remaining` put in the order [`draw_to_front`] draws all of them in from `rng`.
fn draw_all(remaining: &mut [Recommendation], rng: &mut Rng) {
    draw_first(remaining, remaining.len(), rng);
}

/// A copy of `remaining` in the order [`draw_to_front`], called once per ask, draws all of them
/// in from `rng` (the order they will be asked in; drawn from a copy, `rng` is left as it is).
pub fn drawn_order(remaining: &[Recommendation], rng: &Rng) -> Vec<Recommendation> {
    let mut order = remaining.to_vec();
    draw_all(&mut order, &mut rng.clone());
    order
}

/// The cumulative scores of the items not yet drawn (module doc's invariant).
fn rebuild(items: &[Recommendation], drawn: &[bool], cumulative: &mut Vec<f64>) {
    cumulative.clear();
    let mut sum = 0.0;
    cumulative.extend(items.iter().zip(drawn).map(|(r, &d)| {
        if !d {
            sum += r.score.max(1e-12);
        }
        sum
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeIdx;

    fn items(scores: &[f64]) -> Vec<Recommendation> {
        scores
            .iter()
            .enumerate()
            .map(|(n, &score)| Recommendation {
                node: NodeIdx(n as u32),
                score,
                forced: false,
            })
            .collect()
    }

    #[test]
    fn first_draw_follows_the_scores() {
        let items = items(&[3.0, 1.0]);
        let mut rng = Rng::new(9, 9);
        let firsts = (0..10_000)
            .filter(|_| weighted_order(&items, 2, &mut rng)[0].node.0 == 0)
            .count();
        assert_eq!(weighted_order(&items, 1, &mut rng).len(), 1);
        // Expected 3/4 of 10,000; 4 standard deviations is ~170.
        assert!((7_330..=7_670).contains(&firsts), "{firsts}");
    }

    type Draws = fn(&[Recommendation], usize, &mut Rng, &mut DrawScratch, &mut Vec<Recommendation>);

    /// Both ways of drawing (whichever a list's length picks).
    const BOTH: [(&str, Draws); 2] = [
        ("sequential", |items, limit, rng, _, out| {
            sequential_draws(items, limit, rng, out)
        }),
        ("redrawing", redrawing_draws),
    ];

    /// Every ordered outcome of drawing 3 of 4 items, against its probability worked out by
    /// enumeration (product over draws of the score over the scores not yet drawn), for both
    /// ways of drawing.
    #[test]
    fn orders_have_the_probabilities_of_drawing_without_replacement() {
        let scores = [1.0, 2.0, 3.0, 10.0];
        let all = items(&scores);
        let mut expected = std::collections::BTreeMap::new();
        for a in 0..4usize {
            for b in (0..4).filter(|&b| b != a) {
                for c in (0..4).filter(|&c| c != a && c != b) {
                    let mut left = 16.0;
                    let mut p = 1.0;
                    for i in [a, b, c] {
                        p *= scores[i] / left;
                        left -= scores[i];
                    }
                    expected.insert(vec![a as u32, b as u32, c as u32], p);
                }
            }
        }
        let runs = 200_000;
        for (name, draws) in BOTH {
            let mut seen = std::collections::BTreeMap::<Vec<u32>, u32>::new();
            let (mut rng, mut scratch) = (Rng::new(4, 1), DrawScratch::default());
            let mut order = Vec::new();
            for _ in 0..runs {
                order.clear();
                draws(&all, 3, &mut rng, &mut scratch, &mut order);
                *seen
                    .entry(order.iter().map(|r| r.node.0).collect())
                    .or_default() += 1;
            }
            assert_eq!(
                seen.keys().collect::<Vec<_>>(),
                expected.keys().collect::<Vec<_>>(),
                "{name}"
            );
            for (outcome, &p) in &expected {
                let n = runs as f64;
                let sd = (n * p * (1.0 - p)).sqrt();
                let got = seen[outcome] as f64;
                assert!(
                    (got - n * p).abs() < 5.0 * sd + 1.0,
                    "{name} {outcome:?}: {got} vs {}",
                    n * p
                );
            }
        }
    }

    /// The sequential way, and the same order drawn one item at a time as it is needed
    /// ([`draw_to_front`]: a prefix, then the rest with [`draw_all`]), against drawing with
    /// [`Rng::weighted`] from the weights left and removing each drawn item: the same orders and
    /// the same random draws used, on random scores (zeros, ties, spreads over many orders of
    /// magnitude) and every length up to the sequential limit.
    #[test]
    fn sequential_draws_match_removing_drawn_items() {
        let mut r = Rng::new(12, 0);
        for case in 0..3_000 {
            let n = 1 + r.below(SEQUENTIAL_UP_TO as u64) as usize;
            let scores: Vec<f64> = (0..n)
                .map(|_| match case % 3 {
                    0 => r.f64(),
                    1 => [0.0, 1.0, 1e-13, 2.0][r.below(4) as usize],
                    _ => 10f64.powf(r.f64() * 40.0 - 20.0),
                })
                .collect();
            let all = items(&scores);
            let limit = 1 + r.below(n as u64) as usize;
            let removing = |limit: usize, rng: &mut Rng| {
                let mut left = all.clone();
                let mut weights: Vec<f64> = left.iter().map(|i| i.score.max(1e-12)).collect();
                (0..limit)
                    .map(|_| {
                        let k = rng.weighted(&weights);
                        weights.remove(k);
                        left.remove(k)
                    })
                    .collect::<Vec<_>>()
            };
            let (mut a, mut b) = (Rng::new(case, 5), Rng::new(case, 5));
            let mut got = Vec::new();
            sequential_draws(&all, limit, &mut a, &mut got);
            assert_eq!(got, removing(limit, &mut b), "case {case}");
            assert_eq!(a.clone().next_u64(), b.clone().next_u64(), "case {case}");
            // One at a time: the prefix leaves the stream where drawing it at once does; the
            // rest, drawn later, completes the whole order.
            let (mut lazy, mut whole) = (all.clone(), Rng::new(case, 5));
            let mut one_by_one = Rng::new(case, 5);
            draw_first(&mut lazy, limit, &mut one_by_one);
            assert_eq!(lazy[..limit], got[..], "case {case}");
            assert_eq!(one_by_one.clone().next_u64(), a.next_u64(), "case {case}");
            draw_all(&mut lazy[limit..], &mut one_by_one);
            assert_eq!(lazy, removing(n, &mut whole), "case {case}");
        }
    }

    /// One item holding nearly all the weight, zero scores, and every item wanted: each comes
    /// out once, the heavy one first (for the redrawing way, the rebuild ends the redraws); the
    /// public entry point picks the way by length and caps the count.
    #[test]
    fn lopsided_scores_still_draw_every_item_once() {
        let all = items(&[0.0, 1e12, 0.0, 1e-9, 5.0]);
        for (name, draws) in BOTH {
            for seed in 0..100 {
                let mut order = Vec::new();
                let mut scratch = DrawScratch::default();
                draws(&all, 5, &mut Rng::new(seed, 3), &mut scratch, &mut order);
                assert_eq!(order[0].node, NodeIdx(1), "{name}");
                let mut nodes: Vec<u32> = order.iter().map(|r| r.node.0).collect();
                nodes.sort_unstable();
                assert_eq!(nodes, vec![0, 1, 2, 3, 4], "{name}");
            }
        }
        let long = items(&vec![1.0; SEQUENTIAL_UP_TO + 1]);
        let order = weighted_order(&long, 100, &mut Rng::new(1, 1));
        let mut nodes: Vec<u32> = order.iter().map(|r| r.node.0).collect();
        nodes.sort_unstable();
        assert_eq!(nodes, (0..=SEQUENTIAL_UP_TO as u32).collect::<Vec<_>>());
        assert_eq!(weighted_order(&all, 9, &mut Rng::new(0, 0)).len(), 5);
        assert!(weighted_order(&[], 3, &mut Rng::new(0, 0)).is_empty());
    }
}
