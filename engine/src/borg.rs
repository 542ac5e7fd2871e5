//! Policy `borg-replay`: tasks go where the trace's SCHEDULE events put them, the benchmark the
//! MASB paper compares against (seed 000 section 7.7, Table 4 Borg column). It has no agents and
//! sends no messages. A recorded placement on a machine the trace never adds, or on a machine that
//! is offline, is skipped and counted (its one counter, `placements_skipped`), not fatal.

use crate::cell::Cell;
use crate::ids::Tick;
use crate::policy::{CounterKind, Envelope, Policy, PolicyCounters};
use crate::replay::TickEvents;

/// The counter of recorded placements that could not be followed.
pub const PLACEMENTS_SKIPPED: usize = 0;

/// The policy's counters, by index.
const COUNTERS: [CounterKind; 1] = [CounterKind::count("placements_skipped")];

/// The Borg replay policy.
#[derive(Debug, Default, Clone, Copy)]
pub struct BorgReplay;

/// `borg-replay` has no settings of its own.
#[derive(Debug, Default, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BorgReplayConfig {}

impl crate::policy::PolicySpec for BorgReplayConfig {
    type Policy = BorgReplay;

    const ABOUT: &'static str =
        "follow the trace's recorded placements (Google's Borg; seed 000's baseline)";

    fn build(
        &self,
        _: &crate::policy::RunSettings,
        _: &std::path::Path,
    ) -> crate::Result<BorgReplay> {
        Ok(BorgReplay)
    }
}

impl Policy for BorgReplay {
    type Msg = ();
    type Agent = ();
    type Action = ();

    fn name(&self) -> &'static str {
        "borg-replay"
    }

    fn replays_placements(&self) -> bool {
        true
    }

    fn admits_by(&self, _: crate::fit_by::FitBy) -> String {
        "the trace's placements".into()
    }

    fn counter_kinds(&self) -> &'static [CounterKind] {
        &COUNTERS
    }

    fn begin_tick(
        &mut self,
        cell: &mut Cell,
        (_, now_us): (Tick, i64),
        events: &TickEvents,
        _agents: &mut Vec<()>,
        _inject: &mut Vec<Envelope<()>>,
        counters: &mut PolicyCounters,
    ) {
        let skipped = events.follow_placements(cell, now_us);
        if skipped > 0 {
            counters.add(PLACEMENTS_SKIPPED, skipped as f64);
        }
    }
}
