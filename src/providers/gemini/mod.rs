//! Gemini CLI 0.61.0: DING's provider (screen grammar, hooks, adapter,
//! agent compiler); its model API and scratch home for the evaluation are
//! in `src/eval/harnesses/gemini/`. The findings they rest on are in
//! docs/providers/gemini-findings.md, with captures and hook payloads in
//! fixtures/providers/gemini/.
//!
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

pub mod activity;
pub mod adapter;
pub mod compile;
pub mod environment;
pub mod hooks;
pub mod screen;
pub mod settings;
pub mod timing;
