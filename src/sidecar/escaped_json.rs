//! JSON written by the escape rule of [`crate::escape`].
//!
//! serde_json escapes only `"`, `\` and C0 controls and leaves DEL, C1
//! controls and U+2028 raw, so a person reading a log or `ding status
//! --json` with `cat` could still be attacked by a filename. Here every
//! string character that is not [`is_plain`] becomes a `\uXXXX` escape; the
//! JSON means exactly the same. Used wherever DING prints JSON for people:
//! the sidecar's log and `ding status --json`.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use crate::escape::is_plain;

/// `value` as one line of JSON in which every string character that is not
/// [`is_plain`] is a `\uXXXX` escape.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write_json(value, Shown(CompactFormatter))
}

/// [`to_json`], indented for people.
pub fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write_json(value, Shown(PrettyFormatter::new()))
}

fn write_json<T: Serialize + ?Sized, F: Formatter>(
    value: &T,
    formatter: Shown<F>,
) -> serde_json::Result<String> {
    let mut bytes = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    value.serialize(&mut serializer)?;
    // Only whole UTF-8 strings and ASCII were written.
    Ok(String::from_utf8(bytes).unwrap_or_default())
}

/// A JSON formatter that escapes what serde_json leaves raw. serde_json
/// hands string contents over in fragments that hold no `"`, `\` or C0
/// control (it escapes those itself); this escapes the rest of the
/// characters that are not plain, and delegates layout to `F`.
struct Shown<F>(F);

impl<F: Formatter> Formatter for Shown<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if is_plain(c) {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[start..at])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            start = at + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn end_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_key(writer)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_what_serde_json_leaves_raw_and_means_the_same() {
        let value = serde_json::json!({ "name": "a\u{7f}\u{85}\u{2028}\u{fe0f}\u{e0041}\u{1f600}é─\n\"\\" });
        let text = to_json(&value).unwrap();
        assert_eq!(
            text,
            r#"{"name":"a\u007f\u0085\u2028\ufe0f\udb40\udc41😀é─\n\"\\"}"#
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
        let pretty = to_json_pretty(&value).unwrap();
        assert!(pretty.contains("\n  \"name\": \"a\\u007f"), "{pretty}");
    }
}
