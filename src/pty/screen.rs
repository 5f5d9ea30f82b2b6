//! The host's model of what the terminal shows: a vt100 parser fed with every
//! output chunk, and the snapshot and redraw views of it.
//!
//! The model never decides anything; it answers `snapshot` (text, cursor and
//! styled runs, so an adapter can tell a dim placeholder from typed text),
//! `status` (bracketed paste) and redraws a freshly attached client.

use std::num::NonZeroU16;

use crate::pty::wire::{Colour, Cursor, Run, Size, Snapshot};

/// Lines of scrollback the model keeps. Snapshots show the visible screen
/// only, so scrollback costs memory for no reader; keep none.
const SCROLLBACK: usize = 0;

pub struct Screen {
    parser: vt100::Parser,
}

impl Screen {
    pub fn new(size: Size) -> Screen {
        let (rows, cols) = dims(size);
        Screen {
            parser: vt100::Parser::new(rows, cols, SCROLLBACK),
        }
    }

    /// Feeds one output chunk from the terminal.
    pub fn handle_output(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    pub fn resize(&mut self, size: Size) {
        let (rows, cols) = dims(size);
        self.parser.screen_mut().set_size(rows, cols);
    }

    /// The cursor's row and column (0-based), as a terminal reports it.
    pub fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    pub fn bracketed_paste(&self) -> bool {
        self.parser.screen().bracketed_paste()
    }

    /// Escape sequences that reproduce the screen (contents, cursor, input
    /// modes) on a terminal of the same size.
    pub fn redraw(&self) -> Vec<u8> {
        let screen = self.parser.screen();
        let mut out = Vec::new();
        if screen.alternate_screen() {
            out.extend_from_slice(b"\x1b[?1049h");
        } else {
            out.extend_from_slice(b"\x1b[?1049l");
        }
        out.extend_from_slice(screen.state_formatted().as_bytes());
        out
    }

    pub fn snapshot(&self, revision: u64) -> Snapshot {
        let screen = self.parser.screen();
        let (rows, cols) = screen.size();
        let (cursor_row, cursor_col) = screen.cursor_position();
        let text_rows: Vec<String> = screen
            .rows(0, cols.get())
            // Empty cells read as spaces: only those are padding. Anything
            // a program drew stays, a trailing no-break space included.
            .map(|row| row.trim_end_matches(' ').to_string())
            .collect();
        let mut runs = Vec::new();
        for row in 0..rows.get() {
            styled_runs(screen, row, cols.get(), &mut runs);
        }
        Snapshot {
            revision,
            // The host sets it: the screen model knows no clock.
            terminal: Default::default(),
            clock_ms: None,
            size: Size {
                cols: cols.get(),
                rows: rows.get(),
            },
            cursor: Cursor {
                row: cursor_row,
                col: cursor_col,
                visible: !screen.hide_cursor(),
            },
            rows: text_rows,
            runs,
            alternate_screen: screen.alternate_screen(),
            bracketed_paste: screen.bracketed_paste(),
        }
    }
}

/// A cell's look, cheap to compare; a `Run` is built only where it changes.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct Style {
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    inverse: bool,
    fg: vt100::Color,
    bg: vt100::Color,
}

impl Style {
    fn of(cell: &vt100::Cell) -> Style {
        Style {
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
            fg: cell.fgcolor(),
            bg: cell.bgcolor(),
        }
    }

    fn run(self, row: u16, col: u16, text: String) -> Run {
        Run {
            row,
            col,
            text,
            bold: self.bold,
            dim: self.dim,
            italic: self.italic,
            underline: self.underline,
            inverse: self.inverse,
            fg: colour(self.fg),
            bg: colour(self.bg),
        }
    }
}

/// Appends the runs of non-default style in `row`. Wide-character
/// continuation cells carry no text and are skipped.
fn styled_runs(screen: &vt100::Screen, row: u16, cols: u16, runs: &mut Vec<Run>) {
    let mut current: Option<(Style, u16, String)> = None;
    for col in 0..cols {
        let Some(cell) = screen.cell(row, col) else {
            continue;
        };
        if cell.is_wide_continuation() {
            continue;
        }
        let style = Style::of(cell);
        let text = if cell.has_contents() {
            cell.contents()
        } else {
            " "
        };
        match current.as_mut() {
            Some((open, _, run_text)) if *open == style => run_text.push_str(text),
            _ => {
                if let Some((open, start, run_text)) = current.take()
                    && open != Style::default()
                {
                    runs.push(open.run(row, start, run_text));
                }
                current = Some((style, col, text.to_string()));
            }
        }
    }
    if let Some((open, start, run_text)) = current
        && open != Style::default()
    {
        runs.push(open.run(row, start, run_text));
    }
}

fn colour(colour: vt100::Color) -> Option<Colour> {
    match colour {
        vt100::Color::Default => None,
        vt100::Color::Idx(index) => Some(Colour::Index(index)),
        vt100::Color::Rgb(r, g, b) => Some(Colour::Rgb(format!("#{r:02x}{g:02x}{b:02x}"))),
    }
}

/// vt100 wants non-zero `(rows, cols)`; the host refuses zero sizes before
/// they get here, and this clamps anyway so no input can panic the model.
fn dims(size: Size) -> (NonZeroU16, NonZeroU16) {
    (
        NonZeroU16::new(size.rows).unwrap_or(NonZeroU16::MIN),
        NonZeroU16::new(size.cols).unwrap_or(NonZeroU16::MIN),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen_with(bytes: &[u8]) -> Screen {
        let mut screen = Screen::new(Size { cols: 40, rows: 5 });
        screen.handle_output(bytes);
        screen
    }

    #[test]
    fn snapshot_reports_text_cursor_and_styles() {
        let screen =
            screen_with(b"plain \x1b[2mhint\x1b[0m \x1b[1;31mred\x1b[0m\r\n\x1b[7minv\x1b[0m");
        let snap = screen.snapshot(42);
        assert_eq!(snap.revision, 42);
        assert_eq!(snap.rows[0], "plain hint red");
        assert_eq!(snap.rows[1], "inv");
        assert_eq!(snap.rows.len(), 5);
        assert_eq!(
            snap.cursor,
            Cursor {
                row: 1,
                col: 3,
                visible: true
            }
        );
        let dim = &snap.runs[0];
        assert_eq!(
            (dim.row, dim.col, dim.text.as_str(), dim.dim),
            (0, 6, "hint", true)
        );
        let red = &snap.runs[1];
        assert_eq!(
            (red.text.as_str(), red.bold, red.fg.clone()),
            ("red", true, Some(Colour::Index(1)))
        );
        assert!(snap.runs[2].inverse);
        assert_eq!(snap.runs.len(), 3);
    }

    #[test]
    fn bracketed_paste_mode_is_tracked() {
        let mut screen = screen_with(b"\x1b[?2004h");
        assert!(screen.bracketed_paste());
        screen.handle_output(b"\x1b[?2004l");
        assert!(!screen.bracketed_paste());
    }

    #[test]
    fn redraw_reproduces_the_screen() {
        let original = screen_with(b"hello\r\n\x1b[1mworld\x1b[0m\x1b[3;5H");
        let mut copy = Screen::new(Size { cols: 40, rows: 5 });
        copy.handle_output(b"garbage that the redraw must clear");
        copy.handle_output(&original.redraw());
        assert_eq!(copy.snapshot(0), original.snapshot(0));
    }

    #[test]
    fn zero_sizes_do_not_panic() {
        let mut screen = Screen::new(Size { cols: 0, rows: 0 });
        screen.resize(Size { cols: 0, rows: 3 });
        screen.handle_output(b"abc");
        assert_eq!(screen.snapshot(0).size, Size { cols: 1, rows: 3 });
    }
}
