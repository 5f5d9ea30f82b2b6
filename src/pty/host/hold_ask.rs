//! What a send-if asks of the input after it, and a hold in force: the
//! state the input hold (`hold.rs`) keeps in the host.

use std::time::Instant;

use mio::Token;

use crate::pty::transport::{self, WireStep};
use crate::pty::wire::{MAX_WITHDRAW_BYTES, MAX_WITHDRAW_WAIT_MS};

/// What a send-if asks for the input after it (see the module).
pub(super) struct HoldAsk {
    /// Hold a person's typed text for at most this many milliseconds.
    pub(super) ms: u64,
    /// The steps that take the paste back out, if the hold ends with a
    /// person's input to go on before the owner's next transaction.
    pub(super) withdraw: Option<Vec<WireStep>>,
}

impl HoldAsk {
    /// The hold a send-if's `holdInputMs` and `withdraw` ask for, or why
    /// they cannot be had. `withdraw` needs a hold, and is a few keys after
    /// a short wait at most.
    pub(super) fn new(
        ms: Option<u64>,
        withdraw: Option<Vec<WireStep>>,
    ) -> Result<Option<HoldAsk>, String> {
        let Some(ms) = ms else {
            return match withdraw {
                Some(_) => Err("withdraw needs holdInputMs".into()),
                None => Ok(None),
            };
        };
        if let Some(steps) = &withdraw {
            transport::validate(steps).map_err(|err| format!("withdraw: {err}"))?;
            let (bytes, wait) = transport::totals(steps);
            if bytes > MAX_WITHDRAW_BYTES || wait > MAX_WITHDRAW_WAIT_MS {
                return Err(format!(
                    "withdraw writes {bytes} bytes after {wait} ms: at most {MAX_WITHDRAW_BYTES} bytes after {MAX_WITHDRAW_WAIT_MS} ms"
                ));
            }
        }
        Ok(Some(HoldAsk { ms, withdraw }))
    }
}

/// A hold in force (see the module).
pub(super) struct InputHold {
    /// The client whose next transaction goes first and ends the hold.
    pub(super) client: Token,
    /// The hold ends here at the latest.
    pub(super) until: Instant,
    /// That transaction has begun: the hold ends once it is done.
    pub(super) ending: bool,
    /// Inputs held so far.
    pub(super) held: usize,
    /// The steps that take the paste back out (see the module).
    pub(super) withdraw: Option<Vec<WireStep>>,
    /// The terminal the paste was written to: withdraw keys are never
    /// written to another.
    pub(super) incarnation: String,
}
