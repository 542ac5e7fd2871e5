//! The policy registry: the one list of the policies a run can be configured with.
//!
//! Each entry names a policy (its `kind` in configs and its `--policy` value) and the type of its
//! own settings, a [`PolicySpec`]. From this list come [`PolicyConfig`] (the run config's
//! `[policy]` table, `kind = "masb"` beside that policy's own keys), the CLI's `--policy` values
//! ([`KINDS`]), validation, the snapshot's config hash (a policy's settings are hashed, no other
//! policy's) and [`PolicyConfig::build_with`], which builds the policy for the run loop above (`run::run_configured`). Adding a policy is a
//! module under `engine/src/<policy>/` with a [`PolicySpec`] and one line here.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;
pub use crate::policy::PolicySpec;
use crate::policy::{Policy, RunSettings};

/// What to do with the policy a [`PolicyConfig`] builds ([`PolicyConfig::build_with`]): the
/// run loop above the registry runs it, without the registry naming the run loop.
pub trait WithPolicy {
    /// What it gives back.
    type Output;

    /// Does it with `policy`.
    fn with<P: Policy + Send>(self, policy: P) -> Result<Self::Output>;
}

/// Declares [`PolicyConfig`], [`KINDS`] and the dispatch from one list of `Variant = "kind" =>
/// SpecType` lines.
macro_rules! registry {
    ($( $variant:ident = $kind:literal => $spec:ty ),* $(,)?) => {
        /// The run's policy and its own settings: the config's `[policy]` table, tagged by
        /// `kind`.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        // One value per run, read when the policy is built: the size of MASB's many constants
        // costs nothing, boxing them would cost every match and test a `Box::new`.
        #[allow(clippy::large_enum_variant)]
        pub enum PolicyConfig {
            $(
                #[doc = concat!("`", $kind, "`: ", "see [`", stringify!($spec), "`].")]
                #[serde(rename = $kind)]
                $variant($spec),
            )*
        }

        /// Every policy's `kind` with its one-line description, in registry order.
        pub const KINDS: &[(&str, &str)] = &[$( ($kind, <$spec as PolicySpec>::ABOUT), )*];

        impl PolicyConfig {
            /// The policy's `kind`.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( PolicyConfig::$variant(_) => $kind, )*
                }
            }

            /// The policy `kind` with its default settings; `None` for an unknown kind.
            pub fn default_of(kind: &str) -> Option<PolicyConfig> {
                match kind {
                    $( $kind => Some(PolicyConfig::$variant(<$spec>::default())), )*
                    _ => None,
                }
            }

            /// Checks the policy's settings against the run's; the problem names its key under
            /// `policy.`.
            pub fn validate(&self, run: &RunSettings) -> std::result::Result<(), String> {
                match self {
                    $( PolicyConfig::$variant(spec) => PolicySpec::validate(spec, run), )*
                }
                .map_err(|problem| format!("policy.{problem}"))
            }

            /// Refuses a trace with reduce tasks for a policy that would not hold them back.
            pub fn check_phases(&self, trace_dir: &Path) -> Result<()> {
                let honours = match self {
                    $( PolicyConfig::$variant(_) => <$spec as PolicySpec>::HONOURS_PHASES, )*
                };
                if honours {
                    return Ok(());
                }
                crate::phases::refuse_reduce_tasks(self.kind(), trace_dir)
            }

            /// The name the built policy gives itself ([`Policy::name`]): the kind, which
            /// the registry's test checks.
            #[cfg(test)]
            fn built_name(&self, run: &RunSettings) -> &'static str {
                let nowhere = Path::new("/nonexistent-trace");
                match self {
                    $( PolicyConfig::$variant(spec) => spec.build(run, nowhere).unwrap().name(), )*
                }
            }

                /// Builds the policy for `run` replaying the trace in `trace_dir` (refusing a trace
            /// with reduce tasks for a policy that would not hold them back) and hands it to
            /// `w`.
            pub fn build_with<W: WithPolicy>(
                &self,
                run: &RunSettings,
                trace_dir: &Path,
                w: W,
            ) -> Result<W::Output> {
                self.check_phases(trace_dir)?;
                match self {
                $( PolicyConfig::$variant(spec) => w.with(spec.build(run, trace_dir)?), )*
                }
            }
        }
    };
}

registry! {
    BorgReplay = "borg-replay" => crate::borg::BorgReplayConfig,
    Masb = "masb" => crate::masb::MasbConfig,
    FirstFit = "first-fit" => crate::greedy::FirstFitConfig,
    BestFit = "best-fit" => crate::greedy::BestFitConfig,
    Random = "random" => crate::greedy::RandomConfig,
    Omniscient = "omniscient" => crate::omniscient::OmniscientConfig,
    EqualShare = "equal-share" => crate::controlled::EqualShareConfig,
    RandomShare = "random-share" => crate::controlled::RandomShareConfig,
    Edf = "edf" => crate::controlled::EdfConfig,
    Nbs = "nbs" => crate::nbs::NbsConfig,
    Sparrow = "sparrow" => crate::sparrow::SparrowConfig,
    Federation = "federation" => crate::federation::FederationConfig,
    Python = "python" => crate::hosted::PythonConfig,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig::BorgReplay(Default::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunConfig;

    /// Each kind builds a policy of that name, and its default settings pass validation and
    /// round-trip through TOML as the run config's `[policy]` table.
    #[test]
    fn every_kind_builds_its_policy_and_round_trips() {
        for &(kind, about) in KINDS {
            assert!(!about.is_empty());
            let policy = PolicyConfig::default_of(kind).unwrap();
            assert_eq!(policy.kind(), kind);
            let mut run = RunConfig {
                policy: policy.clone(),
                ..RunConfig::default()
            };
            if kind == "sparrow" {
                // Sparrow refuses rounds over 1 s (the default tick's are 10 s): seed 002's.
                (run.tick, run.rounds_per_tick) = ("10ms".parse().unwrap(), 20);
            }
            // A hosted policy is built with the decider its host gives (`hosted/host.rs`).
            let decider = Box::new(crate::hosted::host::LeaveWaiting);
            let name = crate::hosted::with_decider(decider, || policy.built_name(&run.settings()));
            assert_eq!(name, kind);
            run.validate().unwrap();
            let text = toml::to_string(&run).unwrap();
            assert!(
                text.contains(&format!("[policy]\nkind = \"{kind}\"")),
                "{text}"
            );
            assert_eq!(
                RunConfig::from_toml(&text, Path::new("r.toml")).unwrap(),
                run
            );
        }
        assert_eq!(PolicyConfig::default_of("sparrowx"), None);
    }
}
