//! The demo adapter's screen grammar: one PTY snapshot of the demo agent to
//! an observation (idle, working, menu or unrecognized; composer empty,
//! nonempty or unknown).
//!
//! A pure function over the snapshot's rows and styled runs, so it is
//! tested on fixed screens. It reads only what `render.rs` draws (the
//! layout is documented there and in `docs/demo.md`) and fails closed:
//! anything it does not recognize is `Unrecognized` with an unknown
//! composer. Turning an observation into a protocol line is `adapter.rs`'s
//! job.

use crate::adapter::screen::ComposerContent;
use crate::demo::render::{HEADER_NAME, MENU_QUESTION};
use crate::pty::wire::Snapshot;

/// What the screen shows the agent doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// Header `ready`, composer visible.
    Ready,
    /// Header `working (Ns)`.
    Working,
    /// The confirmation menu is open (header or question row).
    Menu,
    /// Not the demo agent's layout (too small, another program, mid-draw).
    Unrecognized,
}

/// What the composer row holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComposerView {
    /// `> ` followed by nothing or only dim text (the placeholder).
    Empty,
    /// `> ` followed by text that is not dim.
    Nonempty,
    /// No composer row where one should be.
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    pub screen: Screen,
    pub composer: ComposerView,
}

impl Observation {
    /// A short human reason for logs.
    pub fn reason(&self) -> &'static str {
        match (self.screen, self.composer) {
            (Screen::Ready, ComposerView::Empty) => "prompt ready, composer empty",
            (Screen::Ready, ComposerView::Nonempty) => "prompt ready, draft in composer",
            (Screen::Ready, ComposerView::Unknown) => "prompt ready, composer not found",
            (Screen::Working, _) => "turn in progress",
            (Screen::Menu, _) => "confirmation menu open",
            (Screen::Unrecognized, _) => "screen not recognized",
        }
    }
}

/// Classifies one snapshot of the demo agent's screen.
pub fn classify(snapshot: &Snapshot) -> Observation {
    let rows = &snapshot.rows;
    let unrecognized = Observation {
        screen: Screen::Unrecognized,
        composer: ComposerView::Unknown,
    };
    let menu = if crate::mutation::planted(crate::mutation::Mutation::DialogReadsIdle) {
        Observation {
            screen: Screen::Ready,
            composer: ComposerView::Empty,
        }
    } else {
        Observation {
            screen: Screen::Menu,
            composer: ComposerView::Unknown,
        }
    };
    // A dialog anywhere wins over everything else: never report idle while
    // a question is on screen.
    if rows.iter().any(|row| row.trim_end() == MENU_QUESTION) {
        return menu;
    }
    let Some(status) = rows
        .first()
        .and_then(|header| header.strip_prefix(HEADER_NAME))
        .and_then(|rest| rest.strip_prefix("  "))
    else {
        return unrecognized;
    };
    let screen = if status == "ready" {
        Screen::Ready
    } else if status.starts_with("working") {
        Screen::Working
    } else if status.starts_with("waiting for confirmation") {
        Screen::Menu
    } else {
        return unrecognized;
    };
    if screen == Screen::Menu {
        return menu;
    }
    Observation {
        screen,
        composer: composer(snapshot),
    }
}

/// What a ready composer holds: its row's text after `> `, or, scrolled,
/// the tail after the dim `[+N] ` mark and the count N.
pub fn composer_content(snapshot: &Snapshot) -> ComposerContent {
    let observation = classify(snapshot);
    if observation.screen != Screen::Ready || observation.composer != ComposerView::Nonempty {
        return ComposerContent::Unreadable;
    }
    let index = usize::from(snapshot.size.rows).saturating_sub(2);
    let Some(text) = snapshot
        .rows
        .get(index)
        .and_then(|row| row.strip_prefix("> "))
    else {
        return ComposerContent::Unreadable;
    };
    let row_number = u16::try_from(index).unwrap_or(u16::MAX);
    let marked = snapshot
        .runs
        .iter()
        .any(|run| run.row == row_number && run.col == 2 && run.dim && run.text.starts_with("[+"));
    if !marked {
        return ComposerContent::Text(text.to_owned());
    }
    let scrolled = text
        .strip_prefix("[+")
        .and_then(|rest| rest.split_once("] "))
        .and_then(|(count, tail)| Some((count.parse::<usize>().ok()?, tail)));
    match scrolled {
        Some((hidden, tail)) => ComposerContent::Tail {
            hidden,
            tail: tail.to_owned(),
        },
        None => ComposerContent::Unreadable,
    }
}

/// Reads the composer row (the second last row): `> ` then text; the text
/// is a placeholder only if every character of it is in a dim run.
fn composer(snapshot: &Snapshot) -> ComposerView {
    let height = usize::from(snapshot.size.rows);
    let Some(index) = height.checked_sub(2) else {
        return ComposerView::Unknown;
    };
    let Some(row) = snapshot.rows.get(index) else {
        return ComposerView::Unknown;
    };
    if row == ">" {
        return ComposerView::Empty;
    }
    let Some(text) = row.strip_prefix("> ") else {
        return ComposerView::Unknown;
    };
    if text.trim().is_empty() {
        return ComposerView::Empty;
    }
    // Columns 2.. of this row that are drawn dim.
    let row_number = u16::try_from(index).unwrap_or(u16::MAX);
    let mut dim_columns = std::collections::BTreeSet::new();
    for run in snapshot
        .runs
        .iter()
        .filter(|run| run.row == row_number && run.dim)
    {
        let start = usize::from(run.col);
        dim_columns.extend(start..start + run.text.chars().count());
    }
    let all_dim = text
        .chars()
        .enumerate()
        .all(|(offset, c)| c == ' ' || dim_columns.contains(&(2 + offset)));
    if all_dim {
        ComposerView::Empty
    } else {
        ComposerView::Nonempty
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::demo::agent::{Agent, Config};
    use crate::demo::keys::Key;
    use crate::demo::render::{Frame, Style, frame};
    use crate::pty::wire::{Cursor, Run, Size};

    fn snapshot(rows: &[&str], runs: Vec<Run>) -> Snapshot {
        let height = u16::try_from(rows.len()).expect("rows");
        Snapshot {
            revision: 1,
            terminal: Default::default(),
            clock_ms: None,
            size: Size {
                cols: 40,
                rows: height,
            },
            cursor: Cursor {
                row: 0,
                col: 0,
                visible: true,
            },
            rows: rows.iter().map(|r| r.to_string()).collect(),
            runs,
            alternate_screen: true,
            bracketed_paste: true,
        }
    }

    fn dim(row: u16, col: u16, text: &str) -> Run {
        Run {
            row,
            col,
            text: text.into(),
            dim: true,
            ..Run::default()
        }
    }

    /// What the PTY host would report for a frame: rows and styled runs.
    fn snapshot_of(frame: &Frame) -> Snapshot {
        let mut runs = Vec::new();
        for (row, spans) in frame.rows.iter().enumerate() {
            let mut col = 0u16;
            for span in spans {
                let width = u16::try_from(span.text.chars().count()).expect("width");
                if span.style != Style::Plain {
                    runs.push(Run {
                        row: u16::try_from(row).expect("row"),
                        col,
                        text: span.text.clone(),
                        bold: span.style == Style::Bold,
                        dim: span.style == Style::Dim,
                        inverse: span.style == Style::Inverse,
                        ..Run::default()
                    });
                }
                col += width;
            }
        }
        let rows = frame.text_rows();
        let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
        snapshot(&refs, runs)
    }

    const IDLE: [&str; 8] = [
        "demo-agent  ready",
        "",
        "",
        "",
        "",
        "----------------------------------------",
        "> Type a message",
        "enter to send  ctrl-d to quit",
    ];

    #[test]
    fn dim_placeholder_is_an_empty_composer() {
        let observed = classify(&snapshot(&IDLE, vec![dim(6, 2, "Type a message")]));
        assert_eq!(
            observed,
            Observation {
                screen: Screen::Ready,
                composer: ComposerView::Empty
            }
        );
    }

    #[test]
    fn the_placeholder_words_typed_plainly_are_a_draft() {
        let observed = classify(&snapshot(&IDLE, vec![]));
        assert_eq!(observed.composer, ComposerView::Nonempty);
        let half = classify(&snapshot(&IDLE, vec![dim(6, 2, "Type a")]));
        assert_eq!(half.composer, ComposerView::Nonempty);
    }

    #[test]
    fn bare_prompt_is_empty_and_missing_prompt_is_unknown() {
        let mut rows = IDLE;
        rows[6] = ">";
        assert_eq!(
            classify(&snapshot(&rows, vec![])).composer,
            ComposerView::Empty
        );
        rows[6] = "  2. No";
        assert_eq!(
            classify(&snapshot(&rows, vec![])).composer,
            ComposerView::Unknown
        );
    }

    #[test]
    fn working_header_is_working_whatever_the_composer() {
        let mut rows = IDLE;
        rows[0] = "demo-agent  working (2s)";
        rows[6] = "> half typed";
        let observed = classify(&snapshot(&rows, vec![]));
        assert_eq!(observed.screen, Screen::Working);
        assert_eq!(observed.composer, ComposerView::Nonempty);
    }

    #[test]
    fn a_question_on_screen_is_a_menu_even_under_a_ready_header() {
        let mut rows = IDLE;
        rows[4] = MENU_QUESTION;
        rows[5] = "> 1. Yes";
        let observed = classify(&snapshot(&rows, vec![dim(6, 2, "Type a message")]));
        assert_eq!(observed.screen, Screen::Menu);
        assert_eq!(observed.composer, ComposerView::Unknown);
    }

    #[test]
    fn foreign_or_blank_screens_are_unrecognized() {
        for rows in [vec!["$ ls", "a b"], vec![], vec!["demo-agent  dreaming"]] {
            let observed = classify(&snapshot(&rows, vec![]));
            assert_eq!(observed.screen, Screen::Unrecognized, "{rows:?}");
            assert_eq!(observed.composer, ComposerView::Unknown);
        }
    }

    #[test]
    fn classifier_agrees_with_every_phase_the_renderer_draws() {
        let t0 = Instant::now();
        let mut agent = Agent::new(Config {
            turn: Duration::from_millis(100),
            menu_every: 1,
        });
        let look = |agent: &Agent| classify(&snapshot_of(&frame(agent, 40, 12)));
        assert_eq!(
            look(&agent),
            Observation {
                screen: Screen::Ready,
                composer: ComposerView::Empty
            }
        );
        agent.handle_key(Key::Text("Type a message".into()), t0);
        assert_eq!(look(&agent).composer, ComposerView::Nonempty);
        agent.handle_key(Key::Enter, t0);
        assert_eq!(
            look(&agent),
            Observation {
                screen: Screen::Working,
                composer: ComposerView::Empty
            }
        );
        agent.handle_key(Key::Text("next".into()), t0);
        assert_eq!(look(&agent).composer, ComposerView::Nonempty);
        agent.handle_timeout(t0 + Duration::from_millis(100));
        assert_eq!(look(&agent).screen, Screen::Menu);
        agent.handle_key(Key::Enter, t0);
        assert_eq!(
            look(&agent),
            Observation {
                screen: Screen::Ready,
                composer: ComposerView::Nonempty
            }
        );
    }
}
