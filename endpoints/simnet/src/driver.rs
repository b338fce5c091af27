//! The driver: moves packets out of the link at their exit times and writes the stats lines,
//! moving tokio's paused clock with ns precision (see [`crate::runtime`] for why and how).

use crate::clock::MS_NS;
use crate::net::SimNet;
use std::future::{poll_fn, Future};
use std::task::Poll;

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

/// What the driver waits for.
#[derive(Clone, Copy)]
enum Until {
    /// The runtime idle at the current instant: every task that can run now has run.
    Idle,
    /// This ms boundary (a tokio timer), or a send bringing an earlier event.
    Tick(u64),
    /// A send.
    Send,
}

impl SimNet {
    /// The driver future: spawn it once on the runtime the net was built on; it runs until
    /// [`SimNet::finish`] (then returns) or is dropped.
    ///
    /// It handles an instant only once the runtime is idle at it, so everything the endpoints
    /// do at that instant (sends included) comes first, as linkem's `enqueue` has it ("an
    /// opportunity at exactly now serves this packet"); what it delivers is read at the same
    /// instant, before the clock moves on.
    pub async fn driver(self) {
        let origin = self.shared.origin;
        // The runtime is known to be idle at the current instant without asking.
        let mut idle = false;
        loop {
            if !std::mem::take(&mut idle) {
                self.wait(Until::Idle).await;
            }
            let now = origin.now_ns();
            let (delivered, next) = {
                let mut st = self.shared.lock();
                let delivered = st.poll(now);
                st.tick_stats(now);
                if st.is_finished() {
                    return;
                }
                (delivered, st.next_event_ns())
            };
            if delivered > 0 {
                // Its readers run at this instant first.
                continue;
            }
            match plan(now, next) {
                Plan::Now => {}
                Plan::Advance(t) => {
                    // advance moves the clock at its first poll, before it yields.
                    crate::clock::forget();
                    tokio::time::advance(std::time::Duration::from_nanos(t - now)).await;
                    // Off the ms grid no timer fires (tokio's ticks are whole ms), and the
                    // runtime was idle when the driver moved the clock: nothing can run at
                    // `t` before the driver, so asking whether it is idle there is a wasted
                    // park (one per packet).
                    idle = !t.is_multiple_of(MS_NS);
                }
                Plan::Sleep(t) => self.wait(Until::Tick(t)).await,
                Plan::Wait => self.wait(Until::Send).await,
            }
        }
    }

    async fn wait(&self, until: Until) {
        let origin = self.shared.origin;
        let mut sleep = match until {
            Until::Tick(t) => Some(Box::pin(tokio::time::sleep_until(origin.at(t)))),
            _ => None,
        };
        // The time the driver comes back by itself: a send with an event before it wakes it.
        let planned_ns = match until {
            Until::Idle => Some(0),
            Until::Tick(t) => Some(t),
            Until::Send => None,
        };
        let want_idle = matches!(until, Until::Idle);
        poll_fn(|cx| {
            let mut s = self.shared.signal.lock().expect("signal lock");
            let ready = if want_idle {
                s.idle_fired
            } else {
                s.dirty
                    || sleep
                        .as_mut()
                        .is_some_and(|sl| sl.as_mut().poll(cx).is_ready())
            };
            s.idle_fired = false;
            s.dirty = false;
            if ready {
                s.planned_ns = Some(0);
                s.idle_armed = false;
                return Poll::Ready(());
            }
            s.waker = Some(cx.waker().clone());
            s.idle_armed = want_idle;
            s.planned_ns = planned_ns;
            Poll::Pending
        })
        .await
    }
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
