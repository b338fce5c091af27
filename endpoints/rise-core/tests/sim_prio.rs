//! Priority channels on vs off under a constrained Guest uplink with microbursts.

mod common;

use common::*;
use rise_core::sim::Sim;
use rise_core::{Config, Role};

/// Guest uplink 4 Mbit/s carrying 3.4 Mbit/s of bursty video (σ = 0.5) plus tracking and the
/// ACKs of the Host's video; downlink 50 Mbit/s. Returns the Host-observed tracking delays
/// (ms) and the Guest's tracking channel counters.
fn constrained(prio: bool, buffer_bytes: usize, video_bps: u64) -> (Vec<f64>, Sim) {
    let base = |role, seed| Config {
        video_bitrate_bps: video_bps,
        frame_size_sigma: 0.5,
        prio,
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
    let (_, off) = constrained(false, b, 5_000_000);
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
    // room for video; one FIFO never evicts
    assert_eq!(t_off.evicted, 0);
    let a_on = on.guest.channel_stats()[2].1;
    let a_off = off.guest.channel_stats()[2].1;
    assert!(a_on.evicted > 0, "{a_on:?}");
    assert_eq!(a_off.evicted, 0, "{a_off:?}");
    assert!(on.guest.pending_bytes() <= b && off.guest.pending_bytes() <= b);
}
