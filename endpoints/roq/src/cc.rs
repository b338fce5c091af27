//! QUIC congestion control for RTP over QUIC: NewReno (quinn's) or none (a pass-through
//! controller), each wrapped in a tap that passes quinn's acknowledgement and loss events to
//! the application, the closest honest substitute for per-datagram ACK/loss events, which
//! quinn 0.11 does not expose: `on_ack` gives each acknowledged QUIC packet's send time and
//! size (not which datagrams it carried), `on_congestion_event` gives lost bytes (not which
//! packets). The sender maps an ACK of a packet sent at `sent` to the RTP packets it handed to
//! quinn up to `sent` (endpoints/README.md, "roq").

use std::any::Any;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use quinn::congestion::{Controller, ControllerFactory, NewReno, NewRenoConfig};

/// What the tap saw.
#[derive(Debug, Clone, Copy)]
pub enum TapEvent {
    Ack { now: Instant, sent: Instant },
    Loss { now: Instant },
}

pub type Taps = Arc<Mutex<VecDeque<TapEvent>>>;

/// "Congestion control off": a window so large (1 GiB) that it never limits; quinn still
/// paces at window / RTT, which at 1 GiB per RTT is no limit either.
#[derive(Debug, Clone)]
pub struct PassThrough;

impl PassThrough {
    pub const WINDOW_BYTES: u64 = 1 << 30;
}

impl Controller for PassThrough {
    fn on_congestion_event(&mut self, _: Instant, _: Instant, _: bool, _: u64) {}
    fn on_mtu_update(&mut self, _: u16) {}
    fn window(&self) -> u64 {
        Self::WINDOW_BYTES
    }
    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }
    fn initial_window(&self) -> u64 {
        Self::WINDOW_BYTES
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Forwards everything to `inner` and records ACKs and losses in `taps`.
pub struct Tap {
    inner: Box<dyn Controller>,
    taps: Taps,
}

const TAP_MAX_EVENTS: usize = 1 << 16;

impl Tap {
    fn record(&self, e: TapEvent) {
        let mut q = self.taps.lock().unwrap();
        if q.len() < TAP_MAX_EVENTS {
            q.push_back(e);
        }
    }
}

impl Controller for Tap {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.inner.on_sent(now, bytes, last_packet_number)
    }
    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &quinn_proto::RttEstimator,
    ) {
        self.record(TapEvent::Ack { now, sent });
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
        now: Instant,
        sent: Instant,
        persistent: bool,
        lost_bytes: u64,
    ) {
        if lost_bytes > 0 {
            self.record(TapEvent::Loss { now });
        }
        self.inner
            .on_congestion_event(now, sent, persistent, lost_bytes)
    }
    fn on_mtu_update(&mut self, mtu: u16) {
        self.inner.on_mtu_update(mtu)
    }
    fn window(&self) -> u64 {
        self.inner.window()
    }
    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Tap {
            inner: self.inner.clone_box(),
            taps: self.taps.clone(),
        })
    }
    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Builds a tapped NewReno (`newreno`) or pass-through controller.
pub struct TapFactory {
    pub newreno: bool,
    pub taps: Taps,
}

impl ControllerFactory for TapFactory {
    fn build(self: Arc<Self>, now: Instant, mtu: u16) -> Box<dyn Controller> {
        let inner: Box<dyn Controller> = if self.newreno {
            Box::new(NewReno::new(Arc::new(NewRenoConfig::default()), now, mtu))
        } else {
            Box::new(PassThrough)
        };
        Box::new(Tap {
            inner,
            taps: self.taps.clone(),
        })
    }
}
