//! Bounded line assembly for byte streams read until `WouldBlock`.
//!
//! A line longer than the bound is never held whole: its bytes are counted
//! and dropped until the next newline, and it is reported once as too long.
//! Memory per stream is therefore at most the bound, whatever a peer writes.

/// One complete unit taken from the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line without its newline.
    Complete(Vec<u8>),
    /// A line of `len` bytes (newline excluded) exceeded the bound and was dropped.
    TooLong { len: usize },
}

#[derive(Debug)]
pub struct LineBuffer {
    max: usize,
    partial: Vec<u8>,
    /// Bytes of an over-long line dropped so far, while discarding.
    discarding: Option<usize>,
}

impl LineBuffer {
    pub fn new(max: usize) -> LineBuffer {
        LineBuffer {
            max,
            partial: Vec::new(),
            discarding: None,
        }
    }

    /// Feeds bytes and appends every line they complete to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<Line>) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let (chunk, rest) = match newline {
                Some(at) => (&bytes[..at], Some(&bytes[at + 1..])),
                None => (bytes, None),
            };
            match &mut self.discarding {
                Some(dropped) => *dropped += chunk.len(),
                None if self.partial.len() + chunk.len() > self.max => {
                    self.discarding = Some(self.partial.len() + chunk.len());
                    self.partial = Vec::new();
                }
                None => self.partial.extend_from_slice(chunk),
            }
            match rest {
                Some(rest) => {
                    out.push(match self.discarding.take() {
                        Some(len) => Line::TooLong { len },
                        None => Line::Complete(std::mem::take(&mut self.partial)),
                    });
                    bytes = rest;
                }
                None => bytes = &[],
            }
        }
    }

    /// At end of stream: an unterminated last line, if any.
    pub fn finish(&mut self) -> Option<Line> {
        if let Some(len) = self.discarding.take() {
            return Some(Line::TooLong { len });
        }
        if self.partial.is_empty() {
            return None;
        }
        Some(Line::Complete(std::mem::take(&mut self.partial)))
    }

    /// Bytes currently held.
    pub fn held(&self) -> usize {
        self.partial.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(buffer: &mut LineBuffer, chunks: &[&[u8]]) -> Vec<Line> {
        let mut out = Vec::new();
        for chunk in chunks {
            buffer.push(chunk, &mut out);
        }
        out
    }

    #[test]
    fn lines_split_across_reads_are_reassembled() {
        let mut buffer = LineBuffer::new(16);
        let lines = feed(&mut buffer, &[b"ab", b"c\nde", b"f\n\nx"]);
        assert_eq!(
            lines,
            [
                Line::Complete(b"abc".to_vec()),
                Line::Complete(b"def".to_vec()),
                Line::Complete(Vec::new())
            ]
        );
        assert_eq!(buffer.finish(), Some(Line::Complete(b"x".to_vec())));
    }

    #[test]
    fn an_over_long_line_is_reported_once_and_never_held() {
        let mut buffer = LineBuffer::new(8);
        let mut out = Vec::new();
        buffer.push(b"0123456", &mut out);
        for _ in 0..1000 {
            buffer.push(b"xxxxxxxxxx", &mut out);
            assert!(buffer.held() <= 8);
        }
        buffer.push(b"yy\nok\n", &mut out);
        assert_eq!(
            out,
            [
                Line::TooLong {
                    len: 7 + 10_000 + 2
                },
                Line::Complete(b"ok".to_vec())
            ]
        );
    }

    #[test]
    fn a_line_of_exactly_the_bound_is_kept() {
        let mut buffer = LineBuffer::new(4);
        assert_eq!(
            feed(&mut buffer, &[b"abcd\n"]),
            [Line::Complete(b"abcd".to_vec())]
        );
        assert_eq!(feed(&mut buffer, &[b"abcde\n"]), [Line::TooLong { len: 5 }]);
    }
}
