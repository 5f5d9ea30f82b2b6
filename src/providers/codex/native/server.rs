//! Where the launcher's connection to its app-server stands, and what a
//! lost app-server means: started again, or the TUI ended. Pure data and
//! one decision; the machine (`mod.rs`) moves between the states.

use crate::core::time::Time;

/// The launcher's link to its app-server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// Connecting to the app-server started before the TUI: one try (it
    /// listened already), else the path is unavailable.
    Connecting,
    /// Connected: the conversation runs.
    Open,
    /// The connection closed (`closed`: how, as the transport said); how
    /// the app-server ended is awaited a moment (`Timer::ServerGone`).
    Lost { closed: String },
    /// An app-server started again on the same socket (`why`: the loss, as
    /// told), connected to every `LISTEN_POLL` until `until`.
    Restarting { why: String, until: Time },
    /// Off for good: unavailable here, or the TUI was ended.
    Off,
    /// The TUI exited: the answers to the deletes of DING's leftovers are
    /// awaited a moment (`Timer::Exit`).
    Exiting,
    /// Nothing more to do: the launcher exits.
    Done,
}

impl Link {
    /// Whether the adapter's answers still count: not once the path is off
    /// or the TUI has gone.
    pub fn answers_count(&self) -> bool {
        !matches!(self, Link::Off | Link::Exiting | Link::Done)
    }
}

/// What the launcher does when the app-server died under the TUI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Start it again on the same socket: the TUI reconnects to it.
    Restart,
    /// End the TUI (the harness exits), saying why.
    EndTheTui(String),
}

/// The launcher's choice once its app-server is gone (`why`), the thread
/// having had a turn or not, after `restarts` restarts already. Only a
/// thread with a turn has a rollout a new app-server can load: a fresh one
/// stays read-only for good (findings §12), and so does a TUI whose server
/// keeps dying.
pub fn after_server_lost(why: &str, had_turn: bool, restarts: u32, most: u32) -> Recovery {
    if !had_turn {
        return Recovery::EndTheTui(format!(
            "{why}; the conversation had no turn yet, so no new app-server can resume it: ending the TUI"
        ));
    }
    if restarts >= most {
        return Recovery::EndTheTui(format!(
            "{why}; it was started again {restarts} times already: ending the TUI"
        ));
    }
    Recovery::Restart
}
