//! The environment a harness will run in, as far as it can be known before
//! `ding up`: the environment `ding up` passes on, the declaration's `env`
//! over it, and the `TERM` the PTY host gives a harness that has none
//! ([`DEFAULT_TERM`]). A provider judges it
//! ([`super::Provider::check_harness_env`]): some harnesses draw a screen
//! their grammar cannot read, or none at all, under some variables (one
//! draws no colour while `CI` is set, whatever its value).
//!
//! Where it comes from: `ding check --adapters` runs the adapter in check
//! mode in its own environment (the one `ding up` would run in) and hands
//! it the declared variables as a JSON object in [`DECLARED_ENV_VARIABLE`];
//! `ding compile-agent` judges the `--env` it was given over an empty
//! environment. A variable whose name says it is a secret
//! ([`super::compile::is_secret_name`]) is never handed over, name or
//! value; no rule a provider has is about one.

use std::collections::BTreeMap;

use super::compile::is_secret_name;
use crate::pty::child::DEFAULT_TERM;

/// Beside `kit::CHECK_VARIABLE`: the declaration's `env`, secrets left
/// out, as a JSON object of strings (absent or `{}` when it declares none).
pub const DECLARED_ENV_VARIABLE: &str = "DING_ADAPTER_CHECK_ENV";

/// The variables a harness will see (names and values as text; a variable
/// that is not valid UTF-8 is left out).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HarnessEnv {
    vars: BTreeMap<String, String>,
}

impl HarnessEnv {
    /// `declared` over `inherited`, with [`DEFAULT_TERM`] when neither sets
    /// `TERM`, as the PTY host builds the harness's environment.
    pub fn new(
        inherited: impl IntoIterator<Item = (String, String)>,
        declared: impl IntoIterator<Item = (String, String)>,
    ) -> HarnessEnv {
        let mut vars: BTreeMap<String, String> = inherited.into_iter().collect();
        vars.extend(declared);
        vars.entry("TERM".into())
            .or_insert_with(|| DEFAULT_TERM.into());
        HarnessEnv { vars }
    }

    /// What the declared variables alone make of a harness's environment:
    /// `declared` over nothing.
    pub fn declared_only(declared: &[(String, String)]) -> HarnessEnv {
        HarnessEnv::new([], declared.iter().cloned())
    }

    /// In check mode: this process's environment with the declared
    /// variables of [`DECLARED_ENV_VARIABLE`] over it.
    pub fn for_check() -> HarnessEnv {
        let inherited = std::env::vars_os().filter_map(|(name, value)| {
            Some((name.into_string().ok()?, value.into_string().ok()?))
        });
        let declared = std::env::var(DECLARED_ENV_VARIABLE)
            .ok()
            .map(|text| parse_declared(&text))
            .unwrap_or_default();
        HarnessEnv::new(inherited, declared)
    }

    /// The value of `name`, if it is set (perhaps to the empty string).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Whether `name` is set, to any value (the empty string included).
    pub fn has(&self, name: &str) -> bool {
        self.vars.contains_key(name)
    }
}

/// The declared variables as `ding check --adapters` hands them to an
/// adapter in [`DECLARED_ENV_VARIABLE`]: a JSON object, secrets left out.
pub fn declared_json(declared: &BTreeMap<String, String>) -> String {
    let shown: serde_json::Map<String, serde_json::Value> = declared
        .iter()
        .filter(|(name, _)| !is_secret_name(name))
        .map(|(name, value)| (name.clone(), value.clone().into()))
        .collect();
    serde_json::Value::Object(shown).to_string()
}

/// [`declared_json`] read back; anything else is no variable at all.
pub fn parse_declared(text: &str) -> BTreeMap<String, String> {
    serde_json::from_str(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn the_declaration_wins_and_the_host_supplies_a_missing_term() {
        let env = HarnessEnv::new(
            pairs(&[("CI", "true"), ("HOME", "/h")]),
            pairs(&[("CI", "false")]),
        );
        assert_eq!(env.get("CI"), Some("false"));
        assert_eq!(env.get("HOME"), Some("/h"));
        assert_eq!(env.get("TERM"), Some(DEFAULT_TERM));
        let declared = HarnessEnv::declared_only(&pairs(&[("TERM", "dumb"), ("NO_COLOR", "")]));
        assert_eq!(declared.get("TERM"), Some("dumb"));
        assert!(declared.has("NO_COLOR"));
        assert!(!declared.has("CI"));
    }

    #[test]
    fn declared_secrets_never_reach_the_adapter() {
        let declared: BTreeMap<String, String> =
            pairs(&[("CI", "false"), ("MODEL_API_KEY", "s3cret")])
                .into_iter()
                .collect();
        let text = declared_json(&declared);
        assert!(
            !text.contains("s3cret") && !text.contains("API_KEY"),
            "{text}"
        );
        assert_eq!(
            parse_declared(&text),
            pairs(&[("CI", "false")]).into_iter().collect()
        );
        assert!(parse_declared("not json").is_empty());
    }
}
