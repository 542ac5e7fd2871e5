//! Small dense factorisations for `interior.rs`: Cholesky (modified where a pivot is lost to
//! rounding), Cholesky of B' B by Householder QR of B (never forming B' B), and the solve with
//! a Cholesky factor. Matrices are row-major slices; every loop runs in a fixed order.

/// The lower Cholesky factor of the symmetric positive semi-definite `m` (its lower triangle
/// read, row-major, `t` x `t`). A pivot lost to rounding (at most 1e-14 of its diagonal entry,
/// as happens near a degenerate optimum) is set to 1e64, which zeroes that component in the
/// solves: the modified Cholesky of interior-point codes (S. J. Wright, "Modified Cholesky
/// factorizations in interior-point algorithms for linear programming", SIAM J. Optim. 9(4),
/// 1999).
pub(super) fn cholesky(m: &[f64], t: usize) -> Vec<f64> {
    let mut l = vec![0.0; t * t];
    for r in 0..t {
        for c in 0..=r {
            let mut v = m[r * t + c];
            for k in 0..c {
                v -= l[r * t + k] * l[c * t + k];
            }
            l[r * t + c] = if r != c {
                v / l[c * t + c]
            } else if v > 1e-14 * m[r * t + r].abs() {
                v.sqrt()
            } else {
                1e64
            };
        }
    }
    l
}

/// The lower Cholesky factor L (row-major 3 x 3) of B' B, B the rows given, by Householder QR
/// of B (B = Q R, L = R'; a diagonal entry may be negative, which `cholesky_solve` allows).
pub(super) fn cholesky_by_qr(b: &mut [[f64; 3]]) -> [f64; 9] {
    let m = b.len();
    let mut l = [0.0; 9];
    for k in 0..3 {
        let norm = (k..m).map(|i| b[i][k] * b[i][k]).sum::<f64>().sqrt();
        let alpha = if b[k][k] > 0.0 { -norm } else { norm };
        // v = x - alpha e_k, applied as H = I - 2 v v' / v'v to columns k..3.
        let v0 = b[k][k] - alpha;
        let vv = v0 * v0 + (k + 1..m).map(|i| b[i][k] * b[i][k]).sum::<f64>();
        if vv > 0.0 {
            for c in k + 1..3 {
                let dot = v0 * b[k][c] + (k + 1..m).map(|i| b[i][k] * b[i][c]).sum::<f64>();
                let f = 2.0 * dot / vv;
                b[k][c] -= f * v0;
                for row in b[k + 1..].iter_mut() {
                    row[c] -= f * row[k];
                }
            }
        }
        l[k * 3 + k] = if alpha != 0.0 { alpha } else { 1e64 };
        for c in k + 1..3 {
            l[c * 3 + k] = b[k][c];
        }
    }
    l
}

/// Solves L L' v = rhs in place.
pub(super) fn cholesky_solve(l: &[f64], t: usize, v: &mut [f64]) {
    for r in 0..t {
        for k in 0..r {
            v[r] -= l[r * t + k] * v[k];
        }
        v[r] /= l[r * t + r];
    }
    for r in (0..t).rev() {
        for k in r + 1..t {
            v[r] -= l[k * t + r] * v[k];
        }
        v[r] /= l[r * t + r];
    }
}

/// `cholesky_solve` for a 3 x 3 factor, unrolled (the per-job blocks: the same operations in
/// the same order, so the same bits).
#[inline]
pub(super) fn cholesky_solve3(l: &[f64; 9], v: &mut [f64; 3]) {
    v[0] /= l[0];
    v[1] -= l[3] * v[0];
    v[1] /= l[4];
    v[2] -= l[6] * v[0];
    v[2] -= l[7] * v[1];
    v[2] /= l[8];
    v[2] /= l[8];
    v[1] -= l[7] * v[2];
    v[1] /= l[4];
    v[0] -= l[3] * v[1];
    v[0] -= l[6] * v[2];
    v[0] /= l[0];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: B = [[3, 0, 0], [4, 5, 0], [0, 0, 2], [0, 0, 0]] gives B' B = [[25, 20, 0], [20,
    /// 25, 0], [0, 0, 4]], whose Cholesky factor is [[5, 0, 0], [4, 3, 0], [0, 0, 2]] (signs may
    /// differ by QR's reflections); both routes solve B' B v = (45, 45, 8) to v = (1, 1, 2).
    #[test]
    fn both_factorisations_solve_a_worked_system() {
        let m = [25.0, 20.0, 0.0, 20.0, 25.0, 0.0, 0.0, 0.0, 4.0];
        let l = cholesky(&m, 3);
        assert_eq!(l, vec![5.0, 0.0, 0.0, 4.0, 3.0, 0.0, 0.0, 0.0, 2.0]);
        let mut rows = vec![[3.0, 0.0, 0.0], [4.0, 5.0, 0.0], [0.0, 0.0, 2.0], [0.0; 3]];
        let q = cholesky_by_qr(&mut rows);
        for k in 0..3 {
            assert!((q[k * 3 + k].abs() - l[k * 3 + k]).abs() < 1e-12, "{q:?}");
        }
        for factor in [l, q.to_vec()] {
            let mut v = [45.0, 45.0, 8.0];
            cholesky_solve(&factor, 3, &mut v);
            let mut unrolled = [45.0, 45.0, 8.0];
            cholesky_solve3(&factor.clone().try_into().unwrap(), &mut unrolled);
            assert_eq!(v, unrolled);
            for (got, want) in v.iter().zip([1.0, 1.0, 2.0]) {
                assert!((got - want).abs() < 1e-12, "{v:?}");
            }
        }
    }

    /// A pivot lost to rounding (a singular matrix) becomes 1e64 and its component 0.
    #[test]
    fn a_lost_pivot_zeroes_its_component() {
        let l = cholesky(&[1.0, 1.0, 1.0, 1.0], 2);
        assert_eq!(l[3], 1e64);
        let mut v = [2.0, 2.0];
        cholesky_solve(&l, 2, &mut v);
        assert!((v[0] - 2.0).abs() < 1e-12 && v[1].abs() < 1e-12, "{v:?}");
    }
}
