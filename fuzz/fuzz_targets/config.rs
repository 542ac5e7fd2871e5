//! The config loader: any text given as a `--config` file parses into a valid run config with
//! its policy's settings checked, or is refused with an error naming the file; an accepted
//! config survives the round trip through the TOML that `run.toml` records.
#![no_main]

use std::path::Path;

use engine::RunConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.toml");
    match RunConfig::from_toml(text, path) {
        Ok(config) => {
            let _ = config.policy.validate(&config);
            let _ = config.flattened();
            let recorded = toml::to_string(&config).expect("an accepted config serialises");
            let back = RunConfig::from_toml(&recorded, path).unwrap_or_else(|e| {
                panic!("run.toml of an accepted config is refused: {e}\n{recorded}")
            });
            assert_eq!(
                engine::snapshot::config_hash(&back),
                engine::snapshot::config_hash(&config),
                "the config changed through run.toml:\n{recorded}"
            );
        }
        Err(e) => assert!(e.to_string().contains("fuzz.toml"), "{e}"),
    }
});
