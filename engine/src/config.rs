//! Run configuration: every parameter with its default, read from TOML (`cellsim run --config`)
//! and overridden by command-line flags. Unknown keys are errors, so a typo never silently falls
//! back to a default.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::classify::Thresholds;
use crate::error::{EngineError, Result};
use crate::policies::PolicyConfig;
use crate::sim_time::SimDuration;

/// Everything that determines a run's outputs (plus `threads`, which must not change them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Ingested trace directory (`cellsim ingest` output); in a config file, relative to the
    /// file's directory.
    pub trace: Option<PathBuf>,
    /// Scheduling policy and its own settings (`[policy]`, `kind = "masb"` beside MASB's keys).
    pub policy: PolicyConfig,
    /// Random seed of the policy's agents.
    pub seed: u64,
    /// Simulated hours from the start of the trace window; none = to the trace's last event.
    pub hours: Option<f64>,
    /// Allow `hours` to end more than an hour (or a tenth of the trace) after the trace's last
    /// event (the cell then runs on with no new work); refused otherwise.
    pub past_trace_end: bool,
    /// Worker threads; 0 = one per core. Outputs are identical for any value.
    pub threads: usize,
    /// Simulated time per tick, e.g. `"60s"` (SPEC 5.1: one minute), `"100ms"`, `"1ms"`
    /// (`sim_time.rs`): the one clock every policy reads.
    pub tick: SimDuration,
    /// Negotiation rounds per tick (SPEC 5.1: 6, so a round is 10 s).
    pub rounds_per_tick: u32,
    /// Write a `nodes/` sample every this much simulated time, a whole number of ticks (SPEC 9:
    /// 100 simulated minutes).
    pub nodes_every: SimDuration,
    /// Node classification thresholds (SPEC 5.4).
    pub classify: Thresholds,
    /// Verify the cell's invariants (`Cell::check`) after every tick; slow, for tests and
    /// debugging.
    pub check_invariants: bool,
    /// Simulated time per output part of `ticks/`, `migrations/` and `timing/`, a whole number
    /// of ticks (a day).
    pub part: SimDuration,
    /// Rows at which a policy table's part (`migrations/`, `tasks/`, `jobs/`) is written before
    /// its `part` is done (at the end of that tick): bounds the rows a run holds in memory and
    /// in its snapshots (262,144; an 8x MASB day has ~1M `migrations/` rows of 8 values, 128
    /// bytes each held: 1,048,576 kept ~100 MiB more at the day's end,
    /// `bench-results/bench-2026-11-26-allocator.md`).
    pub part_rows: u64,
    /// When to snapshot the run for resuming (SPEC 8).
    pub snapshot: crate::snapshot::SnapshotConfig,
    /// Workload multiplication, workload percentage and compaction (SPEC 7, `scale.rs`).
    pub scale: crate::scale::Scale,
    /// What a task uses before it is measured: the usage model's share of its request (its
    /// request, for a scenario's workload; `[usage]`, `usage_model.rs`).
    pub usage: crate::usage_model::UsageModel,
    /// Deadlines and priorities for a trace without a scenario's side tables (`[deadlines]`,
    /// `deadlines.rs`; off by default).
    pub deadlines: crate::deadlines::DeadlineModel,
    /// What the greedy placers admit a task by: `requests` (the default; every other
    /// simulator's first-fit and the seeds' baselines) or `usage` (cellsim before issue 57;
    /// `fit_by.rs`).
    pub fit: crate::fit_by::FitBy,
    /// The order an agent reads the messages that reach it in one round: `fair` (the default:
    /// senders in an order drawn from the seed and the round, `Mailbox::shuffle_inboxes`) or
    /// `sender` (ascending sender index, as cellsim before issue 55: a receiver taking the first
    /// of equal offers then favours low indices; kept to measure that bias).
    #[serde(skip_serializing_if = "InboxOrder::is_fair")]
    pub inbox_order: InboxOrder,
    /// When a policy that places the workload itself may first start a task: `submit` (the
    /// default) or `trace-schedule` (when the trace's scheduler started it; `release.rs`).
    #[serde(skip_serializing_if = "crate::release::Release::is_submit")]
    pub release: crate::release::Release,
    /// Liveness checks: what counts as a stall, and whether a stall or work left undone makes
    /// the run exit non-zero (`[watchdog]`, `watchdog.rs`).
    #[serde(skip_serializing_if = "crate::watchdog::WatchdogConfig::is_default")]
    pub watchdog: crate::watchdog::WatchdogConfig,
    /// The run's identity (`[run]`: its random ID and the trace as given), written by cellsim in
    /// a run directory's `run.toml` when the run starts (`run_identity.rs`); not part of what
    /// determines the outputs, and replaced when a config file that has it starts a new run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<crate::run_identity::RunRecord>,
}

/// How an agent's same-round messages are ordered ([`RunConfig::inbox_order`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InboxOrder {
    /// Senders in an order drawn from the seed and the round.
    #[default]
    Fair,
    /// Ascending sender index (biased; for measuring the bias).
    Sender,
}

impl InboxOrder {
    /// True for the default, [`InboxOrder::Fair`].
    pub fn is_fair(&self) -> bool {
        *self == InboxOrder::Fair
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            trace: None,
            policy: PolicyConfig::default(),
            seed: 1,
            hours: None,
            past_trace_end: false,
            threads: 0,
            tick: SimDuration::from_secs(60),
            rounds_per_tick: 6,
            nodes_every: SimDuration::from_secs(6_000),
            classify: Thresholds::default(),
            check_invariants: false,
            part: SimDuration::from_secs(86_400),
            part_rows: 1 << 18,
            snapshot: crate::snapshot::SnapshotConfig::default(),
            scale: crate::scale::Scale::default(),
            usage: crate::usage_model::UsageModel::default(),
            deadlines: crate::deadlines::DeadlineModel::default(),
            fit: crate::fit_by::FitBy::Requests,
            inbox_order: InboxOrder::Fair,
            release: crate::release::Release::Submit,
            watchdog: crate::watchdog::WatchdogConfig::default(),
            run: None,
        }
    }
}

impl RunConfig {
    /// Parses TOML text; `path` names the source in errors.
    pub fn from_toml(text: &str, path: &Path) -> Result<RunConfig> {
        let config: RunConfig = toml::from_str(text).map_err(|e| EngineError::Config {
            path: path.to_path_buf(),
            problem: with_layout_hint(e.to_string()),
        })?;
        config.validate().map_err(|problem| EngineError::Config {
            path: path.to_path_buf(),
            problem,
        })?;
        Ok(config)
    }

    /// Reads a TOML file. A relative `trace` is relative to the file's directory (an experiment file next to its
    /// trace works from any working directory: a SLURM job's, say).
    pub fn from_file(path: &Path) -> Result<RunConfig> {
        let text = std::fs::read_to_string(path).map_err(EngineError::io(path))?;
        let mut config = RunConfig::from_toml(&text, path)?;
        if let (Some(trace), Some(dir)) = (&config.trace, path.parent())
            && trace.is_relative()
        {
            config.trace = Some(dir.join(trace));
        }
        Ok(config)
    }

    /// What the policy may read of the run (`policy::RunSettings`).
    pub fn settings(&self) -> crate::policy::RunSettings {
        crate::policy::RunSettings {
            seed: self.seed,
            tick: self.tick,
            rounds_per_tick: self.rounds_per_tick,
            scale: self.scale,
            deadlines: self.deadlines,
            classify: self.classify,
        }
    }

    /// Checks value ranges; returns what is wrong.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.tick.us() <= 0 {
            return Err("tick must be positive".into());
        }
        if self.rounds_per_tick == 0 {
            return Err("rounds_per_tick must be at least 1".into());
        }
        self.scale.validate().map_err(|e| format!("scale.{e}"))?;
        self.usage.validate()?;
        self.deadlines.validate()?;
        self.watchdog.validate()?;
        let every_sim = SimDuration::from_secs(self.snapshot.every_sim_minutes as i64 * 60);
        for (name, every) in [
            ("part", self.part),
            ("nodes_every", self.nodes_every),
            ("snapshot.every_sim_minutes", every_sim),
        ] {
            let never = name.starts_with("snapshot") && every.us() == 0;
            match every.whole_multiple_of(self.tick) {
                _ if never => {}
                None => {
                    return Err(format!(
                        "{name} ({every}) must be a whole number of ticks (tick = {})",
                        self.tick
                    ));
                }
                Some(n) if n > u32::MAX as u64 => {
                    return Err(format!(
                        "{name} ({every}) is {n} ticks of {}, more than a run counts ({} at most): choose a longer tick or a shorter {name}",
                        self.tick,
                        u32::MAX
                    ));
                }
                Some(_) => {}
            }
        }
        if self.part_rows == 0 {
            return Err("part_rows must be at least 1".into());
        }
        let w = self.snapshot.every_wall_minutes;
        if w.is_nan() || w < 0.0 {
            return Err(format!(
                "snapshot.every_wall_minutes must be >= 0 (0 = never), got {w}"
            ));
        }
        if self.snapshot.keep == 0 {
            return Err("snapshot.keep must be at least 1".into());
        }
        if let Some(h) = self.hours
            && !(h.is_finite() && h > 0.0)
        {
            return Err(format!("hours must be positive and finite, got {h}"));
        }
        self.policy.validate(&self.settings())?;
        let t = &self.classify;
        if t.ta_ppm == 0 || t.ta_ppm > t.sta_ppm || t.sta_ppm > 1_000_000 {
            return Err(format!(
                "classify thresholds must satisfy 0 < ta_ppm <= sta_ppm <= 1000000, got ta_ppm {} sta_ppm {}",
                t.ta_ppm, t.sta_ppm
            ));
        }
        Ok(())
    }

    /// Ticks per `nodes/` sample ([`RunConfig::nodes_every`]; valid configs only).
    pub fn nodes_every_ticks(&self) -> u32 {
        self.nodes_every.whole_multiple_of(self.tick).unwrap_or(1) as u32
    }

    /// Ticks per output part ([`RunConfig::part`]; valid configs only).
    pub fn part_ticks(&self) -> u32 {
        self.part.whole_multiple_of(self.tick).unwrap_or(1) as u32
    }

    /// Every setting by dotted key ([`flatten`]), as text.
    pub fn flattened(&self) -> BTreeMap<String, String> {
        let value = serde_json::to_value(self).expect("a config encodes as JSON");
        let mut out = BTreeMap::new();
        flatten("", &value, &mut out);
        out
    }

    /// The keys whose values differ between `before` and `self`, as `key before -> now`, in key
    /// order (keys as [`flatten`] names them).
    pub fn changes_from(&self, before: &RunConfig) -> Vec<String> {
        let (before, now) = (before.flattened(), self.flattened());
        now.iter()
            .filter_map(|(key, value)| {
                let old = before.get(key).map_or("absent", String::as_str);
                (old != value).then(|| format!("{key} {old} -> {value}"))
            })
            .collect()
    }

    /// The keys a config writes only away from their defaults (so a printed config lacks
    /// them), as commented TOML with their defaults: what `--print-config` adds to show every
    /// key.
    pub fn unwritten_keys_toml() -> String {
        fn table(name: &str, value: &impl Serialize) -> String {
            let body = toml::to_string(value).expect("a settings table encodes as TOML");
            format!("[{name}]\n{body}")
        }
        let text = [
            "# Written only when set (the defaults below; top-level keys go before any table):"
                .into(),
            "inbox_order = \"fair\"        # or \"sender\" (Mailbox::shuffle_inboxes)".into(),
            "release = \"submit\"          # or \"trace-schedule\" (engine/src/release.rs)".into(),
            table("watchdog", &crate::watchdog::WatchdogConfig::default()),
            "# [usage.window] is off by default; set, these are its defaults (usage_model.rs)"
                .into(),
            table("usage.window", &crate::usage_model::WindowModel::default()),
        ]
        .join("\n");
        text.lines()
            .map(|l| match l {
                "" => "#\n".to_string(),
                l if l.starts_with('#') => format!("{l}\n"),
                l => format!("# {l}\n"),
            })
            .collect()
    }

    /// The defaults as commented TOML, a starting point for experiment files.
    pub fn default_toml() -> String {
        toml::to_string(&RunConfig::default()).expect("the default config serializes")
    }
}

/// Hash of everything in `config` that determines the outputs: not the thread count, the trace
/// location (the trace is identified by `snapshot::trace_hash`), invariant checking or the
/// snapshot triggers, which a resume may change, nor the run's identity (`[run]`, checked on
/// its own).
pub fn config_hash(config: &RunConfig) -> u64 {
    let c = outputs_config(config);
    crate::codec::hash_bytes(toml::to_string(&c).expect("a config serialises").as_bytes())
}

/// `config` without what [`config_hash`] leaves out.
pub(crate) fn outputs_config(config: &RunConfig) -> RunConfig {
    RunConfig {
        threads: 0,
        trace: None,
        check_invariants: false,
        snapshot: crate::snapshot::SnapshotConfig::default(),
        run: None,
        // Whether a stall ends the run non-zero changes no output.
        watchdog: crate::watchdog::WatchdogConfig {
            strict: false,
            ..config.watchdog
        },
        ..config.clone()
    }
}

/// Rewrites `value`, a configuration as a run's summary recorded it, in today's layout, so runs
/// made by an older cellsim stay readable: before the `[policy]` table (`policy = "masb"`
/// beside a `[masb]` table) and before durations (`tick_s`, `nodes_every_ticks`, `part_ticks`).
pub fn upgrade_recorded(value: &mut serde_json::Value) {
    use serde_json::Value;
    let Value::Object(map) = value else {
        return;
    };
    if let Some(Value::String(kind)) = map.get("policy").cloned() {
        let mut table = serde_json::Map::new();
        table.insert("kind".into(), Value::String(kind.clone()));
        if let Some(Value::Object(own)) = map.get(&kind) {
            table.extend(own.clone());
        }
        map.insert("policy".into(), Value::Object(table));
    }
    map.remove("masb");
    // Runs before issue 57 fitted by usage (the default is now requests, `fit_by.rs`) and
    // counted RUS breaches as overloaded nodes (`classify.rs`).
    map.entry("fit")
        .or_insert_with(|| Value::String("usage".into()));
    if let Some(Value::Object(classify)) = map.get_mut("classify") {
        classify.entry("rus_overloads").or_insert(Value::Bool(true));
    }
    // Runs before the compressible CPU (`usage_model.rs`) never throttled a node's CPU.
    if let Some(Value::Object(usage)) = map.get_mut("usage") {
        usage
            .entry("cpu_compressible")
            .or_insert(Value::Bool(false));
    }
    let tick_s = map.remove("tick_s").and_then(|v| v.as_i64());
    if let Some(tick_s) = tick_s {
        let tick = SimDuration::from_secs(tick_s);
        map.insert("tick".into(), Value::String(tick.to_string()));
        for (old, new) in [("nodes_every_ticks", "nodes_every"), ("part_ticks", "part")] {
            if let Some(n) = map.remove(old).and_then(|v| v.as_i64()) {
                let every = SimDuration::from_us(n * tick.us());
                map.insert(new.into(), Value::String(every.to_string()));
            }
        }
    }
}

/// `problem` with a pointer to the `[policy]` table when it comes from a config written for the
/// layout before it (`policy = "masb"` and a `[masb]` table).
fn with_layout_hint(problem: String) -> String {
    let old_policy = problem.contains("expected internally tagged enum PolicyConfig");
    let old_table = problem.contains("unknown field `masb`");
    let old_ticks = ["tick_s", "nodes_every_ticks", "part_ticks"]
        .iter()
        .any(|k| problem.contains(&format!("unknown field `{k}`")));
    if old_ticks {
        format!(
            "{}\ntimes are simulated durations now: `tick = \"60s\"` (or \"100ms\"), `nodes_every = \"100min\"`, `part = \"1d\"`",
            problem.trim_end()
        )
    } else if old_policy || old_table {
        format!(
            "{}\nthe policy and its settings are one table now: `[policy]` with `kind = \"masb\"` (or another kind: {}) and, for MASB, the keys of the former `[masb]` table",
            problem.trim_end(),
            crate::policies::KINDS
                .iter()
                .map(|k| k.0)
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        problem
    }
}

/// The scalars of `value` (a configuration as JSON: the engine's, or one a run's summary
/// recorded) by dotted key under `prefix` (`masb.sias.steep`, `scale.multiply`), as text.
pub fn flatten(prefix: &str, value: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}{k}."), v, out);
            }
        }
        scalar => {
            let text = match scalar {
                Value::String(s) => s.clone(),
                Value::Null => "none".into(),
                other => other.to_string(),
            };
            out.insert(prefix.trim_end_matches('.').to_string(), text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_partial_files_fill_in() {
        let text = RunConfig::default_toml();
        assert_eq!(
            RunConfig::from_toml(&text, Path::new("d.toml")).unwrap(),
            RunConfig::default()
        );
        let c = RunConfig::from_toml(
            "hours = 2.5\n[classify]\nsta_ppm = 950000\n",
            Path::new("x.toml"),
        )
        .unwrap();
        assert_eq!(c.hours, Some(2.5));
        assert_eq!(c.classify.sta_ppm, 950_000);
        assert_eq!(c.classify.ta_ppm, 700_000);
        assert_eq!(c.rounds_per_tick, 6);
    }

    /// The keys that differ, by dotted name, in key order, with both values.
    #[test]
    fn changes_name_each_key_with_both_values() {
        let before = RunConfig {
            policy: PolicyConfig::default_of("masb").unwrap(),
            ..RunConfig::default()
        };
        let mut now = before.clone();
        assert!(now.changes_from(&before).is_empty());
        now.hours = Some(4.0);
        let mut masb = crate::masb::MasbConfig::default();
        masb.sias.steep = 300.0;
        now.policy = PolicyConfig::Masb(masb);
        now.scale.multiply = 2;
        assert_eq!(
            now.changes_from(&before),
            [
                "hours none -> 4.0",
                "policy.sias.steep 350.0 -> 300.0",
                "scale.multiply 1 -> 2"
            ]
        );
        // Another policy: its kind, and the keys only one of the two has.
        let first_fit = RunConfig {
            policy: PolicyConfig::default_of("first-fit").unwrap(),
            ..RunConfig::default()
        };
        assert_eq!(
            first_fit.changes_from(&RunConfig::default()),
            ["policy.kind borg-replay -> first-fit"]
        );
    }

    #[test]
    fn bad_configs_name_the_file_and_place() {
        let err = RunConfig::from_toml("seed = 1\nrounds_per_tik = 3\n", Path::new("exp.toml"))
            .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("exp.toml: "), "{msg}");
        assert!(
            msg.contains("line 2") && msg.contains("rounds_per_tik"),
            "{msg}"
        );
        let err = RunConfig::from_toml("[policy]\nkind = \"masbx\"\n", Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2") && err.contains("masbx") && err.contains("first-fit"),
            "{err}"
        );
        let err = RunConfig::from_toml("tick_s = 60\n", Path::new("o.toml")).unwrap_err();
        assert!(err.to_string().contains("`tick = \"60s\"`"), "{err}");
        // A summary's config recorded by an older cellsim reads as today's layout.
        let mut old = serde_json::json!({
            "policy": "masb", "tick_s": 30, "nodes_every_ticks": 100, "part_ticks": 2880,
            "masb": {"sias_gain": true}, "seed": 4,
        });
        upgrade_recorded(&mut old);
        let c: RunConfig = serde_json::from_value(old).unwrap();
        assert_eq!(
            (c.tick.us(), c.nodes_every.us(), c.part.us()),
            (30_000_000, 3_000_000_000, 86_400_000_000)
        );
        assert_eq!(c.seed, 4);
        assert_eq!(
            c.fit,
            crate::fit_by::FitBy::Usage,
            "runs before issue 57 fitted by usage"
        );
        let mut older = serde_json::json!({"classify": {"sta_ppm": 900000, "ta_ppm": 700000}});
        upgrade_recorded(&mut older);
        let older: RunConfig = serde_json::from_value(older).unwrap();
        assert!(
            older.classify.rus_overloads,
            "and counted RUS breaches as overloads"
        );
        let mut before_throttling = serde_json::json!({"usage": {"per_task": true}});
        upgrade_recorded(&mut before_throttling);
        let before: RunConfig = serde_json::from_value(before_throttling).unwrap();
        assert!(!before.usage.cpu_compressible, "and never throttled CPU");
        let masb = crate::masb::MasbConfig {
            sias_gain: true,
            ..Default::default()
        };
        assert_eq!(c.policy, PolicyConfig::Masb(masb));
        // A config of the layout before `[policy]` is pointed at it.
        for old in ["policy = \"masb\"\n", "[masb]\nsias_gain = true\n"] {
            let err = RunConfig::from_toml(old, Path::new("o.toml"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("`[policy]` with `kind = \"masb\"`"), "{err}");
        }
        // A key another policy has, or none has, is refused.
        let text = "[policy]\nkind = \"first-fit\"\nsias_gain = true\n";
        let err = RunConfig::from_toml(text, Path::new("f.toml")).unwrap_err();
        assert!(err.to_string().contains("sias_gain"), "{err}");
        let err = RunConfig::from_toml("tick = \"0s\"\n", Path::new("t.toml")).unwrap_err();
        assert_eq!(err.to_string(), "t.toml: tick must be positive");
        let err = RunConfig::from_toml("tick = \"60\"\n", Path::new("t.toml")).unwrap_err();
        assert!(
            err.to_string().contains("a whole number and a unit"),
            "{err}"
        );
        // Cadences are simulated time, whole numbers of ticks.
        let text = "tick = \"7s\"\n";
        let err = RunConfig::from_toml(text, Path::new("t.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.toml: part (1d) must be a whole number of ticks (tick = 7s)"
        );
        let text = "tick = \"100ms\"\nnodes_every = \"150ms\"\n";
        let err = RunConfig::from_toml(text, Path::new("t.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.toml: nodes_every (150ms) must be a whole number of ticks (tick = 100ms)"
        );
        // A 1 us tick: the default day-long part is more ticks than the counter holds (issue 56:
        // it was reported as "not a whole number of ticks").
        let err = RunConfig::from_toml("tick = \"1us\"\n", Path::new("t.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.toml: part (1d) is 86400000000 ticks of 1us, more than a run counts (4294967295 at most): choose a longer tick or a shorter part"
        );
        let text = "tick = \"100ms\"\nnodes_every = \"1min\"\n";
        let c = RunConfig::from_toml(text, Path::new("t.toml")).unwrap();
        assert_eq!((c.nodes_every_ticks(), c.part_ticks()), (600, 864_000));
        let err = RunConfig::from_toml("rounds_per_tick = 0\n", Path::new("t.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.toml: rounds_per_tick must be at least 1"
        );
        // MASB's parameters are checked too, named with their table.
        let text = "[policy]\nkind = \"masb\"\nbandwidth_mb_s = 0.0\n";
        let err = RunConfig::from_toml(text, Path::new("m.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "m.toml: policy.bandwidth_mb_s must satisfy 0 < bandwidth_mb_s, got 0"
        );
        // A cache TTL shorter than a tick empties the brokers' caches (a 1-hour MASB run of the
        // default cell with 59 s placed no task; with 60 s it placed them as with 300 s).
        let text = "[policy]\nkind = \"masb\"\ncache_ttl_s = 59\n";
        let err = RunConfig::from_toml(text, Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("c.toml: policy.cache_ttl_s must be at least the tick (1min)")
                && err.ends_with("got 59"),
            "{err}"
        );
        // `hours = inf` ran forever past the trace's end.
        let err = RunConfig::from_toml("hours = inf\n", Path::new("h.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "h.toml: hours must be positive and finite, got inf"
        );
        let text = "tick = \"30s\"\n[policy]\nkind = \"masb\"\ncache_ttl_s = 30\n";
        assert!(RunConfig::from_toml(text, Path::new("c.toml")).is_ok());
    }
}
