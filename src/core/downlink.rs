//! The downlink: what the sidecar tells its adapter, one JSON line at a time
//! on the adapter's stdin.
//!
//! Protocol v1 proper flows from the adapter to the sidecar. The adapter
//! also needs to hear three things back, and this is the one channel for all
//! of them (spec §2.4):
//!
//! * `pty`: the terminal identity the sidecar fences on, at start and on
//!   every change (a harness restart is a new incarnation), so an adapter
//!   never stamps a line with a guessed identity;
//! * `evidence`: whether activity evidence is wanted, that is whether unread
//!   work exists that terminal input could deliver. With nothing wanted, a
//!   well-behaved adapter sleeps and the whole agent makes no wake-ups;
//! * `claimed`: the answer to a `claim`, naming exactly the files the hook
//!   may inject.
//!
//! The engine emits these as [`Downlink`] values; the runtime writes
//! [`Downlink::to_line`]. Adapters read them back with [`Downlink::parse`].

use serde::{Deserialize, Serialize};

use super::identity::Identity;
use super::message::MessageName;

/// One line to the adapter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Downlink {
    /// The PTY host's identity, as the sidecar knows it; `null` while unknown.
    Pty { identity: Option<Identity> },
    /// Whether activity evidence is wanted now.
    Evidence { wanted: bool },
    /// The answer to the adapter's claim `claim`.
    Claimed(Claimed),
    /// DING pasted `text` as request `request` and waits to press Return.
    Typed { request: u64, text: String },
}

/// A claim that granted exactly `names`, for tests.
#[cfg(test)]
pub(crate) fn granting(names: &[&str]) -> Claimed {
    Claimed {
        claim: 1,
        granted: names
            .iter()
            .map(|name| crate::core::message::MessageName::new(name).expect("a name"))
            .collect(),
        refused: Vec::new(),
        refusal: None,
        not_granted: 0,
    }
}

/// Which files a claim may inject, and which it may not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claimed {
    pub claim: u64,
    /// Hook-owned from now on, oldest first: inject exactly these.
    pub granted: Vec<MessageName>,
    /// Named files the claim may not take, with why.
    pub refused: Vec<Refusal>,
    /// When the whole claim was refused, why (then `granted` is empty).
    pub refusal: Option<ClaimRefusal>,
    /// Unread files after the claim that it did not grant, so a hook can say
    /// how many more wait.
    pub not_granted: usize,
}

/// A named file a claim could not take.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub name: MessageName,
    pub state: RefusedState,
}

/// The state that keeps a file from a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefusedState {
    /// A transaction is typing it right now.
    InFlight,
    /// Already rung into this context (scope `pending` only).
    Staged,
    /// Already injected into this context (scope `pending` only).
    HookOwned,
    /// Not handed to the harness yet (scope `delivered` only): the idle
    /// path delivers it.
    Pending,
    /// Its name did not fit the claim's `nameBytes` after the files before
    /// it; claim it again.
    OverBudget,
}

/// Why a whole claim was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimRefusal {
    /// The sidecar does not know the terminal's identity yet.
    PtyUnknown,
    /// The claim names another terminal, start or launch than the current one.
    IdentityMismatch,
    /// The claim's sequence did not increase.
    StaleSequence,
}

#[derive(Serialize)]
struct Versioned<'a> {
    v: u64,
    #[serde(flatten)]
    line: &'a Downlink,
}

impl Downlink {
    /// The line, without the newline. Field names are camelCase; `v` is 1.
    pub fn to_line(&self) -> String {
        // Serializing these plain types cannot fail.
        serde_json::to_string(&Versioned { v: 1, line: self }).unwrap_or_default()
    }

    /// Reads one line back (adapters use this). Unknown kinds and versions
    /// are errors, so an adapter can log and ignore them. `kind` must be
    /// one of the names: serde alone would also take a variant's index.
    pub fn parse(line: &str) -> Result<Downlink, String> {
        let value: serde_json::Value = serde_json::from_str(line).map_err(|err| err.to_string())?;
        let version = &value["v"];
        if version.as_u64() != Some(1) {
            return Err(format!("unknown downlink version {version}"));
        }
        if !value["kind"].is_string() {
            return Err(format!("downlink kind {} is not a name", value["kind"]));
        }
        serde_json::from_value(value).map_err(|err| err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_downlink_round_trips() {
        let lines = [
            Downlink::Pty { identity: None },
            Downlink::Pty {
                identity: Some(Identity {
                    session: "host.worker".into(),
                    incarnation: "i1".into(),
                    generation: "sha256:ab".into(),
                }),
            },
            Downlink::Evidence { wanted: true },
            Downlink::Typed {
                request: 4,
                text: "[ding] 1 unread inbox message".into(),
            },
            Downlink::Claimed(Claimed {
                claim: 7,
                granted: vec![MessageName::new("a\n.md").unwrap()],
                refused: vec![Refusal {
                    name: MessageName::new("b.md").unwrap(),
                    state: RefusedState::Staged,
                }],
                refusal: None,
                not_granted: 3,
            }),
        ];
        for line in lines {
            let text = line.to_line();
            assert!(!text.contains('\n'));
            assert_eq!(Downlink::parse(&text), Ok(line));
        }
        assert_eq!(
            Downlink::Evidence { wanted: false }.to_line(),
            r#"{"v":1,"kind":"evidence","wanted":false}"#
        );
    }

    /// serde would read a kind given as a variant's index (`"kind":0` as
    /// `pty`, through the flattened envelope; found by AFL++): a kind is
    /// one of the names, as is the version's number.
    #[test]
    fn a_kind_is_one_of_the_names() {
        for line in [
            r#"{"v":1,"kind":0}"#,
            r#"{"v":1,"kind":1,"wanted":true}"#,
            r#"{"v":1,"kind":null,"identity":null}"#,
            r#"{"v":1.0,"kind":"evidence","wanted":true}"#,
            r#"["v","pty"]"#,
        ] {
            assert!(Downlink::parse(line).is_err(), "accepted {line}");
        }
        assert_eq!(
            Downlink::parse(r#"{"v":1,"kind":"evidence","wanted":true,"new":1}"#),
            Ok(Downlink::Evidence { wanted: true })
        );
    }
}
