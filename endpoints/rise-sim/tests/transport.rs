//! The transport model in virtual time: loss detection thresholds, policer cut, pacing bursts.

use linkem::config::{
    DirectionConfig, DropPolicy, LossConfig, QueueConfig, QueueLimit, RateConfig,
};
use rise_core::{Config, Endpoint, Role};
use rise_sim::cc::CcKind;
use rise_sim::conn::{Conn, Feed, Packet};
use rise_sim::link::{Link, Policer};
use rise_sim::pacer::MIN_BURST_MTUS;
use rise_sim::run::START_US;

const MS: u64 = 1_000_000;
const MTU: u64 = 1452;

fn endpoints() -> (Endpoint, Endpoint) {
    let host = Endpoint::new(
        Config {
            role: Role::Host,
            ..Config::default()
        },
        START_US,
    );
    let guest = Endpoint::new(
        Config {
            role: Role::Guest,
            ..Config::default()
        },
        START_US,
    );
    (host, guest)
}

fn conns() -> (Conn, Conn) {
    (
        Conn::new(CcKind::Cubic, MTU, Feed::Channels, 1500, 0),
        Conn::new(CcKind::Cubic, MTU, Feed::Channels, 1500, 0),
    )
}

/// Everything `a` may send at `now_ns`.
fn drain(a: &mut Conn, core: &mut Endpoint, now_ns: u64) -> Vec<Packet> {
    let mut v = Vec::new();
    while let Some(p) = a.poll_transmit(now_ns, core) {
        v.push(p);
    }
    v
}

fn deliver(b: &mut Conn, core: &mut Endpoint, now_ns: u64, pkts: Vec<Packet>) {
    for p in pkts {
        b.on_packet(now_ns, p, core);
    }
}

/// Host sends its first key frame; the Guest acknowledges at 10 ms.
fn first_flight(skip: impl Fn(u64) -> bool) -> (Conn, Conn, Endpoint, Endpoint, Vec<Packet>) {
    let (mut ch, mut cg) = endpoints();
    ch.set_max_datagram_size(rise_sim::conn::max_datagram_size(MTU));
    cg.set_max_datagram_size(rise_sim::conn::max_datagram_size(MTU));
    let (mut h, mut g) = conns();
    ch.handle_timeout(START_US);
    let sent = drain(&mut h, &mut ch, 0);
    assert!(
        sent.len() >= 5,
        "the initial window lets several packets go"
    );
    let kept: Vec<Packet> = sent.iter().filter(|p| !skip(p.pn)).cloned().collect();
    deliver(&mut g, &mut cg, 5 * MS, kept);
    let acks = drain(&mut g, &mut cg, 5 * MS);
    (h, g, ch, cg, acks)
}

#[test]
fn packet_threshold_declares_a_gap_of_three_lost_at_once() {
    let (mut h, _g, mut ch, _cg, acks) = first_flight(|pn| pn == 1);
    assert!(
        acks.iter().any(|p| p.ack.is_some()),
        "a gap asks for an immediate ACK"
    );
    let w = h.cwnd();
    deliver(&mut h, &mut ch, 10 * MS, acks);
    assert_eq!(h.stats.lost_packets, 1);
    assert_eq!(h.stats.congestion_events, 1);
    // the ACK first grows the window (slow start, by the bytes acked), then the loss cuts it
    // (by Cubic's β = 0.7, see cc.rs) and ends slow start there: ssthresh was u64::MAX
    assert_eq!(h.cc.ssthresh(), h.cwnd());
    assert!(h.cwnd() as f64 > w as f64 * 0.7);
}

#[test]
fn time_threshold_declares_the_last_packet_lost_after_9_8_rtt() {
    // lose the third packet of five: only two later packets are acked, below the packet
    // threshold, so the time threshold must decide
    let n = {
        let (_, _, _, _, acks) = first_flight(|_| false);
        acks.iter()
            .filter_map(|p| p.ack.as_ref())
            .map(|a| a.largest + 1)
            .max()
            .expect("an ACK")
    };
    let lost_pn = n - 3;
    let (mut h, _g, mut ch, _cg, acks) = first_flight(|pn| pn == lost_pn);
    deliver(&mut h, &mut ch, 10 * MS, acks);
    assert_eq!(
        h.stats.lost_packets, 0,
        "only 2 later packets acked: not yet"
    );
    let rtt = h.rtt.conservative();
    let t = h.next_timer().expect("a loss timer");
    // sent at 0: lost at 9/8 × max(sRTT, latest RTT)
    assert_eq!(t, (rtt as f64 * 9.0 / 8.0) as u64);
    h.handle_timers(t - 1);
    assert_eq!(h.stats.lost_packets, 0);
    h.handle_timers(t);
    assert_eq!(h.stats.lost_packets, 1);
}

#[test]
fn pto_sends_probes_when_every_ack_is_lost() {
    let (mut h, _g, mut ch, _cg, _acks) = first_flight(|_| false);
    let t = h.next_timer().expect("PTO armed");
    // initial RTT 333 ms: PTO = 333 + 4 × 166.5 + 25 ms
    assert_eq!(t, 333 * MS + 4 * (333 * MS / 2) + 25 * MS);
    h.handle_timers(t);
    assert_eq!(h.stats.pto_count_total, 1);
    let probes = drain(&mut h, &mut ch, t);
    assert!(probes.len() >= 2, "two probes bypass the full window");
}

fn free_link(policer: Option<Policer>) -> Link {
    let cfg = DirectionConfig {
        rate: RateConfig::Constant {
            rate_bps: 70_000_000,
        },
        delay_ns: 10 * MS,
        jitter_ns: 0,
        jitter_reorder: false,
        loss: LossConfig::None,
        queue: Some(QueueConfig {
            limit: QueueLimit::Bytes(10_000_000),
            drop: DropPolicy::Tail,
        }),
    };
    Link::new(&cfg, policer, 1, 0)
}

fn pkt(pn: u64) -> Packet {
    Packet {
        pn,
        datagrams: Vec::new(),
        ack: None,
        ack_eliciting: true,
        size: 1000 - rise_sim::link::WIRE_OVERHEAD_BYTES,
    }
}

#[test]
fn policer_cuts_a_burst_above_its_bucket() {
    let mut l = free_link(Some(Policer {
        rate_bps: 70_000_000,
        burst_bytes: 25_000,
    }));
    for pn in 0..100 {
        l.send(0, pkt(pn)); // 100 kB at one instant
    }
    let mut out = Vec::new();
    l.poll(50 * MS, &mut out);
    assert_eq!(out.len(), 25, "the bucket's 25 kB pass");
    assert_eq!(l.stats.dropped_policer, 75);
    // all arrive after the propagation delay only: a policer does not queue
    let mut l2 = free_link(None);
    for pn in 0..100 {
        l2.send(0, pkt(pn));
    }
    let mut out2 = Vec::new();
    l2.poll(50 * MS, &mut out2);
    assert_eq!(out2.len(), 100, "a shaper with room queues the whole burst");
}

#[test]
fn pacer_limits_a_burst_to_its_capacity() {
    // a large window (as after slow start) and a big backlog: what leaves at one instant
    let (mut ch, _) = endpoints();
    ch.set_max_datagram_size(rise_sim::conn::max_datagram_size(MTU));
    let mut h = Conn::new(CcKind::Cubic, MTU, Feed::Channels, 1500, 0);
    ch.handle_timeout(START_US); // a key frame: ~1 MB of datagrams
                                 // without an RTT sample the pacer's capacity is its floor of 10 MTU (window 12 kB < cap)
    let burst = drain(&mut h, &mut ch, 0);
    let bytes: u64 = burst.iter().map(|p| p.size).sum();
    assert!(bytes <= MIN_BURST_MTUS * MTU, "{bytes}");
}

#[test]
fn a_busy_receiver_does_not_refill_quinns_buffer_until_its_hold_ends() {
    // `RunConfig::rx_cost_ns`: while the endpoint's thread handles received packets, `rise`
    // hands quinn nothing new; quinn sends only what its buffer already holds
    let (mut ch, _) = endpoints();
    ch.set_max_datagram_size(rise_sim::conn::max_datagram_size(MTU));
    let (mut h, _) = conns();
    ch.handle_timeout(START_US); // the first key frame waits in the channels
    h.feed_hold_until_ns = 5 * MS;
    assert!(
        drain(&mut h, &mut ch, MS).is_empty(),
        "held: nothing enters quinn"
    );
    assert!(ch.has_pending());
    assert!(
        !drain(&mut h, &mut ch, 5 * MS).is_empty(),
        "the hold is over"
    );
}
