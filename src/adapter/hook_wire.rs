//! The hook channel's wire types: one JSON line from a hook process to the
//! adapter, one JSON line back (spec §2.5).
//!
//! A hook runs inside the harness (a child of the PTY host, with its
//! environment), so it cannot write to the sidecar itself. It connects to
//! `DING_HOOK_SOCKET`, a private socket the adapter listens on, sends one
//! [`HookCall`], and keeps the connection open until the [`HookAnswer`]
//! arrives: closing it withdraws the call. The answer is what the hook
//! process prints and its exit code, so the provider's hook semantics
//! (stdout JSON, exit 2, ...) stay in the provider's code.
//!
//! After printing the answer the hook sends [`RECEIPT_LINE`] on the same
//! connection. An answer that carries claimed files waits for it: a hook
//! that closes without it, or never sends it, did not pass the files on,
//! and the adapter gives them back (`release`). Any other answer closes
//! the connection once written, and the receipt goes nowhere.

use serde::{Deserialize, Serialize};

use crate::core::identity::Identity;

/// The wire version of the hook channel.
pub const HOOK_WIRE_VERSION: u64 = 1;

/// The longest call line the adapter accepts. A payload larger than
/// [`MAX_PAYLOAD_BYTES`] is sent as `null` with `payloadTooLong`.
pub const MAX_CALL_BYTES: usize = 1024 * 1024;

/// The largest hook payload forwarded as is (its JSON, as read on stdin).
pub const MAX_PAYLOAD_BYTES: usize = 900 * 1024;

/// The longest answer line a hook reads. Answers name files (within the
/// claim's name budget) and a few sentences; anything longer is no answer,
/// and is not read whole.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// What a hook sends after it printed the answer (see the module docs).
pub const RECEIPT_LINE: &str = "{\"received\":true}";

/// One hook call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookCall {
    pub v: u64,
    /// The provider the hook configuration names (`ding hook PROVIDER EVENT`).
    pub provider: String,
    /// The event, as the provider names it.
    pub event: String,
    /// The harness identity in the hook's environment, when all three
    /// `DING_*` variables are set: the terminal this call is about.
    pub identity: Option<Identity>,
    /// The provider's payload (JSON read from the hook's stdin), or `null`
    /// when it was empty, not JSON, or too long.
    pub payload: serde_json::Value,
    #[serde(default)]
    pub payload_too_long: bool,
    /// How long the hook process waits for the answer, in milliseconds; a
    /// parked call is answered before it.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl HookCall {
    /// How long the hook waits for its answer, if it said.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.timeout_ms.map(std::time::Duration::from_millis)
    }
}

/// What the hook process prints and how it exits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookAnswer {
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub exit: i32,
    /// For a call the adapter parked: what became of it. A caller that
    /// offers again after an expiry is told so, and never guesses from how
    /// long the answer took. Absent for every other call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parked: Option<ParkAnswer>,
}

/// What became of a parked call, in its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParkAnswer {
    /// Work was claimed for it: the answer carries it.
    Delivered,
    /// A later call said the offer no longer holds (the harness left the
    /// state it was parked for); answered with nothing.
    Declined,
    /// A newer call took its slot; answered with nothing.
    Replaced,
    /// Its deadline came with nothing to deliver; answered with nothing.
    /// The offer may be made again.
    Expired,
}

/// The adapter refused the call (malformed, another provider, too long).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRefusal {
    pub error: String,
    pub message: String,
}

impl HookCall {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl HookAnswer {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl HookRefusal {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Set (non-empty) by `ding check --adapters` when it runs a hook command
/// as the harness would: `ding hook` then prints [`PROBE_ANSWER`] and exits
/// 0 without relaying anything, so the check sees that the command reaches
/// a `ding` (and not another program of that name).
pub const PROBE_VARIABLE: &str = "DING_HOOK_PROBE";

/// What a probed `ding hook` prints.
pub const PROBE_ANSWER: &str = "ding hook: reached";

/// A hook call for tests: `provider`'s `event` from the harness
/// incarnation `incarnation` of session `s`, with `payload`.
#[cfg(test)]
pub(crate) fn test_call(
    provider: &str,
    event: &str,
    incarnation: &str,
    payload: serde_json::Value,
) -> HookCall {
    HookCall {
        v: HOOK_WIRE_VERSION,
        provider: provider.into(),
        event: event.into(),
        identity: Some(Identity {
            session: "s".into(),
            incarnation: incarnation.into(),
            generation: "g".into(),
        }),
        payload,
        payload_too_long: false,
        timeout_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_answers_round_trip() {
        let call = HookCall {
            v: HOOK_WIRE_VERSION,
            provider: "demo".into(),
            event: "Stop".into(),
            identity: None,
            payload: serde_json::json!({"stop_hook_active": false}),
            payload_too_long: false,
            timeout_ms: Some(10_000),
        };
        let back: HookCall = serde_json::from_str(&call.to_line()).unwrap();
        assert_eq!(back, call);
        let answer = HookAnswer {
            stdout: "{}\n".into(),
            stderr: String::new(),
            exit: 2,
            parked: None,
        };
        let back: HookAnswer = serde_json::from_str(&answer.to_line()).unwrap();
        assert_eq!(back, answer);
        assert!(!answer.to_line().contains("parked"), "absent unless parked");
        let expired = HookAnswer {
            parked: Some(ParkAnswer::Expired),
            ..HookAnswer::default()
        };
        assert!(expired.to_line().contains(r#""parked":"expired""#));
        assert_eq!(
            serde_json::from_str::<HookAnswer>(&expired.to_line()).unwrap(),
            expired
        );
        assert_eq!(
            serde_json::from_str::<HookAnswer>("{}").unwrap(),
            HookAnswer::default()
        );
    }
}
