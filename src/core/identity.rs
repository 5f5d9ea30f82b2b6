//! The identity fence: which terminal, which start of the harness, which launch.
//!
//! Every adapter event and every conditional PTY send carries all three parts.
//! A lease is only good for the exact identity it was granted under, so a
//! restarted harness (new incarnation) or a relaunch with a changed spec (new
//! generation) can never receive input authorized by evidence about the old one.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

/// `(session, incarnation, generation)` as reported by the PTY host and
/// stamped on adapter events. All three are opaque strings to the engine; it
/// only ever compares them for equality.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Identity {
    /// A stable name for the agent's terminal, such as `host.worker`.
    pub session: String,
    /// A fresh random value for each start of the harness process.
    pub incarnation: String,
    /// `sha256:<hex>` of the canonical launch spec.
    pub generation: String,
}

/// Which part of two identities differs first, in fence order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdentityPart {
    Session,
    Incarnation,
    Generation,
}

/// The identity an adapter event claims, borrowed from the line it came in
/// on: checking an event against the known identity allocates nothing, and
/// only an identity that is kept (a lease) is copied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClaimedIdentity<'a> {
    pub session: Cow<'a, str>,
    pub incarnation: Cow<'a, str>,
    pub generation: Cow<'a, str>,
}

impl Identity {
    /// The first part in which `self` differs from `other`, if any.
    pub fn mismatch(&self, other: &Identity) -> Option<IdentityPart> {
        first_difference(self.parts(), other.parts())
    }

    fn parts(&self) -> [&str; 3] {
        [&self.session, &self.incarnation, &self.generation]
    }
}

impl ClaimedIdentity<'_> {
    /// The first part in which the claim differs from `known`, if any.
    pub fn mismatch(&self, known: &Identity) -> Option<IdentityPart> {
        let claimed = [&*self.session, &*self.incarnation, &*self.generation];
        first_difference(claimed, known.parts())
    }

    pub fn into_owned(self) -> Identity {
        Identity {
            session: self.session.into_owned(),
            incarnation: self.incarnation.into_owned(),
            generation: self.generation.into_owned(),
        }
    }
}

/// Parts are compared in fence order: session, incarnation, generation.
/// Both checks come here: a lease's identity against the terminal's, and
/// the identity an adapter line claims (a hook's claim, its receipt).
fn first_difference(a: [&str; 3], b: [&str; 3]) -> Option<IdentityPart> {
    const PARTS: [IdentityPart; 3] = [
        IdentityPart::Session,
        IdentityPart::Incarnation,
        IdentityPart::Generation,
    ];
    // The planted defect: the incarnation and the generation unread.
    let parts = if crate::mutation::planted(crate::mutation::Mutation::IdentityBySessionAlone) {
        1
    } else {
        3
    };
    (0..parts).find(|&i| a[i] != b[i]).map(|i| PARTS[i])
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
