//! The PTY host's input order as a sans-IO machine: which input reaches
//! the terminal when, and what each client hears of it.
//!
//! It owns the rules of `docs/pty-protocol.md` §3: transactions (`send`,
//! `send-if`) run one at a time and everything else queues behind them in
//! arrival order; a `send-if` is compared (identity, revision, the time
//! fence) when it reaches the head of the order, right after every byte of
//! pending output was read; a person's input interrupts a `send-if` with
//! writes left; `holdInputMs` keeps a person's typed text behind a paste
//! until its owner's next transaction, and `withdraw` takes the paste back
//! out when that input cannot wait; a person's keys keep their spacing
//! (`pace`). It also owns the revision and the terminal's times, the facts
//! the compare reads.
//!
//! It leaves every byte and every syscall to its shell: the host
//! (`pty::host`) and the whole-agent simulation (`tests/agent_simulation`)
//! both drive it. The contract is the engine's:
//!
//! * Inputs carry their time: [`InputOrder::handle_input`]`(input, now)`.
//!   What the machine needs to know of the world (output was read, the
//!   terminal took every committed byte, the child ended) comes as an
//!   [`Input`]; it reads no clock and touches no fd.
//! * Outputs are drained until empty after every input, before the next
//!   one ([`InputOrder::poll_output`]): mutate, drain, mutate again. An
//!   output that asks for something names the input that answers it
//!   ([`Output::ReadOutput`] is answered by [`Input::OutputRead`]).
//! * Timers are data ([`timers`]): [`InputOrder::next_deadline`] is the
//!   earliest of one table, [`InputOrder::handle_timeout`] fires the
//!   expired ones through one `match`. A spurious early call is a no-op;
//!   with nothing waiting there is no deadline.
//!
//! ```text
//! loop {
//!     let now = clock();
//!     order.handle_input(input, now);   // or order.handle_timeout(now)
//!     while let Some(output) = order.poll_output() { carry_out(output) }
//!     if every committed byte was taken { order.handle_input(Input::Landed, now) }
//!     sleep until order.next_deadline() or the next event
//! }
//! ```

mod contract;
mod hold;
mod pace;
mod state;
mod timers;

pub use self::contract::{Client, Condition, HoldAsk, Input, Output, Record, Transaction, Writer};
pub use self::pace::KeyPacing;
pub use self::state::InputOrder;
pub use self::timers::Timer;
