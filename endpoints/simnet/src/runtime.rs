//! The runtime a [`crate::SimNet`] runs on, and how its driver keeps ns precision.
//!
//! tokio's paused clock jumps, when every task waits, to the next timer; its timer wheel
//! ticks in whole ms (a deadline is rounded up to the next ms). Left to that, every packet
//! would leave the link on a ms boundary. So the driver moves the clock itself, by
//! [`tokio::time::advance`], but only when the runtime is idle (no task can run at the
//! current instant: the `on_thread_park` hook, which current-thread tokio calls exactly
//! then, runs the driver, [`crate::driver`]) and never past the next ms boundary, so every
//! other task's timer still fires exactly at its tick:
//!
//! - next link event (a departure or a stats line) in a later ms, clock on a ms boundary:
//!   sleep until that event's ms boundary with an ordinary tokio timer (tokio jumps there,
//!   or to an earlier timer of some other task, in whole ms);
//! - next event within the current ms: once idle, advance to it (ns precision);
//! - clock between boundaries with nothing due before the next one: once idle, advance to
//!   that boundary, which puts the clock back on the grid.

use crate::clock::{forget, tokio_now, Origin};
use crate::net::Shared;
use std::io;
use std::sync::{Arc, OnceLock, Weak};

/// The net a runtime drives from its park hook (set once, by [`crate::SimNet::new`]).
pub(crate) type NetSlot = Arc<OnceLock<Weak<Shared>>>;

/// A current-thread, paused tokio runtime whose park hook drives the [`crate::SimNet`] built
/// on it, and the origin of its virtual time.
pub struct SimRuntime {
    pub rt: tokio::runtime::Runtime,
    pub origin: Origin,
    pub(crate) net: NetSlot,
}

/// Build the runtime (tokio's clock paused from the start).
pub fn build() -> io::Result<SimRuntime> {
    let net: NetSlot = Arc::default();
    let hook = net.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .on_thread_park(move || {
            // Parking is where tokio moves its paused clock.
            forget();
            // Current-thread tokio calls this exactly when no task can run now.
            if let Some(shared) = hook.get().and_then(Weak::upgrade) {
                shared.on_idle();
            }
        })
        .on_thread_unpark(forget)
        .build()?;
    // A reading left by an earlier runtime on this thread is not this one's time.
    forget();
    // The paused clock has not moved: this is the timer wheel's own origin.
    let origin = Origin(rt.block_on(async { tokio_now() }));
    Ok(SimRuntime { rt, origin, net })
}
