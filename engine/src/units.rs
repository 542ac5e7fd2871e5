//! Fixed-point resource amounts: 1 unit = 1e-6 of the largest machine's capacity of that
//! resource (the trace normalises every resource to the largest machine = 1.0).
//!
//! Integer units make every sum independent of summation order, hence of thread count
//! (SPEC 5.3). A node's sums fit `u32` (4,294 x the largest machine); cell-wide sums use `u64`.

/// Units per 1.0 of normalised capacity.
pub const UNITS: u32 = 1_000_000;

/// Converts a normalised trace amount to units (negative and NaN read as 0, rounded to nearest,
/// halves away from zero, as `f64::round`; at most `u32::MAX`).
///
/// Without `f64::round`, a call into libm on the baseline x86-64 target (a third of the
/// reading of the usage rows, which convert two amounts each): below `u32::MAX` the product's
/// integer part is its truncation and its fraction `x - trunc(x)` is exact, so adding one when
/// the fraction is at least a half rounds as `round` does (checked against it in the tests).
#[inline]
pub fn to_units(v: f32) -> u32 {
    if v.is_nan() || v <= 0.0 {
        return 0;
    }
    let x = v as f64 * UNITS as f64;
    if x >= u32::MAX as f64 {
        return u32::MAX;
    }
    let whole = x as u32;
    whole + u32::from(x - whole as f64 >= 0.5)
}

/// Converts units (a node's or task's `u32`, a cell-wide `u64`) back to the normalised scale.
pub fn to_normalised(units: impl Into<u64>) -> f64 {
    units.into() as f64 / UNITS as f64
}

/// `used / capacity >= threshold_ppm / 1e6`, computed exactly in integers.
pub fn at_least(used: u32, capacity: u32, threshold_ppm: u32) -> bool {
    used as u64 * UNITS as u64 >= threshold_ppm as u64 * capacity as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_to_nearest_unit() {
        assert_eq!(to_units(0.5), 500_000);
        assert_eq!(to_units(0.0004044), 404);
        assert_eq!(to_units(-1.0), 0);
        assert_eq!(to_units(f32::NAN), 0);
        assert_eq!(to_normalised(250_000u32), 0.25);
        assert!(at_least(700_000, 1_000_000, 700_000));
        assert!(!at_least(699_999, 1_000_000, 700_000));
        assert!(
            at_least(350_000, 500_000, 700_000),
            "70 % of a half-size machine"
        );
    }

    /// `to_units` equals `f64::round` of the product (clamped to `u32`) on every 97th positive
    /// `f32` up to infinity, on the first 100,000 half-unit boundaries and every 9,973rd up to
    /// 4,300 machines' worth, each with its neighbours, and on the edges (zero, subnormals,
    /// `u32::MAX`, infinity).
    #[test]
    fn to_units_rounds_as_f64_round_does() {
        let reference = |v: f32| -> u32 {
            if v.is_nan() || v <= 0.0 {
                0
            } else {
                (v as f64 * UNITS as f64).round().min(u32::MAX as f64) as u32
            }
        };
        let check = |v: f32| assert_eq!(to_units(v), reference(v), "{v:e} ({:#x})", v.to_bits());
        for bits in (0..f32::INFINITY.to_bits()).step_by(97) {
            check(f32::from_bits(bits));
        }
        for k in (0..4_300_000_000u64).step_by(9_973).chain(0..100_000) {
            let half = ((k as f64 + 0.5) / UNITS as f64) as f32;
            for v in [half, half.next_down(), half.next_up()] {
                check(v);
            }
        }
        let edges = [
            0.0,
            f32::MIN_POSITIVE,
            1e-45,
            4294.967,
            4294.9673,
            4294.968,
            1e30,
        ];
        edges
            .into_iter()
            .chain([f32::INFINITY, -0.0])
            .for_each(check);
    }
}
