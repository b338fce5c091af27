//! Timers the event loop polls only when they may be due.
//!
//! The loop's `select!` polls every pending timer at each turn (a turn per datagram), and
//! each poll of a tokio timer registers the task's waker with it again: a clone and a drop of
//! the waker and two atomic swaps, most of a turn's timer cost (endpoints/sim/README.md,
//! "Where the time goes"). A timer polled since its last reset by the same task, whose
//! deadline has not come, cannot be ready (tokio never fires a timer before its deadline) and
//! still holds that task's waker, which it wakes when it fires: polling it again changes
//! nothing, so [`Quiet`] leaves it out. Which branch fires, and when, is as before.

use std::task::{Context, Poll, Waker};

use tokio::time::{Instant, Interval};

/// The waker a timer was last left pending with (None: not since its last reset or firing).
#[derive(Debug, Default)]
pub struct Quiet(Option<Waker>);

impl Quiet {
    /// `poll` the timer unless it was left pending with this task's waker and `due` (no later
    /// than its deadline) is still ahead of `now`.
    pub fn poll<T>(
        &mut self,
        cx: &mut Context<'_>,
        now: Instant,
        due: Instant,
        poll: impl FnOnce(&mut Context<'_>) -> Poll<T>,
    ) -> Poll<T> {
        if now < due && self.0.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            return Poll::Pending;
        }
        let r = poll(cx);
        self.0 = r.is_pending().then(|| cx.waker().clone());
        r
    }

    /// The timer was reset: its next poll registers it again.
    pub fn forget(&mut self) {
        self.0 = None;
    }
}

/// A tokio [`Interval`] polled through [`Quiet`]: after a tick at `t` the next is due no
/// earlier than `t + period` (whatever the missed-tick behaviour: a late tick's successor
/// comes later still).
#[derive(Debug)]
pub struct Ticker {
    interval: Interval,
    due: Instant,
    quiet: Quiet,
}

impl Ticker {
    /// `interval`'s next tick is due no earlier than `due`.
    pub fn new(interval: Interval, due: Instant) -> Self {
        Ticker {
            interval,
            due,
            quiet: Quiet::default(),
        }
    }

    pub fn poll_tick(&mut self, cx: &mut Context<'_>, now: Instant) -> Poll<Instant> {
        let Ticker {
            interval,
            due,
            quiet,
        } = self;
        let r = quiet.poll(cx, now, *due, |cx| interval.poll_tick(cx));
        if let Poll::Ready(t) = r {
            *due = t + interval.period();
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quicsetup::clock::tokio_now;
    use std::future::{poll_fn, Future};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;
    use std::time::Duration;

    /// A waker that counts its wakes.
    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_pending_timer_is_left_out_until_due_and_still_fires() {
        let t0 = tokio_now();
        let mut sleep = Box::pin(tokio::time::sleep_until(t0 + Duration::from_millis(10)));
        let mut q = Quiet::default();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let due = sleep.deadline();
        let mut polls = 0;
        {
            let mut poll = |q: &mut Quiet, cx: &mut Context<'_>, now| {
                q.poll(cx, now, due, |cx| {
                    polls += 1;
                    sleep.as_mut().poll(cx)
                })
            };
            assert!(poll(&mut q, &mut cx, t0).is_pending());
            assert!(poll(&mut q, &mut cx, t0).is_pending());
            // Another task's waker: polled, so that the timer wakes that task.
            let other = Waker::from(Arc::new(Count(AtomicUsize::new(0))));
            assert!(poll(&mut q, &mut Context::from_waker(&other), t0).is_pending());
            assert!(poll(&mut q, &mut cx, t0).is_pending());
        }
        assert_eq!(polls, 3);
        // The timer still holds the waker it was left with, and fires on time.
        tokio::time::sleep_until(t0 + Duration::from_millis(10)).await;
        tokio::task::yield_now().await;
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        let now = tokio_now();
        assert!(q
            .poll(&mut cx, now, due, |cx| sleep.as_mut().poll(cx))
            .is_ready());
    }

    #[tokio::test(start_paused = true)]
    async fn a_ticker_ticks_as_its_interval() {
        let t0 = tokio_now();
        let period = Duration::from_millis(3);
        let mut plain = tokio::time::interval_at(t0, period);
        let mut quiet = Ticker::new(tokio::time::interval_at(t0, period), t0);
        for _ in 0..5 {
            let a = plain.tick().await;
            let b = poll_fn(|cx| quiet.poll_tick(cx, tokio_now())).await;
            assert_eq!(a, b);
            assert_eq!(quiet.due, b + period);
        }
    }
}
