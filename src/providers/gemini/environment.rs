//! Whether Gemini CLI 0.61.0, run in a given environment, draws the screen
//! its grammar (`screen.rs`) reads: its terminal interface at all, and in
//! colour. `ding compile-agent gemini` refuses `--env` values that stop
//! either (judged over an otherwise empty environment); `ding check
//! --adapters` refuses an environment that would (its own, the
//! declaration's `env` over it, as `ding up` gives the harness).
//!
//! Measured on 0.61.0 under `ding pty` (docs/providers/gemini-findings.md,
//! section 7; `scripts/probe/gemini/p_colour.py`), and read in its bundle:
//!
//! * **Headless**: `CI` or `GITHUB_ACTIONS` exactly `true` (unless
//!   `GEMINI_CLI_INTEGRATION_TEST` is `true`; bundle `isHeadlessMode`):
//!   it prints "No input provided via stdin" and exits with code 42,
//!   whatever its terminal.
//! * **`NO_COLOR`**, set and not empty: Gemini CLI's `NoColor` theme
//!   (bundle `getActiveTheme`) and its line fallback, the composer between
//!   two rules with no colour (`mono-no-color-idle.json`). Empty, it is
//!   ignored (`!!NO_COLOR`).
//! * **No colour at all**: the level of the `supports-color` copy in Ink's
//!   chalk (bundle, `ink/node_modules/chalk/source/vendor/supports-color`)
//!   is 0, and not one style is drawn, not even the composer's inverse
//!   cursor (`mono-ci-false-idle.json`): `FORCE_COLOR` `0` or `false`;
//!   `TERM=dumb`; **`CI` set to any value**, `false` and empty included,
//!   unless a CI vendor's variable is set beside it (`GITHUB_ACTIONS`,
//!   `GITEA_ACTIONS` or `CIRCLECI`: 24-bit colour; `TRAVIS`, `APPVEYOR`,
//!   `GITLAB_CI`, `BUILDKITE`, `DRONE` or `CI_NAME=codeship`: 16 colours);
//!   a `TEAMCITY_VERSION` before 9.1; a `TERM` the library does not know
//!   (`foot`) with no `COLORTERM`. `FORCE_COLOR` of 1 to 3 (or `true`, or
//!   empty) gives colour wherever the level would be 0 but for the first
//!   and the TeamCity rules.
//!
//! 16 colours (`TERM=xterm`, `screen`, `vt100`), 256 and 24-bit
//! (`CI=false` with `GITHUB_ACTIONS=false`, `COLORTERM=truecolor`) all
//! draw a composer the grammar reads (`colour-*.json`). Command-line flags
//! (`--no-color`) are not judged here.

use crate::adapter::HarnessEnv;

/// Why Gemini CLI, in some environment, draws no screen DING reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// `NAME=true`: it runs headless and exits.
    Headless { name: &'static str },
    /// `NO_COLOR` set, not empty: the `NoColor` theme.
    NoColor { value: String },
    /// Its colour library draws no colour, for `cause`.
    Colourless(Colourless),
}

/// Why Gemini CLI's colour library draws no colour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Colourless {
    /// `FORCE_COLOR` `0` or `false`.
    ForceColorOff { value: String },
    /// `TERM=dumb`, with nothing forcing colour.
    DumbTerminal,
    /// `CI` set, to any value, with no CI vendor's variable beside it.
    Ci { value: String },
    /// `TEAMCITY_VERSION` before 9.1.
    TeamCity { value: String },
    /// A `TERM` the library knows no colour for, and no `COLORTERM`.
    UnknownTerm { term: String },
}

/// CI vendors' variables that give colour beside `CI`.
const CI_WITH_COLOUR: [&str; 8] = [
    "GITHUB_ACTIONS",
    "GITEA_ACTIONS",
    "CIRCLECI",
    "TRAVIS",
    "APPVEYOR",
    "GITLAB_CI",
    "BUILDKITE",
    "DRONE",
];

/// What Gemini CLI, run in `env`, would fail to draw, if anything.
pub fn judge(env: &HarnessEnv) -> Option<Stopped> {
    let integration_test = env.get("GEMINI_CLI_INTEGRATION_TEST") == Some("true");
    if !integration_test {
        for name in ["CI", "GITHUB_ACTIONS"] {
            if env.get(name) == Some("true") {
                return Some(Stopped::Headless { name });
            }
        }
    }
    if let Some(value) = env.get("NO_COLOR").filter(|value| !value.is_empty()) {
        return Some(Stopped::NoColor {
            value: value.into(),
        });
    }
    colourless(env).map(Stopped::Colourless)
}

/// `supports-color`'s level for a terminal on Linux, as far as it is 0.
fn colourless(env: &HarnessEnv) -> Option<Colourless> {
    let forced = env.get("FORCE_COLOR").map(force_color);
    if let Some(Some(0)) = forced {
        return Some(Colourless::ForceColorOff {
            value: env.get("FORCE_COLOR").unwrap_or_default().into(),
        });
    }
    if env.has("TF_BUILD") && env.has("AGENT_NAME") {
        return None;
    }
    // The level a rule that gives none falls back to.
    let forced_on = matches!(forced, Some(Some(level)) if level > 0);
    let or_forced = |cause: Colourless| (!forced_on).then_some(cause);
    let term = env.get("TERM").unwrap_or_default();
    if term == "dumb" {
        return or_forced(Colourless::DumbTerminal);
    }
    if let Some(value) = env.get("CI") {
        let vendor = CI_WITH_COLOUR.iter().any(|name| env.has(name))
            || env.get("CI_NAME") == Some("codeship");
        return if vendor {
            None
        } else {
            or_forced(Colourless::Ci {
                value: value.into(),
            })
        };
    }
    if let Some(version) = env.get("TEAMCITY_VERSION") {
        return (!teamcity_has_colour(version)).then(|| Colourless::TeamCity {
            value: version.into(),
        });
    }
    let known = env.get("COLORTERM") == Some("truecolor")
        || matches!(term, "xterm-kitty" | "xterm-ghostty" | "wezterm")
        || matches!(
            env.get("TERM_PROGRAM"),
            Some("iTerm.app" | "Apple_Terminal")
        )
        || term_has_colour(term)
        || env.has("COLORTERM");
    if known {
        return None;
    }
    or_forced(Colourless::UnknownTerm { term: term.into() })
}

/// `FORCE_COLOR` as the library reads it: `Some(level)`, or `None` when it
/// forces nothing (JavaScript's `parseInt` found no number).
fn force_color(value: &str) -> Option<i64> {
    match value {
        "true" | "" => return Some(1),
        "false" => return Some(0),
        _ => {}
    }
    // `Number.parseInt(value, 10)`: leading blanks, a sign, digits.
    let text = value.trim_start();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
    let number: i64 = digits.get(..digits.len().min(4))?.parse().ok()?;
    Some((sign * number).min(3))
}

/// The library's TERM patterns: `-256(color)?$` (256 colours), then
/// `^screen|^xterm|^vt100|^vt220|^rxvt|color|ansi|cygwin|linux` (16),
/// ignoring case.
fn term_has_colour(term: &str) -> bool {
    let term = term.to_ascii_lowercase();
    term.ends_with("-256")
        || term.ends_with("-256color")
        || ["screen", "xterm", "vt100", "vt220", "rxvt"]
            .iter()
            .any(|start| term.starts_with(start))
        || ["color", "ansi", "cygwin", "linux"]
            .iter()
            .any(|word| term.contains(word))
}

/// `^(9\.(0*[1-9]\d*)\.|\d{2,}\.)`: TeamCity 9.1 or later, or 10 and on.
fn teamcity_has_colour(version: &str) -> bool {
    let Some((major, rest)) = version.split_once('.') else {
        return false;
    };
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) {
        return false;
    }
    if major.len() >= 2 {
        return true;
    }
    major == "9"
        && rest.split_once('.').is_some_and(|(minor, _)| {
            digits(minor)
                && minor
                    .trim_start_matches('0')
                    .starts_with(|c: char| c != '0')
        })
}

/// Why DING cannot work with a screen drawn without colour.
const UNREAD: &str = "DING reads Gemini CLI's composer by its colours: drawn without them it is never read as empty, so nothing is delivered at idle";

impl Stopped {
    /// The variable, as `NAME=VALUE`.
    pub fn variable(&self) -> String {
        match self {
            Stopped::Headless { name } => format!("{name}=true"),
            Stopped::NoColor { value } => format!("NO_COLOR={value}"),
            Stopped::Colourless(cause) => match cause {
                Colourless::ForceColorOff { value } => format!("FORCE_COLOR={value}"),
                Colourless::DumbTerminal => "TERM=dumb".into(),
                Colourless::Ci { value } => format!("CI={value}"),
                Colourless::TeamCity { value } => format!("TEAMCITY_VERSION={value}"),
                Colourless::UnknownTerm { term } => format!("TERM={term}"),
            },
        }
    }

    /// What it does to Gemini CLI, and so to DING.
    pub fn why(&self) -> String {
        match self {
            Stopped::Headless { .. } => "Gemini CLI runs headless when CI or GITHUB_ACTIONS is `true`: it prints \"No input provided via stdin\" and exits".into(),
            Stopped::NoColor { .. } => format!("Gemini CLI then draws its NoColor theme, the composer between two rules; {UNREAD}"),
            Stopped::Colourless(cause) => {
                let what = match cause {
                    Colourless::ForceColorOff { .. } => "FORCE_COLOR turns Gemini CLI's colour off",
                    Colourless::DumbTerminal => "Gemini CLI draws no colour on a dumb terminal",
                    Colourless::Ci { .. } => "Gemini CLI draws no colour whenever CI is set, whatever its value (its colour library takes any CI for a log)",
                    Colourless::TeamCity { .. } => "Gemini CLI draws no colour under a TeamCity before 9.1",
                    Colourless::UnknownTerm { .. } => "Gemini CLI's colour library knows no colour for this TERM without COLORTERM",
                };
                format!("{what}; {UNREAD}")
            }
        }
    }

    /// What to change, for a declaration or the environment of `ding up`.
    pub fn fix(&self) -> String {
        match self {
            Stopped::Headless { .. } => "unset CI and GITHUB_ACTIONS where `ding up` runs (`env -u CI -u GITHUB_ACTIONS ding up FILE`), or declare both as `false` for the agent (CI=false alone takes the colour away)".into(),
            Stopped::NoColor { .. } => "leave NO_COLOR out of the declaration and unset it where `ding up` runs (`env -u NO_COLOR ding up FILE`), or declare it empty (`--env NO_COLOR=`), which Gemini CLI ignores".into(),
            Stopped::Colourless(cause) => match cause {
                Colourless::ForceColorOff { .. } => "leave FORCE_COLOR out of the declaration and unset it where `ding up` runs (`env -u FORCE_COLOR ding up FILE`)".into(),
                Colourless::DumbTerminal | Colourless::UnknownTerm { .. } => "leave TERM out of the declaration and run `ding up` where TERM is unset or a colour terminal's (the PTY host gives the harness xterm-256color when none is set), or declare TERM=xterm-256color".into(),
                Colourless::Ci { .. } => "leave CI out of the declaration and unset it where `ding up` runs (`env -u CI ding up FILE`); where it must stay, declare GITHUB_ACTIONS=false beside it".into(),
                Colourless::TeamCity { .. } => "unset TEAMCITY_VERSION where `ding up` runs (`env -u TEAMCITY_VERSION ding up FILE`)".into(),
            },
        }
    }
}

/// `ding check --adapters`: the environment the harness will get, judged.
pub fn check(env: &HarnessEnv) -> Result<(), String> {
    match judge(env) {
        None => Ok(()),
        Some(stopped) => Err(format!(
            "gemini: {} in the harness's environment (this one, the declaration's env over it): {}; {}",
            stopped.variable(),
            stopped.why(),
            stopped.fix()
        )),
    }
}

/// `ding compile-agent gemini`: the declared variables alone, judged.
pub fn check_declared(declared: &[(String, String)]) -> Result<(), String> {
    match judge(&HarnessEnv::declared_only(declared)) {
        None => Ok(()),
        Some(stopped) => Err(format!(
            "--env {}: {}; {}",
            stopped.variable(),
            stopped.why(),
            stopped.fix()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HarnessEnv {
        HarnessEnv::new(
            pairs
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string())),
            [],
        )
    }

    fn said(pairs: &[(&str, &str)]) -> Option<String> {
        judge(&env(pairs)).map(|stopped| stopped.variable())
    }

    /// Each row was started under `ding pty` (`p_colour.py`), but those
    /// marked "bundle", which follow the library's code.
    #[test]
    fn what_gemini_cli_draws_follows_its_environment() {
        /// The variables of one start, and what stops Gemini CLI there.
        type Row<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>);
        let rows: &[Row] = &[
            (&[], None),
            (&[("CI", "false")], Some("CI=false")),
            (&[("CI", "")], Some("CI=")),
            (&[("CI", "false"), ("GITHUB_ACTIONS", "false")], None),
            (&[("CI", "false"), ("FORCE_COLOR", "1")], None),
            (&[("CI", "false"), ("FORCE_COLOR", "2")], None),
            (&[("CI", "true")], Some("CI=true")),
            (&[("GITHUB_ACTIONS", "true")], Some("GITHUB_ACTIONS=true")),
            (&[("NO_COLOR", "1")], Some("NO_COLOR=1")),
            (&[("NO_COLOR", "")], None),
            (&[("FORCE_COLOR", "0")], Some("FORCE_COLOR=0")),
            (&[("FORCE_COLOR", "false")], Some("FORCE_COLOR=false")),
            (&[("TERM", "dumb")], Some("TERM=dumb")),
            (&[("TERM", "xterm")], None),
            (&[("TERM", "screen")], None),
            (&[("TERM", "vt100")], None),
            (&[("TERM", "foot")], Some("TERM=foot")),
            (&[("TERM", "foot"), ("COLORTERM", "truecolor")], None),
            (&[("COLORTERM", "truecolor")], None),
            // bundle
            (&[("TERM", "dumb"), ("FORCE_COLOR", "1")], None),
            (&[("CI", "1"), ("GITLAB_CI", "true")], None),
            (&[("CI", "1"), ("CI_NAME", "codeship")], None),
            (
                &[("TEAMCITY_VERSION", "9.0.3")],
                Some("TEAMCITY_VERSION=9.0.3"),
            ),
            (&[("TEAMCITY_VERSION", "2024.1")], None),
            (&[("TERM", "tmux-256color")], None),
            (&[("TERM", "alacritty")], Some("TERM=alacritty")),
            (
                &[("CI", "true"), ("GEMINI_CLI_INTEGRATION_TEST", "true")],
                Some("CI=true"),
            ),
        ];
        for (pairs, expected) in rows {
            assert_eq!(said(pairs).as_deref(), *expected, "{pairs:?}");
        }
        // The integration-test switch keeps the TUI; CI still takes the
        // colour.
        assert!(matches!(
            judge(&env(&[
                ("CI", "true"),
                ("GEMINI_CLI_INTEGRATION_TEST", "true")
            ])),
            Some(Stopped::Colourless(Colourless::Ci { .. }))
        ));
    }

    #[test]
    fn force_color_is_read_as_javascript_reads_it() {
        assert_eq!(force_color(""), Some(1));
        assert_eq!(force_color("true"), Some(1));
        assert_eq!(force_color("false"), Some(0));
        assert_eq!(force_color("0"), Some(0));
        assert_eq!(force_color("2"), Some(2));
        assert_eq!(force_color("9"), Some(3));
        assert_eq!(force_color(" 2x"), Some(2));
        assert_eq!(force_color("-1"), Some(-1));
        assert_eq!(force_color("yes"), None);
    }

    #[test]
    fn a_refusal_names_the_variable_why_and_the_fix() {
        let check = check(&env(&[("CI", "false")])).expect_err("refused");
        assert!(check.starts_with("gemini: CI=false in the harness's environment"));
        assert!(check.contains("whatever its value"), "{check}");
        assert!(check.contains("env -u CI ding up FILE"), "{check}");
        let compile = check_declared(&[("NO_COLOR".into(), "1".into())]).expect_err("refused");
        assert!(compile.starts_with("--env NO_COLOR=1: "), "{compile}");
        assert!(compile.contains("--env NO_COLOR="), "{compile}");
        assert_eq!(
            check_declared(&[
                ("CI".into(), "false".into()),
                ("GITHUB_ACTIONS".into(), "false".into())
            ]),
            Ok(())
        );
    }
}
