//! `$ST_HOOKS`: the one variable a declaration may name, and its expansion
//! at spawn time.
//!
//! Declarations stay portable by naming the hooks directory as the literal
//! text `$ST_HOOKS` rather than a machine's path. The literal is what
//! `AgentSpec` holds and what the fingerprint covers, so moving the hooks
//! directory is not drift. Whoever spawns a process (the sidecar for the
//! adapter, the PTY host for the harness) calls [`expand_argv`] with the
//! environment it will spawn from. No shell runs: every other `$NAME` is
//! passed as written, and `lower` warns about it.

use std::ffi::OsString;
use std::fmt;
use std::ops::Range;

/// Variables expanded in `command` and `adapter { command }` arguments.
pub const EXPANDED_VARIABLES: [&str; 1] = ["ST_HOOKS"];

/// A `$NAME` or `${NAME}` in a string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariableReference {
    pub name: String,
    /// Byte range of the whole reference, `$` included.
    pub range: Range<usize>,
    /// Written `${NAME}`, which is not expanded.
    pub braced: bool,
}

impl VariableReference {
    /// Whether [`expand_argv`] replaces this reference.
    pub fn is_expanded(&self) -> bool {
        !self.braced && EXPANDED_VARIABLES.contains(&self.name.as_str())
    }
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `$NAME` and `${NAME}` in `text`, in order.
pub fn variable_references(text: &str) -> Vec<VariableReference> {
    let mut found = Vec::new();
    let mut search = 0;
    while let Some(offset) = text[search..].find('$') {
        let dollar = search + offset;
        let after = &text[dollar + 1..];
        if let Some(inner) = after.strip_prefix('{') {
            let name_len = inner
                .find(|c: char| !is_name_char(c))
                .unwrap_or(inner.len());
            if name_len > 0 && inner[name_len..].starts_with('}') {
                found.push(VariableReference {
                    name: inner[..name_len].to_string(),
                    range: dollar..dollar + name_len + 3,
                    braced: true,
                });
            }
        } else if after.starts_with(is_name_start) {
            let name_len = after
                .find(|c: char| !is_name_char(c))
                .unwrap_or(after.len());
            found.push(VariableReference {
                name: after[..name_len].to_string(),
                range: dollar..dollar + name_len + 1,
                braced: false,
            });
        }
        search = dollar + 1;
    }
    found
}

/// Why an argv could not be expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpandError {
    /// The variable is not in the spawn environment.
    Unset { variable: &'static str },
    /// The variable is set but empty, which would turn `$ST_HOOKS/x` into
    /// `/x`, a path nobody meant.
    Empty { variable: &'static str },
}

impl fmt::Display for ExpandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpandError::Unset { variable } => write!(
                f,
                "`${variable}` is not set; it names the directory of hook and adapter executables, export it before starting ding"
            ),
            ExpandError::Empty { variable } => write!(
                f,
                "`${variable}` is empty; it must name the directory of hook and adapter executables"
            ),
        }
    }
}

impl std::error::Error for ExpandError {}

/// Replaces every `$ST_HOOKS` in `argv` with its value from `lookup`
/// (usually `std::env::var_os`, a map in tests). Everything else is copied
/// as written. Fails if an argument needs a variable that is unset or
/// empty; an argv that names none needs nothing from the environment.
pub fn expand_argv<F>(argv: &[String], lookup: F) -> Result<Vec<OsString>, ExpandError>
where
    F: Fn(&str) -> Option<OsString>,
{
    let mut expanded = Vec::with_capacity(argv.len());
    for arg in argv {
        let mut out = OsString::new();
        let mut copied = 0;
        for reference in variable_references(arg)
            .into_iter()
            .filter(VariableReference::is_expanded)
        {
            let variable = EXPANDED_VARIABLES
                .into_iter()
                .find(|known| *known == reference.name)
                .unwrap_or(EXPANDED_VARIABLES[0]);
            let value = lookup(variable).ok_or(ExpandError::Unset { variable })?;
            if value.is_empty() {
                return Err(ExpandError::Empty { variable });
            }
            out.push(&arg[copied..reference.range.start]);
            out.push(value);
            copied = reference.range.end;
        }
        out.push(&arg[copied..]);
        expanded.push(out);
    }
    Ok(expanded)
}

/// [`expand_argv`] from this process's environment.
pub fn expand_argv_from_env(argv: &[String]) -> Result<Vec<OsString>, ExpandError> {
    expand_argv(argv, |name| std::env::var_os(name))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn argv(args: &[&str]) -> Vec<String> {
        args.iter().map(|arg| arg.to_string()).collect()
    }

    #[test]
    fn st_hooks_expands_from_the_given_environment() {
        let env: HashMap<&str, OsString> =
            HashMap::from([("ST_HOOKS", OsString::from("/srv/hooks"))]);
        let expanded = expand_argv(
            &argv(&[
                "$ST_HOOKS/adapter",
                "--dir=$ST_HOOKS",
                "$HOME",
                "${ST_HOOKS}",
                "$ST_HOOKSX",
                "5$",
            ]),
            |name| env.get(name).cloned(),
        )
        .unwrap();
        assert_eq!(
            expanded,
            [
                "/srv/hooks/adapter",
                "--dir=/srv/hooks",
                "$HOME",
                "${ST_HOOKS}",
                "$ST_HOOKSX",
                "5$"
            ]
            .map(OsString::from)
        );
    }

    #[test]
    fn unset_or_empty_st_hooks_is_a_clear_error() {
        let err = expand_argv(&argv(&["$ST_HOOKS/adapter"]), |_| None).unwrap_err();
        assert_eq!(
            err,
            ExpandError::Unset {
                variable: "ST_HOOKS"
            }
        );
        assert!(
            err.to_string().starts_with("`$ST_HOOKS` is not set"),
            "{err}"
        );
        let err =
            expand_argv(&argv(&["$ST_HOOKS/adapter"]), |_| Some(OsString::new())).unwrap_err();
        assert_eq!(
            err,
            ExpandError::Empty {
                variable: "ST_HOOKS"
            }
        );
    }

    #[test]
    fn argv_without_variables_needs_no_environment() {
        let expanded = expand_argv(&argv(&["prog", "a b", ""]), |_| None).unwrap();
        assert_eq!(expanded, ["prog", "a b", ""].map(OsString::from));
    }

    #[test]
    fn references_are_found_with_their_ranges() {
        let found = variable_references("a$B_1/${C}$9$");
        let names: Vec<(&str, Range<usize>, bool)> = found
            .iter()
            .map(|r| (r.name.as_str(), r.range.clone(), r.braced))
            .collect();
        assert_eq!(names, [("B_1", 1..5, false), ("C", 6..10, true)]);
    }
}
