//! Embeds the commit `ding --version` reports, without any dependency: the
//! output of `git rev-parse` when building inside a git checkout,
//! `$DING_COMMIT` when a packager sets it, and `unknown` otherwise.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DING_COMMIT");
    let commit = std::env::var("DING_COMMIT")
        .ok()
        .filter(|commit| !commit.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=DING_COMMIT={commit}");
    // Build again when HEAD moves: HEAD itself (a checkout), the branch it
    // names (a commit) and packed refs. In a worktree HEAD lives in the
    // worktree's git dir and the branch in the common one.
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={git_dir}/HEAD");
    }
    if let Some(common) = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]) {
        // Watched only where it is: cargo takes a missing file for a
        // changed one and would build the crate again every time.
        let packed = Path::new(&common).join("packed-refs");
        if packed.exists() {
            println!("cargo:rerun-if-changed={}", packed.display());
        }
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            let reference = Path::new(&common).join(branch);
            println!("cargo:rerun-if-changed={}", reference.display());
        }
    }
}
