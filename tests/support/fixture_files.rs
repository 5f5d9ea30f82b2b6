//! Reading a fixture directory: every `.json` file in it, by name, in name
//! order, so table-driven tests see each capture and miss none.

use std::fs;
use std::path::Path;

/// `(file name, text)` of every `.json` file in `relative` (from the crate
/// root), sorted by name.
pub fn json_files(relative: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let mut files: Vec<(String, String)> = fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| {
            let name = path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            (name, fs::read_to_string(&path).expect("read fixture"))
        })
        .collect();
    files.sort();
    files
}

/// `(file name, JSON)` of every `.json` file in `relative`, sorted by name.
pub fn json_values(relative: &str) -> Vec<(String, serde_json::Value)> {
    json_files(relative)
        .into_iter()
        .map(|(name, text)| {
            let value = serde_json::from_str(&text)
                .unwrap_or_else(|err| panic!("{relative}/{name} is not JSON: {err}"));
            (name, value)
        })
        .collect()
}
