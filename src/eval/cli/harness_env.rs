//! `ding-eval harness-env`: prepare a scratch home in which a real
//! harness starts model-free against the loopback model server, and print
//! how to run it (or write it as an agent declaration for `ding up`).
//!
//! This file turns argv into a `launch::Setup` and hands it to the
//! harness folder named by the first argument; the names live in
//! `harnesses`, never here.

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use lexopt::prelude::*;

use crate::harnesses::{self, Harness};
use crate::launch::{Permission, Setup};
use ding::cli::help::help_asked;
use ding::decl::is_valid_agent_name;

fn short() -> String {
    format!(
        "\
Usage: ding-eval harness-env HARNESS --binary PATH --home DIR --model-url URL
       [--cwd DIR] [--permission manual|auto] [--decl FILE [--agent NAME]]

Prepare a scratch home that starts a real harness with no first-run dialog
against a loopback model server, and print its argv, env and cwd as JSON.

Options:
  HARNESS                   the harness: {}
  --binary PATH             the harness's native executable
  --home DIR                the scratch home (created; the harness's HOME)
  --model-url URL           the model server, http://127.0.0.1:PORT
  --cwd DIR                 the project directory (default: DIR/project)
  --permission manual|auto  ask before running commands (default: manual)
  --decl FILE               also write an agent declaration for `ding up`
  --agent NAME              the declared agent's name (default: HARNESS)
  -h, --help                print help
",
        harnesses::names()
    )
}

const LONG: &str = "
The home gets exactly the files that skip the harness's first-run dialogs
(onboarding, theme, folder trust, API key approval, login) and point it at
the model server; an existing file the harness keeps its own state in is
merged, not replaced. The JSON is {\"argv\":[...],\"env\":{...},\"cwd\":\"...\"};
the env is added to the inherited environment. The declaration runs the same
launch under the default (aggressive) policy, with no `ding {}` block.
See docs/providers/model-servers.md.
";

/// What the command line asked for.
pub struct Request {
    pub harness: &'static Harness,
    pub setup: Setup,
    /// Where to write a declaration, and the agent's name in it.
    pub declaration: Option<(PathBuf, String)>,
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(request) = parse(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let launch = (request.harness.prepare)(&request.setup)?;
    if let Some((path, agent)) = &request.declaration {
        fs::write(path, launch.declaration(agent))
            .with_context(|| format!("write {}", path.display()))?;
    }
    writeln!(std::io::stdout(), "{}", launch.to_json())?;
    Ok(ExitCode::SUCCESS)
}

/// `None` when help was printed.
pub fn parse(parser: &mut lexopt::Parser) -> Result<Option<Request>> {
    let mut harness = None;
    let mut binary = None;
    let mut home: Option<PathBuf> = None;
    let mut model_url = None;
    let mut cwd = None;
    let mut permission = Permission::Manual;
    let mut decl = None;
    let mut agent = None;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, short(), format_args!("{}{LONG}", short()))? {
            return Ok(None);
        }
        match arg {
            Value(value) if harness.is_none() => harness = Some(value.string()?),
            Long("binary") => binary = Some(PathBuf::from(parser.value()?)),
            Long("home") => home = Some(PathBuf::from(parser.value()?)),
            Long("model-url") => model_url = Some(parser.value()?.string()?),
            Long("cwd") => cwd = Some(PathBuf::from(parser.value()?)),
            Long("permission") => permission = Permission::parse(&parser.value()?.string()?)?,
            Long("decl") => decl = Some(PathBuf::from(parser.value()?)),
            Long("agent") => agent = Some(parser.value()?.string()?),
            other => return Err(other.unexpected().into()),
        }
    }
    let names = harnesses::names();
    let name = harness.with_context(|| format!("name the harness: {names}"))?;
    let Some(harness) = harnesses::by_name(&name) else {
        bail!("unknown harness `{name}`: {names}");
    };
    let home = home.context("--home DIR is required")?;
    let model_url = model_url.context("--model-url URL is required")?;
    if !model_url.starts_with("http://127.0.0.1:") {
        bail!("--model-url must be a loopback server, http://127.0.0.1:PORT, got `{model_url}`");
    }
    let declaration = match (decl, agent) {
        (Some(path), agent) => {
            let agent = agent.unwrap_or(name);
            if !is_valid_agent_name(&agent) {
                bail!("`{agent}` is not a valid agent name");
            }
            Some((path, agent))
        }
        (None, Some(_)) => bail!("--agent names the agent of --decl FILE"),
        (None, None) => None,
    };
    Ok(Some(Request {
        harness,
        setup: Setup {
            binary: binary.context("--binary PATH is required")?,
            cwd: cwd.unwrap_or_else(|| home.join("project")),
            home,
            model_url,
            permission,
            ask_at_startup: false,
            outside_dirs: Vec::new(),
        },
        declaration,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Option<Request>> {
        parse(&mut lexopt::Parser::from_args(args.iter().copied()))
    }

    fn minimal(harness: &str) -> Vec<&str> {
        vec![
            harness,
            "--binary",
            "/b",
            "--home",
            "/h",
            "--model-url",
            "http://127.0.0.1:5",
        ]
    }

    #[test]
    fn defaults_are_manual_permission_a_project_in_the_home_and_no_declaration() {
        for harness in &harnesses::HARNESSES {
            let request = parse_args(&minimal(harness.name))
                .expect("parses")
                .expect("request");
            assert_eq!(request.harness.name, harness.name);
            assert_eq!(request.setup.permission, Permission::Manual);
            assert_eq!(request.setup.cwd, PathBuf::from("/h/project"));
            assert_eq!(request.setup.binary, PathBuf::from("/b"));
            assert!(request.declaration.is_none());
        }
    }

    #[test]
    fn test_cwd_permission_decl_and_agent() {
        let harness = harnesses::HARNESSES[0].name;
        let mut args = minimal(harness);
        args.extend([
            "--cwd",
            "/p",
            "--permission",
            "auto",
            "--decl",
            "a.kdl",
            "--agent",
            "w",
        ]);
        let request = parse_args(&args).expect("parses").expect("request");
        assert_eq!(request.setup.cwd, PathBuf::from("/p"));
        assert_eq!(request.setup.permission, Permission::Auto);
        assert_eq!(
            request.declaration,
            Some((PathBuf::from("a.kdl"), "w".to_string()))
        );
        let mut default_agent = minimal(harness);
        default_agent.extend(["--decl", "a.kdl"]);
        let request = parse_args(&default_agent)
            .expect("parses")
            .expect("request");
        assert_eq!(
            request.declaration,
            Some((PathBuf::from("a.kdl"), harness.to_string()))
        );
    }

    /// `minimal(harness)` with the flag `flag` and its value removed, or
    /// its value replaced by `value`.
    fn changed(harness: &str, flag: &str, value: Option<&'static str>) -> Vec<String> {
        let mut args: Vec<String> = minimal(harness).into_iter().map(String::from).collect();
        let at = args.iter().position(|a| a == flag).expect("flag");
        match value {
            Some(value) => args[at + 1] = value.to_string(),
            None => drop(args.drain(at..at + 2)),
        }
        args
    }

    fn refused(args: &[String]) -> bool {
        parse(&mut lexopt::Parser::from_args(
            args.iter().map(String::as_str),
        ))
        .is_err()
    }

    #[test]
    fn missing_unknown_or_unsafe_values_are_refused() {
        let harness = harnesses::HARNESSES[0].name;
        let mut unknown = changed(harness, "--home", Some("/h"));
        unknown[0] = "nope".into();
        assert!(refused(&unknown));
        assert!(refused(&changed(harness, "--binary", None)));
        assert!(refused(&changed(harness, "--home", None)));
        assert!(refused(&changed(harness, "--model-url", None)));
        assert!(refused(&changed(
            harness,
            "--model-url",
            Some("https://example.com")
        )));
        assert!(refused(&changed(
            harness,
            "--model-url",
            Some("http://10.0.0.1:5")
        )));
        for extra in [
            &["--decl", "a.kdl", "--agent", "no spaces"][..],
            &["--agent", "w"],
            &["--permission", "yolo"],
        ] {
            let mut args = changed(harness, "--home", Some("/h"));
            args.extend(extra.iter().map(|a| a.to_string()));
            assert!(refused(&args), "{extra:?}");
        }
    }
}
