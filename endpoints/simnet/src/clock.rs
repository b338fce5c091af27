//! Virtual time: ns since the simulation's origin on tokio's (paused) clock. The only module
//! of simnet that reads a clock.
//!
//! Reading tokio's clock takes a mutex and clones the runtime handle; the endpoints, quinn and
//! simnet read it several times per packet, which made it a tenth of a run's CPU. Under a
//! [`crate::runtime::SimRuntime`] the paused clock moves only while the runtime parks (tokio
//! jumps it to the next timer) and when the driver advances it, so [`now`] keeps the last
//! reading per thread and [`forget`] drops it at exactly those points (the runtime's park and
//! unpark hooks, and the driver when it advances): between them every read gives what
//! tokio's clock gives.

use std::cell::Cell;
use std::time::Duration;
use tokio::time::Instant;

/// One ms: the tick of tokio's timer wheel.
pub const MS_NS: u64 = 1_000_000;

thread_local! {
    /// tokio's clock as last read on this thread, while it cannot have moved since.
    static CACHED: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// tokio's clock now, read once per stretch in which it cannot move. Call it only on a
/// [`crate::runtime::SimRuntime`]'s thread while that runtime runs.
pub fn now() -> Instant {
    CACHED.with(|c| {
        c.get().unwrap_or_else(|| {
            let t = Instant::now();
            c.set(Some(t));
            t
        })
    })
}

/// The clock may move: the next [`now`] reads it afresh.
pub(crate) fn forget() {
    CACHED.with(|c| c.set(None));
}

/// The origin of virtual time, taken when the runtime was built, so tokio's timer ticks fall
/// on whole ms since it.
#[derive(Debug, Clone, Copy)]
pub struct Origin(pub(crate) Instant);

impl Origin {
    /// Now, in ns since the origin.
    pub fn now_ns(&self) -> u64 {
        now().saturating_duration_since(self.0).as_nanos() as u64
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

/// Read tokio's clock (inside the runtime: virtual), past the cache.
pub(crate) fn tokio_now() -> Instant {
    Instant::now()
}
