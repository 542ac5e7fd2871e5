//! Fixed-point resource amounts: 1 unit = 1e-6 of the largest machine's capacity of that
//! resource (the trace normalises every resource to the largest machine = 1.0).
//!
//! Integer units make every sum independent of summation order, hence of thread count
//! (SPEC 5.3). A node's sums fit `u32` (4,294 x the largest machine); cell-wide sums use `u64`.

/// Units per 1.0 of normalised capacity.
pub const UNITS: u32 = 1_000_000;

/// Converts a normalised trace amount to units (negative and NaN read as 0, rounded to nearest).
pub fn to_units(v: f32) -> u32 {
    if v.is_nan() || v <= 0.0 {
        0
    } else {
        (v as f64 * UNITS as f64).round().min(u32::MAX as f64) as u32
    }
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
}
