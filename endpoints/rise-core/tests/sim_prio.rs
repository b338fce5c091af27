//! Priority channels on vs off under a constrained Guest uplink with microbursts.

mod common;

use common::*;
use rise_core::sim::Sim;
use rise_core::{Config, FifoDrop, Role};

/// Guest uplink 4 Mbit/s carrying 3.4 Mbit/s of bursty video (σ = 0.5) plus tracking and the
/// ACKs of the Host's video; downlink 50 Mbit/s. Returns the Host-observed tracking delays
/// (ms) and the Guest's tracking channel counters.
fn constrained(prio: bool, buffer_bytes: usize, video_bps: u64) -> (Vec<f64>, Sim) {
    constrained_fifo(prio, FifoDrop::Head, buffer_bytes, video_bps)
}

fn constrained_fifo(
    prio: bool,
    fifo_drop: FifoDrop,
    buffer_bytes: usize,
    video_bps: u64,
) -> (Vec<f64>, Sim) {
    let base = |role, seed| Config {
        video_bitrate_bps: video_bps,
        frame_size_sigma: 0.5,
        prio,
        fifo_drop,
        buffer_bytes,
        ..cfg(role, seed)
    };
    let p = path(
        link(4_000_000, 10_000, 0.0, 1),
        link(50_000_000, 10_000, 0.0, 2),
    );
    let s = run(base(Role::Host, 1), base(Role::Guest, 2), p, 4 * SEC);
    (tracking_delays_ms(&s.host_events), s)
}

#[test]
fn prio_gives_tracking_lower_delay_on_a_constrained_uplink() {
    let (on, _) = constrained(true, 1 << 20, 3_400_000);
    let (off, _) = constrained(false, 1 << 20, 3_400_000);
    assert!(on.len() > 200 && off.len() > 200);
    let (m_on, m_off) = (quantile(&on, 0.5), quantile(&off, 0.5));
    let (p_on, p_off) = (quantile(&on, 0.95), quantile(&off, 0.95));
    eprintln!(
        "tracking delay ms: prio on p50 {m_on:.2} p95 {p_on:.2}; off p50 {m_off:.2} p95 {p_off:.2}"
    );
    assert!(m_on < m_off, "median on {m_on} off {m_off}");
    assert!(p_on < p_off, "p95 on {p_on} off {p_off}");
}

#[test]
fn with_a_full_buffer_prio_sacrifices_acks_never_tracking() {
    // video above the uplink rate and a small B: the buffer overflows
    let b = 30_000;
    let (_, on) = constrained(true, b, 5_000_000);
    let (_, off) = constrained_fifo(false, FifoDrop::Tail, b, 5_000_000);
    let t_on = on.guest.channel_stats()[0].1;
    let t_off = off.guest.channel_stats()[0].1;
    let v_on = on.guest.channel_stats()[1].1;
    assert!(
        v_on.dropped_ingress + v_on.evicted > 0,
        "the buffer overflowed: {v_on:?}"
    );
    assert_eq!(t_on.dropped_ingress + t_on.evicted, 0, "{t_on:?}");
    // tracking (37 B) nearly always fits the gap a full FIFO leaves, so it is not dropped
    // there either; what differs is who pays: with prio on, queued ACKs are evicted to make
    // room for video; one tail-drop FIFO never evicts
    assert_eq!(t_off.evicted, 0);
    let a_on = on.guest.channel_stats()[2].1;
    let a_off = off.guest.channel_stats()[2].1;
    assert!(a_on.evicted > 0, "{a_on:?}");
    assert_eq!(a_off.evicted, 0, "{a_off:?}");
    assert!(on.guest.pending_bytes() <= b && off.guest.pending_bytes() <= b);
}

#[test]
fn head_drop_fifo_evicts_the_oldest_of_every_kind() {
    // the same overload with vanilla quinn's buffer (head drop, the default w/o Pri): the
    // FIFO gives up its oldest datagrams, whatever their kind, so tracking and ACKs that reach
    // the head of a full FIFO are lost ([RISE setup]), and nothing is dropped at ingress
    let b = 30_000;
    let (_, head) = constrained_fifo(false, FifoDrop::Head, b, 5_000_000);
    let st: Vec<_> = head
        .guest
        .channel_stats()
        .into_iter()
        .map(|x| x.1)
        .collect();
    let evicted: u64 = st.iter().map(|c| c.evicted).sum();
    let dropped: u64 = st.iter().map(|c| c.dropped_ingress).sum();
    eprintln!("head-drop FIFO, Guest: {st:?}");
    assert!(
        evicted > 0 && dropped == 0,
        "evicted {evicted} dropped {dropped}"
    );
    assert!(
        st[0].evicted > 0,
        "tracking evicted at the head: {:?}",
        st[0]
    );
    assert!(st[2].evicted > 0, "acks evicted at the head: {:?}", st[2]);
    assert!(head.guest.pending_bytes() <= b);
}
