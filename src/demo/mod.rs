//! The bundled generic demo agent and its scripted adapter, used by
//! `make demo` and the end-to-end tests.
//!
//! The demo agent (`ding demo-agent`) is a small full-screen terminal
//! program that behaves like a terminal coding agent in general, with no
//! provider and no network: a composer line with a dim placeholder, turns
//! that keep it busy while typed text stays in the composer and Return
//! queues it, and an optional confirmation menu that takes Return as an
//! answer. It writes a transcript of what reached it and when. The demo
//! adapter (`ding demo-adapter`) watches it through the PTY host and speaks
//! adapter protocol v1. This room is generic: it names no provider, and DING
//! core knows nothing of it (the sidecar sees only protocol lines).
//!
//! * `keys`: input bytes to keys (bracketed paste, split sequences).
//! * `agent`: the agent's state machine (keys and timeouts in, events out).
//! * `render`: the agent's screen layout and ANSI encoding.
//! * `transcript`: the JSON-lines transcript.
//! * `terminal`: the agent's raw-mode poll loop (the only I/O of the agent).
//! * `screen`: the adapter's pure screen classifier.
//! * `adapter`: the adapter's loop and protocol lines.

pub mod adapter;
pub mod agent;
pub mod keys;
pub mod render;
mod screen;
pub mod terminal;
mod transcript;
