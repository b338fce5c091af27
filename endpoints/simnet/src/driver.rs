//! The driver: moves packets out of the link at their exit times and writes the stats lines,
//! moving tokio's paused clock with ns precision (see [`crate::runtime`] for why and how).
//!
//! It is no task: the runtime calls [`Shared::on_idle`] from its park hook, exactly when
//! every task waits at the current instant. A task would cost a poll each time the runtime
//! goes idle, another after each move of the clock, and a wake-up by the sends that bring an
//! event forward; the hook re-plans at every idle instant instead, so a send wakes nothing.

use crate::clock::{forget, MS_NS};
use crate::net::Shared;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};
use std::time::Duration;

/// How the driver waits for its next event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// The event is due: handle it now.
    Now,
    /// Sleep on a tokio timer until this ms boundary (ns since the origin).
    Sleep(u64),
    /// Once the runtime is idle, advance the clock to this time (within the current ms).
    Advance(u64),
    /// Nothing to do until a packet is sent.
    Wait,
}

/// The plan at `now_ns` for the next event at `next_ns` (pure; see [`crate::runtime`]).
pub fn plan(now_ns: u64, next_ns: Option<u64>) -> Plan {
    let on_grid = now_ns.is_multiple_of(MS_NS);
    let boundary = (now_ns / MS_NS + 1) * MS_NS;
    match next_ns {
        Some(n) if n <= now_ns => Plan::Now,
        Some(n) if on_grid && n / MS_NS * MS_NS > now_ns => Plan::Sleep(n / MS_NS * MS_NS),
        Some(n) => Plan::Advance(n.min(boundary)),
        None if on_grid => Plan::Wait,
        None => Plan::Advance(boundary),
    }
}

impl Shared {
    /// The runtime is idle at the current instant: every task that can run now has run
    /// (called from the park hook, [`crate::runtime::build`]).
    ///
    /// It handles an instant only then, so everything the endpoints do at that instant
    /// (sends included) comes first, as linkem's `enqueue` has it ("an opportunity at exactly
    /// now serves this packet"); what it delivers is read at the same instant, before the
    /// clock moves on (the readers it wakes run, and the runtime is idle here again).
    pub(crate) fn on_idle(&self) {
        loop {
            let now = self.origin.now_ns();
            let (delivered, next) = {
                let mut st = self.lock();
                let delivered = st.poll(now);
                st.tick_stats(now);
                if st.is_finished() {
                    drop(st);
                    self.disarm();
                    return;
                }
                (delivered, st.next_event_ns())
            };
            if delivered > 0 {
                // Its readers run at this instant first.
                return;
            }
            match plan(now, next) {
                Plan::Now => {}
                Plan::Advance(t) => {
                    advance_clock(Duration::from_nanos(t - now));
                    if t.is_multiple_of(MS_NS) {
                        // Timers due at this tick fire first (the runtime processes them
                        // before it runs anything); the next idle instant handles `t`.
                        return;
                    }
                    // Off the ms grid no timer fires (tokio's ticks are whole ms), and the
                    // runtime was idle when the clock moved: nothing can run at `t` before
                    // the link, so it handles `t` at once.
                }
                Plan::Sleep(t) => {
                    self.arm(t);
                    return;
                }
                Plan::Wait => {
                    self.disarm();
                    return;
                }
            }
        }
    }

    /// Keep a tokio timer at `t` (a ms boundary), so that the parked runtime's clock stops
    /// there (or at an earlier timer of some task). Nothing waits on it: the runtime goes
    /// idle at `t` and calls the hook.
    fn arm(&self, t: u64) {
        let at = self.origin.at(t);
        let mut slot = self.timer.lock().expect("timer lock");
        if let Some(s) = slot.as_mut() {
            if s.deadline() != at {
                s.as_mut().reset(at);
            }
            return;
        }
        let mut s = Box::pin(tokio::time::sleep_until(at));
        // Registers the timer (a new Sleep is registered at its first poll or reset).
        s.as_mut().reset(at);
        *slot = Some(s);
    }

    /// No timer needed: nothing happens on the link until a send.
    fn disarm(&self) {
        self.timer.lock().expect("timer lock").take();
    }
}

/// Move tokio's paused clock forward by `d` now, from the runtime's park hook.
///
/// `tokio::time::advance` moves the clock at its first poll and then yields (it wakes its
/// task through the scheduler's deferred list, here a no-op waker, which also makes the
/// runtime process its timers before it runs anything). Only the move is wanted: the future
/// is dropped after that first poll.
fn advance_clock(d: Duration) {
    let mut fut = pin!(tokio::time::advance(d));
    let _ = fut.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    forget();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_keep_the_clock_on_ms_boundaries_between_events() {
        // On the grid, event in a later ms: sleep to that ms, not past the event.
        assert_eq!(plan(5 * MS_NS, Some(7_300_000)), Plan::Sleep(7 * MS_NS));
        // Event within the current ms: advance to it exactly.
        assert_eq!(plan(7 * MS_NS, Some(7_300_000)), Plan::Advance(7_300_000));
        // Off the grid, event beyond the next boundary: back to the boundary first.
        assert_eq!(plan(7_300_000, Some(9_100_000)), Plan::Advance(8 * MS_NS));
        assert_eq!(plan(7_300_000, Some(7_900_000)), Plan::Advance(7_900_000));
        assert_eq!(plan(7_300_000, Some(7_300_000)), Plan::Now);
        assert_eq!(plan(7_300_000, None), Plan::Advance(8 * MS_NS));
        assert_eq!(plan(8 * MS_NS, None), Plan::Wait);
    }
}
