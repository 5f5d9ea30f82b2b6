//! OpenCode (pinned and measured: 1.18.33), delivered natively: DING never
//! types into its terminal.
//!
//! * `screen`: the grammar of its screen (is a turn running, a dialog
//!   open, the composer empty), read from real captures.
//! * `hooks`: what each call of DING's plugins means, and what it does
//!   with unread work.
//! * `plugins`: DING's server and TUI plugins, their configuration and
//!   the adapter's check of them (the JavaScript is in `plugins/`).
//! * `adapter`: the provider on the neutral kit (`ding adapter opencode`);
//!   the native idle path is the kit's (`adapter::native_idle`), the TUI
//!   plugin its reporter.
//! * `compile`: `ding compile-agent opencode`.
//! * `timing`: every timing of the room.

pub mod adapter;
pub mod compile;
pub mod hooks;
pub mod plugins;
pub mod screen;
pub mod timing;
