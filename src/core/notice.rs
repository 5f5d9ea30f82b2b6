//! The notice: the one line of text DING types into a terminal.
//!
//! It names exact filenames and says how to read and archive them. It is
//! bounded ([`MAX_NOTICE_BYTES`]) and built only from sanitized text, because
//! a hostile filename must never inject keystrokes. Two layers protect it:
//!
//! 1. Each filename is *escaped*: every character that sanitizing would remove
//!    (and the backslash itself) is written as `\u{hex}`, so the agent still
//!    sees an exact, unambiguous name.
//! 2. The finished text is *sanitized*: every C0 control but LF, DEL, every C1
//!    control and the bidi overrides are removed, and the result is checked
//!    again. Removing characters can never create an ESC, so no
//!    `ESC [ 2 0 1 ~` can be reassembled from fragments.

use serde::Serialize;

use super::message::MessageName;

/// The longest notice in bytes. One escaped name of the longest length
/// always fits, so a notice always names at least one file.
pub const MAX_NOTICE_BYTES: usize = 4096;

/// The longest rendering of the agent name or the unread directory.
pub const MAX_LABEL_CHARS: usize = 256;

/// A sanitized notice and the exact files it names, in FIFO order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Notice {
    text: String,
    named: Vec<MessageName>,
}

impl Notice {
    /// Builds the notice for the oldest of `pending` (FIFO order), naming at
    /// most `max_files` of them and as many as fit in [`MAX_NOTICE_BYTES`].
    /// `total` is how many are pending in all, so the notice can say how many
    /// more wait. Returns `None` only when `pending` is empty.
    pub fn build<'a>(
        pending: impl IntoIterator<Item = &'a MessageName>,
        total: usize,
        max_files: usize,
        agent: &str,
        unread_dir: &str,
    ) -> Option<Notice> {
        let agent = label(agent);
        let unread_dir = label(unread_dir);
        let mut named: Vec<MessageName> = Vec::new();
        let mut listed = String::new();
        for name in pending.into_iter().take(max_files.max(1)) {
            let shown = escape_name(name.as_str());
            let separator = if named.is_empty() { "" } else { ", " };
            // The rendered length is the frame's (which depends only on the
            // count, through "and N more") plus the list's, so each
            // candidate costs one short frame render, not a whole notice.
            let frame = render(total, named.len() + 1, "", &agent, &unread_dir).len();
            let candidate = frame + listed.len() + separator.len() + shown.len();
            if candidate > MAX_NOTICE_BYTES && !named.is_empty() {
                break;
            }
            listed.push_str(separator);
            listed.push_str(&shown);
            named.push(name.clone());
        }
        if named.is_empty() {
            return None;
        }
        let text = sanitize(&render(total, named.len(), &listed, &agent, &unread_dir));
        debug_assert!(is_clean(&text));
        Some(Notice { text, named })
    }

    /// The sanitized text, without any paste brackets.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The files this notice names, oldest first.
    pub fn named(&self) -> &[MessageName] {
        &self.named
    }
}

fn render(total: usize, named: usize, listed: &str, agent: &str, dir: &str) -> String {
    let noun = if total == 1 { "message" } else { "messages" };
    let more = total.saturating_sub(named);
    let more = if more > 0 {
        format!(" (and {more} more)")
    } else {
        String::new()
    };
    format!(
        "[ding] {total} unread inbox {noun} in {dir}: {listed}{more}. \
         Read each file, then archive it: ding archive {agent} FILE"
    )
}

/// Whether `c` must never reach a terminal from notice text.
pub fn is_forbidden(c: char) -> bool {
    let code = u32::from(c);
    (c.is_ascii_control() && c != '\n')
        || (0x80..=0x9f).contains(&code)
        || (0x202a..=0x202e).contains(&code)
        || (0x2066..=0x2069).contains(&code)
}

/// Removes every forbidden character (see [`is_forbidden`]).
pub fn sanitize(text: &str) -> String {
    text.chars().filter(|&c| !is_forbidden(c)).collect()
}

/// Whether `text` contains no forbidden character.
pub fn is_clean(text: &str) -> bool {
    !text.chars().any(is_forbidden)
}

/// A filename as the notice shows it: forbidden characters and `\` become
/// `\u{hex}` escapes, so the shown name is printable and unambiguous.
pub fn escape_name(name: &str) -> String {
    let mut shown = String::with_capacity(name.len());
    for c in name.chars() {
        if is_forbidden(c) || c == '\\' {
            shown.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Configuration text for the notice (the agent name, the unread
/// directory): sanitized, one line, at most 256 characters. Hook context
/// that names the same things renders them the same way.
pub fn label(text: &str) -> String {
    let clean: String = sanitize(text)
        .chars()
        .map(|c| if c == '\n' { ' ' } else { c })
        .collect();
    if clean.chars().count() <= MAX_LABEL_CHARS {
        return clean;
    }
    let mut cut: String = clean.chars().take(MAX_LABEL_CHARS - 3).collect();
    cut.push_str("...");
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<MessageName> {
        list.iter().map(|n| MessageName::new(n).unwrap()).collect()
    }

    #[test]
    fn notice_names_exact_files_and_says_how_to_archive() {
        let pending = names(&["001.md", "002.md"]);
        let notice = Notice::build(&pending, 2, 16, "worker", "inbox/new").unwrap();
        assert_eq!(
            notice.text(),
            "[ding] 2 unread inbox messages in inbox/new: 001.md, 002.md. \
             Read each file, then archive it: ding archive worker FILE"
        );
        assert_eq!(notice.named(), &pending[..]);
    }

    #[test]
    fn notice_names_at_most_max_files_and_counts_the_rest() {
        let pending = names(&["a", "b", "c", "d"]);
        let notice = Notice::build(&pending, 10, 2, "w", "d").unwrap();
        assert_eq!(notice.named(), &pending[..2]);
        assert!(
            notice.text().contains(": a, b (and 8 more)."),
            "{}",
            notice.text()
        );
    }

    #[test]
    fn sanitize_removes_every_forbidden_class() {
        let mut hostile = String::new();
        for code in (0u32..0x20)
            .chain([0x7f])
            .chain(0x80..0xa0)
            .chain(0x202a..0x202f)
            .chain(0x2066..0x206a)
        {
            hostile.push(char::from_u32(code).unwrap());
        }
        hostile.push_str("ok\u{2067}");
        assert_eq!(sanitize(&hostile), "\nok");
    }

    #[test]
    fn no_paste_end_survives_even_when_reassembled_after_stripping() {
        // Each of these would spell ESC[201~ if stripping left the ESC behind,
        // or if the 8-bit CSI (U+009B) counted as ESC[.
        let hostile = [
            "\u{1b}[201~.md",
            "\u{1b}\u{7f}[201~.md",
            "\u{1b}[20\u{7f}1~.md",
            "\u{1b}\u{1b}[[201~~.md",
            "\u{9b}201~.md",
            "[\u{1b}201~\u{1b}.md",
            "\u{202e}\u{1b}[201~.md",
        ];
        for name in hostile {
            let pending = names(&[name]);
            let notice = Notice::build(&pending, 1, 16, "w\u{1b}[201~", "d\u{1b}[201~").unwrap();
            let text = notice.text();
            assert!(
                !text.contains('\u{1b}'),
                "ESC survived for {name:?}: {text:?}"
            );
            assert!(!text.contains("\u{9b}"), "CSI survived for {name:?}");
            assert!(is_clean(text));
            assert_eq!(
                notice.named(),
                &pending[..],
                "the exact name is still owned"
            );
        }
    }

    #[test]
    fn escaped_names_stay_exact_and_printable() {
        assert_eq!(
            escape_name("a\u{1b}b\\c\u{202e}.md"),
            "a\\u{1b}b\\u{5c}c\\u{202e}.md"
        );
        assert_eq!(escape_name("plain-ünïcode.md"), "plain-ünïcode.md");
    }

    #[test]
    fn notice_is_bounded_and_always_names_one_file() {
        let long_hostile: String = std::iter::repeat_n('\u{1}', 255).collect();
        let pending = names(&[&long_hostile, &"y".repeat(255), &"z".repeat(255)]);
        let notice =
            Notice::build(&pending, 3, 256, &"a".repeat(10_000), &"d".repeat(10_000)).unwrap();
        assert!(notice.text().len() <= MAX_NOTICE_BYTES);
        assert!(!notice.named().is_empty());
        let many: Vec<MessageName> = (0..300)
            .map(|i| MessageName::new(&format!("{i:0>250}")).unwrap())
            .collect();
        let notice = Notice::build(&many, 300, 256, "w", "d").unwrap();
        assert!(notice.text().len() <= MAX_NOTICE_BYTES);
        assert!(notice.named().len() < 300 && !notice.named().is_empty());
        assert_eq!(
            notice.named(),
            &many[..notice.named().len()],
            "a FIFO prefix"
        );
        // As many as fit: one more name would have broken the bound.
        let n = notice.named().len();
        let listed: Vec<String> = many[..=n].iter().map(|m| escape_name(m.as_str())).collect();
        assert!(render(300, n + 1, &listed.join(", "), "w", "d").len() > MAX_NOTICE_BYTES);
    }

    #[test]
    fn empty_pending_builds_no_notice() {
        assert_eq!(Notice::build(&[], 0, 16, "w", "d"), None);
    }
}
