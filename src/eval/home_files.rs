//! Reading and writing the files a harness keeps its state in, for the
//! scratch homes the harness rooms prepare (`home.rs` in each): a JSON
//! file is merged, never replaced, so a missing one reads as an empty
//! object and one that is not JSON is refused.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

/// The JSON file at `path`, or an empty object if there is none.
pub fn read_json(path: &Path) -> Result<Value> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not JSON", path.display())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(err) => Err(err).with_context(|| format!("read {}", path.display())),
    }
}

/// Writes `value` to `path`, pretty-printed, creating its directory.
pub fn write_json(path: &Path, value: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value).context("encode JSON")?;
    write_text(path, &text)
}

/// Writes `text` to `path`, creating its directory.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    let parent = path.parent().context("a home file has a directory")?;
    fs::create_dir_all(parent).with_context(|| format!("create {}", parent.display()))?;
    fs::write(path, text).with_context(|| format!("write {}", path.display()))
}

/// `value` as a JSON object, or an error naming `what` it should be.
pub fn object<'a>(value: &'a mut Value, what: &str) -> Result<&'a mut Map<String, Value>> {
    value
        .as_object_mut()
        .with_context(|| format!("{what} is not a JSON object"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_reads_empty_and_one_that_is_not_json_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a/b.json");
        assert_eq!(read_json(&path).expect("missing"), json!({}));
        write_json(&path, &json!({"k": 1})).expect("write");
        assert_eq!(read_json(&path).expect("read"), json!({"k": 1}));
        fs::write(&path, "{not json").expect("write");
        assert!(read_json(&path).is_err());
        assert!(object(&mut json!([]), "x").is_err());
    }
}
