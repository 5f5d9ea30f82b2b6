//! Writing declarations: what `ding compile-agent` and the harness launches
//! print, in the same KDL v2 that `ding check` reads.
//!
//! [`Draft`] is an agent in plain values; [`Draft::render`] is the one
//! writer of generated KDL. Every string is quoted ([`quote`]) and every
//! comment line escaped by the one rule of [`crate::escape`], so no
//! value can end a line early: KDL v2 breaks lines at CR, LF, NEL, VT, FF,
//! U+2028 and U+2029, and a value that broke out of a comment or a string
//! could declare a node of its own (a whole second agent). Nothing that a
//! terminal acts on reaches the file either, so `cat agent.kdl` is safe.
//! Any argv, path or value survives exactly, and [`Draft::check_text`]
//! proves it on each rendering by reading it back through the real parser.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::escape::{escape, is_plain};

/// One agent to write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Draft {
    pub name: String,
    /// Comment lines written above the agent (without `//`).
    pub comments: Vec<String>,
    pub command: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub inbox: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    /// `delivery "turn-boundary+fresh-idle"` with this adapter argv, or no
    /// `ding {}` block at all (the aggressive default).
    pub adapter: Option<Vec<String>>,
}

impl Draft {
    pub fn render(&self) -> String {
        let mut out = String::new();
        for comment in &self.comments {
            // Only LF makes a comment line of its own; every other break
            // or control is escaped into the line.
            for line in comment.split('\n') {
                let _ = writeln!(out, "// {}", escape(line));
            }
        }
        let _ = writeln!(out, "agent {} {{", quote(&self.name));
        if !self.command.is_empty() {
            let _ = writeln!(out, "  command {}", words(&self.command));
        }
        if let Some(cwd) = &self.cwd {
            let _ = writeln!(out, "  cwd {}", quote(&cwd.to_string_lossy()));
        }
        if let Some(inbox) = &self.inbox {
            let _ = writeln!(out, "  inbox {}", quote(&inbox.to_string_lossy()));
        }
        if !self.env.is_empty() {
            out.push_str("  env {\n");
            for (name, value) in &self.env {
                let _ = writeln!(out, "    {} {}", node_name(name), quote(value));
            }
            out.push_str("  }\n");
        }
        if let Some(adapter) = &self.adapter {
            let _ = write!(
                out,
                "  ding {{\n    delivery \"turn-boundary+fresh-idle\"\n    adapter {{\n      command {}\n    }}\n  }}\n",
                words(adapter)
            );
        }
        out.push_str("}\n");
        out
    }
}

fn words(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| quote(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` as a KDL v2 quoted string on one line: `"`, `\`, LF, CR and
/// tab by their short escapes, every other character that is not plain
/// ([`is_plain`]: controls, line and paragraph breaks, bidi and invisible
/// formatting) as `\u{hex}`, which KDL reads back as that character.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_plain(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

/// A node name: bare when it is a plain identifier (an environment
/// variable's usual spelling), quoted otherwise.
fn node_name(name: &str) -> String {
    let bare = super::lower::is_valid_env_name(name)
        && !matches!(name, "true" | "false" | "null" | "inf" | "nan");
    if bare { name.to_string() } else { quote(name) }
}

impl Draft {
    /// Checks that `text` (this draft's rendering, or what is about to be
    /// written in its place) declares exactly this agent and nothing else:
    /// it parses with no diagnostic, holds one agent, and that agent's
    /// name, command, directory, inbox, environment and adapter are the
    /// draft's. `base` is where the file goes (relative paths resolve
    /// there). A declaration that says more than was asked, such as a
    /// second agent smuggled in through a value, never passes. `Ok` holds
    /// the checker's warnings, rendered (empty when there are none).
    pub fn check_text(&self, text: &str, base: &Path) -> Result<String, String> {
        let checked = super::check::check_bytes("compiled declaration", text.as_bytes(), base);
        if checked.error_count() > 0 {
            return Err(format!(
                "the compiled declaration does not check:\n{}",
                checked.render_diagnostics()
            ));
        }
        let [agent] = checked.agents.as_slice() else {
            return Err(format!(
                "the compiled declaration holds {} agents, not the one asked for",
                checked.agents.len()
            ));
        };
        let env: Vec<(String, String)> = agent.env.clone().into_iter().collect();
        let mut wanted_env = self.env.clone();
        wanted_env.sort();
        let command = (!self.command.is_empty()).then_some(self.command.as_slice());
        let differs = [
            ("name", agent.name != self.name),
            ("command", agent.command.as_deref() != command),
            (
                "cwd",
                self.cwd
                    .as_ref()
                    .is_some_and(|cwd| agent.cwd != base.join(cwd)),
            ),
            (
                "inbox",
                self.inbox
                    .as_ref()
                    .is_some_and(|inbox| agent.inbox != base.join(inbox)),
            ),
            ("env", env != wanted_env),
            (
                "adapter",
                agent.adapter_command() != self.adapter.as_deref(),
            ),
        ];
        match differs.iter().find(|(_, differs)| *differs) {
            Some((field, _)) => Err(format!(
                "the compiled declaration does not read back as asked: its {field} differs"
            )),
            None => Ok(checked.render_diagnostics()),
        }
    }
}

/// Checks `text` with the real parser and returns its one agent; panics
/// with the diagnostics otherwise (for tests of generated declarations).
#[cfg(test)]
pub(crate) fn read_back(text: &str) -> crate::decl::AgentSpec {
    let checked = crate::decl::check_bytes("gen.kdl", text.as_bytes(), std::path::Path::new("/s"));
    assert_eq!(
        checked.diagnostics,
        [],
        "{}\n{text}",
        checked.render_diagnostics()
    );
    let [agent] = checked.agents.as_slice() else {
        panic!("one agent: {text}");
    };
    agent.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_draft_reads_back_exactly_through_the_real_parser() {
        let draft = Draft {
            name: "worker".into(),
            comments: vec!["made by a test\nsecond line".into()],
            command: vec!["/opt/h/bin".into(), "a \"q\" \\ b".into(), "x\ty".into()],
            cwd: Some(PathBuf::from("/s/project")),
            inbox: Some(PathBuf::from("/s/inbox")),
            env: vec![("HOME".into(), "/s/home".into())],
            adapter: Some(vec!["$ST_HOOKS/my-adapter".into(), "--flag".into()]),
        };
        let agent = read_back(&draft.render());
        assert_eq!(agent.command.as_deref(), Some(draft.command.as_slice()));
        assert_eq!(agent.cwd, PathBuf::from("/s/project"));
        assert_eq!(agent.inbox, PathBuf::from("/s/inbox"));
        assert_eq!(agent.adapter_command(), draft.adapter.as_deref());
        let env: Vec<(String, String)> = agent.env.clone().into_iter().collect();
        assert_eq!(env, draft.env);
    }

    /// The hostile pass's injection: a CR in the settings path (which goes
    /// into a comment) followed by a whole agent. KDL ends the comment at
    /// the CR; the writer escapes it, so the agent stays inside the comment
    /// and the file declares the one agent asked for.
    #[test]
    fn a_line_break_in_a_comment_or_value_never_declares_a_node() {
        let injected = "x\ragent \"evil\" { command \"sh\" \"-c\" \"id\" }\r// ";
        for breaker in ['\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}'] {
            let payload = injected.replace('\r', &breaker.to_string());
            let draft = Draft {
                name: "worker".into(),
                comments: vec![format!("Its hooks are in {payload}.")],
                command: vec![payload.clone()],
                cwd: Some(PathBuf::from(format!("/s/{payload}"))),
                inbox: Some(PathBuf::from(format!("/s/in{payload}"))),
                env: vec![("A".into(), payload.clone())],
                adapter: Some(vec![payload.clone()]),
            };
            let text = draft.render();
            assert_eq!(
                draft.check_text(&text, Path::new("/s")),
                Ok(String::new()),
                "{text}"
            );
            assert!(!text.contains(breaker), "{breaker:?} raw in\n{text}");
        }
        // A rendering that did let one through is refused by the check.
        let draft = Draft {
            name: "worker".into(),
            command: vec!["h".into()],
            ..Draft::default()
        };
        let smuggled = format!("{}agent \"evil\" {{ command \"sh\" }}\n", draft.render());
        let refused = draft.check_text(&smuggled, Path::new("/s")).unwrap_err();
        assert!(refused.contains("2 agents"), "{refused}");
        let other = draft.render().replace("\"h\"", "\"sh\"");
        let refused = draft.check_text(&other, Path::new("/s")).unwrap_err();
        assert!(refused.contains("its command differs"), "{refused}");
    }

    fn any_text() -> impl Strategy<Value = String> {
        let hostile = proptest::sample::select(vec![
            '\r', '\n', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}', '\u{1b}', '\u{7f}',
            '\u{9b}', '\u{202e}', '\u{200b}', '\u{feff}', '"', '\\', '{', '}', ';', '/', '*', '#',
            '=', ' ', '\t',
        ]);
        // NUL is refused by the checker itself (no OS can pass it on).
        let any = any::<char>().prop_filter("not NUL", |&c| c != '\0');
        proptest::collection::vec(prop_oneof![2 => hostile, 2 => any], 0..24)
            .prop_map(|chars| chars.into_iter().collect())
    }

    /// The checker allows only identifiers as variable names (and says so
    /// for anything else), so only identifiers can read back.
    fn env_name() -> impl Strategy<Value = String> {
        "[A-Za-z_][A-Za-z0-9_]{0,8}"
    }

    proptest! {
        /// Arbitrary strings in every field: the rendering reads back as
        /// exactly the draft (one agent, every value equal), and the text
        /// holds no character that KDL or a terminal treats as a break or
        /// control but the LF that ends each line.
        #[test]
        fn any_strings_in_every_field_read_back_exactly_and_print_harmlessly(
            comment in any_text(),
            command in proptest::collection::vec(any_text(), 1..4),
            cwd in any_text(),
            inbox in any_text(),
            env in proptest::collection::btree_map(env_name(), any_text(), 0..3),
            adapter in proptest::collection::vec(any_text(), 1..3),
        ) {
            // A program must be named; what follows it may be anything.
            let (mut command, mut adapter) = (command, adapter);
            command[0].insert(0, 'h');
            adapter[0].insert(0, 'a');
            let draft = Draft {
                name: "worker".into(),
                comments: vec![comment],
                command,
                cwd: Some(PathBuf::from(format!("/s/{cwd}"))),
                inbox: Some(PathBuf::from(format!("/s/{inbox}"))),
                env: env.into_iter().collect(),
                adapter: Some(adapter),
            };
            let text = draft.render();
            // `Ok` may carry warnings (a `$` that no shell expands).
            prop_assert!(draft.check_text(&text, Path::new("/s")).is_ok(), "{:?}\n{}", draft.check_text(&text, Path::new("/s")), text);
            for c in text.chars() {
                prop_assert!(c == '\n' || c == '\\' || is_plain(c), "{:?} in {}", c, text);
            }
        }
    }
}
