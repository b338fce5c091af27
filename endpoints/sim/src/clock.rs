//! The virtual clock of a run's processes. With `cost.rs` (the run's wall and CPU time), the
//! only module of priolab-sim that reads a clock.

use tokio::time::Instant;

/// The virtual clock every process of a run shares: Unix time = epoch + virtual time since
/// the run's origin (so all processes agree, as hosts of one machine do).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: Instant,
    epoch_unix_ns: u64,
}

impl Clock {
    pub fn new(origin: Instant, epoch_unix_ns: u64) -> Self {
        Clock {
            origin,
            epoch_unix_ns,
        }
    }

    pub fn now(&self) -> Instant {
        Instant::now()
    }

    pub fn unix_ns(&self) -> u64 {
        self.unix_ns_at(self.now())
    }

    /// Unix time of the virtual instant `t`.
    pub fn unix_ns_at(&self, t: Instant) -> u64 {
        self.epoch_unix_ns + t.saturating_duration_since(self.origin).as_nanos() as u64
    }
}
