//! The engine: every DING decision, made on one thread with no I/O.
//!
//! # The loop
//!
//! The runtime owns the file descriptors; the engine owns the decisions. After
//! every input the runtime drains the outputs, then sleeps until the next input
//! or the next deadline. This is str0m's single-mutation invariant: mutate,
//! drain, mutate again. Do not feed a second input before draining the first.
//!
//! ```
//! use ding::core::config::{EngineConfig, Policy};
//! use ding::core::engine::{Engine, Input, Output};
//! use ding::core::message::MessageName;
//! use ding::core::time::Time;
//!
//! let config = EngineConfig::new(Policy::Aggressive, "worker", "inbox/new");
//! let mut engine = Engine::new(config, None, Time::ZERO);
//! engine.handle_input(Input::InboxScan(vec![MessageName::new("001.md").unwrap()]), Time::ZERO);
//! while let Some(output) = engine.poll_output() {
//!     match output {
//!         Output::Send(send) => { /* write send.transport to the PTY host */ }
//!         Output::SendIf(_) | Output::SpawnAdapter | Output::ToAdapter(_)
//!         | Output::JournalChanged | Output::StatusChanged | Output::Decision(_) => {}
//!     }
//! }
//! // Arm a timer for engine.next_deadline(); on expiry call handle_timeout.
//! assert_eq!(engine.next_deadline(), None);
//! ```
//!
//! # Guarantees
//!
//! * Under `turn-boundary+fresh-idle`, a [`SendIf`] is emitted only with a
//!   live lease for the PTY's current identity, an empty composer and a known
//!   fence revision. Anything else is a [`HoldReason`]. It never falls back to
//!   an unconditional send.
//! * Hook-owned, staged and in-flight files are never named by a transaction.
//! * No input is ever dropped into a panic: every malformed fact is a typed
//!   hold or an `Ignored` record.
//! * `next_deadline` is `None` when nothing is pending: an idle sidecar sleeps.
//!
//! # Where each part is
//!
//! * [`Input`] and how each is taken (`input.rs`); [`Output`] and the two
//!   sends (`output.rs`).
//! * What the engine remembers between inputs, and the writes every handler
//!   shares (`state.rs`).
//! * Time: the engine's timers in one table ([`Timer`]), the next
//!   deadline, and what fires when it passes (`timers.rs`).
//! * The handlers, by whom the fact comes from: the inbox (`inbox.rs`), the
//!   adapter's lines (`adapter_lines.rs`), the hooks' receipts and claims
//!   (`claims.rs`), the PTY host's replies (`pty_replies.rs`).
//! * Delivery: the gate and the first transaction (`delivery.rs`); a typed
//!   notice's Return, withholding and take-out (`return_phase.rs`); the
//!   evidence demand and the adapter's silence (`demand.rs`).
//! * What `ding status` shows (`status.rs`).
//!
//! [`HoldReason`]: super::hold::HoldReason

mod adapter_lines;
mod claims;
mod delivery;
mod demand;
mod inbox;
mod input;
mod output;
mod pty_replies;
mod return_phase;
mod state;
mod status;
mod timers;

pub use self::input::Input;
pub use self::output::{Output, Send, SendIf};
pub use self::state::Engine;
pub use self::timers::Timer;
