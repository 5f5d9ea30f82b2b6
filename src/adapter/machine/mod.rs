//! The adapter machine: every decision an adapter makes, sans-IO.
//!
//! It has the core engine's shape: facts go in with the time they were
//! observed ([`AdapterMachine::handle_input`], [`AdapterMachine::handle_timeout`]),
//! decisions come out ([`AdapterMachine::poll_output`]), and
//! [`AdapterMachine::next_deadline`] says when time alone will change something.
//! It never reads a clock, opens a socket or sleeps; the kit's shell
//! (`kit.rs`) moves the bytes, and the whole-agent simulation
//! (`tests/agent_simulation.rs`) drives the same machine on a simulated
//! clock.
//!
//! | input | from | may become |
//! |---|---|---|
//! | [`Input::Downlink`] | the sidecar (stdin) | identity, demand, claim answers |
//! | [`Input::HookCall`] and the hook's other events | the hook channel | provider plans: answers, claims, parks |
//! | [`Input::PtyOpened`] .. [`Input::PtyLost`] | the PTY host, while evidence is wanted | `activity` lines |
//!
//! Evidence is produced only while the sidecar wants it, and only from a
//! snapshot asked for after the last thing the machine heard move, stamped
//! with that snapshot's revision: the sidecar's compare-and-send then fails
//! if anything at all happened since. While wanted, evidence that allows
//! delivery (idle, composer empty) is read again on a heartbeat so it never
//! goes stale; evidence that holds is read again only on an event: the
//! terminal moving, a hook, the sidecar, or the moment the provider says
//! its verdict changes with time alone ([`Provider::verdict_changes_at`]).
//! A held message thus costs no wake-up while nothing happens. With nothing
//! wanted and no hook waiting, [`AdapterMachine::next_deadline`] is `None`.
//!
//! # Where each part is
//!
//! * The contract: [`Input`], [`Output`] and the hook connection's number
//!   [`Peer`] (`contract.rs`); the [`Pacing`] of evidence (`pacing.rs`).
//! * What the machine remembers, and how each input is taken (`state.rs`);
//!   its timers (`timers.rs`).
//! * The sidecar's lines: identity and demand (`downlink.rs`); the answer
//!   to a claim, a wake confirmed or withheld, files given back
//!   (`claim_answers.rs`).
//! * Hooks: one call line read and checked, and the refusals (`calls.rs`);
//!   a call's plan carried out (`hooks.rs`).
//! * The terminal: the link to the PTY host (`terminal.rs`); a snapshot
//!   read into evidence and reported (`evidence.rs`).
//! * Its smaller parts: the claims in flight (`claims.rs`), how long the
//!   person has been quiet (`quiet.rs`), a new screen settling
//!   (`startup.rs`), calls about another terminal (`strangers.rs`).
//!
//! [`Provider::verdict_changes_at`]: crate::adapter::Provider::verdict_changes_at

mod calls;
mod claim_answers;
mod claims;
mod contract;
mod downlink;
mod evidence;
mod hooks;
mod pacing;
mod quiet;
mod startup;
mod state;
mod strangers;
mod terminal;
mod timers;

pub use self::calls::{judge_call, oversized_call};
pub use self::contract::{Input, Output, Peer};
pub use self::pacing::Pacing;
pub use self::state::AdapterMachine;

#[cfg(test)]
mod tests;
