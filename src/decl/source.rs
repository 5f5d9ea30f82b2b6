//! The declaration text as read: its origin, its text, and the map from byte
//! offsets to 1-based `line:column` positions. The limits that come before
//! it (size, encoding) are `limits.rs`'s; syntax is `syntax`'s and meaning
//! `raw`'s and `lower`'s.

use std::fmt;

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
}
