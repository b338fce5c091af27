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

enum Woke {
    Dirty,
    Idle,
    Timer,
}

impl SimNet {
    /// The driver future: spawn it once on the runtime the net was built on; it runs until
    /// [`SimNet::finish`] (then returns) or is dropped.
    pub async fn driver(self) {
        let origin = self.shared.origin;
        loop {
            let now = origin.now_ns();
            let next = {
                let mut st = self.shared.lock();
                st.poll(now);
                st.tick_stats(now);
                if st.is_finished() {
                    return;
                }
                st.next_event_ns()
            };
            let p = plan(now, next);
            if p == Plan::Now {
                continue;
            }
            let mut sleep = match p {
                Plan::Sleep(t) => Some(Box::pin(tokio::time::sleep_until(origin.at(t)))),
                _ => None,
            };
            let want_idle = matches!(p, Plan::Advance(_));
            let planned_ns = match p {
                Plan::Sleep(t) | Plan::Advance(t) => Some(t),
                Plan::Now | Plan::Wait => None,
            };
            let woke = poll_fn(|cx| {
                let mut s = self.shared.signal.lock().expect("signal lock");
                let ready = if s.dirty {
                    Some(Woke::Dirty)
                } else if s.idle_fired && want_idle {
                    Some(Woke::Idle)
                } else if sleep
                    .as_mut()
                    .is_some_and(|sl| sl.as_mut().poll(cx).is_ready())
                {
                    Some(Woke::Timer)
                } else {
                    None
                };
                s.idle_fired = false;
                if let Some(w) = ready {
                    s.dirty = false;
                    s.planned_ns = Some(0);
                    return Poll::Ready(w);
                }
                s.waker = Some(cx.waker().clone());
                s.idle_armed = want_idle;
                s.planned_ns = planned_ns;
                Poll::Pending
            })
            .await;
            if let (Woke::Idle, Plan::Advance(t)) = (woke, p) {
                let now = origin.now_ns();
                if t > now {
                    tokio::time::advance(std::time::Duration::from_nanos(t - now)).await;
                }
            }
        }
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
