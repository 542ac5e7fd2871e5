//! Deadlines met, by type, for `cellsim report` (seed 004 on any trace with deadlines: a
//! scenario's, or the `[deadlines]` model's on a GCD cell): per run, from its `jobs/` table, the
//! jobs that ended with a hard or a soft deadline, the share that met it (latency <= 0) and their
//! latency's median, 90th and 99th percentiles (`percentile.rs`), and, for a run whose policy
//! solves an optimisation (`nbs`), its solver's wall time per solve (`timing/`'s `solver_ms`
//! over the `nbs_solves` counter). A run without a `jobs/` table, or whose jobs have no
//! deadline, has none.

use std::fmt::Write as _;
use std::path::Path;

use arrow_array::Array;
use arrow_array::types::{Float64Type, Int64Type};

use crate::error::Result;
use crate::parts::for_each_batch;

/// The jobs of one deadline type in a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Met {
    /// Jobs that ended with this type of deadline.
    pub jobs: usize,
    /// Those that met it.
    pub met: usize,
    /// Latency percentiles 50 / 90 / 99, seconds.
    pub latency_s: [f64; 3],
}

/// A run's deadlines: hard, then soft.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Deadlines {
    /// Hard, soft.
    pub by_type: [Met; 2],
}

/// Reads `RUN/jobs/`; `None` without the table or without a job with a deadline.
pub fn of_run(run: &Path) -> Result<Option<Deadlines>> {
    if !run.join("jobs").is_dir() {
        return Ok(None);
    }
    let mut latencies: [Vec<f64>; 2] = Default::default();
    for_each_batch(run, "jobs", |part| {
        let latency = part.column::<Int64Type>("latency_us")?;
        let hard = part.booleans("deadline_hard")?;
        for r in 0..part.batch.num_rows() {
            if hard.is_null(r) || latency.is_null(r) {
                continue;
            }
            let k = if hard.value(r) { 0 } else { 1 };
            latencies[k].push(latency.value(r) as f64 / 1e6);
        }
        Ok(())
    })?;
    if latencies.iter().all(|l| l.is_empty()) {
        return Ok(None);
    }
    let by_type = latencies.map(|mut l| {
        l.sort_by(f64::total_cmp);
        Met {
            jobs: l.len(),
            met: l.iter().filter(|&&v| v <= 0.0).count(),
            latency_s: [0.5, 0.9, 0.99].map(|q| crate::percentile::of_sorted(&l, q)),
        }
    });
    Ok(Some(Deadlines { by_type }))
}

/// The run's solver wall time per solve, ms (`None` without solves).
pub fn solver_ms_per_solve(run: &Path, solves: f64) -> Result<Option<f64>> {
    if solves <= 0.0 || !run.join("timing").is_dir() {
        return Ok(None);
    }
    let mut total = 0.0;
    for_each_batch(run, "timing", |part| {
        if let Some(ms) = part.optional_column::<Float64Type>("solver_ms")? {
            total += ms.values().iter().sum::<f64>();
        }
        Ok(())
    })?;
    Ok(Some(total / solves))
}

/// The report's rows: per type, jobs, met and latency percentiles; then solver ms per solve.
/// Empty when no run has deadlines or solves.
pub fn render(names: &[String], runs: &[Option<Deadlines>], solver_ms: &[Option<f64>]) -> String {
    if runs.iter().all(Option::is_none) && solver_ms.iter().all(Option::is_none) {
        return String::new();
    }
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(18);
    let mut o = String::new();
    let mut row = |label: &str, cells: Vec<String>| {
        let _ = write!(o, "{label:<32}");
        for c in cells {
            let _ = write!(o, " {c:>width$}");
        }
        o.push('\n');
    };
    row("deadlines (seed 004)", names.to_vec());
    for (k, kind) in ["hard", "soft"].iter().enumerate() {
        let cells = |f: &dyn Fn(&Met) -> String| -> Vec<String> {
            runs.iter()
                .map(|r| r.as_ref().map_or("-".into(), |d| f(&d.by_type[k])))
                .collect()
        };
        row(
            &format!("{kind} jobs / met %"),
            cells(&|m| match m.jobs {
                0 => "0".into(),
                n => format!("{n} / {:.1}", 100.0 * m.met as f64 / n as f64),
            }),
        );
        row(
            &format!("{kind} latency p50/p90/p99 s"),
            cells(&|m| match m.jobs {
                0 => "-".into(),
                _ => format!(
                    "{:.0}/{:.0}/{:.0}",
                    m.latency_s[0], m.latency_s[1], m.latency_s[2]
                ),
            }),
        );
    }
    row(
        "solver ms per solve",
        solver_ms
            .iter()
            .map(|s| s.map_or("-".into(), |ms| format!("{ms:.1}")))
            .collect(),
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_per_type_and_solver() {
        let runs = vec![
            Some(Deadlines {
                by_type: [
                    Met {
                        jobs: 4,
                        met: 3,
                        latency_s: [-10.0, 2.0, 5.0],
                    },
                    Met::default(),
                ],
            }),
            None,
        ];
        let text = render(&["a".into(), "b".into()], &runs, &[Some(12.5), None]);
        assert!(text.contains("4 / 75.0"), "{text}");
        assert!(text.contains("-10/2/5"), "{text}");
        assert!(text.contains("12.5"), "{text}");
        assert_eq!(render(&["a".into()], &[None], &[None]), "");
    }
}
