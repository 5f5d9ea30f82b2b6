//! What the evaluation's typist reads on a harness's screen and which keys
//! it presses there: the seam each harness room fills (`providers::*::pane`).
//!
//! These are a person's readings, used only to *drive* the workload (wait
//! until the composer is free before typing, see that a dialog is open,
//! answer it). They never decide a metric by themselves: the metrics come
//! from the model server's log, the PTY host's log and the marker files
//! (`evidence`). A dialog that the typist finds closed before it answered
//! is the one screen fact that enters a metric, and it is recorded as what
//! the typist saw.

use ding::pty::wire::Snapshot;

/// The kinds of dialog row 6 samples, one per trial, among those a
/// harness can be made to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialogKind {
    /// Permission to run a shell command (`mock:permission`).
    Command,
    /// Approval of a file change (`mock:edit`).
    FileEdit,
    /// A question with options the model asks (`mock:choice`).
    Choice,
    /// Approval of a plan the model proposes (`mock:plan`).
    PlanApproval,
    /// A picker the person opens with one of the harness's commands.
    Picker,
}

impl DialogKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DialogKind::Command => "command permission",
            DialogKind::FileEdit => "file edit",
            DialogKind::Choice => "choice menu",
            DialogKind::PlanApproval => "plan approval",
            DialogKind::Picker => "picker",
        }
    }
}

/// A permission or approval dialog on the screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dialog {
    /// The number of the option that is selected (`1.` is the harness's
    /// default, "yes"), if the screen shows one.
    pub selected: Option<u32>,
}

/// One harness's screen, read as a person would.
pub trait Pane: Sync {
    /// The harness takes input: its composer is on the screen, whatever it
    /// holds (a dialog is not the composer).
    fn ready(&self, screen: &Snapshot) -> bool;

    /// The composer is on the screen and holds nothing typed (a dim
    /// placeholder is nothing).
    fn empty_composer(&self, screen: &Snapshot) -> bool;

    /// A turn is in progress (the harness says it can be interrupted).
    fn busy(&self, screen: &Snapshot) -> bool;

    /// The permission or approval dialog, if one is open.
    fn dialog(&self, screen: &Snapshot) -> Option<Dialog>;

    /// The dialog the harness draws by itself at startup in a home
    /// prepared to ask (`Setup::ask_at_startup`), if it is open.
    fn startup_dialog(&self, screen: &Snapshot) -> Option<Dialog>;

    /// What a person types into this harness.
    fn keys(&self) -> &'static Keys;

    /// The keys that answer an open dialog: yes (its selected option) or
    /// no (cancel, close).
    fn answer(&self, consent: bool) -> &'static [u8] {
        if consent {
            self.keys().consent
        } else {
            self.keys().refuse
        }
    }

    /// The kinds of dialog this harness can be made to show, with the
    /// pinned version and the mock model: row 6 samples among them (the
    /// harness page says why any other is missing). `dialog` reads each.
    fn dialog_kinds(&self) -> &'static [DialogKind] {
        self.keys().dialog_kinds
    }

    /// The command a person types (and submits) to open a picker, for
    /// `DialogKind::Picker`.
    fn picker_command(&self) -> Option<&'static str> {
        self.keys().picker_command
    }

    /// The command a person types (and submits) first so that the harness
    /// can show a dialog of `kind` at all (entering plan mode), if any.
    fn setup_command(&self, kind: DialogKind) -> Option<&'static str> {
        let (command, kinds) = self.keys().setup_command?;
        kinds.contains(&kind).then_some(command)
    }

    /// The keys, one press each, with which a person answers the startup
    /// dialog and goes on to work; none for a harness that asks nothing at
    /// startup (row 1 then runs without the dialog).
    fn startup_keys(&self) -> &'static [&'static [u8]] {
        self.keys().startup_keys
    }

    /// The argv that resumes the most recent session in the same home and
    /// project, from the argv that starts a new one.
    fn resume(&self, argv: &[String]) -> Vec<String> {
        let words = |words: &[&str]| {
            words
                .iter()
                .map(|word| word.to_string())
                .collect::<Vec<_>>()
        };
        match self.keys().resume {
            Resume::Options(options) => [argv.to_vec(), words(options)].concat(),
            Resume::Subcommand(subcommand) => {
                let program = &argv[..1.min(argv.len())];
                [
                    program.to_vec(),
                    words(subcommand),
                    argv.iter().skip(1).cloned().collect(),
                ]
                .concat()
            }
        }
    }

    /// The text the typist types to compact the conversation.
    fn compact_command(&self) -> &'static str {
        self.keys().compact_command
    }

    /// The text the typist types to clear the conversation.
    fn clear_command(&self) -> &'static str {
        self.keys().clear_command
    }

    /// The keys with which a person empties a composer at idle that holds
    /// text they did not write (a prompt the harness put back after an
    /// interrupted turn).
    fn empty_composer_keys(&self) -> &'static [u8] {
        self.keys().empty_composer_keys
    }
}

/// What a person types into one harness, as data (each pane's `KEYS`).
pub struct Keys {
    /// The keys that answer an open dialog yes (its selected option).
    pub consent: &'static [u8],
    /// The keys that answer it no (cancel, close).
    pub refuse: &'static [u8],
    /// The kinds of dialog the harness can be made to show.
    pub dialog_kinds: &'static [DialogKind],
    /// The command that opens a picker.
    pub picker_command: Option<&'static str>,
    /// The command typed first for the harness to show these kinds.
    pub setup_command: Option<(&'static str, &'static [DialogKind])>,
    /// The keys that answer the startup dialog, one press each; none if
    /// the harness asks nothing at startup.
    pub startup_keys: &'static [&'static [u8]],
    /// How the argv resumes the most recent session.
    pub resume: Resume,
    pub compact_command: &'static str,
    pub clear_command: &'static str,
    /// The keys that empty a composer holding text (not an empty one).
    pub empty_composer_keys: &'static [u8],
}

/// How a harness is told to resume its most recent session.
pub enum Resume {
    /// These options after the argv.
    Options(&'static [&'static str]),
    /// This subcommand right after the program.
    Subcommand(&'static [&'static str]),
}

/// Everything a pane reads on one screen, at once (the pane tests compare
/// each capture's whole reading).
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    pub ready: bool,
    pub empty_composer: bool,
    pub busy: bool,
    pub dialog: Option<Dialog>,
}

#[cfg(test)]
pub fn read(pane: &dyn Pane, screen: &Snapshot) -> Reading {
    Reading {
        ready: pane.ready(screen),
        empty_composer: pane.empty_composer(screen),
        busy: pane.busy(screen),
        dialog: pane.dialog(screen),
    }
}

/// Idle as a person sees it: an empty composer, no turn running, no dialog.
pub fn idle(pane: &dyn Pane, screen: &Snapshot) -> bool {
    pane.empty_composer(screen) && !pane.busy(screen) && pane.dialog(screen).is_none()
}

/// The harness waits for the person, whatever its composer holds: no turn
/// running, no dialog.
pub fn waiting(pane: &dyn Pane, screen: &Snapshot) -> bool {
    pane.ready(screen) && !pane.busy(screen) && pane.dialog(screen).is_none()
}

/// Whether any row of `screen` contains `text`.
pub fn shows(screen: &Snapshot, text: &str) -> bool {
    screen.rows.iter().any(|row| row.contains(text))
}

/// What the harness rooms' pane tests share: their captured screens and
/// the expected readings.
#[cfg(test)]
pub mod fixtures {
    use super::{Dialog, Reading};
    use ding::pty::wire::Snapshot;

    /// The capture `fixtures/providers/DIR/NAME.json` (a PTY host
    /// `snapshot` reply, with a `_note`): the same captures the room's
    /// screen grammar is tested on, read here as a person reads them.
    pub fn capture(dir: &str, name: &str) -> Snapshot {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/providers")
            .join(dir)
            .join(format!("{name}.json"));
        let text = std::fs::read_to_string(&path).expect("capture");
        serde_json::from_str(&text).expect("a snapshot")
    }

    /// A screen read as: ready, empty composer, busy, and the dialog's
    /// selected option if a dialog is open.
    pub const fn reads(ready: bool, empty: bool, busy: bool, dialog: Option<u32>) -> Reading {
        Reading {
            ready,
            empty_composer: empty,
            busy,
            dialog: match dialog {
                Some(n) => Some(Dialog { selected: Some(n) }),
                None => None,
            },
        }
    }
}
