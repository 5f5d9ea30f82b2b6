//! From text to a KDL v2 document, or to diagnostics saying why not.
//!
//! The `kdl` crate does the parsing. This file keeps it safe and helpful:
//! nesting and the `{` inside strings are bounded by `prescan` first, the
//! parser runs on a thread whose stack grows with the input (its error
//! recovery recurses once per byte on some malformed inputs, and once per
//! `{` left in a string it cannot read), a parser panic becomes a diagnostic, and KDL v1
//! spellings get a "v2 is expected, write this instead" error in place of the
//! parser's generic one. Meaning is left to `raw`.

use kdl::KdlDocument;

use super::diagnostic::Diagnostic;
use super::prescan::{self, MAX_NESTING_DEPTH};
use super::source::Source;

/// Stack given to the parser thread per input byte. Measured worst cases
/// (a comment of `*a*a...`, a run of stray `}`) need about 3.5 KiB per byte
/// in an unoptimised build and less in release; the rest is margin. The
/// memory is only reserved: a normal file touches a few pages of it.
pub const PARSER_STACK_PER_BYTE: usize = 6 * 1024;
const PARSER_STACK_BASE: usize = 8 * 1024 * 1024;

/// The most `{` the strings of one declaration may hold. A string the
/// parser cannot read (a bad escape, a control character, an unclosed raw
/// string) makes it read on as nodes, recursing once per unclosed `{` left
/// in it, at about 27 KiB of stack each in an unoptimised build (the fuzzer
/// found this). Scripts with braces fit easily; a file past this is
/// refused before the parser sees it.
pub const MAX_STRING_BRACES: usize = 512;

/// Stack given to the parser thread per `{` inside a string (measured
/// about 27 KiB; the rest is margin).
const PARSER_STACK_PER_STRING_BRACE: usize = 48 * 1024;

/// Syntax errors shown per file. Garbage input yields one per byte; past
/// the first few they only repeat each other.
pub const MAX_SYNTAX_DIAGNOSTICS: usize = 20;

/// Parses `source` as KDL v2. On failure every problem found is in
/// `diagnostics` and the result is `None`.
pub fn parse(source: &Source, diagnostics: &mut Vec<Diagnostic>) -> Option<KdlDocument> {
    let text = source.text();
    let scan = prescan::scan(text, MAX_STRING_BRACES);
    if let Some(at) = scan.too_many_string_braces_at {
        diagnostics.push(
            Diagnostic::error(
                at..at + 1,
                format!("more than {MAX_STRING_BRACES} `{{` inside strings; ding does not parse such a file"),
            )
            .hint("keep long scripts in files and run them: command \"sh\" \"script.sh\""),
        );
        return None;
    }
    if let Some(at) = scan.too_deep_at {
        diagnostics.push(
            Diagnostic::error(
                at..at + 1,
                format!("blocks nest deeper than the limit of {MAX_NESTING_DEPTH} levels"),
            )
            .hint("a declaration needs four levels at most: agent { ding { adapter { command ... } } }"),
        );
        return None;
    }
    let error = match parse_with_room(text, scan.string_braces) {
        Ok(document) => return Some(document),
        Err(error) => error,
    };
    let found = match error {
        Failure::Syntax(error) => error
            .diagnostics
            .into_iter()
            .map(|found| {
                let start = found.span.offset();
                let message = found
                    .message
                    .unwrap_or_else(|| "invalid KDL syntax".to_string());
                Diagnostic::error(start..start + found.span.len(), lowercase_first(&message))
                    .maybe_hint(found.help)
            })
            .collect(),
        Failure::Parser(why) => vec![
            Diagnostic::error(0..0, format!("the KDL parser failed on this file: {why}"))
                .hint("please report this input; ding refused it without reading it"),
        ],
    };
    // A v1 spelling explains the parser's complaint at the same place better
    // than the parser does, so it replaces it.
    let v1 = scan.v1_syntax;
    let explained = |diagnostic: &Diagnostic| {
        v1.iter().any(|v1| {
            v1.span.contains(&diagnostic.span.start) || v1.span.start == diagnostic.span.start
        })
    };
    let mut kept: Vec<Diagnostic> = Vec::new();
    let mut unshown = 0usize;
    for diagnostic in found {
        if explained(&diagnostic) || kept.contains(&diagnostic) {
            continue;
        }
        if kept.len() < MAX_SYNTAX_DIAGNOSTICS {
            kept.push(diagnostic);
        } else {
            unshown += 1;
        }
    }
    if let Some(last) = kept.last_mut().filter(|_| unshown > 0) {
        last.hints.push(format!(
            "{unshown} more syntax errors follow; fix these first"
        ));
    }
    diagnostics.extend(v1);
    diagnostics.extend(kept);
    None
}

enum Failure {
    Syntax(kdl::KdlError),
    Parser(String),
}

/// Runs the v2 parser on a thread with a stack proportional to the input
/// and to the `{` inside its strings.
fn parse_with_room(text: &str, string_braces: usize) -> Result<KdlDocument, Failure> {
    let owned = text.to_owned();
    let stack = PARSER_STACK_BASE
        + PARSER_STACK_PER_BYTE * text.len()
        + PARSER_STACK_PER_STRING_BRACE * string_braces;
    let worker = std::thread::Builder::new()
        .name("kdl-parse".into())
        .stack_size(stack)
        .spawn(move || KdlDocument::parse_v2(&owned))
        .map_err(|err| Failure::Parser(format!("cannot start the parser thread: {err}")))?;
    match worker.join() {
        Ok(parsed) => parsed.map_err(Failure::Syntax),
        Err(_) => Err(Failure::Parser("it panicked".into())),
    }
}

fn lowercase_first(message: &str) -> String {
    let mut chars = message.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::limits::MAX_DECLARATION_BYTES;

    fn errors(text: &str) -> Vec<String> {
        let source = Source::new("t.kdl", text);
        let mut diagnostics = Vec::new();
        let parsed = parse(&source, &mut diagnostics);
        assert_eq!(parsed.is_some(), diagnostics.is_empty());
        diagnostics
            .iter()
            .map(|d| d.render_positioned(&source))
            .collect()
    }

    #[test]
    fn valid_v2_parses() {
        assert!(errors("agent \"w\" {\n  cwd \"x\"\n}\n").is_empty());
    }

    #[test]
    fn v1_keyword_replaces_the_parsers_generic_error() {
        let found = errors("agent \"w\" flag=true\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("1:16: error: bare `true` is KDL v1 syntax"),
            "{found:?}"
        );
        assert!(found[0].contains("hint: write `#true`"), "{found:?}");
    }

    #[test]
    fn parser_errors_are_lowercased_and_positioned() {
        let found = errors("agent \"w\" {\n  cwd \"x\"\n");
        assert!(!found.is_empty());
        assert!(
            found[0].starts_with("1:11: error: no closing '}'"),
            "{found:?}"
        );
    }

    #[test]
    fn hundred_thousand_deep_nesting_is_refused_without_overflow() {
        // Twice the size limit on purpose: this checks the nesting guard
        // itself, below the size guard that normally comes first.
        let text = "a{".repeat(100_000);
        let found = errors(&text);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].contains("nest deeper than the limit of 16"),
            "{found:?}"
        );
    }

    /// After a string it cannot read (a bad escape, a control character,
    /// an unclosed raw string) the parser reads on as nodes and recurses
    /// once per unclosed `{` that was inside the string, far deeper per
    /// byte than anywhere else. Up to the bound it has the room; past it
    /// the file is refused before the parser sees it.
    #[test]
    fn braces_inside_strings_the_parser_cannot_read_never_overflow_it() {
        for broken in ["\"\\q", "\"\u{1}", "\"a\n", "\"\"\"x", "#\"", "#\"\u{1}"] {
            for count in [MAX_STRING_BRACES, MAX_STRING_BRACES + 1] {
                let text = format!("{broken}{}\"", "{".repeat(count));
                let found = errors(&text);
                assert!(!found.is_empty(), "{broken:?}");
                let refused = found.iter().any(|f| f.contains("`{` inside strings"));
                assert_eq!(
                    refused,
                    count > MAX_STRING_BRACES,
                    "{broken:?} {count}: {found:?}"
                );
            }
        }
        let script = format!(
            "agent \"w\" {{\n  command \"sh\" \"-c\" \"{}\"\n}}\n",
            "f() {{ :; }}; ".repeat(20)
        );
        assert!(errors(&script).is_empty());
    }

    #[test]
    fn largest_pathological_inputs_do_not_overflow_the_parser() {
        // Each of these makes the parser recurse about once per byte.
        let comment = format!("/*{}*/", "*a".repeat(MAX_DECLARATION_BYTES / 2 - 3));
        let stray_braces = "}".repeat(MAX_DECLARATION_BYTES);
        for text in [comment, stray_braces] {
            assert!(text.len() <= MAX_DECLARATION_BYTES);
            let source = Source::new("t.kdl", text);
            let mut diagnostics = Vec::new();
            let _ = parse(&source, &mut diagnostics);
            assert!(diagnostics.len() <= MAX_SYNTAX_DIAGNOSTICS + 1);
        }
    }
}
