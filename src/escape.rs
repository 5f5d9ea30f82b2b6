//! How DING shows text it does not control: the one rule.
//!
//! Filenames from an inbox, adapter and PTY reports, anything read back
//! from disk can hold bytes a terminal or a line editor acts on: a line
//! feed that submits a line, `ESC ]52;` that writes the clipboard, a C1
//! control, a bidi override or a zero-width character that makes a name
//! look like another. Every path that prints such text (the notice, hook
//! context, `ding status`, the logs) goes through this module, so the rule
//! is written once.
//!
//! The rule escapes what a terminal would act on or hide, and shows every
//! other character as itself, as `tmux capture-pane` does: a box-drawing
//! character, a prompt glyph, an accented letter or a CJK one prints as
//! written. Escaped ([`is_plain`] is false): controls (C0, DEL, C1), line
//! and paragraph separators, every space but the ASCII one (it looks like
//! a space and is not), format characters (bidi controls, zero-width
//! characters, the soft hyphen, tags), the other invisible
//! (default-ignorable) code points such as the Hangul fillers and
//! variation selectors, noncharacters, and `\` itself. Each is written as
//! `\u{hex}` (so a backslash is `\u{5c}`), and every byte that is not
//! UTF-8 as `\x{hex}`. The result is one line that draws exactly what it
//! says, and it is exact: the original can be read back from it.
//!
//! JSON is written by the same rule in `crate::sidecar::escaped_json`,
//! outside this sans-IO room, because serde's writer is an I/O trait.

use std::fmt::Write as _;
use std::ops::RangeInclusive;

/// Code points that draw nothing, or change how their neighbours draw
/// without showing themselves: the format characters (general category
/// Cf: bidi controls, zero-width characters, the soft hyphen, prepended
/// number marks, tags) and the other default-ignorable code points
/// (Unicode 16: the Hangul fillers, variation selectors, the combining
/// grapheme joiner, the Mongolian free variation selectors). Letters that
/// look like others are not here: they draw, and a reader can see them.
const HIDDEN: [RangeInclusive<char>; 25] = [
    '\u{ad}'..='\u{ad}',
    '\u{34f}'..='\u{34f}',
    '\u{600}'..='\u{605}',
    '\u{61c}'..='\u{61c}',
    '\u{6dd}'..='\u{6dd}',
    '\u{70f}'..='\u{70f}',
    '\u{890}'..='\u{891}',
    '\u{8e2}'..='\u{8e2}',
    '\u{115f}'..='\u{1160}',
    '\u{17b4}'..='\u{17b5}',
    '\u{180b}'..='\u{180f}',
    '\u{200b}'..='\u{200f}',
    '\u{202a}'..='\u{202e}',
    '\u{2060}'..='\u{206f}',
    '\u{3164}'..='\u{3164}',
    '\u{fe00}'..='\u{fe0f}',
    '\u{feff}'..='\u{feff}',
    '\u{ffa0}'..='\u{ffa0}',
    '\u{fff0}'..='\u{fffb}',
    '\u{110bd}'..='\u{110bd}',
    '\u{110cd}'..='\u{110cd}',
    '\u{13430}'..='\u{1343f}',
    '\u{1bca0}'..='\u{1bca3}',
    '\u{1d173}'..='\u{1d17a}',
    '\u{e0000}'..='\u{e0fff}',
];

/// Whether `c` is shown as itself: any character a terminal draws as what
/// it is. Not `\` (so that the rule is exact), a control, a space other
/// than the ASCII one, a line or paragraph separator, a hidden code point
/// ([`HIDDEN`]) or a noncharacter.
pub fn is_plain(c: char) -> bool {
    match c {
        ' ' => true,
        '\\' => false,
        c if c.is_control() || c.is_whitespace() => false,
        c => !is_noncharacter(c) && !HIDDEN.iter().any(|hidden| hidden.contains(&c)),
    }
}

/// The 66 code points Unicode promises never to assign.
fn is_noncharacter(c: char) -> bool {
    let code = u32::from(c);
    (0xfdd0..=0xfdef).contains(&code) || code & 0xfffe == 0xfffe
}

/// `text` by the rule: every character that is not [`is_plain`] as
/// `\u{hex}`. Exact and unambiguous, because `\` itself is escaped.
pub fn escape(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    push_escaped(&mut shown, text);
    shown
}

/// [`escape`] for bytes that may not be UTF-8 (a filename on Linux): each
/// byte that is not part of a UTF-8 character is written as `\x{hex}`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut shown = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        push_escaped(&mut shown, chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(shown, "\\x{{{byte:x}}}");
        }
    }
    shown
}

/// A path by the rule: [`escape_bytes`] of its bytes, so a path that is not
/// UTF-8 or holds a control character prints harmlessly and exactly.
pub fn escape_path(path: &std::path::Path) -> String {
    escape_bytes(path.as_os_str().as_encoded_bytes())
}

/// [`escape`], cut to at most `max_chars` characters (an escape is never
/// split) and marked with `...` when it was cut.
pub fn escape_bounded(text: &str, max_chars: usize) -> String {
    let shown = escape(text);
    if shown.chars().count() <= max_chars {
        return shown;
    }
    let budget = max_chars.saturating_sub(3);
    let mut cut = String::new();
    let mut count = 0;
    let mut piece = String::new();
    for c in text.chars() {
        piece.clear();
        push_char(&mut piece, c);
        count += piece.chars().count();
        if count > budget {
            break;
        }
        cut.push_str(&piece);
    }
    cut.push_str("...");
    cut
}

/// For text that is already meant for people (an error message, a status
/// line this module escaped): every character that is not plain is
/// escaped except `\`, which is kept, so text already shown by the rule
/// passes unchanged. Not exact; use [`escape`] for raw data.
pub fn displayable(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' {
            shown.push(c);
        } else {
            push_char(&mut shown, c);
        }
    }
    shown
}

/// Reverses [`escape_bytes`] (and so [`escape`]): `\u{hex}` back to its
/// character, `\x{hex}` to its byte. `None` when `shown` is not something
/// the rule writes: a bare `\`, an escape that is not closed, not hex, not
/// a character or not a byte. So a name printed by a notice or `ding
/// status` can be given back to a command exactly as printed.
pub fn unescape(shown: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(shown.len());
    let mut rest = shown;
    while let Some(at) = rest.find('\\') {
        bytes.extend_from_slice(&rest.as_bytes()[..at]);
        let tail = &rest[at + 1..];
        let (unicode, body) = match tail.strip_prefix("u{") {
            Some(body) => (true, body),
            None => (false, tail.strip_prefix("x{")?),
        };
        let close = body.find('}')?;
        let code = u32::from_str_radix(&body[..close], 16).ok()?;
        if unicode {
            let mut utf8 = [0; 4];
            bytes.extend_from_slice(char::from_u32(code)?.encode_utf8(&mut utf8).as_bytes());
        } else {
            bytes.push(u8::try_from(code).ok()?);
        }
        rest = &body[close + 1..];
    }
    bytes.extend_from_slice(rest.as_bytes());
    Some(bytes)
}

/// Whether `text` holds only what this module ever writes: plain
/// characters and `\`. No control, line break, format or bidi character.
pub fn is_displayable(text: &str) -> bool {
    text.chars().all(|c| c == '\\' || is_plain(c))
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        push_char(out, c);
    }
}

fn push_char(out: &mut String, c: char) {
    if is_plain(c) {
        out.push(c);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// What the rule writes reads back exactly, for any bytes.
        #[test]
        fn unescape_reads_back_whatever_escape_bytes_wrote(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(unescape(&escape_bytes(&bytes)), Some(bytes));
        }
    }

    proptest! {
        /// What the rule writes draws as it reads: no control, no space but
        /// the ASCII one, nothing hidden; and every character that is none
        /// of those (or `\`) is shown as itself.
        #[test]
        fn escaped_text_holds_nothing_a_terminal_acts_on_or_hides(text in any::<String>()) {
            let shown = escape(&text);
            for c in shown.chars() {
                prop_assert!(!c.is_control() && (c == ' ' || !c.is_whitespace()), "{:?} in {}", c, shown);
                prop_assert!(!HIDDEN.iter().any(|hidden| hidden.contains(&c)) && !is_noncharacter(c), "{:?}", c);
            }
            for c in text.chars().filter(|&c| is_plain(c)) {
                prop_assert!(shown.contains(c), "{:?} not shown as itself in {}", c, shown);
            }
        }
    }

    #[test]
    fn unescape_refuses_what_the_rule_never_writes() {
        for bad in ["a\\b", "\\u{", "\\u{zz}", "\\u{d800}", "\\x{100}", "end\\"] {
            assert_eq!(unescape(bad), None, "{bad}");
        }
        assert_eq!(unescape("a\\u{a}b.md"), Some(b"a\nb.md".to_vec()));
    }
    use super::*;

    #[test]
    fn plain_text_is_shown_as_itself() {
        assert_eq!(escape("0001-task.md"), "0001-task.md");
        assert_eq!(escape("plain-ünïcode Ω 日本.md"), "plain-ünïcode Ω 日本.md");
    }

    #[test]
    fn what_a_terminal_draws_is_shown_as_itself() {
        // A TUI's frame and bullets, a decomposed accent, an arrow, an
        // emoji, a private-use glyph of a patched font.
        for drawn in ["╭──╮ │ ╰──╯", "● ○ ■ ▸ ⚠", "e\u{301}", "→ ✓ 😀", "\u{e0b0}"]
        {
            assert_eq!(escape(drawn), drawn);
        }
    }

    #[test]
    fn noncharacters_and_emoji_selectors_are_escaped() {
        assert_eq!(
            escape("\u{fdd0}\u{fffe}\u{10ffff}"),
            "\\u{fdd0}\\u{fffe}\\u{10ffff}"
        );
        assert_eq!(escape("❤\u{fe0f}"), "❤\\u{fe0f}");
        assert_eq!(escape("\u{1680}\u{3000}"), "\\u{1680}\\u{3000}");
    }

    #[test]
    fn line_breaks_controls_and_invisible_characters_are_escaped() {
        assert_eq!(
            escape("a\nb\rc\u{b}\u{c}\u{85}\u{2028}\u{2029}"),
            "a\\u{a}b\\u{d}c\\u{b}\\u{c}\\u{85}\\u{2028}\\u{2029}"
        );
        assert_eq!(
            escape("\u{1b}]52;c;eA==\u{7}\u{9b}\u{7f}"),
            "\\u{1b}]52;c;eA==\\u{7}\\u{9b}\\u{7f}"
        );
        assert_eq!(
            escape("\u{200b}\u{200d}\u{202e}\u{2066}\u{feff}\u{ad}\u{e0041}\u{3164}"),
            "\\u{200b}\\u{200d}\\u{202e}\\u{2066}\\u{feff}\\u{ad}\\u{e0041}\\u{3164}"
        );
        assert_eq!(escape("back\\slash"), "back\\u{5c}slash");
        assert_eq!(escape("no\u{a0}break"), "no\\u{a0}break");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_shown_as_hex() {
        assert_eq!(escape_bytes(b"bad-\xff\xfe.md"), "bad-\\x{ff}\\x{fe}.md");
        assert_eq!(escape_bytes("é\n".as_bytes()), "é\\u{a}");
    }

    #[test]
    fn bounded_escapes_are_never_cut_in_the_middle() {
        assert_eq!(escape_bounded("short", 256), "short");
        assert_eq!(escape_bounded("abcdefghij", 10), "abcdefghij");
        assert_eq!(escape_bounded("abcdefghijk", 10), "abcdefg...");
        assert_eq!(escape_bounded("abcde\n", 10), "abcde\\u{a}");
        assert_eq!(escape_bounded("abcde\nz", 10), "abcde...");
        let long: String = std::iter::repeat_n('\u{1b}', 300).collect();
        let shown = escape_bounded(&long, 256);
        assert!(shown.chars().count() <= 256 && shown.ends_with("\\u{1b}..."));
    }

    #[test]
    fn displayable_keeps_backslashes_and_escapes_the_rest() {
        assert_eq!(displayable("a\\u{a}b"), "a\\u{a}b");
        assert_eq!(displayable("x\ny\u{1b}"), "x\\u{a}y\\u{1b}");
        assert!(is_displayable(&displayable("\u{9b}\\\u{2028}")));
    }
}
