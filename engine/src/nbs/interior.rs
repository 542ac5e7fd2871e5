//! A primal-dual interior point for the bargain (`problem.rs`) that uses its structure, so a
//! solve costs O(jobs x slots^2) per iteration instead of a general sparse factorisation
//! (issue 60 item 4: Clarabel takes 6-11 s for ~4,000 GCD jobs; this ~0.14 s on 2 cores,
//! `bench-results/nbs-per-job-2026-11-28.md`, `nbs-per-job-day-2026-11-28.md`).
//!
//! In `units.rs`'s units, with x_j(t) >= 0 the rates of the live jobs in the slots with
//! capacity: maximise sum_j P_j log(y_j) + sum g_j(t) x_j(t), y_j = sum_t a_j(t) x_j(t) (g: the
//! earliness tie-break, 0 by default), subject to rows G x <= h of six kinds, each with a slack
//! s > 0 and a multiplier z > 0: capacity (sum_j c_j x_j(t) <= b_t, the only rows coupling
//! jobs), x >= 0 (slack x itself), rate caps (x_j(t) <= r_j), requirement caps (sum_t x_j(t) <=
//! R_j), hard deadlines (y_j >= 1), and one utility row per job (y_j >= 0, slack y_j itself,
//! multiplier lambda_j): the logarithms enter only through the utility rows' complementarity,
//! lambda_j y_j = P_j (their target, where every other row's is the centring mu), so the
//! program is otherwise linear and the primal and dual steps may differ. Mehrotra's
//! predictor-corrector (Nocedal and Wright, Numerical Optimization, 2nd ed., section 14.2) from
//! a dual-feasible start that need not meet the capacity, requirement or hard rows.
//!
//! Newton's system in normal-equation form: the x >= 0 and rate-cap rows on the diagonal D, the
//! other rows' multipliers the unknowns, (G_R D G_R' + W) dz = rhs. Each job's three rows
//! (utility, hard, requirement) make a 3 x 3 block, factored by QR of its square root (forming
//! it would lose a binding row's s / z, ~1e-16 of the rest) in a basis where rows parallel to
//! the utility row (the hard row always, the requirement row when the job's weights are flat)
//! carry no rates; the capacity rows are eliminated last through their slots x slots Schur
//! complement; two rounds of iterative refinement against the augmented system follow (the
//! normal equations multiply rounding by D, up to ~1e10 for a rate inside its bounds).
//!
//! The per-job work (the blocks, the eliminations, the products with G) runs on rayon in fixed
//! chunks of [`JOBS_PER_CHUNK`] jobs; the predictor's direction is not refined (it only sets
//! step lengths, sigma and the corrector's term), the corrector's is (`REFINEMENTS`). Arrays
//! are reused across iterations (`scratch.rs`).
//!
//! Invariants: a sum over jobs is summed per chunk and the chunks' sums added in chunk order,
//! and element-wise work has no sums, so a solve gives the same bits on any number of threads
//! (tested with 1, 2 and 8 in `engine/tests/nbs_structured.rs`). It stops
//! when the residuals and the duality gap, each over its scale, are below 1e-9; returns the best
//! point within 1e-6 should it then stall or break down; and otherwise reports a stall or
//! infeasibility as `NbsError::Solver`, on which `problem.rs` asks Clarabel.

// Indices name a job's rows and slots across several columns at once, as in the algebra.
#![allow(clippy::needless_range_loop)]

use super::dense::{cholesky, cholesky_by_qr, cholesky_solve, cholesky_solve3};
use super::problem::{NbsError, Problem};
use super::scratch::{self, Buf};
use super::units::Units;
use rayon::prelude::*;

/// Iterations before giving up (Mehrotra's method takes 15-40 on these problems).
const MAX_ITERATIONS: u32 = 200;
/// Stop: the residuals (primal, dual, the utility rows' lambda y - P) and the duality gap,
/// each over its scale, at most this (Clarabel, `problem.rs`: 1e-8 on feasibility, 1e-10 on
/// the gap; it too stops short of that on GCD cells, by up to 1e-3 of the objective on the
/// random problems of `engine/tests/nbs_structured.rs`).
const TOL: f64 = 1e-9;
/// A point within this is kept as the answer should the iterations then stop improving for
/// `STALL_ITERATIONS` or break down (rounding near a degenerate optimum: a job indifferent
/// between slots has rates whose bounds' multipliers go to 0; a hard job with a requirement
/// cap has rows with no interior between them).
const ACCEPTABLE_TOL: f64 = 1e-6;
/// Iterations without a better point before an acceptable one is returned (and four times as
/// many without the merit halving before the solve is given up as stalled).
const STALL_ITERATIONS: u32 = 8;
/// Rounds of iterative refinement of each Newton solve.
const REFINEMENTS: usize = 2;
/// Rounds of iterative refinement of the predictor's direction (used only for the step
/// lengths, sigma and the corrector's second-order term, never taken).
const AFFINE_REFINEMENTS: usize = 0;
/// Steps stop this share short of the boundary.
const STEP_BACK: f64 = 0.99;
/// Jobs per chunk of the loops that run on rayon: fixed, so a sum over jobs (per chunk, then
/// the chunks' sums in chunk order) is the same for any number of threads.
const JOBS_PER_CHUNK: usize = 256;
/// Elements per chunk of the element-wise loops on rayon.
const ELEMENTS_PER_CHUNK: usize = 4096;

/// The program of the live jobs (module doc).
struct Program {
    n: usize,
    slots: usize,
    /// Problem index of live job j.
    index: Vec<usize>,
    /// Problem slot of slot k (those with capacity).
    open: Vec<usize>,
    /// Per job, T's entries (t01, t02) (`Program::row_coefficients`).
    basis: Vec<[f64; 2]>,
    /// Per job, its third unknown's coefficient on its rates: 1 for a requirement row not
    /// parallel to its utility row, else 0.
    total_coefficient: Vec<f64>,
    priority: Vec<f64>,
    /// a_j(t) and g_j(t) at j * slots + t.
    a: Vec<f64>,
    gain: Vec<f64>,
    /// c_j, its capacity rows' coefficient.
    c: Vec<f64>,
    /// b_t.
    capacity: Vec<f64>,
    /// r_j (infinite: no row).
    rate: Vec<f64>,
    /// R_j (infinite: no row).
    total: Vec<f64>,
    hard: Vec<bool>,
}

/// The primal-dual point; pairs (s, z) per row kind, the x >= 0 rows' slack being x itself.
#[derive(Clone)]
struct Point {
    x: Buf<f64>,
    z_pos: Buf<f64>,
    s_cap: Buf<f64>,
    z_cap: Buf<f64>,
    s_rate: Buf<f64>,
    z_rate: Buf<f64>,
    s_total: Buf<f64>,
    z_total: Buf<f64>,
    s_hard: Buf<f64>,
    z_hard: Buf<f64>,
    /// Each job's multiplier of its utility row (y_i >= 0, slack y_i itself): lambda_i, with
    /// lambda_i y_i = P_i at the optimum.
    z_util: Buf<f64>,
}

/// Rows' values in the same layout as the point's slacks (capacity, x >= 0, rate, total,
/// hard); unused rows hold 0.
#[derive(Clone)]
struct Rows {
    cap: Buf<f64>,
    pos: Buf<f64>,
    rate: Buf<f64>,
    total: Buf<f64>,
    hard: Buf<f64>,
    util: Buf<f64>,
}

impl Point {
    /// Every row's multiplier, in `Rows`' layout.
    fn multipliers(&self) -> Rows {
        Rows {
            cap: self.z_cap.clone(),
            pos: self.z_pos.clone(),
            rate: self.z_rate.clone(),
            total: self.z_total.clone(),
            hard: self.z_hard.clone(),
            util: self.z_util.clone(),
        }
    }
}

impl Rows {
    /// The largest magnitude over the rows with right-hand sides (a primal residual's size;
    /// the x >= 0 and utility rows hold 0 there).
    fn max_abs(&self) -> f64 {
        [&self.cap, &self.rate, &self.total, &self.hard]
            .iter()
            .fold(0.0, |m: f64, r| m.max(max_abs(r)))
    }

    fn zeros(n: usize, slots: usize) -> Rows {
        Rows {
            cap: Buf::zeros(slots),
            pos: Buf::zeros(n * slots),
            rate: Buf::zeros(n * slots),
            total: Buf::zeros(n),
            hard: Buf::zeros(n),
            util: Buf::zeros(n),
        }
    }
}

/// One Newton direction.
struct Step {
    dx: Buf<f64>,
    ds: Rows,
    dz: Rows,
}

/// Newton's system in normal-equation form (module doc), factored: the rates' diagonal D, each
/// job's 3 x 3 block of its own rows (utility, hard, requirement; an absent row an identity),
/// the capacity-to-job couplings, and the Schur complement onto the capacity rows.
struct Factor {
    /// D per rate: 1 / (z / x + z_rate / s_rate).
    d: Buf<f64>,
    /// Per job, its rows' s / z (`row_weights`).
    w_inv: Buf<[f64; 3]>,
    /// Per job, the lower Cholesky factor of its rows' block (row-major).
    block: Buf<[f64; 9]>,
    /// Per rate, the coupling of its slot's capacity row with its job's three rows.
    coupling: Buf<[f64; 3]>,
    /// The lower Cholesky factor of the capacity rows' Schur complement.
    chol: Vec<f64>,
}

/// Rows' multiplier steps in the normal equations: capacity rows, and per job its three.
#[derive(Clone)]
struct RowSteps {
    cap: Vec<f64>,
    job: Buf<[f64; 3]>,
}

impl Program {
    fn new(p: &Problem, units: &Units) -> Program {
        let all = units.slots;
        let index: Vec<usize> = (0..p.jobs.len()).filter(|&i| units.live[i]).collect();
        // A slot without capacity gives every rate 0: it is left out (its capacity row would
        // have no interior).
        let open: Vec<usize> = (0..all).filter(|&t| p.capacity[t] > 0.0).collect();
        let per_slot = |f: &dyn Fn(usize, usize) -> f64| -> Vec<f64> {
            index
                .iter()
                .flat_map(|&i| open.iter().map(move |&t| (i, t)))
                .map(|(i, t)| f(i, t))
                .collect()
        };
        let a = per_slot(&|i, t| {
            if units.weight[i * all + t] > 0.0 {
                units.y_coefficient(p, i, t)
            } else {
                0.0
            }
        });
        let gain = per_slot(&|i, t| units.earliness_gain(p, i, t));
        let t = open.len();
        let total: Vec<f64> = (index.iter())
            .map(|&i| match p.requirement_cap {
                true => units.requirement[i] / p.slot_s / units.unit[i],
                false => f64::INFINITY,
            })
            .collect();
        let hard: Vec<bool> = index.iter().map(|&i| units.hard[i]).collect();
        let basis: Vec<[f64; 2]> = (0..index.len())
            .map(|j| {
                let a = &a[j * t..(j + 1) * t];
                let parallel = total[j].is_finite() && a[0] > 0.0 && a.iter().all(|&v| v == a[0]);
                [
                    if hard[j] { -1.0 } else { 0.0 },
                    if parallel { 1.0 / a[0] } else { 0.0 },
                ]
            })
            .collect();
        let total_coefficient = (0..index.len())
            .map(|j| f64::from(total[j].is_finite() && basis[j][1] == 0.0))
            .collect();
        Program {
            n: index.len(),
            slots: t,
            basis,
            total_coefficient,
            priority: index.iter().map(|&i| units.priority[i]).collect(),
            a,
            gain,
            c: index.iter().map(|&i| units.unit[i] / units.scale).collect(),
            capacity: open.iter().map(|&t| p.capacity[t] / units.scale).collect(),
            rate: (index.iter())
                .map(|&i| match p.jobs[i].rate_cap {
                    r if r.is_finite() => r.max(0.0) / units.unit[i],
                    _ => f64::INFINITY,
                })
                .collect(),
            total,
            hard,
            index,
            open,
        }
    }

    fn rows(&self) -> usize {
        let t = self.slots;
        t + self.n * t
            + self.rate.iter().filter(|r| r.is_finite()).count() * t
            + self.total.iter().filter(|r| r.is_finite()).count()
            + self.hard.iter().filter(|&&h| h).count()
    }

    fn y(&self, x: &[f64]) -> Buf<f64> {
        let t = self.slots;
        (0..self.n)
            .map(|j| (0..t).map(|k| self.a[j * t + k] * x[j * t + k]).sum())
            .collect()
    }

    /// G x (the x >= 0 rows: -x).
    fn g_mul(&self, x: &[f64]) -> Rows {
        let (n, t) = (self.n, self.slots);
        let mut r = Rows::zeros(n, t);
        for j in 0..n {
            let mut total = 0.0;
            let mut y = 0.0;
            for k in 0..t {
                let v = x[j * t + k];
                r.cap[k] += self.c[j] * v;
                r.pos[j * t + k] = -v;
                if self.rate[j].is_finite() {
                    r.rate[j * t + k] = v;
                }
                total += v;
                y += self.a[j * t + k] * v;
            }
            if self.total[j].is_finite() {
                r.total[j] = total;
            }
            if self.hard[j] {
                r.hard[j] = -y;
            }
            r.util[j] = -y;
        }
        r
    }

    /// G' v.
    fn gt_mul(&self, v: &Rows) -> Buf<f64> {
        let t = self.slots;
        par_map(self.n * t, |at| {
            let (j, k) = (at / t, at % t);
            let mut o = self.c[j] * v.cap[k] - v.pos[at];
            if self.rate[j].is_finite() {
                o += v.rate[at];
            }
            if self.total[j].is_finite() {
                o += v.total[j];
            }
            if self.hard[j] {
                o -= self.a[at] * v.hard[j];
            }
            o -= self.a[at] * v.util[j];
            o
        })
    }

    /// h - G x - s: the primal residual's negation is G x + s - h; returned as G x + s - h.
    fn primal_residual(&self, pt: &Point) -> Rows {
        let (n, t) = (self.n, self.slots);
        let mut r = self.g_mul(&pt.x);
        for k in 0..t {
            r.cap[k] += pt.s_cap[k] - self.capacity[k];
        }
        // The slacks of x >= 0 and y >= 0 are x and y themselves.
        r.pos.iter_mut().for_each(|v| *v = 0.0);
        r.util.iter_mut().for_each(|v| *v = 0.0);
        for j in 0..n {
            if self.rate[j].is_finite() {
                for k in 0..t {
                    r.rate[j * t + k] += pt.s_rate[j * t + k] - self.rate[j];
                }
            }
            if self.total[j].is_finite() {
                r.total[j] += pt.s_total[j] - self.total[j];
            }
            if self.hard[j] {
                r.hard[j] += pt.s_hard[j] + 1.0;
            }
        }
        r
    }

    /// The rates of every job in the problem's units, from the live jobs' scaled ones.
    fn rates(&self, x: &[f64], units: &Units, mut out: Vec<f64>) -> Vec<f64> {
        let (t, all) = (self.slots, units.slots);
        for (j, &i) in self.index.iter().enumerate() {
            for (k, &slot) in self.open.iter().enumerate() {
                out[i * all + slot] = x[j * t + k].max(0.0) * units.unit[i];
            }
        }
        out
    }

    /// The objective at x.
    fn objective(&self, x: &[f64], y: &[f64]) -> f64 {
        let gain: f64 = self.gain.iter().zip(x).map(|(g, x)| g * x).sum();
        -(0..self.n)
            .map(|j| self.priority[j] * y[j].ln())
            .sum::<f64>()
            - gain
    }

    /// A strictly positive start: each slot's capacity shared half out, within half of each
    /// job's caps; slacks at least 1e-2 (1 + |h|) and multipliers centred at mu0.
    fn start(&self) -> Point {
        let (n, t) = (self.n, self.slots);
        let c_sum: f64 = self.c.iter().sum::<f64>().max(1e-300);
        let mut x = Buf::zeros(n * t);
        for j in 0..n {
            let a = &self.a[j * t..(j + 1) * t];
            // A hard job starts meeting its deadline where its caps let it (y = 1.2 spread
            // over the slots before it); the others with half of an even share.
            let a_sum: f64 = a.iter().sum();
            for k in 0..t {
                let share = match self.hard[j] {
                    true if a[k] > 0.0 => 1.2 / a_sum,
                    _ => 0.5 * self.capacity[k] / c_sum,
                };
                x[j * t + k] = share.min(0.9 * self.rate[j]).max(1e-4);
            }
            let total: f64 = x[j * t..(j + 1) * t].iter().sum();
            let most = if self.hard[j] { 0.9 } else { 0.5 } * self.total[j];
            if total > most {
                let f = (most / total).max(1e-4 / total.max(1e-300));
                x[j * t..(j + 1) * t].iter_mut().for_each(|v| *v *= f);
            }
        }
        let gx = self.g_mul(&x);
        let slack = |h: f64, g: f64| (h - g).max(1e-2 * (1.0 + h.abs()));
        let mu0 = 0.1;
        let mut pt = Point {
            z_pos: x.iter().map(|v| mu0 / v).collect(),
            s_cap: (0..t).map(|k| slack(self.capacity[k], gx.cap[k])).collect(),
            z_cap: Buf::zeros(t),
            s_rate: Buf::filled(n * t, 1.0),
            z_rate: Buf::zeros(n * t),
            s_total: Buf::filled(n, 1.0),
            z_total: Buf::zeros(n),
            s_hard: Buf::filled(n, 1.0),
            z_hard: Buf::zeros(n),
            z_util: Buf::zeros(n),
            x,
        };
        for j in 0..n {
            if self.rate[j].is_finite() {
                for k in 0..t {
                    pt.s_rate[j * t + k] = slack(self.rate[j], gx.rate[j * t + k]);
                }
            }
            if self.total[j].is_finite() {
                pt.s_total[j] = slack(self.total[j], gx.total[j]);
            }
            if self.hard[j] {
                pt.s_hard[j] = slack(-1.0, gx.hard[j]);
            }
        }
        let centred = |s: &[f64]| s.iter().map(|v| mu0 / v).collect::<Buf<f64>>();
        pt.z_cap = centred(&pt.s_cap);
        pt.z_rate = centred(&pt.s_rate);
        pt.z_total = centred(&pt.s_total);
        pt.z_hard = centred(&pt.s_hard);
        let y = self.y(&pt.x);
        pt.z_util = (0..n).map(|j| self.priority[j] / y[j]).collect();
        // A dual-feasible start: each slot's capacity price above every job's bid for it (what
        // its utility and hard rows pay for a unit, less its caps' multipliers), the x >= 0
        // multipliers taking up the difference, so the dual residual starts at 0.
        let bid = |j: usize, k: usize| {
            let at = j * t + k;
            let mut b = self.a[at] * (pt.z_util[j] + pt.z_hard[j]) + self.gain[at];
            if self.rate[j].is_finite() {
                b -= pt.z_rate[at];
            }
            if self.total[j].is_finite() {
                b -= pt.z_total[j];
            }
            b
        };
        for k in 0..t {
            let top = (0..n).map(|j| bid(j, k) / self.c[j]).fold(0.0, f64::max);
            pt.z_cap[k] = pt.z_cap[k].max(1.5 * top);
        }
        for j in 0..n {
            for k in 0..t {
                pt.z_pos[j * t + k] = self.c[j] * pt.z_cap[k] - bid(j, k);
            }
        }
        pt
    }

    /// Job j's three unknowns' coefficients on its rate in slot k. A job's rows can be
    /// parallel (the utility and hard rows always, both -a; the requirement row, 1, when a
    /// is the same in every slot), which leaves its block of the normal matrix singular but
    /// for the rows' s / z, lost to rounding once a row binds. So the unknowns are
    /// (p, q, r) = T^-1 (dz_util, dz_hard, dz_total) with T = [[1, t01, t02], [0, 1, 0],
    /// [0, 0, 1]] (`basis`): p carries -a, q and a parallel r nothing, and s / z couples them
    /// (T' W T, [`Program::w_block`]). An absent row is an identity.
    fn row_coefficients(&self, j: usize, k: usize) -> [f64; 3] {
        [-self.a[j * self.slots + k], 0.0, self.total_coefficient[j]]
    }

    /// T's entries (t01, t02) for job j (`row_coefficients`).
    fn basis(&self, j: usize) -> [f64; 2] {
        self.basis[j]
    }

    /// Job j's rows' s / z (utility, hard, requirement; an absent row's 1): in the unknowns of
    /// `row_coefficients` they enter as T' diag(w) T.
    fn row_weights(&self, pt: &Point, y: &[f64], j: usize) -> [f64; 3] {
        [
            y[j] / pt.z_util[j],
            match self.hard[j] {
                true => pt.s_hard[j] / pt.z_hard[j],
                false => 1.0,
            },
            match self.total[j].is_finite() {
                true => pt.s_total[j] / pt.z_total[j],
                false => 1.0,
            },
        ]
    }

    /// Factors Newton's system at `pt` (module doc): N = G_R D G_R' + diag(s / z) over the
    /// rows R (capacity, utility, hard, requirement), the x >= 0 and rate-cap rows in D.
    fn factor(&self, pt: &Point, y: &[f64]) -> Factor {
        let (n, t) = (self.n, self.slots);
        let mut d = Buf::zeros(n * t);
        let mut w_inv = Buf::filled(n, [0.0; 3]);
        let mut block = Buf::filled(n, [0.0; 9]);
        let mut coupling = Buf::filled(n * t, [0.0; 3]);
        // Each chunk of jobs its own part of the Schur complement, summed in chunk order.
        let parts: Vec<Vec<f64>> = crate::parallel_time::region(|| {
            (d.par_chunks_mut(JOBS_PER_CHUNK * t))
                .zip(w_inv.par_chunks_mut(JOBS_PER_CHUNK))
                .zip(block.par_chunks_mut(JOBS_PER_CHUNK))
                .zip(coupling.par_chunks_mut(JOBS_PER_CHUNK * t))
                .enumerate()
                .map(|(chunk, (((d, w_inv), block), coupling))| {
                    let first = chunk * JOBS_PER_CHUNK;
                    let mut m = vec![0.0; t * t];
                    let mut solved = vec![[0.0; 3]; t];
                    let mut square_root: Vec<[f64; 3]> = Vec::with_capacity(t + 3);
                    for (local, (w_inv, block)) in
                        w_inv.iter_mut().zip(block.iter_mut()).enumerate()
                    {
                        let j = first + local;
                        let (d, coupling) = (
                            &mut d[local * t..(local + 1) * t],
                            &mut coupling[local * t..(local + 1) * t],
                        );
                        for k in 0..t {
                            let at = j * t + k;
                            let mut inv = pt.z_pos[at] / pt.x[at];
                            if self.rate[j].is_finite() {
                                inv += pt.z_rate[at] / pt.s_rate[at];
                            }
                            d[k] = 1.0 / inv;
                        }
                        *w_inv = self.row_weights(pt, y, j);
                        // The block is B' B with B's rows g sqrt(D) per slot and diag(w)^1/2 T:
                        // its Cholesky factor from B's QR, which keeps the digits of w that
                        // forming B' B would lose beside G D G' (a binding row's w is ~1e-16 of
                        // it).
                        let [t01, t02] = self.basis(j);
                        let [wu, wh, wt] = w_inv.map(f64::sqrt);
                        square_root.clear();
                        for k in 0..t {
                            let g = self.row_coefficients(j, k);
                            let root = d[k].sqrt();
                            square_root.push(g.map(|g| g * root));
                            for r in 0..3 {
                                coupling[k][r] = self.c[j] * d[k] * g[r];
                            }
                            m[k * t + k] += self.c[j] * self.c[j] * d[k];
                        }
                        square_root.extend([
                            [wu, wu * t01, wu * t02],
                            [0.0, wh, 0.0],
                            [0.0, 0.0, wt],
                        ]);
                        let l = cholesky_by_qr(&mut square_root);
                        *block = l;
                        // M -= N_cj N_jj^-1 N_jc.
                        for k in 0..t {
                            solved[k] = coupling[k];
                            cholesky_solve3(&l, &mut solved[k]);
                        }
                        for r in 0..t {
                            let cr = coupling[r];
                            for col in 0..=r {
                                let sc = solved[col];
                                m[r * t + col] -= cr[0] * sc[0] + cr[1] * sc[1] + cr[2] * sc[2];
                            }
                        }
                    }
                    m
                })
                .collect()
        });
        let mut m = vec![0.0; t * t];
        for k in 0..t {
            m[k * t + k] = pt.s_cap[k] / pt.z_cap[k];
        }
        let m = sum_parts(m, &parts);
        Factor {
            chol: cholesky(&m, t),
            d,
            w_inv,
            block,
            coupling,
        }
    }

    /// W' dz: the rows' s / z (capacity; per job T' diag(w) T).
    fn w_mul(&self, f: &Factor, pt: &Point, dz: &RowSteps) -> RowSteps {
        RowSteps {
            cap: (0..self.slots)
                .map(|k| pt.s_cap[k] / pt.z_cap[k] * dz.cap[k])
                .collect(),
            job: (0..self.n)
                .map(|j| {
                    let ([t01, t02], w, z) = (self.basis(j), &f.w_inv[j], &dz.job[j]);
                    let u = w[0] * (z[0] + t01 * z[1] + t02 * z[2]);
                    [u, t01 * u + w[1] * z[1], t02 * u + w[2] * z[2]]
                })
                .collect(),
        }
    }

    /// `then(at, (G_R' dz)[at])` per rate `at`.
    fn rows_t_map(&self, dz: &RowSteps, then: impl Fn(usize, f64) -> f64 + Sync) -> Buf<f64> {
        let t = self.slots;
        let mut out = Buf::zeros(self.n * t);
        crate::parallel_time::region(|| {
            (out.par_chunks_mut(JOBS_PER_CHUNK * t).enumerate()).for_each(|(chunk, out)| {
                let first = chunk * JOBS_PER_CHUNK * t;
                for (local, o) in out.iter_mut().enumerate() {
                    let at = first + local;
                    let (j, k) = (at / t, at % t);
                    let g = self.row_coefficients(j, k);
                    let gz = self.c[j] * dz.cap[k]
                        + g[0] * dz.job[j][0]
                        + g[1] * dz.job[j][1]
                        + g[2] * dz.job[j][2];
                    *o = then(at, gz);
                }
            });
        });
        out
    }

    /// G_R v, per row (capacity rows and each job's three); with `scale`, G_R (scale v).
    fn rows_mul(&self, v: &[f64], scale: Option<&[f64]>) -> RowSteps {
        let t = self.slots;
        let mut job = Buf::filled(self.n, [0.0; 3]);
        let parts: Vec<Vec<f64>> = crate::parallel_time::region(|| {
            (job.par_chunks_mut(JOBS_PER_CHUNK))
                .zip(v.par_chunks(JOBS_PER_CHUNK * t))
                .enumerate()
                .map(|(chunk, (job, v))| {
                    let mut cap = vec![0.0; t];
                    for (local, out) in job.iter_mut().enumerate() {
                        let j = chunk * JOBS_PER_CHUNK + local;
                        for k in 0..t {
                            let g = self.row_coefficients(j, k);
                            let x = match scale {
                                Some(d) => v[local * t + k] * d[j * t + k],
                                None => v[local * t + k],
                            };
                            cap[k] += self.c[j] * x;
                            for r in 0..3 {
                                out[r] += g[r] * x;
                            }
                        }
                    }
                    cap
                })
                .collect()
        });
        RowSteps {
            cap: sum_parts(vec![0.0; t], &parts),
            job,
        }
    }

    /// Solves the augmented system [D^-1, G_R'; G_R, -W'] (dx, dz) = (rx, rr) through the
    /// normal equations (G_R D G_R' + W') dz = G_R D rx - rr, dx = D (rx - G_R' dz).
    fn augmented_solve(&self, f: &Factor, rx: &[f64], rr: &RowSteps) -> (Buf<f64>, RowSteps) {
        let mut rhs = self.rows_mul(rx, Some(&f.d));
        rhs.cap.iter_mut().zip(&rr.cap).for_each(|(a, b)| *a -= b);
        for (a, b) in rhs.job.iter_mut().zip(&rr.job) {
            (0..3).for_each(|r| a[r] -= b[r]);
        }
        let dz = self.normal_solve(f, &rhs);
        let dx = self.rows_t_map(&dz, |k, gz| f.d[k] * (rx[k] - gz));
        (dx, dz)
    }

    /// Solves N dz = rhs by block elimination (capacity rows last).
    fn normal_solve(&self, f: &Factor, rhs: &RowSteps) -> RowSteps {
        let t = self.slots;
        let mut job = rhs.job.clone();
        let parts: Vec<Vec<f64>> = crate::parallel_time::region(|| {
            (job.par_chunks_mut(JOBS_PER_CHUNK))
                .zip(f.block.par_chunks(JOBS_PER_CHUNK))
                .zip(f.coupling.par_chunks(JOBS_PER_CHUNK * t))
                .map(|((job, block), coupling)| {
                    let mut eliminated = vec![0.0; t];
                    for (local, v) in job.iter_mut().enumerate() {
                        cholesky_solve3(&block[local], v);
                        for k in 0..t {
                            let c = coupling[local * t + k];
                            eliminated[k] -= c[0] * v[0] + c[1] * v[1] + c[2] * v[2];
                        }
                    }
                    eliminated
                })
                .collect()
        });
        let mut cap = sum_parts(rhs.cap.clone(), &parts);
        cholesky_solve(&f.chol, t, &mut cap);
        crate::parallel_time::region(|| {
            (job.par_iter_mut().with_min_len(JOBS_PER_CHUNK))
                .zip(rhs.job.par_iter())
                .zip(f.block.par_iter())
                .zip(f.coupling.par_chunks(t))
                .for_each(|(((v, rhs), block), coupling)| {
                    let mut r = *rhs;
                    for k in 0..t {
                        let c = coupling[k];
                        for q in 0..3 {
                            r[q] -= c[q] * cap[k];
                        }
                    }
                    cholesky_solve3(block, &mut r);
                    *v = r;
                });
        });
        RowSteps { cap, job }
    }

    /// The direction for centring residual `rc` (s z - sigma mu per row; y lambda - P for the
    /// utility rows).
    fn direction(
        &self,
        f: &Factor,
        pt: &Point,
        (rd, rp, rc): (&[f64], &Rows, &Rows),
        refinements: usize,
    ) -> Step {
        let (n, t) = (self.n, self.slots);
        // r_x = -rd - G_E' ((z rp - rc) / s) over the rows in D (x >= 0: rp = 0, s = x).
        let rx = par_map(n * t, |at| {
            let mut v = rd[at] + rc.pos[at] / pt.x[at];
            if self.rate[at / t].is_finite() {
                v += (pt.z_rate[at] * rp.rate[at] - rc.rate[at]) / pt.s_rate[at];
            }
            -v
        });
        // r_R = -rp + rc / z (the job rows' in the unknowns of `row_coefficients`: T' r_R).
        let r_rows = |j: usize| {
            [
                rc.util[j] / pt.z_util[j],
                if self.hard[j] {
                    -rp.hard[j] + rc.hard[j] / pt.z_hard[j]
                } else {
                    0.0
                },
                match self.total[j].is_finite() {
                    true => -rp.total[j] + rc.total[j] / pt.z_total[j],
                    false => 0.0,
                },
            ]
        };
        let rr = RowSteps {
            cap: (0..t)
                .map(|k| -rp.cap[k] + rc.cap[k] / pt.z_cap[k])
                .collect(),
            job: (0..n)
                .map(|j| {
                    let [u, h, tot] = r_rows(j);
                    let [t01, t02] = self.basis(j);
                    [u, t01 * u + h, t02 * u + tot]
                })
                .collect(),
        };
        // Solve, then refine against the augmented system applied exactly: its residuals
        // (rx - D^-1 dx - G' dz, rr - G dx + W' dz) carry no cancellation, where dx from the
        // normal equations multiplies their rounding by D (up to ~1e10 for a rate inside its
        // bounds).
        let (mut dx, mut dz) = self.augmented_solve(f, &rx, &rr);
        for _ in 0..refinements {
            let e1 = self.rows_t_map(&dz, |k, gz| rx[k] - dx[k] / f.d[k] - gz);
            let (gx, wz) = (self.rows_mul(&dx, None), self.w_mul(f, pt, &dz));
            let e2 = RowSteps {
                cap: (0..t).map(|k| rr.cap[k] - gx.cap[k] + wz.cap[k]).collect(),
                job: (0..n)
                    .map(|j| std::array::from_fn(|r| rr.job[j][r] - gx.job[j][r] + wz.job[j][r]))
                    .collect(),
            };
            let (cx, cz) = self.augmented_solve(f, &e1, &e2);
            dx.iter_mut().zip(&cx).for_each(|(a, b)| *a += b);
            dz.cap.iter_mut().zip(&cz.cap).for_each(|(a, b)| *a += b);
            for (a, b) in dz.job.iter_mut().zip(&cz.job) {
                (0..3).for_each(|r| a[r] += b[r]);
            }
        }
        // ds = -rp - G dx for every row; the rows in D: dz = -(z ds + rc) / s; the rows solved
        // for: dz as solved.
        let gdx = self.g_mul(&dx);
        let pick = |r: usize| dz.job.iter().map(|z| z[r]).collect::<Buf<f64>>();
        let dz_rows = Rows {
            cap: dz.cap.iter().copied().collect(),
            pos: Buf::default(),
            rate: Buf::default(),
            total: pick(2),
            hard: pick(1),
            // dz_util = p + t01 q + t02 r.
            util: (dz.job.iter().enumerate())
                .map(|(j, z)| {
                    let [t01, t02] = self.basis(j);
                    z[0] + t01 * z[1] + t02 * z[2]
                })
                .collect(),
        };
        let ds = Rows {
            cap: neg_sum(&rp.cap, &gdx.cap),
            pos: dx.clone(),
            rate: neg_sum(&rp.rate, &gdx.rate),
            total: neg_sum(&rp.total, &gdx.total),
            hard: neg_sum(&rp.hard, &gdx.hard),
            // The utility rows' slack is y itself: dy = a dx.
            util: gdx.util.iter().map(|g| -g).collect(),
        };
        let dz = Rows {
            pos: dual_step(&pt.z_pos, &ds.pos, &rc.pos, &pt.x),
            rate: dual_step(&pt.z_rate, &ds.rate, &rc.rate, &pt.s_rate),
            ..dz_rows
        };
        Step { dx, ds, dz }
    }

    /// Calls `f` with each existing row's pair (s, z) and its steps (0 without `st`), in a
    /// fixed order: capacity, x >= 0, rate caps, requirement caps, hard deadlines.
    fn for_each_pair(&self, pt: &Point, st: Option<&Step>, mut f: impl FnMut(f64, f64, f64, f64)) {
        let (n, t) = (self.n, self.slots);
        let mut rows = |s: &[f64],
                        z: &[f64],
                        sel: fn(&Rows) -> &Buf<f64>,
                        at: &mut dyn Iterator<Item = usize>| {
            match st {
                Some(st) => {
                    let (ds, dz) = (sel(&st.ds), sel(&st.dz));
                    at.for_each(|k| f(s[k], z[k], ds[k], dz[k]));
                }
                None => at.for_each(|k| f(s[k], z[k], 0.0, 0.0)),
            }
        };
        rows(&pt.s_cap, &pt.z_cap, |r| &r.cap, &mut (0..t));
        rows(&pt.x, &pt.z_pos, |r| &r.pos, &mut (0..n * t));
        let mut capped = (0..n)
            .filter(|&j| self.rate[j].is_finite())
            .flat_map(|j| j * t..(j + 1) * t);
        rows(&pt.s_rate, &pt.z_rate, |r| &r.rate, &mut capped);
        let mut totals = (0..n).filter(|&j| self.total[j].is_finite());
        rows(&pt.s_total, &pt.z_total, |r| &r.total, &mut totals);
        let mut hard = (0..n).filter(|&j| self.hard[j]);
        rows(&pt.s_hard, &pt.z_hard, |r| &r.hard, &mut hard);
    }

    /// The centring residuals s z + extra - target for every row (unused rows 0).
    /// The utility rows' target is P_i, not the centring target.
    fn centring(&self, pt: &Point, y: &[f64], affine: Option<&Step>, target: f64) -> Rows {
        let (n, t) = (self.n, self.slots);
        let corr =
            |r: fn(&Rows) -> &Buf<f64>, k: usize| affine.map_or(0.0, |a| r(&a.ds)[k] * r(&a.dz)[k]);
        let mut rc = Rows {
            cap: (0..t)
                .map(|k| pt.s_cap[k] * pt.z_cap[k] + corr(|r| &r.cap, k) - target)
                .collect(),
            pos: par_map(n * t, |k| {
                pt.x[k] * pt.z_pos[k] + corr(|r| &r.pos, k) - target
            }),
            rate: par_map(n * t, |k| match self.rate[k / t].is_finite() {
                true => pt.s_rate[k] * pt.z_rate[k] + corr(|r| &r.rate, k) - target,
                false => 0.0,
            }),
            total: Buf::zeros(n),
            hard: Buf::zeros(n),
            util: Buf::zeros(n),
        };
        for j in 0..n {
            if self.total[j].is_finite() {
                rc.total[j] = pt.s_total[j] * pt.z_total[j] + corr(|r| &r.total, j) - target;
            }
            if self.hard[j] {
                rc.hard[j] = pt.s_hard[j] * pt.z_hard[j] + corr(|r| &r.hard, j) - target;
            }
            rc.util[j] = y[j] * pt.z_util[j] - self.priority[j];
        }
        rc
    }

    /// The longest primal and dual steps in [0, 1] keeping every existing row's s (x, y
    /// included) and z non-negative. The objective being linear in x (its logarithms are the
    /// utility rows), the primal and dual residuals separate, so the two steps may differ.
    fn max_steps(&self, pt: &Point, y: &[f64], st: &Step) -> (f64, f64) {
        let (mut primal, mut dual): (f64, f64) = (1.0, 1.0);
        let util = (0..self.n).map(|j| (y[j], pt.z_util[j], st.ds.util[j], st.dz.util[j]));
        let mut bound = |s: f64, z: f64, ds: f64, dz: f64| {
            if ds < 0.0 {
                primal = primal.min(-s / ds);
            }
            if dz < 0.0 {
                dual = dual.min(-z / dz);
            }
        };
        self.for_each_pair(pt, Some(st), &mut bound);
        util.for_each(|(s, z, ds, dz)| bound(s, z, ds, dz));
        (primal, dual)
    }

    fn gap_after(&self, pt: &Point, st: &Step, (primal, dual): (f64, f64)) -> f64 {
        let mut gap = 0.0;
        self.for_each_pair(pt, Some(st), |s, z, ds, dz| {
            gap += (s + primal * ds) * (z + dual * dz)
        });
        gap
    }

    fn take(&self, pt: &mut Point, st: &Step, (primal, dual): (f64, f64)) {
        let add = |v: &mut Buf<f64>, d: &[f64], alpha: f64| {
            v.iter_mut().zip(d).for_each(|(v, d)| *v += alpha * d);
        };
        add(&mut pt.x, &st.dx, primal);
        add(&mut pt.s_cap, &st.ds.cap, primal);
        add(&mut pt.s_rate, &st.ds.rate, primal);
        add(&mut pt.s_total, &st.ds.total, primal);
        add(&mut pt.s_hard, &st.ds.hard, primal);
        add(&mut pt.z_pos, &st.dz.pos, dual);
        add(&mut pt.z_cap, &st.dz.cap, dual);
        add(&mut pt.z_rate, &st.dz.rate, dual);
        add(&mut pt.z_total, &st.dz.total, dual);
        add(&mut pt.z_hard, &st.dz.hard, dual);
        add(&mut pt.z_util, &st.dz.util, dual);
    }
}

/// `into` plus the chunks' parts, added in chunk order.
fn sum_parts(mut into: Vec<f64>, parts: &[Vec<f64>]) -> Vec<f64> {
    for part in parts {
        into.iter_mut().zip(part).for_each(|(a, b)| *a += b);
    }
    into
}

fn neg_sum(a: &[f64], b: &[f64]) -> Buf<f64> {
    par_map(a.len(), |k| -a[k] - b[k])
}

fn dual_step(z: &[f64], ds: &[f64], rc: &[f64], s: &[f64]) -> Buf<f64> {
    par_map(z.len(), |k| -(z[k] * ds[k] + rc[k]) / s[k])
}

/// `f(k)` for every k below `len`, on rayon (each element on its own: the same bits for any
/// number of threads).
fn par_map(len: usize, f: impl Fn(usize) -> f64 + Sync) -> Buf<f64> {
    let mut out = Buf::zeros(len);
    crate::parallel_time::region(|| {
        (out.par_chunks_mut(ELEMENTS_PER_CHUNK).enumerate()).for_each(|(chunk, out)| {
            let first = chunk * ELEMENTS_PER_CHUNK;
            out.iter_mut()
                .enumerate()
                .for_each(|(k, o)| *o = f(first + k));
        });
    });
    out
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// The solution: rates in the problem's units (every job, `i * slots + t`; 0 for jobs outside
/// the bargain), the capacity rows' multipliers in `units`' (every slot; 0 for a slot without
/// capacity) and the iterations taken.
pub(super) fn solve(p: &Problem, units: &Units) -> Result<(Vec<f64>, Vec<f64>, u32), NbsError> {
    let solved = solve_reusing_scratch(p, units);
    scratch::release();
    solved
}

/// `solve`, its arrays left on the thread's free list.
fn solve_reusing_scratch(
    p: &Problem,
    units: &Units,
) -> Result<(Vec<f64>, Vec<f64>, u32), NbsError> {
    let prog = Program::new(p, units);
    let n = prog.n;
    let out = vec![0.0; p.jobs.len() * units.slots];
    if n == 0 {
        return Ok((out, vec![0.0; units.slots], 0));
    }
    let solution = |x: &[f64], z_cap: &[f64], iterations: u32| {
        let mut prices = vec![0.0; units.slots];
        for (k, &slot) in prog.open.iter().enumerate() {
            prices[slot] = z_cap[k];
        }
        (prog.rates(x, units, out.clone()), prices, iterations)
    };
    let rows = prog.rows() as f64;
    let h_scale = 1.0 + max_abs(&prog.capacity).max(1.0);
    let mut pt = prog.start();
    let mut acceptable = None;
    // The best merit so far and when it last halved.
    let mut progress = (f64::INFINITY, 0);
    for iteration in 0..MAX_ITERATIONS {
        let y = prog.y(&pt.x);
        let f = prog.objective(&pt.x, &y);
        let rp = prog.primal_residual(&pt);
        let gtz = prog.gt_mul(&pt.multipliers());
        // The objective's gradient is -gain - lambda a (lambda_i = P_i / y_i at the optimum);
        // the utility rows carry the second part.
        let rd: Buf<f64> = prog.gain.iter().zip(&gtz).map(|(g, z)| z - g).collect();
        let util: f64 = (0..n)
            .map(|j| (y[j] * pt.z_util[j] - prog.priority[j]).abs() / prog.priority[j])
            .fold(0.0, f64::max);
        let mut gap = 0.0;
        prog.for_each_pair(&pt, None, |s, z, _, _| gap += s * z);
        let primal = rp.max_abs();
        let dual = max_abs(&rd) / (1.0 + max_abs(&gtz));
        // How far from optimal: the largest of the residuals and the gap, each over its scale
        // (the utility rows' lambda y - P over P: P (1 + e) is the bargain the duals solve).
        let merit = [primal / h_scale, dual, util, gap / f.abs().max(1.0)]
            .into_iter()
            .fold(0.0, f64::max);
        if merit <= TOL && f.is_finite() {
            return Ok(solution(&pt.x, &pt.z_cap, iteration));
        }
        if merit < progress.0 / 2.0 {
            progress = (merit, iteration);
        } else if iteration >= progress.1 + 4 * STALL_ITERATIONS {
            break; // the merit not halved for a while: stalled (Clarabel takes over)
        }
        if merit <= ACCEPTABLE_TOL
            && acceptable
                .as_ref()
                .is_none_or(|a: &(f64, _, _)| merit < a.0)
        {
            acceptable = Some((merit, (pt.x.clone(), pt.z_cap.clone()), iteration));
        } else if acceptable
            .as_ref()
            .is_some_and(|a| iteration >= a.2 + STALL_ITERATIONS)
        {
            break;
        }
        let mu = gap / rows;
        let factor = prog.factor(&pt, &y);
        // Predictor (affine scaling), then Mehrotra's corrector with sigma = (mu_aff / mu)^3.
        let rc_aff = prog.centring(&pt, &y, None, 0.0);
        let affine = prog.direction(&factor, &pt, (&rd, &rp, &rc_aff), AFFINE_REFINEMENTS);
        let alpha_aff = prog.max_steps(&pt, &y, &affine);
        let sigma = (prog.gap_after(&pt, &affine, alpha_aff) / rows / mu)
            .powi(3)
            .clamp(0.0, 1.0);
        let rc = prog.centring(&pt, &y, Some(&affine), sigma * mu);
        let step = prog.direction(&factor, &pt, (&rd, &rp, &rc), REFINEMENTS);
        let (primal_max, dual_max) = prog.max_steps(&pt, &y, &step);
        let alpha = (
            (STEP_BACK * primal_max).min(1.0),
            (STEP_BACK * dual_max).min(1.0),
        );
        let stalled = |a: f64| !a.is_finite() || a < 1e-12;
        if stalled(alpha.0) && stalled(alpha.1) || step.dx.iter().any(|d| !d.is_finite()) {
            break;
        }
        prog.take(&mut pt, &step, alpha);
    }
    if let Some((_, (x, z_cap), iteration)) = acceptable {
        return Ok(solution(&x, &z_cap, iteration));
    }
    let infeasible = prog.primal_residual(&pt).max_abs() > 1e-6 * h_scale;
    Err(NbsError::Solver(
        if infeasible {
            "PrimalInfeasible (structured interior point)"
        } else {
            "InsufficientProgress (structured interior point)"
        }
        .into(),
    ))
}
