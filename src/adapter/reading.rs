//! What a provider reads on one screen.

use std::borrow::Cow;

use crate::core::protocol::{ActivityState, Composer};

/// What a provider reads on one screen: its own grammar's verdict, which
/// the kit stamps with the snapshot's revision. `Unknown` is a first-class
/// answer, and unknown holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    pub state: ActivityState,
    pub composer: Composer,
    /// Why, for people (the sidecar shows it, never interprets it).
    pub reason: Cow<'static, str>,
}

impl Reading {
    /// The reading of a screen the grammar does not recognize.
    pub fn unknown(reason: impl Into<Cow<'static, str>>) -> Reading {
        Reading {
            state: ActivityState::Unknown,
            composer: Composer::Unknown,
            reason: reason.into(),
        }
    }
}
