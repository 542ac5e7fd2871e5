//! `cellsim report`: the layout of seed 000's Table 4 (average nodes per allocation class per
//! tick, with percentages of online nodes) for one or several runs side by side, plus global
//! usage, requests and migration figures.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use engine::RunSummary;
use engine::run::{CONFIG_FILE, SUMMARY_FILE};

use crate::error::{AnalysisError, Result};

/// Reads `RUN_DIR/summary.json`.
pub fn load_run(dir: &Path) -> Result<RunSummary> {
    let (path, text) = read_summary(dir)?;
    serde_json::from_str(&text).map_err(|e| AnalysisError::BadRunSummary {
        path,
        problem: e.to_string(),
    })
}

/// The path and text of `RUN_DIR/summary.json`.
pub(crate) fn read_summary(dir: &Path) -> Result<(PathBuf, String)> {
    let path = dir.join(SUMMARY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok((path, text)),
        Err(source)
            if source.kind() == std::io::ErrorKind::NotFound && dir.join(CONFIG_FILE).is_file() =>
        {
            Err(AnalysisError::Unfinished {
                dir: dir.to_path_buf(),
                summary: SUMMARY_FILE,
            })
        }
        Err(_) if dir.join(ingest::ingest::SUMMARY_FILE).is_file() => {
            Err(AnalysisError::TraceNotRun {
                dir: dir.to_path_buf(),
            })
        }
        Err(source) => Err(AnalysisError::NotARun { path, source }),
    }
}

/// What a researcher must know of how `run` ended, a line each: the work it left undone
/// (`summary.work_left`) and every stall of its policy (`watchdog.rs`). Empty when the run did
/// all its work, or ended a trace window with only running tasks left, and never stalled.
pub fn liveness_lines(run: &RunSummary) -> Vec<String> {
    let tick_s = run.config.tick.secs_f64();
    let mut lines: Vec<String> = run.work_left.describe().into_iter().collect();
    let stalls = run
        .stalls
        .iter()
        .map(|s| s.describe(run.ticks, tick_s, true));
    lines.extend(stalls);
    lines
}

/// The table for runs labelled by `names`.
pub fn render(names: &[String], runs: &[RunSummary]) -> String {
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(18);
    let mut o = String::new();
    let _ = write!(o, "{:<24}", "average per tick");
    for n in names {
        let _ = write!(o, " {n:>width$}");
    }
    o.push('\n');
    let mut row = |label: &str, cell: &dyn Fn(&RunSummary) -> String| {
        let _ = write!(o, "{label:<24}");
        for r in runs {
            let _ = write!(o, " {:>width$}", cell(r));
        }
        o.push('\n');
    };
    row("policy", &|r| r.policy.clone());
    row("simulated hours", &|r| {
        format!("{:.1}", r.simulated_s / 3600.0)
    });
    row("nodes online", &|r| {
        format!("{:.1}", r.averages.nodes_online)
    });
    for (key, label) in [
        ("idle", "idle"),
        ("sta", "STA"),
        ("ta", "TA"),
        ("pa", "PA"),
        ("da", "DA"),
        ("overloaded", "overloaded"),
    ] {
        row(label, &|r| {
            let v = r.averages.classes.get(key).copied().unwrap_or(0.0);
            let pct = if r.averages.nodes_online > 0.0 {
                100.0 * v / r.averages.nodes_online
            } else {
                0.0
            };
            format!("{v:.1} ({pct:.2}%)")
        });
    }
    // Seed 000's Table 3: the allocation score ratios, each class's share of the nodes neither
    // idle nor overloaded.
    row("ASR STA/TA/PA/DA %", &|r| {
        const BALANCED: [&str; 4] = ["sta", "ta", "pa", "da"];
        let of = |key: &str| r.averages.classes.get(key).copied().unwrap_or(0.0);
        let balanced: f64 = BALANCED.iter().map(|k| of(k)).sum();
        if balanced > 0.0 {
            let share = |key: &str| format!("{:.1}", 100.0 * of(key) / balanced);
            BALANCED.map(share).join("/")
        } else {
            "-".into()
        }
    });
    row("tasks running", &|r| {
        format!("{:.0}", r.averages.tasks_running)
    });
    row("tasks pending", &|r| {
        format!("{:.0}", r.averages.tasks_pending)
    });
    let pct = |v: f64| format!("{:.1}%", 100.0 * v);
    row("CPU used", &|r| pct(r.averages.cpu_used_ratio));
    row("memory used", &|r| pct(r.averages.mem_used_ratio));
    row("CPU requested", &|r| pct(r.averages.cpu_requested_ratio));
    row("memory requested", &|r| pct(r.averages.mem_requested_ratio));
    row("production CPU", &|r| {
        pct(r.averages.prod_cpu_reserved_ratio)
    });
    row("production memory", &|r| {
        pct(r.averages.prod_mem_reserved_ratio)
    });
    row("RUS breaches", &|r| {
        format!("{:.1}", r.averages.rus_breaches)
    });
    // Seed 000's Table 2: nodes whose use rose by more than 10 points of capacity in a tick.
    row("use rises > 10 % / tick", &|r| {
        (r.averages.usage_rises_over(10)).map_or("-".into(), |v| format!("{v:.1}"))
    });
    // The policy's counters: `-` for a run whose policy does not declare one.
    let counter = |r: &RunSummary, name: &str| r.totals.counters.get(name).copied();
    let per_minute = |r: &RunSummary, v: f64| v * 60.0 / r.simulated_s.max(1.0);
    row("migrations / minute", &|r| {
        counter(r, "migrations_started").map_or("-".into(), |v| format!("{:.2}", per_minute(r, v)))
    });
    // Seed 000's Table 6: the data moved by live migration, per minute and per migration.
    row("migrated MB / minute", &|r| {
        counter(r, "migration_cost_mb").map_or("-".into(), |v| format!("{:.0}", per_minute(r, v)))
    });
    row("MB per migration", &|r| match (
        counter(r, "migration_cost_mb"),
        counter(r, "migrations_started"),
    ) {
        (Some(mb), Some(started)) if started > 0.0 => format!("{:.0}", mb / started),
        _ => "-".into(),
    });
    let known = ["migrations_started", "migration_cost_mb"];
    let mut others: Vec<&String> = runs.iter().flat_map(|r| r.totals.counters.keys()).collect();
    others.sort();
    others.dedup();
    for name in others.into_iter().filter(|n| !known.contains(&n.as_str())) {
        row(&name.replace('_', " "), &|r| {
            counter(r, name).map_or("-".into(), |v| format!("{v:.0}"))
        });
    }
    // What the run left (`summary.work_left`) and whether its policy stalled (`watchdog.rs`).
    row("left waiting / running", &|r| {
        let w = &r.work_left;
        format!("{} / {}", w.tasks_waiting, w.tasks_running)
    });
    row("stalls", &|r| match r.stalls.as_slice() {
        [] => "none".into(),
        stalls => {
            let ticks: u64 = stalls.iter().map(|s| s.ticks(r.ticks)).sum();
            format!("{} ({ticks} ticks)", stalls.len())
        }
    });
    row("odd machine events", &|r| {
        let s = &r.replay;
        match s.adds_changing_capacity + s.updates_of_unknown_machines {
            0 => "none".into(),
            _ => format!(
                "{} re-ADD, {} UPDATE unknown",
                s.adds_changing_capacity, s.updates_of_unknown_machines
            ),
        }
    });
    row("admits tasks by", &|r| match r.admits_by.as_str() {
        "" => "-".into(),
        by => by.into(),
    });
    // A node's CPU is throttled at its capacity only where the model is all the usage
    // (`UsageModel::throttles_cpu`).
    row("usage from", &|r| {
        match (r.replay.usage_from_trace, r.replay.usage_model) {
            (true, false) => "task_usage",
            (false, true) if r.config.usage.cpu_compressible => "usage model, CPU throttled",
            (false, true) => "usage model",
            (true, true) => "task_usage + model",
            (false, false) => "requests",
        }
        .into()
    });
    row("speed (x real time)", &|r| {
        format!("{:.0}", r.speed_x_real_time)
    });
    row("peak RSS (MB)", &|r| {
        r.peak_rss_mb.map_or("-".into(), |m| format!("{m:.0}"))
    });
    // Several when the run was resumed by another build; `-` for runs of older cellsims.
    row("cellsim build", &|r| match r.builds.as_slice() {
        [] => "-".into(),
        [only] => only.build.clone(),
        spans => spans
            .iter()
            .map(|s| format!("{} from tick {}", s.build, s.from_tick))
            .collect::<Vec<_>>()
            .join("; "),
    });
    o
}

/// Rows of the summarised columns of the tables the runs' policies declare
/// ([`crate::policy_tables`]): per column, mean/median/p99 (ms for durations) and the rows
/// counted; `-` for a run whose policy has no such column. Empty when no run declares one.
pub fn render_policy_tables(
    names: &[String],
    runs: &[Vec<crate::policy_tables::ColumnSummary>],
) -> String {
    let mut keys: Vec<&str> = Vec::new();
    for s in runs.iter().flatten() {
        if !keys.contains(&s.key.as_str()) {
            keys.push(&s.key);
        }
    }
    if keys.is_empty() {
        return String::new();
    }
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(18);
    let mut o = String::new();
    let _ = write!(o, "{:<32}", "policy tables");
    for n in names {
        let _ = write!(o, " {n:>width$}");
    }
    o.push('\n');
    for key in keys {
        let label = crate::policy_tables::label(key);
        let cells = |f: &dyn Fn(&crate::policy_tables::ColumnSummary) -> String| {
            runs.iter()
                .map(|r| r.iter().find(|s| s.key == key).map_or("-".into(), f))
                .collect::<Vec<String>>()
        };
        let rows = [
            (
                format!("{label} mean/p50/p99"),
                cells(&|s| match s.count {
                    0 => "-".into(),
                    _ => format!("{:.1}/{:.1}/{:.1}", s.mean, s.p50, s.p99),
                }),
            ),
            (format!("{label} values"), cells(&|s| s.count.to_string())),
        ];
        for (label, values) in rows {
            let _ = write!(o, "{label:<32}");
            for v in values {
                let _ = write!(o, " {v:>width$}");
            }
            o.push('\n');
        }
    }
    o
}

/// Rows of the runs' wall-clock profiles (`cellsim report --timing`): first tick, median
/// milliseconds per tick, whole and by phase, and the mean whole tick; `-` for a run without
/// `timing/`.
pub fn render_timing(names: &[String], timings: &[Option<crate::timing::PhaseMedians>]) -> String {
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(18);
    let mut o = String::new();
    let mut row = |label: &str, cell: &dyn Fn(&crate::timing::PhaseMedians) -> f64| {
        // Counts as integers, times in ms to two decimals.
        let decimals = if label.starts_with("snapshots") { 0 } else { 2 };
        let _ = write!(o, "{label:<24}");
        for t in timings {
            let v = t
                .as_ref()
                .map_or("-".into(), |t| format!("{:.decimals$}", cell(t)));
            let _ = write!(o, " {v:>width$}");
        }
        o.push('\n');
    };
    row("first tick (ms)", &|t| t.first_tick_ms);
    let labels = [
        "ms per tick (median)",
        "  trace apply",
        "  policy",
        "  metrics",
        "  output",
    ];
    for (k, label) in labels.iter().enumerate() {
        row(label, &|t| t.medians[k]);
    }
    row("ms per tick (mean)", &|t| t.mean_ms);
    row("snapshots written", &|t| t.snapshots as f64);
    row("snapshot write (ms)", &|t| t.snapshot_ms);
    if timings.iter().flatten().any(|t| t.split.is_some()) {
        o.push_str(&render_split(timings, width));
    }
    o
}

/// The one-thread / parallel split of the ticks' time (means per tick over the same window as
/// the medians) and the speed-ups Amdahl's law allows from the one-thread share.
fn render_split(timings: &[Option<crate::timing::PhaseMedians>], width: usize) -> String {
    use crate::timing::PhaseSplit;
    let mut o = String::new();
    let mut row = |label: &str, cell: &dyn Fn(&PhaseSplit) -> String| {
        let _ = write!(o, "{label:<24}");
        for t in timings {
            let v = t
                .as_ref()
                .and_then(|t| t.split.as_ref())
                .map_or("-".into(), cell);
            let _ = write!(o, " {v:>width$}");
        }
        o.push('\n');
    };
    let per_tick = |ms: f64, s: &PhaseSplit| ms / s.ticks.max(1) as f64;
    row("one-thread share (%)", &|s| {
        format!("{:.1}", 100.0 * s.one_thread_share())
    });
    row("ms 1 thread/parallel", &|s| {
        let parallel = per_tick(s.parallel_ms.iter().sum(), s);
        format!(
            "{:.2}/{parallel:.2}",
            (per_tick(s.wall_ms, s) - parallel).max(0.0)
        )
    });
    let phases = ["trace apply", "policy", "metrics", "output"];
    for (k, phase) in phases.iter().enumerate() {
        row(&format!("  {phase} (1/par)"), &|s| {
            let parallel = per_tick(s.parallel_ms[k], s);
            let one = per_tick(s.phase_ms[k], s) - parallel;
            format!("{:.2}/{parallel:.2}", one.max(0.0))
        });
    }
    for threads in [8, 16, 32, 64] {
        row(&format!("Amdahl x at {threads} threads"), &|s| {
            format!("{:.1}", PhaseSplit::amdahl(s.one_thread_share(), threads))
        });
    }
    o.push_str(
        "(one-thread share: of the ticks' time, what ran outside data-parallel sweeps; the \
         speed-ups over one thread it allows hold for a run measured at --threads 1)\n",
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::PhaseMedians;

    /// A column one run's policy declares and the other's does not: `-` for the other; nothing
    /// at all when no run declares a summarised column.
    #[test]
    fn policy_table_rows_show_each_runs_columns() {
        use crate::policy_tables::ColumnSummary;
        let queue = ColumnSummary {
            key: "tasks.queue_us".into(),
            count: 4,
            mean: 0.15,
            p50: 0.1,
            p99: 0.3,
        };
        let names = ["a".to_string(), "b".to_string()];
        let text = render_policy_tables(&names, &[vec![queue], vec![]]);
        let line = text
            .lines()
            .find(|l| l.starts_with("tasks queue (ms) mean"))
            .unwrap();
        assert_eq!(
            line[32..].split_whitespace().collect::<Vec<_>>(),
            ["0.1/0.1/0.3", "-"]
        );
        assert!(render_policy_tables(&names, &[vec![], vec![]]).is_empty());
    }

    /// The cells of `render_timing`'s row labelled `label`, one per run.
    fn timing_cells<'t>(text: &'t str, label: &str) -> Vec<&'t str> {
        let line = text.lines().find(|l| l.starts_with(label)).unwrap();
        line[24..].split_whitespace().collect()
    }

    /// A run's timing without the one-thread split.
    fn timing_fixture() -> PhaseMedians {
        PhaseMedians {
            ticks: 10,
            first_tick_ms: 21.654,
            medians: [0.114, 0.09, 0.0, 0.01, 0.004],
            mean_ms: 0.18,
            snapshots: 3,
            snapshot_ms: 12.5,
            split: None,
        }
    }

    /// Times to two decimals, the snapshot count as a count, `-` for a run without timing.
    #[test]
    fn timing_rows_show_times_counts_and_missing_runs() {
        let t = timing_fixture();
        let names = ["a".to_string(), "b".to_string()];
        let text = render_timing(&names, &[Some(t), None]);
        let row = |label: &str| timing_cells(&text, label);
        assert_eq!(row("first tick (ms)"), ["21.65", "-"]);
        assert_eq!(row("ms per tick (median)"), ["0.11", "-"]);
        assert_eq!(row("snapshots written"), ["3", "-"]);
        assert_eq!(row("snapshot write (ms)"), ["12.50", "-"]);
        assert!(!text.contains("one-thread share"));
    }

    /// The split rows, hand-worked: 2 ticks of 30 ms in all, 10 ms of them in parallel sweeps
    /// (3 in the apply phase of 15 ms, 7 in the policy's 12): 66.7 % on one thread; Amdahl's
    /// 1 / (2/3 + 1/3 / 8) = 1.41 at 8 threads; `-` for a run without the split.
    #[test]
    fn split_rows_show_shares_phases_and_projections() {
        use crate::timing::PhaseSplit;
        let with = PhaseMedians {
            split: Some(PhaseSplit {
                ticks: 2,
                wall_ms: 30.0,
                phase_ms: [15.0, 12.0, 1.5, 1.5],
                parallel_ms: [3.0, 7.0, 0.0, 0.0],
            }),
            ..timing_fixture()
        };
        let names = ["a".to_string(), "b".to_string()];
        let text = render_timing(&names, &[Some(with), Some(timing_fixture())]);
        let row = |label: &str| timing_cells(&text, label);
        assert_eq!(row("one-thread share (%)"), ["66.7", "-"]);
        assert_eq!(row("ms 1 thread/parallel"), ["10.00/5.00", "-"]);
        assert_eq!(row("  trace apply (1/par)"), ["6.00/1.50", "-"]);
        assert_eq!(row("  policy (1/par)"), ["2.50/3.50", "-"]);
        assert_eq!(row("Amdahl x at 8 threads"), ["1.4", "-"]);
        assert_eq!(row("Amdahl x at 64 threads"), ["1.5", "-"]);
    }
}
