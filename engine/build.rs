//! Sets `CELLSIM_BUILD`, the build's identity recorded in every run's summary and snapshots
//! (`engine::BUILD`): the version and, when built from a git checkout, the commit, marked
//! `modified` when tracked files differ from it.

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
    let root = Path::new(&manifest)
        .parent()
        .expect("engine/ is in the workspace");
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
        for f in ["HEAD", "index", "packed-refs", "refs/heads"] {
            println!("cargo:rerun-if-changed={dir}/{f}");
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
