//! The cost oracle: the model calls of a run against the fewest a person
//! who knew every arrival would need (issue 38 item 4).
//!
//! What the model server would see is counted from the harness: every
//! request it makes ([`Call`]), whose turn it belongs to (the person's
//! prompt, or DING's: a typed notice, a queued delivery, a woken turn), and
//! every turn a hook's answer continued at its end. The person's own
//! requests are free moments that may carry a message; DING's are the
//! calls it costs.
//!
//! Each file has a window, from its arrival (or from the moment a crash
//! or a `/clear` made its context forget it) to the last moment a request
//! could carry it: the end of the turn it arrived in (the turn's `Stop`,
//! after which only a call of its own carries it), the moment the harness
//! was next ready for it (idle, an empty composer, the person's hands off
//! the keys), or, if it arrived at a ready harness, [`A_BURSTS_GAP_MS`]
//! later, the longest gap between two files of one burst. `ding-eval`'s own
//! [`fewest_calls::fewest_extra_calls`] gives the fewest calls covering
//! them; DING making more is a [`Class::Cost`] violation like any other.
//! Delivering later than a window closes costs nothing here: that is the
//! latency the liveness bound and the evaluation judge.
//!
//! What a request could carry, as the soak's seeds taught it
//! (docs/simulation.md): a request goes with the harness's own hook asked
//! before it, never with a launcher's call made beside it; the requests
//! that follow a turn DING continued are DING's, as those of its own turns
//! are; a turn's end closes a window before the next turn's requests, in
//! the same millisecond too (the windows are counted in half milliseconds
//! to keep that order); and a file that reached the model again, as a
//! crash of DING's own allowed (`may_repeat`), has a second window from
//! that crash: the crash owed it again, and only a repeat that happened
//! opens one.

use std::collections::BTreeMap;

use super::*;

use crate::fewest_calls::{A_BURSTS_GAP_MS, Window, fewest_extra_calls};

/// The most files one delivery names (a typed notice's default, and the
/// demo agent's hooks): a burst larger than this needs another request,
/// whoever makes it.
const FILES_PER_REQUEST: usize = ding::core::config::NOTICE_MAX_FILES_DEFAULT;

/// How long after a person's key the harness counts as left alone.
const A_PERSONS_PAUSE_MS: u64 = 300;

/// Whose a model request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Caller {
    Person,
    Ding,
}

/// A stretch in which the harness was ready for a delivery: idle, its
/// composer empty, the person's hands off the keys.
#[derive(Clone, Copy, Debug)]
struct Ready {
    from: u64,
    until: u64,
    /// DING's own act ended it, not the harness or the person.
    ended_by_ding: bool,
}

/// A file's window opening.
#[derive(Clone, Debug)]
struct Opened {
    name: String,
    at: u64,
    /// It arrived then; otherwise its context forgot it then, and it is
    /// backlog, due as soon as the harness is ready again.
    arrived: bool,
}

/// When a request's hook was asked: what it adds was decided then.
#[derive(Clone, Copy, Debug)]
struct AskedAt {
    at: u64,
    /// A turn's end came before it in that very millisecond: it is the
    /// next turn's, later than any window that end closed.
    after_a_turns_end: bool,
}

/// What a hook call's answer lets happen.
#[derive(Clone, Copy, Debug)]
enum Awaited {
    TurnEnd,
    /// A request of this caller's, carrying at most what had arrived when
    /// the hook before it was asked (DING's answer was decided then).
    Request(Caller, AskedAt),
}

/// The last moment a request could carry a file.
#[derive(Clone, Copy, Debug)]
struct Closes {
    at: u64,
    /// A turn's end closed it: a request asked after that end, even in
    /// the same millisecond, is the next turn's and carries nothing of it.
    at_a_turns_end: bool,
}

/// What the cost oracle records of one run.
#[derive(Default)]
pub(super) struct CostLedger {
    /// Whose the next turn is: the prompts submitted or queued since the
    /// last turn started (a person's prompt among them makes it theirs).
    starting: Option<Caller>,
    /// Whose the running turn is.
    turn_by: Option<Caller>,
    /// A parked wake's answer is being acted on: a turn it starts is DING's.
    pub(super) waking: bool,
    /// The moments of the person's own requests.
    own: Vec<AskedAt>,
    /// DING's calls: when, and what they were.
    calls: Vec<(u64, &'static str)>,
    /// Each file's windows, by their openings.
    opened: Vec<Opened>,
    /// When turns' `Stop` hooks were answered: the last moment a request
    /// of that turn could carry anything.
    turn_ends: Vec<u64>,
    /// The hook calls a request waits for: a turn's end, or a request of
    /// the running turn (whose caller is kept), made once the hook is
    /// answered.
    awaiting: BTreeMap<Peer, Awaited>,
    /// When each hook call was asked.
    asked_at: BTreeMap<Peer, AskedAt>,
    /// Calls a launcher makes beside the harness (its own process): no
    /// request of the harness waits for them.
    launchers: std::collections::BTreeSet<Peer>,
    /// For each file a crash of DING's own put in doubt (HARD-22's window,
    /// a claim whose receipt died), the moments of those crashes: a repeat
    /// they allow is owed from then, and has a window of its own.
    in_doubt: BTreeMap<String, std::collections::VecDeque<u64>>,
    /// Hook calls DING never answered (the harness gave up on them, or
    /// they found no adapter): a request after one carries nothing of
    /// DING's.
    unanswered: std::collections::BTreeSet<Peer>,
    /// The stretches in which the harness was ready for a delivery, and
    /// the one under way.
    ready: Vec<Ready>,
    ready_from: Option<u64>,
    last_persons_key: Option<u64>,
    /// The fewest calls, once worked out at the run's end.
    fewest: usize,
}

impl CostLedger {
    pub(super) fn calls(&self) -> usize {
        self.calls.len()
    }

    pub(super) fn fewest(&self) -> usize {
        self.fewest
    }
}

impl World {
    /// A prompt reached the model: a notice of DING's alone, or a woken
    /// turn's, is DING's; anything with a person's text is theirs.
    pub(super) fn cost_prompt(&mut self, text: &str) {
        let by = if self.cost.waking || self.pasted.iter().any(|pasted| pasted == text) {
            Caller::Ding
        } else {
            Caller::Person
        };
        self.cost_starting(by);
    }

    /// A delivery queued through a native path starts the next turn.
    pub(super) fn cost_queued(&mut self) {
        self.cost_starting(Caller::Ding);
    }

    fn cost_starting(&mut self, by: Caller) {
        self.cost.starting = Some(match self.cost.starting {
            Some(Caller::Person) => Caller::Person,
            _ => by,
        });
    }

    /// The harness makes a request once the hook just asked before it
    /// (if any) is answered.
    pub(super) fn cost_request(&mut self, call: Call) {
        let by = match call {
            Call::Starts => {
                let by = self.cost.starting.take().unwrap_or(Caller::Person);
                self.cost.turn_by = Some(by);
                if by == Caller::Ding {
                    self.cost.calls.push((self.now, "a turn of its own"));
                    self.cost_ding_acts();
                }
                by
            }
            Call::StartsQueued => {
                // A person's prompt queued behind a turn is no free moment:
                // nothing may ride what an Esc can strand.
                let by = self.cost.starting.take().unwrap_or(Caller::Person);
                self.cost.turn_by = Some(by);
                if by == Caller::Ding {
                    self.cost.calls.push((self.now, "a turn of its own"));
                    self.cost_ding_acts();
                }
                return;
            }
            Call::Follows => self.cost.turn_by.unwrap_or(Caller::Person),
            Call::Continues => {
                self.cost
                    .calls
                    .push((self.now, "a turn continued at its end"));
                // What follows (a tool's result) is of DING's call: a
                // request that would not be without it is no free one.
                self.cost.turn_by = Some(Caller::Ding);
                return;
            }
        };
        // The harness's own hook asked last (a launcher's call between it
        // and its request is not it).
        let hook = (0..self.next_peer)
            .rev()
            .map(Peer)
            .find(|peer| !self.cost.launchers.contains(peer))
            .unwrap_or(Peer(self.next_peer - 1));
        let asked = self
            .hooks
            .get(&hook)
            .is_some_and(|record| record.answers == 0 && record.incarnation == self.incarnation);
        let asked_at = match self.cost.asked_at.get(&hook) {
            Some(asked_at) => *asked_at,
            None => self.asked_now(),
        };
        match (asked, by) {
            (true, _) => {
                self.cost
                    .awaiting
                    .insert(hook, Awaited::Request(by, asked_at));
            }
            // Its hook was answered just now (a harness that runs its hooks
            // one at a time let the request go after the last).
            (false, Caller::Person) if !self.cost.unanswered.contains(&hook) => {
                self.cost.own.push(asked_at)
            }
            (false, _) => {}
        }
    }

    /// A hook was asked: at a turn's end, the turn's last chance to carry
    /// anything is its answer.
    pub(super) fn cost_hook_asked(&mut self, event: &str, peer: Peer) {
        let asked_at = self.asked_now();
        self.cost.asked_at.insert(peer, asked_at);
        if !self.harness.a_request_may_wait_for(event) {
            self.cost.launchers.insert(peer);
        }
        if self.harness.asks_at_a_turns_end(event) {
            self.cost.awaiting.insert(peer, Awaited::TurnEnd);
        }
    }

    fn asked_now(&self) -> AskedAt {
        AskedAt {
            at: self.now,
            after_a_turns_end: self.cost.turn_ends.last() == Some(&self.now),
        }
    }

    /// A crash of DING's own put `name` in doubt now: it may reach the
    /// model once more (`may_repeat`).
    pub(super) fn cost_in_doubt(&mut self, name: &str) {
        self.cost
            .in_doubt
            .entry(name.to_string())
            .or_default()
            .push_back(self.now);
    }

    /// `name` reached the model again, as a crash of DING's own allowed
    /// (it was in doubt): that crash owed it again from its moment, as a
    /// context that forgot it would, and a person who knew every arrival
    /// would need a request for it too. Only a repeat that happened gets
    /// a window: a crash is no slack beside it.
    pub(super) fn cost_delivered_again(&mut self, name: &str) {
        let Some(at) = self
            .cost
            .in_doubt
            .get_mut(name)
            .and_then(std::collections::VecDeque::pop_front)
        else {
            return;
        };
        self.cost.opened.push(Opened {
            name: name.to_string(),
            at,
            arrived: false,
        });
    }

    /// The harness read a hook's answer (`answered`), or gave up on it:
    /// what waited for it happens now. A request whose hook DING never
    /// answered carries nothing of DING's.
    pub(super) fn cost_hook_done(&mut self, peer: Peer, answered: bool) {
        if !answered {
            self.cost.unanswered.insert(peer);
        }
        match self.cost.awaiting.remove(&peer) {
            Some(Awaited::TurnEnd) => self.cost.turn_ends.push(self.now),
            Some(Awaited::Request(Caller::Person, asked_at)) if answered => {
                self.cost.own.push(asked_at)
            }
            Some(Awaited::Request(..)) | None => {}
        }
    }

    /// The harness is gone: nothing waits for its hooks any more.
    pub(super) fn cost_harness_gone(&mut self) {
        self.cost.awaiting.clear();
        self.cost_ready(false);
    }

    /// DING wrote to the terminal, or started a turn, or handed a
    /// harness a delivery to start one with: a stretch in which the
    /// harness was ready ends by DING's own act, and how long it would
    /// have lasted without it is not known.
    pub(super) fn cost_ding_acts(&mut self) {
        if let Some(from) = self.cost.ready_from.take() {
            self.cost.ready.push(Ready {
                from: from.min(self.now),
                until: self.now,
                ended_by_ding: true,
            });
        }
    }

    /// A file's window opens: it arrived, or its context forgot it.
    pub(super) fn cost_window_opens(&mut self, name: &str, arrived: bool) {
        self.cost.opened.push(Opened {
            name: name.to_string(),
            at: self.now,
            arrived,
        });
    }

    pub(super) fn cost_persons_key(&mut self) {
        self.cost.last_persons_key = Some(self.now);
        self.cost_ready(false);
    }

    /// Called after every step: whether the harness is ready for a
    /// delivery now.
    pub(super) fn cost_look(&mut self) {
        let ready = self.harness.takes_a_delivery_now() && self.order.is_idle();
        self.cost_ready(ready);
    }

    fn cost_ready(&mut self, ready: bool) {
        match (ready, self.cost.ready_from) {
            (true, None) => {
                let paused = self
                    .cost
                    .last_persons_key
                    .map_or(0, |key| key + A_PERSONS_PAUSE_MS);
                self.cost.ready_from = Some(self.now.max(paused));
            }
            (false, Some(from)) => {
                self.cost.ready_from = None;
                if self.now > from {
                    self.cost.ready.push(Ready {
                        from,
                        until: self.now,
                        ended_by_ding: false,
                    });
                }
            }
            _ => {}
        }
    }

    /// At the run's end: DING's calls against the fewest that cover every
    /// window the person's own requests do not.
    pub(super) fn check_cost(&mut self) {
        self.cost_ready(false);
        let windows: Vec<Window> = self
            .cost
            .opened
            .iter()
            .map(|opened| Window {
                opens_ms: opened.at,
                closes_ms: self.closes(opened).at,
            })
            .collect();
        // In half milliseconds, so that the order of one millisecond's
        // events is kept: a window opens after that millisecond's requests
        // (one at the very moment a file arrived was made up before it),
        // closes at a turn's end before the next turn's requests, and
        // otherwise after every request of its last millisecond.
        let in_order: Vec<Window> = self
            .cost
            .opened
            .iter()
            .map(|opened| {
                let closes = self.closes(opened);
                Window {
                    opens_ms: 2 * opened.at + 1,
                    closes_ms: 2 * closes.at + u64::from(!closes.at_a_turns_end),
                }
            })
            .collect();
        let own: Vec<u64> = self
            .cost
            .own
            .iter()
            .map(|asked| 2 * asked.at + u64::from(asked.after_a_turns_end))
            .collect();
        let fewest = fewest_extra_calls(&own, &in_order, FILES_PER_REQUEST);
        self.cost.fewest = fewest;
        let calls = self.cost.calls.len();
        if calls > fewest {
            let detail = format!(
                "DING made {calls} model calls {:?} where {fewest} would do for the windows {:?} beside the person's own requests at {:?}",
                self.cost.calls,
                self.cost
                    .opened
                    .iter()
                    .zip(&windows)
                    .map(|(opened, window)| format!(
                        "{} {}..{}",
                        opened.name, window.opens_ms, window.closes_ms
                    ))
                    .collect::<Vec<_>>(),
                self.cost
                    .own
                    .iter()
                    .map(|asked| asked.at)
                    .collect::<Vec<_>>()
            );
            self.record(Class::Cost, detail, false);
        }
    }

    /// The last moment a request could carry a file whose window opened
    /// at `opens`: the first turn's end after it (a file that waited while
    /// a turn ran can ride no later request of that turn), the moment the
    /// harness was next ready for it (a file that waited for the harness
    /// or the person, or one its context forgot, is due then), or, for a
    /// file that arrived at a ready harness, a burst's gap later (others of
    /// its burst may follow it), unless the person took the keys back
    /// first.
    fn closes(&self, opened: &Opened) -> Closes {
        let opens = opened.at;
        let turn_end = self.cost.turn_ends.iter().copied().find(|&at| at > opens);
        let ready = self.cost.ready.iter().find_map(|stretch| {
            if stretch.from > opens || (!opened.arrived && stretch.until > opens) {
                Some(stretch.from.max(opens + 1))
            } else if stretch.until <= opens {
                None
            } else if stretch.ended_by_ding || stretch.until >= opens + A_BURSTS_GAP_MS {
                Some(opens + A_BURSTS_GAP_MS)
            } else {
                None
            }
        });
        let at = turn_end
            .into_iter()
            .chain(ready)
            .min()
            .unwrap_or(self.now)
            .max(opens + 1);
        Closes {
            at,
            at_a_turns_end: turn_end == Some(at),
        }
    }
}
