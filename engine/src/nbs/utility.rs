//! Seed 004's deadline types as weights on the resource a job receives over time (section III):
//! a hard-deadline job's resource counts only before its deadline (eq. 3), a soft-deadline
//! job's counts fully before and with weight e^(-mu (t - deadline)) after (eqs. 4-5), a job with
//! no deadline's counts fully up to the horizon (eq. 6). The optimisation works on slots, so
//! the weight of a slot is the mean of w(t) over it (exact integrals).

use serde::{Deserialize, Serialize};

/// A job's deadline, seconds from the start of the horizon.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Deadline {
    /// The job needs its whole requirement before this time.
    Hard(f64),
    /// Resource after this time is worth e^(-mu (t - deadline)).
    Soft(f64),
    /// Resource is worth the same whenever it comes.
    None,
}

/// The mean over the slot [`from_s`, `to_s`) of the weight w(t) of a job with `deadline`
/// (soft deadlines decaying at `mu` per second).
pub fn slot_weight(deadline: Deadline, mu: f64, from_s: f64, to_s: f64) -> f64 {
    let len = to_s - from_s;
    if len <= 0.0 {
        return 0.0;
    }
    match deadline {
        Deadline::None => 1.0,
        Deadline::Hard(d) => ((d - from_s) / len).clamp(0.0, 1.0),
        Deadline::Soft(d) => {
            let before = (d.min(to_s) - from_s).max(0.0);
            let (a, b) = (from_s.max(d), to_s);
            let after = if b <= a {
                0.0
            } else if mu <= 0.0 {
                b - a
            } else {
                ((-mu * (a - d)).exp() - (-mu * (b - d)).exp()) / mu
            };
            (before + after) / len
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn each_deadline_type_at_hand_picked_points() {
        // No deadline: always 1.
        assert!(close(slot_weight(Deadline::None, 0.1, 100.0, 110.0), 1.0));
        // Hard at 10 s: a slot wholly before counts fully, one straddling it by its share
        // before (5 of 10 s), one after not at all.
        assert!(close(
            slot_weight(Deadline::Hard(10.0), 0.1, 0.0, 10.0),
            1.0
        ));
        assert!(close(
            slot_weight(Deadline::Hard(10.0), 0.1, 5.0, 15.0),
            0.5
        ));
        assert!(close(
            slot_weight(Deadline::Hard(10.0), 0.1, 10.0, 20.0),
            0.0
        ));
        // Soft at 10 s, mu = 0.1/s: before, 1; over [10, 20) the mean of e^(-0.1 (t - 10)) is
        // (1 - e^-1) / 1 = 0.632...; over [5, 15), half 1 and half (1 - e^-0.5) / 0.5.
        assert!(close(
            slot_weight(Deadline::Soft(10.0), 0.1, 0.0, 10.0),
            1.0
        ));
        assert!(close(
            slot_weight(Deadline::Soft(10.0), 0.1, 10.0, 20.0),
            1.0 - (-1.0f64).exp()
        ));
        let straddle = (5.0 + (1.0 - (-0.5f64).exp()) / 0.1) / 10.0;
        assert!(close(
            slot_weight(Deadline::Soft(10.0), 0.1, 5.0, 15.0),
            straddle
        ));
        // mu = 0 is no deadline; a very large mu is a hard deadline (the seed's remark).
        assert!(close(
            slot_weight(Deadline::Soft(10.0), 0.0, 10.0, 20.0),
            1.0
        ));
        assert!(slot_weight(Deadline::Soft(10.0), 1e6, 10.0, 20.0) < 1e-6);
    }
}
