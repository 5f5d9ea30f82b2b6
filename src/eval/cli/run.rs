//! `ding-eval run`: the A/B evaluation on the real harnesses,
//! what `make eval` runs. Parses the plan and hands it to `run`;
//! prints one line per trial and, at the end, the report's tables.

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use lexopt::prelude::*;

use crate::arm::Arm;
use crate::harnesses;
use crate::report;
use crate::rng::fresh_seed;
use crate::row::Row;
use crate::run::{self, Plan};
use ding::cli::help::help_asked;

/// Trials per row and arm when `DING_EVAL_TRIALS` is not set: the fewest
/// on which a row's extra model calls can be told from none (one trial
/// decides nothing), about 50 minutes for both arms of every row on both
/// harnesses on 2 cores.
pub const DEFAULT_TRIALS: u32 = 5;

fn help() -> String {
    format!(
        "\
Usage: ding-eval run --harnesses FILE [--harness NAME]... [--row N]...
       [--arm aggressive|careful]... [--trials N] [--seed S] [--out DIR] [--ding PATH]

Run the A/B evaluation: every matrix row (1-12) for each harness in both
arms, the trials one at a time, and write DIR/report.md, DIR/report.json
and DIR/trials/ (each trial's logs).

Options:
  --harnesses FILE   lines DING_HARNESS_NAME=PATH, as scripts/install-harnesses.sh
                     prints them
  --harness NAME     only this harness ({}); repeatable
  --row N            only this row; repeatable
  --arm ARM          only this arm; repeatable
  --trials N         trials per row and arm (default: DING_EVAL_TRIALS, else {DEFAULT_TRIALS})
  --seed S           base seed; trial i runs on S+i (default: DING_EVAL_SEED, else fresh)
  --out DIR          the output directory (default: target/eval)
  --ding PATH        the ding the trials drive (default: the one next to
                     this ding-eval)
  -h, --help         print help

A printed trial seed replays that trial: DING_EVAL_SEED=SEED with
--trials 1 and its --row and --harness. See docs/evaluation.md.
",
        harnesses::names()
    )
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(plan) = parse(parser, |key| std::env::var(key).ok())? else {
        return Ok(ExitCode::SUCCESS);
    };
    let mut stdout = std::io::stdout();
    let report = run::run(&plan, &mut |line| {
        let _ = writeln!(std::io::stdout(), "{line}");
    })?;
    writeln!(stdout, "\n{}", report::markdown(&report))?;
    writeln!(
        stdout,
        "report: {} and {}",
        plan.out.join("report.md").display(),
        plan.out.join("report.json").display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `None` when help was printed. `env` reads `DING_EVAL_TRIALS` and
/// `DING_EVAL_SEED`.
fn parse(
    parser: &mut lexopt::Parser,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Plan>> {
    let mut harness_file = None;
    let mut only_harnesses: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    let mut arms = Vec::new();
    let mut trials = None;
    let mut seed = None;
    let mut out = PathBuf::from("target/eval");
    let mut ding = None;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, help(), help())? {
            return Ok(None);
        }
        match arg {
            Long("harnesses") => harness_file = Some(PathBuf::from(parser.value()?)),
            Long("harness") => only_harnesses.push(parser.value()?.string()?),
            Long("row") => rows.push(Row::by_number(parser.value()?.parse()?)?),
            Long("arm") => arms.push(Arm::parse(&parser.value()?.string()?)?),
            Long("trials") => trials = Some(parser.value()?.parse::<u32>()?),
            Long("seed") => seed = Some(parser.value()?.parse::<u64>()?),
            Long("out") => out = PathBuf::from(parser.value()?),
            Long("ding") => ding = Some(PathBuf::from(parser.value()?)),
            other => return Err(other.unexpected().into()),
        }
    }
    let harness_file = harness_file.context("--harnesses FILE is required")?;
    let text = fs::read_to_string(&harness_file)
        .with_context(|| format!("read {}", harness_file.display()))?;
    let mut harnesses = run::harnesses_from_env_file(&text)?;
    for name in &only_harnesses {
        if harnesses::by_name(name).is_none() {
            bail!("unknown harness `{name}`: {}", harnesses::names());
        }
    }
    if !only_harnesses.is_empty() {
        harnesses.retain(|(harness, _)| only_harnesses.iter().any(|n| n == harness.name));
    }
    let trials = match (trials, env("DING_EVAL_TRIALS")) {
        (Some(n), _) => n,
        (None, Some(text)) => text
            .trim()
            .parse()
            .with_context(|| format!("DING_EVAL_TRIALS is not a whole number: `{text}`"))?,
        (None, None) => DEFAULT_TRIALS,
    };
    if trials == 0 {
        bail!("at least one trial per row");
    }
    let seed = match (seed, env("DING_EVAL_SEED")) {
        (Some(seed), _) => seed,
        (None, Some(text)) => text
            .trim()
            .parse()
            .with_context(|| format!("DING_EVAL_SEED is not a whole number: `{text}`"))?,
        (None, None) => fresh_seed(),
    };
    if rows.is_empty() {
        rows = Row::ALL.to_vec();
    }
    if arms.is_empty() {
        arms = Arm::ALL.to_vec();
    }
    let eval_binary = std::env::current_exe().context("locate the ding-eval binary")?;
    // The product the trials drive: built beside this binary by the same
    // `cargo build --bins`.
    let ding = ding.unwrap_or_else(|| eval_binary.with_file_name("ding"));
    if !ding.is_file() {
        bail!(
            "no ding at {}: build both binaries (`cargo build --release --bins`), or give --ding PATH",
            ding.display()
        );
    }
    fs::create_dir_all(&out).with_context(|| format!("create {}", out.display()))?;
    Ok(Some(Plan {
        harnesses,
        rows,
        arms,
        trials,
        seed,
        out,
        ding,
        eval_binary,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str], env: &[(&str, &str)]) -> Result<Option<Plan>> {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("harnesses.env");
        let lines: String = harnesses::HARNESSES
            .iter()
            .map(|p| format!("DING_HARNESS_{}=/opt/bin\n", p.name.to_ascii_uppercase()))
            .collect();
        fs::write(&file, lines).expect("write");
        let out = dir.path().join("out");
        // Any file stands for the ding the trials would drive.
        let mut argv = vec![
            "--harnesses".to_string(),
            file.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--ding".into(),
            file.display().to_string(),
        ];
        argv.extend(args.iter().map(|a| a.to_string()));
        let mut parser = lexopt::Parser::from_args(argv);
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(&mut parser, |key| {
            env.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn everything_runs_unless_narrowed_and_the_environment_sets_trials_and_seed() {
        let all = plan(&[], &[]).expect("plan").expect("not help");
        assert_eq!(all.rows.len(), 12);
        assert_eq!(all.arms, Arm::ALL);
        assert_eq!(all.harnesses.len(), harnesses::HARNESSES.len());
        assert_eq!(all.trials, DEFAULT_TRIALS);
        let narrowed = plan(
            &[
                "--row",
                "5",
                "--arm",
                "aggressive",
                "--harness",
                harnesses::HARNESSES[0].name,
            ],
            &[("DING_EVAL_TRIALS", "3"), ("DING_EVAL_SEED", "42")],
        )
        .expect("plan")
        .expect("not help");
        assert_eq!(narrowed.rows, [Row::Draft]);
        assert_eq!(narrowed.arms, [Arm::Aggressive]);
        assert_eq!(narrowed.harnesses.len(), 1);
        assert_eq!((narrowed.trials, narrowed.seed), (3, 42));
        let flags_win = plan(
            &["--trials", "2", "--seed", "9"],
            &[("DING_EVAL_TRIALS", "3")],
        )
        .expect("plan")
        .expect("not help");
        assert_eq!((flags_win.trials, flags_win.seed), (2, 9));
    }

    #[test]
    fn a_ding_that_is_not_there_is_refused_naming_it() {
        let Err(err) = plan(&["--ding", "/nonexistent/ding"], &[]) else {
            panic!("a missing ding was accepted");
        };
        assert!(
            err.to_string()
                .starts_with("no ding at /nonexistent/ding: build both binaries"),
            "{err}"
        );
    }

    #[test]
    fn nonsense_is_refused() {
        assert!(plan(&["--row", "13"], &[]).is_err());
        assert!(plan(&["--arm", "rich"], &[]).is_err());
        assert!(plan(&["--harness", "nope"], &[]).is_err());
        assert!(plan(&[], &[("DING_EVAL_TRIALS", "many")]).is_err());
        assert!(plan(&["--trials", "0"], &[]).is_err());
    }
}
