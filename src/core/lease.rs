//! Idle leases: short-lived permission to *attempt* one PTY transaction.
//!
//! A lease exists only after an exact `idle` activity event for the current
//! session, incarnation and generation. It is anchored at receipt, lasts
//! min(validForMs, lease cap), and ends on any newer event, adapter EOF, error
//! or exit, silence, an identity change, a lifecycle fact, or its own use. A
//! lease authorizes an attempt, not a delivery: the PTY host still compares
//! the revision before writing a byte.

use serde::{Deserialize, Serialize};

use super::hold::HoldReason;
use super::identity::Identity;
use super::protocol::{Composer, WithdrawKeys};
use super::time::Time;

/// Where a lease's fence revision came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RevisionSource {
    /// The adapter observed its evidence at this revision (the strong fence).
    Evidence,
    /// The adapter gave none; the PTY revision known when the event arrived.
    PtyAtReceipt,
}

/// A granted lease.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    pub identity: Identity,
    pub sequence: u64,
    pub granted_at: Time,
    pub expires_at: Time,
    pub composer: Composer,
    /// The revision the conditional send must expect, if one is known.
    pub revision: Option<u64>,
    pub revision_source: Option<RevisionSource>,
    /// The typed notice (by its paste's request) that the evidence saw
    /// alone in the composer: what may authorize that notice's Return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed: Option<u64>,
    /// How to empty this composer of a paste, as the adapter said (a
    /// paste under this lease gives it to the PTY host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdraw: Option<WithdrawKeys<'static>>,
}

/// The engine's one lease slot: a live lease, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum LeaseSlot {
    Granted(Lease),
    Ended { reason: HoldReason, at: Time },
}

impl LeaseSlot {
    pub fn ended(reason: HoldReason, at: Time) -> LeaseSlot {
        LeaseSlot::Ended { reason, at }
    }
}
