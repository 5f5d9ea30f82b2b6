//! From the raw declaration to typed `AgentSpec`s: defaults, path
//! resolution, and the rules that need more than one node to judge (a
//! policy and its adapter, a tunable and the policy it applies to).
//!
//! Every check reports against the span `raw` recorded and keeps going, so
//! one run lists every problem. Only an agent without errors yields a spec.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use crate::core::config::{Fence, Policy, Tunables};

use super::diagnostic::Diagnostic;
use super::expand::{EXPANDED_VARIABLES, variable_references};
use super::raw::{RawAgent, RawArgv, RawDeclaration, RawDing, RawScalar, Spanned};
use super::spec::{AdapterSpec, AgentSpec, DingSpec, TerminalSize};
use super::suggest::did_you_mean;
use super::tunable::{TunableKey, TunableValue};

/// The longest agent name, in bytes. Names become file and session names.
pub const MAX_AGENT_NAME_BYTES: usize = 64;

/// Whether `name` may name an environment variable of the harness: letters,
/// digits and `_`, not starting with a digit (what every shell accepts, and
/// nothing that could end a line of the declaration).
pub fn is_valid_env_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `name` may name an agent: letters, digits, `.`, `_` and `-`,
/// starting with a letter or digit, at most [`MAX_AGENT_NAME_BYTES`] bytes.
/// Names become directory, socket and session names, so they must stay
/// single, harmless path components.
pub fn is_valid_agent_name(name: &str) -> bool {
    name.len() <= MAX_AGENT_NAME_BYTES
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The default inbox, relative to the declaration's directory, for an agent.
pub fn default_inbox(name: &str) -> PathBuf {
    Path::new("inbox").join(name)
}

/// Lowers every agent; `base_dir` is the declaration's directory, absolute.
pub fn lower(
    raw: &RawDeclaration,
    base_dir: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<AgentSpec> {
    let mut lowerer = Lowerer {
        base_dir,
        diagnostics,
    };
    raw.agents
        .iter()
        .filter_map(|agent| lowerer.agent(agent))
        .collect()
}

struct Lowerer<'a> {
    base_dir: &'a Path,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl Lowerer<'_> {
    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    fn agent(&mut self, raw: &RawAgent) -> Option<AgentSpec> {
        let errors_before = self.error_count();
        let name = raw.name.value.as_str();
        self.check_name(&raw.name);
        let command = match &raw.command {
            Some(argv) => self.argv(argv, "`command`"),
            None => {
                self.push(
                    Diagnostic::warning(
                        raw.node.clone(),
                        format!("agent `{name}` has no `command`"),
                    )
                    .hint("ding can deliver to it, but cannot launch its harness")
                    .hint("add `command \"prog\" \"arg\"...` to the agent block"),
                );
                None
            }
        };
        let cwd = match &raw.cwd {
            Some(path) => self.path(path, "cwd"),
            None => Some(normalize(self.base_dir)),
        };
        let inbox = match &raw.inbox {
            Some(path) => self.path(path, "inbox"),
            None => Some(normalize(&self.base_dir.join(default_inbox(name)))),
        };
        let env = self.env(&raw.env);
        let size = match &raw.size {
            Some(size) => self.size(size),
            None => Some(TerminalSize::default()),
        };
        let ding = match &raw.ding {
            Some(ding) => self.ding(ding),
            None => Some(DingSpec::default()),
        };
        if self.error_count() > errors_before {
            return None;
        }
        Some(AgentSpec {
            name: name.to_string(),
            command,
            cwd: cwd?,
            inbox: inbox?,
            env,
            size: size?,
            ding: ding?,
        })
    }

    fn size(&mut self, size: &Spanned<String>) -> Option<TerminalSize> {
        let parsed = TerminalSize::parse(&size.value);
        if parsed.is_none() {
            self.push(
                Diagnostic::error(
                    size.span.clone(),
                    format!("`size` {:?} is not a terminal size", size.value),
                )
                .hint(format!(
                    "write columns x rows, each 1 to {}: `size \"120x40\"` (default \"{}\")",
                    TerminalSize::MAX_SIDE,
                    TerminalSize::default()
                )),
            );
        }
        parsed
    }

    fn check_name(&mut self, name: &Spanned<String>) {
        let text = name.value.as_str();
        if !is_valid_agent_name(text) {
            self.push(
                Diagnostic::error(name.span.clone(), format!("agent name {text:?} is not allowed"))
                    .hint(format!(
                        "use letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most {MAX_AGENT_NAME_BYTES} bytes: the name becomes file and session names"
                    )),
            );
        }
    }

    /// A literal argv: a non-empty program, no NUL anywhere; warns about
    /// `$NAME`s that will not be expanded.
    fn argv(&mut self, raw: &RawArgv, what: &str) -> Option<Vec<String>> {
        let Some(program) = raw.args.first() else {
            self.push(
                Diagnostic::error(raw.node.clone(), format!("{what} needs a program")).hint(
                    "write `command \"prog\" \"arg\"...`; the program runs without a shell"
                        .to_string(),
                ),
            );
            return None;
        };
        let mut ok = true;
        if program.value.trim().is_empty() {
            self.push(
                Diagnostic::error(program.span.clone(), format!("{what} program is empty"))
                    .hint("name an executable: a bare name is looked up in PATH"),
            );
            ok = false;
        }
        for arg in &raw.args {
            ok &= self.no_nul(arg, what);
            self.unexpanded_variables(arg, what, true);
        }
        ok.then(|| raw.args.iter().map(|arg| arg.value.clone()).collect())
    }

    fn no_nul(&mut self, text: &Spanned<String>, what: &str) -> bool {
        if text.value.contains('\0') {
            self.push(
                Diagnostic::error(
                    text.span.clone(),
                    format!("{what} contains a NUL character"),
                )
                .hint(
                    "operating systems cannot pass NUL in arguments, paths or environment values",
                ),
            );
            return false;
        }
        true
    }

    /// Warns about `$NAME` text that stays literal. In argv, `$ST_HOOKS` is
    /// expanded at spawn time; anywhere else nothing is.
    fn unexpanded_variables(&mut self, text: &Spanned<String>, what: &str, in_argv: bool) {
        for reference in variable_references(&text.value) {
            if in_argv && reference.is_expanded() {
                continue;
            }
            let written = &text.value[reference.range.clone()];
            let hint = if in_argv && EXPANDED_VARIABLES.contains(&reference.name.as_str()) {
                format!("write `${}` without braces", reference.name)
            } else if in_argv {
                "no shell runs the command: only `$ST_HOOKS` is expanded, at spawn time".to_string()
            } else {
                format!(
                    "{what} is used as written: variables are expanded only in `command` arguments"
                )
            };
            self.push(
                Diagnostic::warning(
                    text.span.clone(),
                    format!("`{written}` in {what} is not expanded"),
                )
                .hint(hint),
            );
        }
    }

    fn path(&mut self, path: &Spanned<String>, what: &str) -> Option<PathBuf> {
        if path.value.is_empty() {
            self.push(
                Diagnostic::error(path.span.clone(), format!("`{what}` is empty"))
                    .hint(format!("write `{what} \"path\"`; relative paths are relative to the declaration's directory")),
            );
            return None;
        }
        if !self.no_nul(path, &format!("`{what}`")) {
            return None;
        }
        self.unexpanded_variables(path, &format!("`{what}`"), false);
        if path.value.starts_with('~') {
            self.push(
                Diagnostic::warning(
                    path.span.clone(),
                    format!("`~` in `{what}` is not expanded"),
                )
                .hint("relative paths are relative to the declaration's directory"),
            );
        }
        Some(normalize(&self.base_dir.join(&path.value)))
    }

    fn env(&mut self, raw: &[(Spanned<String>, Spanned<String>)]) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        for (name, value) in raw {
            if !is_valid_env_name(&name.value) {
                self.push(
                    Diagnostic::error(
                        name.span.clone(),
                        format!("environment variable name {:?} is not allowed", name.value),
                    )
                    .hint("use letters, digits and `_`, not starting with a digit"),
                );
                continue;
            }
            let what = format!("`env {}`", name.value);
            if self.no_nul(value, &what) {
                self.unexpanded_variables(value, &what, false);
                env.insert(name.value.clone(), value.value.clone());
            }
        }
        env
    }

    fn ding(&mut self, raw: &RawDing) -> Option<DingSpec> {
        let tokens = Policy::ALL.map(Policy::token);
        let policy = match &raw.delivery {
            None => Policy::Aggressive,
            Some(token) if token.value.is_empty() => {
                self.push(
                    Diagnostic::error(token.span.clone(), "`delivery` is empty").hint(format!(
                        "write one of {}",
                        tokens.map(|t| format!("`delivery \"{t}\"`")).join(", ")
                    )),
                );
                return None;
            }
            Some(token) => match Policy::from_token(&token.value) {
                Some(policy) => policy,
                None => {
                    let hint = match did_you_mean(&token.value, &tokens) {
                        Some(close) => format!("did you mean `{close}`?"),
                        None => format!(
                            "`delivery` names a policy, never a provider: one of {}",
                            tokens.map(|t| format!("`{t}`")).join(", ")
                        ),
                    };
                    self.push(
                        Diagnostic::error(
                            token.span.clone(),
                            format!("unknown delivery `{}`", token.value),
                        )
                        .hint(hint),
                    );
                    return None;
                }
            },
        };
        let adapter = self.adapter(raw, policy);
        let tunables = self.tunables(raw, policy);
        Some(DingSpec {
            policy,
            adapter: adapter?,
            tunables: tunables?,
        })
    }

    /// `Some(None)`: correctly no adapter; `None`: an error was reported.
    fn adapter(&mut self, raw: &RawDing, policy: Policy) -> Option<Option<AdapterSpec>> {
        let delivery_span = raw
            .delivery
            .as_ref()
            .map_or(raw.node.clone(), |d| d.span.clone());
        match (&raw.adapter, policy.uses_adapter()) {
            (None, false) => Some(None),
            (Some(adapter), false) => {
                let hint = if raw.delivery.is_none() {
                    "delivery defaults to `aggressive`, which runs no adapter: add `delivery \"turn-boundary+fresh-idle\"`"
                } else {
                    "`aggressive` delivery runs no adapter: remove `adapter`, or change `delivery`"
                };
                self.push(
                    Diagnostic::error(
                        adapter.node.clone(),
                        format!(
                            "`adapter` is only used by `{}` delivery",
                            Policy::TurnBoundaryFreshIdle.token()
                        ),
                    )
                    .hint(hint),
                );
                None
            }
            (None, true) => {
                self.push(
                    Diagnostic::error(
                        delivery_span,
                        format!("`{}` delivery needs an adapter", policy.token()),
                    )
                    .hint("add `adapter { command \"$ST_HOOKS/my-adapter\" }` to the `ding` block"),
                );
                None
            }
            (Some(adapter), true) => match &adapter.command {
                None => {
                    self.push(
                        Diagnostic::error(adapter.node.clone(), "`adapter` needs a `command`")
                            .hint("write `adapter { command \"$ST_HOOKS/my-adapter\" }`"),
                    );
                    None
                }
                Some(argv) => self
                    .argv(argv, "adapter `command`")
                    .map(|command| Some(AdapterSpec { command })),
            },
        }
    }

    fn tunables(&mut self, raw: &RawDing, policy: Policy) -> Option<Tunables> {
        let mut tunables = Tunables::default();
        let mut ok = true;
        for (key, value) in &raw.tunables {
            if !key.applies_to(policy) {
                self.push(
                    Diagnostic::error(
                        value.span.clone(),
                        format!(
                            "`{}` applies only to `{}` delivery",
                            key.name(),
                            Policy::TurnBoundaryFreshIdle.token()
                        ),
                    )
                    .hint(format!(
                        "this agent's delivery is `{}`; remove `{}`",
                        policy.token(),
                        key.name()
                    )),
                );
                ok = false;
                continue;
            }
            let checked = match &value.value {
                RawScalar::Text(text) => key.check_text(text),
                RawScalar::Integer(count) => key.check_count(*count),
                RawScalar::Flag(flag) => key.check_flag(*flag),
            };
            if checked == Ok(TunableValue::Flag(true)) && *key == TunableKey::UnsafeReceiptFence {
                self.push(
                    Diagnostic::warning(
                        value.span.clone(),
                        "`unsafe-receipt-fence` is on: idle evidence without a revision is fenced when it arrives",
                    )
                    .hint("a keystroke typed after the adapter looked can then be glued to the notice; send `revision` and remove this"),
                );
            }
            match checked {
                Ok(checked) => apply(&mut tunables, *key, checked),
                Err(err) => {
                    self.push(Diagnostic::error(value.span.clone(), err.message).hint(err.hint));
                    ok = false;
                }
            }
        }
        ok.then_some(tunables)
    }
}

fn apply(tunables: &mut Tunables, key: TunableKey, value: TunableValue) {
    match (key, value) {
        (TunableKey::LeaseCap, TunableValue::Duration(d)) => tunables.lease_cap = d,
        (TunableKey::AdapterSilence, TunableValue::Duration(d)) => tunables.adapter_silence = d,
        (TunableKey::ReRingAfter, TunableValue::Duration(d)) => tunables.re_ring_after = Some(d),
        (TunableKey::ReRingAfter, TunableValue::Never) => tunables.re_ring_after = None,
        (TunableKey::SubmitDelay, TunableValue::Duration(d)) => tunables.submit_delay = d,
        (TunableKey::QuietInput, TunableValue::Duration(d)) => tunables.quiet_input = d,
        (TunableKey::SettledOutput, TunableValue::Duration(d)) => tunables.settled_output = d,
        (TunableKey::GatherQuiet, TunableValue::Duration(d)) => tunables.gather_quiet = d,
        (TunableKey::GatherCap, TunableValue::Duration(d)) => tunables.gather_cap = d,
        (TunableKey::NoticeMaxFiles, TunableValue::Count(n)) => tunables.notice_max_files = n,
        (TunableKey::UnsafeReceiptFence, TunableValue::Flag(unsafe_fence)) => {
            tunables.fence = if unsafe_fence {
                Fence::ReceiptUnsafe
            } else {
                Fence::Evidence
            }
        }
        // `TunableKey::check_*` only produces the value kind of its key.
        _ => {}
    }
}

/// Lexical normalisation: drops `.` components, repeated and trailing
/// slashes. `..` is kept, because resolving it needs the file system.
pub fn normalize(path: &Path) -> PathBuf {
    path.components()
        .filter(|component| !matches!(component, Component::CurDir))
        .collect()
}
