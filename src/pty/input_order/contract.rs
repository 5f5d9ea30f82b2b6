//! What goes into the input order and what comes out of it.

use serde_json::{Value, json};

use crate::core::time::Time;
use crate::pty::transport::{self, WireStep};
use crate::pty::wire::{MAX_WITHDRAW_BYTES, MAX_WITHDRAW_WAIT_MS, Origin, ServerLine};

/// A client of the host, as its shell numbers it (the host: the
/// connection's mio token).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Client(pub usize);

/// Who input is from: the time fence and the pacing are about a person's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// An attached client's keys, or an intervention's `send`.
    Person,
    /// DING's deliveries, and a hold's withdraw keys.
    Ding,
}

/// Something the machine must know, at the time given with it.
#[derive(Debug)]
pub enum Input {
    /// A person's keystrokes from an attached client came now.
    Keys(Vec<u8>),
    /// A `send-if` or `send`, its steps and caps already checked.
    Transaction(Transaction),
    /// A chunk of the program's output was read now: the revision moves,
    /// and the program's mode of pasting is as given after it.
    Output { bracketed_paste: bool },
    /// The screen moved without output (a resize, a new child's screen).
    Redrawn { bracketed_paste: bool },
    /// The terminal now: which child runs on it (its incarnation), whether
    /// it runs, and whether its PTY master is open.
    Terminal {
        incarnation: String,
        running: bool,
        open: bool,
    },
    /// The terminal took every byte committed so far (the answer to
    /// [`Output::Write`], whenever it comes; a closed terminal took them).
    Landed,
    /// The answer to [`Output::ReadOutput`]: every byte of output that was
    /// pending has been read, each chunk told as [`Input::Output`].
    OutputRead,
    /// The client hung up.
    ClientGone(Client),
}

/// Something the shell must carry out, in the order drained.
#[derive(Debug)]
pub enum Output {
    /// Commit these bytes: they go to the terminal after every byte
    /// committed before them. The revision has moved. Answered, once the
    /// terminal took them all, by [`Input::Landed`].
    Write { bytes: Vec<u8>, by: Writer },
    /// Read every byte of output pending now, then answer
    /// [`Input::OutputRead`]: a transaction's compare waits for it, and
    /// nothing else begins meanwhile.
    ReadOutput,
    /// Send this line to the client.
    Reply { client: Client, line: ServerLine },
    /// Push `withdrawn` at this revision to every watcher.
    Withdrawn { revision: u64 },
    /// Log this decision.
    Log(Record),
}

/// A decision the host logs (one JSON line each, see [`Record::to_json`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A transaction passed its compare and begins.
    Began {
        client: Client,
        origin: Origin,
        /// `send-if`, `send` or `withdraw`.
        op: &'static str,
        bytes: usize,
        revision: u64,
    },
    /// A person's input ended a `send-if` with writes left.
    Interrupted { written: usize, revision: u64 },
    /// A person's typed text waits behind a hold.
    Held { bytes: usize, revision: u64 },
    /// A hold's withdraw keys were put first in the order.
    Withdrawing {
        bytes: usize,
        why: &'static str,
        revision: u64,
    },
    /// They ran: the paste is out of the input line.
    Withdrawn { revision: u64 },
    /// A hold ended; what it held goes on.
    Released {
        held: usize,
        why: &'static str,
        revision: u64,
    },
}

impl Record {
    /// The host's log line, less what only the shell knows (the time,
    /// a client's process id).
    pub fn to_json(&self) -> Value {
        match self {
            Record::Began {
                origin,
                op,
                bytes,
                revision,
                ..
            } => json!({
                "event": match origin {
                    Origin::Delivery => "delivery",
                    Origin::Intervention => "intervention",
                },
                "op": op,
                "bytes": bytes,
                "revision": revision,
            }),
            Record::Interrupted { written, revision } => {
                json!({"event": "send-if-interrupted", "written": written, "revision": revision})
            }
            Record::Held { bytes, revision } => {
                json!({"event": "input-held", "bytes": bytes, "revision": revision})
            }
            Record::Withdrawing {
                bytes,
                why,
                revision,
            } => {
                json!({"event": "withdrawing", "bytes": bytes, "why": why, "revision": revision})
            }
            Record::Withdrawn { revision } => json!({"event": "withdrawn", "revision": revision}),
            Record::Released {
                held,
                why,
                revision,
            } => json!({"event": "input-released", "held": held, "why": why, "revision": revision}),
        }
    }
}

/// A `send-if` or `send`.
#[derive(Debug)]
pub struct Transaction {
    pub client: Client,
    /// The compare for send-if; `None` for an unconditional send.
    pub condition: Option<Condition>,
    /// Who it is typed for (the log tells DING's delivery from a
    /// supervisor's intervention; an intervention is a person's input).
    pub origin: Origin,
    pub steps: Vec<WireStep>,
    /// Once written in full, hold a person's typed text (see `hold`).
    pub hold: Option<HoldAsk>,
}

/// What a send-if is compared against.
#[derive(Clone, Debug)]
pub struct Condition {
    pub session: String,
    pub incarnation: String,
    pub generation: String,
    pub expected_revision: u64,
    /// How long a person's input and the program's output must have been
    /// quiet when the compare runs (the time fence); `None`: not asked.
    pub quiet_input_ms: Option<u64>,
    pub settled_output_ms: Option<u64>,
}

/// What a send-if asks for the input after it (see `hold`).
#[derive(Clone, Debug)]
pub struct HoldAsk {
    /// Hold a person's typed text for at most this many milliseconds.
    pub ms: u64,
    /// The steps that take the paste back out, if the hold ends with a
    /// person's input to go on before the owner's next transaction.
    pub withdraw: Option<Vec<WireStep>>,
}

impl HoldAsk {
    /// The hold a send-if's `holdInputMs` and `withdraw` ask for, or why
    /// they cannot be had. `withdraw` needs a hold, and is a few keys after
    /// a short wait at most.
    pub fn new(
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

/// `at` plus `ms` milliseconds.
pub(super) fn after(at: Time, ms: u64) -> Time {
    Time::from_millis(at.as_millis().saturating_add(ms))
}
