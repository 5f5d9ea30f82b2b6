//! The identity fence: which terminal, which start of the harness, which launch.
//!
//! Every adapter event and every conditional PTY send carries all three parts.
//! A lease is only good for the exact identity it was granted under, so a
//! restarted harness (new incarnation) or a relaunch with a changed spec (new
//! generation) can never receive input authorized by evidence about the old one.

use std::fmt;

use serde::Serialize;

/// `(session, incarnation, generation)` as reported by the PTY host and
/// stamped on adapter events. All three are opaque strings to the engine; it
/// only ever compares them for equality.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Identity {
    /// A stable name for the agent's terminal, such as `host.worker`.
    pub session: String,
    /// A fresh random value for each start of the harness process.
    pub incarnation: String,
    /// `sha256:<hex>` of the canonical launch spec.
    pub generation: String,
}

/// Which part of two identities differs first, in fence order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdentityPart {
    Session,
    Incarnation,
    Generation,
}

impl Identity {
    /// The first part in which `self` differs from `other`, if any.
    pub fn mismatch(&self, other: &Identity) -> Option<IdentityPart> {
        if self.session != other.session {
            Some(IdentityPart::Session)
        } else if self.incarnation != other.incarnation {
            Some(IdentityPart::Incarnation)
        } else if self.generation != other.generation {
            Some(IdentityPart::Generation)
        } else {
            None
        }
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}",
            self.session, self.incarnation, self.generation
        )
    }
}

impl fmt::Display for IdentityPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IdentityPart::Session => "session",
            IdentityPart::Incarnation => "incarnation",
            IdentityPart::Generation => "generation",
        })
    }
}
