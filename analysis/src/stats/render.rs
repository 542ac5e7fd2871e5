//! Plain-text rendering of [`TraceStats`] for the terminal.

use std::fmt::Write;

use ingest::codes::{COMPARISON, MACHINE_EVENT, TASK_EVENT};

use super::{DURATION_BUCKETS, TraceStats};

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The report `cellsim stats` prints.
pub fn render(s: &TraceStats) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "== machine mix at first ADD ({} machines; 2011 mix scaled to this size) ==",
        s.machines
    );
    let _ = writeln!(
        o,
        "{:>6} {:>6} {:>9} {:>7} {:>10}",
        "CPU", "memory", "machines", "share", "2011 mix"
    );
    for r in s
        .machine_mix
        .iter()
        .filter(|r| r.machines > 0 || r.reference > 0.0)
    {
        let _ = writeln!(
            o,
            "{:>6.2} {:>6.2} {:>9} {:>6.2}% {:>10.1}",
            r.cpu,
            r.mem,
            r.machines,
            pct(r.machines, s.machines),
            r.reference
        );
    }
    if s.machines_unknown_shape > 0 {
        let _ = writeln!(
            o,
            "{} machines have no capacities at their first ADD",
            s.machines_unknown_shape
        );
    }

    let _ = writeln!(
        o,
        "\n== cell over time (hourly samples from the window start) =="
    );
    let _ = writeln!(
        o,
        "{:>6} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "hour",
        "machines",
        "running",
        "pending",
        "CPU req",
        "mem req",
        "prod CPU",
        "CPU used",
        "mem used"
    );
    for (k, ((c, t), _)) in s
        .capacity
        .iter()
        .zip(&s.task_samples)
        .zip(&s.sample_times_us)
        .enumerate()
    {
        let used = s.used_share_per_hour.as_ref().and_then(|u| u.get(k));
        let share = |v: f64, cap: f64| {
            if cap > 0.0 {
                format!("{:.1}%", 100.0 * v / cap)
            } else {
                "-".into()
            }
        };
        let used_text = |f: fn(&(f64, f64)) -> f64| {
            used.map_or("-".to_string(), |u| format!("{:.1}%", 100.0 * f(u)))
        };
        let _ = writeln!(
            o,
            "{:>6} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            k,
            c.machines,
            t.running,
            t.pending,
            share(t.cpu_requested, c.cpu),
            share(t.mem_requested, c.mem),
            share(t.prod_cpu_requested, c.cpu),
            used_text(|u| u.0),
            used_text(|u| u.1),
        );
    }
    let _ = writeln!(o, "running after the t = 0 rows: {}", s.running_at_start);

    let _ = writeln!(
        o,
        "\n== run durations (runs started in the window: {} measured) ==",
        s.runs_measured
    );
    let completed: u64 = s.duration_histogram.iter().sum();
    for ((_, label), n) in DURATION_BUCKETS.iter().zip(s.duration_histogram) {
        let _ = writeln!(o, "{label:>10} {n:>10} {:>6.1}%", pct(n, completed));
    }

    let _ = writeln!(o, "\n== priorities ({} tasks, {} jobs) ==", s.tasks, s.jobs);
    let mean_cpu: Vec<f64> = (0..12)
        .map(|p| {
            let n = s.task_samples.len().max(1) as f64;
            s.task_samples
                .iter()
                .zip(&s.capacity)
                .map(|(t, c)| {
                    if c.cpu > 0.0 {
                        t.cpu_by_priority[p] / c.cpu
                    } else {
                        0.0
                    }
                })
                .sum::<f64>()
                / n
        })
        .collect();
    let _ = writeln!(
        o,
        "{:>8} {:>10} {:>7} {:>14}",
        "priority", "tasks", "share", "CPU req / cap"
    );
    for (p, (tasks, cpu)) in s.tasks_by_priority.iter().zip(&mean_cpu).enumerate() {
        if *tasks > 0 {
            let _ = writeln!(
                o,
                "{:>8} {:>10} {:>6.2}% {:>13.1}%",
                p,
                tasks,
                pct(*tasks, s.tasks),
                100.0 * cpu
            );
        }
    }

    let c = &s.constraints;
    let _ = writeln!(o, "\n== constraints ==");
    let missing = |table: &str| s.tables_missing.iter().any(|t| t == table);
    if missing("task_constraints") {
        let _ = writeln!(o, "task_constraints was not ingested: no figures");
    } else {
        let _ = writeln!(
            o,
            "{} rows, {} constrained tasks ({:.2}%), {} distinct sets, {} tasks only <= 5 machines satisfy ({:.3}%)",
            c.rows,
            c.constrained_tasks,
            pct(c.constrained_tasks, s.tasks),
            c.distinct_sets,
            c.restrictive_tasks,
            pct(c.restrictive_tasks, s.tasks)
        );
        for (op, n) in c.per_operator.iter().enumerate() {
            let _ = writeln!(o, "{:>14} {n:>10}", COMPARISON.label(op as u8));
        }
    }

    let _ = writeln!(o, "\n== events per type ==");
    for (table, events, labels) in [
        ("machine_events", &s.machine_events[..], &MACHINE_EVENT),
        ("task_events", &s.task_events[..], &TASK_EVENT),
    ] {
        let kind = &table[..table.find('_').unwrap_or(0)];
        if missing(table) {
            let _ = writeln!(o, "{table} was not ingested: no figures");
            continue;
        }
        for (code, n) in events.iter().enumerate() {
            let _ = writeln!(o, "{kind:<7} {:>14} {n:>12}", labels.label(code as u8));
        }
    }

    let _ = writeln!(o, "\n== SPEC 3.1 targets ==");
    let short = s.span_h < super::SHORT_SPAN_H;
    if short {
        let _ = writeln!(
            o,
            "(the trace spans {:.1} h; the targets are the month's: a window under {} h can fall outside them without being wrong, marked *)",
            s.span_h,
            super::SHORT_SPAN_H
        );
    }
    for k in &s.checks {
        // Counts as whole numbers, shares and ratios to four decimals.
        let value = k
            .value
            .map_or("n/a".to_string(), |v| match v.abs() >= 100.0 {
                true => format!("{v:.0}"),
                false => format!("{v:.4}"),
            });
        let verdict = match (k.value, k.ok()) {
            (None, _) => "n/a",
            (_, true) => "ok",
            (_, false) if short => "OUTSIDE*",
            (_, false) => "OUTSIDE",
        };
        let _ = writeln!(
            o,
            "{:<24} {:>12}  [{} .. {}]  {:<8} {}",
            k.name, value, k.min, k.max, verdict, k.what
        );
    }
    o
}
