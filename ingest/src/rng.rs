//! Deterministic random numbers: SplitMix64 streams keyed by a seed and a stream id.
//!
//! Hand-written rather than taken from `rand`: the output must never change across crate
//! versions (committed benchmark traces and byte-identical reruns depend on it), and the engine
//! derives counter-based per-(agent, tick, round) streams with [`mix64`] the same way.

/// SplitMix64 finaliser: a bijective 64-bit mix with good avalanche.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hashes a seed with a list of keys into one 64-bit value.
pub fn hash_keys(seed: u64, keys: &[u64]) -> u64 {
    keys.iter()
        .fold(mix64(seed ^ 0x5851_f42d_4c95_7f2d), |h, &k| {
            mix64(h ^ mix64(k))
        })
}

/// A SplitMix64 random stream.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A stream identified by `seed` and `stream` (independent streams for different ids).
    pub fn new(seed: u64, stream: u64) -> Rng {
        Rng {
            state: hash_keys(seed, &[stream]),
        }
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }

    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n); `n` must be positive.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// The first `want` of `items` after a partial Fisher-Yates shuffle (uniform, distinct, in
    /// draw order; all of them when fewer). The one shuffle Sparrow's and seed 003's samplers
    /// share.
    pub fn first_shuffled<T>(&mut self, mut items: Vec<T>, want: usize) -> Vec<T> {
        let want = want.min(items.len());
        for k in 0..want {
            let j = k + self.below((items.len() - k) as u64) as usize;
            items.swap(k, j);
        }
        items.truncate(want);
        items
    }

    /// Exponential with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.f64()).ln()
    }

    /// Standard normal (Box-Muller, one value per call).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.f64();
        let u2 = self.f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Log-normal with the given median and log-space standard deviation.
    pub fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }

    /// Index drawn with probability proportional to `weights` (non-negative, at least one
    /// positive). A zero weight is never drawn: when rounding carries the draw past the end, the
    /// last positive weight's index is returned. So zeroing the weights of items already drawn
    /// draws exactly as removing them would (the sum and the walk skip zeros unchanged).
    pub fn weighted(&mut self, weights: &[f64]) -> usize {
        self.weighted_by(weights.len(), |i| weights[i])
    }

    /// [`Rng::weighted`] over the `n` weights `weight(0..n)`, computed as they are read (twice
    /// each) instead of gathered first.
    pub fn weighted_by(&mut self, n: usize, weight: impl Fn(usize) -> f64) -> usize {
        let total: f64 = (0..n).map(&weight).sum();
        walk(n, weight, self.f64() * total)
    }
}

/// The index whose weight holds `x` when the `n` weights are laid end to end: each weight below
/// `x` is subtracted in turn; past the end, the last positive weight's index.
fn walk(n: usize, weight: impl Fn(usize) -> f64, mut x: f64) -> usize {
    for i in 0..n {
        let w = weight(i);
        if x < w {
            return i;
        }
        x -= w;
    }
    (0..n).rposition(|i| weight(i) > 0.0).unwrap_or(n - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // First outputs of SplitMix64 seeded with 0 (Vigna's reference implementation).
        let mut z = 0u64;
        let mut next = || {
            z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(z)
        };
        assert_eq!(next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(next(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 2);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// Zero weights are never drawn, not even by the fallback for a draw that rounding carries
    /// past the end of the weights (given to the walk directly here: such draws are rare).
    #[test]
    fn zero_weights_are_never_drawn() {
        let mut r = Rng::new(5, 0);
        for _ in 0..10_000 {
            assert_eq!(r.weighted(&[0.0, 2.0, 0.0, 0.0]), 1);
            assert_ne!(r.weighted(&[1.0, 0.0, 3.0, 0.0]) % 2, 1);
        }
        let weights = [0.1, 0.2, 0.0];
        let of = |i: usize| weights[i];
        assert_eq!(walk(3, of, 0.05), 0);
        assert_eq!(walk(3, of, 0.25), 1);
        assert_eq!(
            walk(3, of, 0.4),
            1,
            "past the end: the last positive weight"
        );
        assert_eq!(walk(1, |_| 2.0, 5.0), 0);
    }

    #[test]
    fn moments_are_close() {
        let mut r = Rng::new(1, 0);
        let n = 200_000;
        let mean_exp = (0..n).map(|_| r.exp(3.0)).sum::<f64>() / n as f64;
        assert!((mean_exp - 3.0).abs() < 0.05, "{mean_exp}");
        let mean_u = (0..n).map(|_| r.f64()).sum::<f64>() / n as f64;
        assert!((mean_u - 0.5).abs() < 0.01);
        assert!((0..n).all(|_| r.below(10) < 10));
    }
}
