//! One run: rise-core's Host and Guest, each over a [`Conn`], joined by two [`Link`]s
//! (uplink Guest → Host, downlink Host → Guest), driven event by event in virtual time.

use crate::cc::CcKind;
use crate::conn::{Blocked, Conn, Feed, Packet};
use crate::link::{Link, Policer};
use linkem::config::DirectionConfig;
use rise_core::{Config, Endpoint, Event};

/// Virtual Unix-epoch µs at the start of a run (as rise-core's own `sim::START_US`).
pub const START_US: u64 = rise_core::sim::START_US;

/// How cwnd and queue are sampled (the rise binary logs path stats every 100 ms).
pub const SAMPLE_NS: u64 = 100_000_000;

#[derive(Debug, Clone)]
pub struct SideConfig {
    pub endpoint: Config,
    pub feed: Feed,
    /// quinn's `datagram_send_buffer_size`.
    pub quinn_buffer_bytes: usize,
}

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub host: SideConfig,
    pub guest: SideConfig,
    /// Guest → Host.
    pub up: DirectionConfig,
    pub up_policer: Option<Policer>,
    /// Host → Guest.
    pub down: DirectionConfig,
    pub down_policer: Option<Policer>,
    pub cc: CcKind,
    /// quinn's path MTU (UDP payload).
    pub quic_mtu: u64,
    pub duration_ns: u64,
    /// Seed of the links' randomness (the endpoints have their own in `Config::seed`).
    pub link_seed: u64,
    /// The Host's endpoint starts this long after the Guest's: the phase between the Guest's
    /// tracking ticks and the Host's frame ticks, which sets the age of the sample a frame is
    /// rendered from (in the real stack: process start and handshake timing).
    pub host_start_offset_us: u64,
    /// The RTT the QUIC handshake measured before the run starts (quinn has this sample when
    /// `rise` starts streaming); None: start from quinn's initial 333 ms.
    pub handshake_rtt_ns: Option<u64>,
    /// Each endpoint's thread time per received packet. While it lasts, the endpoint does not
    /// refill quinn's buffer (`rise`'s loop polls `read_datagram` before the waiting send,
    /// `select!` biased); quinn itself still acknowledges and sends what it holds. 0: no cost
    /// (the endpoints take no CPU time).
    pub rx_cost_ns: u64,
}

/// What a run leaves for the metrics.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    /// (display time µs, MTP ms or None) of frames displayed at this endpoint.
    pub displays: Vec<(u64, Option<f64>)>,
    pub frames_sent: u64,
    /// (time ns, cwnd bytes, in flight bytes, bytes waiting in the channels and quinn's buffer:
    /// B's occupancy in every scheme, also when B is quinn's own buffer).
    pub samples: Vec<(u64, u64, u64, usize)>,
}

pub struct Side {
    pub core: Endpoint,
    pub conn: Conn,
    pub trace: Trace,
    /// The endpoint's thread is busy with received packets until then.
    busy_until_ns: u64,
}

impl Side {
    fn receive(&mut self, now_ns: u64, p: Packet, rx_cost_ns: u64) {
        if rx_cost_ns > 0 {
            self.busy_until_ns = self.busy_until_ns.max(now_ns) + rx_cost_ns;
            self.conn.feed_hold_until_ns = self.busy_until_ns;
        }
        self.conn.on_packet(now_ns, p, &mut self.core);
    }
}

pub struct Run {
    pub now_ns: u64,
    pub host: Side,
    pub guest: Side,
    pub up: Link,
    pub down: Link,
    pub cfg: RunConfig,
    next_sample_ns: u64,
    scratch: Vec<Packet>,
}

fn side(cfg: &SideConfig, run: &RunConfig, start_offset_us: u64) -> Side {
    let mut conn = Conn::new(run.cc, run.quic_mtu, cfg.feed, cfg.quinn_buffer_bytes, 0);
    if let Some(rtt) = run.handshake_rtt_ns {
        conn.rtt.update(0, rtt);
    }
    let mut core = Endpoint::new(cfg.endpoint.clone(), START_US + start_offset_us);
    core.set_max_datagram_size(conn.max_payload());
    Side {
        core,
        conn,
        trace: Trace::default(),
        busy_until_ns: 0,
    }
}

fn to_us(ns: u64) -> u64 {
    START_US + ns / 1000
}

fn to_ns(us: u64) -> u64 {
    us.saturating_sub(START_US).saturating_mul(1000)
}

impl Run {
    pub fn new(cfg: RunConfig) -> Self {
        Run {
            now_ns: 0,
            host: side(&cfg.host, &cfg, cfg.host_start_offset_us),
            guest: side(&cfg.guest, &cfg, 0),
            up: Link::new(&cfg.up, cfg.up_policer.clone(), cfg.link_seed, 0),
            down: Link::new(&cfg.down, cfg.down_policer.clone(), cfg.link_seed, 1),
            next_sample_ns: 0,
            scratch: Vec::new(),
            cfg,
        }
    }

    fn transmit(&mut self) {
        let now = self.now_ns;
        for (s, link) in [
            (&mut self.host, &mut self.down),
            (&mut self.guest, &mut self.up),
        ] {
            while let Some(p) = s.conn.poll_transmit(now, &mut s.core) {
                link.send(now, p);
            }
            while let Some(e) = s.core.poll_event() {
                match e {
                    Event::FrameDisplayed {
                        display_time_us,
                        mtp_ms,
                        ..
                    } => s.trace.displays.push((display_time_us, mtp_ms)),
                    Event::FrameSent { .. } => s.trace.frames_sent += 1,
                    _ => {}
                }
            }
        }
    }

    fn next_event_ns(&self) -> u64 {
        let mut t = self.cfg.duration_ns.min(self.next_sample_ns);
        for s in [&self.host, &self.guest] {
            t = t.min(to_ns(s.core.poll_timeout()));
            if let Some(x) = s.conn.next_timer() {
                t = t.min(x);
            }
            if s.conn.feed_hold_until_ns > self.now_ns {
                t = t.min(s.conn.feed_hold_until_ns);
            }
        }
        for l in [&self.up, &self.down] {
            if l.has_output() {
                t = t.min(self.now_ns);
            }
            if let Some(x) = l.next_wakeup_ns() {
                t = t.min(x);
            }
        }
        t.max(self.now_ns + 1)
    }

    /// Run to the configured duration.
    pub fn run(&mut self) {
        loop {
            self.transmit();
            let next = self.next_event_ns();
            let dt = next.min(self.cfg.duration_ns).saturating_sub(self.now_ns);
            for s in [&mut self.host, &mut self.guest] {
                if s.conn.has_data() || s.core.has_pending() {
                    match s.conn.blocked {
                        Blocked::Cwnd => s.conn.stats.cwnd_limited_ns += dt,
                        Blocked::Pacing => s.conn.stats.pacing_limited_ns += dt,
                        Blocked::None => {}
                    }
                }
            }
            if next > self.cfg.duration_ns {
                self.now_ns = self.cfg.duration_ns;
                break;
            }
            self.now_ns = next;
            let now = next;
            if now >= self.next_sample_ns {
                self.next_sample_ns += SAMPLE_NS;
                for s in [&mut self.host, &mut self.guest] {
                    s.trace.samples.push((
                        now,
                        s.conn.cwnd(),
                        s.conn.in_flight(),
                        s.core.pending_bytes() + s.conn.buffered_bytes(),
                    ));
                }
                self.up.queue_samples.push(self.up.queue_bytes());
                self.down.queue_samples.push(self.down.queue_bytes());
            }
            let mut arrived = std::mem::take(&mut self.scratch);
            self.up.poll(now, &mut arrived);
            let cost = self.cfg.rx_cost_ns;
            for p in arrived.drain(..) {
                self.host.receive(now, p, cost);
            }
            self.down.poll(now, &mut arrived);
            for p in arrived.drain(..) {
                self.guest.receive(now, p, cost);
            }
            self.scratch = arrived;
            for s in [&mut self.host, &mut self.guest] {
                s.conn.handle_timers(now);
                let now_us = to_us(now);
                if s.core.poll_timeout() <= now_us {
                    s.core.handle_timeout(now_us);
                }
            }
        }
    }
}
