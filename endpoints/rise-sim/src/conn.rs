//! One end of a QUIC connection as quinn 0.11 runs it, reduced to what decides when datagrams
//! leave: packet numbers, ACK frames (quinn's ACK policy: an immediate ACK after two
//! ack-eliciting packets or a gap, else after `max_ack_delay`; ACKs bundled with data at most once
//! per RTT + max_ack_delay unless new ack-eliciting data arrived), RFC 9002 loss detection
//! (packet threshold 3, time threshold 9/8, PTO with two probes, persistent congestion), the
//! congestion controller ([`crate::cc`]), the pacer ([`crate::pacer`]) and quinn's datagram send
//! buffer fed from rise-core's priority channels as the `rise` binary does
//! (`endpoints/rise/src/session.rs`). Sources: quinn-proto 0.11.19 `connection/mod.rs`,
//! `connection/spaces.rs`, `connection/datagrams.rs`, `config/transport.rs`. Time is ns.

use crate::cc::{CcKind, Controller};
use crate::pacer::Pacer;
use crate::rtt::{Rtt, GRANULARITY_NS};
use rise_core::{Endpoint, Kind};
use std::collections::{BTreeMap, VecDeque};

/// quinn's default `max_ack_delay` transport parameter (RFC 9000: 25 ms).
pub const MAX_ACK_DELAY_NS: u64 = 25_000_000;
/// quinn's `packet_threshold` default (RFC 9002 kPacketThreshold).
const PACKET_THRESHOLD: u64 = 3;
/// quinn's `time_threshold` default (RFC 9002 kTimeThreshold = 9/8).
const TIME_THRESHOLD: f64 = 9.0 / 8.0;
/// quinn's `persistent_congestion_threshold` default (RFC 9002).
const PERSISTENT_CONGESTION_THRESHOLD: u64 = 3;
/// quinn's `MAX_ACK_BLOCKS`: ranges kept in the ACK state.
const MAX_ACK_RANGES: usize = 64;
/// quinn's `ack_eliciting_threshold` default: ACK at once when more than this many
/// ack-eliciting packets arrived since the last ACK.
const ACK_ELICITING_THRESHOLD: u64 = 1;
/// Length of quinn's default connection IDs (`RandomConnectionIdGenerator`, 8 bytes).
const CID_BYTES: u64 = 8;
/// AEAD tag of the 1-RTT packet protection (AES-GCM / ChaCha20-Poly1305).
const TAG_BYTES: u64 = 16;
/// `size_of::<quinn_proto::Datagram>()` on 64-bit (a `Bytes`): quinn books it per queued
/// datagram against `datagram_send_buffer_size`.
pub const DATAGRAM_STRUCT_BYTES: usize = 32;
/// quinn's `Datagram::SIZE_BOUND`: frame type + 8-byte length bound.
const DATAGRAM_SIZE_BOUND: u64 = 9;
/// PTO backoff cap (quinn's `MAX_BACKOFF_EXPONENT`).
const MAX_BACKOFF_EXPONENT: u32 = 16;

/// Largest application datagram quinn accepts at path MTU `mtu` (quinn's
/// `Datagrams::max_size`: MTU − short-header overhead with a 4-byte packet number − 9).
pub fn max_datagram_size(mtu: u64) -> usize {
    (mtu - (1 + CID_BYTES + 4 + TAG_BYTES) - DATAGRAM_SIZE_BOUND) as usize
}

fn varint_len(v: u64) -> u64 {
    match v {
        0..=63 => 1,
        64..=16_383 => 2,
        16_384..=1_073_741_823 => 4,
        _ => 8,
    }
}

/// RFC 9000 A.2: bytes of the packet number given the largest acknowledged.
fn pn_len(pn: u64, largest_acked: u64) -> u64 {
    let range = (pn.saturating_sub(largest_acked)) * 2;
    if range < 1 << 8 {
        1
    } else if range < 1 << 16 {
        2
    } else if range < 1 << 24 {
        3
    } else {
        4
    }
}

#[derive(Debug, Clone)]
pub struct AckFrame {
    pub largest: u64,
    pub delay_ns: u64,
    /// Inclusive ranges, ascending.
    pub ranges: Vec<(u64, u64)>,
}

impl AckFrame {
    fn wire_bytes(&self) -> u64 {
        let mut n = 1 + varint_len(self.largest) + varint_len(self.delay_ns / 8_000);
        n += varint_len(self.ranges.len() as u64 - 1);
        let mut prev_lo = None;
        for &(lo, hi) in self.ranges.iter().rev() {
            match prev_lo {
                None => n += varint_len(hi - lo),
                Some(p) => n += varint_len(p - hi - 2) + varint_len(hi - lo),
            }
            prev_lo = Some(lo);
        }
        n
    }
}

/// A QUIC packet on the wire.
#[derive(Debug, Clone)]
pub struct Packet {
    pub pn: u64,
    pub datagrams: Vec<(Kind, Vec<u8>)>,
    pub ack: Option<AckFrame>,
    pub ack_eliciting: bool,
    /// UDP payload bytes (what quinn counts for congestion control).
    pub size: u64,
}

#[derive(Debug, Clone, Copy)]
struct Sent {
    time_ns: u64,
    size: u64,
    ack_eliciting: bool,
    /// Largest packet number acknowledged by the ACK frame this packet carried.
    carried_ack: Option<u64>,
}

/// How datagrams reach quinn's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// As `rise` does: quinn's buffer kept to about one datagram, fed from the priority
    /// channels when it has room (`send_datagram` / `send_datagram_wait`).
    Channels,
    /// Vanilla quinn: every datagram handed to `send_datagram` at once; a full buffer drops its
    /// oldest datagram (`make_space_for`).
    Vanilla,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct ConnStats {
    pub sent_packets: u64,
    pub ack_only_packets: u64,
    pub lost_packets: u64,
    pub congestion_events: u64,
    pub pto_count_total: u64,
    /// Datagrams dropped inside quinn's buffer (Vanilla feed), per kind.
    pub quinn_dropped: [u64; 3],
    /// Time with datagrams waiting while the congestion window was full, ns.
    pub cwnd_limited_ns: u64,
    /// Time with datagrams waiting for the pacer, ns.
    pub pacing_limited_ns: u64,
}

fn kind_index(k: Kind) -> usize {
    match k {
        Kind::Tracking => 0,
        Kind::Video => 1,
        Kind::Ack => 2,
    }
}

/// Why the last `poll_transmit` sent nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    None,
    Cwnd,
    Pacing,
}

pub struct Conn {
    mtu: u64,
    pub cc: Controller,
    pacer: Pacer,
    pub rtt: Rtt,
    next_pn: u64,
    sent: BTreeMap<u64, Sent>,
    in_flight: u64,
    ack_eliciting_in_flight: u64,
    largest_acked: Option<u64>,
    largest_acked_sent_ns: u64,
    loss_time: Option<u64>,
    loss_timer: Option<u64>,
    pto_count: u32,
    loss_probes: u32,
    time_last_ack_eliciting: Option<u64>,
    first_pn_after_rtt_sample: Option<u64>,
    app_limited: bool,
    pacing_at: Option<u64>,
    pub blocked: Blocked,
    /// The endpoint does not refill quinn's buffer before this time (its one thread is still
    /// handling received datagrams, which `rise`'s loop serves first); 0: never held.
    pub feed_hold_until_ns: u64,
    // receiving
    ranges: Vec<(u64, u64)>,
    largest_recv: Option<(u64, u64)>,
    ack_eliciting_since: u64,
    immediate: bool,
    ack_timer: Option<u64>,
    next_bundled_ack: Option<u64>,
    // quinn's datagram send buffer
    feed: Feed,
    dgrams: VecDeque<(Kind, Vec<u8>)>,
    dgram_mem: usize,
    dgram_cap: usize,
    waiting: Option<(Kind, Vec<u8>)>,
    max_payload: usize,
    pub stats: ConnStats,
}

impl Conn {
    /// `mtu`: quinn's path MTU (UDP payload bytes); `dgram_cap`: quinn's
    /// `datagram_send_buffer_size`.
    pub fn new(cc: CcKind, mtu: u64, feed: Feed, dgram_cap: usize, now_ns: u64) -> Self {
        let rtt = Rtt::default();
        let cc = Controller::new(cc, now_ns, mtu);
        let pacer = Pacer::new(rtt.get(), cc.window(), mtu, now_ns);
        Conn {
            mtu,
            cc,
            pacer,
            rtt,
            next_pn: 0,
            sent: BTreeMap::new(),
            in_flight: 0,
            ack_eliciting_in_flight: 0,
            largest_acked: None,
            largest_acked_sent_ns: 0,
            loss_time: None,
            loss_timer: None,
            pto_count: 0,
            loss_probes: 0,
            time_last_ack_eliciting: None,
            first_pn_after_rtt_sample: None,
            app_limited: false,
            pacing_at: None,
            blocked: Blocked::None,
            feed_hold_until_ns: 0,
            ranges: Vec::new(),
            largest_recv: None,
            ack_eliciting_since: 0,
            immediate: false,
            ack_timer: None,
            next_bundled_ack: None,
            feed,
            dgrams: VecDeque::new(),
            dgram_mem: 0,
            dgram_cap,
            waiting: None,
            max_payload: max_datagram_size(mtu)
                .min(dgram_cap.saturating_sub(DATAGRAM_STRUCT_BYTES)),
            stats: ConnStats::default(),
        }
    }

    /// The largest datagram the endpoint may produce (quinn's `max_datagram_size()` capped by
    /// its buffer, as the rise binary's feeder does).
    pub fn max_payload(&self) -> usize {
        self.max_payload
    }

    /// Bytes of datagrams in quinn's buffer and the feeder's slot (payload only).
    pub fn buffered_bytes(&self) -> usize {
        self.dgram_mem - self.dgrams.len() * DATAGRAM_STRUCT_BYTES
            + self.waiting.as_ref().map_or(0, |w| w.1.len())
    }

    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    pub fn cwnd(&self) -> u64 {
        self.cc.window()
    }

    fn has_space(&self, len: usize) -> bool {
        self.dgram_mem + len + DATAGRAM_STRUCT_BYTES <= self.dgram_cap
    }

    fn space(&self) -> usize {
        self.dgram_cap
            .saturating_sub(self.dgram_mem)
            .saturating_sub(DATAGRAM_STRUCT_BYTES)
    }

    fn push_dgram(&mut self, kind: Kind, bytes: Vec<u8>) {
        self.dgram_mem += bytes.len() + DATAGRAM_STRUCT_BYTES;
        self.dgrams.push_back((kind, bytes));
    }

    /// Datagrams waiting anywhere below the application (quinn's buffer and the feeder's slot).
    pub fn has_data(&self) -> bool {
        !self.dgrams.is_empty() || self.waiting.is_some()
    }

    /// Moves datagrams from the endpoint's channels into quinn's buffer.
    pub fn feed(&mut self, now_us: u64, core: &mut Endpoint) {
        match self.feed {
            Feed::Vanilla => {
                while let Some(t) = core.poll_transmit(now_us, self.max_payload) {
                    while !self.has_space(t.bytes.len()) {
                        let Some((k, d)) = self.dgrams.pop_front() else {
                            break;
                        };
                        self.dgram_mem -= d.len() + DATAGRAM_STRUCT_BYTES;
                        self.stats.quinn_dropped[kind_index(k)] += 1;
                    }
                    self.push_dgram(t.kind, t.bytes);
                }
            }
            Feed::Channels => loop {
                if let Some((_, w)) = &self.waiting {
                    if !self.has_space(w.len()) {
                        return;
                    }
                    let (k, w) = self.waiting.take().expect("checked");
                    self.push_dgram(k, w);
                }
                let Some(head) = core.peek_transmit_size() else {
                    return;
                };
                let space = self.space().min(self.max_payload);
                if head <= space {
                    let Some(t) = core.poll_transmit(now_us, space) else {
                        return;
                    };
                    self.push_dgram(t.kind, t.bytes);
                } else {
                    let Some(t) = core.poll_transmit(now_us, self.max_payload.max(head)) else {
                        return;
                    };
                    if t.bytes.len() > self.max_payload {
                        continue;
                    }
                    self.waiting = Some((t.kind, t.bytes));
                }
            },
        }
    }

    /// quinn's `poll_transmit` with segmentation offload off: at most one packet.
    pub fn poll_transmit(&mut self, now_ns: u64, core: &mut Endpoint) -> Option<Packet> {
        if now_ns >= self.feed_hold_until_ns {
            self.feed(now_ns / 1000 + crate::run::START_US, core);
        }
        let data = !self.dgrams.is_empty();
        let probe = self.loss_probes > 0;
        let ack_eliciting = data || probe;
        let ack_now = self.immediate && !self.ranges.is_empty();
        if !ack_eliciting && !ack_now {
            self.app_limited = true;
            self.blocked = Blocked::None;
            return None;
        }
        if ack_eliciting && self.loss_probes == 0 {
            if self.in_flight + self.mtu >= self.cc.window() {
                // quinn skips the whole space: no ACK-only packet either
                self.app_limited = false;
                self.blocked = Blocked::Cwnd;
                return None;
            }
            if let Some(t) =
                self.pacer
                    .delay(self.rtt.get(), self.mtu, self.mtu, self.cc.window(), now_ns)
            {
                self.pacing_at = Some(t);
                self.app_limited = false;
                self.blocked = Blocked::Pacing;
                return None;
            }
        }
        self.blocked = Blocked::None;
        let pn = self.next_pn;
        self.next_pn += 1;
        let mut size = 1 + CID_BYTES + pn_len(pn, self.largest_acked.unwrap_or(0)) + TAG_BYTES;
        let mut ack = None;
        if ack_now {
            let a = self.make_ack(now_ns);
            size += a.wire_bytes();
            ack = Some(a);
        }
        let mut datagrams = Vec::new();
        while let Some((_, d)) = self.dgrams.front() {
            let frame = 1 + varint_len(d.len() as u64) + d.len() as u64;
            if size + frame > self.mtu {
                break;
            }
            size += frame;
            let (k, d) = self.dgrams.pop_front().expect("front exists");
            self.dgram_mem -= d.len() + DATAGRAM_STRUCT_BYTES;
            datagrams.push((k, d));
        }
        if ack.is_none()
            && !datagrams.is_empty()
            && !self.ranges.is_empty()
            && self.next_bundled_ack.is_some_and(|t| t <= now_ns)
        {
            let a = self.make_ack(now_ns);
            if size + a.wire_bytes() <= self.mtu {
                size += a.wire_bytes();
                ack = Some(a);
            }
        }
        let mut pkt_eliciting = !datagrams.is_empty();
        if !pkt_eliciting && probe {
            size += 1; // PING
            pkt_eliciting = true;
        }
        let carried_ack = ack.as_ref().map(|a| a.largest);
        if ack.is_some() {
            self.immediate = false;
            self.ack_eliciting_since = 0;
            self.ack_timer = None;
            self.next_bundled_ack =
                Some(now_ns + self.rtt.get() + MAX_ACK_DELAY_NS + GRANULARITY_NS);
        }
        if pkt_eliciting {
            self.in_flight += size;
            self.ack_eliciting_in_flight += 1;
            self.time_last_ack_eliciting = Some(now_ns);
            self.loss_probes = self.loss_probes.saturating_sub(1);
        } else {
            self.stats.ack_only_packets += 1;
        }
        self.pacer.on_transmit(size);
        self.sent.insert(
            pn,
            Sent {
                time_ns: now_ns,
                size,
                ack_eliciting: pkt_eliciting,
                carried_ack,
            },
        );
        self.stats.sent_packets += 1;
        self.app_limited = false;
        self.set_loss_detection_timer();
        Some(Packet {
            pn,
            datagrams,
            ack,
            ack_eliciting: pkt_eliciting,
            size,
        })
    }

    fn make_ack(&self, now_ns: u64) -> AckFrame {
        let (largest, at) = self.largest_recv.expect("ranges are not empty");
        AckFrame {
            largest,
            delay_ns: now_ns.saturating_sub(at),
            ranges: self.ranges.clone(),
        }
    }

    fn record_received(&mut self, pn: u64) {
        // ranges ascending, inclusive; most arrivals extend the last one
        if let Some(last) = self.ranges.last_mut() {
            if pn == last.1 + 1 {
                last.1 = pn;
                return;
            }
            if pn > last.1 {
                self.ranges.push((pn, pn));
            } else {
                let mut v: Vec<(u64, u64)> = std::mem::take(&mut self.ranges);
                if !v.iter().any(|&(lo, hi)| lo <= pn && pn <= hi) {
                    v.push((pn, pn));
                    v.sort_unstable();
                    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(v.len());
                    for r in v {
                        match merged.last_mut() {
                            Some(m) if r.0 <= m.1 + 1 => m.1 = m.1.max(r.1),
                            _ => merged.push(r),
                        }
                    }
                    v = merged;
                }
                self.ranges = v;
            }
        } else {
            self.ranges.push((pn, pn));
        }
        if self.ranges.len() > MAX_ACK_RANGES {
            self.ranges.remove(0);
        }
    }

    /// A packet from the peer arrives.
    pub fn on_packet(&mut self, now_ns: u64, pkt: Packet, core: &mut Endpoint) {
        let prev_largest = self.largest_recv.map(|l| l.0);
        self.record_received(pkt.pn);
        if prev_largest.is_none_or(|l| pkt.pn > l) {
            self.largest_recv = Some((pkt.pn, now_ns));
        }
        if pkt.ack_eliciting {
            self.ack_eliciting_since += 1;
            self.immediate |= self.ack_eliciting_since > ACK_ELICITING_THRESHOLD;
            // out of order: older than the largest, or a gap opened below it
            self.immediate |= prev_largest.is_some_and(|l| pkt.pn < l || pkt.pn > l + 1);
            if self.ack_timer.is_none() && !self.immediate {
                self.ack_timer = Some(now_ns + MAX_ACK_DELAY_NS);
            }
            self.next_bundled_ack = Some(now_ns);
        }
        if let Some(a) = pkt.ack {
            self.on_ack_received(now_ns, &a);
        }
        let now_us = crate::run::START_US + now_ns / 1000;
        for (_, d) in pkt.datagrams {
            core.handle_datagram(now_us, &d);
        }
    }

    fn on_ack_received(&mut self, now_ns: u64, ack: &AckFrame) {
        let new_largest = self.largest_acked.is_none_or(|l| ack.largest > l);
        if new_largest {
            self.largest_acked = Some(ack.largest);
            if let Some(s) = self.sent.get(&ack.largest) {
                self.largest_acked_sent_ns = s.time_ns;
            }
        }
        let mut newly = Vec::new();
        for &(lo, hi) in &ack.ranges {
            newly.extend(self.sent.range(lo..=hi).map(|(&pn, _)| pn));
        }
        if newly.is_empty() {
            return;
        }
        let mut eliciting_acked = false;
        let rtt_now = self.rtt.get();
        for pn in newly {
            let s = self.sent.remove(&pn).expect("listed above");
            if let Some(l) = s.carried_ack {
                self.ranges.retain_mut(|r| {
                    if r.1 < l {
                        return false;
                    }
                    r.0 = r.0.max(l);
                    true
                });
            }
            if s.ack_eliciting {
                eliciting_acked = true;
                self.in_flight -= s.size;
                self.ack_eliciting_in_flight -= 1;
                self.cc
                    .on_ack(now_ns, s.time_ns, s.size, self.app_limited, rtt_now);
            }
        }
        if new_largest && eliciting_acked {
            let delay = ack.delay_ns.min(MAX_ACK_DELAY_NS);
            let sample = now_ns.saturating_sub(self.largest_acked_sent_ns);
            self.rtt.update(delay, sample);
            if self.first_pn_after_rtt_sample.is_none() {
                self.first_pn_after_rtt_sample = Some(self.next_pn);
            }
        }
        self.detect_lost(now_ns, true);
        self.pto_count = 0;
        self.set_loss_detection_timer();
    }

    fn pto_ns(&self) -> u64 {
        self.rtt.pto_base() + MAX_ACK_DELAY_NS
    }

    fn detect_lost(&mut self, now_ns: u64, due_to_ack: bool) {
        let Some(largest) = self.largest_acked else {
            return;
        };
        let loss_delay =
            ((self.rtt.conservative() as f64 * TIME_THRESHOLD) as u64).max(GRANULARITY_NS);
        let congestion_period = self.pto_ns() * PERSISTENT_CONGESTION_THRESHOLD;
        let mut pc_start: Option<u64> = None;
        let mut prev: Option<u64> = None;
        let mut persistent = false;
        let mut lost = Vec::new();
        self.loss_time = None;
        for (&pn, s) in self.sent.range(..largest) {
            if prev != Some(pn.wrapping_sub(1)) {
                pc_start = None;
            }
            let too_old = now_ns.saturating_sub(s.time_ns) >= loss_delay;
            if too_old || largest >= pn + PACKET_THRESHOLD {
                lost.push(pn);
                if s.ack_eliciting && due_to_ack {
                    match pc_start {
                        Some(start) if s.time_ns - start > congestion_period => persistent = true,
                        None if self.first_pn_after_rtt_sample.is_some_and(|x| x < pn) => {
                            pc_start = Some(s.time_ns)
                        }
                        _ => {}
                    }
                }
            } else {
                let t = s.time_ns + loss_delay;
                self.loss_time = Some(self.loss_time.map_or(t, |x| x.min(t)));
                pc_start = None;
            }
            prev = Some(pn);
        }
        let Some(&largest_lost) = lost.last() else {
            return;
        };
        let largest_lost_sent = self.sent[&largest_lost].time_ns;
        self.stats.lost_packets += lost.len() as u64;
        let mut eliciting = false;
        for pn in lost {
            let s = self.sent.remove(&pn).expect("listed above");
            if s.ack_eliciting {
                eliciting = true;
                self.in_flight -= s.size;
                self.ack_eliciting_in_flight -= 1;
            }
        }
        if eliciting {
            self.stats.congestion_events += 1;
            self.cc
                .on_congestion_event(now_ns, largest_lost_sent, persistent);
        }
    }

    fn set_loss_detection_timer(&mut self) {
        if let Some(t) = self.loss_time {
            self.loss_timer = Some(t);
            return;
        }
        if self.ack_eliciting_in_flight == 0 {
            self.loss_timer = None;
            return;
        }
        let backoff = 1u64 << self.pto_count.min(MAX_BACKOFF_EXPONENT);
        self.loss_timer = self
            .time_last_ack_eliciting
            .map(|t| t + self.pto_ns() * backoff);
    }

    /// The earliest timer of this connection (ns), if any.
    pub fn next_timer(&self) -> Option<u64> {
        [self.loss_timer, self.ack_timer, self.pacing_at]
            .into_iter()
            .flatten()
            .min()
    }

    /// Fire the timers due at `now_ns`.
    pub fn handle_timers(&mut self, now_ns: u64) {
        if self.pacing_at.is_some_and(|t| t <= now_ns) {
            self.pacing_at = None;
        }
        if self.ack_timer.is_some_and(|t| t <= now_ns) {
            self.ack_timer = None;
            self.immediate = self.ack_eliciting_since > 0;
        }
        if self.loss_timer.is_some_and(|t| t <= now_ns) {
            self.loss_timer = None;
            if self.loss_time.is_some() {
                self.detect_lost(now_ns, false);
            } else if self.ack_eliciting_in_flight > 0 {
                self.pto_count += 1;
                self.stats.pto_count_total += 1;
                self.loss_probes = 2;
            }
            self.set_loss_detection_timer();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_datagram_size_matches_quinn_at_1452() {
        // 1452 − (1 + 8 + 4 + 16) − 9
        assert_eq!(max_datagram_size(1452), 1414);
    }

    #[test]
    fn ack_ranges_merge() {
        let mut c = Conn::new(CcKind::Cubic, 1452, Feed::Channels, 1500, 0);
        for pn in [0, 1, 2, 5, 6, 4, 3, 9] {
            c.record_received(pn);
        }
        assert_eq!(c.ranges, vec![(0, 6), (9, 9)]);
    }
}
