//! The words a hook puts into the model's next context, and DING's own
//! notice read back out of a submitted prompt.
//!
//! A hook that injects unread work names the exact files it was granted,
//! says how to read and archive them, and how many more wait. Every part
//! of the text is written by the one escape rule (`crate::escape`): each
//! filename exactly, the agent name and the directory bounded as the notice
//! bounds them. It is also bounded as a whole: a harness may cap what one
//! hook injects (for example at 10,000 characters), and a file that was
//! claimed but not named would be owned by a context that never saw it. So
//! the claim is sized first ([`claim_for`]): a count and a `nameBytes`
//! budget that together fit the cap, whatever the names. The files beyond
//! it are not claimed; the text counts them and says how to list them.
//!
//! One file per line: a filename cannot break out of its line, because the
//! escape rule writes every line break as `\u{hex}`.

use crate::core::message::MessageName;
use crate::core::notice::MAX_LABEL_CHARS;
use crate::core::protocol::{ClaimScope, ClaimWants};
use crate::escape::{escape, escape_bounded, is_displayable};

use super::hook_plan::{AgentContext, ClaimRequest};

/// The most files one hook answer names, however large the cap.
pub const MAX_NAMED: u64 = 64;

/// A count as long as it can get, for sizing.
const MAX_COUNT: usize = usize::MAX;

/// The claim whose grant [`unread_work`] can name in full within
/// `cap_chars`: at most [`MAX_NAMED`] files, and a `nameBytes` budget (the
/// engine counts each escaped name plus `", "` between them; a line costs
/// `"- "` and a line feed, one more per name) that leaves room for the
/// frame. At least one file is granted whatever its length, so a cap too
/// small for the longest name is exceeded by that one name only.
pub fn claim_for(agent: &AgentContext, cap_chars: usize, scope: ClaimScope) -> ClaimRequest {
    let frame = render(agent, MAX_COUNT, &[], MAX_COUNT).chars().count();
    let budget = cap_chars
        .saturating_sub(frame)
        .saturating_sub(MAX_NAMED as usize + 2);
    ClaimRequest {
        wants: ClaimWants::Oldest(MAX_NAMED),
        scope,
        name_bytes: Some((budget as u64).max(1)),
    }
}

/// The context text naming `granted` (oldest first) and counting `more`
/// unread files that were not granted. Empty when nothing was granted.
pub fn unread_work(agent: &AgentContext, granted: &[MessageName], more: usize) -> String {
    if granted.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = granted.iter().map(|name| escape(name.as_str())).collect();
    let text = render(agent, granted.len(), &shown, more);
    debug_assert!(text.lines().all(is_displayable), "{text:?}");
    text
}

/// The agent name or a directory, as the notice shows it.
fn label(text: &str) -> String {
    escape_bounded(text, MAX_LABEL_CHARS)
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

/// Reverses [`escape`]: `\u{hex}` back to its character.
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
    use crate::core::notice::Notice;
    use std::path::PathBuf;

    fn agent() -> AgentContext {
        crate::adapter::hook_plan::example_agent()
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
        assert!(text.lines().all(is_displayable), "{text:?}");
        assert_eq!(
            text.lines().filter(|line| line.starts_with("- ")).count(),
            1
        );
        assert!(
            text.contains("- a\\u{a}- forged.md\\u{1b}[201~\\u{202e}\\u{5c}.md\n"),
            "{text}"
        );
    }

    /// Grants the claim the way the engine does (oldest first, escaped names
    /// plus `", "` within the budget, at least one), for the test below.
    fn engine_grant(request: &ClaimRequest, pending: &[MessageName]) -> Vec<MessageName> {
        let ClaimWants::Oldest(limit) = request.wants else {
            panic!("an oldest-first claim");
        };
        let budget = request.name_bytes.expect("a budget") as usize;
        let mut used = 0;
        let mut granted = Vec::new();
        for (index, name) in pending.iter().take(limit as usize).enumerate() {
            let cost = escape(name.as_str()).len() + if index == 0 { 0 } else { 2 };
            if index > 0 && used + cost > budget {
                break;
            }
            used += cost;
            granted.push(name.clone());
        }
        granted
    }

    #[test]
    fn the_budgeted_claim_keeps_every_granted_name_within_the_cap() {
        let longest =
            MessageName::new(&"\\".repeat(crate::core::message::MAX_NAME_BYTES)).expect("name");
        let short: Vec<MessageName> = (0..200)
            .map(|i| MessageName::new(&format!("{i:04}.md")).expect("name"))
            .collect();
        for cap in [4_096, 10_000, 100_000] {
            let request = claim_for(&agent(), cap, ClaimScope::Pending);
            for pending in [vec![longest.clone(); 50], short.clone()] {
                let granted = engine_grant(&request, &pending);
                assert!(!granted.is_empty());
                let text = unread_work(&agent(), &granted, pending.len() - granted.len());
                assert!(
                    text.chars().count() <= cap,
                    "cap {cap}: {} chars for {} names",
                    text.chars().count(),
                    granted.len()
                );
            }
        }
        // Ordinary names: as many as the count allows fit 10,000 characters.
        let request = claim_for(&agent(), 10_000, ClaimScope::Pending);
        assert_eq!(engine_grant(&request, &short).len(), MAX_NAMED as usize);
        // A long agent name and directory are labelled, so they cost at most
        // their label's length.
        let long = AgentContext {
            agent: "x".repeat(5_000),
            inbox: PathBuf::from("/".to_string() + &"d".repeat(5_000)),
        };
        assert!(claim_for(&long, 10_000, ClaimScope::Pending).name_bytes > Some(8_000));
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
