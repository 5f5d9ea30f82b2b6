//! `names`: the escape rule and every in-process path that prints a name.
//!
//! The input, split at NUL bytes (which no filename holds), is: the agent
//! label, the unread-directory label, a hostile string used for every other
//! untrusted text (identity, adapter reason, paths, log fields), a cut
//! length, then filenames: UTF-8 ones become message names, the others
//! entries of `new/` that are not UTF-8. Invariants, checked against the
//! independent list of harmful characters in `tests/support/hostile.rs`:
//!
//! * no output of the notice (inside the transport's own framing: paste
//!   brackets and Return), the hook context, live status (human and JSON)
//!   or a log line (both formats) holds a C0 or C1 control, DEL, a line or
//!   paragraph break, or a bidi, zero-width, format, tag or variation
//!   character; the human status and the JSON are several lines, each
//!   harmless;
//! * escaping reads back to the exact name, bytes that are not UTF-8
//!   included; a bounded escape is within its bound, never splits an
//!   escape, and reads back to a prefix of the text;
//! * the notice is at most 4,096 bytes and names at least one file.

use ding::core::message::MessageName;
use ding::core::notice::{MAX_NOTICE_BYTES, Notice};
use ding::escape::{escape, escape_bounded, escape_bytes, is_displayable};

use super::super::support_hostile::{
    assert_harmless, assert_shown, check_in_process_paths, unescape,
};
use super::super::target::Target;

pub const TARGET: Target = Target {
    name: "names",
    check,
    tokens: &[
        "\u{0}",
        "m.md",
        "\u{0}\u{ff}",
        ".",
        "..",
        "/",
        "\\u{1b}",
        "\\x{ff}",
        "...",
    ],
    bounds: &[255, 256, MAX_NOTICE_BYTES],
};

fn check(input: &[u8]) -> String {
    let mut fields = input.split(|&b| b == 0);
    let agent = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let dir = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let hostile = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let cut = fields.next().map_or(16, |bytes| {
        bytes.iter().map(|&b| usize::from(b)).sum::<usize>()
    });
    let mut names = Vec::new();
    let mut unreadable = Vec::new();
    for bytes in fields {
        match std::str::from_utf8(bytes) {
            Ok(text) => names.extend(MessageName::new(text).ok()),
            Err(_) if bytes.len() <= 255 && !bytes.contains(&b'/') => {
                unreadable.push(bytes.to_vec())
            }
            Err(_) => {}
        }
    }
    names.sort();
    names.dedup();
    unreadable.sort();
    unreadable.dedup();

    for bytes in names
        .iter()
        .map(|name| name.as_str().as_bytes())
        .chain(unreadable.iter().map(Vec::as_slice))
        .chain([agent.as_bytes(), dir.as_bytes(), hostile.as_bytes()])
    {
        let shown = escape_bytes(bytes);
        assert!(is_displayable(&shown), "{shown:?}");
        assert_eq!(unescape(&shown), bytes, "{shown:?}");
    }
    for label in [&agent, &dir, &hostile] {
        bounded(label, cut);
    }
    if names.is_empty() {
        return format!("labels:{}", unreadable.len().min(2));
    }
    let notice = Notice::build(&names, names.len() + 3, 1 + cut % 20, &agent, &dir)
        .expect("a notice for a non-empty list");
    assert!(notice.text().len() <= MAX_NOTICE_BYTES);
    assert!(!notice.named().is_empty());
    assert_harmless("notice", notice.text());
    assert_shown("notice", notice.text(), notice.named(), &[]);
    check_in_process_paths(&names, &unreadable, &hostile);
    format!(
        "named:{}:{}",
        notice.named().len().min(4),
        (notice.named().len() < names.len()) as u8
    )
}

/// `escape_bounded(text, max)`: within `max` characters, unchanged when it
/// fits, else a prefix of whole escapes marked with `...`.
fn bounded(text: &str, max: usize) {
    let shown = escape_bounded(text, max);
    let full = escape(text);
    assert!(is_displayable(&shown), "{shown:?}");
    if full.chars().count() <= max {
        assert_eq!(shown, full);
        return;
    }
    assert!(shown.chars().count() <= max.max(3), "{shown:?} over {max}");
    let prefix = shown.strip_suffix("...").expect("a cut escape ends in ...");
    assert!(
        text.as_bytes().starts_with(&unescape(prefix)),
        "{prefix:?} is not a prefix of {text:?}"
    );
}
