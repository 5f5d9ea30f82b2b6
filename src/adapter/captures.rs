//! The captured screens a provider's tests read (test builds only): the
//! same `fixtures/providers/` files its screen grammar is tested on.

use crate::pty::wire::Snapshot;

/// The capture `fixtures/providers/DIR/NAME.json`: a PTY host `snapshot`
/// reply, with a `_note`.
pub fn capture(dir: &str, name: &str) -> Snapshot {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/providers")
        .join(dir)
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).expect("capture");
    serde_json::from_str(&text).expect("a snapshot")
}
