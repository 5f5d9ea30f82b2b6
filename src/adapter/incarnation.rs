//! Which harness incarnation a provider's memory is about, and the
//! identity the PTY host gives a harness's environment.

use crate::core::identity::Identity;

/// The incarnation of the harness a provider's memory is about. A hook
/// can know of a restart before the sidecar's downlink says so (its own
/// identity comes from the new harness's environment), so both tell the
/// provider, and only the first of them is news.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Incarnation(Option<String>);

impl Incarnation {
    /// Notes `incarnation`; whether it differs from the one noted before
    /// (the provider then forgets what it heard of the old one).
    pub fn changed_to(&mut self, incarnation: Option<&str>) -> bool {
        if self.0.as_deref() == incarnation {
            return false;
        }
        self.0 = incarnation.map(String::from);
        true
    }
}

/// The identity in `DING_SESSION`, `DING_INCARNATION`, `DING_GENERATION`,
/// if all three are set and non-empty (inside the harness, the PTY host sets
/// them; an adapter gets them when the sidecar knew them at spawn).
pub fn identity_from_env() -> Option<Identity> {
    let get = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    Some(Identity {
        session: get("DING_SESSION")?,
        incarnation: get("DING_INCARNATION")?,
        generation: get("DING_GENERATION")?,
    })
}
