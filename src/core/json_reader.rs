//! A strict, allocation-shy reader for one JSON object (RFC 8259), the shape
//! of every adapter line.
//!
//! Why not serde_json: validation sits on the path of every adapter event,
//! and a general deserializer spends most of its time on generality this
//! protocol does not need. This reader checks the whole object in one pass
//! and hands out each member's value as a [`Value`]: the value's own text
//! and what kind of JSON it is, nothing decoded yet. The caller decodes only
//! the values it keeps (`as_u64`, `as_str`, `items`); strings are borrowed
//! from the line unless they contain escapes. A line is accepted only if it
//! is exactly one well-formed object; the tests check that against
//! serde_json.

use std::borrow::Cow;

/// Containers nested this deep, the line's object counted, are refused,
/// so hostile input cannot exhaust the stack: serde_json's default limit,
/// which refuses the 128th level and reads the 127th.
const MAX_DEPTH: usize = 128;

/// Why the text is not one JSON object. `at` is a byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub at: usize,
    pub what: &'static str,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    /// A string without escapes: its contents are its text between quotes.
    String,
    EscapedString,
    Array,
    Object,
}

/// One checked JSON value: its text as written, and its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value<'a> {
    pub text: &'a str,
    pub kind: Kind,
}

impl<'a> Value<'a> {
    /// An integer literal that fits in a u64 (no sign, fraction or exponent).
    #[inline]
    pub fn as_u64(self) -> Option<u64> {
        if self.kind != Kind::Number {
            return None;
        }
        // The grammar was checked: no `+`, no leading zeros; `-`, `.` and
        // exponents make the parse fail, as they should.
        self.text.parse().ok()
    }

    /// A string's contents, borrowed unless escapes had to be decoded.
    #[inline]
    pub fn as_str(self) -> Option<Cow<'a, str>> {
        let body = self.text.strip_prefix('"')?.strip_suffix('"')?;
        match self.kind {
            Kind::String => Some(Cow::Borrowed(body)),
            Kind::EscapedString => Some(Cow::Owned(unescape(body))),
            _ => None,
        }
    }

    /// An array's elements.
    pub fn items(self) -> Option<Vec<Value<'a>>> {
        if self.kind != Kind::Array {
            return None;
        }
        let mut reader = Reader {
            text: self.text,
            pos: 0,
        };
        let mut items = Vec::new();
        // The text was checked when it was read, so this walk cannot fail;
        // if it somehow did, the caller sees a non-array.
        reader.array(1, |item| items.push(item)).ok()?;
        Some(items)
    }
}

/// A cursor over one object: `next_key` until `None`, and after each key
/// exactly one `value`.
pub struct ObjectReader<'a> {
    reader: Reader<'a>,
    first: bool,
}

impl<'a> ObjectReader<'a> {
    /// Starts at the object's `{` (after optional whitespace).
    pub fn new(text: &'a str) -> Result<ObjectReader<'a>, JsonError> {
        let mut reader = Reader { text, pos: 0 };
        reader.whitespace();
        reader.expect(b'{', "expected an object")?;
        Ok(ObjectReader {
            reader,
            first: true,
        })
    }

    /// The next key, or `None` after the closing `}` (and nothing but
    /// whitespace after it).
    #[inline]
    pub fn next_key(&mut self) -> Result<Option<Cow<'a, str>>, JsonError> {
        let key = self.reader.next_member(&mut self.first)?;
        if key.is_none() {
            self.reader.whitespace();
            if self.reader.pos != self.reader.text.len() {
                return Err(self.reader.error("trailing characters after the object"));
            }
        }
        Ok(key.map(|key| key.as_str().unwrap_or_default()))
    }

    /// The value after the current key, checked in full.
    #[inline]
    pub fn value(&mut self) -> Result<Value<'a>, JsonError> {
        self.reader.value(1)
    }
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Inside an object: the next member's key (its `:` consumed), or
    /// `None` after the closing `}`.
    #[inline]
    fn next_member(&mut self, first: &mut bool) -> Result<Option<Value<'a>>, JsonError> {
        self.whitespace();
        // `}` ends the object both when it is empty and after a member;
        // after a comma it is an error below (a key must follow).
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(None);
        }
        if !*first {
            self.expect(b',', "expected `,` or `}`")?;
            self.whitespace();
        }
        *first = false;
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a string key"));
        }
        let key = self.string()?;
        self.whitespace();
        self.expect(b':', "expected `:`")?;
        Ok(Some(key))
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, JsonError> {
        self.whitespace();
        let start = self.pos;
        let kind = match self.peek() {
            Some(b'"') => return self.string(),
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                Kind::Number
            }
            Some(b'[') => {
                self.array(depth, drop)?;
                Kind::Array
            }
            Some(b'{') => {
                self.nest(depth)?;
                self.pos += 1;
                let mut first = true;
                while self.next_member(&mut first)?.is_some() {
                    self.value(depth + 1)?;
                }
                Kind::Object
            }
            Some(b'n') => self.word(b"null", Kind::Null)?,
            Some(b't') => self.word(b"true", Kind::Bool)?,
            Some(b'f') => self.word(b"false", Kind::Bool)?,
            None => return Err(self.error("unexpected end of line")),
            Some(_) => return Err(self.error("expected a value")),
        };
        Ok(Value {
            text: &self.text[start..self.pos],
            kind,
        })
    }

    fn word(&mut self, word: &[u8], kind: Kind) -> Result<Kind, JsonError> {
        if !self.text.as_bytes()[self.pos..].starts_with(word) {
            return Err(self.error("expected a value"));
        }
        self.pos += word.len();
        Ok(kind)
    }

    /// A container whose members are at `depth` (the line's object's are
    /// at 1) is the `depth + 1`th level.
    fn nest(&self, depth: usize) -> Result<(), JsonError> {
        if depth + 1 >= MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        Ok(())
    }

    /// At `[`: checks the array through its `]`, handing each element to
    /// `item` in order.
    fn array(&mut self, depth: usize, mut item: impl FnMut(Value<'a>)) -> Result<(), JsonError> {
        self.nest(depth)?;
        self.pos += 1;
        self.whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            item(self.value(depth + 1)?);
            self.whitespace();
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b',') => self.pos += 1,
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Result<(), JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits()?,
            _ => return Err(self.error("expected a digit")),
        }
        let mut plain = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.digits()?;
            plain = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.digits()?;
            plain = false;
        }
        // Like serde_json, refuse a number no double can hold (`1e400`).
        // An integer of at most 300 digits always fits, so only the rare
        // fraction, exponent or huge literal pays for a float parse.
        let literal = &self.text[start..self.pos];
        if (!plain || literal.len() > 300) && !literal.parse::<f64>().is_ok_and(f64::is_finite) {
            return Err(JsonError {
                at: start,
                what: "number out of range",
            });
        }
        Ok(())
    }

    /// One or more digits.
    fn digits(&mut self) -> Result<(), JsonError> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(self.error("expected a digit"));
        }
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        Ok(())
    }

    /// At `"`: checks the string through its closing quote. The common
    /// case, no escapes, is kept small enough to inline.
    #[inline]
    fn string(&mut self) -> Result<Value<'a>, JsonError> {
        let start = self.pos;
        let end = plain_run_end(self.text.as_bytes(), start + 1);
        if self.text.as_bytes().get(end) == Some(&b'"') {
            self.pos = end + 1;
            return Ok(Value {
                text: &self.text[start..self.pos],
                kind: Kind::String,
            });
        }
        self.pos = end;
        self.rest_of_string(start)
    }

    /// The rest of a string that began at `start`, from the first byte
    /// that needed attention (an escape, a control byte or the end).
    #[cold]
    fn rest_of_string(&mut self, start: usize) -> Result<Value<'a>, JsonError> {
        let bytes = self.text.as_bytes();
        loop {
            match bytes.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Value {
                        text: &self.text[start..self.pos],
                        kind: Kind::EscapedString,
                    });
                }
                Some(b'\\') => {
                    self.pos = escape_at(bytes, self.pos)
                        .map_err(|what| self.error(what))?
                        .1;
                    self.pos = plain_run_end(bytes, self.pos);
                }
                Some(_) => return Err(self.error("control character in a string")),
                None => return Err(self.error("unterminated string")),
            }
        }
    }

    #[inline]
    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), JsonError> {
        if self.peek() != Some(byte) {
            return Err(self.error(what));
        }
        self.pos += 1;
        Ok(())
    }

    fn error(&self, what: &'static str) -> JsonError {
        JsonError { at: self.pos, what }
    }
}

/// Decodes the contents of a string whose escapes were checked.
fn unescape(body: &str) -> String {
    let bytes = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut pos = 0;
    while pos < bytes.len() {
        let run = bytes[pos..]
            .iter()
            .position(|&b| b == b'\\')
            .map_or(bytes.len(), |n| pos + n);
        // A run ends at an ASCII byte or the end, so it is whole characters.
        out.push_str(&body[pos..run]);
        pos = run;
        if pos < bytes.len() {
            match escape_at(bytes, pos) {
                Ok((c, next)) => {
                    out.push(c);
                    pos = next;
                }
                // Unreachable for checked text; stop rather than loop.
                Err(_) => break,
            }
        }
    }
    out
}

/// The escape at `bytes[pos]` (a backslash): the character it stands for
/// and the position after it.
fn escape_at(bytes: &[u8], pos: usize) -> Result<(char, usize), &'static str> {
    let code = *bytes.get(pos + 1).ok_or("unterminated string")?;
    let simple = match code {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(bytes, pos + 2)?;
            return match unit {
                0xD800..=0xDBFF => {
                    if bytes.get(pos + 6..pos + 8) != Some(b"\\u") {
                        return Err("lone leading surrogate");
                    }
                    let low = hex4(bytes, pos + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return Err("invalid trailing surrogate");
                    }
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    Ok((char::from_u32(code).ok_or("invalid escape")?, pos + 12))
                }
                0xDC00..=0xDFFF => Err("lone trailing surrogate"),
                _ => Ok((char::from_u32(unit).ok_or("invalid escape")?, pos + 6)),
            };
        }
        _ => return Err("invalid escape"),
    };
    Ok((simple, pos + 2))
}

fn hex4(bytes: &[u8], pos: usize) -> Result<u32, &'static str> {
    let digits = bytes.get(pos..pos + 4).ok_or("short unicode escape")?;
    digits.iter().try_fold(0, |unit, &digit| {
        (digit as char)
            .to_digit(16)
            .map(|value| unit * 16 + value)
            .ok_or("invalid unicode escape")
    })
}

/// The end of the run of string bytes from `start` that need no attention:
/// the index of the first `"`, `\` or control byte, or the length. Eight
/// bytes at a time, since string contents are most of every line.
#[inline]
fn plain_run_end(bytes: &[u8], start: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of `word` that is below `limit` (`limit` at
    // most 0x80). Borrows can only mark bytes above a true hit, so the
    // lowest mark is always exact, which is all that is used.
    let below = |word: u64, limit: u8| word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS;
    let mut pos = start;
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let hits = below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1)
            | below(word, 0x20);
        if hits != 0 {
            return pos + (hits.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while let Some(&byte) = bytes.get(pos) {
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            break;
        }
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every member of `text` as (key, value), or the error.
    fn members(text: &str) -> Result<Vec<(String, Value<'_>)>, JsonError> {
        let mut reader = ObjectReader::new(text)?;
        let mut out = Vec::new();
        while let Some(key) = reader.next_key()? {
            out.push((key.into_owned(), reader.value()?));
        }
        Ok(out)
    }

    #[test]
    fn reads_members_with_their_kinds() {
        let got = members(
            r#" { "a" : 1 , "b":"x", "c":[1,[2],{"d":null}], "e":{}, "f":true, "g":-1.5e3, "h":"\u00e9\n" } "#,
        )
        .unwrap();
        let kinds: Vec<_> = got.iter().map(|(k, v)| (k.as_str(), v.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("a", Kind::Number),
                ("b", Kind::String),
                ("c", Kind::Array),
                ("e", Kind::Object),
                ("f", Kind::Bool),
                ("g", Kind::Number),
                ("h", Kind::EscapedString),
            ]
        );
        assert_eq!(got[0].1.as_u64(), Some(1));
        assert_eq!(got[5].1.as_u64(), None);
        assert_eq!(got[1].1.as_str().unwrap(), "x");
        assert!(matches!(got[1].1.as_str(), Some(Cow::Borrowed(_))));
        assert_eq!(got[6].1.as_str().unwrap(), "é\n");
        let items = got[2].1.items().unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(items[1].text, "[2]");
    }

    #[test]
    fn escaped_keys_are_decoded() {
        let got = members(r#"{"\u0076":1}"#).unwrap();
        assert_eq!(got[0].0, "v");
    }

    #[test]
    fn decodes_every_escape_and_surrogate_pairs() {
        let got = members(r#"{"s":"\"\\\/\b\f\n\r\t\u0041\ud83d\ude00 end"}"#).unwrap();
        assert_eq!(got[0].1.as_str().unwrap(), "\"\\/\u{8}\u{c}\n\r\tA😀 end");
    }

    #[test]
    fn integers_beyond_u64_are_numbers_but_not_u64() {
        let got = members(r#"{"n":18446744073709551616,"m":18446744073709551615}"#).unwrap();
        assert_eq!(got[0].1.as_u64(), None);
        assert_eq!(got[1].1.as_u64(), Some(u64::MAX));
    }

    #[test]
    fn refuses_what_is_not_one_object() {
        for text in [
            "",
            "{",
            "[]",
            "{} {}",
            "{,}",
            r#"{"a":1,}"#,
            r#"{"a"}"#,
            r#"{"a":}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":-}"#,
            r#"{"a":1e}"#,
            r#"{"a":+1}"#,
            r#"{"a":"x}"#,
            "{\"a\":\"\u{1}\"}",
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12"}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\udc00"}"#,
            r#"{"a":"\ud800\u0041"}"#,
            r#"{"a":tru}"#,
            r#"{"a":nul}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a":{"b"}}"#,
            r#"{a:1}"#,
            "{\"a\":1}\u{b}",
        ] {
            assert!(members(text).is_err(), "accepted {text:?}");
        }
    }

    /// serde_json refuses a number whose value no f64 holds (found by the
    /// `adapter-lines` fuzz target: `1e400` in an unknown field), so the
    /// reader does too; one that underflows to zero is read.
    #[test]
    fn numbers_no_double_can_hold_are_refused_like_serde_json() {
        let huge = format!("1{}", "0".repeat(400));
        for number in ["1e400", "-1e400", "1.5E+309", huge.as_str()] {
            let text = format!("{{\"a\":[{number}]}}");
            assert!(members(&text).is_err(), "accepted {text}");
            assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
        }
        for number in ["1e-400", "1.7976931348623157e308", "18446744073709551616"] {
            let text = format!("{{\"a\":{number}}}");
            assert!(members(&text).is_ok(), "refused {text}");
            assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
        }
    }

    /// serde_json refuses a value nested 128 containers deep, the line's
    /// object counted, and reads one nested 127 deep; so does the reader
    /// (the `adapter-lines` fuzz target found it reading two levels more).
    #[test]
    fn nesting_is_refused_exactly_where_serde_json_refuses_it() {
        for (arrays, fine) in [(126, true), (127, false), (128, false)] {
            for inner in ["[", "{\"b\":"] {
                let close = if inner == "[" { "]" } else { "}" };
                let text = format!(
                    "{{\"a\":{}0{}}}",
                    inner.repeat(arrays),
                    close.repeat(arrays)
                );
                let reference = serde_json::from_str::<serde_json::Value>(&text).is_ok();
                assert_eq!(reference, fine, "serde_json at {arrays} {inner}");
                assert_eq!(members(&text).is_ok(), fine, "{arrays} levels of {inner}");
            }
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(members(&deep).unwrap_err().what, "nested too deeply");
        let fine = format!("{{\"a\":{}{}}}", "[".repeat(100), "]".repeat(100));
        assert!(members(&fine).is_ok());
    }

    #[test]
    fn plain_runs_stop_at_the_first_special_byte() {
        for text in [
            &b"abcdefghijklmnop\"q"[..],
            b"abc\\",
            b"abcdefgh\x1fz",
            b"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"",
            b"no special byte at all",
            b"\x7f\x80\xa0\xff\"",
        ] {
            let expected = text
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(text.len());
            for start in 0..=expected {
                assert_eq!(
                    plain_run_end(text, start),
                    expected,
                    "{text:?} from {start}"
                );
            }
        }
    }

    /// JSON-ish text: fragments of valid syntax glued at random, so that
    /// valid and subtly invalid objects both turn up often.
    fn jsonish() -> impl proptest::strategy::Strategy<Value = String> {
        let fragment = proptest::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\"k\"",
            "\"\\u00e9\"",
            "\"\\ud83d\\ude00\"",
            "\"\\ud800\"",
            "\"\\q\"",
            "\"a\\\"b\"",
            "0",
            "-1",
            "12",
            "1.5",
            "1e5",
            "-0.0e-1",
            "01",
            "1.",
            "true",
            "false",
            "null",
            "nul",
            "\"é\"",
            "\t",
            "\u{1}",
            "\"",
        ]);
        proptest::collection::vec(fragment, 0..24).prop_map(|parts| {
            let mut text = String::from("{");
            text.extend(parts);
            text
        })
    }

    /// Any JSON value serde_json can write, a few levels deep.
    fn any_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            // Binary fractions: serde_json's float parsing is exact for
            // these, so a value reads back equal.
            (-1_000_000i32..1_000_000).prop_map(|n| serde_json::Value::from(f64::from(n) / 64.0)),
            "(?s).{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                proptest::collection::btree_map("(?s).{0,6}", inner, 0..6)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(4096))]

        /// Accepts exactly the texts serde_json reads as one object.
        #[test]
        fn agrees_with_serde_json_on_what_is_an_object(text in jsonish()) {
            let ours = members(&text).is_ok();
            let reference = serde_json::from_str::<serde_json::Value>(&text)
                .is_ok_and(|value| value.is_object());
            proptest::prop_assert_eq!(ours, reference, "{:?}", text);
        }

    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(512))]

        /// Whatever serde_json writes as an object, compact or pretty, reads
        /// back member for member; with one byte cut out anywhere, the
        /// verdict still agrees with serde_json's.
        #[test]
        fn reads_what_serde_json_writes(
            members_in in proptest::collection::btree_map("(?s).{0,6}", any_json(), 0..6),
            pretty in proptest::bool::ANY,
            cut in proptest::num::usize::ANY,
        ) {
            let object = serde_json::Value::Object(members_in.clone().into_iter().collect());
            let text = if pretty {
                serde_json::to_string_pretty(&object).unwrap()
            } else {
                object.to_string()
            };
            let got = members(&text).unwrap();
            proptest::prop_assert_eq!(got.len(), members_in.len());
            for ((key, value), (expected_key, expected)) in got.iter().zip(&members_in) {
                proptest::prop_assert_eq!(key, expected_key);
                let reread: serde_json::Value = serde_json::from_str(value.text).unwrap();
                proptest::prop_assert_eq!(&reread, expected);
            }
            let mut cut_text = text.into_bytes();
            cut_text.remove(cut % cut_text.len());
            if let Ok(cut_text) = String::from_utf8(cut_text) {
                let ours = members(&cut_text).is_ok();
                let reference = serde_json::from_str::<serde_json::Value>(&cut_text)
                    .is_ok_and(|value| value.is_object());
                proptest::prop_assert_eq!(ours, reference, "{:?}", cut_text);
            }
        }

        /// Decoded strings and integers equal serde_json's.
        #[test]
        fn decodes_like_serde_json(key in "(?s).{0,8}", text in "(?s).{0,24}", n in proptest::num::u64::ANY) {
            let quoted = |s: &str| serde_json::to_string(s).unwrap();
            let line = format!("{{{}:{},\"n\":{n}}}", quoted(&key), quoted(&text));
            let got = members(&line).unwrap();
            proptest::prop_assert_eq!(&got[0].0, &key);
            proptest::prop_assert_eq!(got[0].1.as_str().unwrap(), text);
            proptest::prop_assert_eq!(got[1].1.as_u64(), Some(n));
        }
    }
}
