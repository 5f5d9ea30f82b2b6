//! Whether Codex CLI 0.169.0, run in a given environment, starts the
//! interface its grammar (`screen.rs`) reads. `ding compile-agent codex`
//! refuses an `--env` that stops it; `ding check --adapters` refuses an
//! environment that would (its own, the declaration's `env` over it).
//!
//! Measured on 0.169.0 under `ding pty` (docs/providers/codex-findings.md,
//! "Colour and TERM"; `scripts/probe/claude/p_colour.py --codex`): with
//! `TERM=dumb` Codex asks `Continue anyway? [y/N]:` before its interface
//! and ends on any answer but `y` (`term-dumb-question.json`,
//! `term-dumb-refused.json`). `NO_COLOR` drops its colours but keeps the
//! bold and dim its grammar reads (`no-color-*.json`); `CI`,
//! `FORCE_COLOR=0`, `TERM=xterm` and `COLORTERM` change nothing it reads.

use crate::adapter::HarnessEnv;

/// The reason and the fix, when `env` stops Codex's interface.
fn judge(env: &HarnessEnv) -> Option<&'static str> {
    (env.get("TERM") == Some("dumb")).then_some(
        "Codex then asks \"Continue anyway? [y/N]\" before its interface and ends on any answer but y, so nothing is delivered; leave TERM out of the declaration and run `ding up` where TERM is unset or a real terminal's (the PTY host gives the harness xterm-256color when none is set), or declare TERM=xterm-256color",
    )
}

/// `ding check --adapters`: the environment the harness will get, judged.
pub fn check(env: &HarnessEnv) -> Result<(), String> {
    match judge(env) {
        None => Ok(()),
        Some(why) => Err(format!(
            "codex: TERM=dumb in the harness's environment (this one, the declaration's env over it): {why}"
        )),
    }
}

/// `ding compile-agent codex`: the declared variables alone, judged.
pub fn check_declared(declared: &[(String, String)]) -> Result<(), String> {
    match judge(&HarnessEnv::declared_only(declared)) {
        None => Ok(()),
        Some(why) => Err(format!("--env TERM=dumb: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_dumb_terminal_stops_codex() {
        let env = |pairs: &[(&str, &str)]| {
            HarnessEnv::new(
                pairs
                    .iter()
                    .map(|(name, value)| (name.to_string(), value.to_string())),
                [],
            )
        };
        for fine in [
            &[][..],
            &[("CI", "false")],
            &[("CI", "true")],
            &[("NO_COLOR", "1")],
            &[("FORCE_COLOR", "0")],
            &[("TERM", "xterm")],
        ] {
            assert_eq!(check(&env(fine)), Ok(()), "{fine:?}");
        }
        let refused = check(&env(&[("TERM", "dumb")])).expect_err("refused");
        assert!(refused.starts_with("codex: TERM=dumb"), "{refused}");
        assert!(refused.contains("Continue anyway?"), "{refused}");
        assert!(check_declared(&[("TERM".into(), "dumb".into())]).is_err());
        assert_eq!(check_declared(&[("NO_COLOR".into(), "1".into())]), Ok(()));
    }
}
