//! The settings rows of `cellsim report`: which configuration keys a run set away from their
//! defaults, read from the configuration its `summary.json` records, so that runs of a sweep
//! can be told apart and a run never shows a setting it did not have.
//!
//! Keys are dotted paths (`masb.sias_node_load`, `scale.multiply`). A key the summary lacks -
//! a run written by a cellsim from before that setting existed - reads as absent, never as
//! today's default. Keys that cannot change a run's outputs (`threads`, `snapshot.*`,
//! `check_invariants`) or have their own row (`policy`, `hours`) are left out.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use engine::RunConfig;
use engine::config::flatten;
use serde_json::Value;

use crate::error::{AnalysisError, Result};

/// A run's configuration by dotted key: its value as text, `None` when the summary lacks it.
pub type Settings = BTreeMap<String, Option<String>>;

/// Keys never shown, and prefixes of such keys.
const HIDDEN: [&str; 6] = [
    "trace",
    "threads",
    "hours",
    "policy",
    "check_invariants",
    "snapshot.",
];

/// The configuration recorded in `RUN_DIR/summary.json`, over the keys of today's defaults.
pub fn load_settings(dir: &Path) -> Result<Settings> {
    let (path, text) = crate::report::read_summary(dir)?;
    let bad = |problem: String| AnalysisError::BadRunSummary {
        path: path.clone(),
        problem,
    };
    let summary: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let config = summary
        .get("config")
        .ok_or_else(|| bad("no `config` object".into()))?;
    let mut recorded = BTreeMap::new();
    flatten("", config, &mut recorded);
    Ok(defaults()
        .into_keys()
        .map(|key| {
            let value = recorded.remove(&key);
            (key, value)
        })
        .collect())
}

/// Today's defaults by dotted key.
fn defaults() -> BTreeMap<String, String> {
    RunConfig::default().flattened()
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
    let defaults = defaults();
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

/// Rows for the keys that some run sets away from the default or that the runs disagree on,
/// one column per run (`names`); `absent` where a run's summary lacks the key. Empty when every
/// run has every default.
pub fn render_settings(names: &[String], runs: &[Settings]) -> String {
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(18);
    let defaults = defaults();
    let mut o = String::new();
    for (key, default) in &defaults {
        if !shown(key) {
            continue;
        }
        let values: Vec<Option<&String>> = runs
            .iter()
            .map(|r| r.get(key).and_then(|v| v.as_ref()))
            .collect();
        if values.iter().all(|v| *v == Some(default)) {
            continue;
        }
        if o.is_empty() {
            let _ = writeln!(o, "settings (not default)");
        }
        let _ = write!(o, "  {key:<22}");
        for v in values {
            let _ = write!(o, " {:>width$}", v.map_or("absent", |v| v.as_str()));
        }
        o.push('\n');
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::run::SUMMARY_FILE;

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
            ..RunConfig::default()
        };
        today.scale.multiply = 8;
        let today = write("today", serde_json::to_value(&today).unwrap());
        let mut older = serde_json::to_value(RunConfig::default()).unwrap();
        older["masb"]
            .as_object_mut()
            .unwrap()
            .remove("sias_node_load");
        older["seed"] = 5.into();
        let older = write("older", older);
        assert_eq!(older["masb.sias_node_load"], None);
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
                vec!["masb.sias_node_load", "used", "absent"],
                vec!["scale.multiply", "8", "1"],
                vec!["seed", "1", "5"],
            ],
            "{text}"
        );
        assert!(text.starts_with("settings (not default)\n"));
        // The same, one run at a time (the figure's panel titles); threads left out.
        assert_eq!(changed(&today), ["scale.multiply = 8"]);
        assert_eq!(
            changed(&write("older-again", {
                let mut c = serde_json::to_value(RunConfig::default()).unwrap();
                c["masb"].as_object_mut().unwrap().remove("sias_node_load");
                c["seed"] = 5.into();
                c
            })),
            ["masb.sias_node_load absent", "seed = 5"]
        );
        let plain = write("plain", serde_json::to_value(RunConfig::default()).unwrap());
        assert_eq!(render_settings(&names[..1], &[plain.clone()]), "");
        assert!(changed(&plain).is_empty());
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
