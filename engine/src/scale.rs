//! Workload scaling applied while the trace streams (SPEC 7, seed 000 sections 7.8-7.10), never
//! by materialising a bigger trace:
//!
//! - **multiply K**: copy k (0..K) of machine `m` has ID `m` for k = 0 and
//!   `hash_keys(MULTIPLY_SALT, [m, k])` otherwise; job IDs are mapped the same way, and copy k of a
//!   job runs on copy k of the machines (the copies are independent cells side by side).
//! - **workload P %**: each task (of each copy) is replayed `P / 100` times, plus once more when
//!   its hash falls in the remaining `P mod 100` %: at 102 % about 2 % of the tasks get a
//!   duplicate, at 98 % about 2 % are dropped. Duplicate d >= 1 of task (j, i) is task
//!   (`hash_keys(WORKLOAD_SALT, [j, d])`, i): the duplicates of one job form one job.
//! - **compact P %**: a machine (copy) is kept when its hash falls in the first P %; the events of
//!   the others are skipped, and SCHEDULE events naming them count as placements on unknown
//!   machines (`ReplayStats::unknown_machine_placements`; borg-replay leaves those tasks pending).
//!
//! "Hash falls in the first P %" means `hash_keys(salt, keys) % 1_000_000 < P * 10_000`. The
//! identity scaling (1, 100 %, 100 %) maps every ID to itself at no cost.

use serde::{Deserialize, Serialize};

/// Salt of the machine and job IDs of copies.
pub const MULTIPLY_SALT: u64 = 0x6d75_6c74_6970_6c79;
/// Salt of the workload selection and the duplicates' job IDs.
pub const WORKLOAD_SALT: u64 = 0x776f_726b_6c6f_6164;
/// Salt of the compaction selection.
pub const COMPACT_SALT: u64 = 0x636f_6d70_6163_7421;

/// Whether the hash of `keys` falls in the first `pct` % (resolution 0.0001 %); at 0 % and from
/// 100 % the answer is known without hashing.
pub fn selected(salt: u64, keys: &[u64], pct: u32) -> bool {
    match pct {
        0 => false,
        100.. => true,
        _ => ingest::rng::hash_keys(salt, keys) % 1_000_000 < pct as u64 * 10_000,
    }
}

/// The IDs of the copies of the last job [`Scale::tasks`] was asked for: consecutive trace rows
/// mostly name one job, so its copy IDs are hashed once rather than for every row.
#[derive(Debug, Clone, Default)]
pub struct CopyIds {
    job: Option<u64>,
    ids: Vec<u64>,
}

impl CopyIds {
    /// [`Scale::copy_id`] of copies `0..multiply` of `job`.
    pub fn of(&mut self, job: u64, multiply: u32) -> &[u64] {
        if self.job != Some(job) || self.ids.len() != multiply as usize {
            self.job = Some(job);
            self.ids.clear();
            self.ids
                .extend((0..multiply).map(|k| Scale::copy_id(job, k)));
        }
        &self.ids
    }
}

/// The scaling of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Scale {
    /// Copies of every machine and job (1 = the trace as is).
    pub multiply: u32,
    /// Tasks replayed, percent of the trace's (100 = as is).
    pub workload_pct: u32,
    /// Machines kept, percent (100 = all).
    pub compact_pct: u32,
}

impl Default for Scale {
    fn default() -> Self {
        Scale {
            multiply: 1,
            workload_pct: 100,
            compact_pct: 100,
        }
    }
}

impl Scale {
    /// Checks the ranges; returns what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=64).contains(&self.multiply) {
            return Err(format!("multiply must be 1..=64, got {}", self.multiply));
        }
        if self.workload_pct > 1_000 {
            return Err(format!(
                "workload_pct must be 0..=1000, got {}",
                self.workload_pct
            ));
        }
        if !(1..=100).contains(&self.compact_pct) {
            return Err(format!(
                "compact_pct must be 1..=100, got {}",
                self.compact_pct
            ));
        }
        Ok(())
    }

    /// True for the identity scaling.
    pub fn is_identity(&self) -> bool {
        *self == Scale::default()
    }

    /// ID of copy `k` of machine or job `id`.
    pub fn copy_id(id: u64, k: u32) -> u64 {
        if k == 0 {
            id
        } else {
            ingest::rng::hash_keys(MULTIPLY_SALT, &[id, k as u64])
        }
    }

    /// Copy `k` of machine `id`, unless compaction removed it.
    pub fn machine(&self, id: u64, k: u32) -> Option<u64> {
        let copy = Self::copy_id(id, k);
        selected(COMPACT_SALT, &[copy], self.compact_pct).then_some(copy)
    }

    /// The copies of machine `id` that compaction keeps.
    pub fn machines(&self, id: u64) -> impl Iterator<Item = u64> + '_ {
        (0..self.multiply).filter_map(move |k| self.machine(id, k))
    }

    /// Appends to `out` the replayed instances of task (`job`, `index`): (job ID, machine copy).
    /// `copies` holds the copy IDs of the last job asked for.
    pub fn tasks(&self, job: u64, index: u32, copies: &mut CopyIds, out: &mut Vec<(u64, u32)>) {
        out.clear();
        if self.is_identity() {
            out.push((job, 0));
            return;
        }
        for (k, &job_k) in (0..self.multiply).zip(copies.of(job, self.multiply)) {
            let extra = selected(
                WORKLOAD_SALT,
                &[job_k, index as u64],
                self.workload_pct % 100,
            );
            let instances = self.workload_pct / 100 + extra as u32;
            for d in 0..instances {
                let id = if d == 0 {
                    job_k
                } else {
                    ingest::rng::hash_keys(WORKLOAD_SALT, &[job_k, d as u64])
                };
                out.push((id, k));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_maps_to_itself() {
        let s = Scale::default();
        let mut out = Vec::new();
        s.tasks(42, 3, &mut CopyIds::default(), &mut out);
        assert_eq!(out, [(42, 0)]);
        assert_eq!(s.machine(7, 0), Some(7));
    }

    #[test]
    fn copies_and_duplicates_are_distinct_and_proportional() {
        let s = Scale {
            multiply: 3,
            workload_pct: 150,
            compact_pct: 100,
        };
        let (mut out, mut copies) = (Vec::new(), CopyIds::default());
        let (mut total, mut ids) = (0, std::collections::HashSet::new());
        for job in 0..2_000u64 {
            s.tasks(job, 0, &mut copies, &mut out);
            total += out.len();
            for &(id, k) in &out {
                assert!(k < 3);
                assert!(ids.insert(id), "distinct IDs");
            }
        }
        // 3 copies x 1.5 tasks each, within binomial noise of the 50 % selection.
        let per_task = total as f64 / 2_000.0;
        assert!((per_task - 4.5).abs() < 0.1, "{per_task}");
        let dropped = Scale {
            workload_pct: 0,
            ..Scale::default()
        };
        dropped.tasks(1, 1, &mut copies, &mut out);
        assert!(out.is_empty());
    }

    /// The memo answers what hashing every time would, whatever the order of the jobs asked
    /// for; a whole-hundred workload gives exactly that many instances per copy.
    #[test]
    fn copy_ids_memo_and_whole_workloads() {
        let mut copies = CopyIds::default();
        for (job, multiply) in [(5, 3), (5, 3), (6, 3), (5, 3), (5, 2), (7, 1)] {
            let expected: Vec<u64> = (0..multiply).map(|k| Scale::copy_id(job, k)).collect();
            assert_eq!(copies.of(job, multiply), expected);
        }
        let double = Scale {
            multiply: 2,
            workload_pct: 200,
            compact_pct: 100,
        };
        let mut out = Vec::new();
        for job in 0..100 {
            double.tasks(job, 1, &mut copies, &mut out);
            assert_eq!(out.iter().map(|i| i.1).collect::<Vec<_>>(), [0, 0, 1, 1]);
        }
    }

    /// 0 % selects nothing and 100 % everything, whatever the hash; in between, about that
    /// share.
    #[test]
    fn selection_shares() {
        let share = |pct| {
            (0..10_000u64)
                .filter(|&k| selected(WORKLOAD_SALT, &[k, 7], pct))
                .count()
        };
        assert_eq!((share(0), share(100), share(250)), (0, 10_000, 10_000));
        assert!((2_300..=2_700).contains(&share(25)), "{}", share(25));
    }

    #[test]
    fn compaction_keeps_about_p_percent() {
        let s = Scale {
            compact_pct: 90,
            ..Scale::default()
        };
        let kept = (0..10_000u64)
            .filter(|&m| s.machine(m, 0).is_some())
            .count();
        assert!((8_850..=9_150).contains(&kept), "{kept}");
    }
}
