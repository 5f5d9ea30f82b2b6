//! `ding systemd-unit NAME`: print a systemd user unit that keeps agent
//! NAME up, for people who want it started at boot and restarted when it
//! dies.
//!
//! The unit runs `ding up FILE --agent NAME --foreground` (the supervisor
//! in `supervise`): systemd restarts the supervisor if it fails, the
//! supervisor restarts a PTY host or sidecar that died, the sidecar
//! restarts its adapter. `systemctl --user stop` sends SIGTERM to the
//! supervisor only (`KillMode=mixed`), which stops the sidecar, then the
//! PTY host, in order, as `ding down` does.
//!
//! The environment that decides where things are and what runs is taken
//! from the shell that prints the unit: `PATH` (the harness's program is
//! looked up in it), `ST_HOOKS`, the XDG directories (a variable unset
//! here is unset in the unit too, so `ding status` from this shell finds
//! the agent). Declared `env` values are not in the unit: the supervisor
//! reads them from the declaration when it starts the agent.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::agent_decl::load_agents;
use super::exit::Failure;
use super::help::help_asked;
use crate::ding_binary::ding_binary;
use crate::sidecar::agent_record::AgentRecord;
use crate::sidecar::paths::{AgentPaths, DirsEnv};

const HELP: &str = "\
Usage: ding systemd-unit NAME [--decl AGENT.kdl]

Print a systemd user unit that keeps agent NAME up: it runs
`ding up AGENT.kdl --agent NAME --foreground`, which restarts a PTY host or
sidecar that dies, and systemd restarts it if it fails. Install it with

  ding systemd-unit NAME > ~/.config/systemd/user/ding-NAME.service
  systemctl --user daemon-reload
  systemctl --user enable --now ding-NAME.service
  loginctl enable-linger \"$USER\"   # to start it at boot, not at login

Stop it with `systemctl --user stop ding-NAME` (or `ding down NAME`, after
which the supervisor ends too). PATH, ST_HOOKS and the XDG directories of
this shell are written into the unit.

  --decl FILE  the declaration (default: the one NAME last ran from)
  -h, --help   this help

Exit status: 0 printed, 4 NAME never ran here and no --decl names it.
";

/// The variables the unit carries over from this shell.
const CARRIED: [&str; 5] = [
    "PATH",
    "ST_HOOKS",
    "XDG_RUNTIME_DIR",
    "XDG_STATE_HOME",
    "HOME",
];

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let (mut name, mut declaration) = (None, None);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(ExitCode::SUCCESS);
        }
        match arg {
            Arg::Long("decl") => declaration = Some(PathBuf::from(parser.value()?)),
            Arg::Value(value) if name.is_none() => name = Some(value.string()?),
            other => bail!(
                "{}\nUsage: ding systemd-unit NAME [--decl AGENT.kdl]",
                other.unexpected()
            ),
        }
    }
    let Some(name) = name else {
        bail!(
            "`ding systemd-unit` needs an agent name\nUsage: ding systemd-unit NAME [--decl AGENT.kdl]"
        );
    };
    let declaration = match declaration {
        Some(path) => path,
        None => {
            let paths = AgentPaths::resolve(&name, &DirsEnv::from_process())?;
            match AgentRecord::load(paths.state_dir())? {
                Some(record) => record.declaration,
                None => {
                    return Err(Failure::UnknownAgent.because(format!(
                        "no agent `{name}` has run here, so its declaration is unknown\nhint: pass --decl AGENT.kdl"
                    )));
                }
            }
        }
    };
    // Valid, and declares NAME: a unit that cannot start is no use.
    let (declaration, _) = load_agents(&declaration, std::slice::from_ref(&name))?;
    let exe = ding_binary()?;
    let text = unit(
        &name,
        &exe.to_string_lossy(),
        &declaration.to_string_lossy(),
        |key| std::env::var(key).ok(),
    );
    write!(std::io::stdout(), "{text}")?;
    Ok(ExitCode::SUCCESS)
}

/// The unit's text.
pub fn unit(
    name: &str,
    exe: &str,
    declaration: &str,
    env: impl Fn(&str) -> Option<String>,
) -> String {
    let exec = [exe, "up", declaration, "--agent", name, "--foreground"]
        .iter()
        .map(|arg| quote(arg))
        .collect::<Vec<_>>()
        .join(" ");
    let mut environment = String::new();
    let mut unset = Vec::new();
    for key in CARRIED {
        match env(key) {
            Some(value) => environment.push_str(&format!(
                "Environment={}\n",
                quote_assignment(&format!("{key}={value}"))
            )),
            None => unset.push(key),
        }
    }
    if !unset.is_empty() {
        environment.push_str(&format!("UnsetEnvironment={}\n", unset.join(" ")));
    }
    let shown = escape_for_systemd(declaration, false);
    format!(
        "# ding agent {name}, declared in {shown}\n\
         # Written by `ding systemd-unit {name}`. Install:\n\
         #   ding systemd-unit {name} > ~/.config/systemd/user/ding-{name}.service\n\
         #   systemctl --user daemon-reload && systemctl --user enable --now ding-{name}.service\n\
         #   loginctl enable-linger \"$USER\"   # to start it at boot, not at login\n\
         [Unit]\n\
         Description=ding agent {name} ({shown})\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={exec}\n\
         {environment}\
         Restart=on-failure\n\
         RestartSec=5\n\
         # SIGTERM to the supervisor only: it stops the sidecar, then the PTY host.\n\
         KillMode=mixed\n\
         TimeoutStopSec=30\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n"
    )
}

/// One word of a systemd command line (`ExecStart=`), double-quoted: `\`
/// and `"` escaped, `%` (a specifier) and `$` (a variable) doubled, and
/// every character that is not plain text (`crate::escape`: controls, line
/// breaks, bidi and format characters) as the `\xHH` of its bytes, which
/// systemd decodes: the word reaches the program exactly, and the unit
/// prints nothing raw to a terminal.
pub fn quote(word: &str) -> String {
    format!("\"{}\"", escape_for_systemd(word, true))
}

/// [`quote`] for an `Environment=` assignment, where `$` means itself.
pub fn quote_assignment(word: &str) -> String {
    format!("\"{}\"", escape_for_systemd(word, false))
}

/// The text of [`quote`], unquoted; `$` doubled only in command lines.
fn escape_for_systemd(text: &str, command_line: bool) -> String {
    let mut escaped = String::new();
    for c in text.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '%' => escaped.push_str("%%"),
            '$' if command_line => escaped.push_str("$$"),
            c if crate::escape::is_plain(c) => escaped.push(c),
            other => {
                let mut bytes = [0; 4];
                for byte in other.encode_utf8(&mut bytes).bytes() {
                    escaped.push_str(&format!("\\x{byte:02x}"));
                }
            }
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_so_systemd_passes_them_exactly() {
        assert_eq!(quote("plain"), "\"plain\"");
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote(r#"q"\%$"#), r#""q\"\\%%$$""#);
        assert_eq!(quote("a\nb\u{1b}]0;x"), r#""a\x0ab\x1b]0;x""#);
        assert_eq!(quote("ünï/code"), "\"ünï/code\"");
        assert_eq!(quote("bidi\u{202e}"), r#""bidi\xe2\x80\xae""#);
        assert_eq!(quote_assignment("P=/a$b%c"), r#""P=/a$b%%c""#);
    }

    #[test]
    fn the_unit_runs_the_supervisor_and_carries_the_environment() {
        let text = unit("w", "/bin/ding", "/p/a.kdl", |key| {
            (key == "PATH").then(|| "/usr/bin".to_string())
        });
        assert!(text.contains(
            "ExecStart=\"/bin/ding\" \"up\" \"/p/a.kdl\" \"--agent\" \"w\" \"--foreground\"\n"
        ));
        assert!(text.contains("Environment=\"PATH=/usr/bin\"\n"));
        assert!(text.contains("UnsetEnvironment=ST_HOOKS XDG_RUNTIME_DIR XDG_STATE_HOME HOME\n"));
        assert!(text.contains("Restart=on-failure\n") && text.contains("KillMode=mixed\n"));
    }
}
