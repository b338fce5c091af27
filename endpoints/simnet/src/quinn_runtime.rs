//! quinn's tokio runtime with one change: `now()` reads tokio's clock through
//! [`crate::clock::now`] (quinn reads it per packet sent and per timer it arms).

use crate::clock;
use quinn::{AsyncTimer, AsyncUdpSocket, Runtime, TokioRuntime};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

/// quinn's [`TokioRuntime`], reading the clock through simnet's per-thread reading.
#[derive(Debug, Default)]
pub struct SimQuinnRuntime;

impl Runtime for SimQuinnRuntime {
    fn new_timer(&self, i: Instant) -> Pin<Box<dyn AsyncTimer>> {
        TokioRuntime.new_timer(i)
    }

    fn spawn(&self, future: Pin<Box<dyn Future<Output = ()> + Send>>) {
        TokioRuntime.spawn(future)
    }

    fn wrap_udp_socket(&self, t: std::net::UdpSocket) -> io::Result<Arc<dyn AsyncUdpSocket>> {
        TokioRuntime.wrap_udp_socket(t)
    }

    fn now(&self) -> Instant {
        clock::now().into_std()
    }
}
