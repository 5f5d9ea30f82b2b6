//! The declaration text as read: its origin, its bytes decoded as UTF-8, and
//! the map from byte offsets to 1-based `line:column` positions.
//!
//! This file owns the input limits that hold before any parsing happens (size,
//! encoding). It leaves syntax to `syntax` and meaning to `raw` and `lower`.

use std::fmt;

use super::diagnostic::Diagnostic;

/// The largest declaration accepted, in bytes. The KDL parser recurses per
/// byte on some malformed inputs, so this bound also bounds its stack use
/// (see `syntax::PARSER_STACK_PER_BYTE`). A fleet larger than this belongs in
/// several files.
pub const MAX_DECLARATION_BYTES: usize = 64 * 1024;

/// A 1-based position: the line, and the column counted in characters
/// (a tab or an emoji is one column, as editors' "go to line:col" expect).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Decoded declaration text plus what it takes to point into it.
#[derive(Clone, Debug)]
pub struct Source {
    origin: String,
    text: String,
    /// Byte offset at which each line starts; `line_starts[0] == 0`.
    line_starts: Vec<usize>,
}

impl Source {
    /// Wraps already-decoded text. `origin` is how diagnostics name the file.
    pub fn new(origin: impl Into<String>, text: impl Into<String>) -> Source {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(
            text.char_indices()
                .filter(|&(_, c)| c == '\n')
                .map(|(offset, _)| offset + 1),
        );
        Source {
            origin: origin.into(),
            text,
            line_starts,
        }
    }

    /// Checks the limits that come before syntax (size, then UTF-8) and
    /// decodes. When a limit is broken the diagnostic says why, and the
    /// source (then only good for positioning it) must not be parsed.
    pub fn decode(origin: &str, bytes: &[u8]) -> (Source, Option<Diagnostic>) {
        if bytes.len() > MAX_DECLARATION_BYTES {
            let source = Source::new(origin, "");
            let diagnostic = Diagnostic::error(
                0..0,
                format!("declaration is larger than the limit of {MAX_DECLARATION_BYTES} bytes"),
            )
            .hint("declare a large fleet across several files");
            return (source, Some(diagnostic));
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => (Source::new(origin, text), None),
            Err(err) => {
                let bad = err.valid_up_to();
                // The valid prefix positions the bad byte exactly; the lossy
                // rest only keeps later offsets in range. The span is in the
                // decoded text, where the bad byte became U+FFFD.
                let source = Source::new(origin, String::from_utf8_lossy(bytes));
                let byte = bytes.get(bad).copied().unwrap_or_default();
                let diagnostic = Diagnostic::error(
                    bad..bad + char::REPLACEMENT_CHARACTER.len_utf8(),
                    format!("declaration is not valid UTF-8 (byte 0x{byte:02x})"),
                )
                .hint("KDL v2 files are UTF-8; re-save the file as UTF-8");
                (source, Some(diagnostic))
            }
        }
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The position of a byte offset. Offsets past the end clamp to the end;
    /// an offset inside a multi-byte character points at that character.
    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line_index = match self.line_starts.binary_search(&offset) {
            Ok(index) => index,
            Err(next) => next.saturating_sub(1),
        };
        let line_start = self.line_starts.get(line_index).copied().unwrap_or(0);
        let before = self.text.get(line_start..offset).map_or_else(
            // Inside a multi-byte character: count the characters that start
            // before the offset.
            || {
                self.text[line_start..]
                    .char_indices()
                    .take_while(|&(at, _)| line_start + at < offset)
                    .count()
                    .saturating_sub(1)
            },
            |prefix| prefix.chars().count(),
        );
        // A byte-order mark is invisible in editors; do not count it.
        let bom = usize::from(line_index == 0 && self.text.starts_with('\u{feff}') && offset > 0);
        Position {
            line: line_index + 1,
            column: before.saturating_sub(bom) + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_and_count_characters() {
        let source = Source::new("a.kdl", "ab\nçé x\n\nz");
        assert_eq!(source.position(0), Position { line: 1, column: 1 });
        assert_eq!(source.position(1), Position { line: 1, column: 2 });
        assert_eq!(source.position(3), Position { line: 2, column: 1 });
        // `x` follows two 2-byte characters and a space.
        assert_eq!(source.position(8), Position { line: 2, column: 4 });
        assert_eq!(source.position(10), Position { line: 3, column: 1 });
        assert_eq!(source.position(11), Position { line: 4, column: 1 });
        assert_eq!(source.position(999), Position { line: 4, column: 2 });
    }

    #[test]
    fn offset_inside_a_character_points_at_that_character() {
        let source = Source::new("a.kdl", "aé");
        assert_eq!(source.position(2), Position { line: 1, column: 2 });
    }

    #[test]
    fn byte_order_mark_is_not_a_column() {
        let source = Source::new("a.kdl", "\u{feff}agent");
        assert_eq!(source.position(3), Position { line: 1, column: 1 });
    }

    #[test]
    fn non_utf8_input_points_at_the_first_bad_byte() {
        let (source, diagnostic) = Source::decode("a.kdl", b"agent \"w\"\n  cwd \"\xff\"");
        let diagnostic = diagnostic.expect("invalid UTF-8 is refused");
        assert_eq!(
            source.position(diagnostic.span.start),
            Position { line: 2, column: 8 }
        );
        assert!(
            diagnostic.message.contains("not valid UTF-8"),
            "{}",
            diagnostic.message
        );
    }

    /// The decoded text holds U+FFFD where the bad byte was: the span
    /// covers that whole character, so it can slice the text it points into.
    #[test]
    fn the_span_of_a_bad_byte_is_its_replacement_character() {
        for bytes in [&b"\xa2"[..], b"ab\xff\xfecd", b"x\xe2\x80"] {
            let (source, diagnostic) = Source::decode("a.kdl", bytes);
            let span = diagnostic.expect("invalid UTF-8 is refused").span;
            assert_eq!(
                source.text().get(span.clone()),
                Some("\u{fffd}"),
                "{bytes:?}: {span:?}"
            );
        }
    }

    #[test]
    fn oversized_input_is_refused_before_decoding() {
        let big = vec![b' '; MAX_DECLARATION_BYTES + 1];
        let (_, diagnostic) = Source::decode("a.kdl", &big);
        let diagnostic = diagnostic.expect("oversized input is refused");
        assert!(diagnostic.message.contains("larger than the limit"));
        assert!(
            Source::decode("a.kdl", &big[..MAX_DECLARATION_BYTES])
                .1
                .is_none()
        );
    }
}
