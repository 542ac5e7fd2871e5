//! MASB's parameters: [`MasbConfig`], every constant of seed 000 sections 4-7, SPEC 6 and
//! `MIGRATION-COST.md` with the paper's value as its default, and the choices between readings
//! of the paper. A config file may set any subset, a score shape's table too (`[policy.sias]`
//! with only `steep` keeps that score's own bias and floor). [`MasbConfig::validate`] names
//! the first parameter out of its range.

use serde::{Deserialize, Serialize};

/// How the score functions read a resource (SPEC 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ScoreReading {
    /// r = the resource left free after the placement (default: peaks where the paper's figures
    /// put them).
    #[default]
    Free,
    /// r = the resource used after the placement (the paper's literal wording).
    Used,
}

/// How a GAIN variant (Table 7) measures a candidate's gain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GainReading {
    /// X(T') - X(T): section 7.9's formula (default).
    #[default]
    Difference,
    /// (X(T') - X(T)) / X(T): section 7.9's worked example ("a 300% gain" from 0.1 to 0.4
    /// beats "a 50% gain" from 0.4 to 0.6: "the relative AS gains are prioritised"), X(T)
    /// floored at `MasbConfig::gain_base_floor` so a node scoring 0 before has a finite gain.
    Relative,
}

/// What SIAS reads as a node's load before the new task's request is added (SPEC 6: "SIAS uses
/// *requested* resources"; seed 000 section 6.2: "calculated exclusively from user-defined
/// resource requirements since the actually-used resource requirements are unknown before the
/// task execution actually starts").
///
/// Default `used`: the reason the paper gives concerns the new task only, its SAS input is "the
/// total node resources, the currently available node resources and the currently required
/// resources for a given task" (section 6), requests are reserved only for production tasks
/// (the RUS rule, 6.4: non-production VMs can be suspended), and its MASB fits the whole GCD
/// workload (7.8) although production requests alone hold ~85 % of the cell's CPU, which a 90 %
/// cap on the node's requested totals would not allow. `requested` keeps the literal reading: on
/// the synthetic 12.5k cell it leaves ~320k tasks waiting after a day
/// (`bench-results/masb-vs-borg-2026-11-21.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SiasNodeLoad {
    /// The requests of the tasks already on the node (every term user-defined).
    Requested,
    /// The node's actual usage (known for running tasks; only the new task is unknown).
    #[default]
    Used,
}

/// The order a broker asks a new task's best nodes in (its `initial_asks` = 10 best SIAS scores
/// of at most `initial_candidates`; on a refusal it asks the next). Seed 000 leaves it open: for
/// a migration its broker "does not directly select only top candidate nodes, but instead
/// selects them randomly ... where candidate node score is a weight" (section 5.2), and 6.1
/// calls the re-allocation's candidates "similar to ... new tasks"; but for a new task 6.1
/// says only that the broker calculates 200 recommendations "before selecting the top
/// recommendations", and names a different guard against batches of identical tasks landing
/// on the same nodes: "the pool of candidate nodes is randomly shuffled each time BA receives a
/// request" (here: the scan starts at a random place of the cache). Measured on the real
/// trace's 8 h (MASB held, windows, booked; `bench-results/masb-da-2026-12-01.md`),
/// asking in score order lowers DA by about a point (seeds 1-3: 28.89, 28.41, 29.04 -> 27.85,
/// 27.35, 28.17 %).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum InitialOrder {
    /// A score-weighted random order, as the migration's draws (SPEC 6; default).
    #[default]
    Weighted,
    /// Best first (ties by a salted draw, as the ranking's): section 6.1's words alone.
    Score,
}

/// What a stable DA node's offload must leave behind (`MasbConfig::offload_goal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum OffloadGoal {
    /// A node that is no longer DA (default): the trigger's own class, which seed 000 section
    /// 6 says "should be avoided".
    #[default]
    NotDa,
    /// A node scoring more under SRAS than now: seed 001's words ("to improve its AS") read as
    /// the score. SRAS peaks at a full node and at an empty one, so a large machine's best
    /// remainder is often empty: measured, it empties machines of 1.0 / 1.0 and raises DA
    /// (`bench-results/masb-da-2026-12-01.md`).
    BetterScore,
}

/// How a migration's targets are weighted when drawn (the broker's candidates and the source's
/// order of trying acceptors). Not in the paper, which weights by SRAS: an ablation, to measure
/// how much the re-allocation score decides (`bench-results/fidelity-2026-11-26.md` section 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TargetWeighting {
    /// By the re-allocation score, SRAS or SRAS_GAIN (default, the paper's).
    #[default]
    Score,
    /// Every scoring candidate alike: a uniformly random target among them.
    Uniform,
    /// By the score's reciprocal: the lowest-scoring candidates first, SRAS turned around.
    Inverse,
}

/// The units the score functions work in (SPEC 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ScoreUnits {
    /// r as a fraction of the node's capacity, r_max = 1 (machines compete on shape).
    Fraction,
    /// r in the trace's normalised amounts, r_max = the node's capacity.
    Absolute,
    /// r in the trace's normalised amounts, r_max = 1 (the largest machine's capacity): with
    /// the free reading, the one that reproduces seed 000's logged fitness values (sections 5.2
    /// and 5.4, `score.rs` tests), within 7 % and, for 5.4, in order; so the default.
    #[default]
    Trace,
}

/// One score function's constants: SCORE = F_STEEP^((r_cpu - F_BIAS r_cpu_max)(r_mem - F_BIAS
/// r_mem_max)) - F_FLOOR.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreShape {
    /// F_STEEP.
    pub steep: f64,
    /// F_BIAS.
    pub bias: f64,
    /// F_FLOOR.
    pub floor: f64,
    /// The units this score reads r in, when not `score_units` (SIAS: `fraction`; see
    /// [`MasbConfig::sias`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<ScoreUnits>,
}

/// Every MASB constant (seed 000 sections 4-7, SPEC 6, MIGRATION-COST.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MasbConfig {
    /// Initial allocation score (SIAS): F_STEEP 350, F_BIAS 0.3, F_FLOOR 0.8, r as a fraction of
    /// capacity (`units = "fraction"`). Seed 000's logs print no SIAS value (5.2 and 5.4 score
    /// migrations, with SRAS), so its units are not pinned by them; under the trace units of
    /// SRAS, SIAS packs 0.5/0.5 machines (both free amounts below F_BIAS 0.3: fuller scores
    /// higher), which on the 12.5k cell gave 38 % PA against Table 4's 68 %, the fraction 63 %
    /// (`bench-results/fidelity-2026-11-25.md`).
    #[serde(deserialize_with = "sias_over_default")]
    pub sias: ScoreShape,
    /// Re-allocation score (SRAS): F_STEEP 500, F_BIAS 0.6, F_FLOOR 0.8.
    #[serde(deserialize_with = "sras_over_default")]
    pub sras: ScoreShape,
    /// Any placement leaving a resource used above this fraction scores 0 (0.9).
    pub max_use: f64,
    /// Not in the paper (false): a node agent also refuses a new task that would leave a
    /// resource used above `max_use`, as SIAS scores such a placement 0. The brokers score from
    /// reports a tick old, so in a burst (a trace's t = 0 state placed on an empty cell) they
    /// send many tasks to the same well-scored nodes, which accept up to their full capacity:
    /// on the real trace's 8 h MASB ends its first five minutes with 46 % of the nodes STA, and
    /// with usage modelled as constant nothing moves them
    /// (`bench-results/real-trace-2026-11-27.md`).
    pub accept_max_use: bool,
    /// Not in the paper (false): a broker places its new tasks one after another, each scored
    /// on its cache with the first asks of the tasks before it booked there (the node reads as
    /// holding the task's request, what SIAS adds for a new task) until a report of the node
    /// made after the booking arrives. Without it every task a broker places in a tick is
    /// scored on the same reports, made before the previous tick's placements: in a burst (the
    /// trace's t = 0 state placed on an empty cell, ~144k tasks on the real trace's first
    /// tick) SIAS sees every node empty for two ticks and the tasks land as if at random, which
    /// long-running tasks keep for hours. The seed's brokers answer requests one by one
    /// (section 6.1) but do not say what they remember of those answered before
    /// (`bench-results/masb-booking-2026-11-30.md`).
    pub book_asks: bool,
    /// Not in the paper (false): MASB takes over the trace's initial state. The tasks the
    /// trace shows running when it begins (its SCHEDULE events at time 0, ~133k on the real
    /// trace) start on the machines it recorded, and MASB places only what comes after (and any
    /// initial task whose recorded machine is offline). Without it MASB places the whole initial
    /// state itself in its first ticks, a burst its long-running tasks keep for hours; seed
    /// 000's month-long runs dilute that burst, an 8-hour run does not
    /// (`bench-results/masb-da-2026-12-01.md`).
    pub warm_start: bool,
    /// Not in seed 000 (0: off): every this many seconds a node agent whose node is DA (its
    /// class at the last tick's end) and stable runs SCS to move tasks out, "even if the node
    /// is stable", until what stays meets `offload_goal`. Seed 000 triggers SCS "only when the
    /// NA detects that its node is overloaded"; its thesis (seed 001, 9.2) names this proactive
    /// offload as a future direction ("periodically try to offload its tasks in order to
    /// improve its AS"), warning of "additional pressure on BAs". An option to measure what a
    /// continually migrating MASB does to the shares (seed 000's MASB migrates ~4,400 times a
    /// minute, ours ~10): `bench-results/masb-da-2026-12-01.md` (a5). Each node takes its turn
    /// at its own tick of the period (drawn from the seed and its machine ID,
    /// `masb::agents::offload_phase`), in a tick's first round. Such a process asks only the
    /// targets that have room (its broker sends no forced candidates: moving a task off a
    /// stable node must not overload another). 300 s is the period the bench runs, chosen
    /// before any run as the trace's usage window. Measured on the real 8 h (MASB held, booked,
    /// windows, the memory split before 2026-12-03; seeds 1-3): DA 28.78 % -> 9.91 %
    /// (`not-da`) or 36.36 % (`better-score`), 9.4 -> 493 or 42 migrations a minute.
    /// **Calibrated** on one figure, seed 000's cost per task migration (Table 7, SIAS / SRAS,
    /// 338.09 MB; longer periods move dearer tasks), the period is 3360 s under the
    /// configuration of record (`slurm/masb-real-trace.toml`; `not-da`; ibid. (a8): the line of
    /// MB per migration on the period over seeds 1-20 crosses 338.09 MB at 3368 s, standard
    /// error 35 s, in whole minutes 3360; with `accept_max_use` as well, (a7), 3540 s): there
    /// every Table 4 MASB share but PA is within 5 points in every one of seeds 1-20, PA too in
    /// 13 of them (PA 72.5-74.2 %, mean 73.15 against 68.28) at 89 migrations a minute. All of
    /// that under the usage model's memory split before 2026-12-03 (0.35 / 0.85,
    /// `UsageModel::overload_split`), under which MASB without offloads has DA 28.9 %. Under
    /// the default split since (0.4275 / 0.8025) MASB without offloads is within 5 points of
    /// every Table 4 MASB share (DA 26.4 %, masb-da (c)), and the offload is not needed for
    /// that: at 3360 s PA leaves the band (73.18 %, DA 18.77, 329 MB a migration; 300 s: PA
    /// 78.75, DA 10.44; seed 1, `bench-results/default-split-2026-12-03.md`). The period is
    /// not calibrated again: the option stays a measurement of seed 001's future direction.
    pub offload_every_s: u32,
    /// What an offload must leave behind ([`OffloadGoal`]): a node no longer DA (default) or
    /// one scoring more under SRAS.
    pub offload_goal: OffloadGoal,
    /// Free or used reading of r.
    pub score_reading: ScoreReading,
    /// Fraction, absolute (r_max = capacity) or trace units (r_max = 1, what seed 000's logged
    /// SRAS values show): the units of every score whose shape does not set its own (`units`
    /// in `[policy.sias]` / `[policy.sras]`; SIAS sets `fraction` by default).
    pub score_units: ScoreUnits,
    /// The node load SIAS adds the new task's request to: its usage (default) or its requested
    /// totals ([`SiasNodeLoad`]).
    pub sias_node_load: SiasNodeLoad,
    /// Use SIAS_GAIN instead of SIAS for initial allocation (Table 7): candidates are ranked by
    /// GAIN = SIAS(after) - SIAS(before), a loss scoring 0 (`score::ranking`).
    pub sias_gain: bool,
    /// Use SRAS_GAIN instead of SRAS for re-allocation (Table 7), as SIAS_GAIN.
    pub sras_gain: bool,
    /// The gain a GAIN variant ranks by: the difference (default) or the relative gain.
    pub gain_reading: GainReading,
    /// Under the relative reading, the smallest X(T) a gain is divided by (0.05; not in the
    /// paper, which only gives gains from non-zero scores).
    pub gain_base_floor: f64,
    /// Not in the paper: when no candidate gains under a GAIN variant, rank by the plain score
    /// instead of finding no candidate (false). Without it a GAIN variant places a task only on
    /// a node whose score rises, so under a reading where scores fall as nodes fill (the free
    /// fraction's SIAS) tasks wait.
    pub gain_fallback: bool,
    /// How migration targets are weighted: by the score (default), uniformly or inversely
    /// ([`TargetWeighting`]; not in the paper, an ablation).
    pub target_weighting: TargetWeighting,
    /// The order a new task's best nodes are asked in ([`InitialOrder`]; weighted by default).
    pub initial_order: InitialOrder,
    /// How many of a new task's best SIAS-scored nodes a broker asks, one after another until
    /// one accepts (10, at most [`super::protocol::MAX_INITIAL_ASKS`]); a task every asked node
    /// refuses waits for the next tick. Seed 000 leaves it open: its broker scores 200 nodes
    /// "before selecting the top recommendations" (section 6.1) and returns fifteen for a
    /// migration (5.2); SPEC 6 "picks among the top". Chosen, not calibrated: 10, the order of
    /// a migration's fifteen, few enough that a refused task is scored again on the next
    /// tick's reports rather than sent far down its ranking. Measured on the real trace's 8 h
    /// (MASB held, windows, booked, the memory split before 2026-12-03;
    /// `bench-results/masb-da-2026-12-01.md`, seeds 1-3): DA 28.78 % with 10, 28.07 with 3,
    /// 27.07 with 1, half of it from tasks that wait instead (memory used 61.53 -> 61.11 %).
    pub initial_asks: u32,
    /// The share of a node's capacity the production tasks' requests SCS leaves behind may
    /// reach (0.9). A node accepts production tasks up to its full capacity (the RUS rule of
    /// section 6.4: "full resource utilisation"), but the paper's SCS sample (5.1) moves a
    /// production task out of a node whose production CPU requests were at 96 % and calls the
    /// 88 % left "ca. 88 % utilisation", which only a limit below 96 % requires (`scs.rs` test
    /// `section_5_1_sample`). Applying 0.9 to acceptance too left 14,940 tasks waiting on the
    /// 12.5k cell after a day (2,151 without), against 7.8's "fits the whole workload".
    pub scs_rus_limit: f64,
    /// Broker agents per 12,500 nodes (at least one).
    pub brokers_per_12500_nodes: u32,
    /// Nodes a broker scores for an initial allocation (200).
    pub initial_candidates: u32,
    /// Nodes a broker scores for a migration (2,000).
    pub migration_scan: u32,
    /// Candidates returned for a migration (15).
    pub migration_candidates: u32,
    /// Seconds a node agent waits for migration answers (30).
    pub answer_wait_s: u32,
    /// Seconds before recommendations expire and SCS restarts (180).
    pub recommendation_ttl_s: u32,
    /// Seconds without a report before a broker drops a node from its cache (300; at least
    /// the tick, since a report is a tick old when a broker next uses it).
    pub cache_ttl_s: u32,
    /// Tabu Search restarts (25).
    pub tabu_restarts: u32,
    /// Tabu Search steps per restart (5).
    pub tabu_steps: u32,
    /// Stop after this many steps without improving the best selection (6).
    pub tabu_patience: u32,
    /// MB per normalised memory unit (the largest machine's memory), to turn a task's memory
    /// into its footprint (2,490: fitted to seed 000's logged costs, `cost.rs`; the real
    /// machines had more, but the paper's costs imply this scale).
    pub machine_memory_mb: f64,
    /// Page-dirtying rate in MB/s per normalised CPU in use (0: the logged costs do not grow
    /// with CPU).
    pub dirty_mb_per_cpu_s: f64,
    /// Page-dirtying rate as a share of the footprint per second (3.0, fitted with
    /// `machine_memory_mb`).
    pub dirty_share_per_s: f64,
    /// Migration bandwidth in MB/s (125 = 1 Gbit/s).
    pub bandwidth_mb_s: f64,
    /// Pre-copy stops when the dirty set can be sent within this downtime, seconds (0.3).
    pub max_downtime_s: f64,
    /// Pre-copy stops below this many MB left to copy (0.2).
    pub min_round_mb: f64,
    /// Pre-copy round limit (29, as Xen).
    pub max_rounds: u32,
    /// Pre-copy stops before the total exceeds this multiple of the memory footprint (3).
    pub max_total_factor: f64,
    /// Writable working set as a share of the memory footprint (0.9).
    pub writable_share: f64,
    /// The VM's own state sent with every migration, MB (100).
    pub base_overhead_mb: f64,
}

impl Default for MasbConfig {
    fn default() -> Self {
        MasbConfig {
            sias: ScoreShape {
                steep: 350.0,
                bias: 0.3,
                floor: 0.8,
                units: Some(ScoreUnits::Fraction),
            },
            sras: ScoreShape {
                steep: 500.0,
                bias: 0.6,
                floor: 0.8,
                units: None,
            },
            max_use: 0.9,
            accept_max_use: false,
            book_asks: false,
            warm_start: false,
            offload_every_s: 0,
            offload_goal: OffloadGoal::NotDa,
            score_reading: ScoreReading::Free,
            score_units: ScoreUnits::Trace,
            sias_node_load: SiasNodeLoad::Used,
            sias_gain: false,
            sras_gain: false,
            gain_reading: GainReading::Difference,
            gain_base_floor: 0.05,
            gain_fallback: false,
            target_weighting: TargetWeighting::Score,
            initial_order: InitialOrder::Weighted,
            initial_asks: 10,
            scs_rus_limit: 0.9,
            brokers_per_12500_nodes: 1,
            initial_candidates: 200,
            migration_scan: 2_000,
            migration_candidates: 15,
            answer_wait_s: 30,
            recommendation_ttl_s: 180,
            cache_ttl_s: 300,
            tabu_restarts: 25,
            tabu_steps: 5,
            tabu_patience: 6,
            machine_memory_mb: 2_490.0,
            dirty_mb_per_cpu_s: 0.0,
            dirty_share_per_s: 3.0,
            bandwidth_mb_s: 125.0,
            max_downtime_s: 0.3,
            min_round_mb: 0.2,
            max_rounds: 29,
            max_total_factor: 3.0,
            writable_share: 0.9,
            base_overhead_mb: 100.0,
        }
    }
}

/// A score shape's table as a config file gives it: any subset of the constants.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartialShape {
    steep: Option<f64>,
    bias: Option<f64>,
    floor: Option<f64>,
    units: Option<ScoreUnits>,
}

impl PartialShape {
    /// `default` with the constants this table sets.
    fn over(self, default: ScoreShape) -> ScoreShape {
        ScoreShape {
            steep: self.steep.unwrap_or(default.steep),
            bias: self.bias.unwrap_or(default.bias),
            floor: self.floor.unwrap_or(default.floor),
            units: self.units.or(default.units),
        }
    }
}

/// `[policy.sias]` over SIAS's defaults.
fn sias_over_default<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ScoreShape, D::Error> {
    Ok(PartialShape::deserialize(d)?.over(MasbConfig::default().sias))
}

/// `[policy.sras]` over SRAS's defaults.
fn sras_over_default<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ScoreShape, D::Error> {
    Ok(PartialShape::deserialize(d)?.over(MasbConfig::default().sras))
}

impl ScoreShape {
    /// Why this shape cannot score (`None`: it can): F_STEEP positive, every constant finite.
    fn problem(&self) -> Option<String> {
        let ScoreShape {
            steep, bias, floor, ..
        } = *self;
        if !(steep.is_finite() && steep > 0.0) {
            return Some(format!("steep must be positive, got {steep}"));
        }
        [("bias", bias), ("floor", floor)]
            .into_iter()
            .find(|(_, v)| !v.is_finite())
            .map(|(name, v)| format!("{name} must be finite, got {v}"))
    }
}

impl MasbConfig {
    /// The units `shape` (SIAS or SRAS) reads r in: its own, else `score_units`.
    pub fn units_of(&self, shape: &ScoreShape) -> ScoreUnits {
        shape.units.unwrap_or(self.score_units)
    }

    /// The additions seed 000 does not describe that this configuration turns on, as their
    /// config lines (empty for the paper's MASB; readings of what the paper leaves open are
    /// not additions): what `report --paper` names beside a comparison with its tables.
    pub fn additions(&self) -> Vec<String> {
        // A setting's value as its config file spells it (`"not-da"`, quoted).
        fn spelt(value: &impl Serialize) -> String {
            serde_json::to_string(value).expect("a unit variant encodes as a string")
        }
        let flag = |name: &str, set: bool| set.then(|| format!("{name} = true"));
        [
            flag("accept_max_use", self.accept_max_use),
            flag("book_asks", self.book_asks),
            flag("warm_start", self.warm_start),
            (self.offload_every_s > 0).then(|| {
                format!(
                    "offload_every_s = {} (offload_goal = {})",
                    self.offload_every_s,
                    spelt(&self.offload_goal)
                )
            }),
            flag("gain_fallback", self.gain_fallback),
            (self.target_weighting != TargetWeighting::Score)
                .then(|| format!("target_weighting = {}", spelt(&self.target_weighting))),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The first parameter out of its range, named as in the config file (`policy.` prefix left
    /// to the caller): counts a broker needs at least one of, fractions within 0..=1, the
    /// migration cost model's rates and sizes positive or non-negative as its formula needs
    /// (`MIGRATION-COST.md`), and every number finite.
    pub fn validate(&self) -> Result<(), String> {
        for (name, shape) in [("sias", &self.sias), ("sras", &self.sras)] {
            if let Some(problem) = shape.problem() {
                return Err(format!("{name}.{problem}"));
            }
        }
        let at_least_one = [
            ("brokers_per_12500_nodes", self.brokers_per_12500_nodes),
            ("initial_candidates", self.initial_candidates),
            ("initial_asks", self.initial_asks),
            ("migration_scan", self.migration_scan),
            ("migration_candidates", self.migration_candidates),
            ("max_rounds", self.max_rounds),
        ];
        if let Some((name, _)) = at_least_one.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{name} must be at least 1"));
        }
        let most = [
            (
                "migration_candidates",
                self.migration_candidates,
                super::protocol::MAX_CANDIDATES,
            ),
            (
                "initial_asks",
                self.initial_asks,
                super::protocol::MAX_INITIAL_ASKS,
            ),
        ];
        if let Some((name, got, most)) = most.iter().find(|(_, v, m)| *v as usize > *m) {
            return Err(format!("{name} is at most {most}, got {got}"));
        }
        let ranges = [
            ("max_use", self.max_use, Range::PositiveFraction),
            ("scs_rus_limit", self.scs_rus_limit, Range::PositiveFraction),
            ("gain_base_floor", self.gain_base_floor, Range::Positive),
            ("writable_share", self.writable_share, Range::Fraction),
            ("machine_memory_mb", self.machine_memory_mb, Range::Positive),
            ("bandwidth_mb_s", self.bandwidth_mb_s, Range::Positive),
            (
                "dirty_mb_per_cpu_s",
                self.dirty_mb_per_cpu_s,
                Range::NonNegative,
            ),
            (
                "dirty_share_per_s",
                self.dirty_share_per_s,
                Range::NonNegative,
            ),
            ("max_downtime_s", self.max_downtime_s, Range::NonNegative),
            ("min_round_mb", self.min_round_mb, Range::NonNegative),
            (
                "max_total_factor",
                self.max_total_factor,
                Range::NonNegative,
            ),
            (
                "base_overhead_mb",
                self.base_overhead_mb,
                Range::NonNegative,
            ),
        ];
        if let Some((name, v, range)) = ranges.into_iter().find(|(_, v, r)| !r.holds(*v)) {
            return Err(format!("{name} must satisfy {}, got {v}", range.text(name)));
        }
        Ok(())
    }
}

/// A real parameter's allowed values in [`MasbConfig::validate`] (finite, NaN never).
#[derive(Clone, Copy)]
enum Range {
    /// Above 0.
    Positive,
    /// 0 or more.
    NonNegative,
    /// Within 0..=1.
    Fraction,
    /// Above 0, at most 1.
    PositiveFraction,
}

impl Range {
    /// Whether `v` is allowed.
    fn holds(self, v: f64) -> bool {
        match self {
            Range::Positive => v > 0.0 && v.is_finite(),
            Range::NonNegative => v >= 0.0 && v.is_finite(),
            Range::Fraction => (0.0..=1.0).contains(&v),
            Range::PositiveFraction => v > 0.0 && v <= 1.0,
        }
    }

    /// The range as a condition on `name`.
    fn text(self, name: &str) -> String {
        match self {
            Range::Positive => format!("0 < {name}"),
            Range::NonNegative => format!("0 <= {name}"),
            Range::Fraction => format!("0 <= {name} <= 1"),
            Range::PositiveFraction => format!("0 < {name} <= 1"),
        }
    }
}

impl crate::policy::PolicySpec for MasbConfig {
    type Policy = super::policy::Masb;

    const ABOUT: &'static str = "the multi-agent system balancer (seed 000)";

    fn validate(&self, run: &crate::policy::RunSettings) -> Result<(), String> {
        MasbConfig::validate(self)?;
        if run
            .tick
            .whole_multiple_of(crate::sim_time::SimDuration::from_secs(1))
            .is_none()
        {
            return Err(format!(
                "kind: MASB runs on ticks of whole seconds (its timers are in seconds), got tick = {}",
                run.tick
            ));
        }
        if i64::from(self.cache_ttl_s) * 1_000_000 < run.tick.us() {
            // A node's report reaches a broker's cache once a tick and is a tick old when the
            // broker next places: a shorter TTL leaves every cache empty and nothing placed.
            return Err(format!(
                "cache_ttl_s must be at least the tick ({}): nodes report once a tick, so a shorter TTL drops every node from the brokers' caches and MASB places nothing; got {}",
                run.tick, self.cache_ttl_s
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        run: &crate::policy::RunSettings,
        _: &std::path::Path,
    ) -> crate::Result<super::policy::Masb> {
        // Whole seconds (`validate`).
        let tick_s = (run.tick.us() / 1_000_000) as u32;
        let mut masb =
            super::policy::Masb::new(self.clone(), run.rounds_per_tick, tick_s, run.seed);
        masb.thresholds = run.classify;
        Ok(masb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(toml_text: &str) -> Result<MasbConfig, String> {
        toml::from_str::<MasbConfig>(toml_text).map_err(|e| e.to_string())
    }

    /// The paper's MASB has no additions; each one a config turns on is named by its line,
    /// in the order the config documents them.
    #[test]
    fn additions_name_every_option_the_paper_does_not_describe() {
        assert!(MasbConfig::default().additions().is_empty());
        let readings = config(
            "score_reading = \"used\"\ninitial_order = \"score\"\ninitial_asks = 1\nsias_gain = true",
        )
        .unwrap();
        assert!(readings.additions().is_empty());
        let all = config(
            "accept_max_use = true\nbook_asks = true\nwarm_start = true\ngain_fallback = true\n\
             offload_every_s = 300\noffload_goal = \"better-score\"\ntarget_weighting = \"uniform\"",
        )
        .unwrap();
        assert_eq!(
            all.additions(),
            [
                "accept_max_use = true",
                "book_asks = true",
                "warm_start = true",
                "offload_every_s = 300 (offload_goal = \"better-score\")",
                "gain_fallback = true",
                "target_weighting = \"uniform\"",
            ]
        );
    }

    /// A shape's table may set one constant: the others stay that score's own defaults (SIAS
    /// 350 / 0.3 / 0.8, SRAS 500 / 0.6 / 0.8), and a misspelt constant is refused.
    #[test]
    fn a_partial_shape_keeps_its_own_defaults() {
        let c = config("[sias]\nsteep = 100.0\n[sras]\nbias = 0.5\n").unwrap();
        assert_eq!((c.sias.steep, c.sias.bias, c.sias.floor), (100.0, 0.3, 0.8));
        assert_eq!((c.sras.steep, c.sras.bias, c.sras.floor), (500.0, 0.5, 0.8));
        let c = config("max_use = 0.8\n").unwrap();
        assert_eq!(
            (c.sias, c.sras),
            (MasbConfig::default().sias, MasbConfig::default().sras)
        );
        let e = config("[sias]\nsteeep = 100.0\n").unwrap_err();
        assert!(e.contains("steeep"), "{e}");
        let c = config("gain_reading = \"relative\"\n").unwrap();
        assert_eq!(c.gain_reading, GainReading::Relative);
        assert!(config("gain_reading = \"ratio\"\n").is_err());
        let c = config("target_weighting = \"uniform\"\n").unwrap();
        assert_eq!(c.target_weighting, TargetWeighting::Uniform);
        assert!(config("target_weighting = \"random\"\n").is_err());
        let c = config("initial_order = \"score\"\n").unwrap();
        assert_eq!(c.initial_order, InitialOrder::Score);
        assert_eq!(MasbConfig::default().initial_order, InitialOrder::Weighted);
        assert!(config("initial_order = \"best\"\n").is_err());
        let full = toml::to_string(&MasbConfig::default()).unwrap();
        assert_eq!(config(&full).unwrap(), MasbConfig::default());
    }

    /// Each range check, on the defaults with one value changed.
    #[test]
    fn values_out_of_range_are_named() {
        assert_eq!(MasbConfig::default().validate(), Ok(()));
        let cases = [
            (
                "[sias]\nsteep = -1.0",
                "sias.steep must be positive, got -1",
            ),
            ("[sras]\nfloor = nan", "sras.floor must be finite, got NaN"),
            (
                "initial_candidates = 0",
                "initial_candidates must be at least 1",
            ),
            (
                "brokers_per_12500_nodes = 0",
                "brokers_per_12500_nodes must be at least 1",
            ),
            (
                "max_use = 1.5",
                "max_use must satisfy 0 < max_use <= 1, got 1.5",
            ),
            (
                "max_use = 0.0",
                "max_use must satisfy 0 < max_use <= 1, got 0",
            ),
            (
                "writable_share = -0.1",
                "writable_share must satisfy 0 <= writable_share <= 1, got -0.1",
            ),
            (
                "bandwidth_mb_s = 0.0",
                "bandwidth_mb_s must satisfy 0 < bandwidth_mb_s, got 0",
            ),
            (
                "max_downtime_s = nan",
                "max_downtime_s must satisfy 0 <= max_downtime_s, got NaN",
            ),
            (
                "machine_memory_mb = inf",
                "machine_memory_mb must satisfy 0 < machine_memory_mb, got inf",
            ),
            ("max_rounds = 0", "max_rounds must be at least 1"),
            (
                "gain_base_floor = 0.0",
                "gain_base_floor must satisfy 0 < gain_base_floor, got 0",
            ),
            (
                "migration_candidates = 16",
                "migration_candidates is at most 15, got 16",
            ),
        ];
        for (text, expected) in cases {
            let c = config(text).unwrap();
            assert_eq!(c.validate(), Err(expected.to_string()), "{text}");
        }
        let edges = "max_use = 1.0\nwritable_share = 0.0\nmax_downtime_s = 0.0\n";
        assert_eq!(config(edges).unwrap().validate(), Ok(()));
    }
}
