//! Terminal queries in a program's output, and the answers a terminal gives.
//!
//! A program asks its terminal where the cursor is (`ESC[6n`), what kind of
//! terminal it is (`ESC[c`, `ESC[>c`) or whether it is well (`ESC[5n`), and
//! waits for the answer. The PTY host is the agent's terminal, attached or
//! not (agents usually run with nobody attached): it answers these itself,
//! from its own screen model, once per query however many clients are
//! attached, as tmux does. The queries are not passed on to attached
//! clients, so their terminals do not answer a second time (an answer that
//! did come from one would reach the program as a person's keys). A
//! harness may write `ESC[6n` on every resize and draw nothing until it is
//! answered: unanswered, its silence looked like quiet output over a stale
//! frame.
//!
//! [`QueryScanner`] is sans-IO: it splits output into the bytes to show and
//! the queries to answer, keeping a query cut across two reads until its
//! end arrives.

/// A query the host answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    /// `ESC[6n`: the cursor position report (CPR).
    CursorPosition,
    /// `ESC[?6n`: the cursor position report with a page (DECXCPR).
    CursorPositionPage,
    /// `ESC[5n`: the device status report.
    Status,
    /// `ESC[c` or `ESC[0c`: the primary device attributes (DA1).
    PrimaryAttributes,
    /// `ESC[>c` or `ESC[>0c`: the secondary device attributes (DA2).
    SecondaryAttributes,
}

/// Every query sequence the host answers, with what it asks.
const QUERIES: [(&[u8], Query); 7] = [
    (b"\x1b[6n", Query::CursorPosition),
    (b"\x1b[?6n", Query::CursorPositionPage),
    (b"\x1b[5n", Query::Status),
    (b"\x1b[c", Query::PrimaryAttributes),
    (b"\x1b[0c", Query::PrimaryAttributes),
    (b"\x1b[>c", Query::SecondaryAttributes),
    (b"\x1b[>0c", Query::SecondaryAttributes),
];

impl Query {
    /// The answer, for a cursor at `row`, `col` (0-based).
    pub fn answer(self, row: u16, col: u16) -> Vec<u8> {
        let (row, col) = (u32::from(row) + 1, u32::from(col) + 1);
        match self {
            Query::CursorPosition => format!("\x1b[{row};{col}R").into_bytes(),
            Query::CursorPositionPage => format!("\x1b[?{row};{col};1R").into_bytes(),
            Query::Status => b"\x1b[0n".to_vec(),
            // A VT100 with advanced video, as tmux says of itself.
            Query::PrimaryAttributes => b"\x1b[?1;2c".to_vec(),
            // A VT100 (type 0), firmware 0, no cartridge: claims nothing
            // a program could take for a particular terminal's features.
            Query::SecondaryAttributes => b"\x1b[>0;0;0c".to_vec(),
        }
    }
}

/// A piece of output: bytes to show, or a query to answer (at this point of
/// the output: after the bytes before it are shown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Show(Vec<u8>),
    Ask(Query),
}

/// Splits output into [`Piece`]s across reads.
#[derive(Debug, Default)]
pub struct QueryScanner {
    /// The end of the last read that may begin a query: shown once the
    /// next read says it does not.
    held: Vec<u8>,
}

impl QueryScanner {
    /// The pieces of `chunk`, after whatever the last read held.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Piece> {
        let mut input = std::mem::take(&mut self.held);
        input.extend_from_slice(chunk);
        let mut pieces = Vec::new();
        let mut shown = 0;
        let mut at = 0;
        while let Some(offset) = input[at..].iter().position(|&b| b == 0x1b) {
            let start = at + offset;
            let rest = &input[start..];
            if let Some((sequence, query)) = QUERIES.iter().find(|(seq, _)| rest.starts_with(seq)) {
                if shown < start {
                    pieces.push(Piece::Show(input[shown..start].to_vec()));
                }
                pieces.push(Piece::Ask(*query));
                at = start + sequence.len();
                shown = at;
                continue;
            }
            if QUERIES.iter().any(|(seq, _)| seq.starts_with(rest)) {
                // Cut at the end of the read: wait for the rest.
                self.held = rest.to_vec();
                if shown < start {
                    pieces.push(Piece::Show(input[shown..start].to_vec()));
                }
                return pieces;
            }
            at = start + 1;
        }
        if shown < input.len() {
            pieces.push(Piece::Show(input[shown..].to_vec()));
        }
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(bytes: &[u8]) -> Piece {
        Piece::Show(bytes.to_vec())
    }

    #[test]
    fn queries_are_taken_out_of_the_output_in_order() {
        let mut scanner = QueryScanner::default();
        assert_eq!(
            scanner.feed(b"ab\x1b[6ncd\x1b[c\x1b[>0c\x1b[1mx"),
            [
                show(b"ab"),
                Piece::Ask(Query::CursorPosition),
                show(b"cd"),
                Piece::Ask(Query::PrimaryAttributes),
                Piece::Ask(Query::SecondaryAttributes),
                show(b"\x1b[1mx"),
            ]
        );
    }

    #[test]
    fn a_query_cut_across_reads_is_answered_once_whole() {
        let mut scanner = QueryScanner::default();
        assert_eq!(scanner.feed(b"ab\x1b["), [show(b"ab")]);
        assert_eq!(scanner.feed(b"6"), []);
        assert_eq!(
            scanner.feed(b"nz"),
            [Piece::Ask(Query::CursorPosition), show(b"z")]
        );
        // A held prefix that turns out to be something else is shown.
        assert_eq!(scanner.feed(b"\x1b[?"), []);
        assert_eq!(scanner.feed(b"25l"), [show(b"\x1b[?25l")]);
    }

    #[test]
    fn other_sequences_and_lone_escapes_pass_as_they_are() {
        let mut scanner = QueryScanner::default();
        for output in [
            &b"\x1b[6;1H"[..],
            b"\x1b[?2004h",
            b"\x1b\x1b[m",
            b"\x1b]11;?\x07",
        ] {
            assert_eq!(scanner.feed(output), [show(output)], "{output:?}");
        }
    }

    #[test]
    fn answers_say_where_the_cursor_is_one_based() {
        assert_eq!(Query::CursorPosition.answer(0, 0), b"\x1b[1;1R");
        assert_eq!(Query::CursorPosition.answer(23, 79), b"\x1b[24;80R");
        assert_eq!(Query::CursorPositionPage.answer(4, 2), b"\x1b[?5;3;1R");
        assert_eq!(Query::Status.answer(9, 9), b"\x1b[0n");
    }
}
