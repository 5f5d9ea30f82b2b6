//! `ding sidecar`: the mio loop around the sans-IO engine.
//!
//! One thread, one `Poll`, one token per descriptor:
//!
//! | token | source | becomes |
//! |---|---|---|
//! | `SIGNALS` | signalfd (SIGCHLD, SIGTERM, SIGINT, SIGHUP) | adapter exit, shutdown |
//! | `TIMER` | timerfd, armed to the earliest deadline | `handle_timeout`, PTY reconnect |
//! | `INBOX` | inotify on `new/` and the root | inbox inputs, rescans |
//! | `ADAPTER_OUT` / `ADAPTER_ERR` | the adapter's pipes | protocol lines / log lines |
//! | `ADAPTER_IN` | the adapter's stdin (writable) | queued downlink lines flushed |
//! | `PTY` | the PTY host's control socket | PTY inputs |
//! | `STATUS` and peers | `sidecar.sock` | status replies |
//!
//! Every readable descriptor is drained until `WouldBlock` (mio is
//! edge-triggered). Each fact becomes one engine input, after which the
//! engine's outputs are drained and carried out before the next input. After
//! each turn the journal is written if ownership changed, then the downlink
//! lines of that turn go to the adapter (a `claimed` answer hands files to a
//! hook, so the ownership it grants is durable before the hook hears of it),
//! and the timerfd is re-armed to the earliest deadline, or disarmed: an idle
//! sidecar sleeps in `poll` with no timeout at all.
//!
//! The loop and its turn are in `event_loop.rs`; starting the sidecar in
//! `start.rs`; what the runtime holds, with the tokens, in `state.rs`; and
//! one file per source of facts: the inbox (`inbox_events.rs`), the
//! adapter's process and pipes (`adapter_io.rs`), the signalfd with
//! reaping and shutting down (`signals.rs`), and the status socket
//! (`status.rs`).

mod adapter_io;
mod event_loop;
mod inbox_events;
mod signals;
mod start;
mod state;
mod status;

pub use self::start::run;
pub use self::state::{STOP_WITHIN, SidecarOptions, monotonic_now};
