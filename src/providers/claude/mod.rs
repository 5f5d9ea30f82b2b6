//! Claude Code 2.1.328: its model API (Anthropic Messages) for the loopback
//! model server, a scratch home that starts it model-free, and its DING
//! provider (screen grammar, hooks, adapter, agent compiler).
//!
//! * `messages`: the wire format (`POST /v1/messages`, SSE, count_tokens).
//! * `home`: `.claude.json` and the environment that skip every first-run
//!   dialog, and the argv with the permission mode.
//! * `screen`: what one PTY snapshot shows (ready, busy, dialog; the
//!   composer empty or not), from real captures.
//! * `activity`: what the hooks said, combined with the screen.
//! * `hooks`: what each hook does with unread work.
//! * `settings`: the hook configuration the adapter relies on.
//! * `adapter`: all of it on the neutral kit (`ding adapter claude`).
//! * `compile`: `ding compile-agent claude`.
//! * `pane`: the screen and keys as the evaluation's typist reads and
//!   presses them.

pub mod activity;
pub mod adapter;
pub mod compile;
pub mod home;
pub mod hooks;
pub mod messages;
pub mod pane;
pub mod screen;
pub mod settings;
pub mod timing;
