//! Gemini CLI 0.61.0: its model API (the Gemini API's `generateContent`)
//! for the loopback model server, a scratch home that starts it
//! model-free, and the first pieces of its DING provider. The findings
//! they rest on are in docs/providers/gemini-findings.md, with captures
//! and hook payloads in fixtures/providers/gemini/.
//!
//! * `generate_content`: the wire format (`:streamGenerateContent`,
//!   `:generateContent`, `:countTokens`).
//! * `home`: `settings.json` and the environment that skip every
//!   first-run dialog, and the argv with the approval setting.
//! * `screen`: what one PTY snapshot shows (ready, busy, dialog; the
//!   composer empty or not), from real captures.
//! * `pane`: the screen and keys as the evaluation's typist reads and
//!   presses them.
//!
//! Registered in `PROVIDERS` without an adapter: the hook plans, the
//! adapter and the agent compiler come next (issue 23).

pub mod generate_content;
pub mod home;
pub mod pane;
pub mod screen;
