//! Where the unreliable objects travel and which congestion response their datagrams get
//! ([QPR §III-C]: unreliable data is sent "at the rate defined by the congestion window
//! (which is fixed)", not retransmitted; a lost datagram does not cut that window).
//!
//! quinn congestion-controls datagrams with the connection's one controller, which cuts its
//! window on every lost packet, and its `Controller` interface does not say what a lost
//! packet carried. Within quinn's public interface the two responses can only be told apart
//! by connection: [`UnreliablePath::FixedWindowConnection`] and
//! [`UnreliablePath::LossBlindConnection`] carry the datagrams on a second QUIC connection
//! between the same two sockets, whose controller is one of ours ([`FixedWindow`],
//! [`LossBlind`]); every loss on it is a datagram loss. The control stream and the reliable
//! objects stay on the first connection under the configured controller.

use std::any::Any;
use std::sync::Arc;
use std::time::Instant;

use quinn::congestion::{Controller, ControllerFactory};
use quinn_proto::RttEstimator;

/// How the unreliable objects travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnreliablePath {
    /// Datagrams on the one connection, under its controller (quinn's loss response: every
    /// lost packet, datagram or stream, cuts the shared window).
    Shared,
    /// A second connection whose window stays at the initial window: the paper's "(which
    /// is fixed)" read literally. It sends at most a window per round trip.
    FixedWindowConnection,
    /// A second connection under the configured controller with its loss response removed:
    /// the window starts at the initial window and grows on acknowledgements like the
    /// reliable streams' ("congestion control on unreliable datagrams, similar to that of
    /// reliable streams"), and is never cut.
    LossBlindConnection,
}

impl UnreliablePath {
    /// True if the datagrams go on a second connection.
    pub fn second_connection(self) -> bool {
        self != UnreliablePath::Shared
    }
}

/// A congestion window that does not react to acknowledgements or losses: `window` bytes
/// may be in flight whatever is acknowledged or lost. Lost packets leave the flight (quinn's
/// loss detection), so a loss frees room instead of shrinking it. It is never below quinn's
/// own minimum window, two packets of the current MTU (quinn's controllers' rule): with path
/// MTU discovery a 2400-byte window holds one 1452-byte packet, which the receiver
/// acknowledges only after its delayed-ACK timer (25 ms), a window per 45 ms instead of 20.
#[derive(Debug, Clone)]
pub struct FixedWindow {
    configured: u64,
    mtu: u16,
}

impl FixedWindow {
    pub fn new(window: u64, mtu: u16) -> Self {
        FixedWindow {
            configured: window,
            mtu,
        }
    }
}

impl Controller for FixedWindow {
    fn on_congestion_event(
        &mut self,
        _now: Instant,
        _sent: Instant,
        _persistent: bool,
        _lost: u64,
    ) {
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.mtu = new_mtu;
    }

    fn window(&self) -> u64 {
        self.configured.max(2 * u64::from(self.mtu))
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }

    fn initial_window(&self) -> u64 {
        self.configured
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Builds [`FixedWindow`] controllers of `window` bytes.
#[derive(Debug, Clone, Copy)]
pub struct FixedWindowConfig {
    pub window: u64,
}

impl ControllerFactory for FixedWindowConfig {
    fn build(self: Arc<Self>, _now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(FixedWindow::new(self.window, current_mtu))
    }
}

/// Another controller without its loss response: everything but a congestion event goes to
/// `inner`; a congestion event (loss, persistent congestion) is dropped.
pub struct LossBlind {
    inner: Box<dyn Controller>,
}

impl Controller for LossBlind {
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
        largest: Option<u64>,
    ) {
        self.inner.on_end_acks(now, in_flight, app_limited, largest)
    }

    fn on_congestion_event(
        &mut self,
        _now: Instant,
        _sent: Instant,
        _persistent: bool,
        _lost: u64,
    ) {
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu)
    }

    fn window(&self) -> u64 {
        self.inner.window()
    }

    fn metrics(&self) -> quinn::congestion::ControllerMetrics {
        self.inner.metrics()
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(LossBlind {
            inner: self.inner.clone_box(),
        })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Builds [`LossBlind`] controllers around the controllers `inner` builds.
pub struct LossBlindConfig {
    pub inner: Arc<dyn ControllerFactory + Send + Sync>,
}

impl ControllerFactory for LossBlindConfig {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(LossBlind {
            inner: self.inner.clone().build(now, current_mtu),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A start instant for the controllers (std's clock, through the endpoints' one clock).
    fn now() -> Instant {
        quicsetup::Clock::real().now().into_std()
    }
    use quinn::congestion::{CubicConfig, NewRenoConfig};
    use std::time::Duration;

    const MTU: u16 = 1200;

    /// Virtual time: `rounds` round trips of 20 ms from `t0`; each round the sender fills
    /// the window, and every `loss_every`-th round one packet of it is declared lost (a
    /// congestion event; every 10th of them persistent congestion). Returns the bytes the
    /// window let out per round. quinn's `on_ack` needs an `RttEstimator`, which only quinn
    /// can make, so no acknowledgement reaches the controller: growth is quinn's own code.
    fn rounds(c: &mut dyn Controller, rounds: u32, loss_every: u32) -> Vec<u64> {
        let t0 = now();
        let rtt = Duration::from_millis(20);
        let mut out = Vec::new();
        let mut pn = 0u64;
        let mut events = 0u32;
        for k in 0..rounds {
            let now = t0 + rtt * k;
            let w = c.window();
            c.on_sent(now, w, pn);
            pn += w.div_ceil(u64::from(MTU));
            out.push(w);
            if (k + 1).is_multiple_of(loss_every) {
                events += 1;
                let persistent = events.is_multiple_of(10);
                c.on_congestion_event(now + rtt, now, persistent, u64::from(MTU));
            }
        }
        out
    }

    #[test]
    fn the_fixed_window_keeps_its_size_through_losses_and_persistent_congestion() {
        let mut c = Arc::new(FixedWindowConfig { window: 15_000 }).build(now(), MTU);
        let sent = rounds(c.as_mut(), 200, 2);
        assert!(sent.iter().all(|&w| w == 15_000), "{sent:?}");
        c.on_mtu_update(1400);
        assert_eq!(c.window(), 15_000);
        assert_eq!(c.initial_window(), 15_000);
        assert_eq!(c.clone_box().window(), 15_000);
    }

    #[test]
    fn the_fixed_window_is_at_least_two_packets_of_the_current_mtu() {
        let mut c = Arc::new(FixedWindowConfig { window: 2400 }).build(now(), MTU);
        assert_eq!(c.window(), 2400);
        c.on_mtu_update(1452); // path MTU discovery
        assert_eq!(c.window(), 2904);
        let sent = rounds(c.as_mut(), 50, 1);
        assert!(sent.iter().all(|&w| w == 2904), "{sent:?}");
        assert_eq!(c.initial_window(), 2400);
    }

    #[test]
    fn quinn_cubic_under_the_same_losses_shrinks_to_its_minimum() {
        // The reference the fixed window departs from: quinn's loss response.
        let mut cfg = CubicConfig::default();
        cfg.initial_window(15_000);
        let mut c = Arc::new(cfg).build(now(), MTU);
        let sent = rounds(c.as_mut(), 200, 2);
        assert_eq!(sent[0], 15_000);
        assert!(*sent.last().unwrap() <= 2 * u64::from(MTU), "{sent:?}");
        let fixed: u64 = 200 * 15_000;
        assert!(sent.iter().sum::<u64>() < fixed / 4);
    }

    #[test]
    fn loss_blind_keeps_the_inner_window_and_ignores_congestion_events() {
        for inner in [
            {
                let mut c = CubicConfig::default();
                c.initial_window(20_000);
                Arc::new(c) as Arc<dyn ControllerFactory + Send + Sync>
            },
            {
                let mut c = NewRenoConfig::default();
                c.initial_window(20_000);
                Arc::new(c)
            },
        ] {
            let mut c = Arc::new(LossBlindConfig { inner }).build(now(), MTU);
            assert_eq!(c.initial_window(), 20_000);
            let sent = rounds(c.as_mut(), 100, 1);
            assert!(sent.iter().all(|&w| w == 20_000), "{sent:?}");
            assert_eq!(c.clone_box().window(), 20_000);
        }
    }

    #[test]
    fn only_the_shared_path_keeps_one_connection() {
        assert!(!UnreliablePath::Shared.second_connection());
        assert!(UnreliablePath::FixedWindowConnection.second_connection());
        assert!(UnreliablePath::LossBlindConnection.second_connection());
    }
}
