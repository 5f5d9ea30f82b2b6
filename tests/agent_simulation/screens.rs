//! The harness as a hostile world (issue 38, item 3): what a real
//! harness's screen does that no hook tells, laid over any harness model,
//! on a fraction of seeds drawn from a random stream of this file's own
//! ([`Plan::of`]: a seed with nothing on runs exactly as before).
//!
//! * **Dialogs no hook announces**, drawn with real captures: a
//!   folder-trust dialog at startup (Claude Code's `trust-folder-dialog`,
//!   `No, exit` preselected, so a person presses Down then Return; Gemini
//!   CLI's `startup-trust-folder`, answered `1`), before which the harness
//!   runs no hook (Gemini runs hooks only in a trusted folder; Claude Code
//!   starts its session once trusted); pickers a person opens by typing
//!   the command whole at the idle, empty composer and dismisses with Esc
//!   (Claude Code's `/permissions` and `/resume`, Gemini CLI's `/resume`
//!   and `/model`), and Gemini's rewind menu, which Esc Esc opens after a
//!   pause in which nothing is drawn (`rewind-after-esc-esc`); a tool
//!   approval whose `Notification` hook comes late (while it still waits)
//!   or never, and Gemini's drawn in a box above the composer (a model
//!   screen: no capture shows one); and on the
//!   demo agent, a confirmation menu drawn after the turn-end hook fired
//!   (a harness that ends its turn, then asks).
//! * **A paste that arrives changed**: a character of the bracketed paste
//!   lost on its way in, so that the composer holds a notice that is not
//!   DING's (no provider's documentation names such a loss; it stands for
//!   any change between the bytes DING wrote and the composer a harness
//!   draws, which the Return's confirmation exists to catch); and, as
//!   documented, a long paste drawn as a placeholder: with files named as
//!   senders name them (`m0001-from-the-reviewer-….md`, [`LONG_NAME`]), a
//!   notice of several is over 500 characters, which Gemini CLI draws
//!   folded, `[Pasted Text: N chars]` (`paste-900chars`).
//! * **A screen drawn late or in pieces**: the harness's state changes
//!   when it reads a key, and its screen is drawn 7 to 85 ms later (Claude
//!   Code's measured key-to-draw times, `docs/providers/draw-times.md`),
//!   sometimes in two chunks, the top half of the frame first; Codex
//!   answers every key at once with an output that changes nothing and
//!   draws it some 20 ms later, as measured. A snapshot taken in between
//!   shows the old or half screen.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use ding::adapter::HookAnswer;
use ding::core::transport::{PASTE_END, PASTE_START};
use ding::pty::wire::Snapshot;

use crate::harness::{Happened, HarnessModel, View, captured};
use crate::support::rng::Rng;
use crate::world::Harness;

/// This file's random stream: `seed ^ STREAM`.
const STREAM: u64 = 0x05c2_ee45_d1a1_0938;

/// What the seed's harness does to its screens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// A folder-trust dialog at the first start.
    pub trust_at_start: bool,
    /// The person opens pickers at the idle, empty composer.
    pub pickers: bool,
    /// What a key changes is drawn late, or in two chunks.
    pub late_draws: bool,
    /// A paste may lose a character on its way in.
    pub changed_pastes: bool,
    /// A tool approval's `Notification` hook comes late or never.
    pub late_notifications: bool,
    /// The demo agent's confirmation menu comes after its turn-end hook.
    pub menu_after_its_hook: bool,
    /// Gemini CLI draws its tool confirmation in a box above the composer
    /// ([`gemini_dialog_above_the_composer`]), not in its place.
    pub dialog_above: bool,
    /// The files are named as senders name them, long: a notice of many
    /// is longer than 500 characters, which Gemini CLI draws folded.
    pub long_names: bool,
}

impl Plan {
    pub fn of(harness: Harness, seed: u64) -> Plan {
        let mut rng = Rng(seed ^ STREAM);
        let (trust, pickers, late, changed, notifications, menu) = (
            rng.chance(10),
            rng.chance(15),
            rng.chance(30),
            rng.chance(10),
            rng.chance(15),
            rng.chance(30),
        );
        let dialogs = matches!(harness, Harness::Claude | Harness::Gemini);
        Plan {
            trust_at_start: trust && dialogs,
            pickers: pickers && dialogs,
            late_draws: late,
            changed_pastes: changed,
            late_notifications: notifications && dialogs,
            menu_after_its_hook: menu && harness == Harness::Demo,
            // Drawn last: the draws before it are the seed's as they were.
            dialog_above: rng.chance(50) && harness == Harness::Gemini,
            long_names: rng.chance(20),
        }
    }

    fn any(self) -> bool {
        self != Plan::default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Answered by the keys given; the harness's session starts then.
    Trust(&'static [u8]),
    /// Dismissed with Esc (or taken with Return).
    Picker,
}

/// A dialog no hook announced, open now.
#[derive(Clone, Copy, Debug)]
struct Overlay {
    capture: &'static str,
    kind: Kind,
}

/// The captures each harness's unannounced dialogs are drawn with: its
/// trust dialog and the keys a person trusts with, its pickers by the
/// command that opens them, and its rewind menu (Esc Esc).
struct Dialogs {
    dir: &'static str,
    trust: (&'static str, &'static [u8]),
    pickers: &'static [(&'static str, &'static str)],
    rewind: Option<&'static str>,
}

const CLAUDE: Dialogs = Dialogs {
    dir: "fixtures/providers/claude/screens",
    // `No, exit` is preselected: Down, then Return.
    trust: ("trust-folder-dialog", b"\x1b[B\r"),
    pickers: &[
        ("/permissions", "eval-picker-permissions"),
        ("/resume", "eval-picker-resume"),
    ],
    rewind: None,
};

const GEMINI: Dialogs = Dialogs {
    dir: "fixtures/providers/gemini/snapshots",
    trust: ("startup-trust-folder", b"1"),
    pickers: &[("/resume", "picker-resume"), ("/model", "picker-model")],
    rewind: Some("rewind-after-esc-esc"),
};

fn dialogs(harness: Harness) -> Option<&'static Dialogs> {
    match harness {
        Harness::Claude => Some(&CLAUDE),
        Harness::Gemini => Some(&GEMINI),
        Harness::Demo | Harness::Codex | Harness::OpenCode => None,
    }
}

/// Every capture an unannounced dialog of `harness` is drawn with.
pub fn dialog_captures(harness: Harness) -> Vec<&'static str> {
    dialogs(harness).map_or_else(Vec::new, |dialogs| {
        let mut names = vec![dialogs.trust.0];
        names.extend(dialogs.pickers.iter().map(|(_, capture)| *capture));
        names.extend(dialogs.rewind);
        names
    })
}

fn screens(harness: Harness) -> &'static BTreeMap<&'static str, Snapshot> {
    static CLAUDE_READ: OnceLock<BTreeMap<&'static str, Snapshot>> = OnceLock::new();
    static GEMINI_READ: OnceLock<BTreeMap<&'static str, Snapshot>> = OnceLock::new();
    static NONE: OnceLock<BTreeMap<&'static str, Snapshot>> = OnceLock::new();
    let read = |dialogs: &Dialogs| captured(dialogs.dir, &dialog_captures(harness));
    match harness {
        Harness::Claude => CLAUDE_READ.get_or_init(|| read(&CLAUDE)),
        Harness::Gemini => GEMINI_READ.get_or_init(|| read(&GEMINI)),
        Harness::Demo | Harness::Codex | Harness::OpenCode => NONE.get_or_init(BTreeMap::new),
    }
}

/// A model screen, for the one branch of Gemini CLI's grammar that no
/// capture reaches (`dialog_above` in `src/providers/gemini/screen.rs`): a
/// tool confirmation in a box above the composer, which stays drawn below
/// it (`idle-empty` with the box in the rows of its tips), its selected
/// option `● 1.` as the captured dialogs draw theirs
/// (`dialog-shell.json`).
pub fn gemini_dialog_above_the_composer() -> &'static Snapshot {
    static DRAWN: OnceLock<Snapshot> = OnceLock::new();
    DRAWN.get_or_init(|| {
        let mut snapshot = captured("fixtures/providers/gemini/snapshots", &["idle-empty"])
            .remove("idle-empty")
            .expect("the capture");
        let width = usize::from(snapshot.size.cols) - 2;
        let inside = |text: &str| format!("\u{2502}{text:<width$}\u{2502}");
        let rule = "\u{2500}".repeat(width);
        let rows = [
            format!("\u{256d}{rule}\u{256e}"),
            inside(" ? Shell echo probe"),
            inside(" Allow execution of: 'echo'?"),
            inside(""),
            inside(" \u{25cf} 1. Allow once"),
            inside("   2. Allow for this session"),
            format!("\u{2570}{rule}\u{256f}"),
        ];
        for (at, row) in rows.into_iter().enumerate() {
            snapshot.rows[7 + at] = row;
        }
        snapshot.runs.retain(|run| !(7..14).contains(&run.row));
        snapshot
    })
}

/// What a long file name adds after its number (`m0001-….md`).
pub const LONG_NAME: &str = "from-the-reviewer-about-round-two-of-the-simulation";

/// Gemini CLI's screen with a paste of more than 500 characters in the
/// composer: folded into `[Pasted Text: N chars]` (the capture
/// `paste-900chars`, its count made `chars`), whatever follows it typed
/// after the placeholder.
fn gemini_folded_paste(chars: usize, after: &str) -> Snapshot {
    static CAPTURE: OnceLock<Snapshot> = OnceLock::new();
    let capture = CAPTURE.get_or_init(|| {
        captured("fixtures/providers/gemini/snapshots", &["paste-900chars"])
            .remove("paste-900chars")
            .expect("the capture")
    });
    let mut snapshot = capture.clone();
    let row = usize::from(snapshot.cursor.row);
    let text = format!("> [Pasted Text: {chars} chars]{after}");
    let cols = usize::from(snapshot.size.cols);
    let cursor = (1 + text.chars().count()).min(cols - 1);
    snapshot.rows[row] = format!(" {text}");
    let at = |col: usize| u16::try_from(col).unwrap_or(0);
    // The capture's runs of that row: the block's grey, the prompt and
    // placeholder in the accent, the cursor cell, the grey after it.
    snapshot.runs.retain_mut(|run| {
        if usize::from(run.row) != row {
            return true;
        }
        match run.col {
            1 => run.text = text.clone(),
            _ if run.inverse => run.col = at(cursor),
            0 => {}
            _ => return false,
        }
        true
    });
    snapshot.cursor.col = at(cursor);
    snapshot
}

/// A harness model with the seed's hostile screens laid over it.
pub struct HostileScreens {
    inner: Box<dyn HarnessModel>,
    harness: Harness,
    plan: Plan,
    rng: Rng,
    overlay: Option<Overlay>,
    /// The session's start waits for the trust dialog's answer.
    start_deferred: bool,
    /// The screen as last drawn, while what the harness did since is not
    /// drawn yet.
    shown: Option<Snapshot>,
    /// When the rest is drawn; `halves`: its top half first.
    draw_at: Option<u64>,
    halves: bool,
    /// `Notification` hooks still to come, and when.
    notifications: Vec<(u64, Happened)>,
    /// The demo's menu was announced by a turn-end hook of its own: the
    /// turn's own turn-end hook, after the menu, is not run again.
    menu_announced: bool,
    swallow_turn_end: bool,
    /// DING's notice as it arrived changed, last.
    changed: Option<String>,
    /// The last paste Gemini CLI drew folded (over 500 characters).
    long_paste: Option<String>,
}

impl HostileScreens {
    /// `inner`, the seed's harness; `first`: its first start (a trust
    /// dialog, once answered, is not asked again).
    pub fn new(
        inner: Box<dyn HarnessModel>,
        harness: Harness,
        plan: Plan,
        seed: u64,
        first: bool,
    ) -> HostileScreens {
        let overlay = (plan.trust_at_start && first)
            .then(|| dialogs(harness))
            .flatten()
            .map(|dialogs| Overlay {
                capture: dialogs.trust.0,
                kind: Kind::Trust(dialogs.trust.1),
            });
        HostileScreens {
            inner,
            harness,
            plan,
            rng: Rng(seed ^ STREAM ^ 0xd1a1),
            overlay,
            start_deferred: false,
            shown: None,
            draw_at: None,
            halves: false,
            notifications: Vec::new(),
            menu_announced: false,
            swallow_turn_end: false,
            changed: None,
            long_paste: None,
        }
    }

    /// What the harness would draw now.
    fn screen_now(&mut self, revision: u64) -> Snapshot {
        let mut snapshot = match self.overlay {
            Some(overlay) => screens(self.harness)[overlay.capture].clone(),
            None if self.plan.dialog_above && self.inner.view() == View::Dialog => {
                gemini_dialog_above_the_composer().clone()
            }
            None if let (Some(paste), View::Idle { composer }) =
                (&self.long_paste, self.inner.view())
                && let Some(after) = composer.strip_prefix(paste.as_str()) =>
            {
                gemini_folded_paste(paste.chars().count(), after)
            }
            None => return self.inner.snapshot(revision),
        };
        snapshot.revision = revision;
        snapshot
    }

    /// What a key changed is drawn: now, or (late draws) some tens of ms
    /// later, the screen meanwhile as it was (`before`).
    fn key_drawn(
        &mut self,
        before: Option<Snapshot>,
        now: u64,
        pause: Option<u64>,
    ) -> Vec<Happened> {
        let Some(before) = before else {
            return vec![Happened::Drew];
        };
        if self.shown.is_none() {
            self.shown = Some(before);
        }
        if self.draw_at.is_none() {
            let delay = pause.unwrap_or_else(|| self.rng.between(7, 85));
            self.draw_at = Some(now + delay);
            self.halves = self.harness != Harness::Codex && self.rng.chance(30);
        }
        if self.harness == Harness::Codex {
            // Codex answers the key at once with an output that changes
            // nothing, and draws it later.
            vec![Happened::Drew]
        } else {
            Vec::new()
        }
    }

    /// The screen before a key, if it may be drawn late.
    fn before(&mut self) -> Option<Snapshot> {
        self.plan
            .late_draws
            .then(|| self.shown.clone().unwrap_or_else(|| self.screen_now(0)))
    }

    /// What the harness did on its own (a timer, a hook's answer): a
    /// frame it draws shows everything; its hooks as the plan has them.
    fn own(&mut self, happened: Vec<Happened>, now: u64) -> Vec<Happened> {
        if !self.plan.any() {
            return happened;
        }
        let mut out = Vec::new();
        for happening in happened {
            match happening {
                Happened::Drew => {
                    self.shown = None;
                    self.draw_at = None;
                    out.push(Happened::Drew);
                }
                Happened::Hook { event, .. }
                    if event == "Notification" && self.plan.late_notifications =>
                {
                    // A tool approval's notification: late, or never.
                    if self.rng.chance(50) {
                        let at = now + self.rng.between(300, 5_000);
                        self.notifications.push((at, happening));
                        self.notifications.sort_by_key(|(at, _)| *at);
                    }
                }
                Happened::Hook { event, .. } if event == "turn-end" && self.swallow_turn_end => {
                    self.swallow_turn_end = false;
                }
                other => out.push(other),
            }
        }
        if self.plan.menu_after_its_hook {
            let menu = self.inner.view() == View::Dialog;
            if menu && !self.menu_announced {
                self.menu_announced = true;
                self.swallow_turn_end = true;
                out.push(Happened::Hook {
                    event: "turn-end",
                    payload: serde_json::Value::Null,
                    call: 0,
                });
            }
            if !menu {
                self.menu_announced = false;
            }
        }
        out
    }

    /// `bytes` as the harness reads them: a paste may lose a character
    /// (of its frame's words, never of `[ding]` or a file's name, so that
    /// a person who sends it on still names every file), told to the
    /// world as the text the composer now holds.
    fn arrived(&mut self, bytes: &[u8]) -> (Vec<u8>, Option<Happened>) {
        let unchanged = (bytes.to_vec(), None);
        if !self.plan.changed_pastes {
            return unchanged;
        }
        let Some(text) = bytes
            .strip_prefix(PASTE_START)
            .and_then(|rest| rest.strip_suffix(PASTE_END))
        else {
            return unchanged;
        };
        let text = String::from_utf8_lossy(text).into_owned();
        let words = "unread inbox";
        let Some(from) = text.find(words) else {
            return unchanged;
        };
        if !self.rng.chance(30) {
            return unchanged;
        }
        let lost = from + self.rng.below(words.len() as u64) as usize;
        let mut changed = text;
        changed.remove(lost);
        self.changed = Some(changed.clone());
        let bytes = [PASTE_START, changed.as_bytes(), PASTE_END].concat();
        (bytes, Some(Happened::PasteChanged(changed)))
    }

    fn idle_empty(&self) -> bool {
        self.overlay.is_none()
            && self.inner.view()
                == View::Idle {
                    composer: String::new(),
                }
    }

    fn open(&mut self, capture: &'static str) {
        self.overlay = Some(Overlay {
            capture,
            kind: Kind::Picker,
        });
    }
}

impl HarnessModel for HostileScreens {
    fn provider(&self) -> &'static str {
        self.inner.provider()
    }

    fn has_native_idle_path(&self) -> bool {
        self.inner.has_native_idle_path()
    }

    fn started(&mut self, now_ms: u64) -> Vec<Happened> {
        if matches!(
            self.overlay,
            Some(Overlay {
                kind: Kind::Trust(_),
                ..
            })
        ) {
            // No hook runs before the folder is trusted.
            self.start_deferred = true;
            return Vec::new();
        }
        let happened = self.inner.started(now_ms);
        self.own(happened, now_ms)
    }

    fn hook_timeout_ms(&self, event: &str) -> u64 {
        self.inner.hook_timeout_ms(event)
    }

    fn read_input(&mut self, bytes: &[u8], now_ms: u64) -> Vec<Happened> {
        if !self.plan.any() {
            return self.inner.read_input(bytes, now_ms);
        }
        let before = self.before();
        if let Some(overlay) = self.overlay {
            let answered = match overlay.kind {
                Kind::Trust(_) => bytes.contains(&b'\r') || bytes.contains(&b'1'),
                Kind::Picker => bytes.contains(&b'\r') || bytes.contains(&0x1b),
            };
            if !answered {
                // The dialog takes no text: a paste into it is lost.
                return Vec::new();
            }
            self.overlay = None;
            let mut out = Vec::new();
            if std::mem::take(&mut self.start_deferred) {
                let happened = self.inner.started(now_ms);
                out.extend(self.own(happened, now_ms));
            }
            out.extend(self.key_drawn(before, now_ms, None));
            return out;
        }
        if self.plan.pickers && self.idle_empty() {
            let dialogs = dialogs(self.harness).expect("pickers only where drawn");
            let picker = dialogs
                .pickers
                .iter()
                .find(|(command, _)| bytes == [command.as_bytes(), b"\r"].concat());
            if let Some((_, capture)) = picker {
                self.open(capture);
                return self.key_drawn(before, now_ms, None);
            }
            if let Some(rewind) = dialogs.rewind
                && bytes == b"\x1b\x1b"
            {
                // Esc Esc: the rewind menu, after a pause that draws
                // nothing.
                let before = before.unwrap_or_else(|| self.inner.snapshot(0));
                self.open(rewind);
                let pause = self.rng.between(40, 150);
                return self.key_drawn(Some(before), now_ms, Some(pause));
            }
        }
        let (bytes, changed) = self.arrived(bytes);
        if self.harness == Harness::Gemini
            && let Some(text) = bytes
                .strip_prefix(PASTE_START)
                .and_then(|rest| rest.strip_suffix(PASTE_END))
        {
            // Over 500 characters (or 5 lines), Gemini CLI folds a paste.
            let text = String::from_utf8_lossy(text).into_owned();
            let folded = text.chars().count() > 500 || text.lines().count() > 5;
            self.long_paste = folded.then_some(text);
        }
        let happened: Vec<Happened> = changed
            .into_iter()
            .chain(self.inner.read_input(&bytes, now_ms))
            .collect();
        if before.is_none() {
            return self.own(happened, now_ms);
        }
        let drew = happened
            .iter()
            .any(|happening| matches!(happening, Happened::Drew));
        let rest = happened
            .into_iter()
            .filter(|happening| !matches!(happening, Happened::Drew))
            .collect();
        let mut out = self.own(rest, now_ms);
        if drew {
            out.extend(self.key_drawn(before, now_ms, None));
        }
        out
    }

    fn next_deadline_ms(&self) -> Option<u64> {
        [
            self.inner.next_deadline_ms(),
            self.draw_at,
            self.notifications.first().map(|(at, _)| *at),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn handle_timeout(&mut self, now_ms: u64) -> Vec<Happened> {
        let mut out = Vec::new();
        if self.draw_at.is_some_and(|at| at <= now_ms) {
            if std::mem::take(&mut self.halves) {
                // The top half of the frame first, the rest a moment later.
                let new = self.screen_now(0);
                if let Some(old) = self.shown.as_mut()
                    && old.size == new.size
                {
                    let half = new.rows.len() / 2;
                    for (row, text) in new.rows.iter().enumerate().take(half) {
                        old.rows[row] = text.clone();
                    }
                    old.runs.retain(|run| usize::from(run.row) >= half);
                    old.runs.extend(
                        new.runs
                            .iter()
                            .filter(|run| usize::from(run.row) < half)
                            .cloned(),
                    );
                }
                self.draw_at = Some(now_ms + self.rng.between(3, 20));
            } else {
                self.shown = None;
                self.draw_at = None;
            }
            out.push(Happened::Drew);
        }
        while self
            .notifications
            .first()
            .is_some_and(|(at, _)| *at <= now_ms)
        {
            // It tells of a prompt still waiting, or of nothing at all.
            let notification = self.notifications.remove(0).1;
            if self.inner.view() == View::Dialog {
                out.push(notification);
            }
        }
        if self.inner.next_deadline_ms().is_some_and(|at| at <= now_ms) {
            let happened = self.inner.handle_timeout(now_ms);
            out.extend(self.own(happened, now_ms));
        }
        out
    }

    fn hook_answered(
        &mut self,
        event: &'static str,
        call: u64,
        answer: Option<&HookAnswer>,
        now_ms: u64,
    ) -> Vec<Happened> {
        let happened = self.inner.hook_answered(event, call, answer, now_ms);
        self.own(happened, now_ms)
    }

    fn copies_reaching_model(&self, event: &str, answer: &HookAnswer) -> usize {
        self.inner.copies_reaching_model(event, answer)
    }

    fn queued_before_a_clears_first_prompt(&self) -> Vec<String> {
        self.inner.queued_before_a_clears_first_prompt()
    }

    fn commands(&self) -> &'static [&'static str] {
        self.inner.commands()
    }

    fn asks_at_a_turns_end(&self, event: &str) -> bool {
        self.inner.asks_at_a_turns_end(event)
    }

    fn a_request_may_wait_for(&self, event: &str) -> bool {
        self.inner.a_request_may_wait_for(event)
    }

    fn snapshot(&mut self, revision: u64) -> Snapshot {
        match self.shown.clone() {
            Some(mut shown) => {
                shown.revision = revision;
                shown
            }
            None => self.screen_now(revision),
        }
    }

    fn view(&self) -> View {
        if self.overlay.is_some() {
            return View::Dialog;
        }
        self.inner.view()
    }

    fn is_quiet(&self) -> bool {
        self.overlay.is_none() && self.inner.is_quiet()
    }

    /// A dialog no hook announced holds a delivery too.
    fn takes_a_delivery_now(&self) -> bool {
        self.overlay.is_none() && self.inner.takes_a_delivery_now()
    }

    fn unannounced_dialog(&self) -> Option<&'static str> {
        self.overlay
            .map(|overlay| overlay.capture)
            .or_else(|| self.inner.unannounced_dialog())
    }

    fn answer_keys(&mut self) -> Option<(Vec<u8>, u64)> {
        let Some(overlay) = self.overlay else {
            // The harness model's own dialogs, if it answers them its way.
            return self.inner.answer_keys();
        };
        let keys = match overlay.kind {
            Kind::Trust(keys) => keys.to_vec(),
            // Most dismiss a picker; some take what it shows.
            Kind::Picker if self.rng.chance(80) => b"\x1b".to_vec(),
            Kind::Picker => b"\r".to_vec(),
        };
        Some((keys, self.rng.between(300, 2_500)))
    }

    fn person_acts(&mut self) -> Option<(Vec<u8>, u64)> {
        if let (Some(changed), View::Idle { composer }) = (&self.changed, self.inner.view())
            && self.overlay.is_none()
            && composer == *changed
        {
            // DING's notice, a letter short: the person sends it on.
            return Some((b"\r".to_vec(), self.rng.between(300, 2_000)));
        }
        if !self.plan.pickers || !self.idle_empty() || !self.rng.chance(8) {
            // What the harness model's own person does, if anything.
            return self.inner.person_acts();
        }
        let dialogs = dialogs(self.harness)?;
        let choices = dialogs.pickers.len() as u64 + u64::from(dialogs.rewind.is_some());
        let pick = self.rng.below(choices) as usize;
        let keys = match dialogs.pickers.get(pick) {
            Some((command, _)) => [command.as_bytes(), b"\r"].concat(),
            None => b"\x1b\x1b".to_vec(),
        };
        Some((keys, self.rng.between(100, 1_500)))
    }
}
