//! The notice: the one line of text DING types into a terminal.
//!
//! It names exact filenames and says how to read and archive them. It is
//! bounded ([`MAX_NOTICE_BYTES`]) and built only from escaped text, because
//! a hostile filename must never inject keystrokes: every filename, the
//! unread directory and the agent name are shown by the one rule of
//! [`crate::escape`], so the notice is one line of visible characters with
//! no line break, no control (C0, DEL, C1), no format or bidi character. A
//! line feed in a name is the six characters `\u{a}`, and no ESC can
//! appear, so no `ESC [ 2 0 1 ~` can end the paste early.
//!
//! [`Notice::hook_context`] builds the same text under a larger bound, for
//! provider hooks that put unread work into a model's next context.

use serde::Serialize;

use super::message::MessageName;
use crate::escape::{escape, escape_bounded, is_displayable};

/// The longest notice in bytes. One escaped name of the longest length
/// always fits, so a notice always names at least one file.
pub const MAX_NOTICE_BYTES: usize = 4096;

/// The longest rendering of the agent name or the unread directory.
pub const MAX_LABEL_CHARS: usize = 256;

/// A notice and the exact files it names, in FIFO order.
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
        Notice::hook_context(
            pending,
            total,
            max_files,
            agent,
            unread_dir,
            MAX_NOTICE_BYTES,
        )
    }

    /// The notice's text for a provider hook's context: the same line,
    /// escaped the same way, naming as many files as fit in `max_bytes`
    /// (at least [`MAX_NOTICE_BYTES`], so one file always fits) and saying
    /// how many more wait. [`Notice::build`] is this at the notice's bound.
    pub fn hook_context<'a>(
        pending: impl IntoIterator<Item = &'a MessageName>,
        total: usize,
        max_files: usize,
        agent: &str,
        unread_dir: &str,
        max_bytes: usize,
    ) -> Option<Notice> {
        let max_bytes = max_bytes.max(MAX_NOTICE_BYTES);
        let agent = escape_bounded(agent, MAX_LABEL_CHARS);
        let unread_dir = escape_bounded(unread_dir, MAX_LABEL_CHARS);
        let mut named: Vec<MessageName> = Vec::new();
        let mut listed = String::new();
        for name in pending.into_iter().take(max_files.max(1)) {
            let shown = escape(name.as_str());
            let separator = if named.is_empty() { "" } else { ", " };
            // The rendered length is the frame's (which depends only on the
            // count, through "and N more") plus the list's, so each
            // candidate costs one short frame render, not a whole notice.
            let frame = render(total, named.len() + 1, "", &agent, &unread_dir).len();
            let candidate = frame + listed.len() + separator.len() + shown.len();
            if candidate > max_bytes && !named.is_empty() {
                break;
            }
            listed.push_str(separator);
            listed.push_str(&shown);
            named.push(name.clone());
        }
        if named.is_empty() {
            return None;
        }
        let text = render(total, named.len(), &listed, &agent, &unread_dir);
        // Every part was escaped and the frame is plain ASCII; a notice
        // that is not displayable would be a bug, and is never typed.
        if !is_displayable(&text) {
            debug_assert!(false, "undisplayable notice {text:?}");
            return None;
        }
        Some(Notice { text, named })
    }

    /// The text, without any paste brackets.
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
    fn a_line_break_in_a_name_never_reaches_the_notice() {
        let name = "a-nl\nrm -rf --no-preserve-root ~\n.md";
        let pending = names(&[name]);
        let notice = Notice::build(&pending, 1, 16, "w", "in\nbox/new").unwrap();
        let text = notice.text();
        assert!(!text.contains('\n'), "{text:?}");
        assert!(
            text.contains("a-nl\\u{a}rm -rf --no-preserve-root ~\\u{a}.md"),
            "{text}"
        );
        assert!(text.contains(" in in\\u{a}box/new: "), "{text}");
        assert_eq!(
            notice.named(),
            &pending[..],
            "the exact name is still owned"
        );
    }

    #[test]
    fn every_control_separator_and_format_character_is_escaped() {
        let mut hostile = String::new();
        // NUL cannot be in a filename; everything else can.
        for code in (1u32..0x20)
            .chain([0x7f, 0xad, 0x61c, 0x2028, 0x2029, 0xfeff, 0xe0001, 0x3164])
            .chain(0x80..0xa0)
            .chain(0x200b..0x2010)
            .chain(0x202a..0x202f)
            .chain(0x2060..0x2065)
            .chain(0x2066..0x206a)
        {
            hostile.push(char::from_u32(code).unwrap());
        }
        let pending = names(&[&hostile]);
        let notice = Notice::build(&pending, 1, 16, "w", "d").unwrap();
        assert!(is_displayable(notice.text()), "{:?}", notice.text());
        assert!(
            notice
                .text()
                .chars()
                .all(|c| c.is_ascii_graphic() || c == ' ')
        );
    }

    #[test]
    fn no_paste_end_survives_however_a_name_is_built() {
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
            assert!(is_displayable(text));
            assert_eq!(
                notice.named(),
                &pending[..],
                "the exact name is still owned"
            );
        }
    }

    #[test]
    fn hook_context_is_the_notice_under_a_larger_bound() {
        let many: Vec<MessageName> = (0..300)
            .map(|i| MessageName::new(&format!("{i:0>250}")).unwrap())
            .collect();
        let context = Notice::hook_context(&many, 300, 300, "w", "d", 10_000).unwrap();
        let notice = Notice::build(&many, 300, 300, "w", "d").unwrap();
        assert!(context.text().len() <= 10_000);
        assert!(context.named().len() > notice.named().len());
        assert!(
            context
                .text()
                .starts_with("[ding] 300 unread inbox messages in d: ")
        );
        let tiny = Notice::hook_context(&many, 300, 300, "w", "d", 10).unwrap();
        assert_eq!(tiny, notice, "a bound below the notice's is raised to it");
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
        let listed: Vec<String> = many[..=n].iter().map(|m| escape(m.as_str())).collect();
        assert!(render(300, n + 1, &listed.join(", "), "w", "d").len() > MAX_NOTICE_BYTES);
    }

    #[test]
    fn empty_pending_builds_no_notice() {
        assert_eq!(Notice::build(&[], 0, 16, "w", "d"), None);
    }
}
