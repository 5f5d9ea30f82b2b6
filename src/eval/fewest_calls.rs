//! The fewest model calls a person would need to deliver every message,
//! knowing every arrival in advance: the cost a careful delivery is
//! measured against (issue 38's cost oracle, issue 39's minimum).
//!
//! Each message has a window: from its arrival to the last moment a
//! request could carry it (the turn's end it arrived in, or a while after
//! the harness was ready for it). The person's own work makes requests
//! anyway; one of them inside a window carries that message at no call of
//! its own. What is left needs calls of their own, and the fewest that give
//! every such window a call is a greedy cover: take the window that closes
//! first, call at its close, and every window open then is served by that
//! call. (Exchanging any cover's first call for that one keeps it a cover,
//! so the greedy one is never larger.) Where one request can name only so
//! many messages, the call serves those open windows that close soonest.
//!
//! The simulation's cost oracle (`tests/agent_simulation/world/cost.rs`)
//! compiles this very file, so the two can never drift apart.

/// The longest gap between two messages of one burst, in the evaluation's
/// rows and the simulation's worlds: a person who knew the arrivals would
/// wait this long after a message reached a ready harness, for the rest of
/// its burst.
pub const A_BURSTS_GAP_MS: u64 = 1_000;

/// From when to when a request could carry one message, in milliseconds
/// of one clock: a request at a moment after the opening, up to the
/// closing, carries it. (One at the very moment it arrived was made
/// up before it came.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub opens_ms: u64,
    pub closes_ms: u64,
}

/// The fewest calls beyond `own` (the moments of the requests the person's
/// own work makes) that put every window in a request, when one request
/// carries at most `per_request` messages (what one delivery may name).
///
/// Windows are taken by their closing: each goes with the first of the
/// person's own requests inside it that has room, or else with a call of
/// its own at the close of the first window left, which also carries the
/// windows open then that close soonest.
pub fn fewest_extra_calls(own: &[u64], windows: &[Window], per_request: usize) -> usize {
    let per_request = per_request.max(1);
    let mut own: Vec<(u64, usize)> = own.iter().map(|&at| (at, 0)).collect();
    own.sort_unstable();
    let mut by_closing = windows.to_vec();
    by_closing.sort_by_key(|window| (window.closes_ms, window.opens_ms));
    let mut left: Vec<Window> = Vec::new();
    for window in by_closing {
        let first_inside = own.partition_point(|&(at, _)| at <= window.opens_ms);
        let room = own[first_inside..]
            .iter_mut()
            .take_while(|(at, _)| *at <= window.closes_ms)
            .find(|(_, carried)| *carried < per_request);
        match room {
            Some((_, carried)) => *carried += 1,
            None => left.push(window),
        }
    }
    let mut served = vec![false; left.len()];
    let mut calls = 0;
    for first in 0..left.len() {
        if served[first] {
            continue;
        }
        calls += 1;
        let at = left[first].closes_ms;
        let mut carried = 0;
        for (index, window) in left.iter().enumerate().skip(first) {
            if carried == per_request {
                break;
            }
            if !served[index] && (index == first || window.opens_ms < at) {
                served[index] = true;
                carried += 1;
            }
        }
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: usize = usize::MAX;

    fn window(opens_ms: u64, closes_ms: u64) -> Window {
        Window {
            opens_ms,
            closes_ms,
        }
    }

    #[test]
    fn a_burst_whose_windows_overlap_needs_one_call() {
        let burst = [window(0, 1_000), window(300, 1_300), window(900, 1_900)];
        assert_eq!(fewest_extra_calls(&[], &burst, ANY), 1);
    }

    #[test]
    fn windows_apart_need_a_call_each() {
        let apart = [window(0, 1_000), window(1_001, 2_001), window(5_000, 6_000)];
        assert_eq!(fewest_extra_calls(&[], &apart, ANY), 3);
    }

    #[test]
    fn a_request_of_the_persons_own_work_inside_a_window_carries_it() {
        let windows = [window(0, 1_000), window(2_000, 3_000)];
        assert_eq!(fewest_extra_calls(&[3_000], &windows, ANY), 1);
        assert_eq!(fewest_extra_calls(&[500, 2_500], &windows, ANY), 0);
        // A request before a window opens (or at that very moment), or
        // after it closes, carries nothing of it.
        assert_eq!(fewest_extra_calls(&[1_001, 1_999], &windows, ANY), 2);
        assert_eq!(fewest_extra_calls(&[2_000], &windows, ANY), 2);
    }

    #[test]
    fn the_greedy_cover_calls_at_the_first_close_not_the_first_opening() {
        // A long window and two short ones inside it: two calls (at 1,100
        // and at 3,100) cover all three; calling at the long one's
        // opening would cover none of the short ones.
        let windows = [
            window(0, 10_000),
            window(1_000, 1_100),
            window(3_000, 3_100),
        ];
        assert_eq!(fewest_extra_calls(&[], &windows, ANY), 2);
    }

    #[test]
    fn a_call_carries_nothing_that_arrived_at_its_very_moment() {
        let windows = [window(0, 1_000), window(1_000, 2_000)];
        assert_eq!(fewest_extra_calls(&[], &windows, ANY), 2);
        let windows = [window(0, 1_000), window(999, 2_000)];
        assert_eq!(fewest_extra_calls(&[], &windows, ANY), 1);
    }

    #[test]
    fn a_request_carries_no_more_than_it_may_name() {
        let burst = [window(0, 1_000), window(100, 1_100), window(200, 1_200)];
        assert_eq!(fewest_extra_calls(&[], &burst, 2), 2);
        assert_eq!(fewest_extra_calls(&[], &burst, 3), 1);
        // The person's own request has room for two: the third needs a
        // call.
        assert_eq!(fewest_extra_calls(&[500], &burst, 2), 1);
        // The call at the first close carries the windows closing soonest,
        // and leaves the long one for later.
        let mixed = [window(0, 1_000), window(0, 9_000), window(500, 1_500)];
        assert_eq!(fewest_extra_calls(&[], &mixed, 2), 2);
        assert_eq!(fewest_extra_calls(&[8_000], &mixed, 2), 1);
    }

    #[test]
    fn no_window_needs_no_call() {
        assert_eq!(fewest_extra_calls(&[1, 2, 3], &[], ANY), 0);
    }
}
