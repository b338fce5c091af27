//! QPR's congestion control of unreliable data (seeds/002 §III-C): "QPR deploys congestion
//! control on unreliable datagrams, similar to that of reliable streams. However [...] the
//! data, which is sent unreliably, will be transmitted at the rate defined by the congestion
//! window (which is fixed) [...] retransmissions are not necessary in this case."
//!
//! [`KeepWindowOnUnreliableLoss`] wraps any of quinn's controllers (Cubic, NewReno, BBR). It
//! forwards every event except the loss of packets that carried only unreliable data (the
//! `on_unreliable_loss` hook of the patched quinn-proto, third_party/quinn-proto/
//! PRIOLAB-PATCH.md): that loss leaves the window as it is, and is counted. So datagrams are
//! still sent under the window (in flight, paced, grown by their ACKs as the inner controller
//! grows it), a lost stream packet still cuts the window as the inner controller does, and a
//! lost datagram does not. Our reading of "which is fixed": the window does not react to the
//! loss of unreliable data; it is not frozen at the initial window (at the scenarios' BDP of
//! 2400 bytes that would cap datagrams near 1 Mbit/s, below what any scheme reaches loss-free).

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use quinn_proto::congestion::{Controller, ControllerFactory, ControllerMetrics};
use quinn_proto::RttEstimator;

/// How the congestion controller treats a loss of unreliable data only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnreliableLoss {
    /// As any loss: the inner controller's congestion response (upstream quinn).
    Congestion,
    /// The window is kept (seeds/002 §III-C).
    KeepWindow,
}

/// Builds the inner controller and, for [`UnreliableLoss::KeepWindow`], wraps it.
pub struct Factory {
    pub inner: Arc<dyn ControllerFactory + Send + Sync>,
    pub mode: UnreliableLoss,
    /// Losses of unreliable data only that kept the window (shared with the summary).
    pub kept: Arc<AtomicU64>,
}

impl ControllerFactory for Factory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        let inner = self.inner.clone().build(now, current_mtu);
        match self.mode {
            UnreliableLoss::Congestion => inner,
            UnreliableLoss::KeepWindow => Box::new(KeepWindowOnUnreliableLoss {
                inner,
                kept: self.kept.clone(),
            }),
        }
    }
}

/// See the module's documentation.
pub struct KeepWindowOnUnreliableLoss {
    inner: Box<dyn Controller>,
    kept: Arc<AtomicU64>,
}

impl KeepWindowOnUnreliableLoss {
    pub fn new(inner: Box<dyn Controller>, kept: Arc<AtomicU64>) -> Self {
        Self { inner, kept }
    }
}

impl Controller for KeepWindowOnUnreliableLoss {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.inner.on_sent(now, bytes, last_packet_number)
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.inner.on_ack(now, sent, bytes, app_limited, rtt)
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        largest_packet_num_acked: Option<u64>,
    ) {
        self.inner
            .on_end_acks(now, in_flight, app_limited, largest_packet_num_acked)
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        self.inner
            .on_congestion_event(now, sent, is_persistent_congestion, lost_bytes)
    }

    fn on_unreliable_loss(&mut self, _: Instant, _: Instant, _: bool, _: u64) {
        self.kept.fetch_add(1, Ordering::Relaxed);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu)
    }

    fn window(&self) -> u64 {
        self.inner.window()
    }

    fn metrics(&self) -> ControllerMetrics {
        self.inner.metrics()
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Self {
            inner: self.inner.clone_box(),
            kept: self.kept.clone(),
        })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quinn_proto::congestion::CubicConfig;
    use std::time::Duration;

    fn cubic(window: u64) -> Box<dyn Controller> {
        let mut c = CubicConfig::default();
        c.initial_window(window);
        Arc::new(c).build(Instant::now(), 1200)
    }

    #[test]
    fn unreliable_loss_keeps_the_window_and_reliable_loss_cuts_it() {
        let kept = Arc::new(AtomicU64::new(0));
        let mut c = KeepWindowOnUnreliableLoss::new(cubic(120_000), kept.clone());
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_millis(30);
        c.on_unreliable_loss(t1, t0, false, 1200);
        c.on_unreliable_loss(t1, t0, true, 1200); // not even persistent congestion
        assert_eq!(c.window(), 120_000);
        assert_eq!(kept.load(Ordering::Relaxed), 2);
        c.on_congestion_event(t1, t0, false, 1200);
        assert!(c.window() < 120_000, "a stream loss cuts: {}", c.window());
    }

    #[test]
    fn without_the_wrapper_an_unreliable_loss_is_a_congestion_event() {
        // The patched quinn-proto's default: upstream behaviour for every other controller.
        let mut c = cubic(120_000);
        let t0 = Instant::now();
        c.on_unreliable_loss(t0 + Duration::from_millis(30), t0, false, 1200);
        assert!(c.window() < 120_000, "{}", c.window());
    }
}
