//! Codex CLI 0.169.0: DING's provider (screen grammar, hooks and their
//! trust, the launcher with the native idle path, adapter, agent
//! compiler). Its model API and scratch `CODEX_HOME` for the evaluation
//! are in `src/eval/harnesses/codex/`.
//!
//! * `environment`: whether Codex, in a given environment, starts the
//!   interface the grammar reads (not under `TERM=dumb`).
//! * `screen`: what one PTY snapshot shows (ready, busy, a selection list;
//!   the composer empty or not), from real captures.
//! * `activity`: what the hooks said, combined with the screen (the screen
//!   alone cannot prove idle).
//! * `hooks`: what each hook does with unread work.
//! * `trust`: DING's hooks and their trust hashes as per-invocation `-c`
//!   arguments.
//! * `launch`: the harness command (`ding adapter codex launch`): Codex's
//!   own app-server and the TUI on it, or the TUI embedded; one thread
//!   around one poll loop, its WebSocket to the app-server on a Unix
//!   socket, its calls on the hook channel.
//! * `native`, `rpc`: the native idle path's machine (sans-IO), and the
//!   JSON-RPC it speaks with the app-server.
//! * `thread_status`: a thread's status as the app-server says it, told to
//!   the adapter in the kit's words (the launcher and the adapter speak the
//!   kit's native idle wire, `adapter::native_idle::wire`).
//! * `adapter`: the provider on the neutral kit (`ding adapter codex`).
//! * `compile`: `ding compile-agent codex`.

pub mod activity;
pub mod adapter;
pub mod compile;
pub mod environment;
pub mod hooks;
pub mod launch;
pub mod native;
pub mod rpc;
pub mod screen;
pub mod thread_status;
pub mod timing;
pub mod trust;
