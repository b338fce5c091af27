//! The virtual clock of a run's processes, with the interface of `quicsetup::clock::Clock`
//! (so programs written against that one compile against this one). With `cost.rs` (the
//! run's wall and CPU time), the only module of priolab-sim that reads a clock.

use std::time::Duration;
use tokio::time::Instant;

/// tokio's clock, and the Unix time it stands for. Make it once, at the run's origin, and give
/// every process a copy: then every process logs the same Unix time for one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    epoch_unix_ns: u64,
    start: Instant,
}

impl Clock {
    /// tokio's clock now (inside the paused runtime: virtual) is `epoch_unix_ns`.
    pub fn virtual_from(epoch_unix_ns: u64) -> Self {
        Clock {
            epoch_unix_ns,
            start: Instant::now(),
        }
    }

    pub fn now(&self) -> Instant {
        Instant::now()
    }

    /// Time since the clock was made.
    pub fn elapsed(&self) -> Duration {
        self.now().saturating_duration_since(self.start)
    }

    pub fn unix_ns(&self) -> u64 {
        self.epoch_unix_ns + self.elapsed().as_nanos() as u64
    }

    pub fn unix_us(&self) -> u64 {
        self.unix_ns() / 1000
    }
}
