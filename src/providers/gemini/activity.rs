//! What Gemini CLI's hooks say it is doing, and how that combines with
//! what its screen shows into the evidence the adapter reports.
//!
//! On 0.61.0 the screen shows a running turn for the whole turn (the
//! spinner row stays while a reply streams: findings, "Screen grammar"),
//! and the hooks mark its edges: `BeforeAgent` starts it, `AfterAgent` ends
//! it, also after an Esc or Ctrl-C. A tool confirmation cancelled with Esc
//! fires no `AfterAgent`, so a hook's "a turn runs" can go stale. So:
//!
//! * a dialog or an unrecognized screen is never idle, whatever the hooks
//!   said;
//! * a busy screen is active (`child` while a tool runs);
//! * a ready screen is idle unless the last hook said a turn runs and the
//!   screen has looked ready for less than [`HOOK_GRACE`]: at a turn's
//!   start the screen lags the hook by a frame, and at its end nothing
//!   orders the ready screen before `AfterAgent`, whose own claim a typed
//!   notice would race. After the grace the screen decides.

use std::time::Duration;

use super::timing::HOOK_GRACE;
use crate::adapter::Reading;
use crate::adapter::hook_activity;
pub use crate::adapter::hook_activity::HookActivity;

// Gemini CLI's hooks, as `HookActivity` reads them: `SessionStart` and
// `AfterAgent` idle; `BeforeAgent`, `AfterTool` and `PreCompress` (`manual`)
// active; `BeforeTool` child; `Notification` `ToolPermission` awaiting the
// person (`hooks.rs`).

/// The evidence for one screen's reading, given what the hooks last said
/// and how long the screen has looked ready since: the kit's rule with
/// Gemini CLI's [`HOOK_GRACE`].
pub fn combine(screen: Reading, heard: HookActivity, ready_for: Duration) -> Reading {
    hook_activity::combine(screen, heard, ready_for, HOOK_GRACE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::screen::Screen;
    use crate::core::protocol::{ActivityState, Composer};

    fn reading(screen: Screen) -> Reading {
        screen.reading(Composer::Empty, "test")
    }

    #[test]
    fn a_dialog_is_never_idle_whatever_the_hooks_said() {
        for heard in [HookActivity::Idle, HookActivity::Unheard] {
            let read = combine(reading(Screen::Dialog), heard, Duration::from_secs(60));
            assert_eq!(read.state, ActivityState::Unknown);
        }
    }

    #[test]
    fn a_turn_edge_outweighs_a_ready_screen_for_the_grace_only() {
        let ready = || reading(Screen::Ready);
        let at = Duration::from_millis;
        assert_eq!(
            combine(ready(), HookActivity::Active, at(0)).state,
            ActivityState::Active
        );
        assert_eq!(
            combine(ready(), HookActivity::AwaitingHuman, HOOK_GRACE - at(1)).state,
            ActivityState::Active
        );
        // A confirmation cancelled with Esc fires no AfterAgent: after the
        // grace the screen decides.
        assert_eq!(
            combine(ready(), HookActivity::Active, HOOK_GRACE).state,
            ActivityState::Idle
        );
        assert_eq!(
            combine(ready(), HookActivity::Idle, at(0)).state,
            ActivityState::Idle
        );
        assert_eq!(
            combine(reading(Screen::Busy), HookActivity::Child, at(0)).state,
            ActivityState::Child
        );
        assert_eq!(
            combine(reading(Screen::Busy), HookActivity::Idle, at(0)).state,
            ActivityState::Active
        );
    }
}
