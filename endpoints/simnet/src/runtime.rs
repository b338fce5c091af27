//! The runtime a [`crate::SimNet`] runs on, and how its driver keeps ns precision.
//!
//! tokio's paused clock jumps, when every task waits, to the next timer; its timer wheel
//! ticks in whole ms (a deadline is rounded up to the next ms). Left to that, every packet
//! would leave the link on a ms boundary. So the driver moves the clock itself, by
//! [`tokio::time::advance`], but only when the runtime is idle (no task can run at the
//! current instant: the `on_thread_park` hook, which current-thread tokio calls exactly
//! then, tells it) and never past the next ms boundary, so every other task's timer still
//! fires exactly at its tick:
//!
//! - next link event (a departure or a stats line) in a later ms, clock on a ms boundary:
//!   sleep until that event's ms boundary with an ordinary tokio timer (tokio jumps there,
//!   or to an earlier timer of some other task, in whole ms);
//! - next event within the current ms: once idle, advance to it (ns precision);
//! - clock between boundaries with nothing due before the next one: once idle, advance to
//!   that boundary, which puts the clock back on the grid.

use crate::clock::{forget, tokio_now, Origin};
use std::io;
use std::sync::{Arc, Mutex};
use std::task::Waker;

/// What wakes the driver: a packet entered the link with an event before the one the driver
/// waits for (`dirty`), or the runtime went idle while the driver asked to hear of it.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    pub waker: Option<Waker>,
    pub dirty: bool,
    /// While the driver waits: the time it will wake at by itself (None: only when poked).
    pub planned_ns: Option<u64>,
    pub idle_armed: bool,
    pub idle_fired: bool,
}

/// A current-thread, paused tokio runtime with the idle hook a SimNet needs, and the origin
/// of its virtual time.
pub struct SimRuntime {
    pub rt: tokio::runtime::Runtime,
    pub origin: Origin,
    pub(crate) signal: Arc<Mutex<Signal>>,
}

/// Build the runtime (tokio's clock paused from the start).
pub fn build() -> io::Result<SimRuntime> {
    let signal: Arc<Mutex<Signal>> = Arc::default();
    let hook = signal.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .on_thread_park(move || {
            // Parking is where tokio moves its paused clock.
            forget();
            let mut s = hook.lock().expect("signal lock");
            if s.idle_armed {
                s.idle_armed = false;
                s.idle_fired = true;
                if let Some(w) = s.waker.take() {
                    w.wake();
                }
            }
        })
        .on_thread_unpark(forget)
        .build()?;
    // A reading left by an earlier runtime on this thread is not this one's time.
    forget();
    // The paused clock has not moved: this is the timer wheel's own origin.
    let origin = Origin(rt.block_on(async { tokio_now() }));
    Ok(SimRuntime { rt, origin, signal })
}
