//! Sets `CELLSIM_BUILD`, the build's identity recorded in every run's summary and snapshots
//! (handed to the engine at start, `engine::set_build`): the version and, when built from a git
//! checkout, the commit, marked `modified` when tracked files differ from it.
//!
//! It lives in the binary crate, so a new identity recompiles only the binary, not the engine
//! (issue 58), and it reruns only when HEAD, the refs or the sources change: not on
//! `.git/index`, which a plain `git status` rewrites.

use std::path::Path;
use std::process::Command;

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it");
    let root = Path::new(&manifest);
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets it");
    let build = match git(root, &["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => {
            let status = git(root, &["status", "--porcelain", "--untracked-files=no"]);
            let modified = status.is_none_or(|s| !s.is_empty());
            let mark = if modified { ", modified" } else { "" };
            format!("{version} (git {commit}{mark})")
        }
        None => format!("{version} (not built from a git checkout)"),
    };
    println!("cargo:rustc-env=CELLSIM_BUILD={build}");
    // Again when the commit or the sources change (the `modified` mark).
    let git_dir = git(root, &["rev-parse", "--absolute-git-dir"]);
    if let Some(dir) = git_dir {
        // Only paths that exist: cargo reruns every build for a missing one (`packed-refs`
        // until git packs refs; refs packed later leave `refs/heads`, which changes then).
        for f in ["HEAD", "packed-refs", "refs/heads"] {
            let path = Path::new(&dir).join(f);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    for src in [
        "src",
        "engine/src",
        "ingest/src",
        "analysis/src",
        "Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(src).display());
    }
}
