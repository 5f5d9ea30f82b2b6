//! Bounded line assembly for byte streams read until `WouldBlock`.
//!
//! A line longer than the bound is never held whole: it is reported once as
//! too long the moment it passes the bound (a line that never ends is
//! reported too), and its remaining bytes are dropped up to the next
//! newline. Memory per stream is therefore at most the bound, whatever a
//! peer writes.

/// One complete unit taken from the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line without its newline.
    Complete(Vec<u8>),
    /// A line passed the bound; `len` of its bytes (more than the bound) had
    /// arrived by then. The rest of it is dropped, unreported.
    TooLong { len: usize },
}

#[derive(Debug)]
pub struct LineBuffer {
    max: usize,
    partial: Vec<u8>,
    /// Dropping the rest of a line already reported as too long.
    discarding: bool,
}

impl LineBuffer {
    pub fn new(max: usize) -> LineBuffer {
        LineBuffer {
            max,
            partial: Vec::new(),
            discarding: false,
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
            if !self.discarding {
                if self.partial.len() + chunk.len() > self.max {
                    out.push(Line::TooLong {
                        len: self.partial.len() + chunk.len(),
                    });
                    self.discarding = true;
                    self.partial = Vec::new();
                } else {
                    self.partial.extend_from_slice(chunk);
                }
            }
            match rest {
                Some(rest) => {
                    if !std::mem::take(&mut self.discarding) {
                        out.push(Line::Complete(std::mem::take(&mut self.partial)));
                    }
                    bytes = rest;
                }
                None => bytes = &[],
            }
        }
    }

    /// At end of stream: an unterminated last line, if any (one too long
    /// was reported already).
    pub fn finish(&mut self) -> Option<Line> {
        if std::mem::take(&mut self.discarding) || self.partial.is_empty() {
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
                Line::TooLong { len: 7 + 10 },
                Line::Complete(b"ok".to_vec())
            ]
        );
    }

    #[test]
    fn a_line_is_reported_too_long_as_soon_as_it_passes_the_bound() {
        let mut buffer = LineBuffer::new(8);
        let mut out = Vec::new();
        buffer.push(b"01234567", &mut out);
        assert_eq!(out, [], "at the bound, not past it");
        buffer.push(b"8", &mut out);
        assert_eq!(out, [Line::TooLong { len: 9 }], "no newline needed");
        buffer.push(&[b'x'; 100_000], &mut out);
        assert_eq!(out.len(), 1, "reported once");
        assert_eq!(buffer.finish(), None, "and not again at the end");
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
