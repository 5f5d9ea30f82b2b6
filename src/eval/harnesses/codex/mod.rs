//! Codex CLI 0.169.0 as the evaluation drives it.
//!
//! * `responses`: the wire format (`POST /v1/responses`, SSE, title
//!   requests told apart).
//! * `home`: `config.toml` with the mock provider, approvals, sandbox and
//!   project trust, and the environment.
//! * `pane`: the screen and keys as the evaluation's typist reads and
//!   presses them.

pub mod home;
pub mod pane;
pub mod responses;
