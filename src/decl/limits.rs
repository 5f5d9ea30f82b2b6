//! The limits a declaration meets before it is parsed: its size, then its
//! encoding. Broken, they give the diagnostic that says why, and the text is
//! never parsed.

use super::diagnostic::Diagnostic;
use super::source::Source;

/// The largest declaration accepted, in bytes. The KDL parser recurses per
/// byte on some malformed inputs, so this bound also bounds its stack use
/// (see `syntax::PARSER_STACK_PER_BYTE`). A fleet larger than this belongs in
/// several files.
pub const MAX_DECLARATION_BYTES: usize = 64 * 1024;

/// Checks the limits that come before syntax (size, then UTF-8) and
/// decodes. When a limit is broken the diagnostic says why, and the
/// source (then only good for positioning it) must not be parsed.
pub fn decode(origin: &str, bytes: &[u8]) -> (Source, Option<Diagnostic>) {
    if bytes.len() > MAX_DECLARATION_BYTES {
        let source = Source::new(origin, "");
        let diagnostic = Diagnostic::error(
            0..0,
            format!("declaration is larger than the limit of {MAX_DECLARATION_BYTES} bytes"),
        )
        .hint("declare a large fleet across several files");
        return (source, Some(diagnostic));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => (Source::new(origin, text), None),
        Err(err) => {
            let bad = err.valid_up_to();
            // The valid prefix positions the bad byte exactly; the lossy
            // rest only keeps later offsets in range. The span is in the
            // decoded text, where the bad byte became U+FFFD.
            let source = Source::new(origin, String::from_utf8_lossy(bytes));
            let byte = bytes.get(bad).copied().unwrap_or_default();
            let diagnostic = Diagnostic::error(
                bad..bad + char::REPLACEMENT_CHARACTER.len_utf8(),
                format!("declaration is not valid UTF-8 (byte 0x{byte:02x})"),
            )
            .hint("KDL v2 files are UTF-8; re-save the file as UTF-8");
            (source, Some(diagnostic))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::source::Position;

    #[test]
    fn non_utf8_input_points_at_the_first_bad_byte() {
        let (source, diagnostic) = decode("a.kdl", b"agent \"w\"\n  cwd \"\xff\"");
        let diagnostic = diagnostic.expect("invalid UTF-8 is refused");
        assert_eq!(
            source.position(diagnostic.span.start),
            Position { line: 2, column: 8 }
        );
        assert!(
            diagnostic.message.contains("not valid UTF-8"),
            "{}",
            diagnostic.message
        );
    }

    /// The decoded text holds U+FFFD where the bad byte was: the span
    /// covers that whole character, so it can slice the text it points into.
    #[test]
    fn the_span_of_a_bad_byte_is_its_replacement_character() {
        for bytes in [&b"\xa2"[..], b"ab\xff\xfecd", b"x\xe2\x80"] {
            let (source, diagnostic) = decode("a.kdl", bytes);
            let span = diagnostic.expect("invalid UTF-8 is refused").span;
            assert_eq!(
                source.text().get(span.clone()),
                Some("\u{fffd}"),
                "{bytes:?}: {span:?}"
            );
        }
    }

    #[test]
    fn oversized_input_is_refused_before_decoding() {
        let big = vec![b' '; MAX_DECLARATION_BYTES + 1];
        let (_, diagnostic) = decode("a.kdl", &big);
        let diagnostic = diagnostic.expect("oversized input is refused");
        assert!(diagnostic.message.contains("larger than the limit"));
        assert!(decode("a.kdl", &big[..MAX_DECLARATION_BYTES]).1.is_none());
    }
}
