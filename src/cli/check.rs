//! `ding check`: validate agent declarations, print one summary line per
//! agent (or only the fingerprints), and exit non-zero on any error.
//!
//! Diagnostics go to stderr, results to stdout, so `ding check --fingerprint
//! a.kdl` composes in scripts. Validation itself lives in `decl`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::adapter_check;
use super::help::help_asked;
use crate::decl::{self, AgentSpec};

const SHORT_HELP: &str = "\
Usage: ding check [--fingerprint] [--agent NAME] [--portable] [--adapters]
                  AGENT.kdl...

Validate declarations; print `NAME: delivery=... adapter=... fingerprint=...`.
  --fingerprint   print only the fingerprints, one per agent
  --agent NAME    only this agent
  --portable      check the files only, not what they need from this machine
  --adapters      also ask each adapter whether its setup is complete
  -h, --help      this help (--help says more)
";

const LONG_HELP: &str = "\
Usage: ding check [--fingerprint] [--agent NAME] [--portable] [--adapters] AGENT.kdl...

Validates each agent declaration (KDL v2) and prints one line per agent:

  NAME: delivery=POLICY adapter=[\"ARGV\",...] fingerprint=sha256:HEX

adapter is `none` for policies without an adapter. The fingerprint covers
what the agent's DING sidecar depends on (name, inbox, policy, the literal
adapter argv, tunables); a running sidecar whose fingerprint differs has
drifted from its declaration. Whitespace, comments and node order never
change it.

Errors and warnings go to stderr as `FILE:LINE:COL: error: MESSAGE`, each
followed by `  hint:` lines. Warnings do not fail the check.

Then what each valid agent needs from this machine: a variable its
commands name that is unset or empty here (`$ST_HOOKS`) is an error; a
program that is not found (on PATH, or at its path) and a `cwd` that does
not exist are warnings, since the file may be meant for another machine.
`ding up` refuses to start with any of them.

With --adapters, each agent's adapter is run once (its argv expanded from
this environment, so $ST_HOOKS must be set) with DING_ADAPTER_CHECK=1; it
says whether what it relies on is in place (for example the harness's hook
configuration, or an environment, this one with the declared env over it,
in which the harness draws a screen the adapter reads) and exits. Its line
is printed as `NAME: adapter: TEXT`; an adapter that reports a problem,
fails or says nothing within 10 s makes the check fail.

Options:
  --fingerprint   print only `sha256:HEX`, one line per agent, file order
  --agent NAME    only report the agent NAME (an error if no file has it)
  --portable      skip the checks of this machine (variables, programs, cwd)
  --adapters      run each adapter's setup check (see above)
  -h              short help
  --help          this help

Exit status: 0 valid, 1 any declaration has an error, 2 usage or I/O error.
The reference is docs/declaration.md.
";

#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    fingerprint_only: bool,
    portable: bool,
    adapters: bool,
    agent: Option<String>,
    files: Vec<PathBuf>,
}

fn parse_options(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let mut options = Options::default();
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, SHORT_HELP, LONG_HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("fingerprint") => options.fingerprint_only = true,
            Arg::Long("portable") => options.portable = true,
            Arg::Long("adapters") => options.adapters = true,
            Arg::Long("agent") => options.agent = Some(parser.value()?.string()?),
            Arg::Value(value) => options.files.push(PathBuf::from(value)),
            other => bail!("{}\nRun `ding check -h` for usage", other.unexpected()),
        }
    }
    if options.files.is_empty() {
        bail!(
            "`ding check` needs a declaration file\nUsage: ding check [--fingerprint] [--agent NAME] [--portable] [--adapters] AGENT.kdl..."
        );
    }
    Ok(Some(options))
}

/// `NAME: delivery=POLICY adapter=[...] fingerprint=sha256:...`.
pub fn summary_line(agent: &AgentSpec) -> String {
    let adapter = match agent.adapter_command() {
        Some(argv) => serde_json::to_string(argv).unwrap_or_else(|_| "?".into()),
        None => "none".into(),
    };
    format!(
        "{}: delivery={} adapter={adapter} fingerprint={}",
        agent.name,
        agent.ding.policy.token(),
        agent.fingerprint()
    )
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse_options(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let mut stdout = std::io::stdout().lock();
    let mut any_error = false;
    let mut agent_found = false;
    for file in &options.files {
        let checked = decl::check_file(file)?;
        let rendered = checked.render_diagnostics();
        if !rendered.is_empty() {
            eprint!("{rendered}");
            eprintln!(
                "ding check: {}: {} error(s), {} warning(s)",
                file.display(),
                checked.error_count(),
                checked.warning_count()
            );
        }
        any_error |= checked.has_errors();
        for agent in &checked.agents {
            if options
                .agent
                .as_ref()
                .is_some_and(|wanted| *wanted != agent.name)
            {
                continue;
            }
            agent_found = true;
            if !options.portable {
                any_error |= report_machine_problems(file, agent);
            }
            if options.fingerprint_only {
                writeln!(stdout, "{}", agent.fingerprint())?;
            } else {
                writeln!(stdout, "{}", summary_line(agent))?;
            }
            if options.adapters
                && let Some(argv) = agent.adapter_command()
            {
                let (ok, said) = adapter_check::run(argv, agent.command.as_deref(), &agent.env);
                let verdict = if ok {
                    "adapter"
                } else {
                    "adapter check FAILED"
                };
                writeln!(stdout, "{}: {verdict}: {said}", agent.name)?;
                any_error |= !ok;
            }
        }
    }
    stdout.flush()?;
    if any_error {
        return Ok(ExitCode::from(1));
    }
    if let Some(wanted) = &options.agent
        && !agent_found
    {
        bail!("no agent `{wanted}` is declared in the given files");
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what `agent` lacks on this machine, as `FILE: error|warning:
/// agent `NAME`: ...`; returns whether any of it is an error.
fn report_machine_problems(file: &std::path::Path, agent: &AgentSpec) -> bool {
    let mut any_error = false;
    for problem in decl::preflight(agent, |name| std::env::var_os(name)) {
        let error = problem.is_error_for_check();
        any_error |= error;
        let hint = match &problem {
            decl::Problem::Variable { .. } => "export it in the environment `ding up` runs in",
            decl::Problem::ProgramNotFound { .. } | decl::Problem::NotExecutable { .. } => {
                "install it, give its path, or set PATH; `ding up` refuses to start without it"
            }
            decl::Problem::MissingCwd { .. } | decl::Problem::CwdNotDirectory { .. } => {
                "create it (relative paths are relative to the declaration's directory)"
            }
        };
        eprintln!(
            "{}: {}: agent `{}`: {}\n  hint: {hint}",
            crate::escape::displayable(&file.display().to_string()),
            if error { "error" } else { "warning" },
            agent.name,
            crate::escape::displayable(&problem.to_string())
        );
    }
    any_error
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>> {
        let mut parser = lexopt::Parser::from_args(args.iter().copied());
        parse_options(&mut parser)
    }

    #[test]
    fn fingerprint_flag_selects_fingerprint_only_output() {
        let options = parse(&["--fingerprint", "a.kdl"]).unwrap().unwrap();
        assert!(options.fingerprint_only);
        assert_eq!(options.files, [PathBuf::from("a.kdl")]);
    }

    #[test]
    fn agent_flag_takes_a_name() {
        let options = parse(&["--agent", "worker", "a.kdl", "b.kdl"])
            .unwrap()
            .unwrap();
        assert_eq!(options.agent.as_deref(), Some("worker"));
        assert_eq!(options.files.len(), 2);
        assert!(parse(&["a.kdl", "--agent"]).is_err());
    }

    #[test]
    fn a_file_is_required_and_unknown_flags_fail() {
        assert!(
            parse(&[])
                .unwrap_err()
                .to_string()
                .contains("needs a declaration file")
        );
        assert!(parse(&["--frobnicate", "a.kdl"]).is_err());
    }
}
