//! Message names: the filenames of unread work in the inbox's `new/`.
//!
//! FIFO order is filename order (bytewise, which for UTF-8 is code point
//! order), so writers make names that sort by arrival. A name is exactly a
//! filename: never a path, never empty, never `.` or `..`, at most
//! [`MAX_NAME_BYTES`] bytes. Anything else is rejected where it enters.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest filename Linux filesystems accept.
pub const MAX_NAME_BYTES: usize = 255;

/// A validated inbox filename.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MessageName(Box<str>);

/// Why a string is not a message name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InvalidName {
    Empty,
    TooLong,
    DotOrDotDot,
    ContainsSlash,
    ContainsNul,
}

impl MessageName {
    pub fn new(name: &str) -> Result<MessageName, InvalidName> {
        if name.is_empty() {
            Err(InvalidName::Empty)
        } else if name.len() > MAX_NAME_BYTES {
            Err(InvalidName::TooLong)
        } else if name == "." || name == ".." {
            Err(InvalidName::DotOrDotDot)
        } else if name.contains('/') {
            Err(InvalidName::ContainsSlash)
        } else if name.contains('\0') {
            Err(InvalidName::ContainsNul)
        } else {
            Ok(MessageName(name.into()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MessageName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for InvalidName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InvalidName::Empty => "empty name",
            InvalidName::TooLong => "name longer than 255 bytes",
            InvalidName::DotOrDotDot => "name is `.` or `..`",
            InvalidName::ContainsSlash => "name contains `/`",
            InvalidName::ContainsNul => "name contains NUL",
        })
    }
}

impl Serialize for MessageName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for MessageName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        MessageName::new(&raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_path_components() {
        assert!(MessageName::new("20261130T033355Z-a1.md").is_ok());
        assert_eq!(MessageName::new(""), Err(InvalidName::Empty));
        assert_eq!(MessageName::new(".."), Err(InvalidName::DotOrDotDot));
        assert_eq!(MessageName::new("a/b"), Err(InvalidName::ContainsSlash));
        assert_eq!(MessageName::new("a\0b"), Err(InvalidName::ContainsNul));
        assert_eq!(
            MessageName::new(&"x".repeat(256)),
            Err(InvalidName::TooLong)
        );
        assert!(MessageName::new(&"x".repeat(255)).is_ok());
    }

    #[test]
    fn order_is_bytewise_filename_order() {
        let mut names: Vec<MessageName> = ["b.md", "a.md", "a0.md", "B.md"]
            .iter()
            .map(|n| MessageName::new(n).unwrap())
            .collect();
        names.sort();
        let sorted: Vec<&str> = names.iter().map(MessageName::as_str).collect();
        assert_eq!(sorted, ["B.md", "a.md", "a0.md", "b.md"]);
    }
}
