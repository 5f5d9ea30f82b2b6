//! Compiler-style diagnostics: `file:line:col: error: message` followed by
//! `  hint: ...` lines.
//!
//! A diagnostic carries a byte span into the declaration text; `Source` turns
//! it into a position only when rendering. This file owns the shape and the
//! rendering, and leaves the wording of each check to the code making it.

use std::fmt::Write as _;
use std::ops::Range;

use super::source::Source;
use crate::escape::displayable;

/// A byte range in the declaration text.
pub type Span = Range<usize>;

/// How bad a finding is. Errors make a declaration invalid; warnings are
/// printed and change nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub const fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One finding about one place in a declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub span: Span,
    /// Lowercase, no trailing period, names the thing.
    pub message: String,
    /// What to do about it, one suggestion per line.
    pub hints: Vec<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            span,
            message: message.into(),
            hints: Vec::new(),
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    /// Adds a hint line.
    pub fn hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hints.push(hint.into());
        self
    }

    /// Adds a hint line when there is one.
    pub fn maybe_hint(self, hint: Option<String>) -> Diagnostic {
        match hint {
            Some(hint) => self.hint(hint),
            None => self,
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `LINE:COL: error: message` plus hint lines, without the file name:
    /// the form the fixture `.expected` files hold. Messages and hints quote
    /// the declaration, so they are shown by the escape rule (spec §8):
    /// nothing a terminal acts on reaches it, and each stays one line.
    pub fn render_positioned(&self, source: &Source) -> String {
        let mut out = format!(
            "{}: {}: {}\n",
            source.position(self.span.start),
            self.severity.label(),
            displayable(&self.message)
        );
        for hint in &self.hints {
            let _ = writeln!(out, "  hint: {}", displayable(hint));
        }
        out
    }

    /// `FILE:LINE:COL: error: message` plus hint lines.
    pub fn render(&self, source: &Source) -> String {
        format!("{}:{}", source.origin(), self.render_positioned(source))
    }
}

/// Renders diagnostics in source order (then in the order they were found),
/// so that a reader can walk the file top to bottom.
pub fn render_all(source: &Source, diagnostics: &[Diagnostic], with_origin: bool) -> String {
    let mut sorted: Vec<&Diagnostic> = diagnostics.iter().collect();
    sorted.sort_by_key(|diagnostic| diagnostic.span.start);
    sorted
        .into_iter()
        .map(|diagnostic| {
            if with_origin {
                diagnostic.render(source)
            } else {
                diagnostic.render_positioned(source)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_file_line_column_and_hints() {
        let source = Source::new("agents/w.kdl", "agent \"w\" {\n  delivry \"x\"\n}\n");
        let diagnostic = Diagnostic::error(14..21, "unknown node `delivry` in `agent`")
            .hint("did you mean `delivery`?");
        assert_eq!(
            diagnostic.render(&source),
            "agents/w.kdl:2:3: error: unknown node `delivry` in `agent`\n  hint: did you mean `delivery`?\n"
        );
    }

    /// A diagnostic quotes the declaration (an unknown node's name, a bad
    /// value), and `ding check` prints it to a terminal: whatever control,
    /// line break or bidi character the quote holds is shown escaped.
    #[test]
    fn quoted_text_is_rendered_displayable() {
        let source = Source::new("a.kdl", "x\n");
        let diagnostic = Diagnostic::error(0..1, "unknown node `\u{1b}]52;c;eA==\u{7}`")
            .hint("did you mean `a\nb\u{202e}`?");
        assert_eq!(
            diagnostic.render(&source),
            "a.kdl:1:1: error: unknown node `\\u{1b}]52;c;eA==\\u{7}`\n  hint: did you mean `a\\u{a}b\\u{202e}`?\n"
        );
    }

    #[test]
    fn render_all_orders_by_position() {
        let source = Source::new("a.kdl", "x\ny\n");
        let later = Diagnostic::warning(2..3, "second");
        let earlier = Diagnostic::error(0..1, "first");
        assert_eq!(
            render_all(&source, &[later, earlier], false),
            "1:1: error: first\n2:1: warning: second\n"
        );
    }
}
