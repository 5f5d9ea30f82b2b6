//! Acting on many agents at once: `ding up` and `ding down` of a fleet.
//!
//! Each agent's start waits out its harness's start window and each stop
//! its processes' grace, so one agent at a time made a fleet of 100 take
//! a minute to start. They run on a bounded number of threads instead,
//! and each agent's outcome is kept in the declaration's order, so the
//! report reads the same as before.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// How many agents start or stop at once: enough that a fleet's waits
/// overlap, few enough that a fleet's starts do not swamp the machine
/// (each start is a few short-lived processes and a wait).
pub const AT_ONCE: usize = 32;

/// `act` on every item, at most `at_once` at a time; the outcomes in the
/// items' order.
pub fn each_at_once<T: Sync, R: Send>(
    items: &[T],
    at_once: usize,
    act: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    let workers = at_once.clamp(1, items.len().max(1));
    thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else {
                        return;
                    };
                    let outcome = act(item);
                    outcomes.lock().unwrap_or_else(|p| p.into_inner())[index] = Some(outcome);
                }
            });
        }
    });
    outcomes
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|outcome| outcome.expect("every item was acted on"))
        .collect()
}

/// The closing line of a fleet's command when some agents failed: how
/// many, and which. None when every agent succeeded, or when there was
/// only one (its own error says it all).
pub fn failed_line(verb: &str, failed: &[String], total: usize) -> Option<String> {
    (total > 1 && !failed.is_empty()).then(|| {
        format!(
            "{} of {total} agents {verb}: {}",
            failed.len(),
            failed.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Condvar;
    use std::time::Duration;

    #[test]
    fn outcomes_keep_the_items_order_whatever_finishes_first() {
        let items: Vec<u64> = (0..50).collect();
        let outcomes = each_at_once(&items, 8, |&item| item * 2);
        assert_eq!(
            outcomes,
            items.iter().map(|item| item * 2).collect::<Vec<_>>()
        );
    }

    /// Each act stays until as many run at once as the bound allows (it
    /// gives up after a while, so a bound that is never reached fails
    /// here rather than hanging): four overlap, and never a fifth.
    #[test]
    fn waits_overlap_up_to_the_bound_and_no_further() {
        let counts = Mutex::new((0usize, 0usize)); // (running, most at once)
        let changed = Condvar::new();
        let items: Vec<u32> = (0..12).collect();
        each_at_once(&items, 4, |_| {
            let mut guard = counts.lock().unwrap();
            guard.0 += 1;
            guard.1 = guard.1.max(guard.0);
            changed.notify_all();
            let (mut guard, _) = changed
                .wait_timeout_while(guard, Duration::from_secs(5), |(_, most)| *most < 4)
                .unwrap();
            guard.0 -= 1;
        });
        assert_eq!(counts.lock().unwrap().1, 4);
    }
    #[test]
    fn nothing_to_act_on_is_nothing_done() {
        let none: [u8; 0] = [];
        assert!(each_at_once(&none, AT_ONCE, |_| ()).is_empty());
    }

    #[test]
    fn the_closing_line_names_every_agent_that_failed() {
        let failed = vec!["a".to_string(), "c".to_string()];
        assert_eq!(
            failed_line("did not start", &failed, 3).as_deref(),
            Some("2 of 3 agents did not start: a, c")
        );
        assert_eq!(failed_line("did not start", &failed[..1], 1), None);
        assert_eq!(failed_line("did not start", &[], 3), None);
    }
}
