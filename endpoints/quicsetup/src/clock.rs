//! The one clock of an endpoint: tokio's clock for durations and deadlines, and the Unix-epoch
//! time the logs carry derived from it. Under a paused tokio runtime (the sim site) tokio's
//! clock is virtual, so every time an endpoint reads or logs is virtual too.
//!
//! This module is the only place in the endpoint crates that reads `Instant::now()` or
//! `SystemTime::now()` (the test `tests/clock_only_here.rs` scans the sources for them).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// Cheap to copy; every copy reads the same time.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    epoch_unix_ns: u64,
    start: Instant,
    /// How it reads tokio's clock: [`tokio_now`], or the embedding program's equivalent
    /// ([`Clock::virtual_with`]).
    read: fn() -> Instant,
}

/// Two clocks are equal when they read the same times (however they read tokio's clock).
impl PartialEq for Clock {
    fn eq(&self, o: &Clock) -> bool {
        (self.epoch_unix_ns, self.start) == (o.epoch_unix_ns, o.start)
    }
}

impl Eq for Clock {}

/// tokio's clock.
pub fn tokio_now() -> Instant {
    Instant::now()
}

impl Clock {
    /// The real world: the Unix time is read from the system clock once, here, and advanced
    /// with tokio's (monotonic) clock from then on.
    pub fn real() -> Self {
        let epoch_unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Clock {
            epoch_unix_ns,
            start: Instant::now(),
            read: tokio_now,
        }
    }

    /// Virtual time: tokio's clock (paused under the sim) now is `epoch_unix_ns` since the
    /// Unix epoch. Make it inside the runtime whose clock it follows.
    pub fn virtual_from(epoch_unix_ns: u64) -> Self {
        Self::virtual_with(epoch_unix_ns, tokio_now)
    }

    /// As [`Clock::virtual_from`], reading tokio's clock through `read`, which must return
    /// what [`tokio_now`] would (the sim's reads it once per stretch in which the paused
    /// clock cannot move: simnet's `clock::now`).
    pub fn virtual_with(epoch_unix_ns: u64, read: fn() -> Instant) -> Self {
        Clock {
            epoch_unix_ns,
            start: read(),
            read,
        }
    }

    /// tokio's clock now (virtual under a paused runtime).
    pub fn now(&self) -> Instant {
        (self.read)()
    }

    /// The instant on tokio's clock at which this clock was made.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// The Unix time of [`Clock::start`], in ns.
    pub fn epoch_unix_ns(&self) -> u64 {
        self.epoch_unix_ns
    }

    /// Time on tokio's clock since this clock was made.
    pub fn elapsed(&self) -> Duration {
        self.now().saturating_duration_since(self.start)
    }

    /// Nanoseconds since the Unix epoch.
    pub fn unix_ns(&self) -> u64 {
        self.epoch_unix_ns
            .saturating_add(self.elapsed().as_nanos() as u64)
    }

    /// Microseconds since the Unix epoch: the time base of every endpoint's logs.
    pub fn unix_us(&self) -> u64 {
        self.unix_ns() / 1000
    }

    /// The instant on tokio's clock at which [`Clock::unix_us`] reads `target_us` (now if
    /// that is past).
    pub fn instant_at_unix_us(&self, target_us: u64) -> Instant {
        let now = self.now();
        now + Duration::from_micros(target_us.saturating_sub(self.unix_us()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn virtual_time_moves_only_with_tokio() {
        let c = Clock::virtual_from(1_767_225_600_000_000_000);
        assert_eq!(c.unix_us(), 1_767_225_600_000_000);
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(c.elapsed(), Duration::from_millis(1500));
        assert_eq!(c.unix_us(), 1_767_225_601_500_000);
        let at = c.instant_at_unix_us(1_767_225_602_000_000);
        assert_eq!(at - c.now(), Duration::from_millis(500));
        // a copy reads the same time
        let d = c;
        assert_eq!(d.unix_ns(), c.unix_ns());
    }

    #[test]
    fn real_time_is_near_the_system_clock() {
        let c = Clock::real();
        let sys = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_micros() as u64;
        assert!(
            c.unix_us().abs_diff(sys) < 1_000_000,
            "{} vs {sys}",
            c.unix_us()
        );
    }
}
