//! The status snapshot: everything `ding status` shows, as plain data.
//!
//! Every unread file appears once, in FIFO order, with its state and, when it
//! is held, a typed reason with its source and age, for example
//! "held: composer nonempty (adapter, 3 s ago)".

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::adapter::{Adapter, AdapterPhase};
use super::config::{EngineConfig, Fence, Policy};
use super::decision::ReleaseCause;
use super::escape::{displayable, escape};
use super::hold::{HoldReason, HoldSource};
use super::identity::Identity;
use super::lease::LeaseSlot;
use super::message::MessageName;
use super::ownership::{MessageState, RequestId};
use super::time::Time;

/// What the engine knows of the PTY host.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtyView {
    pub reachable: bool,
    pub identity: Option<Identity>,
    /// The latest revision the host reported.
    pub revision: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineStatus {
    pub policy: Policy,
    pub now: Time,
    pub adapter: AdapterStatus,
    pub lease: LeaseStatus,
    pub pty: PtyView,
    pub evidence: EvidenceView,
    pub in_flight: Option<RequestId>,
    pub unread: usize,
    pub pending: usize,
    pub messages: Vec<MessageStatus>,
}

/// The demand signal, the fence, and what the adapter last said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceView {
    /// Whether the adapter was told that evidence is wanted.
    pub wanted: bool,
    /// Since when it was told so (or told it is not).
    pub since: Option<Time>,
    pub fence: Fence,
    /// The opaque `reason` of the adapter's latest activity line.
    pub adapter_reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterStatus {
    #[serde(flatten)]
    pub phase: AdapterPhase,
    /// The respawn delay the next failure would use, in milliseconds.
    pub next_backoff_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseStatus {
    #[serde(flatten)]
    pub slot: LeaseSlot,
    pub freshness: Freshness,
    pub age_ms: Option<u64>,
    pub remaining_ms: Option<u64>,
}

/// Whether the lease may still be used, as of the status's `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Freshness {
    /// Granted, and not yet past its expiry.
    Fresh,
    /// Granted, but past its expiry.
    Expired,
    /// No lease: it ended (the slot says why).
    #[serde(rename = "none")]
    NoLease,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageStatus {
    pub name: MessageName,
    #[serde(flatten)]
    pub state: MessageState,
    /// When the file entered its state.
    pub since: Time,
    /// Why it is held, if it is pending and held.
    pub hold: Option<HoldView>,
    /// A hook claimed it and never passed it on, so it became pending
    /// again (shown while it stays pending).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub given_back: Option<ReleaseCause>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoldView {
    #[serde(flatten)]
    pub reason: HoldReason,
    pub source: HoldSource,
    pub since: Time,
}

impl MessageStatus {
    pub fn new(
        name: &MessageName,
        state: &MessageState,
        since: Time,
        hold: Option<&HoldView>,
        given_back: Option<ReleaseCause>,
    ) -> MessageStatus {
        let pending = *state == MessageState::Pending;
        MessageStatus {
            name: name.clone(),
            state: state.clone(),
            since,
            hold: hold.filter(|_| pending).cloned(),
            given_back: given_back.filter(|_| pending),
        }
    }

    /// One human line: `NAME  STATE[: reason (source, N s ago)]`, shown by
    /// the rule of [`super::escape`]: the name escaped exactly, the rest
    /// (which may quote adapter or PTY text) made displayable.
    pub fn describe(&self, now: Time) -> String {
        let state = match &self.state {
            MessageState::Pending => match &self.hold {
                Some(hold) => format!(
                    "held: {} ({}, {} ago)",
                    hold.reason,
                    hold.source,
                    human_age(now.since(hold.since))
                ),
                None => "pending".into(),
            },
            MessageState::InFlight { request } => format!("in flight (request {request})"),
            MessageState::Staged {
                confirmed: true, ..
            } => {
                format!(
                    "staged: rung {} ago, awaiting archive",
                    human_age(now.since(self.since))
                )
            }
            MessageState::Staged {
                confirmed: false, ..
            } => format!(
                "staged: outcome unknown since {} ago, awaiting archive",
                human_age(now.since(self.since))
            ),
            MessageState::HookOwned { .. } => format!(
                "hook-owned: claimed by a hook {} ago for its next context, awaiting archive",
                human_age(now.since(self.since))
            ),
        };
        let given_back = match self.given_back {
            Some(ReleaseCause::HookGone) => {
                "; given back: the hook that claimed it went away before its answer arrived"
            }
            Some(ReleaseCause::NoReceipt) => {
                "; given back: the hook that claimed it never confirmed passing it on"
            }
            Some(ReleaseCause::InterruptedUnsent) => {
                "; given back: a person interrupted its notice, which left the composer unsent"
            }
            Some(ReleaseCause::Withdrawn) => {
                "; given back: a person typed before its Return, and its notice was taken back out of the composer"
            }
            _ => "",
        };
        format!(
            "{}  {state}{given_back}",
            escape(self.name.as_str()),
            state = displayable(&state)
        )
    }
}

impl EngineStatus {
    pub fn new(
        config: &EngineConfig,
        now: Time,
        adapter: &Adapter,
        lease: &LeaseSlot,
        pty: &PtyView,
        evidence: EvidenceView,
        messages: Vec<MessageStatus>,
    ) -> EngineStatus {
        let pending = messages
            .iter()
            .filter(|m| m.state == MessageState::Pending)
            .count();
        EngineStatus {
            policy: config.policy,
            now,
            adapter: AdapterStatus {
                phase: adapter.phase.clone(),
                next_backoff_ms: millis(adapter.next_delay()),
            },
            lease: LeaseStatus::new(lease, now),
            pty: pty.clone(),
            evidence,
            in_flight: None,
            unread: messages.len(),
            pending,
            messages,
        }
    }
}

impl LeaseStatus {
    fn new(slot: &LeaseSlot, now: Time) -> LeaseStatus {
        match slot {
            LeaseSlot::Granted(lease) => LeaseStatus {
                slot: slot.clone(),
                freshness: if now < lease.expires_at {
                    Freshness::Fresh
                } else {
                    Freshness::Expired
                },
                age_ms: Some(now.since(lease.granted_at).as_millis() as u64),
                remaining_ms: Some(lease.expires_at.since(now).as_millis() as u64),
            },
            LeaseSlot::Ended { .. } => LeaseStatus {
                slot: slot.clone(),
                freshness: Freshness::NoLease,
                age_ms: None,
                remaining_ms: None,
            },
        }
    }
}

fn millis(span: Duration) -> u64 {
    u64::try_from(span.as_millis()).unwrap_or(u64::MAX)
}

/// `850 ms`, `3 s`, `4 min`, `2 h`.
pub fn human_age(span: Duration) -> String {
    let secs = span.as_secs();
    if secs == 0 {
        format!("{} ms", span.as_millis())
    } else if secs < 120 {
        format!("{secs} s")
    } else if secs < 7200 {
        format!("{} min", secs / 60)
    } else {
        format!("{} h", secs / 3600)
    }
}
