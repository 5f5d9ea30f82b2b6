//! The demo agent's state machine: composer, turns, queue and confirmation
//! menu, with no terminal and no clock of its own.
//!
//! Inputs are keys (from `keys.rs`) and timeouts, each with the `now` it
//! happened at; outputs are transcript events drained with `poll_event` and
//! a view that `render.rs` draws. The terminal loop (`terminal.rs`) owns the
//! file descriptors. The behaviour imitates real terminal agents in general:
//! a turn keeps the agent busy; text typed meanwhile stays in the composer
//! and Return queues it; queued text is submitted when the turn ends; a
//! confirmation menu takes Return as "pick the highlighted option".

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::demo::keys::Key;

/// The most characters the composer holds; more typed text is ignored.
pub const MAX_COMPOSER_CHARS: usize = 4096;
/// The most queued messages; Return with a full queue does nothing.
pub const MAX_QUEUED: usize = 64;
/// Scrollback lines kept for drawing.
const SCROLLBACK_LINES: usize = 200;
/// Progress lines printed during a turn, spread evenly over it.
const PROGRESS: [&str; 3] = ["agent: reading", "agent: thinking", "agent: writing"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// How long one turn keeps the agent busy.
    pub turn: Duration,
    /// Every Nth turn ends in the confirmation menu; 0 never.
    pub menu_every: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            turn: Duration::from_millis(3000),
            menu_every: 0,
        }
    }
}

/// The two answers of the confirmation menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MenuOption {
    Yes,
    No,
}

impl MenuOption {
    pub fn number(self) -> u8 {
        match self {
            MenuOption::Yes => 1,
            MenuOption::No => 2,
        }
    }
}

/// How a menu answer was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnswerKey {
    /// Return on the highlighted option.
    Return,
    /// The option's digit.
    Digit,
}

/// What reached the agent, for the transcript. The terminal loop stamps
/// each with the wall-clock time it was drained.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// A message became the input of a turn.
    Submitted {
        turn: u64,
        text: String,
        /// Some of the text arrived as a bracketed paste.
        pasted: bool,
        /// It had been queued during an earlier turn.
        queued: bool,
    },
    /// Return during a turn: the text waits for the turn's end.
    Queued {
        text: String,
        pasted: bool,
    },
    TurnStart {
        turn: u64,
    },
    MenuShown {
        turn: u64,
    },
    #[serde(rename_all = "camelCase")]
    MenuAnswered {
        turn: u64,
        option: u8,
        answer: MenuOption,
        key: AnswerKey,
        /// A paste arrived while the menu was open, before this answer: the
        /// signature of a notice pasted into a dialog followed by Return.
        after_paste: bool,
    },
    TurnEnd {
        turn: u64,
    },
}

/// What the agent is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Working {
        turn: u64,
        started: Instant,
        /// Progress lines printed so far.
        shown: usize,
    },
    Menu {
        turn: u64,
        highlighted: MenuOption,
        pasted: bool,
    },
}

/// The demo agent.
#[derive(Debug)]
pub struct Agent {
    config: Config,
    phase: Phase,
    composer: String,
    composer_pasted: bool,
    queued: Vec<(String, bool)>,
    scrollback: VecDeque<String>,
    turns: u64,
    /// Ctrl-C on an empty composer arms quitting; the next Ctrl-C quits.
    quit_armed: bool,
    quit: bool,
    events: VecDeque<Event>,
    /// The view changed since the last `take_redraw`.
    redraw: bool,
    /// The elapsed whole seconds last drawn in the header while working.
    drawn_seconds: u64,
}

impl Agent {
    pub fn new(config: Config) -> Agent {
        Agent {
            config,
            phase: Phase::Idle,
            composer: String::new(),
            composer_pasted: false,
            queued: Vec::new(),
            scrollback: VecDeque::new(),
            turns: 0,
            quit_armed: false,
            quit: false,
            events: VecDeque::new(),
            redraw: true,
            drawn_seconds: 0,
        }
    }

    /// Handles one key.
    pub fn handle_key(&mut self, key: Key, now: Instant) {
        self.redraw = true;
        if key != Key::CtrlC {
            self.quit_armed = false;
        }
        if let Phase::Menu { .. } = self.phase {
            self.handle_menu_key(key, now);
            return;
        }
        match key {
            Key::Text(text) => self.type_text(&text, false),
            Key::Paste(text) => self.type_text(&text, true),
            Key::Backspace => {
                self.composer.pop();
                if self.composer.is_empty() {
                    self.composer_pasted = false;
                }
            }
            Key::Enter => self.submit(now),
            Key::CtrlC => {
                if !self.composer.is_empty() {
                    self.clear_composer();
                } else if self.quit_armed {
                    self.quit = true;
                } else {
                    self.quit_armed = true;
                }
            }
            Key::CtrlD => {
                if self.composer.is_empty() {
                    self.quit = true;
                }
            }
            Key::CtrlU => self.clear_composer(),
            Key::Up | Key::Down | Key::Escape => {}
        }
    }

    fn handle_menu_key(&mut self, key: Key, now: Instant) {
        let Phase::Menu {
            turn,
            highlighted,
            pasted,
        } = self.phase
        else {
            return;
        };
        match key {
            Key::Up => self.set_menu(turn, MenuOption::Yes, pasted),
            Key::Down => self.set_menu(turn, MenuOption::No, pasted),
            // The dialog takes no text; a paste only leaves its trace.
            Key::Paste(_) => self.set_menu(turn, highlighted, true),
            Key::Text(text) if text == "1" => {
                self.answer(turn, MenuOption::Yes, AnswerKey::Digit, pasted, now)
            }
            Key::Text(text) if text == "2" => {
                self.answer(turn, MenuOption::No, AnswerKey::Digit, pasted, now)
            }
            Key::Enter => self.answer(turn, highlighted, AnswerKey::Return, pasted, now),
            Key::CtrlC => {
                if self.quit_armed {
                    self.quit = true;
                } else {
                    self.quit_armed = true;
                }
            }
            Key::Text(_) | Key::Backspace | Key::CtrlD | Key::CtrlU | Key::Escape => {}
        }
    }

    fn set_menu(&mut self, turn: u64, highlighted: MenuOption, pasted: bool) {
        self.phase = Phase::Menu {
            turn,
            highlighted,
            pasted,
        };
    }

    fn answer(
        &mut self,
        turn: u64,
        answer: MenuOption,
        key: AnswerKey,
        after_paste: bool,
        now: Instant,
    ) {
        self.events.push_back(Event::MenuAnswered {
            turn,
            option: answer.number(),
            answer,
            key,
            after_paste,
        });
        self.push_line(match answer {
            MenuOption::Yes => "agent: change applied".to_string(),
            MenuOption::No => "agent: change discarded".to_string(),
        });
        self.end_turn(turn, now);
    }

    fn type_text(&mut self, text: &str, pasted: bool) {
        let room = MAX_COMPOSER_CHARS.saturating_sub(self.composer.chars().count());
        let before = self.composer.len();
        self.composer.extend(text.chars().take(room));
        if pasted && self.composer.len() > before {
            self.composer_pasted = true;
        }
    }

    fn clear_composer(&mut self) {
        self.composer.clear();
        self.composer_pasted = false;
    }

    /// Return outside the menu: submit when idle, queue when working.
    fn submit(&mut self, now: Instant) {
        if self.composer.is_empty() {
            return;
        }
        match self.phase {
            Phase::Idle => {
                let text = std::mem::take(&mut self.composer);
                let pasted = std::mem::take(&mut self.composer_pasted);
                self.start_turn(vec![(text, pasted)], false, now);
            }
            Phase::Working { .. } => {
                if self.queued.len() >= MAX_QUEUED {
                    return;
                }
                let text = std::mem::take(&mut self.composer);
                let pasted = std::mem::take(&mut self.composer_pasted);
                self.events.push_back(Event::Queued {
                    text: text.clone(),
                    pasted,
                });
                self.queued.push((text, pasted));
            }
            Phase::Menu { .. } => {}
        }
    }

    fn start_turn(&mut self, messages: Vec<(String, bool)>, queued: bool, now: Instant) {
        self.turns += 1;
        let turn = self.turns;
        for (text, pasted) in messages {
            self.push_line(format!("you: {text}"));
            self.events.push_back(Event::Submitted {
                turn,
                text,
                pasted,
                queued,
            });
        }
        self.events.push_back(Event::TurnStart { turn });
        self.phase = Phase::Working {
            turn,
            started: now,
            shown: 0,
        };
        self.drawn_seconds = 0;
        self.redraw = true;
        self.handle_timeout(now);
    }

    fn end_turn(&mut self, turn: u64, now: Instant) {
        self.events.push_back(Event::TurnEnd { turn });
        self.phase = Phase::Idle;
        self.redraw = true;
        if !self.queued.is_empty() {
            let queued = std::mem::take(&mut self.queued);
            self.start_turn(queued, true, now);
        }
    }

    /// Advances turns to `now`. A call before the next deadline is harmless.
    pub fn handle_timeout(&mut self, now: Instant) {
        let Phase::Working {
            turn,
            started,
            shown,
        } = self.phase
        else {
            return;
        };
        let elapsed = now.saturating_duration_since(started);
        let due = self.progress_due(elapsed);
        for line in PROGRESS.iter().take(due).skip(shown) {
            self.push_line(line.to_string());
        }
        if due != shown {
            self.phase = Phase::Working {
                turn,
                started,
                shown: due,
            };
        }
        let seconds = elapsed.as_secs();
        if seconds != self.drawn_seconds {
            self.drawn_seconds = seconds;
            self.redraw = true;
        }
        if elapsed >= self.config.turn {
            self.push_line("agent: done".to_string());
            let menu = self.config.menu_every > 0 && turn.is_multiple_of(self.config.menu_every);
            if menu {
                self.events.push_back(Event::MenuShown { turn });
                self.set_menu(turn, MenuOption::Yes, false);
                self.redraw = true;
            } else {
                self.end_turn(turn, now);
            }
        }
    }

    /// How many progress lines are due `elapsed` into a turn.
    fn progress_due(&self, elapsed: Duration) -> usize {
        let steps = PROGRESS.len() as u128;
        let turn = self.config.turn.as_nanos().max(1);
        let due = elapsed.as_nanos().saturating_mul(steps) / turn + 1;
        usize::try_from(due.min(steps)).unwrap_or(PROGRESS.len())
    }

    /// When `handle_timeout` has something to do next: the next progress
    /// line, the header's next second, or the turn's end.
    pub fn next_deadline(&self) -> Option<Instant> {
        let Phase::Working { started, shown, .. } = self.phase else {
            return None;
        };
        let turn = self.config.turn;
        let end = started + turn;
        let next_second = started + Duration::from_secs(self.drawn_seconds + 1);
        let steps = PROGRESS.len() as u32;
        let next_progress = (shown < PROGRESS.len())
            .then(|| started + turn * u32::try_from(shown).unwrap_or(steps) / steps);
        [Some(end), Some(next_second), next_progress]
            .into_iter()
            .flatten()
            .min()
    }

    fn push_line(&mut self, line: String) {
        if self.scrollback.len() == SCROLLBACK_LINES {
            self.scrollback.pop_front();
        }
        self.scrollback.push_back(line);
        self.redraw = true;
    }

    /// The next transcript event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Whether the view changed since the last call.
    pub fn take_redraw(&mut self) -> bool {
        std::mem::take(&mut self.redraw)
    }

    pub fn wants_exit(&self) -> bool {
        self.quit
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn composer(&self) -> &str {
        &self.composer
    }

    pub fn queued(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.queued.iter().map(|(text, _)| text.as_str())
    }

    pub fn scrollback(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.scrollback.iter().map(String::as_str)
    }

    pub fn quit_armed(&self) -> bool {
        self.quit_armed
    }

    /// Whole seconds into the current turn, as drawn in the header.
    pub fn working_seconds(&self) -> u64 {
        self.drawn_seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(turn_ms: u64, menu_every: u64) -> Agent {
        Agent::new(Config {
            turn: Duration::from_millis(turn_ms),
            menu_every,
        })
    }

    fn events(agent: &mut Agent) -> Vec<Event> {
        std::iter::from_fn(|| agent.poll_event()).collect()
    }

    fn typed(text: &str) -> Key {
        Key::Text(text.to_string())
    }

    #[test]
    fn return_submits_and_the_turn_ends_after_its_duration() {
        let t0 = Instant::now();
        let mut agent = agent(900, 0);
        agent.handle_key(typed("hello"), t0);
        agent.handle_key(Key::Enter, t0);
        assert!(matches!(agent.phase(), Phase::Working { turn: 1, .. }));
        assert_eq!(agent.composer(), "");
        assert_eq!(
            events(&mut agent),
            vec![
                Event::Submitted {
                    turn: 1,
                    text: "hello".into(),
                    pasted: false,
                    queued: false
                },
                Event::TurnStart { turn: 1 }
            ]
        );
        assert_eq!(agent.next_deadline(), Some(t0 + Duration::from_millis(300)));
        agent.handle_timeout(t0 + Duration::from_millis(899));
        assert!(matches!(agent.phase(), Phase::Working { shown: 3, .. }));
        agent.handle_timeout(t0 + Duration::from_millis(900));
        assert_eq!(agent.phase(), Phase::Idle);
        assert_eq!(events(&mut agent), vec![Event::TurnEnd { turn: 1 }]);
        assert_eq!(agent.next_deadline(), None);
    }

    #[test]
    fn empty_return_does_nothing() {
        let mut agent = agent(100, 0);
        agent.handle_key(Key::Enter, Instant::now());
        assert_eq!(agent.phase(), Phase::Idle);
        assert!(events(&mut agent).is_empty());
    }

    #[test]
    fn text_typed_during_a_turn_stays_and_return_queues_it() {
        let t0 = Instant::now();
        let mut agent = agent(1000, 0);
        agent.handle_key(typed("first"), t0);
        agent.handle_key(Key::Enter, t0);
        events(&mut agent);
        agent.handle_key(Key::Paste("mail for you".into()), t0);
        assert_eq!(agent.composer(), "mail for you");
        agent.handle_key(Key::Enter, t0);
        assert_eq!(agent.composer(), "");
        assert_eq!(agent.queued().collect::<Vec<_>>(), vec!["mail for you"]);
        agent.handle_timeout(t0 + Duration::from_millis(1000));
        assert_eq!(
            events(&mut agent),
            vec![
                Event::Queued {
                    text: "mail for you".into(),
                    pasted: true
                },
                Event::TurnEnd { turn: 1 },
                Event::Submitted {
                    turn: 2,
                    text: "mail for you".into(),
                    pasted: true,
                    queued: true
                },
                Event::TurnStart { turn: 2 }
            ]
        );
    }

    #[test]
    fn menu_takes_return_as_the_highlighted_answer_and_records_a_paste() {
        let t0 = Instant::now();
        let mut agent = agent(10, 1);
        agent.handle_key(typed("go"), t0);
        agent.handle_key(Key::Enter, t0);
        agent.handle_timeout(t0 + Duration::from_millis(10));
        assert!(matches!(
            agent.phase(),
            Phase::Menu {
                highlighted: MenuOption::Yes,
                ..
            }
        ));
        events(&mut agent);
        agent.handle_key(Key::Paste("you have mail".into()), t0);
        assert_eq!(agent.composer(), "", "a dialog takes no text");
        agent.handle_key(Key::Enter, t0);
        assert_eq!(
            events(&mut agent),
            vec![
                Event::MenuAnswered {
                    turn: 1,
                    option: 1,
                    answer: MenuOption::Yes,
                    key: AnswerKey::Return,
                    after_paste: true
                },
                Event::TurnEnd { turn: 1 }
            ]
        );
        assert_eq!(agent.phase(), Phase::Idle);
    }

    #[test]
    fn menu_every_n_skips_other_turns_and_digits_answer() {
        let t0 = Instant::now();
        let mut agent = agent(10, 2);
        for turn in 1..=2u64 {
            agent.handle_key(typed("x"), t0);
            agent.handle_key(Key::Enter, t0);
            agent.handle_timeout(t0 + Duration::from_millis(10));
            let in_menu = matches!(agent.phase(), Phase::Menu { .. });
            assert_eq!(in_menu, turn == 2, "turn {turn}");
        }
        agent.handle_key(Key::Down, t0);
        agent.handle_key(typed("1"), t0);
        let answered: Vec<Event> = events(&mut agent)
            .into_iter()
            .filter(|e| matches!(e, Event::MenuAnswered { .. }))
            .collect();
        assert_eq!(
            answered,
            vec![Event::MenuAnswered {
                turn: 2,
                option: 1,
                answer: MenuOption::Yes,
                key: AnswerKey::Digit,
                after_paste: false
            }]
        );
    }

    #[test]
    fn ctrl_c_clears_then_quits_on_the_second_press_and_ctrl_d_quits_when_empty() {
        let now = Instant::now();
        let mut agent = agent(10, 0);
        agent.handle_key(typed("draft"), now);
        agent.handle_key(Key::CtrlD, now);
        assert!(!agent.wants_exit(), "ctrl-d with a draft keeps running");
        agent.handle_key(Key::CtrlC, now);
        assert_eq!(agent.composer(), "");
        agent.handle_key(Key::CtrlC, now);
        assert!(!agent.wants_exit() && agent.quit_armed());
        agent.handle_key(Key::CtrlC, now);
        assert!(agent.wants_exit());

        let mut other = super::Agent::new(Config::default());
        other.handle_key(Key::CtrlD, now);
        assert!(other.wants_exit());
    }

    #[test]
    fn composer_is_bounded() {
        let now = Instant::now();
        let mut agent = agent(10, 0);
        let long = "y".repeat(MAX_COMPOSER_CHARS + 10);
        agent.handle_key(Key::Paste(long), now);
        assert_eq!(agent.composer().chars().count(), MAX_COMPOSER_CHARS);
    }
}
