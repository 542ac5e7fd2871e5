//! `summary.json`: what a run was (config, seed, version, trace) and what it measured: per-tick
//! averages (the rows of seed 000's Tables 4-8), totals, replay oddities, wall time and peak RSS.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::classify::NodeClass;
use crate::config::RunConfig;
use crate::metrics::{RISE_THRESHOLDS_PCT, RISES, TickRow, sum};
use crate::policy::CounterKind;
use crate::replay::ReplayStats;

/// Averages per tick over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Averages {
    /// Nodes online.
    pub nodes_online: f64,
    /// Nodes per class ("idle", "overloaded", "sta", "ta", "pa", "da").
    pub classes: BTreeMap<String, f64>,
    /// Tasks running.
    pub tasks_running: f64,
    /// Tasks pending.
    pub tasks_pending: f64,
    /// CPU used / capacity.
    pub cpu_used_ratio: f64,
    /// Memory used / capacity.
    pub mem_used_ratio: f64,
    /// CPU requested / capacity.
    pub cpu_requested_ratio: f64,
    /// Memory requested / capacity.
    pub mem_requested_ratio: f64,
    /// Production CPU requested / capacity.
    pub prod_cpu_reserved_ratio: f64,
    /// Production memory requested / capacity.
    pub prod_mem_reserved_ratio: f64,
    /// Nodes breaking the RUS rule.
    pub rus_breaches: f64,
    /// Nodes whose CPU or memory use rose by more than N points of capacity in a tick, by
    /// threshold (`"5pct"` ... `"25pct"`, [`RISE_THRESHOLDS_PCT`]; seed 000 Table 2; empty in
    /// runs of older cellsims). Read in threshold order with [`Averages::rises_by_threshold`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub usage_rises: BTreeMap<String, f64>,
}

impl Averages {
    /// [`Averages::usage_rises`] in the order of [`RISE_THRESHOLDS_PCT`]; none for a run of an
    /// older cellsim, which did not count them.
    pub fn rises_by_threshold(&self) -> Option<[f64; RISES]> {
        let mut out = [0.0; RISES];
        for (v, pct) in out.iter_mut().zip(RISE_THRESHOLDS_PCT) {
            *v = self.usage_rises_over(pct)?;
        }
        Some(out)
    }

    /// The average nodes per tick whose use rose by more than `pct` points, if counted.
    pub fn usage_rises_over(&self, pct: u32) -> Option<f64> {
        self.usage_rises.get(&rises_key(pct)).copied()
    }
}

/// The key of threshold `pct` in [`Averages::usage_rises`].
fn rises_key(pct: u32) -> String {
    format!("{pct}pct")
}

/// Totals over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// The policy's counters ([`Policy::counter_kinds`](crate::policy::Policy::counter_kinds)),
    /// summed, by name.
    #[serde(flatten)]
    pub counters: BTreeMap<String, f64>,
    /// Messages per kind.
    pub messages: BTreeMap<String, u64>,
}

/// A stretch of a run simulated by one cellsim build ([`crate::build`]); a run resumed by another
/// build has several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildSpan {
    /// The build.
    pub build: String,
    /// The first tick it simulated.
    pub from_tick: u64,
}

impl BuildSpan {
    /// The builds of a run that `build` resumes at `next_tick`: `builds` and, unless it
    /// simulated the last stretch, `build` from `next_tick` on.
    pub fn resumed_by(mut builds: Vec<BuildSpan>, build: &str, next_tick: u64) -> Vec<BuildSpan> {
        if builds.last().is_none_or(|b| b.build != build) {
            builds.push(BuildSpan {
                build: build.to_string(),
                from_tick: next_tick,
            });
        }
        builds
    }
}

/// The content of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// cellsim version.
    pub version: String,
    /// The builds that simulated the run, in tick order (absent in runs of older cellsims).
    #[serde(default)]
    pub builds: Vec<BuildSpan>,
    /// Policy name.
    pub policy: String,
    /// The configuration (with defaults filled in).
    #[serde(deserialize_with = "recorded_config")]
    pub config: RunConfig,
    /// Ingested trace directory.
    pub trace: String,
    /// What the policy admitted a task to a node by ([`Policy::admits_by`](crate::policy::Policy::admits_by);
    /// empty in runs of older cellsims).
    #[serde(default)]
    pub admits_by: String,
    /// Ticks simulated.
    pub ticks: u64,
    /// Simulated seconds.
    pub simulated_s: f64,
    /// Per-tick averages.
    pub averages: Averages,
    /// Totals.
    pub totals: Totals,
    /// Trace oddities and whether usage came from task_usage.
    pub replay: ReplayStats,
    /// The work left when the run ended (absent in runs of older cellsims).
    #[serde(default)]
    pub work_left: WorkLeft,
    /// Spans in which the policy placed nothing while waiting tasks fitted (`watchdog.rs`;
    /// absent in runs of older cellsims).
    #[serde(default)]
    pub stalls: Vec<crate::watchdog::Stall>,
    /// Wall-clock seconds (not deterministic).
    pub wall_s: f64,
    /// Simulated time / wall time (not deterministic).
    pub speed_x_real_time: f64,
    /// Peak resident memory in MB, when the OS reports it (not deterministic).
    pub peak_rss_mb: Option<f64>,
}

/// The work a run left when it ended: tasks still waiting or running. A trace window ends
/// with work in flight (GCD's services run on past it); a scenario's run ends when its work is
/// done unless `hours` cut it short.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkLeft {
    /// Tasks submitted and not running at the end.
    pub tasks_waiting: u64,
    /// Tasks running at the end.
    pub tasks_running: u64,
    /// The trace is a scenario (side tables): its work has an end, so any work left is undone.
    pub scenario: bool,
}

impl WorkLeft {
    /// True when a scenario's run left work undone (tasks waiting or running). A trace window
    /// (GCD) always ends with work in flight, which `summary.json` and `report` count but which
    /// is no sign of trouble.
    pub fn undone(&self) -> bool {
        self.scenario && (self.tasks_waiting > 0 || self.tasks_running > 0)
    }

    /// One line saying what was left, or none when nothing was.
    pub fn describe(&self) -> Option<String> {
        if !self.undone() {
            return None;
        }
        Some(format!(
            "work left undone at the end: {} tasks waiting, {} running",
            self.tasks_waiting, self.tasks_running
        ))
    }
}

/// The accumulator's sums: ten figures, then the usage rises per threshold.
const SUMS: usize = 10 + RISES;

/// A policy's counter kinds and message kinds.
pub type KindsOf<'a> = (&'a [CounterKind], &'a [&'a str]);

/// Running sums over tick rows, in tick order (so float sums are reproducible). Snapshots keep
/// it as [`AccumulatorState`] (no flattened maps, which binary encodings cannot size).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(from = "AccumulatorState", into = "AccumulatorState")]
pub struct Accumulator {
    ticks: u64,
    sums: [f64; SUMS],
    classes: [f64; 7],
    totals: Totals,
}

/// [`Accumulator`]'s fields for snapshots.
#[derive(Serialize, Deserialize)]
pub struct AccumulatorState {
    ticks: u64,
    sums: [f64; SUMS],
    classes: [f64; 7],
    counters: BTreeMap<String, f64>,
    messages: BTreeMap<String, u64>,
}

impl From<Accumulator> for AccumulatorState {
    fn from(a: Accumulator) -> Self {
        AccumulatorState {
            ticks: a.ticks,
            sums: a.sums,
            classes: a.classes,
            counters: a.totals.counters,
            messages: a.totals.messages,
        }
    }
}

impl From<AccumulatorState> for Accumulator {
    fn from(s: AccumulatorState) -> Self {
        Accumulator {
            ticks: s.ticks,
            sums: s.sums,
            classes: s.classes,
            totals: Totals {
                counters: s.counters,
                messages: s.messages,
            },
        }
    }
}

impl Accumulator {
    /// Adds one tick.
    pub fn add(&mut self, row: &TickRow, (counter_kinds, message_kinds): KindsOf<'_>) {
        self.ticks += 1;
        let values = [
            row.nodes_online as f64,
            row.tasks_running as f64,
            row.tasks_pending as f64,
            row.ratio(sum::CPU_USED, sum::CPU_CAP),
            row.ratio(sum::MEM_USED, sum::MEM_CAP),
            row.ratio(sum::CPU_REQ, sum::CPU_CAP),
            row.ratio(sum::MEM_REQ, sum::MEM_CAP),
            row.ratio(sum::PROD_CPU_REQ, sum::CPU_CAP),
            row.ratio(sum::PROD_MEM_REQ, sum::MEM_CAP),
            row.rus_breaches as f64,
        ]
        .into_iter()
        .chain(row.usage_rises.map(f64::from));
        for (s, v) in self.sums.iter_mut().zip(values) {
            *s += v;
        }
        for (s, v) in self.classes.iter_mut().zip(row.classes) {
            *s += v as f64;
        }
        for (k, kind) in counter_kinds.iter().enumerate() {
            *self
                .totals
                .counters
                .entry(kind.name.to_string())
                .or_default() += row.counters.get(k);
        }
        for (kind, n) in message_kinds.iter().zip(&row.messages) {
            *self.totals.messages.entry(kind.to_string()).or_default() += n;
        }
    }

    /// Ticks added.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// The averages and totals.
    pub fn finish(self) -> (Averages, Totals) {
        let n = self.ticks.max(1) as f64;
        let s = self.sums.map(|v| v / n);
        let classes = NodeClass::ALL[1..]
            .iter()
            .map(|c| (c.name().to_string(), self.classes[*c as usize] / n))
            .collect();
        let averages = Averages {
            nodes_online: s[0],
            classes,
            tasks_running: s[1],
            tasks_pending: s[2],
            cpu_used_ratio: s[3],
            mem_used_ratio: s[4],
            cpu_requested_ratio: s[5],
            mem_requested_ratio: s[6],
            prod_cpu_reserved_ratio: s[7],
            prod_mem_reserved_ratio: s[8],
            rus_breaches: s[9],
            usage_rises: (RISE_THRESHOLDS_PCT.iter().enumerate())
                .map(|(k, &pct)| (rises_key(pct), s[10 + k]))
                .collect(),
        };
        (averages, self.totals)
    }
}

/// Peak resident set size of this process in MB (Linux `VmHWM`), if available.
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// A summary's config, in the layout of the cellsim that wrote it ([`crate::config::upgrade_recorded`]).
fn recorded_config<'de, D: serde::Deserializer<'de>>(d: D) -> Result<RunConfig, D::Error> {
    let mut value = serde_json::Value::deserialize(d)?;
    crate::config::upgrade_recorded(&mut value);
    RunConfig::deserialize(value).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 2's rises read back in threshold order from `summary.json`'s keys; a summary
    /// written before they were counted has none (not zeros).
    #[test]
    fn usage_rises_read_in_threshold_order_and_absent_for_older_runs() {
        let mut acc = Accumulator::default();
        let mut row = TickRow {
            tick: 0,
            time_us: 60_000_000,
            nodes_online: 3,
            tasks_running: 0,
            tasks_pending: 0,
            classes: [0; 7],
            rus_breaches: 0,
            usage_rises: [0; RISES],
            sums: [0; 8],
            counters: crate::policy::PolicyCounters::default(),
            messages: Vec::new(),
        };
        row.usage_rises = [50, 20, 8, 4, 2];
        acc.add(&row, (&[], &[]));
        row.usage_rises = [30, 10, 2, 0, 0];
        acc.add(&row, (&[], &[]));
        let (averages, _) = acc.finish();
        assert_eq!(
            averages.rises_by_threshold(),
            Some([40.0, 15.0, 5.0, 2.0, 1.0])
        );
        let json = serde_json::to_value(&averages).unwrap();
        assert_eq!(json["usage_rises"]["10pct"], 15.0);
        let mut older = json.clone();
        older.as_object_mut().unwrap().remove("usage_rises");
        let older: Averages = serde_json::from_value(older).unwrap();
        assert_eq!(older.rises_by_threshold(), None);
        assert_eq!(serde_json::from_value::<Averages>(json).unwrap(), averages);
    }

    /// A resume by the build that wrote the snapshot keeps one span; by another build (a
    /// cellsim rebuilt while the job waited in the queue) adds one, so the summary says which
    /// build simulated which ticks.
    #[test]
    fn a_resume_by_another_build_starts_a_span() {
        let span = |build: &str, from_tick| BuildSpan {
            build: build.into(),
            from_tick,
        };
        let first = vec![span("0.1.0 (git a)", 0)];
        assert_eq!(
            BuildSpan::resumed_by(first.clone(), "0.1.0 (git a)", 90),
            first
        );
        let two = BuildSpan::resumed_by(first, "0.1.0 (git b)", 90);
        assert_eq!(two, [span("0.1.0 (git a)", 0), span("0.1.0 (git b)", 90)]);
        let back = BuildSpan::resumed_by(two.clone(), "0.1.0 (git a)", 200);
        assert_eq!(back[2], span("0.1.0 (git a)", 200));
    }
}
