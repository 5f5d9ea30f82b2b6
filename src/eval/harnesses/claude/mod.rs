//! Claude Code 2.1.328 as the evaluation drives it.
//!
//! * `messages`: the wire format (`POST /v1/messages`, SSE, count_tokens).
//! * `home`: `.claude.json` and the environment that skip every first-run
//!   dialog, and the argv with the permission mode.
//! * `pane`: the screen and keys as the evaluation's typist reads and
//!   presses them.
//! * `recorded_trials`: the minimum of calls over trials recorded here.

pub mod home;
pub mod messages;
pub mod pane;
#[cfg(test)]
mod recorded_trials;
