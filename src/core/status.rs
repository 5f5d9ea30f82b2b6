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
use super::hold::{HoldReason, HoldSource};
use super::identity::Identity;
use super::lease::LeaseSlot;
use super::message::MessageName;
use super::ownership::{MessageState, RequestId};
use super::time::Time;
use crate::escape::{displayable, escape};

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
    /// Every unread file by state, whatever `messages` lists.
    #[serde(default)]
    pub by_state: StateCounts,
    /// The hold every pending file is under now, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<HoldView>,
    /// Which files `messages` lists, when it is not every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<MessageWindow>,
    pub messages: Vec<MessageStatus>,
}

/// How many unread files are in each state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateCounts {
    pub pending: usize,
    pub in_flight: usize,
    pub staged: usize,
    pub hook_owned: usize,
}

impl StateCounts {
    pub fn count(&mut self, state: &MessageState) {
        *self.of_mut(state) += 1;
    }

    /// Every file counted.
    pub fn total(&self) -> usize {
        self.pending + self.in_flight + self.staged + self.hook_owned
    }

    fn of_mut(&mut self, state: &MessageState) -> &mut usize {
        match state {
            MessageState::Pending => &mut self.pending,
            MessageState::InFlight { .. } => &mut self.in_flight,
            MessageState::Staged { .. } => &mut self.staged,
            MessageState::HookOwned { .. } => &mut self.hook_owned,
        }
    }
}

/// Which unread files a status lists; all of them are always counted
/// ([`StateCounts`]). A status of 100,000 files lists a few by default,
/// and pages the rest, so that asking costs the sidecar little whatever
/// the backlog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MessageWindow {
    /// Every file, in FIFO order.
    All,
    /// The oldest and the newest `N` files, and the oldest `N` of each
    /// state but pending (what is being delivered now), in FIFO order.
    Ends(usize),
    /// Up to `limit` files after the file `after` (from the oldest when
    /// it is `None`), in FIFO order: a cursor that neither repeats nor
    /// skips a file as others arrive or are archived between pages.
    Page {
        after: Option<MessageName>,
        limit: usize,
    },
}

impl MessageWindow {
    /// Which of the files `unread` (in FIFO order) this window lists.
    pub fn pick<'a, T>(
        &self,
        unread: impl DoubleEndedIterator<Item = (&'a MessageName, &'a MessageState, T)> + Clone,
    ) -> Vec<(&'a MessageName, &'a MessageState, T)> {
        match self {
            MessageWindow::All => unread.collect(),
            MessageWindow::Ends(ends) => {
                let mut picked = std::collections::BTreeMap::new();
                let mut by_state = StateCounts::default();
                let oldest = unread.clone().take(*ends);
                let newest = unread.clone().rev().take(*ends);
                let busy = unread.filter(|(_, state, _)| {
                    let seen = by_state.of_mut(state);
                    *seen += 1;
                    **state != MessageState::Pending && *seen <= *ends
                });
                for entry in oldest.chain(newest).chain(busy) {
                    picked.insert(entry.0, entry);
                }
                picked.into_values().collect()
            }
            MessageWindow::Page { after, limit } => unread
                .filter(|(name, _, _)| after.as_ref().is_none_or(|after| *name > after))
                .take(*limit)
                .collect(),
        }
    }
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
    /// When that line came: a reason said before evidence stopped being
    /// wanted speaks of a screen nobody has read since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_reason_at: Option<Time>,
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
    /// The adapter's own words for a hold its evidence decides (not idle,
    /// composer not empty or unknown): the one cause, in the one wording
    /// `ding status` shows beside the hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
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
    /// the rule of [`crate::escape`]: the name escaped exactly, the rest
    /// (which may quote adapter or PTY text) made displayable.
    pub fn describe(&self, now: Time) -> String {
        let state = match &self.state {
            MessageState::Pending => match &self.hold {
                Some(hold) => format!(
                    "held: {}{} ({}, {} ago)",
                    hold.reason,
                    hold.said
                        .as_deref()
                        .map(|said| format!(": {said}"))
                        .unwrap_or_default(),
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
            Some(ReleaseCause::Withheld) => {
                "; given back: a wake claimed it, and the screen read just before the wake no longer allowed it (a person's key, most likely)"
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
        let mut by_state = StateCounts::default();
        for message in &messages {
            by_state.count(&message.state);
        }
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
            unread: by_state.total(),
            pending: by_state.pending,
            by_state,
            hold: None,
            window: None,
            messages,
        }
    }
}

impl EngineStatus {
    /// The hold the pending files are under, and how many it holds: every
    /// pending file is under the engine's one hold, listed or not.
    pub fn held(&self) -> Option<(&HoldView, usize)> {
        self.hold
            .as_ref()
            .map(|hold| (hold, self.by_state.pending))
            .filter(|(_, count)| *count > 0)
    }

    /// The counts of every unread file, when `messages` lists only some.
    pub fn counting(mut self, by_state: StateCounts) -> EngineStatus {
        self.unread = by_state.total();
        self.pending = by_state.pending;
        self.by_state = by_state;
        self
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

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: usize) -> MessageName {
        MessageName::new(&format!("{n:06}.md")).expect("name")
    }

    /// Twenty files, FIFO by name; 7 in flight, 12 staged, the rest
    /// pending.
    fn unread() -> Vec<(MessageName, MessageState)> {
        (0..20)
            .map(|n| {
                let state = match n {
                    7 => MessageState::InFlight { request: 1 },
                    12 => MessageState::Staged {
                        incarnation: None,
                        confirmed: true,
                    },
                    _ => MessageState::Pending,
                };
                (name(n), state)
            })
            .collect()
    }

    fn listed(window: &MessageWindow, files: &[(MessageName, MessageState)]) -> Vec<usize> {
        window
            .pick(files.iter().map(|(name, state)| (name, state, ())))
            .into_iter()
            .map(|(name, _, ())| name.as_str()[..6].parse().expect("n"))
            .collect()
    }

    #[test]
    fn the_ends_are_the_oldest_the_newest_and_what_is_being_delivered() {
        let files = unread();
        assert_eq!(
            listed(&MessageWindow::Ends(2), &files),
            [0, 1, 7, 12, 18, 19]
        );
        assert_eq!(listed(&MessageWindow::Ends(0), &files), Vec::<usize>::new());
        assert_eq!(
            listed(&MessageWindow::Ends(50), &files).len(),
            20,
            "once each"
        );
        assert_eq!(listed(&MessageWindow::All, &files).len(), 20);
    }

    #[test]
    fn pages_follow_each_other_by_name() {
        let files = unread();
        let first = MessageWindow::Page {
            after: None,
            limit: 8,
        };
        assert_eq!(listed(&first, &files), (0..8).collect::<Vec<_>>());
        let next = MessageWindow::Page {
            after: Some(name(7)),
            limit: 8,
        };
        assert_eq!(listed(&next, &files), (8..16).collect::<Vec<_>>());
        // The file the cursor names was archived meanwhile: the page goes
        // on from where it was, nothing repeated or skipped.
        let without_seven: Vec<_> = files
            .iter()
            .filter(|(n, _)| *n != name(7))
            .cloned()
            .collect();
        assert_eq!(listed(&next, &without_seven), (8..16).collect::<Vec<_>>());
    }

    #[test]
    fn counts_are_by_state() {
        let mut counts = StateCounts::default();
        for (_, state) in unread() {
            counts.count(&state);
        }
        assert_eq!(
            (
                counts.pending,
                counts.in_flight,
                counts.staged,
                counts.hook_owned
            ),
            (18, 1, 1, 0)
        );
        assert_eq!(counts.total(), 20);
    }
}
