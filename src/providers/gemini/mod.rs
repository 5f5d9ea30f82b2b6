//! Gemini CLI 0.61.0: its model API (the Gemini API's `generateContent`)
//! for the loopback model server, a scratch home that starts it
//! model-free, and its DING provider (screen grammar, hooks, adapter,
//! agent compiler). The findings they rest on are in
//! docs/providers/gemini-findings.md, with captures and hook payloads in
//! fixtures/providers/gemini/.
//!
//! * `generate_content`: the wire format (`:streamGenerateContent`,
//!   `:generateContent`, `:countTokens`).
//! * `home`: `settings.json` and the environment that skip every
//!   first-run dialog, and the argv with the approval setting.
//! * `environment`: whether Gemini CLI, in a given environment, draws a
//!   screen the grammar reads (headless under `CI=true`, no colour under
//!   any `CI` or `NO_COLOR`).
//! * `screen`: what one PTY snapshot shows (ready, busy, dialog; the
//!   composer empty or not), from real captures.
//! * `activity`: what the hooks said, combined with the screen.
//! * `hooks`: what each hook does with unread work.
//! * `settings`: the hook configuration the adapter relies on.
//! * `adapter`: all of it on the neutral kit (`ding adapter gemini`).
//! * `compile`: `ding compile-agent gemini`.
//! * `pane`: the screen and keys as the evaluation's typist reads and
//!   presses them.

pub mod activity;
pub mod adapter;
pub mod compile;
pub mod environment;
pub mod generate_content;
pub mod home;
pub mod hooks;
pub mod pane;
pub mod screen;
pub mod settings;
pub mod timing;
