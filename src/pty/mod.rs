//! The reference PTY host (`ding pty`) and its control protocol.
//!
//! The host owns one terminal: it runs the harness in a PTY, keeps a vt100
//! model of the screen, serves snapshots and attach clients, and performs the
//! atomic compare-and-send that the sidecar relies on. It knows nothing of
//! DING policy or of providers: it moves bytes, counts revisions and compares
//! identities. `docs/pty-protocol.md` is the normative protocol.
//!
//! * [`wire`]: request, reply, push and frame shapes, shared with clients.
//! * [`transport`]: the bounded write/wait steps and their caps.
//! * [`identity`]: incarnation and generation values.
//! * [`screen`]: the vt100 model, snapshots and redraws.
//! * [`child`]: starting the harness on a new PTY and decoding its exit.
//! * [`connection`]: one client connection's buffers and backpressure.
//! * [`input_order`]: the sans-IO machine of the input order (queue,
//!   compare-and-send, time fence, hold, withdraw, pacing).
//! * [`host`]: the single-threaded mio loop that ties them together and
//!   carries out the input order's outputs.
//! * [`client`]: a small blocking client for `ding attach`, tests and the
//!   sidecar.
//! * [`control_conn`]: one non-blocking control connection for a mio loop
//!   (the sidecar's link, the adapter kit's screen view).
//! * [`attach`]: the interactive terminal side of `ding attach`.

pub mod attach;
pub mod child;
pub mod client;
mod connection;
pub mod control_conn;
pub mod host;
pub mod identity;
pub mod input_order;
pub mod last_exit;
mod queries;
pub mod screen;
pub mod transport;
pub mod wire;
