//! `ding-eval trial`: one trial of one row in one arm on one real harness,
//! the very runner `ding-eval run` repeats, with its facts printed as JSON.
//! The real-pane smoke tests run it as a user runs the evaluation, from
//! outside, and assert on those facts.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use lexopt::prelude::*;

use crate::arm::Arm;
use crate::harnesses;
use crate::row::Row;
use crate::run::summary;
use crate::scenario::run_trial;
use crate::trial::TrialSpec;
use ding::cli::help::help_asked;

fn help() -> String {
    format!(
        "\
Usage: ding-eval trial --harness NAME --binary PATH --row N --arm ARM --seed S
       --evidence DIR [--ding PATH]

Run one trial of the A/B evaluation and print what it found as one JSON
object on stdout (its summary line on stderr). DIR keeps the trial's logs.

Options:
  --harness NAME   the harness: {}
  --binary PATH    the installed harness binary
  --row N          the matrix row (1-12)
  --arm ARM        aggressive or careful
  --seed S         the trial's seed (a printed one replays it)
  --evidence DIR   where the trial's logs are kept
  --ding PATH      the ding the trial drives (default: the one next to
                   this ding-eval)
  -h, --help       print help
",
        harnesses::names()
    )
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(spec) = parse(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let facts = run_trial(&spec);
    eprintln!("{}", summary(&facts));
    let json = serde_json::to_string(&facts).context("encode the trial's facts")?;
    writeln!(std::io::stdout(), "{json}")?;
    Ok(ExitCode::SUCCESS)
}

/// `None` when help was printed.
fn parse(parser: &mut lexopt::Parser) -> Result<Option<TrialSpec>> {
    let (mut harness, mut binary, mut row, mut arm) = (None, None, None, None);
    let (mut seed, mut evidence, mut ding) = (None, None, None);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, help(), help())? {
            return Ok(None);
        }
        match arg {
            Long("harness") => harness = Some(parser.value()?.string()?),
            Long("binary") => binary = Some(PathBuf::from(parser.value()?)),
            Long("row") => row = Some(Row::by_number(parser.value()?.parse()?)?),
            Long("arm") => arm = Some(Arm::parse(&parser.value()?.string()?)?),
            Long("seed") => seed = Some(parser.value()?.parse::<u64>()?),
            Long("evidence") => evidence = Some(PathBuf::from(parser.value()?)),
            Long("ding") => ding = Some(PathBuf::from(parser.value()?)),
            other => return Err(other.unexpected().into()),
        }
    }
    let names = harnesses::names();
    let name = harness.with_context(|| format!("--harness is required: {names}"))?;
    let Some(harness) = harnesses::by_name(&name) else {
        bail!("unknown harness `{name}`: {names}");
    };
    let eval_binary = std::env::current_exe().context("locate the ding-eval binary")?;
    let ding = ding.unwrap_or_else(|| eval_binary.with_file_name("ding"));
    Ok(Some(TrialSpec {
        harness,
        harness_binary: binary.context("--binary PATH is required")?,
        ding,
        eval_binary,
        row: row.context("--row N is required")?,
        arm: arm.context("--arm ARM is required")?,
        seed: seed.context("--seed S is required")?,
        index: 0,
        evidence_dir: evidence.context("--evidence DIR is required")?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Option<TrialSpec>> {
        parse(&mut lexopt::Parser::from_args(args))
    }

    #[test]
    fn every_part_of_a_trial_is_named_and_nothing_is_guessed() {
        let all = [
            "--harness",
            harnesses::HARNESSES[0].name,
            "--binary",
            "/opt/h",
            "--row",
            "4",
            "--arm",
            "careful",
            "--seed",
            "7",
            "--evidence",
            "/e",
        ];
        let spec = parse_args(&all).expect("parse").expect("a spec");
        assert_eq!(spec.row, Row::ExactIdle);
        assert_eq!(spec.arm, Arm::Careful);
        assert_eq!((spec.seed, spec.index), (7, 0));
        for missing in (0..all.len()).step_by(2) {
            let mut args = all.to_vec();
            args.drain(missing..missing + 2);
            assert!(parse_args(&args).is_err(), "without {}", all[missing]);
        }
        assert!(parse_args(&["--harness", "nonesuch"]).is_err());
    }
}
