//! Terminal input bytes to keys, for the demo agent.
//!
//! This module owns the byte grammar only: UTF-8 text, Return, Backspace,
//! Ctrl-C, Ctrl-D, arrow keys and bracketed paste (`ESC[200~` .. `ESC[201~`).
//! It keeps incomplete sequences (a split escape sequence, a split UTF-8
//! character, a paste whose end marker has not arrived) across reads, so the
//! result does not depend on how the bytes were chunked. What a key means is
//! the agent's business (`agent.rs`).

/// The most bytes one paste keeps; the rest of the paste is discarded (the
/// end marker is still honoured), so a hostile paste cannot grow memory.
pub const MAX_PASTE_BYTES: usize = 64 * 1024;

/// The longest escape sequence we wait for; a longer one is dropped.
const MAX_ESCAPE_BYTES: usize = 32;

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// One decoded input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// Typed printable text (one or more characters).
    Text(String),
    /// The literal text of one bracketed paste, newlines and tabs turned
    /// into spaces, other control characters removed.
    Paste(String),
    Enter,
    Backspace,
    CtrlC,
    CtrlD,
    /// Ctrl-U: the line is killed back to its start (the whole one-line
    /// composer: its cursor is always at the end).
    CtrlU,
    Up,
    Down,
    /// A lone ESC (or Alt+key prefix).
    Escape,
}

/// Incremental decoder; feed it every read.
#[derive(Debug, Default)]
pub struct KeyDecoder {
    /// Bytes not yet decided (a partial escape sequence or UTF-8 character).
    pending: Vec<u8>,
    /// Inside a paste: the content so far.
    paste: Option<Vec<u8>>,
}

impl KeyDecoder {
    pub fn new() -> KeyDecoder {
        KeyDecoder::default()
    }

    /// Decodes `bytes` (appended to anything pending) into keys.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Key> {
        self.pending.extend_from_slice(bytes);
        let input = std::mem::take(&mut self.pending);
        let mut keys = Vec::new();
        let mut text = Vec::new();
        let mut at = 0;
        while at < input.len() {
            if let Some(paste) = self.paste.as_mut() {
                match find(&input[at..], PASTE_END) {
                    Some(end) => {
                        append_bounded(paste, &input[at..at + end]);
                        let content = self.paste.take().unwrap_or_default();
                        keys.push(Key::Paste(paste_text(&content)));
                        at += end + PASTE_END.len();
                    }
                    None => {
                        // Keep a possible partial end marker for the next read.
                        let keep = partial_suffix(&input[at..], PASTE_END);
                        let upto = input.len() - keep;
                        append_bounded(paste, &input[at..upto]);
                        self.pending = input[upto..].to_vec();
                        at = input.len();
                    }
                }
                continue;
            }
            let byte = input[at];
            match byte {
                0x1b => {
                    flush_text(&mut text, &mut keys);
                    match escape(&input[at..]) {
                        Escape::Incomplete => {
                            self.pending = input[at..].to_vec();
                            at = input.len();
                        }
                        Escape::PasteStart => {
                            self.paste = Some(Vec::new());
                            at += PASTE_START.len();
                        }
                        Escape::Key(key, len) => {
                            keys.extend(key);
                            at += len;
                        }
                    }
                }
                b'\r' => {
                    flush_text(&mut text, &mut keys);
                    keys.push(Key::Enter);
                    at += 1;
                }
                0x7f | 0x08 => {
                    flush_text(&mut text, &mut keys);
                    keys.push(Key::Backspace);
                    at += 1;
                }
                0x03 => {
                    flush_text(&mut text, &mut keys);
                    keys.push(Key::CtrlC);
                    at += 1;
                }
                0x04 => {
                    flush_text(&mut text, &mut keys);
                    keys.push(Key::CtrlD);
                    at += 1;
                }
                0x15 => {
                    flush_text(&mut text, &mut keys);
                    keys.push(Key::CtrlU);
                    at += 1;
                }
                b'\t' => {
                    text.push(b' ');
                    at += 1;
                }
                // Other C0 controls (LF included: Return is CR in raw mode)
                // mean nothing to a one-line composer.
                0x00..=0x1f => at += 1,
                _ => {
                    let len = utf8_len(byte);
                    if at + len > input.len() {
                        // A character split across reads.
                        flush_text(&mut text, &mut keys);
                        self.pending = input[at..].to_vec();
                        at = input.len();
                    } else {
                        text.extend_from_slice(&input[at..at + len]);
                        at += len;
                    }
                }
            }
        }
        flush_text(&mut text, &mut keys);
        keys
    }
}

enum Escape {
    Incomplete,
    PasteStart,
    /// The key (if the sequence means one) and the bytes it used.
    Key(Option<Key>, usize),
}

/// Decodes the escape sequence at the start of `bytes` (which starts with ESC).
fn escape(bytes: &[u8]) -> Escape {
    match bytes.get(1) {
        None => Escape::Incomplete,
        Some(b'[') => {
            // CSI: parameters and intermediates, then one final byte.
            for (index, &byte) in bytes.iter().enumerate().skip(2) {
                if (0x40..=0x7e).contains(&byte) {
                    let sequence = &bytes[..=index];
                    if sequence == PASTE_START {
                        return Escape::PasteStart;
                    }
                    let key = match sequence {
                        b"\x1b[A" => Some(Key::Up),
                        b"\x1b[B" => Some(Key::Down),
                        _ => None,
                    };
                    return Escape::Key(key, index + 1);
                }
                if !(0x20..=0x3f).contains(&byte) || index >= MAX_ESCAPE_BYTES {
                    // Not a well-formed CSI: drop what we have read of it.
                    return Escape::Key(None, index);
                }
            }
            Escape::Incomplete
        }
        Some(b'O') => match bytes.get(2) {
            None => Escape::Incomplete,
            Some(b'A') => Escape::Key(Some(Key::Up), 3),
            Some(b'B') => Escape::Key(Some(Key::Down), 3),
            Some(_) => Escape::Key(None, 3),
        },
        // A lone ESC followed by anything else: the ESC is a key of its
        // own and the next byte is decoded normally.
        Some(_) => Escape::Key(Some(Key::Escape), 1),
    }
}

fn flush_text(text: &mut Vec<u8>, keys: &mut Vec<Key>) {
    if text.is_empty() {
        return;
    }
    let decoded: String = String::from_utf8_lossy(text)
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    text.clear();
    if !decoded.is_empty() {
        keys.push(Key::Text(decoded));
    }
}

/// The byte length of the UTF-8 sequence a lead byte announces; invalid
/// lead bytes count as one (they decode to U+FFFD).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 1,
    }
}

fn append_bounded(paste: &mut Vec<u8>, bytes: &[u8]) {
    let room = MAX_PASTE_BYTES.saturating_sub(paste.len());
    paste.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

/// Paste content as composer text: CR LF, CR and LF become one space each,
/// tabs a space, every other control character (C0, DEL, C1) is removed.
fn paste_text(content: &[u8]) -> String {
    let text = String::from_utf8_lossy(content).replace("\r\n", "\n");
    text.chars()
        .filter_map(|c| match c {
            '\r' | '\n' | '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// The length of the longest suffix of `bytes` that is a proper prefix of
/// `marker`.
fn partial_suffix(bytes: &[u8], marker: &[u8]) -> usize {
    (1..marker.len())
        .rev()
        .find(|&len| bytes.len() >= len && bytes[bytes.len() - len..] == marker[..len])
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Key {
        Key::Text(s.to_string())
    }

    #[test]
    fn typed_text_and_controls_decode_in_order() {
        let keys = KeyDecoder::new().feed(b"hi\x7f\r\x03\x04");
        assert_eq!(
            keys,
            vec![
                text("hi"),
                Key::Backspace,
                Key::Enter,
                Key::CtrlC,
                Key::CtrlD
            ]
        );
    }

    #[test]
    fn paste_is_one_literal_key_without_enter() {
        let keys = KeyDecoder::new().feed(b"\x1b[200~line one\r\nline\ttwo\rthree\x1b[201~\r");
        assert_eq!(
            keys,
            vec![
                Key::Paste("line one line two three".to_string()),
                Key::Enter
            ]
        );
    }

    #[test]
    fn chunking_does_not_change_the_keys() {
        let input = "ab\x1b[A\x1b[200~pa\x1bste é\x1b[201~\u{e9}\x1bOB\r".as_bytes();
        let whole = KeyDecoder::new().feed(input);
        for split in 1..input.len() {
            let mut decoder = KeyDecoder::new();
            let mut keys = decoder.feed(&input[..split]);
            keys.extend(decoder.feed(&input[split..]));
            // Text runs may be split in two; join neighbours to compare.
            assert_eq!(
                join_text(keys),
                join_text(whole.clone()),
                "split at {split}"
            );
        }
        assert_eq!(
            whole,
            vec![
                text("ab"),
                Key::Up,
                Key::Paste("paste é".to_string()),
                text("é"),
                Key::Down,
                Key::Enter
            ]
        );
    }

    fn join_text(keys: Vec<Key>) -> Vec<Key> {
        let mut out: Vec<Key> = Vec::new();
        for key in keys {
            if let (Some(Key::Text(last)), Key::Text(more)) = (out.last_mut(), &key) {
                last.push_str(more);
                continue;
            }
            out.push(key);
        }
        out
    }

    #[test]
    fn oversized_paste_is_truncated_but_still_ends() {
        let mut decoder = KeyDecoder::new();
        let mut keys = decoder.feed(PASTE_START);
        for _ in 0..3 {
            keys.extend(decoder.feed(&vec![b'x'; MAX_PASTE_BYTES]));
        }
        keys.extend(decoder.feed(b"\x1b[201~z"));
        assert_eq!(keys.len(), 2);
        assert!(matches!(&keys[0], Key::Paste(p) if p.len() == MAX_PASTE_BYTES));
        assert_eq!(keys[1], text("z"));
    }

    #[test]
    fn unknown_and_malformed_escapes_are_dropped() {
        let keys = KeyDecoder::new().feed(b"\x1b[1;5Ca\x1b[\x01b\x1bxc");
        assert_eq!(keys, vec![text("a"), text("b"), Key::Escape, text("xc")]);
    }
}
