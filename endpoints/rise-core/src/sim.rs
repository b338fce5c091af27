//! A small deterministic network model for virtual-time tests: a Host and a Guest [`Endpoint`]
//! connected by two one-way links, driven event by event.
//!
//! A [`Link`] is one direction of linkem's own link core ([`linkem::Direction`], the model
//! the emulator and the sim site run): a constant-rate server behind a drop-tail queue of
//! `queue_bytes`, a propagation delay, and seeded iid loss on the way out. Each datagram
//! occupies `len + overhead_bytes` on the wire. The core keeps time in ns; the endpoints here
//! tick in µs, and a datagram is handed to its receiver at the first µs at or after it left.
//!
//! The sender side models "the transport can take a datagram": an endpoint is polled for
//! egress only while its link's backlog (the bytes queued and in transmission) is below
//! `nic_bytes` (about one datagram models quinn's tiny datagram buffer feeding a local
//! bottleneck, so queueing happens in the priority channels; a huge value dumps everything
//! into the drop-tail queue at once). No congestion control is modelled.

use crate::endpoint::{Endpoint, Event};
use crate::Config;
use linkem::config::{
    DirectionConfig, DropPolicy, LossConfig, QueueConfig, QueueLimit, RateConfig,
};
use linkem::{Direction, DropCause, Event as LinkEvent};
use std::collections::{BTreeMap, VecDeque};

/// One direction of the path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkConfig {
    pub rate_bps: u64,
    pub delay_us: u64,
    /// Drop-tail queue capacity, bytes on the wire.
    pub queue_bytes: usize,
    /// Random loss probability per datagram.
    pub loss: f64,
    /// Per-datagram overhead on the wire (headers), bytes.
    pub overhead_bytes: usize,
    pub seed: u64,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            rate_bps: 100_000_000,
            delay_us: 10_000,
            queue_bytes: 1 << 20,
            loss: 0.0,
            overhead_bytes: 40,
            seed: 1,
        }
    }
}

impl LinkConfig {
    /// linkem's config of this direction.
    pub fn direction(&self) -> DirectionConfig {
        DirectionConfig {
            rate: RateConfig::Constant {
                rate_bps: self.rate_bps.max(1),
            },
            delay_ns: self.delay_us * 1000,
            jitter_ns: 0,
            jitter_reorder: false,
            loss: if self.loss > 0.0 {
                LossConfig::Iid {
                    p: self.loss.min(1.0),
                }
            } else {
                LossConfig::None
            },
            queue: Some(QueueConfig {
                limit: QueueLimit::Bytes(self.queue_bytes as u64),
                drop: DropPolicy::Tail,
            }),
        }
    }
}

/// The largest datagram the core takes: far above any the endpoints send (the size check is
/// the emulator's, for Ethernet frames; this model has none).
const MAX_DATAGRAM_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub offered: u64,
    pub dropped_queue: u64,
    pub dropped_loss: u64,
    pub dropped_filter: u64,
    pub delivered: u64,
}

/// Decides per datagram whether the path drops it: `(now_us, bytes) -> drop?`.
pub type Filter = Box<dyn FnMut(u64, &[u8]) -> bool>;

/// A datagram inside the link, by its sequence number.
struct OnWire {
    bytes: Vec<u8>,
    /// The filter chose to drop it on the path.
    filtered: bool,
}

pub struct Link {
    cfg: LinkConfig,
    core: Direction<u64>,
    /// Every datagram inside the core (queued, in transmission or propagating), by sequence.
    on_wire: BTreeMap<u64, OnWire>,
    next_seq: u64,
    /// Datagrams out of the link, with the µs their receiver gets them, oldest first.
    arrived: VecDeque<(u64, Vec<u8>)>,
    events: Vec<LinkEvent<u64>>,
    filter: Option<Filter>,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(cfg: LinkConfig) -> Self {
        Link {
            core: Direction::new(&cfg.direction(), MAX_DATAGRAM_BYTES, cfg.seed, 0),
            cfg,
            on_wire: BTreeMap::new(),
            next_seq: 0,
            arrived: VecDeque::new(),
            events: Vec::new(),
            filter: None,
            stats: LinkStats::default(),
        }
    }

    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Drop datagrams for which `f(now_us, bytes)` is true (in addition to random loss),
    /// decided when they are sent; such a datagram still takes its place on the link.
    pub fn set_filter(&mut self, f: impl FnMut(u64, &[u8]) -> bool + 'static) {
        self.filter = Some(Box::new(f));
    }

    /// Bytes queued or in transmission, as of the last `send` or `poll`.
    pub fn backlog_bytes(&self) -> usize {
        self.core.backlog_bytes() as usize
    }

    pub fn send(&mut self, now_us: u64, bytes: Vec<u8>) {
        self.stats.offered += 1;
        let seq = self.next_seq;
        self.next_seq += 1;
        let wire = (bytes.len() + self.cfg.overhead_bytes) as u64;
        self.on_wire.insert(
            seq,
            OnWire {
                bytes,
                filtered: false,
            },
        );
        self.core
            .enqueue(now_us * 1000, seq, wire, &mut self.events);
        self.handle_events();
        if let (Some(f), Some(d)) = (&mut self.filter, self.on_wire.get_mut(&seq)) {
            if f(now_us, &d.bytes) {
                d.filtered = true;
                self.stats.dropped_filter += 1;
            }
        }
    }

    /// Move the link to `now_us`.
    pub fn poll(&mut self, now_us: u64) {
        self.core.poll(now_us * 1000, &mut self.events);
        self.handle_events();
    }

    fn handle_events(&mut self) {
        for ev in self.events.drain(..) {
            match ev {
                LinkEvent::Sent { pkt, at_ns } => {
                    let d = self
                        .on_wire
                        .remove(&pkt.payload)
                        .expect("a datagram on the wire");
                    if !d.filtered {
                        self.arrived.push_back((at_ns.div_ceil(1000), d.bytes));
                    }
                }
                LinkEvent::Dropped { pkt, cause, .. } => {
                    self.on_wire.remove(&pkt.payload);
                    match cause {
                        DropCause::Queue => self.stats.dropped_queue += 1,
                        DropCause::Loss => self.stats.dropped_loss += 1,
                        DropCause::Oversized | DropCause::Police => {
                            unreachable!("no size limit and no policer here")
                        }
                    }
                }
            }
        }
    }

    /// Datagrams on the wire (sent, not yet delivered, not dropped by the filter), oldest
    /// first; one the loss model will drop counts until it leaves the link.
    pub fn in_flight(&self) -> impl Iterator<Item = &[u8]> {
        let on_wire = self.on_wire.values().filter(|d| !d.filtered);
        on_wire
            .map(|d| d.bytes.as_slice())
            .chain(self.arrived.iter().map(|a| a.1.as_slice()))
    }

    /// When the link next has something to do or to hand over (µs).
    pub fn next_event_us(&self) -> Option<u64> {
        let core = self.core.next_wakeup_ns().map(|t| t.div_ceil(1000));
        match (self.arrived.front().map(|a| a.0), core) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn pop_arrival(&mut self, now_us: u64) -> Option<Vec<u8>> {
        self.poll(now_us);
        if self.arrived.front()?.0 <= now_us {
            self.stats.delivered += 1;
            self.arrived.pop_front().map(|a| a.1)
        } else {
            None
        }
    }
}

/// The whole path: `up` carries Guest → Host, `down` Host → Guest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathConfig {
    pub up: LinkConfig,
    pub down: LinkConfig,
    /// An endpoint is polled for egress while its link's backlog is below this many bytes.
    pub nic_bytes: usize,
}

impl Default for PathConfig {
    fn default() -> Self {
        PathConfig {
            up: LinkConfig::default(),
            down: LinkConfig {
                seed: 2,
                ..LinkConfig::default()
            },
            nic_bytes: 1500,
        }
    }
}

/// Virtual time starts here (µs), like a Unix-epoch clock would.
pub const START_US: u64 = 1_700_000_000_000_000;

pub struct Sim {
    pub now_us: u64,
    pub host: Endpoint,
    pub guest: Endpoint,
    /// Guest → Host.
    pub up: Link,
    /// Host → Guest.
    pub down: Link,
    pub nic_bytes: usize,
    pub host_events: Vec<(u64, Event)>,
    pub guest_events: Vec<(u64, Event)>,
}

impl Sim {
    pub fn new(host: Config, guest: Config, path: PathConfig) -> Self {
        Sim {
            now_us: START_US,
            host: Endpoint::new(host, START_US),
            guest: Endpoint::new(guest, START_US),
            up: Link::new(path.up),
            down: Link::new(path.down),
            nic_bytes: path.nic_bytes.max(1),
            host_events: Vec::new(),
            guest_events: Vec::new(),
        }
    }

    fn pump(&mut self) {
        let now = self.now_us;
        for (ep, link) in [
            (&mut self.host, &mut self.down),
            (&mut self.guest, &mut self.up),
        ] {
            link.poll(now);
            while link.backlog_bytes() < self.nic_bytes {
                let space = ep.max_datagram_size();
                match ep.poll_transmit(now, space) {
                    Some(t) => link.send(now, t.bytes),
                    None => break,
                }
            }
        }
        while let Some(e) = self.host.poll_event() {
            self.host_events.push((now, e));
        }
        while let Some(e) = self.guest.poll_event() {
            self.guest_events.push((now, e));
        }
    }

    fn next_event_us(&self) -> u64 {
        // a link's next event also covers its backlog falling (a transmission ending)
        let mut t = self.host.poll_timeout().min(self.guest.poll_timeout());
        for a in [self.up.next_event_us(), self.down.next_event_us()]
            .into_iter()
            .flatten()
        {
            t = t.min(a);
        }
        t.max(self.now_us + 1)
    }

    /// Advance virtual time to `end_us` (absolute), event by event.
    pub fn run_until(&mut self, end_us: u64) {
        self.pump();
        loop {
            let next = self.next_event_us();
            if next > end_us {
                self.now_us = end_us;
                break;
            }
            self.now_us = next;
            let now = next;
            if self.host.poll_timeout() <= now {
                self.host.handle_timeout(now);
            }
            if self.guest.poll_timeout() <= now {
                self.guest.handle_timeout(now);
            }
            while let Some(d) = self.down.pop_arrival(now) {
                self.guest.handle_datagram(now, &d);
            }
            while let Some(d) = self.up.pop_arrival(now) {
                self.host.handle_datagram(now, &d);
            }
            self.pump();
        }
    }

    /// Advance by `dur_us`.
    pub fn run_for(&mut self, dur_us: u64) {
        self.run_until(self.now_us + dur_us);
    }
}
