//! A small deterministic network model for virtual-time tests: a Host and a Guest [`Endpoint`]
//! connected by two one-way links, driven event by event.
//!
//! A [`Link`] is a rate limiter with a drop-tail queue (`queue_bytes`), a propagation delay
//! and seeded random loss (applied after the queue, i.e. on the path). Each datagram occupies
//! `len + overhead_bytes` on the wire. Time is kept in ns inside the link so that serialisation
//! at Gbit/s rates does not round away.
//!
//! The sender side models "the transport can take a datagram": an endpoint is polled for
//! egress only while its link's backlog is below `nic_bytes` (about one datagram models quinn's
//! tiny datagram buffer feeding a local bottleneck, so queueing happens in the priority
//! channels; a huge value dumps everything into the drop-tail queue at once). No congestion
//! control is modelled.

use crate::endpoint::{Endpoint, Event};
use crate::Config;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

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

pub struct Link {
    cfg: LinkConfig,
    busy_until_ns: u64,
    in_flight: VecDeque<(u64, Vec<u8>)>,
    rng: ChaCha8Rng,
    filter: Option<Filter>,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(cfg: LinkConfig) -> Self {
        Link {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            cfg,
            busy_until_ns: 0,
            in_flight: VecDeque::new(),
            filter: None,
            stats: LinkStats::default(),
        }
    }

    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Drop datagrams for which `f(now_us, bytes)` is true (in addition to random loss).
    pub fn set_filter(&mut self, f: impl FnMut(u64, &[u8]) -> bool + 'static) {
        self.filter = Some(Box::new(f));
    }

    fn ns_for_bytes(&self, bytes: usize) -> u64 {
        (bytes as u128 * 8 * 1_000_000_000 / self.cfg.rate_bps.max(1) as u128) as u64
    }

    /// Bytes waiting for serialisation at `now_us`.
    pub fn backlog_bytes(&self, now_us: u64) -> usize {
        let now_ns = now_us * 1000;
        let left_ns = self.busy_until_ns.saturating_sub(now_ns) as u128;
        (left_ns * self.cfg.rate_bps as u128 / 8 / 1_000_000_000) as usize
    }

    /// First µs at which the backlog is below `bytes`.
    pub fn time_backlog_below(&self, bytes: usize) -> u64 {
        let ns = self.busy_until_ns.saturating_sub(self.ns_for_bytes(bytes));
        ns / 1000 + 1
    }

    pub fn send(&mut self, now_us: u64, bytes: Vec<u8>) {
        self.stats.offered += 1;
        let wire = bytes.len() + self.cfg.overhead_bytes;
        if self.backlog_bytes(now_us) + wire > self.cfg.queue_bytes {
            self.stats.dropped_queue += 1;
            return;
        }
        let start = self.busy_until_ns.max(now_us * 1000);
        self.busy_until_ns = start + self.ns_for_bytes(wire);
        if self.cfg.loss > 0.0 && self.rng.gen_bool(self.cfg.loss.clamp(0.0, 1.0)) {
            self.stats.dropped_loss += 1;
            return;
        }
        if let Some(f) = &mut self.filter {
            if f(now_us, &bytes) {
                self.stats.dropped_filter += 1;
                return;
            }
        }
        let arrive_us = self.busy_until_ns.div_ceil(1000) + self.cfg.delay_us;
        self.in_flight.push_back((arrive_us, bytes));
    }

    /// Datagrams on the wire (sent, not yet delivered), oldest first.
    pub fn in_flight(&self) -> impl Iterator<Item = &[u8]> {
        self.in_flight.iter().map(|a| a.1.as_slice())
    }

    pub fn next_arrival_us(&self) -> Option<u64> {
        self.in_flight.front().map(|a| a.0)
    }

    pub fn pop_arrival(&mut self, now_us: u64) -> Option<Vec<u8>> {
        if self.next_arrival_us()? <= now_us {
            self.stats.delivered += 1;
            self.in_flight.pop_front().map(|a| a.1)
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
            while link.backlog_bytes(now) < self.nic_bytes {
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
        let mut t = self.host.poll_timeout().min(self.guest.poll_timeout());
        for a in [self.up.next_arrival_us(), self.down.next_arrival_us()]
            .into_iter()
            .flatten()
        {
            t = t.min(a);
        }
        for (ep, link) in [(&self.host, &self.down), (&self.guest, &self.up)] {
            if ep.has_pending() && link.backlog_bytes(self.now_us) >= self.nic_bytes {
                t = t.min(link.time_backlog_below(self.nic_bytes));
            }
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
