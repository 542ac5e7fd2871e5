//! `cellsim stats GENERATED --against REAL`: a generated trace's workload beside a real one's
//! over the same span, figure by figure, each with the tolerance it must meet (issue 57 item 4:
//! the generator describes the real trace). Counts are per 12,583 machines (the machines online,
//! averaged over the hourly samples) and rates per hour of the span, so cells of other sizes and
//! slightly different spans compare.

use std::fmt::Write;

use serde::Serialize;

use super::{Capacity, DURATION_BUCKETS, TaskSample, TraceStats};

/// How far a generated figure may be from the real one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Tolerance {
    /// |generated / real - 1| at most this.
    Relative(f64),
    /// |generated - real| at most this (for shares, in share units: 0.05 = 5 points).
    Absolute(f64),
}

/// One figure of the real and the generated trace.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Short name, e.g. `running_t0_gratis`.
    pub name: String,
    /// What it measures.
    pub what: &'static str,
    /// The real trace's value (`None` when it lacks what the figure needs).
    pub real: Option<f64>,
    /// The generated trace's value.
    pub generated: Option<f64>,
    /// How close they must be.
    pub tolerance: Tolerance,
}

impl Comparison {
    /// Both measured and within the tolerance.
    pub fn within(&self) -> bool {
        let (Some(real), Some(generated)) = (self.real, self.generated) else {
            return false;
        };
        match self.tolerance {
            Tolerance::Relative(r) => real > 0.0 && (generated / real - 1.0).abs() <= r,
            Tolerance::Absolute(a) => (generated - real).abs() <= a,
        }
    }
}

const BANDS: [&str; 3] = ["gratis", "middle", "production"];
const ENDS: [&str; 4] = ["EVICT", "FAIL", "FINISH", "KILL"];

/// A trace's figures, read per 12,583 machines and per hour of its span.
struct Reading<'a> {
    s: &'a TraceStats,
    /// Machines online, averaged over the hourly samples.
    machines: f64,
}

impl<'a> Reading<'a> {
    fn of(s: &'a TraceStats) -> Self {
        let n = s.capacity.len().max(1) as f64;
        let machines = s.capacity.iter().map(|c| c.machines as f64).sum::<f64>() / n;
        Reading { s, machines }
    }

    fn per_cell(&self, count: f64) -> Option<f64> {
        (self.machines > 0.0).then(|| count * 12_583.0 / self.machines)
    }

    fn per_hour(&self, count: f64) -> Option<f64> {
        let span_h = self.s.span_h;
        self.per_cell(count)
            .filter(|_| span_h > 0.0)
            .map(|c| c / span_h)
    }

    fn share(part: u64, whole: u64) -> Option<f64> {
        (whole > 0).then(|| part as f64 / whole as f64)
    }

    /// `f` of the state at t = 0 (the first sample) and the capacity then.
    fn at_start(&self, f: impl Fn(&TaskSample, &Capacity) -> f64) -> Option<f64> {
        let (t, c) = self.s.task_samples.first().zip(self.s.capacity.first())?;
        (c.cpu > 0.0 && c.mem > 0.0).then(|| f(t, c))
    }

    /// The mean of `f` over the hourly samples.
    fn over_time(&self, f: impl Fn(&TaskSample, &Capacity) -> f64) -> Option<f64> {
        let values: Vec<f64> = (self.s.task_samples.iter())
            .zip(&self.s.capacity)
            .filter(|(_, c)| c.cpu > 0.0 && c.mem > 0.0)
            .map(|(t, c)| f(t, c))
            .collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    }

    fn new_tasks(&self) -> u64 {
        self.s.new_tasks_by_band.iter().sum()
    }
}

/// How one figure is read of a trace.
type Read = Box<dyn Fn(&Reading) -> Option<f64>>;

/// One figure: its name, what it measures, its tolerance, and how it is read.
struct Figure {
    name: String,
    what: &'static str,
    tolerance: Tolerance,
    read: Read,
}

/// Every figure [`compare`] shows, each defined once.
fn figures() -> Vec<Figure> {
    use Tolerance::*;
    let figure = |name: String, what, tolerance, read: Read| Figure {
        name,
        what,
        tolerance,
        read,
    };
    let mut out = Vec::new();
    for (b, band) in BANDS.iter().enumerate() {
        out.push(figure(
            format!("running_t0_{band}"),
            "tasks running at t = 0 per 12,583 machines",
            Relative(0.15),
            Box::new(move |r| {
                r.at_start(|t, _| t.band_running[b] as f64)
                    .and_then(|n| r.per_cell(n))
            }),
        ));
    }
    for (b, band) in BANDS.iter().enumerate() {
        out.push(figure(
            format!("cpu_requested_t0_{band}"),
            "CPU requested by the band's running tasks at t = 0 / capacity",
            Relative(0.15),
            Box::new(move |r| r.at_start(|t, c| t.band_cpu_requested[b] / c.cpu)),
        ));
    }
    for (b, band) in BANDS.iter().enumerate() {
        out.push(figure(
            format!("mem_requested_t0_{band}"),
            "memory requested by the band's running tasks at t = 0 / capacity",
            Relative(0.15),
            Box::new(move |r| r.at_start(|t, c| t.band_mem_requested[b] / c.mem)),
        ));
    }
    out.push(figure(
        "cpu_requested".into(),
        "CPU requested / capacity (hourly mean)",
        Relative(0.10),
        Box::new(|r| r.over_time(|t, c| t.cpu_requested / c.cpu)),
    ));
    out.push(figure(
        "mem_requested".into(),
        "memory requested / capacity (hourly mean)",
        Relative(0.10),
        Box::new(|r| r.over_time(|t, c| t.mem_requested / c.mem)),
    ));
    out.push(figure(
        "new_tasks_per_hour".into(),
        "tasks first seen after t = 0, an hour, per 12,583 machines",
        Relative(0.15),
        Box::new(|r| r.per_hour(r.new_tasks() as f64)),
    ));
    for (b, band) in BANDS.iter().enumerate() {
        out.push(figure(
            format!("new_task_share_{band}"),
            "the band's share of the new tasks",
            Absolute(0.05),
            Box::new(move |r| Reading::share(r.s.new_tasks_by_band[b], r.new_tasks())),
        ));
    }
    out.push(figure(
        "tasks_per_new_job".into(),
        "new tasks per job first seen after t = 0 (mean)",
        Relative(0.30),
        Box::new(|r| Reading::share(r.s.new_jobs_tasks, r.s.new_jobs)),
    ));
    out.push(figure(
        "single_task_job_share".into(),
        "new jobs of one task",
        Absolute(0.05),
        Box::new(|r| Reading::share(r.s.new_single_task_jobs, r.s.new_jobs)),
    ));
    out.push(figure(
        "runs_started_per_hour".into(),
        "runs started after t = 0, an hour, per 12,583 machines",
        Relative(0.20),
        Box::new(|r| r.per_hour(r.s.runs_started as f64)),
    ));
    for (k, (_, label)) in DURATION_BUCKETS.iter().enumerate() {
        out.push(figure(
            format!("run_time_share {label}"),
            "share of the runs started and ended in the window",
            Absolute(0.04),
            Box::new(move |r| {
                let completed = r.s.duration_histogram.iter().sum();
                Reading::share(r.s.duration_histogram[k], completed)
            }),
        ));
    }
    for (k, end) in ENDS.iter().enumerate() {
        out.push(figure(
            format!("run_end_share {end}"),
            "share of the runs ended after t = 0",
            Absolute(0.03),
            Box::new(move |r| Reading::share(r.s.run_ends[k], r.s.run_ends.iter().sum())),
        ));
    }
    // The generator's held jobs (`ingest::synth::model::HELD_JOBS`) are set on the real cell's
    // waiting tasks at t = 0; this is their mean over the hours, compared.
    out.push(figure(
        "pending".into(),
        "tasks waiting per 12,583 machines (hourly mean)",
        Relative(0.15),
        Box::new(|r| {
            r.over_time(|t, _| t.pending as f64)
                .and_then(|n| r.per_cell(n))
        }),
    ));
    out
}

/// Every figure of `generated` beside `real`'s.
pub fn compare(generated: &TraceStats, real: &TraceStats) -> Vec<Comparison> {
    let (real, generated) = (Reading::of(real), Reading::of(generated));
    figures()
        .into_iter()
        .map(|f| Comparison {
            real: (f.read)(&real),
            generated: (f.read)(&generated),
            name: f.name,
            what: f.what,
            tolerance: f.tolerance,
        })
        .collect()
}

/// The comparison as `cellsim stats --against` prints it.
pub fn render_comparison(rows: &[Comparison], real_span_h: f64, generated_span_h: f64) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "== generated ({generated_span_h:.1} h) against real ({real_span_h:.1} h) =="
    );
    let _ = writeln!(
        o,
        "{:<28} {:>11} {:>11} {:>10}  verdict",
        "figure", "real", "generated", "tolerance"
    );
    let value = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.4}"));
    for r in rows {
        let tolerance = match r.tolerance {
            Tolerance::Relative(x) => format!("±{:.0} %", x * 100.0),
            Tolerance::Absolute(x) => format!("±{x}"),
        };
        let verdict = if r.within() { "ok" } else { "OUTSIDE" };
        let _ = writeln!(
            o,
            "{:<28} {:>11} {:>11} {:>10}  {}",
            r.name,
            value(r.real),
            value(r.generated),
            tolerance,
            verdict
        );
    }
    let within = rows.iter().filter(|r| r.within()).count();
    let _ = writeln!(o, "{within} of {} figures within tolerance", rows.len());
    o
}
