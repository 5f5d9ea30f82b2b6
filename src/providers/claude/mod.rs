//! Claude Code 2.1.328: DING's provider (screen grammar, hooks, adapter,
//! agent compiler). Its model API and scratch home for the evaluation are
//! in `src/eval/harnesses/claude/`.
//!
//! * `screen`: what one PTY snapshot shows (ready, busy, dialog; the
//!   composer empty or not), from real captures.
//! * `activity`: what the hooks said, combined with the screen.
//! * `hooks`: what each hook does with unread work.
//! * `settings`: the hook configuration the adapter relies on.
//! * `adapter`: all of it on the neutral kit (`ding adapter claude`).
//! * `compile`: `ding compile-agent claude`.

pub mod activity;
pub mod adapter;
pub mod compile;
pub mod hooks;
pub mod screen;
pub mod settings;
pub mod timing;
