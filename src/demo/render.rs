//! Drawing the demo agent: its state as a frame of styled rows, and a frame
//! as ANSI bytes.
//!
//! The layout is the screen grammar that the demo adapter (`screen.rs`)
//! reads, so the two are tested against each other:
//!
//! ```text
//! row 0          demo-agent  ready | working (Ns) | waiting for confirmation
//! row 1          (blank)
//! rows 2..R-3    scrollback, then `queued: TEXT` lines, bottom-aligned
//! row R-3        a rule of `-`
//! row R-2        `> ` + composer text, or `> ` + dim placeholder; a text
//!                too long for the row shows its tail after a dim
//!                `[+N] `, N the characters scrolled out
//! row R-1        footer (key hints)
//! ```
//!
//! While the menu is open, rows R-5..R-2 hold the question and the two
//! options instead of the rule and the composer; the highlighted option is
//! drawn `> N. Label` in inverse video. This module does no I/O.

use crate::demo::agent::{Agent, MenuOption, Phase};

pub const PLACEHOLDER: &str = "Type a message";
pub const MENU_QUESTION: &str = "Apply the change?";
pub const HEADER_NAME: &str = "demo-agent";

/// How a span is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    Bold,
    Dim,
    Inverse,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub style: Style,
}

/// One screenful: exactly `rows` rows, each at most `cols` characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub rows: Vec<Vec<Span>>,
    /// Where the cursor rests (row, col).
    pub cursor: (u16, u16),
}

impl Frame {
    /// Each row as plain text, trailing blanks trimmed (like a snapshot).
    pub fn text_rows(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|spans| {
                let row: String = spans.iter().map(|s| s.text.as_str()).collect();
                row.trim_end().to_string()
            })
            .collect()
    }
}

fn plain(text: impl Into<String>) -> Vec<Span> {
    vec![Span {
        text: text.into(),
        style: Style::Plain,
    }]
}

/// Lays out `agent` on a `cols` x `rows` terminal. Terminals smaller than
/// 20x8 get a single line saying so.
pub fn frame(agent: &Agent, cols: u16, rows: u16) -> Frame {
    let width = usize::from(cols);
    let height = usize::from(rows);
    if cols < 20 || rows < 8 {
        let mut lines = vec![plain(clip("demo-agent: terminal too small", width))];
        lines.resize(height, Vec::new());
        return Frame {
            rows: lines,
            cursor: (0, 0),
        };
    }
    let mut lines: Vec<Vec<Span>> = Vec::with_capacity(height);
    let status = match agent.phase() {
        Phase::Idle => "ready".to_string(),
        Phase::Working { .. } => format!("working ({}s)", agent.working_seconds()),
        Phase::Menu { .. } => "waiting for confirmation".to_string(),
    };
    lines.push(vec![
        Span {
            text: HEADER_NAME.to_string(),
            style: Style::Bold,
        },
        Span {
            text: clip(&format!("  {status}"), width - HEADER_NAME.len()),
            style: Style::Plain,
        },
    ]);
    lines.push(Vec::new());

    // The bottom block: rule + composer + footer, or the menu + footer.
    let mut bottom: Vec<Vec<Span>> = Vec::new();
    let cursor_col;
    match agent.phase() {
        Phase::Menu { highlighted, .. } => {
            bottom.push(plain(MENU_QUESTION));
            for option in [MenuOption::Yes, MenuOption::No] {
                let label = match option {
                    MenuOption::Yes => "1. Yes",
                    MenuOption::No => "2. No",
                };
                bottom.push(if option == highlighted {
                    vec![Span {
                        text: format!("> {label}"),
                        style: Style::Inverse,
                    }]
                } else {
                    plain(format!("  {label}"))
                });
            }
            bottom.push(plain("enter to confirm  up/down or 1/2 to choose"));
            cursor_col = 0;
        }
        Phase::Idle | Phase::Working { .. } => {
            bottom.push(plain("-".repeat(width)));
            let (composer, col) = composer_spans(agent.composer(), width);
            bottom.push(composer);
            cursor_col = col;
            let footer = if agent.quit_armed() {
                "press ctrl-c again to quit"
            } else if let Phase::Working { .. } = agent.phase() {
                "enter to queue  ctrl-c twice to quit"
            } else {
                "enter to send  ctrl-d to quit"
            };
            bottom.push(plain(footer));
        }
    }

    // The middle: scrollback then queued lines, bottom-aligned.
    let room = height - 2 - bottom.len();
    let mut middle: Vec<Vec<Span>> = agent
        .queued()
        .rev()
        .map(|text| plain(clip(&format!("queued: {text}"), width)))
        .chain(
            agent
                .scrollback()
                .rev()
                .map(|line| plain(clip(line, width))),
        )
        .take(room)
        .collect();
    middle.reverse();
    while middle.len() < room {
        middle.insert(0, Vec::new());
    }
    lines.extend(middle);
    lines.extend(bottom);
    let cursor_row = match agent.phase() {
        Phase::Menu { .. } => rows - 1,
        _ => rows - 2,
    };
    Frame {
        rows: lines,
        cursor: (cursor_row, cursor_col),
    }
}

/// The mark before a scrolled composer's tail: `[+N] `, N characters
/// scrolled out to its left.
pub fn scrolled_mark(hidden: usize) -> String {
    format!("[+{hidden}] ")
}

/// The composer row and the cursor column. A long draft shows its tail,
/// as a one-line editor scrolls, after a dim mark that counts what
/// scrolled out (so a reader of the screen knows the text's length).
fn composer_spans(composer: &str, width: usize) -> (Vec<Span>, u16) {
    let prompt = Span {
        text: "> ".to_string(),
        style: Style::Plain,
    };
    if composer.is_empty() {
        let hint = Span {
            text: PLACEHOLDER.to_string(),
            style: Style::Dim,
        };
        return (vec![prompt, hint], 2);
    }
    let room = width - 3;
    let chars: Vec<char> = composer.chars().collect();
    let mut spans = vec![prompt];
    let mut used = 0;
    let mut shown_from = 0;
    if chars.len() > room {
        // The mark's own width depends on the count it shows: the longest
        // it can be, for the whole text, is room enough.
        let mark_room = scrolled_mark(chars.len()).chars().count();
        shown_from = chars.len() - room.saturating_sub(mark_room);
        let mark = scrolled_mark(shown_from);
        used = mark.chars().count();
        spans.push(Span {
            text: mark,
            style: Style::Dim,
        });
    }
    let shown: String = chars[shown_from..].iter().collect();
    let col = u16::try_from(2 + used + shown.chars().count()).unwrap_or(0);
    spans.push(Span {
        text: shown,
        style: Style::Plain,
    });
    (spans, col)
}

/// The first `width` characters of `text`.
fn clip(text: &str, width: usize) -> String {
    text.chars().take(width).collect()
}

/// Encodes a frame as a full redraw: home, each row followed by erase to
/// end of line, erase below, cursor placed and shown.
pub fn encode(frame: &Frame) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"\x1b[?25l\x1b[H");
    for (index, spans) in frame.rows.iter().enumerate() {
        if index > 0 {
            out.extend_from_slice(b"\r\n");
        }
        for span in spans {
            let sgr: &[u8] = match span.style {
                Style::Plain => b"",
                Style::Bold => b"\x1b[1m",
                Style::Dim => b"\x1b[2m",
                Style::Inverse => b"\x1b[7m",
            };
            out.extend_from_slice(sgr);
            out.extend_from_slice(span.text.as_bytes());
            if !sgr.is_empty() {
                out.extend_from_slice(b"\x1b[0m");
            }
        }
        out.extend_from_slice(b"\x1b[K");
    }
    out.extend_from_slice(b"\x1b[J");
    let (row, col) = frame.cursor;
    out.extend_from_slice(format!("\x1b[{};{}H\x1b[?25h", row + 1, col + 1).as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::demo::agent::Config;
    use crate::demo::keys::Key;

    fn idle() -> Agent {
        Agent::new(Config {
            turn: Duration::from_millis(100),
            menu_every: 1,
        })
    }

    #[test]
    fn idle_frame_has_header_rule_dim_placeholder_and_footer() {
        let frame = frame(&idle(), 40, 10);
        let rows = frame.text_rows();
        assert_eq!(rows.len(), 10);
        assert_eq!(rows[0], "demo-agent  ready");
        assert_eq!(rows[7], "-".repeat(40));
        assert_eq!(rows[8], "> Type a message");
        assert_eq!(frame.rows[8][1].style, Style::Dim);
        assert_eq!(rows[9], "enter to send  ctrl-d to quit");
        assert_eq!(frame.cursor, (8, 2));
    }

    #[test]
    fn long_drafts_show_their_tail_within_the_width() {
        let mut agent = idle();
        agent.handle_key(Key::Text("a".repeat(100) + "END"), Instant::now());
        let frame = frame(&agent, 30, 10);
        let rows = frame.text_rows();
        assert!(rows[8].ends_with("END") && rows[8].chars().count() <= 30);
        assert!(rows.iter().all(|row| row.chars().count() <= 30));
        // The dim mark counts the characters scrolled out.
        let (mark, tail) = rows[8]
            .strip_prefix("> [+")
            .and_then(|rest| rest.split_once("] "))
            .expect("a scrolled mark");
        assert_eq!(mark.parse::<usize>().unwrap() + tail.chars().count(), 103);
        assert_eq!(frame.rows[8][1].style, Style::Dim);
        assert_eq!(usize::from(frame.cursor.1), rows[8].chars().count());
    }

    #[test]
    fn menu_frame_replaces_the_composer() {
        let now = Instant::now();
        let mut agent = idle();
        agent.handle_key(Key::Text("go".into()), now);
        agent.handle_key(Key::Enter, now);
        agent.handle_timeout(now + Duration::from_millis(100));
        let frame = frame(&agent, 40, 10);
        let rows = frame.text_rows();
        assert_eq!(rows[0], "demo-agent  waiting for confirmation");
        assert_eq!(&rows[6..9], &[MENU_QUESTION, "> 1. Yes", "  2. No"]);
        assert_eq!(frame.rows[7][0].style, Style::Inverse);
    }

    #[test]
    fn tiny_terminals_get_a_notice_not_a_panic() {
        for (cols, rows) in [(1, 1), (19, 30), (80, 7)] {
            let frame = frame(&idle(), cols, rows);
            assert_eq!(frame.rows.len(), usize::from(rows));
            assert!(!encode(&frame).is_empty());
        }
    }
}
