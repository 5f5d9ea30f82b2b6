//! The inbox as a trial left it, kept beside the trial's logs: which files
//! stayed unread in `new/`, which reached `archive/`, and anything else
//! the agent's inbox held, by name and size, so that what a trial did not
//! deliver can be checked after its scratch directory is gone.

use std::fs;
use std::path::Path;

/// Every file under `inbox`, one line each: its path inside the inbox and
/// its size in bytes, sorted; a directory that cannot be read says so.
pub fn inbox_listing(inbox: &Path) -> String {
    let mut lines = Vec::new();
    list(inbox, inbox, &mut lines);
    lines.sort();
    if lines.is_empty() {
        return "(the inbox is empty)\n".to_string();
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn list(root: &Path, dir: &Path, lines: &mut Vec<String>) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            let shown = dir.strip_prefix(root).unwrap_or(dir).display().to_string();
            lines.push(format!("{shown}/ unreadable: {err}"));
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if meta.is_dir() {
            list(root, &path, lines);
        } else {
            lines.push(format!("{shown} {} bytes", meta.len()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_every_file_of_new_and_archive_with_its_size() {
        let dir = std::env::temp_dir().join(format!("ding-eval-inbox-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("new")).expect("new");
        fs::create_dir_all(dir.join("archive")).expect("archive");
        fs::write(dir.join("new/b.md"), "unread").expect("b");
        fs::write(dir.join("archive/a.md"), "read it").expect("a");
        let listing = inbox_listing(&dir);
        let _ = fs::remove_dir_all(&dir);
        assert_eq!(listing, "archive/a.md 7 bytes\nnew/b.md 6 bytes\n");
    }

    #[test]
    fn an_empty_or_missing_inbox_says_so() {
        let missing = std::env::temp_dir().join("ding-eval-inbox-that-is-not-there");
        assert!(inbox_listing(&missing).contains("unreadable"));
        let empty =
            std::env::temp_dir().join(format!("ding-eval-inbox-empty-{}", std::process::id()));
        fs::create_dir_all(&empty).expect("empty");
        assert_eq!(inbox_listing(&empty), "(the inbox is empty)\n");
        let _ = fs::remove_dir_all(&empty);
    }
}
