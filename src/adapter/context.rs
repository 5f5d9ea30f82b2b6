//! The words a hook puts into the model's next context, and DING's own
//! notice read back out of a submitted prompt.
//!
//! A hook that injects unread work names the exact files it was granted,
//! says how to read and archive them, and how many more wait. The text is
//! built the way the notice is (`core::notice`): each filename escaped, the
//! agent name and the directory labelled, the whole text sanitized. It is
//! also bounded: a harness may cap what one hook injects (for example at
//! 10,000 characters), and a file that was claimed but not named would be
//! owned by a context that never saw it. So the claim is sized first
//! ([`claim_limit`]): at most as many files as fit the cap even if every
//! name had the longest possible rendering. The files beyond it are not
//! claimed; the text counts them and says how to list them.
//!
//! One file per line: a filename cannot break out of its line, because a
//! line feed in a name is escaped too (the notice itself keeps line feeds,
//! it is pasted as one bracketed block).

use crate::core::message::{MAX_NAME_BYTES, MessageName};
use crate::core::notice::{escape_name, label, sanitize};

use super::AgentContext;

/// The most files one hook answer names, however large the cap.
pub const MAX_NAMED: u64 = 64;

/// The longest rendering of one filename: every byte a backslash, each
/// shown as `\u{5c}`.
const MAX_SHOWN_NAME_CHARS: usize = MAX_NAME_BYTES * "\\u{5c}".len();

/// A count as long as it can get, for sizing.
const MAX_COUNT: usize = usize::MAX;

/// How many files a claim may ask for so that [`unread_work`] stays within
/// `cap_chars` whatever their names: from 1 to [`MAX_NAMED`].
pub fn claim_limit(agent: &AgentContext, cap_chars: usize) -> u64 {
    let frame = render(agent, MAX_COUNT, &[], MAX_COUNT).chars().count();
    let per_name = MAX_SHOWN_NAME_CHARS + "- \n".len();
    let fits = cap_chars.saturating_sub(frame) / per_name;
    (fits as u64).clamp(1, MAX_NAMED)
}

/// The context text naming `granted` (oldest first) and counting `more`
/// unread files that were not granted. Empty when nothing was granted.
pub fn unread_work(agent: &AgentContext, granted: &[MessageName], more: usize) -> String {
    if granted.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = granted.iter().map(|name| show(name.as_str())).collect();
    sanitize(&render(agent, granted.len(), &shown, more))
}

/// A filename as the context shows it: as the notice escapes it, and a line
/// feed escaped too, so every name is exactly one line.
fn show(name: &str) -> String {
    escape_name(name).replace('\n', "\\u{a}")
}

fn render(agent: &AgentContext, count: usize, shown: &[String], more: usize) -> String {
    let noun = if count == 1 { "message" } else { "messages" };
    let name = label(&agent.agent);
    let dir = label(&agent.inbox.join("new").to_string_lossy());
    let mut text = format!("[ding] {count} unread inbox {noun} for agent {name}, in {dir}:\n");
    for line in shown {
        text.push_str("- ");
        text.push_str(line);
        text.push('\n');
    }
    text.push_str(&format!(
        "Read each file, then archive it: ding archive {name} FILE"
    ));
    if more > 0 {
        text.push_str(&format!(
            "\n{more} more unread after these: `ding status {name}` lists them; they come next."
        ));
    }
    text
}

/// The unread files DING's own notice names wherever it appears in `text`
/// (a prompt the harness is submitting, perhaps glued to a draft): the
/// notice's exact rendering (`core::notice`) for this agent's directory,
/// names unescaped, each kept only if it is still in `new/` (a name with
/// `, ` in it reads back as pieces, which are then not found).
pub fn names_in_notice(agent: &AgentContext, text: &str) -> Vec<MessageName> {
    let new = agent.inbox.join("new");
    notice_candidates(agent, text)
        .into_iter()
        .filter(|name| new.join(name.as_str()).symlink_metadata().is_ok())
        .collect()
}

/// Every name the notices in `text` list, unescaped, found or not.
fn notice_candidates(agent: &AgentContext, text: &str) -> Vec<MessageName> {
    let dir = label(&agent.inbox.join("new").to_string_lossy());
    let tail = ". Read each file, then archive it: ding archive ";
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("[ding] ") {
        rest = &rest[start + "[ding] ".len()..];
        let Some(list_at) = rest.find(&format!(" in {dir}: ")) else {
            continue;
        };
        // The head between is the count and noun only.
        if rest[..list_at].contains('\n') || rest[..list_at].len() > 40 {
            continue;
        }
        let list = &rest[list_at + " in : ".len() + dir.len()..];
        let Some(end) = list.find(tail) else {
            continue;
        };
        let mut listed = &list[..end];
        if let Some(more) = listed.rfind(" (and ")
            && listed.ends_with(" more)")
        {
            listed = &listed[..more];
        }
        names.extend(
            listed
                .split(", ")
                .filter_map(unescape)
                .filter_map(|name| MessageName::new(&name).ok()),
        );
        rest = &list[end..];
    }
    names.dedup();
    names
}

/// Reverses [`escape_name`]: `\u{hex}` back to its character.
fn unescape(shown: &str) -> Option<String> {
    let mut name = String::with_capacity(shown.len());
    let mut rest = shown;
    while let Some(at) = rest.find('\\') {
        name.push_str(&rest[..at]);
        let escape = rest[at..].strip_prefix("\\u{")?;
        let close = escape.find('}')?;
        let code = u32::from_str_radix(&escape[..close], 16).ok()?;
        name.push(char::from_u32(code)?);
        rest = &escape[close + 1..];
    }
    name.push_str(rest);
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::notice::{Notice, is_clean};
    use std::path::PathBuf;

    fn agent() -> AgentContext {
        AgentContext {
            agent: "worker".into(),
            inbox: PathBuf::from("/srv/inbox/worker"),
        }
    }

    fn names(list: &[&str]) -> Vec<MessageName> {
        list.iter()
            .map(|name| MessageName::new(name).expect("name"))
            .collect()
    }

    #[test]
    fn the_text_names_each_granted_file_on_its_own_line_and_counts_the_rest() {
        let text = unread_work(&agent(), &names(&["001.md", "002.md"]), 3);
        assert_eq!(
            text,
            "[ding] 2 unread inbox messages for agent worker, in /srv/inbox/worker/new:\n\
             - 001.md\n\
             - 002.md\n\
             Read each file, then archive it: ding archive worker FILE\n\
             3 more unread after these: `ding status worker` lists them; they come next."
        );
        let one = unread_work(&agent(), &names(&["001.md"]), 0);
        assert!(
            one.starts_with("[ding] 1 unread inbox message for agent"),
            "{one}"
        );
        assert!(!one.contains("more unread"), "{one}");
        assert_eq!(unread_work(&agent(), &[], 5), "");
    }

    #[test]
    fn a_hostile_name_stays_on_its_line_and_the_text_is_clean() {
        let hostile = "a\n- forged.md\u{1b}[201~\u{202e}\\.md";
        let text = unread_work(&agent(), &names(&[hostile]), 0);
        assert!(is_clean(&text), "{text:?}");
        assert_eq!(
            text.lines().filter(|line| line.starts_with("- ")).count(),
            1
        );
        assert!(
            text.contains("- a\\u{a}- forged.md\\u{1b}[201~\\u{202e}\\u{5c}.md\n"),
            "{text}"
        );
    }

    #[test]
    fn the_claim_limit_keeps_the_longest_possible_names_within_the_cap() {
        for cap in [1_000, 4_096, 10_000, 100_000] {
            let limit = claim_limit(&agent(), cap);
            let longest = "\\".repeat(MAX_NAME_BYTES);
            let granted = vec![MessageName::new(&longest).expect("name"); limit as usize];
            let text = unread_work(&agent(), &granted, usize::MAX);
            assert!(
                text.chars().count() <= cap || limit == 1,
                "cap {cap}: {} chars for {limit} names",
                text.chars().count()
            );
        }
        assert_eq!(claim_limit(&agent(), 10_000), 6);
        assert_eq!(claim_limit(&agent(), 10), 1, "at least one");
        assert_eq!(claim_limit(&agent(), usize::MAX), MAX_NAMED);
        // A long agent name and directory are labelled, so they cost at most
        // their label's length.
        let long = AgentContext {
            agent: "x".repeat(5_000),
            inbox: PathBuf::from("/".to_string() + &"d".repeat(5_000)),
        };
        assert!(claim_limit(&long, 10_000) >= 5);
    }

    #[test]
    fn names_read_back_from_the_notice_exactly_as_it_was_built() {
        let dir = "/srv/inbox/worker/new";
        let pending = names(&["001.md", "b\\c \u{7}.md", "003.md"]);
        let notice = Notice::build(&pending, 5, 16, "worker", dir).expect("notice");
        assert!(notice.text().contains("(and 2 more)"), "{}", notice.text());
        // Glued onto a draft, as a careless paste leaves it.
        let glued = format!("please refactor the parser{}", notice.text());
        assert_eq!(notice_candidates(&agent(), &glued), pending);
        // Another agent's directory, or no notice at all: nothing.
        let elsewhere = Notice::build(&pending, 3, 16, "worker", "/elsewhere/new").expect("notice");
        assert!(notice_candidates(&agent(), elsewhere.text()).is_empty());
        assert!(notice_candidates(&agent(), "no notice here").is_empty());
    }

    #[test]
    fn only_names_still_unread_are_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let agent = AgentContext {
            agent: "worker".into(),
            inbox: dir.path().to_path_buf(),
        };
        std::fs::create_dir(dir.path().join("new")).expect("new/");
        for name in ["a.md", "we, ird.md"] {
            std::fs::write(dir.path().join("new").join(name), "x").expect("file");
        }
        // ", " inside a name splits it into pieces that are not in new/.
        let listed = names(&["a.md", "gone.md", "we, ird.md"]);
        let unread_dir = dir.path().join("new").to_string_lossy().into_owned();
        let notice = Notice::build(&listed, 3, 16, "worker", &unread_dir).expect("notice");
        assert_eq!(notice_candidates(&agent, notice.text()).len(), 4);
        assert_eq!(names_in_notice(&agent, notice.text()), names(&["a.md"]));
    }
}
