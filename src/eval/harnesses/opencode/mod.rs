//! OpenCode 1.18.33 as the evaluation drives it.
//!
//! * `chat_completions`: the wire format (`POST /v1/chat/completions`,
//!   SSE, title and compaction requests told apart).
//! * `home`: `opencode.json` with the mock provider and the permissions,
//!   the stub plugin directory, and the environment that keeps it off the
//!   network.
//! * `pane`: the screen and keys as the evaluation's typist reads and
//!   presses them.

pub mod chat_completions;
pub mod home;
pub mod pane;
