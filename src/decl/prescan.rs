//! A light lexical pass over the text before the KDL parser sees it.
//!
//! It answers two questions the parser cannot answer safely or helpfully:
//! how deeply blocks nest (the parser recurses once per level, so a
//! 100 000-deep file would overflow its stack), and which KDL v1 spellings
//! the file uses (the v2 parser only says "expected identifier string").
//! It knows strings and comments well enough not to count a `{` inside them
//! as nesting; it counts those in strings apart (the parser recurses on
//! them when it cannot read their string), and it validates nothing else,
//! leaving that to the parser.

use super::diagnostic::{Diagnostic, Span};

/// The deepest block nesting accepted. A declaration needs four levels
/// (`agent` > `ding` > `adapter` > `command`); the rest is headroom.
pub const MAX_NESTING_DEPTH: usize = 16;

/// What the pass found.
#[derive(Debug, Default)]
pub struct Scan {
    /// The `{` that first opens a block deeper than [`MAX_NESTING_DEPTH`].
    pub too_deep_at: Option<usize>,
    /// How many `{` lie inside strings. They open no block, unless the
    /// parser cannot read their string (a bad escape, a control character,
    /// an unclosed raw string): then it reads on as nodes, and recurses
    /// once per such `{`.
    pub string_braces: usize,
    /// The first `{` inside a string past `string_brace_limit`.
    pub too_many_string_braces_at: Option<usize>,
    /// KDL v1 constructs, as ready-made errors.
    pub v1_syntax: Vec<Diagnostic>,
}

impl Scan {
    /// Counts the `{` of the string `bytes[span]`, noting the first past
    /// `limit`.
    fn string(&mut self, bytes: &[u8], span: Span, limit: usize) {
        let start = span.start;
        for (offset, _) in bytes[span].iter().enumerate().filter(|(_, b)| **b == b'{') {
            self.string_braces += 1;
            if self.string_braces > limit && self.too_many_string_braces_at.is_none() {
                self.too_many_string_braces_at = Some(start + offset);
            }
        }
    }
}

/// Bytes that end a bare word (an identifier, a number, a v1 keyword).
fn ends_word(byte: u8) -> bool {
    byte.is_ascii_whitespace() || b"(){}[];=\"/\\#".contains(&byte)
}

/// Scans `text`; `string_brace_limit` is the most `{` its strings may hold
/// before [`Scan::too_many_string_braces_at`] is set.
pub fn scan(text: &str, string_brace_limit: usize) -> Scan {
    let bytes = text.as_bytes();
    let mut scan = Scan::default();
    let mut depth = 0usize;
    let mut at = 0usize;
    while at < bytes.len() {
        let rest = &bytes[at..];
        at = match rest {
            [b'/', b'/', ..] => skip_line(bytes, at),
            [b'/', b'*', ..] => skip_block_comment(bytes, at),
            [b'"', b'"', b'"', ..] => {
                let end = skip_quoted(bytes, at + 3, true).0;
                scan.string(bytes, at..end, string_brace_limit);
                end
            }
            [b'"', ..] => {
                let (end, line_break) = skip_quoted(bytes, at + 1, false);
                scan.string(bytes, at..end, string_brace_limit);
                // Only a closed string reads as v1; an unclosed one is a
                // plain syntax error, which the parser reports better.
                let closed =
                    end <= bytes.len() && bytes.get(end - 1) == Some(&b'"') && end > at + 1;
                if line_break && closed {
                    scan.v1_syntax.push(
                        Diagnostic::error(
                            at..end,
                            "a line break inside a \"...\" string: KDL v1 allowed it, declarations are KDL v2",
                        )
                        .hint("close the string on its own line, or use a v2 multi-line string: \"\"\" then a line break, the text, and \"\"\" on its own line"),
                    );
                }
                end
            }
            [b'#', ..] => {
                let hashes = rest.iter().take_while(|&&b| b == b'#').count();
                if bytes.get(at + hashes) == Some(&b'"') {
                    let end = skip_raw(bytes, at + hashes, hashes);
                    scan.string(bytes, at..end, string_brace_limit);
                    end
                } else {
                    // A v2 keyword such as `#true`: skip it whole.
                    skip_word(bytes, at + hashes)
                }
            }
            [b'{', ..] => {
                depth += 1;
                if depth > MAX_NESTING_DEPTH {
                    scan.too_deep_at = Some(at);
                    return scan;
                }
                at + 1
            }
            [b'}', ..] => {
                depth = depth.saturating_sub(1);
                at + 1
            }
            [b'r', b'"' | b'#', ..] if at == 0 || ends_word(bytes[at - 1]) => {
                let hashes = rest[1..].iter().take_while(|&&b| b == b'#').count();
                if bytes.get(at + 1 + hashes) == Some(&b'"') {
                    let end = skip_raw(bytes, at + 1 + hashes, hashes);
                    scan.string(bytes, at..end, string_brace_limit);
                    scan.v1_syntax.push(v1_raw_string(at..end));
                    end
                } else {
                    at + 1
                }
            }
            [first, ..] if !ends_word(*first) => {
                let end = skip_word(bytes, at);
                let word = &text[at..end];
                if let Some(v2) = v1_keyword(word) {
                    scan.v1_syntax.push(
                        Diagnostic::error(
                            at..end,
                            format!("bare `{word}` is KDL v1 syntax; declarations are KDL v2"),
                        )
                        .hint(format!("write `{v2}`")),
                    );
                }
                end
            }
            _ => at + 1,
        };
    }
    scan
}

fn v1_keyword(word: &str) -> Option<&'static str> {
    match word {
        "true" => Some("#true"),
        "false" => Some("#false"),
        "null" => Some("#null"),
        _ => None,
    }
}

fn v1_raw_string(span: Span) -> Diagnostic {
    Diagnostic::error(
        span,
        "`r\"...\"` raw strings are KDL v1 syntax; declarations are KDL v2",
    )
    .hint("drop the `r` and wrap in `#`: write #\"...\"# (add a `#` on both sides for each `\"#` inside)")
}

fn skip_word(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && !ends_word(bytes[at]) {
        at += 1;
    }
    at
}

fn skip_line(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |newline| at + newline + 1)
}

/// Skips a (nested) block comment starting at `/*`; an unterminated one runs
/// to the end, where the parser reports it.
fn skip_block_comment(bytes: &[u8], mut at: usize) -> usize {
    let mut open = 0usize;
    while at < bytes.len() {
        match &bytes[at..] {
            [b'/', b'*', ..] => {
                open += 1;
                at += 2;
            }
            [b'*', b'/', ..] => {
                open -= 1;
                at += 2;
                if open == 0 {
                    return at;
                }
            }
            _ => at += 1,
        }
    }
    at
}

/// Skips an escaped string body starting after its opening quote(s);
/// returns the offset after the closing quote(s) and whether a raw line
/// break occurred (which only a multi-line string may hold).
fn skip_quoted(bytes: &[u8], mut at: usize, multi_line: bool) -> (usize, bool) {
    let mut line_break = false;
    while at < bytes.len() {
        match &bytes[at..] {
            [b'\\', ..] => at += 2,
            [b'"', b'"', b'"', ..] if multi_line => return (at + 3, line_break),
            [b'"', ..] if !multi_line => return (at + 1, line_break),
            [b'\n' | b'\r', ..] => {
                line_break = true;
                at += 1;
            }
            _ => at += 1,
        }
    }
    (bytes.len(), line_break)
}

/// Skips a raw string whose opening quote is at `at`, closed by a quote (or
/// three, for a multi-line raw string) followed by `hashes` hashes.
fn skip_raw(bytes: &[u8], at: usize, hashes: usize) -> usize {
    let quotes = if bytes[at..].starts_with(b"\"\"\"") {
        3
    } else {
        1
    };
    let mut close = vec![b'"'; quotes];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = at + quotes;
    bytes
        .get(body..)
        .and_then(|tail| tail.windows(close.len()).position(|window| window == close))
        .map_or(bytes.len(), |found| body + found + close.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v1_spans(text: &str) -> Vec<&str> {
        scan(text, usize::MAX)
            .v1_syntax
            .iter()
            .map(|diagnostic| &text[diagnostic.span.clone()])
            .collect()
    }

    #[test]
    fn finds_v1_keywords_raw_strings_and_multi_line_strings() {
        let text = "a true x=false null\nb r\"raw\" r#\"x\"y\"#\nc \"one\ntwo\"\n";
        assert_eq!(
            v1_spans(text),
            [
                "true",
                "false",
                "null",
                "r\"raw\"",
                "r#\"x\"y\"#",
                "\"one\ntwo\""
            ]
        );
    }

    #[test]
    fn v2_spellings_and_quoted_words_are_not_v1() {
        let text = "a #true #null \"true\" #\"r\"raw\"\"# truer\n// true\n/* null */ b \"\"\"\nmulti\n\"\"\"\n";
        assert!(v1_spans(text).is_empty(), "{:?}", v1_spans(text));
    }

    #[test]
    fn braces_in_strings_and_comments_do_not_nest() {
        let text = format!(
            "a \"{}\" /* {} */ // {}\n",
            "{".repeat(40),
            "{".repeat(40),
            "{".repeat(40)
        );
        assert_eq!(scan(&text, usize::MAX).too_deep_at, None);
    }

    #[test]
    fn nesting_past_the_limit_is_found_at_its_brace() {
        let within = "a{".repeat(MAX_NESTING_DEPTH) + &"}".repeat(MAX_NESTING_DEPTH);
        assert_eq!(scan(&within, usize::MAX).too_deep_at, None);
        let deeper = "a{".repeat(MAX_NESTING_DEPTH + 1);
        assert_eq!(
            scan(&deeper, usize::MAX).too_deep_at,
            Some(2 * MAX_NESTING_DEPTH + 1)
        );
    }

    #[test]
    fn unterminated_constructs_end_the_scan_without_panicking() {
        for text in [
            "\"abc",
            "#\"abc",
            "/* /* */",
            "r#\"x",
            "\"\"\"\nx",
            "a \\",
            "\"\\",
        ] {
            let _ = scan(text, usize::MAX);
        }
    }
}
