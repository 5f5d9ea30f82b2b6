//! Claude Code 2.1.328: its model API (Anthropic Messages) for the loopback
//! model server, and a scratch home that starts it model-free.
//!
//! * `messages`: the wire format (`POST /v1/messages`, SSE, count_tokens).
//! * `home`: `.claude.json` and the environment that skip every first-run
//!   dialog, and the argv with the permission mode.
//! * `pane`: the screen and keys as the evaluation's typist reads and
//!   presses them.

pub mod home;
pub mod messages;
pub mod pane;
