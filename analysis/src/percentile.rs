//! The one percentile definition of cellsim's analysis (`report`, `experiment`, the policy
//! tables' summaries, the timing medians) and of its notebook: linear interpolation between the
//! two nearest ranks, Hyndman and Fan's type 7 — the default of numpy's `percentile`, pandas'
//! `quantile` and DuckDB's `quantile_cont`, so a number `report` prints is the number a notebook
//! computes from the same rows (issue 56: `report`'s nearest rank and the notebook's
//! interpolation once differed by 37 % on one p99).
//!
//! Invariant: for `q` in [0, 1] the result lies between the smallest and the largest value,
//! equals a value when `q (n - 1)` is a whole number, and is NaN for no values.

/// The `q` quantile (0..=1) of `sorted` (ascending, by `f64::total_cmp`); NaN when empty.
pub fn of_sorted(sorted: &[f64], q: f64) -> f64 {
    let Some(&last) = sorted.last() else {
        return f64::NAN;
    };
    let h = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (below, above) = (h.floor() as usize, h.ceil() as usize);
    if below == above {
        return sorted[below];
    }
    let (a, b) = (sorted[below], sorted.get(above).copied().unwrap_or(last));
    a + (h - below as f64) * (b - a)
}

/// The `q` quantile of `values`, sorted here.
pub fn of(mut values: Vec<f64>, q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    of_sorted(&values, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand, as numpy's `percentile(range(1, 11), [50, 90, 99])` and pandas' `quantile` give
    /// them: 5.5, 9.1, 9.91; the ends are the extremes; one value is every quantile; an even
    /// count's median is the mean of the middle two.
    #[test]
    fn linear_between_the_nearest_ranks() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(of_sorted(&v, 0.5), 5.5));
        assert!(close(of_sorted(&v, 0.9), 9.1));
        assert!(close(of_sorted(&v, 0.99), 9.91));
        assert_eq!((of_sorted(&v, 0.0), of_sorted(&v, 1.0)), (1.0, 10.0));
        assert_eq!(of_sorted(&[7.0], 0.99), 7.0);
        assert_eq!(of(vec![4.0, 1.0, 3.0, 2.0], 0.5), 2.5);
        assert_eq!(of(vec![3.0, 1.0, 2.0], 0.5), 2.0);
        assert!(of_sorted(&[], 0.5).is_nan());
    }

    /// Against an independent definition, the weighted mean of the two order statistics that
    /// bracket rank 1 + q (n - 1), over random samples and quantiles: within the sample's range
    /// and equal to it.
    #[test]
    fn agrees_with_the_rank_definition() {
        let mut r = ingest::rng::Rng::new(3, 0);
        for _ in 0..500 {
            let n = 1 + r.below(40) as usize;
            let mut v: Vec<f64> = (0..n).map(|_| r.below(1_000) as f64 / 7.0).collect();
            v.sort_by(f64::total_cmp);
            let q = r.below(1_001) as f64 / 1_000.0;
            let rank = 1.0 + q * (n - 1) as f64;
            let (lo, frac) = (rank.floor() as usize, rank.fract());
            let next = if lo < n { v[lo] } else { v[n - 1] };
            let expected = v[lo - 1] + frac * (next - v[lo - 1]);
            assert!((of_sorted(&v, q) - expected).abs() < 1e-9, "{v:?} {q}");
            assert!(v[0] <= of_sorted(&v, q) && of_sorted(&v, q) <= v[n - 1]);
        }
    }
}
