//! CPython 3's `random` module, draw for draw (issue 59): the Mersenne Twister (`rand_mt`)
//! seeded as `random.seed(n)` seeds it, and the few functions the Sparrow authors' simulator
//! calls (`random()`, `randint`, `shuffle`, `expovariate`), each consuming the generator's
//! 32-bit words exactly as CPython 3.2+ does (`Lib/random.py`, `Modules/_randommodule.c`).
//! [`RadlabDraws`] replays that simulator's per-job draws (GitHub `radlab/sparrow`,
//! `simulation_cancellation.py`'s `JobArrival.run` and `send_probes`), so a scenario's arrivals
//! and a scheduler's probe targets can be the very ones it draws for the same seed: cellsim's
//! `radlab` mode and the peer then run the same random numbers, and a difference between their
//! results is a difference of model, not of sampling.
//!
//! Invariants: every function consumes the words CPython's does, in its order (tested against
//! values printed by CPython 3.11); the stream depends only on the seed.

use rand_mt::Mt;
use serde::{Deserialize, Serialize};

/// CPython 3's `random.Random`, for the functions the peer calls.
#[derive(Clone)]
pub struct PyRandom {
    mt: Box<Mt>,
}

impl std::fmt::Debug for PyRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PyRandom")
    }
}

impl PyRandom {
    /// `random.seed(seed)`: `init_by_array` with the seed's 32-bit words, least significant
    /// first (one word, 0, for 0).
    pub fn new(seed: u64) -> PyRandom {
        let key: Vec<u32> = if seed >> 32 == 0 {
            vec![seed as u32]
        } else {
            vec![seed as u32, (seed >> 32) as u32]
        };
        PyRandom {
            mt: Box::new(Mt::new_with_key(key)),
        }
    }

    /// `getrandbits(k)` for 1 <= k <= 32: one word's top `k` bits.
    pub fn getrandbits(&mut self, k: u32) -> u32 {
        debug_assert!((1..=32).contains(&k));
        self.mt.next_u32() >> (32 - k)
    }

    /// `random()`: 53 bits from two words, in [0, 1).
    pub fn random(&mut self) -> f64 {
        let a = self.mt.next_u32() >> 5;
        let b = self.mt.next_u32() >> 6;
        (a as f64 * 67_108_864.0 + b as f64) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `_randbelow(n)` for 1 <= n < 2^32: `getrandbits(n.bit_length())` until below `n`
    /// (so `n = 1` draws until a word's top bit is 0).
    pub fn randbelow(&mut self, n: u32) -> u32 {
        debug_assert!(n >= 1);
        let k = 32 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// `randint(a, b)`, `a <= b`.
    pub fn randint(&mut self, a: u32, b: u32) -> u32 {
        a + self.randbelow(b - a + 1)
    }

    /// `shuffle(x)`: Fisher-Yates from the end, `_randbelow(i + 1)` for each i from len - 1
    /// down to 1.
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.randbelow(i as u32 + 1) as usize;
            x.swap(i, j);
        }
    }

    /// `expovariate(lambd)`: `-log(1 - random()) / lambd`.
    pub fn expovariate(&mut self, lambd: f64) -> f64 {
        -(1.0 - self.random()).ln() / lambd
    }
}

/// The Sparrow authors' simulator's random draws, job by job, for one seed: at each job's
/// arrival it picks a scheduler (`random.randint(0, NUM_SCHEDULERS - 1)`, one scheduler here),
/// shuffles its list of worker indices in place (the list keeps its order from job to job) and
/// probes the first `d x tasks`, then, with exponential arrivals, draws the gap to the next
/// job (`random.expovariate(1 / mean gap)`). Nothing else in its run draws (constant task
/// durations, no cancellation or work stealing).
///
/// Saved (serde) as its seed, settings and jobs drawn, and rebuilt from them by drawing again.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "SavedDraws", into = "SavedDraws")]
pub struct RadlabDraws {
    seed: u64,
    rng: PyRandom,
    workers: Vec<u32>,
    /// The mean gap between arrivals, ms (`None`: even arrivals, no draw).
    mean_gap_ms: Option<f64>,
    jobs: u64,
}

impl RadlabDraws {
    /// The draws of `random.seed(seed)` over `workers` workers; `mean_gap_ms` with exponential
    /// arrivals (its value sets only the gaps returned, not the stream).
    pub fn new(seed: u64, workers: u32, mean_gap_ms: Option<f64>) -> RadlabDraws {
        RadlabDraws {
            seed,
            rng: PyRandom::new(seed),
            workers: (0..workers).collect(),
            mean_gap_ms,
            jobs: 0,
        }
    }

    /// The next job's draws: its workers in probe order (the whole shuffled list; the peer
    /// probes its first `d x tasks`), and the gap to the next arrival, ms, with exponential
    /// arrivals.
    pub fn next_job(&mut self) -> (&[u32], Option<f64>) {
        self.rng.randint(0, 0);
        self.rng.shuffle(&mut self.workers);
        let gap = self.mean_gap_ms.map(|m| self.rng.expovariate(1.0 / m));
        self.jobs += 1;
        (&self.workers, gap)
    }
}

/// [`RadlabDraws`] as saved: (seed, workers, mean gap ms, jobs drawn).
#[derive(Serialize, Deserialize)]
struct SavedDraws(u64, u32, Option<f64>, u64);

impl From<RadlabDraws> for SavedDraws {
    fn from(d: RadlabDraws) -> SavedDraws {
        SavedDraws(d.seed, d.workers.len() as u32, d.mean_gap_ms, d.jobs)
    }
}

impl From<SavedDraws> for RadlabDraws {
    fn from(SavedDraws(seed, workers, mean_gap_ms, jobs): SavedDraws) -> RadlabDraws {
        let mut d = RadlabDraws::new(seed, workers, mean_gap_ms);
        for _ in 0..jobs {
            d.next_job();
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by CPython 3.11 (`random.seed(s)`, then the calls named).
    #[test]
    fn draws_are_cpythons() {
        let mut r = PyRandom::new(1);
        assert_eq!(r.random(), 0.13436424411240122);
        assert_eq!(r.random(), 0.8474337369372327);
        let mut r = PyRandom::new(1);
        let words: Vec<u32> = (0..3).map(|_| r.getrandbits(32)).collect();
        assert_eq!(words, [577090037, 2444712010, 3639700191]);
        assert_eq!(PyRandom::new(0).random(), 0.8444218515250481);
        assert_eq!(PyRandom::new((1 << 40) + 5).random(), 0.5043802970418443);
        // shuffle, then randint(0, 0), then expovariate.
        let mut r = PyRandom::new(7);
        let mut x: Vec<u32> = (0..50).collect();
        r.shuffle(&mut x);
        assert_eq!(x[..10], [24, 35, 14, 31, 10, 48, 11, 16, 28, 29]);
        assert_eq!(r.randint(0, 0), 0);
        assert_eq!(r.expovariate(1.0 / 100.0), 10.250966762804977);
        // randint(0, 0) rejects every word with its top bit set: five of them take the first
        // eleven words of seed 3 (2545373330, 2337446730, ... are >= 2^31), the next word is
        // the twelfth.
        let mut r = PyRandom::new(3);
        assert!((0..5).all(|_| r.randint(0, 0) == 0));
        assert_eq!(r.getrandbits(32), 2601030205);
    }

    /// The per-job draws in the peer's order: randint, shuffle, expovariate; the list kept
    /// from job to job; no gap drawn with even arrivals.
    #[test]
    fn radlab_draws_follow_the_peers_order() {
        let mut r = PyRandom::new(5);
        let mut x: Vec<u32> = (0..50).collect();
        let mut expected = Vec::new();
        for _ in 0..3 {
            r.randint(0, 0);
            r.shuffle(&mut x);
            let gap = r.expovariate(1.0 / 52.6);
            expected.push((x.clone(), gap));
        }
        let mut d = RadlabDraws::new(5, 50, Some(52.6));
        for (order, gap) in &expected {
            let (o, g) = d.next_job();
            assert_eq!((o, g), (&order[..], Some(*gap)));
        }
        // Saved and loaded after two jobs, it draws the third job's.
        let mut d = RadlabDraws::new(5, 50, Some(52.6));
        d.next_job();
        d.next_job();
        let json = serde_json::to_string(&d).expect("saves");
        let mut loaded: RadlabDraws = serde_json::from_str(&json).expect("loads");
        assert_eq!(loaded.next_job(), (&expected[2].0[..], Some(expected[2].1)));
        // Even arrivals: the same calls without the gap's two words.
        let mut r = PyRandom::new(5);
        let mut x: Vec<u32> = (0..50).collect();
        let mut even = RadlabDraws::new(5, 50, None);
        for _ in 0..4 {
            r.randint(0, 0);
            r.shuffle(&mut x);
            assert_eq!(even.next_job(), (&x[..], None));
        }
    }
}
