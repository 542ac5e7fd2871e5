//! Liveness: a run notices when its policy has stopped scheduling work it could schedule, and
//! says how much work a run left undone when it ends.
//!
//! A **stall** is a span of at least [`WatchdogConfig::span_ticks`] ticks (10 simulated
//! minutes or 100 ticks, whichever is longer, by default) in which no task was placed while a
//! waiting task fitted some online node by the fit rule the policy places by (`greedy/fit.rs`,
//! the cell's rule, set from [`crate::policy::Policy::fit_rule`]: requests or
//! usage by the run's `fit`, usage for MASB's node agents) and the policy may start it now
//! ([`crate::policy::Policy::startable`]: a reduce task waiting for its
//! job's maps may not). Waiting tasks that fit no node are not a stall: the cell is full.
//!
//! The watchdog is told after every tick whether a task was placed ([`crate::cell::Cell::take_placements`])
//! and how many are waiting. When the span passes with none placed and some waiting, it counts
//! the waiting tasks that fit (once per span, so a full cell costs one search every span, not
//! every tick) and, if any do, opens a stall from the first tick without a placement; the next
//! placement closes it. Its state is saved in snapshots, so a resumed run reports the same
//! stalls as one that ran through.
//!
//! Invariants: stalls are ordered by their first tick and do not overlap; at most the last one
//! is open (`until_tick` none).

use serde::{Deserialize, Serialize};

/// Exit code of `cellsim run`/`resume` under `--strict` when the run stalled or ended with work
/// undone.
pub const EXIT_UNFINISHED: i32 = 3;

/// The watchdog's settings (`[watchdog]` in a run's config).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WatchdogConfig {
    /// A stall lasts at least this many simulated minutes ...
    pub stall_minutes: f64,
    /// ... and at least this many ticks.
    pub stall_ticks: u32,
    /// Exit non-zero (3) when the run stalled or a scenario's run ended with work undone
    /// (`--strict`, or `[run] strict`). Changes no output.
    pub strict: bool,
}

impl Default for WatchdogConfig {
    fn default() -> Self {
        WatchdogConfig {
            stall_minutes: 10.0,
            stall_ticks: 100,
            strict: false,
        }
    }
}

impl WatchdogConfig {
    /// True for the defaults (left out of a written config, so older configs hash the same).
    pub fn is_default(&self) -> bool {
        *self == WatchdogConfig::default()
    }

    /// Ticks of `tick_us` a stall spans at least (at least 1).
    pub fn span_ticks(&self, tick_us: i64) -> u32 {
        let minutes = (self.stall_minutes * 60e6 / tick_us.max(1) as f64).ceil();
        (minutes.min(u32::MAX as f64) as u32)
            .max(self.stall_ticks)
            .max(1)
    }

    /// What is wrong with the settings.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.stall_minutes.is_finite() && self.stall_minutes >= 0.0) {
            return Err(format!(
                "watchdog.stall_minutes must be finite and >= 0, got {}",
                self.stall_minutes
            ));
        }
        Ok(())
    }
}

/// A span in which the policy placed nothing while waiting tasks fitted (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stall {
    /// The first tick in which nothing was placed.
    pub from_tick: u32,
    /// The tick whose placement ended it; none while it lasts (to the run's end).
    pub until_tick: Option<u32>,
    /// Tasks waiting when it was noticed ...
    pub tasks_waiting: u64,
    /// ... of which fitted an online node.
    pub tasks_fitting: u64,
}

impl Stall {
    /// Ticks it lasted, in a run of `run_ticks` ticks (to the run's end while it lasts).
    pub fn ticks(&self, run_ticks: u64) -> u64 {
        let until = self.until_tick.map_or(run_ticks, u64::from);
        until.saturating_sub(u64::from(self.from_tick))
    }

    /// The stall in a sentence, `run_ticks` ticks of `tick_s` seconds into the run: "stall: the
    /// policy placed nothing from tick F until tick U (M simulated minutes) while X of the Y
    /// waiting tasks fitted an online node"; while it lasts, to the run's end when the run has
    /// `ended`, until now otherwise (a warning made as the run goes on).
    pub fn describe(&self, run_ticks: u64, tick_s: f64, ended: bool) -> String {
        let until = match (self.until_tick, ended) {
            (Some(t), _) => format!("until tick {t}"),
            (None, true) => "to the run's end".into(),
            (None, false) => "until now".into(),
        };
        format!(
            "stall: the policy placed nothing from tick {} {until} ({:.1} simulated minutes) while {} of the {} waiting tasks fitted an online node",
            self.from_tick,
            self.ticks(run_ticks) as f64 * tick_s / 60.0,
            self.tasks_fitting,
            self.tasks_waiting
        )
    }
}

/// What the watchdog keeps between ticks (saved in snapshots).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Watchdog {
    /// The last tick in which a task was placed or none waited (the span counts from after it).
    last_progress_tick: Option<u32>,
    /// The last tick at which the waiting tasks were searched for a fit.
    last_search_tick: Option<u32>,
    /// The stalls so far.
    stalls: Vec<Stall>,
}

impl Watchdog {
    /// Notes tick `tick`'s end: `placed` tasks were placed in it and `waiting` wait after it.
    /// Counts the waiting tasks that fit (`fitting`: the run passes
    /// `greedy::fitting_waiting_tasks`) when a span of `span` ticks passed with none placed.
    pub fn observe(
        &mut self,
        tick: u32,
        (placed, waiting): (u64, u64),
        span: u32,
        fitting: impl FnOnce() -> u64,
    ) {
        if placed > 0 || waiting == 0 {
            self.last_progress_tick = Some(tick);
            self.last_search_tick = None;
            if let Some(open) = self.stalls.last_mut().filter(|s| s.until_tick.is_none()) {
                open.until_tick = Some(tick);
            }
            return;
        }
        if self.stalled() {
            return;
        }
        let since = self.last_progress_tick.map_or(0, |t| t + 1);
        let quiet = tick + 1 - since;
        let searched = self.last_search_tick.map_or(since, |t| t + 1);
        if quiet < span || tick + 1 - searched < span {
            return;
        }
        self.last_search_tick = Some(tick);
        let fitting = fitting();
        if fitting > 0 {
            self.stalls.push(Stall {
                from_tick: since,
                until_tick: None,
                tasks_waiting: waiting,
                tasks_fitting: fitting,
            });
        }
    }

    /// True while a stall lasts.
    pub fn stalled(&self) -> bool {
        self.stalls.last().is_some_and(|s| s.until_tick.is_none())
    }

    /// Ticks since the last placement (or since no task waited), as of tick `tick`'s end.
    pub fn quiet_ticks(&self, tick: u32) -> u32 {
        tick + 1 - self.last_progress_tick.map_or(0, |t| t + 1)
    }

    /// The stalls so far.
    pub fn stalls(&self) -> &[Stall] {
        &self.stalls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Cell;
    use crate::greedy::{FirstFit, Greedy, fitting_waiting_tasks};
    use crate::queue_outputs::QueueOutputs;
    use crate::units::to_units;

    /// A stall from tick 10 of one-minute ticks, 7 of 9 waiting tasks fitting: ended at tick 40
    /// (30 minutes), lasting to the end of a 100-tick run (90), and 25 ticks in (15, a warning).
    #[test]
    fn a_stall_says_where_it_is_in_the_run() {
        let stall = |until_tick| Stall {
            from_tick: 10,
            until_tick,
            tasks_waiting: 9,
            tasks_fitting: 7,
        };
        let tail = "while 7 of the 9 waiting tasks fitted an online node";
        let said = |s: Stall, ticks, ended| s.describe(ticks, 60.0, ended);
        assert_eq!(
            said(stall(Some(40)), 100, true),
            format!(
                "stall: the policy placed nothing from tick 10 until tick 40 (30.0 simulated minutes) {tail}"
            )
        );
        assert_eq!(
            said(stall(None), 100, true),
            format!(
                "stall: the policy placed nothing from tick 10 to the run's end (90.0 simulated minutes) {tail}"
            )
        );
        assert_eq!(
            said(stall(None), 25, false),
            format!(
                "stall: the policy placed nothing from tick 10 until now (15.0 simulated minutes) {tail}"
            )
        );
    }

    fn cell_with_waiting(cpu: f32) -> Cell {
        let mut cell = Cell::default();
        cell.add_machine(1, to_units(1.0), to_units(1.0));
        let t = cell.tasks.alloc(7, 0, 0, 0);
        cell.set_request(t, to_units(cpu), to_units(0.1));
        cell
    }

    /// By hand, span 3: ticks 0-1 place, 2-6 place nothing with a task that fits waiting: the
    /// stall is noticed at tick 4 (ticks 2, 3, 4 quiet) from tick 2, and tick 7's placement
    /// ends it. A task too large for every node is no stall; nor is an empty queue.
    #[test]
    fn a_stall_is_a_span_without_placements_while_a_task_fits() {
        let policy: Greedy<FirstFit> = Greedy::new(1, QueueOutputs::default());
        let cell = cell_with_waiting(0.5);
        let mut w = Watchdog::default();
        for tick in 0..2 {
            w.observe(tick, (1, 1), 3, || fitting_waiting_tasks(&cell, &policy));
        }
        for tick in 2..4 {
            w.observe(tick, (0, 1), 3, || fitting_waiting_tasks(&cell, &policy));
            assert!(!w.stalled(), "tick {tick}");
        }
        w.observe(4, (0, 1), 3, || fitting_waiting_tasks(&cell, &policy));
        assert!(w.stalled());
        assert_eq!(w.quiet_ticks(4), 3);
        for tick in 5..7 {
            w.observe(tick, (0, 1), 3, || fitting_waiting_tasks(&cell, &policy));
        }
        w.observe(7, (1, 1), 3, || fitting_waiting_tasks(&cell, &policy));
        let stall = Stall {
            from_tick: 2,
            until_tick: Some(7),
            tasks_waiting: 1,
            tasks_fitting: 1,
        };
        assert_eq!(w.stalls(), [stall]);

        let full = cell_with_waiting(2.0);
        let mut w = Watchdog::default();
        for tick in 0..20 {
            w.observe(tick, (0, 1), 3, || fitting_waiting_tasks(&full, &policy));
        }
        assert!(w.stalls().is_empty(), "nothing fits: the cell is full");
        for tick in 0..20 {
            w.observe(tick, (0, 0), 3, || fitting_waiting_tasks(&cell, &policy));
        }
        assert!(w.stalls().is_empty(), "nothing waits");
    }

    #[test]
    fn the_span_is_the_longer_of_minutes_and_ticks() {
        let c = WatchdogConfig::default();
        assert_eq!(c.span_ticks(60_000_000), 100, "60 s ticks: 100 ticks");
        assert_eq!(c.span_ticks(100_000), 6_000, "100 ms ticks: 10 minutes");
        assert!(
            WatchdogConfig {
                stall_minutes: -1.0,
                ..c
            }
            .validate()
            .is_err()
        );
    }
}
