//! What every provider's screen grammar shares: the kinds of screen a
//! grammar tells apart, their protocol reading, and reading single cells of
//! a PTY snapshot (which styled run covers a cell, whether a run changes how
//! its cells look). The grammars themselves live with their providers.

use super::reading::Reading;
use crate::core::protocol::{ActivityState, Composer};
use crate::pty::wire::{Run, Snapshot};

/// What a screen shows, before any hook is taken into account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// The composer waits for input (whether a turn still streams, only
    /// some grammars can tell).
    Ready,
    /// A turn runs (the composer may still take text).
    Busy,
    /// A dialog or selection list is open: every key goes to it.
    Dialog,
    /// Not a layout the grammar knows.
    Unrecognized,
}

impl Screen {
    /// The protocol reading of the screen alone: ready reads as idle, busy
    /// as active, anything else as unknown (and unknown holds).
    pub fn reading(self, composer: Composer, why: &'static str) -> Reading {
        let state = match self {
            Screen::Ready => ActivityState::Idle,
            Screen::Busy => ActivityState::Active,
            Screen::Dialog | Screen::Unrecognized => ActivityState::Unknown,
        };
        Reading {
            state,
            composer,
            reason: why.into(),
        }
    }
}

/// One snapshot's reading by a grammar that tells the screen and the
/// composer apart, with the why `ding status` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    pub screen: Screen,
    pub composer: Composer,
    pub why: &'static str,
}

impl View {
    pub fn new(screen: Screen, composer: Composer, why: &'static str) -> View {
        View {
            screen,
            composer,
            why,
        }
    }

    /// A ready screen (waiting for the person), said by what its composer
    /// holds.
    pub fn ready(composer: Composer) -> View {
        View::new(Screen::Ready, composer, ready_because(composer))
    }

    /// The protocol reading of the screen alone.
    pub fn reading(self) -> Reading {
        self.screen.reading(self.composer, self.why)
    }
}

/// Why a ready screen reads as it does, by its composer: the words `ding
/// status` shows, the same for every harness.
pub fn ready_because(composer: Composer) -> &'static str {
    match composer {
        Composer::Empty => "ready, composer empty",
        Composer::Nonempty => "ready, human text in the composer",
        Composer::Unknown => "ready, composer not readable",
    }
}

/// What a composer holds, as far as its harness draws it: what a typed
/// notice's Return is confirmed against ([`holds_exactly`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ComposerContent {
    /// The composer's whole text as drawn. Where the harness wraps it, the
    /// line breaks and indentation of the wrapping are not content.
    Text(String),
    /// Only the end of the text is drawn; `hidden` characters come before
    /// `tail` (a scrolled one-line editor; a paste placeholder that says
    /// its length, with an empty tail).
    Tail { hidden: usize, tail: String },
    /// One paste placeholder, and nothing else, that does not say what it
    /// holds.
    Paste,
    /// Nothing the grammar can read as the composer's content.
    Unreadable,
}

/// Whether `content` is exactly `notice` and nothing else. Whitespace is
/// not compared (a harness's wrapping adds and drops it); every other
/// character is, in order. A placeholder that does not say what it holds
/// counts: the Return's time fence already asks that no person's input
/// reached the terminal since the paste, so the paste is DING's.
pub fn holds_exactly(content: &ComposerContent, notice: &str) -> bool {
    if crate::mutation::planted(crate::mutation::Mutation::ReturnIgnoresTheComposer) {
        return true;
    }
    let visible =
        |text: &str| -> Vec<char> { text.chars().filter(|c| !c.is_whitespace()).collect() };
    match content {
        ComposerContent::Text(text) => !text.trim().is_empty() && visible(text) == visible(notice),
        ComposerContent::Tail { hidden, tail } => {
            notice.chars().count() == hidden + tail.chars().count()
                && notice.ends_with(tail.as_str())
        }
        ComposerContent::Paste => true,
        ComposerContent::Unreadable => false,
    }
}

/// The styled run that covers `(row, col)`, if any (none: default style).
/// Columns count characters, as the snapshot's rows do.
pub fn run_at(snapshot: &Snapshot, row: usize, col: usize) -> Option<&Run> {
    snapshot.runs.iter().find(|run| {
        usize::from(run.row) == row
            && usize::from(run.col) <= col
            && col < usize::from(run.col) + run.text.chars().count()
    })
}

/// Whether a run changes how its cells look.
pub fn is_styled(run: &Run) -> bool {
    run.dim
        || run.bold
        || run.italic
        || run.underline
        || run.inverse
        || run.fg.is_some()
        || run.bg.is_some()
}

/// Small snapshots for grammar tests.
#[cfg(test)]
pub mod testing {
    use crate::pty::wire::{Cursor, Run, Size, Snapshot};

    /// `rows`, `cols` wide, with `runs`; the cursor at `cursor`, or hidden
    /// at the top left.
    pub fn snapshot(
        cols: u16,
        rows: &[&str],
        runs: Vec<Run>,
        cursor: Option<(u16, u16)>,
    ) -> Snapshot {
        let (row, col) = cursor.unwrap_or((0, 0));
        Snapshot {
            revision: 1,
            terminal: Default::default(),
            clock_ms: None,
            size: Size {
                cols,
                rows: rows.len() as u16,
            },
            cursor: Cursor {
                row,
                col,
                visible: cursor.is_some(),
            },
            rows: rows.iter().map(|row| row.to_string()).collect(),
            runs,
            alternate_screen: false,
            bracketed_paste: true,
        }
    }

    /// A run of `text` at `(row, col)` in the default style (set fields on
    /// it for a style).
    pub fn run(row: u16, col: u16, text: &str) -> Run {
        Run {
            row,
            col,
            text: text.into(),
            ..Run::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pty::wire::{Cursor, Size};

    #[test]
    fn a_composer_holds_a_notice_only_with_every_visible_character_in_order() {
        let notice = "[ding] 1 unread inbox message in /in/new: a.md. Read it";
        let wrapped = "[ding] 1 unread inbox message in /in/\n  new: a.md. Read it";
        assert!(holds_exactly(
            &ComposerContent::Text(wrapped.into()),
            notice
        ));
        let glued = format!("p{notice}");
        assert!(!holds_exactly(&ComposerContent::Text(glued), notice));
        let short = "[ding] 1 unread inbox message in /in/new: a.md. Read i";
        assert!(!holds_exactly(&ComposerContent::Text(short.into()), notice));
        assert!(!holds_exactly(&ComposerContent::Text(" ".into()), " "));
        let count = notice.chars().count();
        let tail = |hidden: usize, tail: &str| ComposerContent::Tail {
            hidden,
            tail: tail.into(),
        };
        assert!(holds_exactly(&tail(count - 7, "Read it"), notice));
        assert!(holds_exactly(&tail(count, ""), notice));
        assert!(!holds_exactly(&tail(count - 6, "Read it"), notice));
        assert!(!holds_exactly(&tail(count - 7, "Read ix"), notice));
        assert!(holds_exactly(&ComposerContent::Paste, notice));
        assert!(!holds_exactly(&ComposerContent::Unreadable, notice));
    }

    #[test]
    fn a_cell_is_covered_by_the_run_that_spans_it_in_characters() {
        let snapshot = Snapshot {
            revision: 1,
            terminal: Default::default(),
            clock_ms: None,
            size: Size { cols: 10, rows: 1 },
            cursor: Cursor {
                row: 0,
                col: 0,
                visible: true,
            },
            rows: vec!["ab\u{e9}cd".into()],
            runs: vec![Run {
                row: 0,
                col: 1,
                text: "b\u{e9}".into(),
                dim: true,
                ..Run::default()
            }],
            alternate_screen: false,
            bracketed_paste: true,
        };
        assert!(run_at(&snapshot, 0, 0).is_none());
        assert!(run_at(&snapshot, 0, 2).is_some_and(|run| run.dim && is_styled(run)));
        assert!(run_at(&snapshot, 0, 3).is_none());
        assert!(!is_styled(&Run::default()));
    }
}
