//! `declarations`: KDL agent declarations as `ding check` reads them.
//!
//! Invariants: checking never panics (whatever the KDL parser does); every
//! diagnostic's span lies inside the text, on character boundaries; the
//! rendered diagnostics are lines of the form `FILE:LINE:COL: error|warning:
//! MESSAGE` or `  hint: HINT`, with positions inside the text, and hold no
//! control, line break, format or bidi character of the input (they are
//! printed to a terminal); a declaration with an error yields no agent, and
//! every agent of a valid one has a valid name and a fingerprint.

use std::path::Path;
use std::sync::OnceLock;

use ding::decl::{MAX_DECLARATION_BYTES, check_bytes, is_valid_agent_name};

use super::super::support_hostile::assert_harmless;
use super::super::target::Target;

pub const TARGET: Target = Target {
    name: "declarations",
    check,
    tokens: &[
        "agent \"w\" {\n",
        "}\n",
        "command \"sh\" \"-c\" \"x\"\n",
        "ding {\n",
        "delivery \"turn-boundary+fresh-idle\"\n",
        "delivery \"aggressive\"\n",
        "adapter { command \"a\" }\n",
        "inbox \"in\"\n",
        "cwd \"/\"\n",
        "env FOO=\"bar\"\n",
        "notice-max-files 2\n",
        "re-ring-after \"never\"\n",
        "submit-delay \"200ms\"\n",
        "unsafe-receipt-fence #true\n",
        "#true",
        "#false",
        "#null",
        "/*",
        "*/",
        "//",
        "/-",
        "r#\"",
        "\"#",
        "\"\"\"\n",
        "\\u{1b}",
        "\\u{202e}",
        "(type)",
        "=",
        ";",
        "$HOME",
        "${ST_HOOKS}",
    ],
    bounds: &[MAX_DECLARATION_BYTES, 255],
};

/// Where relative paths resolve: a directory that exists, made once.
fn base_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("tempdir"))
        .path()
}

fn check(input: &[u8]) -> String {
    let checked = check_bytes("fuzz.kdl", input, base_dir());
    let text = checked.source.text();
    for diagnostic in &checked.diagnostics {
        let span = &diagnostic.span;
        assert!(
            span.start <= span.end && span.end <= text.len(),
            "span {span:?} outside a text of {} bytes: {}",
            text.len(),
            diagnostic.message
        );
        assert!(
            text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
            "span {span:?} splits a character: {}",
            diagnostic.message
        );
    }
    let lines = text.split('\n').count();
    let rendered = checked.render_diagnostics();
    for line in rendered.lines() {
        assert_harmless("ding check", line);
        if line.starts_with("  hint: ") {
            continue;
        }
        let rest = line
            .strip_prefix("fuzz.kdl:")
            .unwrap_or_else(|| panic!("a diagnostic line without its position: {line:?}"));
        let mut parts = rest.splitn(3, ':');
        let row: usize = parts.next().and_then(|n| n.parse().ok()).expect("line");
        let column: usize = parts.next().and_then(|n| n.parse().ok()).expect("column");
        assert!(row >= 1 && row <= lines && column >= 1, "{line:?}");
        let said = parts.next().unwrap_or_default();
        assert!(
            said.starts_with(" error: ") || said.starts_with(" warning: "),
            "{line:?}"
        );
    }
    if checked.has_errors() {
        assert!(checked.agents.is_empty(), "agents despite errors");
    }
    for agent in &checked.agents {
        assert!(is_valid_agent_name(&agent.name), "{:?}", agent.name);
        assert!(agent.fingerprint().starts_with("sha256:"));
    }
    match checked.diagnostics.first() {
        None => format!("ok:{}", checked.agents.len().min(3)),
        Some(first) => format!("{}:{}", first.severity.label(), shape(&first.message)),
    }
}

/// A message with what it quotes from the input blanked out, so classes
/// are the checks, not the names.
fn shape(message: &str) -> String {
    let mut shaped = String::new();
    let mut quoted = false;
    for c in message.chars().take(60) {
        match c {
            '`' => {
                quoted = !quoted;
                shaped.push('_');
            }
            _ if quoted => {}
            c if c.is_ascii_digit() => {}
            c => shaped.push(c),
        }
    }
    shaped
}
