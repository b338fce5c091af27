//! Virtual time: ns since the simulation's origin on tokio's (paused) clock. The only module
//! of simnet that reads a clock.

use std::time::Duration;
use tokio::time::Instant;

/// One ms: the tick of tokio's timer wheel.
pub const MS_NS: u64 = 1_000_000;

/// The origin of virtual time, taken when the runtime was built, so tokio's timer ticks fall
/// on whole ms since it.
#[derive(Debug, Clone, Copy)]
pub struct Origin(pub(crate) Instant);

impl Origin {
    /// Now, in ns since the origin.
    pub fn now_ns(&self) -> u64 {
        Instant::now().saturating_duration_since(self.0).as_nanos() as u64
    }

    /// The instant `ns` after the origin.
    pub fn at(&self, ns: u64) -> Instant {
        self.0 + Duration::from_nanos(ns)
    }

    /// The origin itself, as a tokio instant.
    pub fn instant(&self) -> Instant {
        self.0
    }
}

/// Read tokio's clock (inside the runtime: virtual).
pub(crate) fn tokio_now() -> Instant {
    Instant::now()
}
