//! st2-ding: deliver durable inbox work to AI coding agents that live in
//! terminals, without corrupting a human's draft, without pressing Enter on a
//! dialog, and without losing a message.
//!
//! The crate's rooms stand on floors, and a room imports only rooms on its
//! own floor or below, never in a circle (`docs/architecture.md`;
//! `tests/layers.rs` enforces it). From the bottom:
//!
//! 0. The base, the top-level files: what every process does with the
//!    operating system and with text, whatever its floor.
//!    * `escape`: the one rule by which untrusted text is shown.
//!    * `lines`: bounded line assembly for byte streams.
//!    * `nonblocking`: non-blocking file descriptors for poll loops.
//!    * `private_dir`, `private_file`, `private_socket`: directories, files
//!      and sockets only their owner may reach, read without following a
//!      planted link; `durable`: fsync and no-replace renames.
//!    * `line_server`: a private socket answering one line with one line.
//!    * `log_file`: the capped, rotated log file of the sidecar and the PTY
//!      host, whose failed writes are counted, never fatal.
//!    * `signals`: how every long-running process reads its signals and how
//!      every child it starts begins with a clean signal state.
//!    * `raw_mode`: a terminal in raw mode, restored on drop.
//!    * `wall_clock`: UTC calendar time for logs and arrival names.
//!    * `ding_binary`: which `ding` file starts the others (the one
//!      installed over the running one, after an upgrade in place).
//!    * `wait`: the one helper that blocks until a fact holds by looking
//!      again, for the processes' shells (never for a decision).
//!    * `mutation`: the defects the simulation's mutation check plants
//!      (test builds only; a release `ding` has none).
//! 1. [`core`]: the sans-IO engine. It makes every delivery decision and
//!    owns no file, socket, process or clock. It never names a provider.
//! 2. `decl` (KDL agent declarations, lowered into typed specs), `pty` (the
//!    reference PTY host and its control protocol), `sidecar` (the mio
//!    runtime that moves bytes between the world and the engine).
//! 3. [`adapter`]: the provider kit every provider adapter shares (the
//!    sans-IO adapter machine, screen views, the hooks-in-a-settings-file
//!    compiler, uplink, downlink, hook channel, PTY view, one mio loop).
//! 4. `providers` (the product's only place for provider vocabulary: each
//!    real harness's screen grammar, hooks, configuration and native path)
//!    and `demo` (the bundled generic demo agent and its scripted adapter).
//! 5. [`cli`]: the `ding` subcommands.
//!
//! The evaluation (`src/eval/`, the `ding-eval` binary) stands above all of
//! this and imports it; nothing here names it.

pub mod adapter;
pub mod cli;
pub mod core;
pub mod decl;
pub mod demo;
pub mod ding_binary;
pub mod durable;
pub mod escape;
pub mod line_server;
pub mod lines;
pub mod log_file;
pub mod mutation;
pub mod nonblocking;
pub mod private_dir;
pub mod private_file;
pub mod private_socket;
pub mod providers;
pub mod pty;
pub mod raw_mode;
pub mod sidecar;
pub mod signals;
pub mod wait;
pub mod wall_clock;
