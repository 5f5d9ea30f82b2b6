//! Reading single cells of a PTY snapshot: which styled run covers a cell,
//! and whether a run changes how its cells look. Screen grammars are built
//! from these; the grammars themselves live with their providers.

use crate::pty::wire::{Run, Snapshot};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pty::wire::{Cursor, Size};

    #[test]
    fn a_cell_is_covered_by_the_run_that_spans_it_in_characters() {
        let snapshot = Snapshot {
            revision: 1,
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
