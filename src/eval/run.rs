//! The whole matrix (`make eval`): every row, for each harness, in each
//! arm, the given number of trials, one at a time (the harnesses are heavy
//! and the machine may be small). For each trial index the arms run back
//! to back on the same seed. Writes `report.json` and `report.md` into the
//! output directory, and each trial's logs under `trials/`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::arm::Arm;
use super::report::{self, HarnessInfo, Meta, Report};
use super::rng::trial_seed;
use super::row::Row;
use super::scenario;
use super::trial::{Outcome, TrialFacts, TrialSpec, trial_id};
use crate::harnesses::{self, Harness};
use crate::unix_time::unix_ms;

/// What to run.
pub struct Plan {
    /// Each harness to evaluate, with its native binary.
    pub harnesses: Vec<(&'static Harness, PathBuf)>,
    pub rows: Vec<Row>,
    pub arms: Vec<Arm>,
    pub trials: u32,
    /// The base seed: trial `i` of every row runs on `seed + i`.
    pub seed: u64,
    pub out: PathBuf,
    /// The `ding` binary the trials drive.
    pub ding: PathBuf,
    /// The `ding-eval` binary, which serves the model.
    pub eval_binary: PathBuf,
}

/// The harness binaries named in a file of `DING_HARNESS_NAME=PATH` lines
/// (what `scripts/install-harnesses.sh` prints), for the registry's
/// harnesses, in the registry's order.
pub fn harnesses_from_env_file(text: &str) -> Result<Vec<(&'static Harness, PathBuf)>> {
    let mut found = Vec::new();
    for harness in &harnesses::HARNESSES {
        let variable = format!("DING_HARNESS_{}=", harness.name.to_ascii_uppercase());
        if let Some(path) = text
            .lines()
            .find_map(|line| line.trim().strip_prefix(&variable))
        {
            found.push((harness, PathBuf::from(path)));
        }
    }
    if found.is_empty() {
        bail!(
            "no DING_HARNESS_NAME=PATH line for any harness ({})",
            harnesses::names()
        );
    }
    Ok(found)
}

/// Runs the plan; `say` hears one line per trial as it goes.
pub fn run(plan: &Plan, say: &mut dyn FnMut(&str)) -> Result<Report> {
    let started = Instant::now();
    // The commit of the `ding` the trials drive, read before they run: the
    // checkout may move on while a long run goes.
    let commit = driven_commit(&plan.ding);
    let trials_dir = plan.out.join("trials");
    if trials_dir.exists() {
        fs::remove_dir_all(&trials_dir)
            .with_context(|| format!("clear {}", trials_dir.display()))?;
    }
    fs::create_dir_all(&trials_dir).with_context(|| format!("create {}", trials_dir.display()))?;
    say(&format!(
        "seed {} (DING_EVAL_SEED), {} trial(s) per row and arm (DING_EVAL_TRIALS)",
        plan.seed, plan.trials
    ));
    let mut facts = Vec::new();
    for (harness, binary) in &plan.harnesses {
        for row in &plan.rows {
            for index in 0..plan.trials {
                for arm in &plan.arms {
                    let mut spec = TrialSpec {
                        harness,
                        harness_binary: binary.clone(),
                        ding: plan.ding.clone(),
                        eval_binary: plan.eval_binary.clone(),
                        row: *row,
                        arm: *arm,
                        seed: trial_seed(plan.seed, index),
                        index,
                        evidence_dir: PathBuf::new(),
                    };
                    spec.evidence_dir = trials_dir.join(trial_id(&spec));
                    let one = scenario::run_trial(&spec);
                    say(&summary(&one));
                    facts.push(one);
                }
            }
        }
    }
    let meta = Meta {
        date: report::date_of(unix_ms()),
        commit,
        harnesses: plan
            .harnesses
            .iter()
            .map(|(harness, binary)| HarnessInfo {
                name: harness.name.to_string(),
                version: version(binary),
            })
            .collect(),
        seed: plan.seed,
        trials_per_row: plan.trials,
        duration_ms: started.elapsed().as_millis() as u64,
    };
    let report = report::build(meta, facts);
    write_report(&report, &plan.out)?;
    Ok(report)
}

fn write_report(report: &Report, out: &Path) -> Result<()> {
    let json = serde_json::to_string_pretty(report).context("encode the report")?;
    fs::write(out.join("report.json"), json).context("write report.json")?;
    fs::write(out.join("report.md"), report::markdown(report)).context("write report.md")?;
    Ok(())
}

/// One line about a finished trial.
pub fn summary(facts: &TrialFacts) -> String {
    let head = format!(
        "{} row {} {} {} #{} seed {}",
        facts.harness, facts.row, facts.row_slug, facts.arm, facts.trial, facts.seed
    );
    let outcome = match &facts.outcome {
        Outcome::Ran => "ran".to_string(),
        Outcome::NotRun(reason) => return format!("{head}: not run: {reason}"),
        Outcome::Error(reason) => format!("NOT DRIVEN TO THE END: {}", first_line(reason)),
    };
    let Some(m) = &facts.metrics else {
        return format!("{head}: {outcome}");
    };
    format!(
        "{head}: {outcome}; delivered {}/{}, drafts corrupted {}/{}, dialogs answered by DING {}/{}, model calls {} (+{} titles), DING PTY bytes {} [{:.1} s]",
        m.delivered,
        m.messages.len(),
        m.drafts_corrupted,
        m.typed,
        m.dialogs_answered_by_ding,
        m.dialogs.len(),
        m.calls.turn_calls,
        m.calls.titles,
        m.pty.delivery_bytes,
        facts.duration_ms as f64 / 1000.0
    )
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// The commit the `ding` at `ding` was built from, as its `--version`
/// says; the checkout's, if it cannot say.
fn driven_commit(ding: &Path) -> String {
    let said = Command::new(ding)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned());
    said.as_deref()
        .and_then(commit_in_version)
        .map_or_else(checkout_commit, str::to_string)
}

/// `46a8f24a1b2c` in `ding 0.1.0 (commit 46a8f24a1b2c)`; `None` for
/// `unknown` or anything else.
fn commit_in_version(version: &str) -> Option<&str> {
    let commit = version.split_once("(commit ")?.1.split_once(')')?.0;
    (commit != "unknown" && !commit.is_empty()).then_some(commit)
}

/// The checked-out commit, `+dirty` when the tree has changes; `unknown`
/// outside a git checkout.
fn checkout_commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|status| !status.is_empty());
            if dirty { format!("{hash}+dirty") } else { hash }
        }
        None => "unknown".into(),
    }
}

/// What the harness binary says with `--version`, run in an empty scratch
/// home so that it touches nothing of the user's.
fn version(binary: &Path) -> String {
    let home = std::env::temp_dir().join(format!("ding-eval-version-{}", std::process::id()));
    let _ = fs::create_dir_all(&home);
    let output = Command::new(binary)
        .arg("--version")
        .env("HOME", &home)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let _ = fs::remove_dir_all(&home);
    output
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "version unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 10-trial run of 2026-12-05 drove a `ding` built from 46a8f24
    /// while the checkout moved on, and its report named the checkout's
    /// commit at the end (83ed2626546c): the report names the driven
    /// binary's own.
    #[test]
    fn the_report_names_the_commit_the_driven_ding_was_built_from() {
        assert_eq!(
            commit_in_version("ding 0.1.0 (commit 46a8f24a1b2c)\n"),
            Some("46a8f24a1b2c")
        );
        assert_eq!(commit_in_version("ding 0.1.0 (commit unknown)"), None);
        assert_eq!(commit_in_version("something else"), None);
    }

    #[test]
    fn the_install_scripts_lines_name_each_harness() {
        let names: Vec<&str> = harnesses::HARNESSES.iter().map(|p| p.name).collect();
        let text: String = names
            .iter()
            .map(|name| {
                format!(
                    "DING_HARNESS_{}=/opt/{name}/bin\n",
                    name.to_ascii_uppercase()
                )
            })
            .collect();
        let found = harnesses_from_env_file(&text).expect("harnesses");
        assert_eq!(found.len(), names.len());
        for ((harness, path), name) in found.iter().zip(&names) {
            assert_eq!(harness.name, *name);
            assert_eq!(path, &PathBuf::from(format!("/opt/{name}/bin")));
        }
        assert!(harnesses_from_env_file("OTHER=1\n").is_err());
    }
}
