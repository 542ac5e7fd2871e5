//! The generated cell's machines: the 2011 machine mix (Reiss et al., SoCC 2012), IDs, platforms
//! and attributes, and the task constraints that select among them.
//!
//! Attributes (names are hashes, like the trace's): `a0` an integer 0..9 on every machine
//! (ordered, for LESS/GREATER constraints), `a1` one of 8 hashes on every machine, `a2` an integer
//! 1..4 on every machine, `a3` a hash on ~40 % of machines, and `a4` a rare hash carried by only
//! [`rare_machines`] machines, which makes the constraints that name it very restrictive.

use std::collections::HashSet;

use base64::Engine;

use crate::codes::comparison;
use crate::rng::{Rng, hash_keys};

/// The 2011 cell's machine shapes: (CPU, memory, machines of 12,583).
pub const MACHINE_MIX: [(f64, f64, u32); 10] = [
    (0.50, 0.50, 6732),
    (0.50, 0.25, 3863),
    (0.50, 0.75, 1001),
    (1.00, 1.00, 795),
    (0.25, 0.25, 126),
    (0.50, 0.12, 52),
    (0.50, 0.03, 5),
    (0.50, 0.97, 5),
    (1.00, 0.50, 3),
    (0.50, 0.06, 1),
];

/// Machines of the real 2011 cell.
pub const REAL_CELL_MACHINES: u32 = 12_583;

/// Number of attribute names.
pub const ATTRIBUTES: usize = 5;

/// A 44-character base64 hash, like the trace's user and name hashes.
pub fn hash_string(seed: u64, kind: u64, index: u64) -> String {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&hash_keys(seed, &[kind, index, i as u64]).to_le_bytes());
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Splits `n` machines over the mix by largest remainder; the counts sum to `n`.
pub fn mix_counts(n: u32) -> [u32; 10] {
    let mut counts = [0u32; 10];
    let mut remainders: Vec<(u64, usize)> = Vec::with_capacity(10);
    for (i, (_, _, real)) in MACHINE_MIX.iter().enumerate() {
        let exact = *real as u64 * n as u64;
        counts[i] = (exact / REAL_CELL_MACHINES as u64) as u32;
        remainders.push((exact % REAL_CELL_MACHINES as u64, i));
    }
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let short = n - counts.iter().sum::<u32>();
    for (_, i) in remainders.into_iter().take(short as usize) {
        counts[i] += 1;
    }
    counts
}

/// Machines carrying the rare attribute `a4`: about 5 per 12,583, at least 2, at most 5.
pub fn rare_machines(n: u32) -> u32 {
    ((n as u64 * 5).div_ceil(REAL_CELL_MACHINES as u64) as u32).clamp(2, 5)
}

/// An attribute value: an integer or an index into a small set of hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrValue {
    /// Not set on the machine.
    Absent,
    /// Integer-valued.
    Int(i64),
    /// The `n`th hash of the attribute's value set.
    Hash(u32),
}

impl AttrValue {
    /// The integer reading, if integer-valued.
    pub fn int(self) -> Option<i64> {
        match self {
            AttrValue::Int(v) => Some(v),
            _ => None,
        }
    }
}

/// One task constraint: `attribute op value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constraint {
    /// Attribute number 0..ATTRIBUTES.
    pub attribute: u8,
    /// Comparison operator code.
    pub op: u8,
    /// Value compared with.
    pub value: AttrValue,
}

impl Constraint {
    /// Whether a machine with these attribute values satisfies the constraint.
    pub fn matches(&self, attrs: &[AttrValue; ATTRIBUTES]) -> bool {
        let have = attrs[self.attribute as usize];
        crate::codes::constraint_holds(self.op, have, have.int(), self.value, self.value.int())
    }
}

/// The static description of the generated machines.
pub struct Cell {
    /// Trace machine ID per machine.
    pub ids: Vec<u64>,
    /// CPU capacity at the first ADD.
    pub cpu: Vec<f64>,
    /// Memory capacity at the first ADD.
    pub mem: Vec<f64>,
    /// Platform number 0..4.
    pub platform: Vec<u8>,
    /// Attribute values.
    pub attrs: Vec<[AttrValue; ATTRIBUTES]>,
    /// Platform hashes.
    pub platform_hashes: Vec<String>,
    /// Attribute name hashes.
    pub attr_names: Vec<String>,
    /// Per attribute, its hash values (empty for integer attributes).
    pub attr_hashes: Vec<Vec<String>>,
}

const HASH_KIND_PLATFORM: u64 = 1;
const HASH_KIND_ATTR_NAME: u64 = 2;
const HASH_KIND_ATTR_VALUE: u64 = 3;

impl Cell {
    /// Builds `n` machines for `seed`.
    pub fn new(n: u32, seed: u64) -> Cell {
        let mut rng = Rng::new(seed, 0xce11);
        let mut shapes: Vec<usize> = mix_counts(n)
            .iter()
            .enumerate()
            .flat_map(|(i, c)| std::iter::repeat_n(i, *c as usize))
            .collect();
        for i in (1..shapes.len()).rev() {
            shapes.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut seen = HashSet::with_capacity(n as usize);
        let mut ids = Vec::with_capacity(n as usize);
        while ids.len() < n as usize {
            let id = 5 + rng.below(6_500_000_000);
            if seen.insert(id) {
                ids.push(id);
            }
        }
        let hash_set = |attr: u64, k: u64| -> Vec<String> {
            (0..k)
                .map(|v| hash_string(seed, HASH_KIND_ATTR_VALUE, attr * 1000 + v))
                .collect()
        };
        let attr_hashes = vec![
            Vec::new(),
            hash_set(1, 8),
            Vec::new(),
            hash_set(3, 3),
            hash_set(4, 1),
        ];
        let rare = rare_machines(n) as usize;
        let mut cpu = Vec::with_capacity(n as usize);
        let mut mem = Vec::with_capacity(n as usize);
        let mut platform = Vec::with_capacity(n as usize);
        let mut attrs = Vec::with_capacity(n as usize);
        for (m, shape) in shapes.iter().enumerate() {
            let (c, mm, _) = MACHINE_MIX[*shape];
            cpu.push(c);
            mem.push(mm);
            platform.push(match c {
                x if x < 0.5 => 3,
                x if x > 0.5 => 2,
                _ => rng.below(10).min(1) as u8,
            });
            attrs.push([
                AttrValue::Int(rng.below(10) as i64),
                AttrValue::Hash(rng.below(8) as u32),
                AttrValue::Int(1 + rng.below(4) as i64),
                if rng.chance(0.4) {
                    AttrValue::Hash(rng.below(3) as u32)
                } else {
                    AttrValue::Absent
                },
                if m < rare {
                    AttrValue::Hash(0)
                } else {
                    AttrValue::Absent
                },
            ]);
        }
        Cell {
            ids,
            cpu,
            mem,
            platform,
            attrs,
            platform_hashes: (0..4)
                .map(|p| hash_string(seed, HASH_KIND_PLATFORM, p))
                .collect(),
            attr_names: (0..ATTRIBUTES as u64)
                .map(|a| hash_string(seed, HASH_KIND_ATTR_NAME, a))
                .collect(),
            attr_hashes,
        }
    }

    /// Machines in the cell.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True for an empty cell.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The trace text of an attribute value (empty when absent).
    pub fn value_text(&self, attribute: u8, value: AttrValue) -> String {
        match value {
            AttrValue::Absent => String::new(),
            AttrValue::Int(v) => v.to_string(),
            AttrValue::Hash(h) => self.attr_hashes[attribute as usize][h as usize].clone(),
        }
    }

    /// A constraint set for a job: usually one loose constraint; `restrictive` names the rare
    /// attribute so only [`rare_machines`] machines qualify.
    pub fn draw_constraints(&self, rng: &mut Rng, restrictive: bool) -> Vec<Constraint> {
        if restrictive {
            return vec![Constraint {
                attribute: 4,
                op: comparison::EQUAL,
                value: AttrValue::Hash(0),
            }];
        }
        let mut set = Vec::new();
        let n = if rng.chance(0.2) { 2 } else { 1 };
        while set.len() < n {
            let c = match rng.below(4) {
                0 => Constraint {
                    attribute: 0,
                    op: comparison::GREATER_THAN,
                    value: AttrValue::Int(rng.below(6) as i64),
                },
                1 => Constraint {
                    attribute: 1,
                    op: comparison::EQUAL,
                    value: AttrValue::Hash(rng.below(8) as u32),
                },
                2 => Constraint {
                    attribute: 2,
                    op: comparison::LESS_THAN,
                    value: AttrValue::Int(2 + rng.below(3) as i64),
                },
                _ => Constraint {
                    attribute: 3,
                    op: comparison::NOT_EQUAL,
                    value: AttrValue::Hash(rng.below(3) as u32),
                },
            };
            if !set.iter().any(|s: &Constraint| s.attribute == c.attribute) {
                set.push(c);
            }
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_scales_proportionally_and_sums() {
        assert_eq!(mix_counts(REAL_CELL_MACHINES), MACHINE_MIX.map(|m| m.2));
        let c = mix_counts(1000);
        assert_eq!(c.iter().sum::<u32>(), 1000);
        assert_eq!(c[0], 535); // 6732 * 1000 / 12583 = 535.0
        assert_eq!(mix_counts(50).iter().sum::<u32>(), 50);
        assert_eq!(mix_counts(100_664).iter().sum::<u32>(), 100_664);
    }

    #[test]
    fn constraints_compare_like_the_trace_operators() {
        let attrs = [
            AttrValue::Int(5),
            AttrValue::Hash(2),
            AttrValue::Int(1),
            AttrValue::Absent,
            AttrValue::Absent,
        ];
        let c = |attribute, op, value| Constraint {
            attribute,
            op,
            value,
        };
        assert!(c(0, comparison::GREATER_THAN, AttrValue::Int(4)).matches(&attrs));
        assert!(!c(0, comparison::GREATER_THAN, AttrValue::Int(5)).matches(&attrs));
        assert!(c(2, comparison::LESS_THAN, AttrValue::Int(2)).matches(&attrs));
        assert!(c(1, comparison::EQUAL, AttrValue::Hash(2)).matches(&attrs));
        assert!(
            c(3, comparison::NOT_EQUAL, AttrValue::Hash(0)).matches(&attrs),
            "absent != value"
        );
        assert!(!c(4, comparison::EQUAL, AttrValue::Hash(0)).matches(&attrs));
        assert!(
            !c(3, comparison::LESS_THAN, AttrValue::Int(9)).matches(&attrs),
            "absent is not comparable"
        );
    }

    #[test]
    fn rare_attribute_is_on_a_handful_of_machines() {
        let cell = Cell::new(1000, 3);
        let rare = cell
            .attrs
            .iter()
            .filter(|a| a[4] != AttrValue::Absent)
            .count();
        assert_eq!(rare, 2);
        assert_eq!(rare_machines(REAL_CELL_MACHINES), 5);
        assert_eq!(cell.ids.iter().collect::<HashSet<_>>().len(), 1000);
    }
}
