//! Simulated durations as configs write them: a whole number and a unit, `"60s"`, `"100ms"`,
//! `"1ms"`, `"250us"`, `"10min"`, `"2h"`, `"1d"`. Held in microseconds, the trace's unit, so a
//! tick, a cadence and a message delay are exact integers whatever their resolution. Written
//! back in the largest unit that divides them (`"100min"`, `"1d"`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The units, largest first: (suffix, microseconds).
const UNITS: [(&str, i64); 6] = [
    ("d", 86_400_000_000),
    ("h", 3_600_000_000),
    ("min", 60_000_000),
    ("s", 1_000_000),
    ("ms", 1_000),
    ("us", 1),
];

/// A span of simulated time, microseconds (never negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimDuration(i64);

impl SimDuration {
    /// `us` microseconds.
    pub const fn from_us(us: i64) -> SimDuration {
        SimDuration(us)
    }

    /// `s` seconds.
    pub const fn from_secs(s: i64) -> SimDuration {
        SimDuration(s * 1_000_000)
    }

    /// In microseconds.
    pub const fn us(self) -> i64 {
        self.0
    }

    /// In seconds.
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// How many `part`s make `self`, when `self` is a positive whole number of them.
    pub fn whole_multiple_of(self, part: SimDuration) -> Option<u64> {
        (part.0 > 0 && self.0 > 0 && self.0 % part.0 == 0).then(|| (self.0 / part.0) as u64)
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (unit, per) = UNITS
            .iter()
            .find(|(_, per)| self.0 % per == 0 && self.0 != 0)
            .copied()
            .unwrap_or(("s", 1_000_000));
        write!(f, "{}{unit}", self.0 / per)
    }
}

impl FromStr for SimDuration {
    type Err = String;

    fn from_str(text: &str) -> Result<SimDuration, String> {
        let t = text.trim();
        let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (number, unit) = t.split_at(digits);
        let units = || UNITS.iter().map(|u| u.0).collect::<Vec<_>>().join(", ");
        let Some(&(_, per)) = UNITS.iter().find(|u| u.0 == unit.trim()) else {
            return Err(format!(
                "`{text}` is not a duration: a whole number and a unit ({}), e.g. \"60s\" or \"100ms\"",
                units()
            ));
        };
        let n: i64 = number
            .parse()
            .map_err(|_| format!("`{text}` is not a duration: no whole number before its unit"))?;
        n.checked_mul(per)
            .map(SimDuration)
            .ok_or_else(|| format!("`{text}` is too long a duration"))
    }
}

impl Serialize for SimDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SimDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SimDuration, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_print_in_their_largest_unit() {
        for (text, us, shown) in [
            ("60s", 60_000_000, "1min"),
            ("100ms", 100_000, "100ms"),
            ("1ms", 1_000, "1ms"),
            ("250us", 250, "250us"),
            ("100min", 6_000_000_000, "100min"),
            ("1440min", 86_400_000_000, "1d"),
            ("2h", 7_200_000_000, "2h"),
            (" 1d ", 86_400_000_000, "1d"),
            ("1500ms", 1_500_000, "1500ms"),
        ] {
            let d: SimDuration = text.parse().unwrap();
            assert_eq!(d.us(), us, "{text}");
            assert_eq!(d.to_string(), shown, "{text}");
            assert_eq!(shown.parse::<SimDuration>().unwrap(), d);
        }
        for bad in [
            "60",
            "s",
            "1.5s",
            "-1s",
            "10 parsecs",
            "",
            "99999999999999d",
        ] {
            let err = bad.parse::<SimDuration>().unwrap_err();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
        }
    }

    #[test]
    fn whole_multiples() {
        let tick = SimDuration::from_us(100_000);
        assert_eq!(
            SimDuration::from_secs(60).whole_multiple_of(tick),
            Some(600)
        );
        assert_eq!(SimDuration::from_us(150_000).whole_multiple_of(tick), None);
        assert_eq!(SimDuration::from_us(0).whole_multiple_of(tick), None);
        assert_eq!(tick.whole_multiple_of(SimDuration::default()), None);
    }
}
