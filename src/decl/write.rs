//! Writing declarations: what `ding compile-agent` and the harness launches
//! print, in the same KDL v2 that `ding check` reads.
//!
//! [`Draft`] is an agent in plain values; [`Draft::render`] writes it with
//! every string quoted ([`quote`]), so any argv, path or value survives
//! exactly (the tests check it back through the real parser).

use std::fmt::Write as _;
use std::path::PathBuf;

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
            for line in comment.lines() {
                let _ = writeln!(out, "// {line}");
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
                let _ = writeln!(out, "    {name} {}", quote(value));
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

/// `text` as a KDL v2 quoted string.
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
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
}
