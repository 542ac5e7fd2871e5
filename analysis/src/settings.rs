//! The settings rows of `cellsim report`: which configuration keys a run set away from their
//! defaults, read from the configuration its `summary.json` records, so that runs of a sweep
//! can be told apart and a run never shows a setting it did not have.
//!
//! Keys are dotted paths (`policy.sias_node_load`, `scale.multiply`), over the defaults of the
//! run's own policy (a MASB run's `policy.*` keys against MASB's defaults; a key another run's
//! policy lacks reads `-`). A key the summary lacks - a run written by a cellsim from before
//! that setting existed - reads as absent, never as today's default; a summary from before the
//! `[policy]` table (`policy = "masb"` and a `[masb]` table) is read as that table, and a key
//! whose default changed reads as what the builds before it did (`fit`,
//! `classify.rus_overloads`, `usage.cpu_compressible`: `engine::config::upgrade_recorded`). A
//! key a config writes only away from its default (`release`, `[usage.window]`) is shown where a
//! run set it, `default` for the runs beside it. Keys that cannot change a run's outputs
//! (`threads`, `snapshot.*`, `check_invariants`, the run's identity `run.*`) or have their own
//! row (`policy.kind`, `hours`) are left out.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use engine::config::flatten;
use engine::{PolicyConfig, RunConfig};
use serde_json::Value;

use crate::error::{AnalysisError, Result};

/// A run's configuration by dotted key over its policy's defaults: its value as text, `None`
/// when the summary lacks it. `policy.kind` is always present (the policy the run names).
pub type Settings = BTreeMap<String, Option<String>>;

/// The key naming a run's policy.
const KIND: &str = "policy.kind";

/// Keys never shown, and prefixes of such keys.
const HIDDEN: [&str; 7] = [
    "trace",
    "threads",
    "hours",
    KIND,
    "check_invariants",
    "snapshot.",
    "run.",
];

/// The configuration recorded in `RUN_DIR/summary.json`, over the keys of today's defaults.
pub fn load_settings(dir: &Path) -> Result<Settings> {
    let (path, text) = crate::report::read_summary(dir)?;
    let bad = |problem: String| AnalysisError::BadRunSummary {
        path: path.clone(),
        problem,
    };
    let summary: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let mut config = summary
        .get("config")
        .ok_or_else(|| bad("no `config` object".into()))?
        .clone();
    engine::config::upgrade_recorded(&mut config);
    let mut recorded = BTreeMap::new();
    flatten("", &config, &mut recorded);
    let kind = recorded
        .get(KIND)
        .cloned()
        .unwrap_or_else(|| RunConfig::default().policy.kind().to_string());
    let mut settings: Settings = defaults(&kind)
        .into_keys()
        .map(|key| {
            let value = recorded.remove(&key);
            (key, value)
        })
        .collect();
    // Keys a config writes only away from their default (`release`, `inbox_order`,
    // `[usage.window]`, `[watchdog]`): set, so shown.
    settings.extend(
        recorded
            .into_iter()
            .filter(|(key, _)| !key.starts_with("policy."))
            .map(|(key, value)| (key, Some(value))),
    );
    settings.insert(KIND.into(), Some(kind));
    Ok(settings)
}

/// What a run that lacks `key` had, where its policy's defaults lack it too: a policy's key
/// belongs to another policy (`-`); any other key is one a config writes only away from its
/// default, so the run had the default.
fn unwritten(key: &str) -> &'static str {
    if key.starts_with("policy.") {
        "-"
    } else {
        "default"
    }
}

/// Today's defaults by dotted key for a run of the policy `kind` (an unknown kind, from a
/// newer cellsim: the default policy's keys).
fn defaults(kind: &str) -> BTreeMap<String, String> {
    let config = RunConfig {
        policy: PolicyConfig::default_of(kind).unwrap_or_default(),
        ..RunConfig::default()
    };
    config.flattened()
}

/// The policy `run` names.
fn kind_of(run: &Settings) -> &str {
    run.get(KIND).and_then(|v| v.as_deref()).unwrap_or("")
}

/// Whether `key` is one the settings rows show (not in [`HIDDEN`]).
fn shown(key: &str) -> bool {
    !HIDDEN
        .iter()
        .any(|h| key == *h || (h.ends_with('.') && key.starts_with(h)))
}

/// The keys `run` sets away from today's defaults, in key order, as `key = value` (`key
/// absent` where its summary lacks the key); the keys the settings rows leave out are left out.
pub fn changed(run: &Settings) -> Vec<String> {
    let defaults = defaults(kind_of(run));
    let differs = |(key, value): (&String, &Option<String>)| match value {
        Some(v) if defaults.get(key) == Some(v) => None,
        Some(v) => Some(format!("{key} = {v}")),
        None => Some(format!("{key} absent")),
    };
    run.iter()
        .filter(|(key, _)| shown(key))
        .filter_map(differs)
        .collect()
}

/// Rows for the keys that some run sets away from its policy's default, one column per run
/// (`names`); `absent` where a run's summary lacks the key, `-` where its policy has no such
/// key. Empty when every run has every default.
pub fn render_settings(names: &[String], runs: &[Settings]) -> String {
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(18);
    let defaults: Vec<BTreeMap<String, String>> =
        runs.iter().map(|r| defaults(kind_of(r))).collect();
    let keys: std::collections::BTreeSet<&String> = defaults
        .iter()
        .flat_map(|d| d.keys())
        .chain(runs.iter().flat_map(|r| r.keys()))
        .collect();
    let mut o = String::new();
    for key in keys {
        if !shown(key) {
            continue;
        }
        // Per run: its value and its policy's default, either `None` where missing.
        let values: Vec<(Option<&String>, Option<&String>)> = runs
            .iter()
            .zip(&defaults)
            .map(|(r, d)| (r.get(key).and_then(|v| v.as_ref()), d.get(key)))
            .collect();
        if values
            .iter()
            .all(|(v, d)| d.is_none() && v.is_none() || d.is_some() && v == d)
        {
            continue;
        }
        if o.is_empty() {
            let _ = writeln!(o, "settings (not default)");
        }
        let _ = write!(o, "  {key:<22}");
        for v in values {
            let text = match v {
                (Some(v), _) => v.as_str(),
                (None, Some(_)) => "absent",
                (None, None) => unwritten(key),
            };
            let _ = write!(o, " {text:>width$}");
        }
        o.push('\n');
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::run::SUMMARY_FILE;

    /// Keys written only away from their defaults (`release`, `[usage.window]`, `inbox_order`)
    /// show where a run set them and read `default` beside it; the run's identity never shows.
    #[test]
    fn keys_written_only_when_set_show() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, config: &RunConfig| {
            let run = dir.path().join(name);
            std::fs::create_dir(&run).unwrap();
            let summary = serde_json::json!({ "config": serde_json::to_value(config).unwrap() });
            std::fs::write(run.join(SUMMARY_FILE), summary.to_string()).unwrap();
            load_settings(&run).unwrap()
        };
        let mut set = RunConfig {
            release: engine::release::Release::TraceSchedule,
            inbox_order: engine::InboxOrder::Sender,
            ..RunConfig::default()
        };
        set.usage.window = Some(engine::usage_model::WindowModel::default());
        set.run = Some(engine::run_identity::RunRecord::new(Path::new("t")));
        let set = write("set", &set);
        let plain = write("plain", &RunConfig::default());
        assert_eq!(
            changed(&set),
            [
                "inbox_order = sender",
                "release = trace-schedule",
                "usage.window.cpu_sigma = 0.231",
                "usage.window.every_s = 300",
                "usage.window.mem_sigma = 0.077",
            ]
        );
        let names = ["plain".to_string(), "set".to_string()];
        let text = render_settings(&names, &[plain, set]);
        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows[1], ["release", "default", "trace-schedule"], "{text}");
        assert_eq!(rows.len(), 5, "{text}");
    }

    /// A summary's config as written today, and one from before `sias_node_load` existed with
    /// another seed: the rows name exactly the keys that differ, `absent` where missing.
    #[test]
    fn rows_show_non_defaults_and_missing_keys() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, config: Value| {
            let run = dir.path().join(name);
            std::fs::create_dir(&run).unwrap();
            let summary = serde_json::json!({ "config": config });
            std::fs::write(run.join(SUMMARY_FILE), summary.to_string()).unwrap();
            load_settings(&run).unwrap()
        };
        let mut today = RunConfig {
            threads: 7,
            policy: PolicyConfig::default_of("masb").unwrap(),
            ..RunConfig::default()
        };
        today.scale.multiply = 8;
        let today = write("today", serde_json::to_value(&today).unwrap());
        // A summary written before the `[policy]` table and before `sias_node_load` existed.
        let older_config = || {
            let mut older = serde_json::to_value(RunConfig::default()).unwrap();
            let mut masb = serde_json::to_value(engine::masb::MasbConfig::default()).unwrap();
            masb.as_object_mut().unwrap().remove("sias_node_load");
            older["masb"] = masb;
            older["policy"] = "masb".into();
            older["seed"] = 5.into();
            older
        };
        let older = write("older", older_config());
        assert_eq!(older["policy.sias_node_load"], None);
        assert_eq!(older["policy.sias_gain"].as_deref(), Some("false"));
        let names = ["today".to_string(), "older".to_string()];
        let text = render_settings(&names, &[today.clone(), older]);
        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            rows,
            vec![
                vec!["policy.sias_node_load", "used", "absent"],
                vec!["scale.multiply", "8", "1"],
                vec!["seed", "1", "5"],
            ],
            "{text}"
        );
        assert!(text.starts_with("settings (not default)\n"));
        // The same, one run at a time (the figure's panel titles); threads left out.
        assert_eq!(changed(&today), ["scale.multiply = 8"]);
        assert_eq!(
            changed(&write("older-again", older_config())),
            ["policy.sias_node_load absent", "seed = 5"]
        );
        let plain = write("plain", serde_json::to_value(RunConfig::default()).unwrap());
        assert_eq!(
            render_settings(&names[..1], std::slice::from_ref(&plain)),
            ""
        );
        assert!(changed(&plain).is_empty());
        // Runs of two policies: a key one policy lacks reads `-` for the other.
        let first_fit = RunConfig {
            policy: PolicyConfig::default_of("first-fit").unwrap(),
            seed: 2,
            ..RunConfig::default()
        };
        let first_fit = write("first-fit", serde_json::to_value(&first_fit).unwrap());
        let gain = engine::masb::MasbConfig {
            sias_gain: true,
            ..Default::default()
        };
        let gain = RunConfig {
            policy: PolicyConfig::Masb(gain),
            ..RunConfig::default()
        };
        let gain = write("gain", serde_json::to_value(&gain).unwrap());
        let text = render_settings(&names, &[first_fit, gain]);
        assert_eq!(
            text.lines()
                .skip(1)
                .map(|l| l.split_whitespace().collect())
                .collect::<Vec<Vec<&str>>>(),
            [
                vec!["policy.sias_gain", "-", "true"],
                vec!["seed", "2", "1"]
            ],
            "{text}"
        );
        let err = load_settings(dir.path()).unwrap_err().to_string();
        assert!(err.contains("summary.json"), "{err}");
        for (name, text) in [("no-config", "{}"), ("truncated", "{\"config\": {")] {
            let run = dir.path().join(name);
            std::fs::create_dir(&run).unwrap();
            std::fs::write(run.join(SUMMARY_FILE), text).unwrap();
            let err = load_settings(&run).unwrap_err().to_string();
            assert!(
                err.contains(&format!("{name}/summary.json: not a run summary")),
                "{err}"
            );
        }
    }
}
