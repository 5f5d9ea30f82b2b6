//! Whether a native idle path works, and what that means for the terminal
//! path and for people.

use std::time::Duration;

use super::wire::{LaunchMode, LaunchReport, QueueReport};
use crate::core::time::Time;

/// What the reporter last said of the native path, beyond its calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathState {
    /// Nothing against it: it works, or is starting.
    Working,
    /// What serves it died under the harness (why, and what the reporter
    /// does), until the reporter reports again.
    Down(String),
    /// It cannot work here (why): idle work takes the terminal path.
    Unavailable(String),
}

/// How a provider's native path is spoken of, for people.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Words {
    /// What reports (`the launcher`, `the plugin`).
    pub reporter: &'static str,
    /// What delivers idle work (the harness's queue, its prompt call).
    pub delivers_through: &'static str,
}

/// One harness incarnation's native idle path, as the adapter knows it.
#[derive(Clone, Debug)]
pub struct NativePath {
    /// Whether the declaration asks for it (else the terminal path serves
    /// idle work and this says nothing).
    on: bool,
    words: Words,
    state: PathState,
    /// When the reporter last reported or was handed a delivery.
    reported_at: Option<Time>,
    /// Delivery ids are `ding-PID-N`: unique across adapters' lives.
    id_prefix: String,
    next_id: u64,
}

impl NativePath {
    pub fn new(on: bool, words: Words) -> NativePath {
        NativePath {
            on,
            words,
            state: PathState::Working,
            reported_at: None,
            id_prefix: format!("ding-{}", std::process::id()),
            next_id: 1,
        }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    pub fn state(&self) -> &PathState {
        &self.state
    }

    pub fn reported_at(&self) -> Option<Time> {
        self.reported_at
    }

    /// A new incarnation has a reporter of its own, which says again
    /// whether its path can work.
    pub fn new_terminal(&mut self) {
        self.reported_at = None;
        self.state = PathState::Working;
    }

    /// A `launch` report (`None`: one that does not read). Returns whether
    /// it says the path went down: a turn that ran died with it, and what
    /// the hooks said of it no longer holds.
    pub fn on_launch(&mut self, launch: Option<&LaunchReport>) -> bool {
        let (state, down) = match launch {
            Some(LaunchReport {
                mode: LaunchMode::NativeDown,
                error,
                ..
            }) => {
                let why = error.clone().unwrap_or_else(|| "its server is gone".into());
                (PathState::Down(why), true)
            }
            Some(LaunchReport {
                error: Some(why), ..
            }) => (PathState::Unavailable(why.clone()), false),
            _ => (PathState::Working, false),
        };
        self.state = state;
        down
    }

    /// A `queue` report at `now`: one that lists the harness's hooks is a
    /// new server's first, and the path works again.
    pub fn on_report(&mut self, report: &QueueReport, now: Time) {
        if report.hooks.is_some() {
            self.state = PathState::Working;
        }
        self.reported_at = Some(now);
    }

    /// Whether a `queue` report while the path is down is one the reporter
    /// made before its server died, come late (each hook call is a process
    /// of its own: none is ordered against another). The first report of
    /// a server carries the harness's list of hooks, and only the first; a
    /// report without it says nothing of the new server (found by the
    /// whole-agent simulation, seed 33401: a delivery just handed on was
    /// never added, a late report listed it, and its files waited for a
    /// turn that never came).
    pub fn is_from_a_dead_server(&self, report: &QueueReport) -> bool {
        matches!(self.state, PathState::Down(_)) && report.hooks.is_none()
    }

    /// Whether the path was down and this report is its server's first
    /// after it came back: a delivery it does not list died with the old
    /// one. The path works again.
    pub fn came_back(&mut self) -> bool {
        if !matches!(self.state, PathState::Down(_)) {
            return false;
        }
        self.state = PathState::Working;
        true
    }

    /// The id the next delivery gets.
    pub fn next_id(&self) -> String {
        format!("{}-{}", self.id_prefix, self.next_id)
    }

    /// A delivery with [`NativePath::next_id`] was handed on at `now`.
    pub fn handed_on(&mut self, now: Time) {
        self.next_id += 1;
        self.reported_at = Some(now);
    }

    /// Since the reporter last spoke, if a delivery waits (`waiting`).
    pub fn delivery_waiting(&self, waiting: bool, now: Time) -> Option<Duration> {
        waiting.then(|| self.reported_at.map_or(Duration::ZERO, |at| now.since(at)))
    }

    /// When the grace of a delivery handed on (at the reporter's last word)
    /// ends, if one still waits for its turn (`waiting`) and it is still to
    /// come after `now`: until then its turn is about to start, and the
    /// screen reads as busy.
    pub fn delivery_grace_ends(&self, waiting: bool, grace: Duration, now: Time) -> Option<Time> {
        self.reported_at
            .filter(|_| waiting)
            .map(|at| at + grace)
            .filter(|at| *at > now)
    }

    /// Why an idle screen with an empty composer is no lease for the
    /// terminal path: the native path serves idle work, or will once its
    /// reporter has reported (a backlog waiting at start, at a resume or
    /// after a restart, and work arriving between two of its calls all go
    /// through it, 0 terminal bytes), as long as it is on and the reporter
    /// has not said it cannot work here.
    pub fn holds(&self) -> Option<String> {
        match &self.state {
            _ if !self.on => return None,
            PathState::Unavailable(_) => return None,
            PathState::Down(why) => return Some(format!("the native idle path is down ({why})")),
            PathState::Working => {}
        }
        Some(if self.reported_at.is_none() {
            format!(
                "the native idle path is starting: {} has not reported for this harness yet",
                self.words.reporter
            )
        } else {
            format!(
                "the native idle path delivers idle work ({})",
                self.words.delivers_through
            )
        })
    }

    /// What the adapter's remark adds about the path, if anything is
    /// against it.
    pub fn remark(&self) -> Option<String> {
        match &self.state {
            PathState::Working => None,
            PathState::Down(why) => Some(format!(
                "native idle path down ({why}): nothing is queued or typed until it is back"
            )),
            PathState::Unavailable(error) => Some(format!(
                "native idle path unavailable ({error}): idle work is typed under a fresh idle lease"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::native_idle::wire::ListedHook;

    const WORDS: Words = Words {
        reporter: "the reporter",
        delivers_through: "its queue",
    };

    #[test]
    fn the_path_holds_the_terminal_until_it_cannot_work_and_a_late_report_is_told_apart() {
        let at = Time::from_millis;
        let mut path = NativePath::new(true, WORDS);
        assert!(
            path.holds()
                .unwrap()
                .contains("the reporter has not reported")
        );
        path.on_report(&QueueReport::default(), at(10));
        assert!(path.holds().unwrap().contains("(its queue)"));
        assert_eq!(path.delivery_waiting(false, at(20)), None);
        assert_eq!(
            path.delivery_waiting(true, at(20)),
            Some(Duration::from_millis(10))
        );
        let grace = Duration::from_millis(100);
        assert_eq!(path.delivery_grace_ends(true, grace, at(20)), Some(at(110)));
        assert_eq!(path.delivery_grace_ends(true, grace, at(110)), None);
        assert_eq!(path.delivery_grace_ends(false, grace, at(20)), None);
        let down = LaunchReport {
            mode: LaunchMode::NativeDown,
            declared: None,
            error: Some("killed".into()),
        };
        assert!(path.on_launch(Some(&down)));
        assert_eq!(
            path.holds().unwrap(),
            "the native idle path is down (killed)"
        );
        assert!(path.remark().unwrap().contains("down (killed)"));
        let late = QueueReport::default();
        assert!(path.is_from_a_dead_server(&late));
        let first = QueueReport {
            hooks: Some(vec![ListedHook {
                event: "e".into(),
                trust: None,
            }]),
            ..QueueReport::default()
        };
        assert!(!path.is_from_a_dead_server(&first));
        assert!(path.came_back());
        assert!(!path.came_back());
        let unavailable = LaunchReport {
            mode: LaunchMode::NativeUnavailable,
            declared: None,
            error: Some("refused".into()),
        };
        assert!(!path.on_launch(Some(&unavailable)));
        assert_eq!(path.holds(), None);
        assert!(path.remark().unwrap().contains("unavailable (refused)"));
        let first_id = path.next_id();
        path.handed_on(at(30));
        assert_ne!(path.next_id(), first_id);
        assert_eq!(NativePath::new(false, WORDS).holds(), None);
    }
}
