//! Gemini CLI 0.61.0 as the evaluation drives it.
//!
//! * `generate_content`: the wire format (`:streamGenerateContent`,
//!   `:generateContent`, `:countTokens`).
//! * `home`: `settings.json` and the environment that skip every
//!   first-run dialog, and the argv with the approval setting.
//! * `pane`: the screen and keys as the evaluation's typist reads and
//!   presses them.

pub mod generate_content;
pub mod home;
pub mod pane;
