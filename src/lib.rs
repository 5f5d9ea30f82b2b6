//! st2-ding: deliver durable inbox work to AI coding agents that live in
//! terminals, without corrupting a human's draft, without pressing Enter on a
//! dialog, and without losing a message.
//!
//! The crate has rooms with hard walls between them:
//!
//! * [`adapter`]: the neutral adapter kit every provider adapter shares
//!   (uplink, downlink, hook channel, PTY view, one mio loop).
//! * [`core`]: the sans-IO engine. It makes every delivery decision and owns no
//!   file, socket, process or clock. It never names a provider.
//! * `decl`: KDL agent declarations, lowered into typed specs.
//! * `pty`: the reference PTY host and its control protocol.
//! * `private_dir`: directories only their owner may change, shared by the
//!   PTY host's socket directory and the sidecar's runtime, state and inbox
//!   directories.
//! * `signals`: how every long-running process reads its signals and how
//!   every child it starts begins with a clean signal state.
//! * `sidecar`: the mio runtime that moves bytes between the world and the
//!   engine.
//! * [`cli`]: the `ding` subcommands.
//! * `eval`: groundwork for evaluating on real harnesses: a loopback model
//!   server with a scripted directive grammar, and harness launches.
//! * `providers`: the only place provider vocabulary may appear: model API
//!   wire formats and scratch homes of the real harnesses.
//! * `demo`: the bundled generic demo agent and its scripted adapter.
//! * `wall_clock`: UTC calendar time for logs and arrival names.
//! * `ding_binary`: which `ding` file starts the others (the one installed
//!   over the running one, after an upgrade in place).
//! * `log_file`: the capped, rotated log file of the sidecar and the PTY
//!   host, whose failed writes are counted, never fatal.
//! * `wait`: the one helper that blocks until a fact holds by looking again,
//!   for the processes' shells (never for a decision).

pub mod adapter;
pub mod cli;
pub mod core;
pub mod decl;
pub mod demo;
pub mod ding_binary;
pub mod eval;
pub mod line_server;
pub mod log_file;
pub mod private_dir;
pub mod providers;
pub mod pty;
pub mod raw_mode;
pub mod sidecar;
pub mod signals;
pub mod wait;
pub mod wall_clock;
